#include "cli/statement_splitter.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using State = StatementSplitter::State;

TEST(StatementSplitterTest, SplitsAtSemicolons) {
  StatementSplitter splitter;
  EXPECT_THAT(splitter.Feed("SELECT 1; SELECT 2;\n  SELECT 3"), ElementsAre("SELECT 1;", "SELECT 2;"));
  EXPECT_TRUE(splitter.HasPendingText());
  EXPECT_EQ(splitter.Finish(), "SELECT 3");
  EXPECT_FALSE(splitter.HasPendingText());
}

TEST(StatementSplitterTest, StatementsSpanLines) {
  StatementSplitter splitter;
  EXPECT_THAT(splitter.Feed("SELECT a\n"), IsEmpty());
  EXPECT_EQ(splitter.state(), State::kCode);
  EXPECT_THAT(splitter.Feed("FROM t\n"), IsEmpty());
  EXPECT_THAT(splitter.Feed("WHERE a = 1;\n"), ElementsAre("SELECT a\nFROM t\nWHERE a = 1;"));
  EXPECT_FALSE(splitter.HasPendingText());
}

TEST(StatementSplitterTest, SemicolonsInStringsAndIdentifiersDoNotEndStatements) {
  StatementSplitter splitter;
  EXPECT_THAT(splitter.Feed("SELECT 'a;b', 'it''s;' AS \"x;\"\"y\";"),
              ElementsAre("SELECT 'a;b', 'it''s;' AS \"x;\"\"y\";"));
  EXPECT_THAT(splitter.Feed("SELECT 'open;\n"), IsEmpty());
  EXPECT_EQ(splitter.state(), State::kString);
  EXPECT_THAT(splitter.Feed("still;';\n"), ElementsAre("SELECT 'open;\nstill;';"));
  EXPECT_THAT(splitter.Feed("SELECT \"a;\n"), IsEmpty());
  EXPECT_EQ(splitter.state(), State::kQuotedIdentifier);
}

TEST(StatementSplitterTest, SemicolonsInCommentsDoNotEndStatements) {
  StatementSplitter splitter;
  EXPECT_THAT(splitter.Feed("SELECT 1 -- not here;\n"), IsEmpty());
  EXPECT_EQ(splitter.state(), State::kCode);
  EXPECT_THAT(splitter.Feed("+ 1 /* nor /* nested; */ here; */;"),
              ElementsAre("SELECT 1 -- not here;\n+ 1 /* nor /* nested; */ here; */;"));
  EXPECT_THAT(splitter.Feed("SELECT /* open;\n"), IsEmpty());
  EXPECT_EQ(splitter.state(), State::kBlockComment);
  EXPECT_THAT(splitter.Feed("*/ 2;"), ElementsAre("SELECT /* open;\n*/ 2;"));
}

TEST(StatementSplitterTest, TwoCharacterTokensMaySpanPieces) {
  StatementSplitter splitter;
  EXPECT_THAT(splitter.Feed("SELECT 1 -"), IsEmpty());
  EXPECT_THAT(splitter.Feed("- comment;\n;"), ElementsAre("SELECT 1 -- comment;\n;"));
  EXPECT_THAT(splitter.Feed("SELECT 2 /"), IsEmpty());
  EXPECT_THAT(splitter.Feed("* c; */;"), ElementsAre("SELECT 2 /* c; */;"));
}

TEST(StatementSplitterTest, EmptyStatementsAndCommentsAloneAreDropped) {
  StatementSplitter splitter;
  EXPECT_THAT(splitter.Feed(";; -- just a comment\n /* and; another */ ;SELECT 1;"), ElementsAre("SELECT 1;"));
  EXPECT_THAT(splitter.Feed("-- trailing comment"), IsEmpty());
  EXPECT_TRUE(splitter.HasPendingText());
  EXPECT_EQ(splitter.Finish(), "");
}

TEST(StatementSplitterTest, ResetForgetsThePendingStatement) {
  StatementSplitter splitter;
  EXPECT_THAT(splitter.Feed("SELECT 'unfinished"), IsEmpty());
  splitter.Reset();
  EXPECT_FALSE(splitter.HasPendingText());
  EXPECT_EQ(splitter.state(), State::kCode);
  EXPECT_THAT(splitter.Feed("SELECT 2;"), ElementsAre("SELECT 2;"));
}

}  // namespace
}  // namespace tessera
