#include "cli/progress_bar.h"
#include "cli/result_format.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

QueryProgress ThreeOperators(double fraction) {
  QueryProgress progress;
  progress.fraction_done = fraction;
  progress.operators = {{0, "Select", OperatorState::kDone, 4, 4, 4},
                        {1, "HashJoinBuild", OperatorState::kRunning, 2, 1, 4},
                        {2, "HashJoinProbe", OperatorState::kRunning, 10, 2, 40},
                        {3, "ScalarAggregate", OperatorState::kWaiting, 0, 0, -1}};
  return progress;
}

TEST(ProgressBarTest, ShowsTheRowsTheRunningOperatorWroteSoFar) {
  QueryProgress progress;
  progress.fraction_done = 0.25;
  progress.operators = {{0, "CopyFrom", OperatorState::kRunning, 24, 6, 25, 1'234'567}};
  EXPECT_THAT(RenderProgressLine(progress, 1, 100), HasSubstr("] CopyFrom 1.2M rows (0 of 1 operators done)"));
  progress.operators[0].rows_out = 12'345;
  EXPECT_THAT(RenderProgressLine(progress, 1, 100), HasSubstr("] CopyFrom 12.3k rows ("));
  progress.operators[0].rows_out = 1;
  EXPECT_THAT(RenderProgressLine(progress, 1, 100), HasSubstr("] CopyFrom 1 row ("));
}

TEST(ProgressBarTest, ShowsPercentBarAndTheRunningOperatorWithTheMostWorkLeft) {
  std::string line = RenderProgressLine(ThreeOperators(0.5), 2.34, 100);
  EXPECT_THAT(line, StartsWith(" 50% ["));
  EXPECT_THAT(line, HasSubstr("] HashJoinProbe +1 (1 of 4 operators done) 2.3 s"));
  EXPECT_LE(DisplayWidth(line), 100u);
  // Half of the bar is full blocks.
  size_t open = line.find('['), close = line.find(']');
  std::string bar = line.substr(open + 1, close - open - 1);
  size_t full = 0;
  for (size_t at = bar.find("█"); at != std::string::npos; at = bar.find("█", at + 1)) ++full;
  EXPECT_EQ(full * 2, DisplayWidth(bar));
}

TEST(ProgressBarTest, SaysWhenTheLoadControllerHoldsTheQueryBack) {
  QueryProgress progress = ThreeOperators(0.25);
  progress.admission = "suspended";
  EXPECT_THAT(RenderProgressLine(progress, 1, 100), HasSubstr("] suspended (1 of 4 operators done)"));
  progress.admission = "waiting for memory";
  EXPECT_THAT(RenderProgressLine(progress, 1, 100), HasSubstr("] waiting for memory"));
}

TEST(ProgressBarTest, EmptyAndFullBars) {
  QueryProgress none;
  std::string empty = RenderProgressLine(none, 0.6, 80);
  EXPECT_THAT(empty, StartsWith("  0% [ "));
  EXPECT_THAT(empty, HasSubstr("starting"));
  std::string full = RenderProgressLine(ThreeOperators(1.0), 1, 80);
  EXPECT_THAT(full, StartsWith("100% [█"));
  EXPECT_THAT(full, HasSubstr("█]"));
}

TEST(ProgressBarTest, FitsNarrowTerminals) {
  for (size_t width : {20u, 30u, 45u, 60u}) {
    std::string line = RenderProgressLine(ThreeOperators(0.25), 12.5, width);
    EXPECT_LE(DisplayWidth(line), width) << line;
    EXPECT_THAT(line, StartsWith(" 25% [")) << line;
    EXPECT_THAT(line, HasSubstr("12.5 s")) << line;
  }
}

}  // namespace
}  // namespace tessera
