// Replays the fuzzing corpus (tests/fuzz/parser_corpus) through the parser in the ordinary build: every input
// must parse or fail with a syntax error, never crash or hang.

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "parser/parser.h"

namespace tessera::parser {
namespace {

TEST(ParserCorpusRegressionTest, EveryCorpusInputParsesOrFailsCleanly) {
  std::filesystem::path corpus = std::filesystem::path(TESSERA_SOURCE_DIR) / "tests" / "fuzz" / "parser_corpus";
  ASSERT_TRUE(std::filesystem::is_directory(corpus)) << corpus;
  int inputs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    std::ifstream file(entry.path(), std::ios::binary);
    std::stringstream contents;
    contents << file.rdbuf();
    auto statements = ParseStatements(contents.str());
    if (!statements.ok()) {
      EXPECT_EQ(statements.status().code(), absl::StatusCode::kInvalidArgument) << entry.path();
      EXPECT_TRUE(std::string(statements.status().message()).starts_with("syntax error")) << entry.path();
    }
    ++inputs;
  }
  EXPECT_GT(inputs, 100);
}

}  // namespace
}  // namespace tessera::parser
