#pragma once
// The tessera shell's read-eval loop and meta-commands, written against Connection only (engine/connection.h), so
// that it works the same on a data directory in this process and on a server (--connect).
//
// Input is read a line at a time and split into statements at ';' (StatementSplitter); every statement is sent
// to the connection on its own and its result printed before the next one runs. A line that starts with '\'
// outside a string or comment is a meta-command (\? lists them). Scripts (-c, -f, \i, standard input that is not
// a terminal) stop at the first error; the interactive loop reports it and goes on.
//
// Output: results go to standard output or the \o file; "Error: <message>" goes to standard error; with timing on,
// "Time: <ms> ms" follows each statement's result on standard output (standard error with JSON output), never in a
// \o file. The benchmark runner parses `--csv --timing` output: header, rows, "Time:" line per statement.

#include <cstdio>
#include <functional>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/result_format.h"
#include "engine/connection.h"
#include "engine/copy_channel.h"

namespace tessera {

class LineEditor;
class StatementMonitor;
class StatementSplitter;

struct ShellSettings {
  OutputFormat format = OutputFormat::kAligned;
  bool timing = false;
  // The live progress bar (drawn only when standard error is a terminal).
  bool progress = true;
  // The most rows an aligned table shows on a terminal (0 = all); files and pipes get all rows.
  size_t terminal_max_rows = 40;
  // Interactive only: the history file; empty = none.
  std::string history_path;
  // Interactive only: what the banner says the shell is connected to.
  std::string target_description;
};

class Shell {
 public:
  Shell(Connection* connection, ShellSettings settings);
  ~Shell();

  // Runs `text` as given to -c: SQL statements (the last one needs no ';'), or one meta-command when it starts
  // with '\'. False on the first error.
  bool RunCommand(std::string_view text);
  // Runs a script line by line until its end, \q, or the first error (false). Its errors say where:
  // "Error: NAME:LINE: message", LINE being where the failing statement starts.
  bool RunScript(std::istream& in, const std::string& name);
  // The interactive loop on a terminal: prompt, line editing, history, Ctrl-C cancels the running statement,
  // Ctrl-D or \q quits. Returns the process exit status.
  int RunInteractive();
  // Whether \q was given (in a script too: the shell then runs nothing more).
  bool quit_requested() const { return quit_requested_; }

 private:
  enum class Outcome { kOk, kError, kQuit };

  // One line of input: a meta-command, or text for `splitter` whose completed statements run in order (stopping
  // at the first error).
  Outcome HandleLine(StatementSplitter& splitter, const std::string& line);
  Outcome RunStatements(const std::vector<std::string>& statements);
  // Runs one statement; `adjust` may edit its result before it is printed. With `copy`, the statement is a COPY ...
  // FROM STDIN / TO STDOUT whose data is `copy` (\copy).
  Outcome RunStatement(const std::string& sql, const std::function<void(QueryResult&)>& adjust = nullptr,
                       CopyChannel* copy = nullptr);
  Outcome RunMetaCommand(std::string_view line);
  // Runs SHOW TABLES; with `tables_only`, keeps the rows whose kind is 'table'.
  Outcome ListRelations(bool tables_only);
  // The words Tab completes: SQL keywords and the database's table, view and column names.
  std::vector<std::string> CompletionWords();
  // Prints a result the way the current settings say.
  void PrintResult(const QueryResult& result);
  void PrintError(const std::string& message);
  std::string ContinuationPrompt(const StatementSplitter& splitter) const;

  Connection* connection_;
  ShellSettings settings_;
  // Ctrl-C and the progress bar while a statement runs (made with the first statement).
  std::unique_ptr<StatementMonitor> monitor_;
  bool quit_requested_ = false;
  // The \o file; null while output goes to standard output.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> output_file_{nullptr, &std::fclose};
  // Where the script being run is, for its error messages (name empty outside scripts).
  struct ScriptPosition {
    std::string name;
    int line = 0;            // the line being read
    int statement_line = 0;  // the line where the statement being run starts
  };
  ScriptPosition script_;
  // Nesting of \i, to refuse a file that includes itself forever.
  int include_depth_ = 0;
};

}  // namespace tessera
