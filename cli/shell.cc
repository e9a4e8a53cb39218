#include "cli/shell.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cli/completion.h"
#include "cli/copy_command.h"
#include "cli/line_editor.h"
#include "cli/statement_monitor.h"
#include "cli/statement_splitter.h"
#include "common/clock.h"

namespace tessera {
namespace {

constexpr char kPrompt[] = "tessera> ";
// \i files that include files: deeper than this is taken for a file that includes itself.
constexpr int kMaxIncludeDepth = 16;
// Tab completes column names of every table and view when there are at most this many (one DESCRIBE each).
constexpr size_t kMaxRelationsForColumnCompletion = 64;

constexpr char kHelp[] =
    "Statements end with ';' and may span lines; Tab completes keywords and names. Meta-commands (one per line):\n"
    "  \\d                     list tables and views\n"
    "  \\d NAME                describe a table or view\n"
    "  \\dt                    list tables\n"
    "  \\timing [on|off]       show how long each statement takes\n"
    "  \\progress [on|off]     a progress bar for statements running longer than half a second\n"
    "  \\format [FORMAT]       the output format: aligned, csv, tsv or json\n"
    "  \\maxrows [N]           the most rows an aligned table shows on a terminal (0 = all)\n"
    "  \\i FILE                run the statements and meta-commands in FILE (stops at the first error)\n"
    "  \\o [FILE]              send results to FILE; \\o alone: back to standard output\n"
    "  \\copy T FROM 'FILE' [(OPTIONS)]   load a file of this machine into table T (also to a remote server)\n"
    "  \\copy T|(QUERY) TO 'FILE' [(OPTIONS)]   write a table or a query's rows into a file of this machine\n"
    "  \\?                     this help\n"
    "  \\q                     quit (or Ctrl-D)\n"
    "Ctrl-C cancels the running statement; at the prompt it clears the line.\n"
    "NULL is shown as NULL (dimmed on a terminal); long values are cut with '…' to fit the terminal.\n";

const char* FormatName(OutputFormat format) {
  switch (format) {
    case OutputFormat::kAligned:
      return "aligned";
    case OutputFormat::kCsv:
      return "csv";
    case OutputFormat::kTsv:
      return "tsv";
    case OutputFormat::kJson:
      return "json";
  }
  return "aligned";
}

// "on"/"off" sets, nothing toggles; false for anything else.
bool ParseToggle(std::string_view argument, bool* value) {
  if (argument.empty()) {
    *value = !*value;
  } else if (argument == "on") {
    *value = true;
  } else if (argument == "off") {
    *value = false;
  } else {
    return false;
  }
  return true;
}

size_t TerminalColumns(int fd) {
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 0;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && absl::ascii_isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && absl::ascii_isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

void Write(std::FILE* out, std::string_view text) { std::fwrite(text.data(), 1, text.size(), out); }

// A line that is a meta-command: it starts with '\' and no string or comment is open.
bool IsMetaCommandLine(const StatementSplitter& splitter, std::string_view line) {
  return splitter.state() == StatementSplitter::State::kCode && Trim(line).starts_with('\\');
}

}  // namespace

Shell::Shell(Connection* connection, ShellSettings settings)
    : connection_(connection), settings_(std::move(settings)) {}

Shell::~Shell() = default;

bool Shell::RunCommand(std::string_view text) {
  std::string_view trimmed = Trim(text);
  if (trimmed.starts_with('\\')) return RunMetaCommand(trimmed) != Outcome::kError;
  StatementSplitter splitter;
  Outcome outcome = RunStatements(splitter.Feed(text));
  if (outcome != Outcome::kOk) return outcome != Outcome::kError;
  std::string rest = splitter.Finish();
  return rest.empty() || RunStatement(rest) == Outcome::kOk;
}

bool Shell::RunScript(std::istream& in, const std::string& name) {
  const ScriptPosition enclosing = script_;  // \i runs a script inside a script
  script_ = ScriptPosition{.name = name};
  StatementSplitter splitter;
  std::string line;
  bool ok = true;
  while (ok && !quit_requested_ && std::getline(in, line)) {
    ++script_.line;
    if (!splitter.HasPendingText()) script_.statement_line = script_.line;
    ok = HandleLine(splitter, line) != Outcome::kError;
  }
  if (ok && !quit_requested_) {
    std::string rest = splitter.Finish();
    ok = rest.empty() || RunStatement(rest) == Outcome::kOk;
  }
  script_ = enclosing;
  return ok;
}

int Shell::RunInteractive() {
  LineEditor editor(settings_.history_path);
  editor.SetCompletionWords([this] { return CompletionWords(); });
  Write(stdout, absl::StrCat("Tessera shell on ", settings_.target_description,
                             ".\nStatements end with ';'. \\? for help, \\q or Ctrl-D to quit.\n"));
  std::fflush(stdout);
  StatementSplitter splitter;
  // The lines of the statement being typed, for the history (one entry per statement).
  std::string history_entry;
  bool entry_has_line_comment = false;
  while (!quit_requested_) {
    const std::string prompt = splitter.HasPendingText() ? ContinuationPrompt(splitter) : kPrompt;
    std::string line;
    InterruptSignal::Take();  // a Ctrl-C that came after the last statement ended
    LineEditor::ReadResult read = editor.ReadLine(prompt, &line);
    if (read == LineEditor::ReadResult::kEndOfInput) {
      Write(stdout, "\n");
      break;
    }
    if (read == LineEditor::ReadResult::kInterrupted) {
      InterruptSignal::Take();
      splitter.Reset();
      history_entry.clear();
      entry_has_line_comment = false;
      Write(stdout, "^C\n");
      std::fflush(stdout);
      continue;
    }
    if (IsMetaCommandLine(splitter, line)) {
      editor.AddHistory(std::string(Trim(line)));
      HandleLine(splitter, line);
      continue;
    }
    if (!line.empty()) {
      // One history line per statement: lines joined by spaces, unless a "--" comment needs its line end.
      entry_has_line_comment |= line.find("--") != std::string::npos;
      if (!history_entry.empty()) history_entry += '\n';
      history_entry += line;
    }
    HandleLine(splitter, line);
    if (!splitter.HasPendingText() && !history_entry.empty()) {
      if (!entry_has_line_comment) std::replace(history_entry.begin(), history_entry.end(), '\n', ' ');
      editor.AddHistory(history_entry);
      history_entry.clear();
      entry_has_line_comment = false;
    }
  }
  return 0;
}

Shell::Outcome Shell::HandleLine(StatementSplitter& splitter, const std::string& line) {
  if (IsMetaCommandLine(splitter, line)) return RunMetaCommand(Trim(line));
  return RunStatements(splitter.Feed(line + "\n"));
}

Shell::Outcome Shell::RunStatements(const std::vector<std::string>& statements) {
  for (size_t i = 0; i < statements.size(); ++i) {
    if (i > 0) script_.statement_line = script_.line;  // the second statement of a line starts on it
    Outcome outcome = RunStatement(statements[i]);
    if (outcome != Outcome::kOk) return outcome;
  }
  return Outcome::kOk;
}

Shell::Outcome Shell::RunStatement(const std::string& sql, const std::function<void(QueryResult&)>& adjust,
                                   CopyChannel* copy) {
  if (!monitor_) monitor_ = std::make_unique<StatementMonitor>(connection_, MonitorOptions{});
  const int64_t start = MonotonicNanos();
  InterruptSignal::Take();  // Ctrl-Cs from before this statement are not for it
  monitor_->Begin(/*show_progress=*/settings_.progress && isatty(STDERR_FILENO));
  absl::StatusOr<QueryResult> result =
      copy != nullptr ? connection_->ExecuteCopy(sql, *copy) : connection_->Execute(sql);
  const bool interrupted = monitor_->End();
  if (!result.ok()) {
    if (interrupted && absl::IsCancelled(result.status())) {
      PrintError("cancelled (Ctrl-C)");
    } else {
      PrintError(std::string(result.status().message()));
    }
    return Outcome::kError;
  }
  if (adjust) adjust(*result);
  PrintResult(*result);
  if (settings_.timing) {
    std::FILE* out = settings_.format == OutputFormat::kJson ? stderr : stdout;
    Write(out, absl::StrCat("Time: ", (MonotonicNanos() - start) / 1e6, " ms\n"));
    std::fflush(out);
  }
  return Outcome::kOk;
}

void Shell::PrintResult(const QueryResult& result) {
  std::FILE* out = output_file_ ? output_file_.get() : stdout;
  FormatOptions options{.format = settings_.format};
  if (!output_file_ && settings_.format == OutputFormat::kAligned && isatty(STDOUT_FILENO)) {
    options.max_width = TerminalColumns(STDOUT_FILENO);
    options.max_rows = settings_.terminal_max_rows;
    options.terminal_styles = true;
  }
  Write(out, FormatResult(result, options));
  std::fflush(out);
}

void Shell::PrintError(const std::string& message) {
  std::fflush(stdout);
  const std::string where = script_.name.empty() ? "" : absl::StrCat(script_.name, ":", script_.statement_line, ": ");
  Write(stderr, absl::StrCat("Error: ", where, message, "\n"));
  std::fflush(stderr);
}

std::string Shell::ContinuationPrompt(const StatementSplitter& splitter) const {
  switch (splitter.state()) {
    case StatementSplitter::State::kString:
      return "      '> ";
    case StatementSplitter::State::kQuotedIdentifier:
      return "      \"> ";
    case StatementSplitter::State::kBlockComment:
      return "      *> ";
    default:
      return "     ..> ";
  }
}

Shell::Outcome Shell::RunMetaCommand(std::string_view line) {
  line.remove_prefix(1);  // the '\'
  const size_t name_end = std::min(line.find_first_of(" \t"), line.size());
  const std::string name(line.substr(0, name_end));
  const std::string argument(Trim(line.substr(name_end)));
  auto say = [](std::string_view text) {
    Write(stdout, text);
    std::fflush(stdout);
  };

  if (name == "q" || name == "quit") {
    quit_requested_ = true;
    return Outcome::kQuit;
  }
  if (name == "?" || name == "help") {
    say(kHelp);
    return Outcome::kOk;
  }
  if (name == "d") {
    if (argument.empty()) return ListRelations(/*tables_only=*/false);
    return RunStatement(absl::StrCat("DESCRIBE ", argument));
  }
  if (name == "dt") return ListRelations(/*tables_only=*/true);
  if (name == "timing" || name == "progress") {
    bool& setting = name == "timing" ? settings_.timing : settings_.progress;
    if (!ParseToggle(argument, &setting)) {
      PrintError(absl::StrCat("\\", name, " takes on or off, not '", argument, "'"));
      return Outcome::kError;
    }
    say(absl::StrCat(name == "timing" ? "Timing" : "Progress bar", " is ", setting ? "on" : "off", ".\n"));
    return Outcome::kOk;
  }
  if (name == "format") {
    if (argument.empty()) {
      say(absl::StrCat("Output format is ", FormatName(settings_.format), ".\n"));
      return Outcome::kOk;
    }
    for (OutputFormat format : {OutputFormat::kAligned, OutputFormat::kCsv, OutputFormat::kTsv, OutputFormat::kJson}) {
      if (argument == FormatName(format)) {
        settings_.format = format;
        say(absl::StrCat("Output format is ", argument, ".\n"));
        return Outcome::kOk;
      }
    }
    PrintError(absl::StrCat("unknown format '", argument, "' (aligned, csv, tsv or json)"));
    return Outcome::kError;
  }
  if (name == "maxrows") {
    size_t rows = 0;
    if (!argument.empty() && !absl::SimpleAtoi(argument, &rows)) {
      PrintError(absl::StrCat("\\maxrows takes a number of rows (0 = all), not '", argument, "'"));
      return Outcome::kError;
    }
    if (!argument.empty()) settings_.terminal_max_rows = rows;
    say(settings_.terminal_max_rows == 0
            ? std::string("Showing all rows.\n")
            : absl::StrCat("Showing at most ", settings_.terminal_max_rows, " rows on a terminal.\n"));
    return Outcome::kOk;
  }
  if (name == "i") {
    if (argument.empty()) {
      PrintError("\\i needs a file name");
      return Outcome::kError;
    }
    if (include_depth_ >= kMaxIncludeDepth) {
      PrintError(absl::StrCat("\\i ", argument, ": files include each other more than ", kMaxIncludeDepth, " deep"));
      return Outcome::kError;
    }
    std::ifstream file(argument);
    if (!file) {
      PrintError(absl::StrCat("cannot read ", argument, ": ", std::strerror(errno)));
      return Outcome::kError;
    }
    ++include_depth_;
    const bool ok = RunScript(file, argument);
    --include_depth_;
    if (quit_requested_) return Outcome::kQuit;
    return ok ? Outcome::kOk : Outcome::kError;
  }
  if (name == "copy") {
    absl::StatusOr<CopyCommand> command = ParseCopyCommand(argument);
    absl::StatusOr<std::unique_ptr<FileCopyChannel>> file =
        command.ok() ? FileCopyChannel::Open(*command) : command.status();
    if (!file.ok()) {
      PrintError(std::string(file.status().message()));
      return Outcome::kError;
    }
    const Outcome outcome = RunStatement(command->sql, nullptr, file->get());
    if (absl::Status closed = (*file)->Close(); !closed.ok()) {
      PrintError(std::string(closed.message()));
      return Outcome::kError;
    }
    return outcome;
  }
  if (name == "o") {
    if (argument.empty()) {
      output_file_.reset();
      return Outcome::kOk;
    }
    std::FILE* file = std::fopen(argument.c_str(), "w");
    if (file == nullptr) {
      PrintError(absl::StrCat("cannot write ", argument, ": ", std::strerror(errno)));
      return Outcome::kError;
    }
    output_file_.reset(file);
    return Outcome::kOk;
  }
  PrintError(absl::StrCat("unknown meta-command \\", name, " (\\? lists them)"));
  return Outcome::kError;
}

std::vector<std::string> Shell::CompletionWords() {
  std::vector<std::string> words = CompletionKeywords();
  // The names in the database now (asked at each Tab, so that new tables count); errors leave them out.
  auto column_values = [&](const std::string& sql, const std::string& column_name) {
    std::vector<std::string> values;
    absl::StatusOr<QueryResult> result = connection_->Execute(sql);
    if (!result.ok()) return values;
    for (size_t c = 0; c < result->columns.size(); ++c) {
      if (result->columns[c].name != column_name) continue;
      for (const std::vector<Value>& row : result->rows) {
        if (!row[c].is_null()) values.push_back(row[c].ToString());
      }
    }
    return values;
  };
  std::vector<std::string> relations = column_values("SHOW TABLES", "name");
  for (const std::string& relation : relations) {
    words.push_back(relation);
    if (relations.size() <= kMaxRelationsForColumnCompletion) {
      const std::string quoted = absl::StrCat("\"", absl::StrReplaceAll(relation, {{"\"", "\"\""}}), "\"");
      for (std::string& column : column_values(absl::StrCat("DESCRIBE ", quoted), "column_name")) {
        words.push_back(std::move(column));
      }
    }
  }
  return words;
}

Shell::Outcome Shell::ListRelations(bool tables_only) {
  if (!tables_only) return RunStatement("SHOW TABLES");
  return RunStatement("SHOW TABLES", [](QueryResult& result) {
    size_t kind = result.columns.size();
    for (size_t c = 0; c < result.columns.size(); ++c) {
      if (result.columns[c].name == "kind") kind = c;
    }
    if (kind == result.columns.size()) return;
    std::erase_if(result.rows, [&](const std::vector<Value>& row) {
      return row[kind].is_null() || row[kind].ToString() != "table";
    });
  });
}

}  // namespace tessera
