// libFuzzer target for the SQL parser (parser/parser.h). Beyond "never crash, hang or overflow the stack", it
// checks on every input that parses:
//  - each statement's own text parses again as exactly one statement of the same kind;
//  - ToString of each SELECT re-parses, and renders identically (the renderer and parser agree);
// and on every input that fails, that the error is InvalidArgument and starts with "syntax error".
//
// Build: configure with clang and -DTESSERA_FUZZ=ON (see tests/fuzz/CMakeLists.txt), then
//   ./parser_fuzzer -max_total_time=300 -max_len=4096 corpus_dir tests/fuzz/parser_corpus

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "parser/parser.h"

namespace {

void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "parser_fuzzer: %s\n%.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

bool IsNestingLimitError(const absl::Status& status) {
  return status.message().find("nested too deeply") != std::string_view::npos;
}

void CheckSelectRoundTrip(const tessera::parser::SelectStatement& query) {
  const std::string rendered = tessera::parser::ToString(query);
  auto reparsed = tessera::parser::ParseStatement(rendered);
  if (!reparsed.ok()) {
    // The rendering may spell `x::t` as CAST(x AS t) or add parentheses, which costs nesting depth.
    if (IsNestingLimitError(reparsed.status())) return;
    Fail("rendered query does not parse", rendered + "\n" + std::string(reparsed.status().message()));
  }
  if ((*reparsed)->kind != tessera::parser::StatementKind::kSelect) Fail("rendered query is not a SELECT", rendered);
  const std::string rendered_again =
      tessera::parser::ToString(*static_cast<const tessera::parser::SelectQueryStatement&>(**reparsed).query);
  if (rendered_again != rendered) Fail("rendering is not stable", rendered + "\n" + rendered_again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view sql(reinterpret_cast<const char*>(data), size);
  auto statements = tessera::parser::ParseStatements(sql);
  if (!statements.ok()) {
    if (statements.status().code() != absl::StatusCode::kInvalidArgument ||
        statements.status().message().substr(0, 12) != "syntax error") {
      Fail("unexpected error status", statements.status().ToString());
    }
    return 0;
  }
  for (const auto& statement : *statements) {
    auto alone = tessera::parser::ParseStatement(statement->text);
    if (!alone.ok()) Fail("statement text does not parse alone", statement->text);
    if ((*alone)->kind != statement->kind) Fail("statement text parses as another kind", statement->text);
    if (statement->kind == tessera::parser::StatementKind::kSelect) {
      CheckSelectRoundTrip(*static_cast<const tessera::parser::SelectQueryStatement&>(*statement).query);
    }
  }
  return 0;
}
