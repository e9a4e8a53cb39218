#pragma once
// What the shell does while a statement runs, on a second thread: Ctrl-C cancels the statement through
// Connection::Cancel() (the shell survives), and after about half a second a progress line fed by
// Connection::Progress() (polled every 100 ms) is drawn on standard error, then erased when the statement ends.
//
// Ctrl-C reaches the monitor through InterruptSignal: its SIGINT handler only writes a byte to a self-pipe (all a
// handler may safely do); the monitor thread waits on that pipe. The handler is installed without SA_RESTART, so a
// Ctrl-C also ends a blocking read at the prompt with EINTR (the line editor clears the line).

#include <cstdint>
#include <mutex>
#include <thread>

#include "engine/connection.h"

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
  int64_t progress_delay_ms = 500;
  int64_t poll_interval_ms = 100;
  // Where the progress line goes.
  int progress_fd = 2;
};

// Watches the statements of one connection, one at a time, on one thread that lives as long as the monitor (so a
// statement costs two cheap calls, not a thread): Begin right before Connection::Execute, End right after.
class StatementMonitor {
 public:
  StatementMonitor(Connection* connection, const MonitorOptions& options);
  // Ends the thread.
  ~StatementMonitor();
  StatementMonitor(const StatementMonitor&) = delete;
  StatementMonitor& operator=(const StatementMonitor&) = delete;

  // A statement starts. `show_progress`: draw the progress line (the shell passes false when standard error is not
  // a terminal or \progress is off).
  void Begin(bool show_progress);
  // The statement ended. When End returns, the progress line is erased and no Cancel() for this statement will be
  // made any more. Returns whether Ctrl-C was pressed while it ran (its error is then the cancellation).
  bool End();

 private:
  void Run();

  Connection* connection_;
  const MonitorOptions options_;
  int wake_fd_ = -1;  // an eventfd: Begin and the destructor wake the thread with it
  std::mutex mutex_;
  // All guarded by mutex_.
  bool shutdown_ = false;
  bool watching_ = false;
  bool show_progress_ = false;
  uint64_t statement_ = 0;  // counts Begin calls, so that nothing meant for one statement reaches the next
  int64_t started_ns_ = 0;
  int interrupts_ = 0;
  bool drawn_ = false;
  std::thread thread_;
};

}  // namespace tessera
