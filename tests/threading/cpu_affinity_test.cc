#include "threading/cpu_affinity.h"

#include <gtest/gtest.h>

#include <thread>

namespace tessera {
namespace {

TEST(CpuAffinityTest, ParsesListsAndRanges) {
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList("0-3, 6,8-9,2");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 3, 6, 8, 9}));
  EXPECT_EQ(FormatCpuList(*cpus), "0-3,6,8-9");
  EXPECT_EQ(FormatCpuList({5}), "5");
}

TEST(CpuAffinityTest, RejectsJunkWithTheItemNamed) {
  for (const char* bad : {"", "a", "3-1", "-1", "1,,2", "1-2-3"}) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(bad);
    EXPECT_FALSE(cpus.ok()) << bad;
    EXPECT_EQ(cpus.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_NE(std::string(ParseCpuList("0,x7").status().message()).find("'x7'"), std::string::npos);
}

TEST(CpuAffinityTest, PinsAThreadToAnAllowedCpu) {
  const std::vector<int> allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  const int cpu = allowed.back();
  std::thread thread([cpu] {
    absl::Status pinned = PinCurrentThreadToCpu(cpu);
    ASSERT_TRUE(pinned.ok()) << pinned;
    EXPECT_EQ(CurrentCpu(), cpu);
  });
  thread.join();
  EXPECT_FALSE(PinCurrentThreadToCpu(-1).ok());
}

}  // namespace
}  // namespace tessera
