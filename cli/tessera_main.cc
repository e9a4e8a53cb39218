// tessera: the SQL shell. `tessera --help` lists its flags (gflags, defined below and in
// engine/database_flags.cc); cli/shell.h says how input is read and output written.
//
// -c SQL and -f FILE are the one exception to gflags: they may repeat and run in the order given, so
// TakeScriptArguments takes them out of argv before gflags parses the rest. Exit status: 0, 1 when a statement or
// script fails (or the database cannot be opened), 2 on a usage error.

#include <gflags/gflags.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/shell.h"
#include "cli/statement_monitor.h"
#include "client/remote_connection.h"
#include "common/command_line_flags.h"
#include "engine/connection.h"
#include "engine/database_flags.h"
#include "engine/session.h"
#include "glog/logging.h"

DEFINE_bool(csv, false, "output as CSV (default: an aligned table)");
DEFINE_bool(tsv, false, "output as tab-separated values");
DEFINE_bool(json, false, "output as JSON");
DEFINE_bool(timing, false, "print 'Time: <ms> ms' after each statement");
DEFINE_bool(no_progress, false, "no progress bar (it is drawn only when standard error is a terminal)");
DEFINE_string(connect, "", "HOST:PORT of a tessera-server to talk to instead of opening a data directory");
DEFINE_string(token, "", "the server's bearer token (default: $TESSERA_TOKEN); needs --connect");
DEFINE_string(tls_ca, "", "connect with TLS, trusting the certificate(s) in this file; needs --connect");
DEFINE_string(tls_server_name, "", "the name the server's certificate is checked against");

namespace {

const tessera::ProgramDescription& Program() {
  static const tessera::ProgramDescription* program = new tessera::ProgramDescription{
      "tessera",
      "usage: tessera [DATA_DIR | --connect HOST:PORT] [-c SQL | -f FILE]... [flags]\n"
      "Opens DATA_DIR (created if missing; without one, a temporary directory deleted at exit) or connects to a\n"
      "tessera-server, and runs the -c and -f arguments in order, or else standard input: interactively on a\n"
      "terminal, as a script otherwise. Scripts stop at the first error and exit with status 1.\n"
      "  -c SQL    run SQL (statements, or one \\meta-command); repeatable\n"
      "  -f FILE   run the statements and meta-commands in FILE ('-' = standard input); repeatable",
      {__FILE__, tessera::kDatabaseFlagsFile}};
  return *program;
}

struct Arguments {
  tessera::DatabaseOptions database;
  std::vector<std::pair<char, std::string>> commands;  // ('c', sql) or ('f', path)
  tessera::ShellSettings shell;
  std::string connect;  // HOST:PORT of a server; empty = in process
  tessera::ClientOptions client;
};

// Whether `argument` is a flag gflags will read the next argument as the value of (`--token VALUE`).
bool TakesNextArgument(const std::string& argument) {
  if (argument.size() < 2 || argument[0] != '-' || argument.find('=') != std::string::npos) return false;
  std::string name = argument.substr(argument.find_first_not_of('-'));
  std::replace(name.begin(), name.end(), '-', '_');
  gflags::CommandLineFlagInfo flag;
  return gflags::GetCommandLineFlagInfo(name.c_str(), &flag) && flag.type != "bool";
}

// Takes -c SQL and -f FILE out of argv, in order, leaving the rest (and everything after "--") for gflags.
std::vector<std::pair<char, std::string>> TakeScriptArguments(int* argc, char** argv) {
  std::vector<std::pair<char, std::string>> commands;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--") {
      while (i < *argc) argv[kept++] = argv[i++];
      break;
    }
    if (argument == "-c" || argument == "-f") {
      if (i + 1 >= *argc) tessera::ExitWithUsageError(Program(), absl::StrCat("option ", argument, " needs a value"));
      commands.emplace_back(argument[1], argv[++i]);
      continue;
    }
    argv[kept++] = argv[i];
    if (TakesNextArgument(argument) && i + 1 < *argc) argv[kept++] = argv[++i];
  }
  *argc = kept;
  return commands;
}

// The arguments from the parsed flags and the positional arguments left in argv; exits with the usage on an error.
Arguments ArgumentsFromFlags(int argc, char** argv, std::vector<std::pair<char, std::string>> commands) {
  Arguments arguments;
  arguments.commands = std::move(commands);
  if (argc > 2) tessera::ExitWithUsageError(Program(), absl::StrCat("unexpected argument ", argv[2]));
  if (argc == 2) arguments.database.data_directory = argv[1];
  absl::Status database_flags = tessera::ApplyDatabaseFlags(&arguments.database);
  if (!database_flags.ok()) tessera::ExitWithUsageError(Program(), std::string(database_flags.message()));
  if (FLAGS_csv + FLAGS_tsv + FLAGS_json > 1) {
    tessera::ExitWithUsageError(Program(), "give one of --csv, --tsv and --json");
  }
  if (FLAGS_csv) arguments.shell.format = tessera::OutputFormat::kCsv;
  if (FLAGS_tsv) arguments.shell.format = tessera::OutputFormat::kTsv;
  if (FLAGS_json) arguments.shell.format = tessera::OutputFormat::kJson;
  arguments.shell.timing = FLAGS_timing;
  arguments.shell.progress = !FLAGS_no_progress;
  arguments.connect = FLAGS_connect;
  arguments.client.token = FLAGS_token;
  arguments.client.tls_root_certs_path = FLAGS_tls_ca;
  arguments.client.use_tls = !FLAGS_tls_ca.empty();
  arguments.client.tls_server_name = FLAGS_tls_server_name;
  if (!arguments.connect.empty() && !arguments.database.data_directory.empty()) {
    tessera::ExitWithUsageError(Program(), "give a data directory or --connect, not both");
  }
  if (arguments.connect.empty() && (!arguments.client.token.empty() || arguments.client.use_tls)) {
    tessera::ExitWithUsageError(Program(), "--token and --tls-ca need --connect");
  }
  return arguments;
}

// The history file: $TESSERA_HISTORY, else ~/.tessera_history; none without a home directory.
std::string HistoryPath() {
  if (const char* path = std::getenv("TESSERA_HISTORY")) return path;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return absl::StrCat(home, "/.tessera_history");
  }
  return "";
}

// Runs the -c/-f arguments in order; false on the first error.
bool RunCommands(tessera::Shell& shell, const std::vector<std::pair<char, std::string>>& commands) {
  for (const auto& [kind, text] : commands) {
    if (shell.quit_requested()) break;
    if (kind == 'c') {
      if (!shell.RunCommand(text)) return false;
      continue;
    }
    if (text == "-") {
      if (!shell.RunScript(std::cin, "<stdin>")) return false;
      continue;
    }
    std::ifstream file(text);
    if (!file) {
      std::cerr << "tessera: cannot read " << text << ": " << std::strerror(errno) << std::endl;
      return false;
    }
    if (!shell.RunScript(file, text)) return false;
  }
  return true;
}

// The shell on `connection`: interactive, or the -c/-f arguments, or standard input as a script. The exit status.
int RunShell(tessera::Connection* connection, Arguments& arguments, const std::string& description) {
  sigset_t interrupt;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &interrupt, nullptr);
  const bool interactive = arguments.commands.empty() && isatty(STDIN_FILENO);
  // Interactive: Ctrl-C cancels the statement and at the prompt clears the line. Scripts: Ctrl-C cancels the
  // running statement (the script then fails) and otherwise ends the process.
  tessera::InterruptSignal::Install(/*exit_when_idle=*/!interactive);
  arguments.shell.target_description = description;
  if (interactive) arguments.shell.history_path = HistoryPath();
  tessera::Shell shell(connection, arguments.shell);
  if (interactive) return shell.RunInteractive();
  if (arguments.commands.empty()) return shell.RunScript(std::cin, "<stdin>") ? 0 : 1;
  return RunCommands(shell, arguments.commands) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = false;
  FLAGS_minloglevel = 1;  // warnings and errors only
  std::vector<std::pair<char, std::string>> commands = TakeScriptArguments(&argc, argv);
  tessera::ParseProgramFlags(&argc, &argv, Program());
  Arguments arguments = ArgumentsFromFlags(argc, argv, std::move(commands));

  // Ctrl-C must reach this thread (to end a read at the prompt) rather than one of the engine's or the client
  // library's threads: those are started with SIGINT blocked (they inherit this mask), and the shell unblocks it
  // for itself once the connection is open.
  sigset_t interrupt;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, SIGINT);
  pthread_sigmask(SIG_BLOCK, &interrupt, nullptr);

  if (!arguments.connect.empty()) {
    if (arguments.client.token.empty()) {
      if (const char* token = std::getenv("TESSERA_TOKEN")) arguments.client.token = token;
    }
    absl::StatusOr<std::unique_ptr<tessera::Connection>> connection =
        tessera::ConnectRemote(arguments.connect, arguments.client);
    if (!connection.ok()) {
      std::cerr << "tessera: cannot connect to " << arguments.connect << ": " << connection.status().message()
                << std::endl;
      return 1;
    }
    return RunShell(connection->get(), arguments, absl::StrCat("the server at ", arguments.connect));
  }

  // Without a data directory: a temporary one, deleted at exit.
  std::string temporary_directory;
  if (arguments.database.data_directory.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "tessera-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::cerr << "tessera: cannot create a temporary data directory: " << std::strerror(errno) << std::endl;
      return 1;
    }
    temporary_directory = arguments.database.data_directory = pattern;
  }
  const std::string description = temporary_directory.empty() ? arguments.database.data_directory
                                                              : absl::StrCat("a temporary data directory (",
                                                                             temporary_directory, ", deleted at exit)");
  int status = 0;
  {
    absl::StatusOr<std::unique_ptr<tessera::Database>> database = tessera::Database::Open(arguments.database);
    if (!database.ok()) {
      std::cerr << "tessera: cannot open " << arguments.database.data_directory << ": " << database.status().message()
                << std::endl;
      return 1;
    }
    tessera::InProcessConnection connection(database->get());
    status = RunShell(&connection, arguments, description);
  }
  if (!temporary_directory.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(temporary_directory, ignored);
  }
  return status;
}
