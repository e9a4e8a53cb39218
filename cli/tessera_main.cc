// tessera: the SQL shell.
//
//   tessera DATA_DIR [-c SQL]... [-f FILE]... [--csv|--tsv] [--memory-limit BYTES] [--threads N]
//
// With -c/-f it runs the statements in order and exits non-zero on the first error. Without them it reads
// statements from standard input: interactively (a prompt; statements end with ';') on a terminal, otherwise as
// a script.

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "cli/result_format.h"
#include "cli/session.h"
#include "common/clock.h"
#include "parser/parser.h"
#include "glog/logging.h"

namespace {

constexpr char kUsage[] =
    "usage: tessera DATA_DIR [-c SQL]... [-f FILE]... [--csv|--tsv] [--timing] [--memory-limit BYTES] "
    "[--threads N] [--no-sync]\n";

struct ShellOptions {
  tessera::DatabaseOptions database;
  std::vector<std::pair<char, std::string>> commands;  // ('c', sql) or ('f', path)
  tessera::OutputFormat format = tessera::OutputFormat::kAligned;
  bool timing = false;
};

bool ParseArguments(int argc, char** argv, ShellOptions* options, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&](std::string* value) {
      if (i + 1 >= argc) {
        *error = absl::StrCat("option ", arg, " needs a value");
        return false;
      }
      *value = argv[++i];
      return true;
    };
    std::string value;
    if (arg == "-c" || arg == "-f") {
      if (!next(&value)) return false;
      options->commands.emplace_back(arg[1], value);
    } else if (arg == "--csv") {
      options->format = tessera::OutputFormat::kCsv;
    } else if (arg == "--tsv") {
      options->format = tessera::OutputFormat::kTsv;
    } else if (arg == "--timing") {
      options->timing = true;
    } else if (arg == "--no-sync") {
      options->database.sync_writes = false;
    } else if (arg == "--memory-limit") {
      if (!next(&value)) return false;
      uint64_t bytes;
      if (!absl::SimpleAtoi(value, &bytes)) {
        *error = absl::StrCat("invalid --memory-limit '", value, "' (bytes)");
        return false;
      }
      options->database.memory_budget_bytes = bytes;
    } else if (arg == "--threads") {
      if (!next(&value)) return false;
      if (!absl::SimpleAtoi(value, &options->database.worker_threads) || options->database.worker_threads < 1) {
        *error = absl::StrCat("invalid --threads '", value, "'");
        return false;
      }
    } else if (arg == "-h" || arg == "--help") {
      *error = "";
      return false;
    } else if (!arg.empty() && arg[0] == '-') {
      *error = absl::StrCat("unknown option ", arg);
      return false;
    } else if (options->database.data_directory.empty()) {
      options->database.data_directory = arg;
    } else {
      *error = absl::StrCat("unexpected argument ", arg);
      return false;
    }
  }
  if (options->database.data_directory.empty()) {
    *error = "no data directory given";
    return false;
  }
  return true;
}

bool RunStatement(tessera::Session& session, const std::string& sql, const ShellOptions& options) {
  int64_t start = tessera::MonotonicNanos();
  absl::StatusOr<tessera::QueryResult> result = session.Execute(sql);
  if (!result.ok()) {
    std::cerr << "Error: " << result.status().message() << std::endl;
    return false;
  }
  std::cout << tessera::FormatResult(*result, options.format);
  if (options.timing) {
    std::cout << absl::StrCat("Time: ", (tessera::MonotonicNanos() - start) / 1e6, " ms") << std::endl;
  }
  std::cout.flush();
  return true;
}

// Runs every statement of `sql` in order, printing each result; stops at the first error.
bool RunSql(tessera::Session& session, const std::string& sql, const ShellOptions& options) {
  absl::StatusOr<std::vector<std::unique_ptr<tessera::parser::Statement>>> statements =
      tessera::parser::ParseStatements(sql);
  if (!statements.ok()) {
    std::cerr << "Error: " << statements.status().message() << std::endl;
    return false;
  }
  for (const auto& statement : *statements) {
    if (!RunStatement(session, statement->text, options)) return false;
  }
  return true;
}

// True when `buffer` holds a complete statement: ends with ';' outside quotes and comments.
bool StatementComplete(const std::string& buffer) {
  bool in_string = false, in_identifier = false, in_block_comment = false, in_line_comment = false;
  char last = 0;
  for (size_t i = 0; i < buffer.size(); ++i) {
    char c = buffer[i];
    if (in_line_comment) {
      if (c == '\n') in_line_comment = false;
      continue;
    }
    if (in_block_comment) {
      if (c == '*' && i + 1 < buffer.size() && buffer[i + 1] == '/') in_block_comment = false, ++i;
      continue;
    }
    if (in_string) {
      if (c == '\'') in_string = false;
      continue;
    }
    if (in_identifier) {
      if (c == '"') in_identifier = false;
      continue;
    }
    if (c == '\'') in_string = true;
    else if (c == '"') in_identifier = true;
    else if (c == '-' && i + 1 < buffer.size() && buffer[i + 1] == '-') in_line_comment = true;
    else if (c == '/' && i + 1 < buffer.size() && buffer[i + 1] == '*') in_block_comment = true;
    if (!isspace(static_cast<unsigned char>(c)) && !in_line_comment && !in_block_comment) last = c;
  }
  return last == ';' && !in_string && !in_identifier && !in_block_comment;
}

int Interactive(tessera::Session& session, ShellOptions& options) {
  bool tty = isatty(STDIN_FILENO);
  if (!tty) {
    std::stringstream script;
    script << std::cin.rdbuf();
    return RunSql(session, script.str(), options) ? 0 : 1;
  }
  std::cout << "Tessera shell on " << options.database.data_directory
            << ". Statements end with ';'. \\dt lists tables, \\d TABLE describes one, \\timing toggles timing, "
               "\\q quits.\n";
  std::string buffer, line;
  while (true) {
    std::cout << (buffer.empty() ? "tessera> " : "     ..> ") << std::flush;
    if (!std::getline(std::cin, line)) break;
    absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (buffer.empty() && !trimmed.empty() && trimmed[0] == '\\') {
      if (trimmed == "\\q") break;
      if (trimmed == "\\dt" || trimmed == "\\d") RunSql(session, "SHOW TABLES", options);
      else if (absl::StartsWith(trimmed, "\\d ")) RunSql(session, absl::StrCat("DESCRIBE ", trimmed.substr(3)), options);
      else if (trimmed == "\\timing") {
        options.timing = !options.timing;
        std::cout << "Timing is " << (options.timing ? "on." : "off.") << std::endl;
      } else std::cout << "unknown command " << trimmed << " (\\dt, \\d TABLE, \\timing, \\q)" << std::endl;
      continue;
    }
    buffer += line;
    buffer += '\n';
    if (StatementComplete(buffer)) {
      RunSql(session, buffer, options);
      buffer.clear();
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = false;
  FLAGS_minloglevel = 1;  // warnings and errors only
  ShellOptions options;
  std::string error;
  if (!ParseArguments(argc, argv, &options, &error)) {
    if (!error.empty()) std::cerr << "tessera: " << error << "\n";
    std::cerr << kUsage;
    return error.empty() ? 0 : 2;
  }
  absl::StatusOr<std::unique_ptr<tessera::Database>> database = tessera::Database::Open(options.database);
  if (!database.ok()) {
    std::cerr << "tessera: cannot open " << options.database.data_directory << ": " << database.status().message()
              << std::endl;
    return 1;
  }
  tessera::Session session(database->get());
  if (options.commands.empty()) return Interactive(session, options);
  for (const auto& [kind, text] : options.commands) {
    std::string sql = text;
    if (kind == 'f') {
      std::ifstream file(text);
      if (!file) {
        std::cerr << "tessera: cannot read " << text << ": " << std::strerror(errno) << std::endl;
        return 1;
      }
      std::stringstream contents;
      contents << file.rdbuf();
      sql = contents.str();
    }
    if (!RunSql(session, sql, options)) return 1;
  }
  return 0;
}
