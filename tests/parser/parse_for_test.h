#pragma once
// Shortcuts for the parser tests: parse and unwrap, dump trees in a structural form, read benchmark queries.
// (parse_for_test.cc ends in _test.cc so that the tests/parser/*_test.cc glob compiles it into the test
// binary.)

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "parser/ast.h"
#include "parser/parser.h"

namespace tessera::parser::testing {

// Parses exactly one statement; fails the current test (and returns null) on error.
std::unique_ptr<Statement> ParseOk(std::string_view sql);

// Parses a SELECT statement and returns its query (fails the test if it is not one).
std::unique_ptr<SelectStatement> ParseQuery(std::string_view sql);

// Parses "SELECT <expression>" and returns the expression.
std::unique_ptr<ParsedExpr> ParseExpr(std::string_view expression);

// The error message of a statement that must fail to parse ("" and a test failure if it parses).
std::string ParseError(std::string_view sql);

// A structural dump that shows every node: (+ a (* b c)), (between x 1 2), (fn SUM x), ...
std::string Dump(const ParsedExpr& expr);

// The folder holding benchmarks/{tpch,ssb}/queries, or "" if none is found: $TESSERA_SHARED_DIR, then the
// `shared` folder next to the source tree, then the source tree itself.
std::filesystem::path BenchmarkQueriesRoot();

// The *.sql files of one benchmark ("tpch" or "ssb"), sorted.
std::vector<std::filesystem::path> BenchmarkQueryFiles(std::string_view benchmark);

std::string ReadFile(const std::filesystem::path& path);

}  // namespace tessera::parser::testing
