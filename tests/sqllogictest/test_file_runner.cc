#include "tests/sqllogictest/test_file_runner.h"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <system_error>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "catalog/types.h"
#include "catalog/value.h"
#include "engine/query_result.h"
#include "engine/session.h"
#include "tests/sqllogictest/result_comparison.h"
#include "tests/sqllogictest/result_rendering.h"
#include "tests/sqllogictest/sql_placeholders.h"
#include "tests/sqllogictest/test_file_parser.h"

namespace tessera::sqllogictest {
namespace {

enum class RecordOutcome { kPassed, kFailed, kFatal, kHalt };

ResultCell ToCell(const Value& value) {
  if (value.is_null()) return ResultCell::Null();
  switch (value.type().id()) {
    case TypeId::kInteger:
    case TypeId::kBigInt:
      return ResultCell::Integer(value.AsInt64());
    case TypeId::kDouble: {
      ResultCell cell = ResultCell::Real(value.AsDouble());
      cell.text = value.ToString();  // what a 'T' column shows
      return cell;
    }
    case TypeId::kDecimal:
      return ResultCell::Decimal(value.ToString());
    default:
      return ResultCell::Text(value.ToString());
  }
}

RenderedResult Render(const QueryResult& result, std::string_view column_types) {
  RenderedResult rendered;
  for (const ResultColumn& column : result.columns) rendered.column_names.push_back(column.name);
  // On a column-count mismatch there is no declared letter for every column; render the extra ones as text.
  auto letter = [&](size_t column) { return column < column_types.size() ? column_types[column] : 'T'; };
  for (const std::vector<Value>& row : result.rows) {
    std::vector<std::string> rendered_row;
    rendered_row.reserve(row.size());
    for (size_t column = 0; column < row.size(); ++column) {
      rendered_row.push_back(RenderCell(ToCell(row[column]), letter(column)));
    }
    rendered.rows.push_back(std::move(rendered_row));
  }
  return rendered;
}

std::string Indent(std::string_view text) {
  std::string indented = "    ";
  for (char c : text) {
    indented.push_back(c);
    if (c == '\n') indented += "    ";
  }
  return indented;
}

bool ReadWholeFile(const std::string& path, std::string* content) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *content = buffer.str();
  return !in.bad();
}

class TestFileRunner {
 public:
  TestFileRunner(const std::string& path, const RunnerOptions& options, std::ostream& out)
      : path_(path), options_(options), out_(out) {}

  ~TestFileRunner() {
    CloseDatabase();
    RemoveTemporaryRoot();
  }

  FileOutcome Run() {
    FileOutcome outcome;
    std::string content;
    if (!ReadWholeFile(path_, &content)) {
      out_ << path_ << ": cannot read file: " << std::strerror(errno) << "\n";
      return FinishFailedFile(&outcome);
    }
    absl::StatusOr<TestFile> file = ParseTestFile(content, path_);
    if (!file.ok()) {
      out_ << file.status().message() << "\n";
      return FinishFailedFile(&outcome);
    }
    for (const TestRecord& record : file->records) {
      if (record.type == RecordType::kRequire && !record.skipped) {
        out_ << "SKIP " << path_ << " (require " << record.argument << ")\n";
        outcome.file_skipped = true;
        return outcome;
      }
    }
    if (!CreateTemporaryRoot() || !OpenDatabase()) return FinishFailedFile(&outcome);

    for (size_t i = 0; i < file->records.size(); ++i) {
      const TestRecord& record = file->records[i];
      if (record.skipped) {
        ++outcome.skipped;
        continue;
      }
      RecordOutcome result = RunRecord(record);
      if (result == RecordOutcome::kPassed) ++outcome.passed;
      if (result == RecordOutcome::kFailed || result == RecordOutcome::kFatal) ++outcome.failed;
      if (result == RecordOutcome::kHalt || result == RecordOutcome::kFatal) {
        outcome.skipped += static_cast<int>(file->records.size() - i - 1);
        break;
      }
    }
    int records = outcome.passed + outcome.failed;
    std::string skipped = outcome.skipped > 0 ? absl::StrCat(", ", outcome.skipped, " skipped") : "";
    if (outcome.failed == 0) {
      out_ << "PASS " << path_ << " (" << records << " records" << skipped << ")\n";
    } else {
      out_ << "FAIL " << path_ << " (" << outcome.failed << " of " << records << " records failed" << skipped << ")\n";
    }
    return outcome;
  }

 private:
  FileOutcome FinishFailedFile(FileOutcome* outcome) {
    outcome->failed = 1;
    out_ << "FAIL " << path_ << "\n";
    return *outcome;
  }

  bool CreateTemporaryRoot() {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = absl::StrCat(tmpdir != nullptr && tmpdir[0] != '\0' ? tmpdir : "/tmp", "/tessera_slt_XXXXXX");
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) == nullptr) {
      out_ << path_ << ": mkdtemp(" << pattern << ") failed: " << std::strerror(errno) << "\n";
      return false;
    }
    root_ = buffer.data();
    placeholders_.test_dir = root_ + "/test_dir";
    placeholders_.shared_dir = options_.shared_dir;
    placeholders_.data_dir = options_.data_dir;
    std::error_code error;
    std::filesystem::create_directories(placeholders_.test_dir, error);
    if (error) {
      out_ << path_ << ": cannot create " << placeholders_.test_dir << ": " << error.message() << "\n";
      return false;
    }
    return true;
  }

  void RemoveTemporaryRoot() {
    if (root_.empty()) return;
    if (options_.keep_data) {
      out_ << "kept data of " << path_ << " in " << root_ << "\n";
      return;
    }
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }

  bool OpenDatabase() {
    DatabaseOptions database_options;
    database_options.data_directory = root_ + "/db";
    // Durability against power loss is not what these tests check; `restart` still closes and reopens.
    database_options.sync_writes = false;
    absl::StatusOr<std::unique_ptr<Database>> database = Database::Open(database_options);
    if (!database.ok()) {
      out_ << path_ << ": cannot open database in " << database_options.data_directory << ": "
           << database.status().message() << "\n";
      return false;
    }
    database_ = *std::move(database);
    session_ = std::make_unique<Session>(database_.get());
    // Every plan of the SQL tests is checked as bound and after every optimizer rule (also in Release builds).
    if (absl::StatusOr<QueryResult> set = session_->Execute("SET validate_plans = on"); !set.ok()) {
      out_ << path_ << ": SET validate_plans: " << set.status().message() << "\n";
      return false;
    }
    return true;
  }

  void CloseDatabase() {
    session_.reset();
    database_.reset();
  }

  RecordOutcome RunRecord(const TestRecord& record) {
    auto start = std::chrono::steady_clock::now();
    if (options_.verbose) {
      std::string_view what = record.sql;
      if (record.type == RecordType::kRestart) what = "restart";
      if (record.type == RecordType::kHalt) what = "halt";
      out_ << path_ << ":" << record.line << ": " << what.substr(0, what.find('\n')) << "\n";
    }
    RecordOutcome outcome = RecordOutcome::kPassed;
    switch (record.type) {
      case RecordType::kStatementOk:
      case RecordType::kStatementError:
        outcome = RunStatement(record);
        break;
      case RecordType::kQuery:
        outcome = RunQuery(record);
        break;
      case RecordType::kRestart:
        CloseDatabase();
        if (!OpenDatabase()) {
          Report(record, "", "restart failed; the rest of the file is not run");
          outcome = RecordOutcome::kFatal;
        }
        break;
      case RecordType::kHalt:
        return RecordOutcome::kHalt;
      case RecordType::kRequire:
        break;  // handled before any record runs
    }
    if (options_.verbose) {
      auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
      out_ << "    " << (outcome == RecordOutcome::kPassed ? "ok" : "FAILED") << " (" << elapsed.count() << " ms)\n";
    }
    return outcome;
  }

  RecordOutcome RunStatement(const TestRecord& record) {
    std::string sql = ReplacePlaceholders(record.sql, placeholders_);
    absl::StatusOr<QueryResult> result = session_->Execute(sql);
    if (record.type == RecordType::kStatementOk) {
      if (result.ok()) return RecordOutcome::kPassed;
      Report(record, sql, absl::StrCat("statement failed: ", result.status().message()));
      return RecordOutcome::kFailed;
    }
    if (result.ok()) {
      std::string what = result->returns_rows ? absl::StrCat(result->rows.size(), " rows") : result->status_message;
      Report(record, sql, absl::StrCat("statement should have failed but succeeded (", what, ")"));
      return RecordOutcome::kFailed;
    }
    std::string message(result.status().message());
    ComparisonOutcome check = CheckErrorMessage(message, record.expected_error_regex, record.expected_error_substring);
    if (check.matched) return RecordOutcome::kPassed;
    Report(record, sql, check.explanation);
    return RecordOutcome::kFailed;
  }

  RecordOutcome RunQuery(const TestRecord& record) {
    std::string sql = ReplacePlaceholders(record.sql, placeholders_);
    absl::StatusOr<QueryResult> result = session_->Execute(sql);
    if (!result.ok()) {
      Report(record, sql, absl::StrCat("query failed: ", result.status().message()));
      return RecordOutcome::kFailed;
    }
    if (!result->returns_rows) {
      Report(record, sql,
             absl::StrCat("statement returned no rows (", result->status_message, "); use 'statement ok'"));
      return RecordOutcome::kFailed;
    }
    RenderedResult rendered = Render(*result, record.column_types);
    // Without "----" the query must return no rows, unless a label says which earlier result to match.
    if (record.has_expected_results || record.label.empty()) {
      ComparisonOutcome check =
          CompareQueryResult(record.column_types, record.sort_mode, record.expected_lines, rendered);
      if (!check.matched) {
        Report(record, sql, check.explanation);
        return RecordOutcome::kFailed;
      }
    }
    if (record.label.empty()) return RecordOutcome::kPassed;
    auto [labelled, is_new] = label_results_.try_emplace(record.label, RowsToLines(rendered.rows));
    if (is_new) return RecordOutcome::kPassed;
    ComparisonOutcome check = CompareQueryResult(record.column_types, record.sort_mode, labelled->second, rendered);
    if (check.matched) return RecordOutcome::kPassed;
    Report(record, sql,
           absl::StrCat("result differs from the earlier query labelled '", record.label, "': ", check.explanation));
    return RecordOutcome::kFailed;
  }

  // Prints "file:line: <first line of what>", then the SQL, then the rest of `what` (expected vs actual).
  void Report(const TestRecord& record, std::string_view sql, std::string_view what) {
    size_t first_line_end = std::min(what.find('\n'), what.size());
    out_ << path_ << ":" << record.line << ": " << what.substr(0, first_line_end) << "\n";
    if (!sql.empty()) out_ << "  SQL:\n" << Indent(sql) << "\n";
    if (first_line_end < what.size()) out_ << what.substr(first_line_end + 1) << "\n";
  }

  const std::string path_;
  const RunnerOptions& options_;
  std::ostream& out_;
  std::string root_;  // the temporary root; empty until created
  PlaceholderPaths placeholders_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<Session> session_;
  // Rendered rows of the first query with each label (tab-separated lines).
  std::map<std::string, std::vector<std::string>> label_results_;
};

}  // namespace

FileOutcome RunTestFile(const std::string& path, const RunnerOptions& options, std::ostream& out) {
  return TestFileRunner(path, options, out).Run();
}

}  // namespace tessera::sqllogictest
