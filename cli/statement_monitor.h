#pragma once
// What the shell does while a statement runs, on a second thread: Ctrl-C cancels the statement through
// Connection::Cancel() (the shell survives), and after about half a second a progress line fed by
// Connection::Progress() (polled every 100 ms) is drawn on standard error, then erased when the statement ends.
//
// Ctrl-C reaches the monitor through InterruptSignal: its SIGINT handler only writes a byte to a self-pipe (all a
// handler may safely do); the monitor thread waits on that pipe. The handler is installed without SA_RESTART, so a
// Ctrl-C also ends a blocking read at the prompt with EINTR (the line editor clears the line).

#include <atomic>
#include <cstdint>
#include <thread>

#include "cli/connection.h"

namespace tessera {

class InterruptSignal {
 public:
  // Installs the SIGINT handler (once per process). With `exit_when_idle`, a Ctrl-C while no statement runs ends
  // the process the default way (scripts, -c); otherwise it only interrupts what the shell is waiting for.
  static void Install(bool exit_when_idle);
  // Consumes the Ctrl-Cs that arrived and were not handled yet; returns how many. Non-blocking.
  static int Take();
  // The read end of the self-pipe, for poll().
  static int fd();
  // Whether a statement runs now (a Ctrl-C then cancels it instead of ending an idle script).
  static void SetStatementRunning(bool running);
};

struct MonitorOptions {
  // Draw the progress line (the shell passes false when standard error is not a terminal or \progress is off).
  bool show_progress = false;
  int64_t progress_delay_ms = 500;
  int64_t poll_interval_ms = 100;
  // Where the progress line goes.
  int progress_fd = 2;
};

// Watches one statement: construct it right before Connection::Execute, destroy (or Stop) it right after.
class StatementMonitor {
 public:
  StatementMonitor(Connection* connection, const MonitorOptions& options);
  ~StatementMonitor();
  StatementMonitor(const StatementMonitor&) = delete;
  StatementMonitor& operator=(const StatementMonitor&) = delete;

  // Ends the watch: wakes and joins the thread and erases the progress line. Prompt (no polling delay).
  void Stop();
  // Whether Ctrl-C was pressed while the statement ran (its error is then the cancellation).
  bool interrupted() const { return interrupts_.load() > 0; }

 private:
  void Run();

  Connection* connection_;
  MonitorOptions options_;
  int wake_fd_ = -1;  // an eventfd that Stop() signals
  std::atomic<int> interrupts_{0};
  std::thread thread_;
};

}  // namespace tessera
