#include "scheduler/work_order_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

namespace tessera {
namespace {

TEST(WorkOrderLogTest, FormatsOneJsonObjectPerRecord) {
  WorkOrderCompletion record{12, 3, 1, 1000, 2500, 77};
  EXPECT_EQ(WorkOrderLog::FormatLine(record),
            R"({"query":12,"operator":3,"worker":1,"start_ns":1000,"end_ns":2500,"rows":77})");
}

TEST(WorkOrderLogTest, WritesEveryAppendedRecord) {
  const std::string path = ::testing::TempDir() + "work_order_log_test_" + std::to_string(getpid()) + ".jsonl";
  absl::StatusOr<std::unique_ptr<WorkOrderLog>> log = WorkOrderLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.status();
  for (int i = 0; i < 10000; ++i) (*log)->Append(WorkOrderCompletion{i % 3, 0, 0, i, i + 1, 0});
  (*log)->Flush();
  std::ifstream partial(path);
  int lines = 0;
  for (std::string line; std::getline(partial, line);) ++lines;
  EXPECT_EQ(lines, 10000);
  (*log)->Append(WorkOrderCompletion{9, 9, 9, 9, 9, 9});
  ASSERT_TRUE((*log)->Close().ok());
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  ASSERT_EQ(all.size(), 10001u);
  EXPECT_EQ(all.back(), R"({"query":9,"operator":9,"worker":9,"start_ns":9,"end_ns":9,"rows":9})");
  std::remove(path.c_str());
}

TEST(WorkOrderLogTest, RotatesAtItsSizeKeepingThePreviousFile) {
  const std::string path = ::testing::TempDir() + "work_order_log_rotation_" + std::to_string(getpid()) + ".jsonl";
  const size_t line_bytes = WorkOrderLog::FormatLine(WorkOrderCompletion{1, 0, 0, 1000, 1001, 0}).size() + 1;
  absl::StatusOr<std::unique_ptr<WorkOrderLog>> log = WorkOrderLog::Open(path, 100 * line_bytes);
  ASSERT_TRUE(log.ok()) << log.status();
  // Batches of 60 lines: the second batch passes 100 lines' bytes, so the file rotates after it (120 lines in
  // PATH.1), and the third batch starts the new file.
  auto lines_of = [](const std::string& file) {
    std::ifstream in(file);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  for (int batch = 0; batch < 3; ++batch) {
    for (int i = 0; i < 60; ++i) (*log)->Append(WorkOrderCompletion{batch, 0, 0, 1000, 1001, 0});
    (*log)->Flush();
  }
  ASSERT_TRUE((*log)->Close().ok());
  const std::vector<std::string> previous = lines_of(path + ".1");
  const std::vector<std::string> current = lines_of(path);
  ASSERT_EQ(previous.size(), 120u);
  EXPECT_EQ(previous.front(), WorkOrderLog::FormatLine(WorkOrderCompletion{0, 0, 0, 1000, 1001, 0}));
  ASSERT_EQ(current.size(), 60u);
  EXPECT_EQ(current.front(), WorkOrderLog::FormatLine(WorkOrderCompletion{2, 0, 0, 1000, 1001, 0}));
  std::remove(path.c_str());
  std::remove((path + ".1").c_str());
}

TEST(WorkOrderLogTest, OpenFailureNamesThePath) {
  absl::StatusOr<std::unique_ptr<WorkOrderLog>> log = WorkOrderLog::Open("/nonexistent-dir/x.jsonl");
  ASSERT_FALSE(log.ok());
  EXPECT_NE(std::string(log.status().message()).find("/nonexistent-dir/x.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace tessera
