#include "cli/statement_monitor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <string>

#include "cli/progress_bar.h"
#include "common/clock.h"

namespace tessera {
namespace {

// Ctrl-Cs on one statement before the shell gives up waiting for it to stop and exits.
constexpr int kInterruptsToExit = 3;

int g_pipe[2] = {-1, -1};
std::atomic<bool> g_statement_running{false};
std::atomic<bool> g_exit_when_idle{false};

void OnSigint(int) {
  const int saved_errno = errno;
  if (g_exit_when_idle.load() && !g_statement_running.load()) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
  const char byte = 'c';
  [[maybe_unused]] ssize_t written = write(g_pipe[1], &byte, 1);
  errno = saved_errno;
}

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

size_t TerminalWidth(int fd) {
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

void InterruptSignal::Install(bool exit_when_idle) {
  g_exit_when_idle.store(exit_when_idle);
  if (g_pipe[0] >= 0) return;
  if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction action {};
  action.sa_handler = OnSigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a Ctrl-C ends a blocking read at the prompt
  sigaction(SIGINT, &action, nullptr);
}

int InterruptSignal::Take() {
  if (g_pipe[0] < 0) return 0;
  int count = 0;
  char buffer[64];
  ssize_t n;
  while ((n = read(g_pipe[0], buffer, sizeof(buffer))) > 0) count += static_cast<int>(n);
  return count;
}

int InterruptSignal::fd() { return g_pipe[0]; }

void InterruptSignal::SetStatementRunning(bool running) { g_statement_running.store(running); }

StatementMonitor::StatementMonitor(Connection* connection, const MonitorOptions& options)
    : connection_(connection), options_(options) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  thread_ = std::thread([this] { Run(); });
}

StatementMonitor::~StatementMonitor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutdown_ = true;
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t written = write(wake_fd_, &one, sizeof(one));
  thread_.join();
  close(wake_fd_);
}

void StatementMonitor::Begin(bool show_progress) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    watching_ = true;
    show_progress_ = show_progress;
    ++statement_;
    started_ns_ = MonotonicNanos();
    interrupts_ = 0;
    InterruptSignal::SetStatementRunning(true);
  }
  const uint64_t one = 1;  // from waiting for Begin to polling the interrupt pipe and the progress
  [[maybe_unused]] ssize_t written = write(wake_fd_, &one, sizeof(one));
}

bool StatementMonitor::End() {
  std::lock_guard<std::mutex> lock(mutex_);
  watching_ = false;
  InterruptSignal::SetStatementRunning(false);
  if (drawn_) {
    WriteAll(options_.progress_fd, kClearProgressLine);
    drawn_ = false;
  }
  return interrupts_ > 0;
}

void StatementMonitor::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!shutdown_) {
    // Idle, only the wake-up counts (a Ctrl-C at the prompt is the line editor's); watching, also Ctrl-C and the
    // poll interval.
    const bool watching = watching_;
    const uint64_t statement = statement_;
    lock.unlock();
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {InterruptSignal::fd(), POLLIN, 0}};
    const int nfds = watching && InterruptSignal::fd() >= 0 ? 2 : 1;
    poll(fds, nfds, watching ? static_cast<int>(options_.poll_interval_ms) : -1);
    uint64_t wakes;
    [[maybe_unused]] ssize_t drained = read(wake_fd_, &wakes, sizeof(wakes));
    lock.lock();
    if (shutdown_ || !watching_ || statement_ != statement) continue;
    if (nfds == 2 && (fds[1].revents & POLLIN)) {
      interrupts_ += InterruptSignal::Take();
      if (interrupts_ >= kInterruptsToExit) {
        WriteAll(2, "\ntessera: the statement does not stop; exiting\n");
        _exit(130);
      }
    }
    // Under the lock, so that End (which takes it) returns only after the last Cancel of this statement. Cancel
    // again on every tick after a Ctrl-C: one that came just before Execute started its statement is a no-op, and
    // repeating it closes that window.
    if (interrupts_ > 0) connection_->Cancel();
    const double elapsed = static_cast<double>(MonotonicNanos() - started_ns_) / 1e9;
    if (!show_progress_ || elapsed * 1000 < static_cast<double>(options_.progress_delay_ms)) continue;
    lock.unlock();  // Progress may take a while (an RPC); End must not wait for it
    absl::StatusOr<QueryProgress> progress = connection_->Progress();
    lock.lock();
    if (!progress.ok() || !watching_ || statement_ != statement) continue;
    const std::string prefix = interrupts_ > 0 ? "cancelling " : "";
    const size_t width = std::max<size_t>(TerminalWidth(options_.progress_fd) - 1, 20 + prefix.size());
    const std::string line = prefix + RenderProgressLine(*progress, elapsed, width - prefix.size());
    WriteAll(options_.progress_fd, std::string("\r") + line + "\x1b[K");
    drawn_ = true;
  }
}

}  // namespace tessera
