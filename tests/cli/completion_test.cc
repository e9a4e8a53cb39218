#include "cli/completion.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::vector<std::string> kWords = {"SELECT", "SET", "SHOW", "lineitem", "l_orderkey", "l_partkey", "nation"};

TEST(CompletionTest, TheOnlyMatchIsCompletedWithASpace) {
  EXPECT_EQ(CompleteWord("SELECT * FROM na", kWords).insert, "tion ");
  EXPECT_EQ(CompleteWord("SEL", kWords).insert, "ECT ");
  EXPECT_EQ(CompleteWord("x = 1; sho", kWords).insert, "w ");  // keywords follow lower-case typing
  EXPECT_EQ(CompleteWord("NA", kWords).insert, "tion ");       // names keep their case
}

TEST(CompletionTest, SeveralMatchesCompleteTheirCommonPartThenList) {
  Completion common = CompleteWord("SELECT l", kWords);
  EXPECT_EQ(common.insert, "");
  EXPECT_THAT(common.candidates, ElementsAre("l_orderkey", "l_partkey", "lineitem"));
  EXPECT_EQ(CompleteWord("SELECT l_", kWords).insert, "");
  EXPECT_THAT(CompleteWord("SELECT l_", kWords).candidates, ElementsAre("l_orderkey", "l_partkey"));
  EXPECT_EQ(CompleteWord("SELECT l_o", kWords).insert, "rderkey ");
  EXPECT_EQ(CompleteWord("lin", {"lineitem", "lineitem_small"}).insert, "eitem");
  EXPECT_THAT(CompleteWord("s", kWords).candidates, ElementsAre("select", "set", "show"));
}

TEST(CompletionTest, NothingToComplete) {
  EXPECT_EQ(CompleteWord("SELECT ", kWords).insert, "");
  EXPECT_THAT(CompleteWord("SELECT ", kWords).candidates, IsEmpty());
  EXPECT_EQ(CompleteWord("SELECT zz", kWords).insert, "");
  EXPECT_EQ(CompleteWord("SELECT", kWords).insert, "");  // already whole
}

TEST(CompletionTest, KeywordsAreUpperCase) {
  for (const std::string& keyword : CompletionKeywords()) {
    for (char c : keyword) EXPECT_FALSE(c >= 'a' && c <= 'z') << keyword;
  }
}

}  // namespace
}  // namespace tessera
