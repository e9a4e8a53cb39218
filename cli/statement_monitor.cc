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
  wake_fd_ = eventfd(0, EFD_CLOEXEC);
  InterruptSignal::SetStatementRunning(true);
  thread_ = std::thread([this] { Run(); });
}

StatementMonitor::~StatementMonitor() { Stop(); }

void StatementMonitor::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t written = write(wake_fd_, &one, sizeof(one));
    thread_.join();
    InterruptSignal::SetStatementRunning(false);
  }
  if (wake_fd_ >= 0) {
    close(wake_fd_);
    wake_fd_ = -1;
  }
}

void StatementMonitor::Run() {
  const int64_t start = MonotonicNanos();
  bool drawn = false;
  while (true) {
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {InterruptSignal::fd(), POLLIN, 0}};
    const int nfds = InterruptSignal::fd() >= 0 ? 2 : 1;
    const int ready = poll(fds, nfds, static_cast<int>(options_.poll_interval_ms));
    if (ready < 0 && errno != EINTR) break;
    if (fds[0].revents & POLLIN) break;
    if (nfds == 2 && (fds[1].revents & POLLIN)) {
      const int taken = InterruptSignal::Take();
      const int total = interrupts_.fetch_add(taken) + taken;
      if (total >= kInterruptsToExit) {
        WriteAll(2, "\ntessera: the statement does not stop; exiting\n");
        _exit(130);
      }
    }
    // Cancel again on every tick after a Ctrl-C: a Cancel() that came just before Execute started its statement
    // is a no-op, and repeating it closes that window.
    if (interrupts_.load() > 0) connection_->Cancel();
    const double elapsed = static_cast<double>(MonotonicNanos() - start) / 1e9;
    if (options_.show_progress && elapsed * 1000 >= static_cast<double>(options_.progress_delay_ms)) {
      absl::StatusOr<QueryProgress> progress = connection_->Progress();
      if (progress.ok()) {
        const std::string prefix = interrupts_.load() > 0 ? "cancelling " : "";
        const size_t width = std::max<size_t>(TerminalWidth(options_.progress_fd) - 1, 20 + prefix.size());
        const std::string line = prefix + RenderProgressLine(*progress, elapsed, width - prefix.size());
        WriteAll(options_.progress_fd, std::string("\r") + line + "\x1b[K");
        drawn = true;
      }
    }
  }
  if (drawn) WriteAll(options_.progress_fd, kClearProgressLine);
}

}  // namespace tessera
