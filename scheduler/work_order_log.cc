#include "scheduler/work_order_log.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessera {
namespace {

constexpr size_t kWakeWriterAt = 4096;

}  // namespace

absl::StatusOr<std::unique_ptr<WorkOrderLog>> WorkOrderLog::Open(const std::string& path, size_t max_bytes) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot open work-order log '", path, "': ", std::string(std::strerror(errno))));
  }
  return std::unique_ptr<WorkOrderLog>(new WorkOrderLog(file, path, max_bytes));
}

WorkOrderLog::WorkOrderLog(std::FILE* file, std::string path, size_t max_bytes)
    : file_(file), path_(std::move(path)), max_bytes_(max_bytes) {
  pending_.reserve(kWakeWriterAt);
  writer_ = std::thread([this] { WriterLoop(); });
}

WorkOrderLog::~WorkOrderLog() { (void)Close(); }

std::string WorkOrderLog::FormatLine(const WorkOrderCompletion& r) {
  std::string line = absl::StrFormat(R"({"query":%d,"operator":%d,"worker":%d,"start_ns":%d,"end_ns":%d,"rows":%d)",
                                     r.query_id, r.operator_id, r.worker_id, r.start_ns, r.end_ns, r.rows);
  // A shared scan's work orders: the same block key, run back to back on one worker.
  if (r.shared_block_key != 0) absl::StrAppend(&line, R"(,"shared_block":)", r.shared_block_key);
  line += '}';
  return line;
}

void WorkOrderLog::Append(const WorkOrderCompletion& record) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.push_back(record);
    ++appended_;
    wake = pending_.size() == kWakeWriterAt;
  }
  if (wake) cv_.notify_one();
}

void WorkOrderLog::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = appended_;
  cv_.notify_one();
  flushed_.wait(lock, [&] { return written_ >= target || writer_done_; });
}

void WorkOrderLog::WriterLoop() {
  std::vector<WorkOrderCompletion> batch;
  std::string text;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return closing_ || !pending_.empty(); });
    if (pending_.empty() && closing_) break;
    batch.swap(pending_);
    lock.unlock();
    text.clear();
    for (const WorkOrderCompletion& record : batch) {
      text += FormatLine(record);
      text += '\n';
    }
    // file_ is null only after a rotation that could not reopen the file: the rest is lost, and Close says so.
    bool failed = file_ == nullptr;
    if (!failed) {
      failed = !text.empty() && std::fwrite(text.data(), 1, text.size(), file_) != text.size();
      failed = std::fflush(file_) != 0 || failed;
    }
    file_bytes_ += text.size();
    if (!failed && max_bytes_ > 0 && file_bytes_ >= max_bytes_) failed = !Rotate();
    const size_t count = batch.size();
    batch.clear();
    lock.lock();
    written_ += count;
    write_failed_ = write_failed_ || failed;
    flushed_.notify_all();
  }
  writer_done_ = true;
  flushed_.notify_all();
}

bool WorkOrderLog::Rotate() {
  if (std::fclose(file_) != 0) {
    file_ = std::fopen(path_.c_str(), "a");  // keep a file to write to (and to close) if we can
    return false;
  }
  const std::string previous = path_ + ".1";
  const bool renamed = std::rename(path_.c_str(), previous.c_str()) == 0;
  file_ = std::fopen(path_.c_str(), "w");
  file_bytes_ = 0;
  return renamed && file_ != nullptr;
}

absl::Status WorkOrderLog::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return absl::OkStatus();  // closed before (file_ belongs to the writer until it is joined)
    closing_ = true;
  }
  cv_.notify_one();
  writer_.join();
  const bool close_failed = file_ == nullptr || std::fclose(file_) != 0;
  file_ = nullptr;
  if (write_failed_ || close_failed) {
    return absl::InternalError(absl::StrCat("writing work-order log '", path_, "' failed"));
  }
  return absl::OkStatus();
}

}  // namespace tessera
