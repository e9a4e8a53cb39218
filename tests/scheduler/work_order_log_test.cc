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
  const std::string path =
      ::testing::TempDir() + "work_order_log_test_" + std::to_string(getpid()) + ".jsonl";
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

TEST(WorkOrderLogTest, OpenFailureNamesThePath) {
  absl::StatusOr<std::unique_ptr<WorkOrderLog>> log = WorkOrderLog::Open("/nonexistent-dir/x.jsonl");
  ASSERT_FALSE(log.ok());
  EXPECT_NE(std::string(log.status().message()).find("/nonexistent-dir/x.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace tessera
