// tessera: the SQL shell. See kUsage, and cli/shell.h for how input is read and output written.

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/shell.h"
#include "cli/statement_monitor.h"
#include "client/remote_connection.h"
#include "engine/connection.h"
#include "engine/session.h"
#include "glog/logging.h"

namespace {

constexpr char kUsage[] =
    "usage: tessera [DATA_DIR | --connect HOST:PORT] [options]\n"
    "Opens DATA_DIR (created if missing; without one, a temporary directory deleted at exit) or connects to a\n"
    "tessera-server, and runs the -c and -f arguments in order, or else standard input: interactively on a\n"
    "terminal, as a script otherwise. Scripts stop at the first error and exit with status 1.\n"
    "  -c SQL               run SQL (statements, or one \\meta-command); repeatable\n"
    "  -f FILE              run the statements and meta-commands in FILE ('-' = standard input); repeatable\n"
    "  --csv | --tsv | --json   output format (default: an aligned table)\n"
    "  --timing             print 'Time: <ms> ms' after each statement\n"
    "  --no-progress        no progress bar (it is drawn only when standard error is a terminal)\n"
    "  --connect HOST:PORT  talk to a tessera-server instead of opening a data directory\n"
    "  --token TOKEN        the server's bearer token (default: $TESSERA_TOKEN)\n"
    "  --tls-ca FILE        connect with TLS, trusting the certificate(s) in FILE\n"
    "  --tls-server-name NAME  the name the server certificate is checked against\n"
    "  --memory-limit BYTES buffer-pool budget\n"
    "  --threads N          worker threads (default: one per core)\n"
    "  --policy NAME        scheduling policy: fair (default), hpf, pp, pp-exp, lottery, fcfs, srpt, ifsrpt, static\n"
    "  --admission-threshold F  admit queries while their estimated memory fits under F x the memory limit\n"
    "                       (default 0.9; 0 = no admission control)\n"
    "  --no-sync            do not fsync writes\n";

struct Arguments {
  tessera::DatabaseOptions database;
  std::vector<std::pair<char, std::string>> commands;  // ('c', sql) or ('f', path)
  tessera::ShellSettings shell;
  std::string connect;  // HOST:PORT of a server; empty = in process
  tessera::ClientOptions client;
};

bool ParseArguments(int argc, char** argv, Arguments* arguments, std::string* error) {
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
      arguments->commands.emplace_back(arg[1], value);
    } else if (arg == "--csv") {
      arguments->shell.format = tessera::OutputFormat::kCsv;
    } else if (arg == "--tsv") {
      arguments->shell.format = tessera::OutputFormat::kTsv;
    } else if (arg == "--json") {
      arguments->shell.format = tessera::OutputFormat::kJson;
    } else if (arg == "--timing") {
      arguments->shell.timing = true;
    } else if (arg == "--no-progress") {
      arguments->shell.progress = false;
    } else if (arg == "--connect") {
      if (!next(&arguments->connect)) return false;
    } else if (arg == "--token") {
      if (!next(&arguments->client.token)) return false;
    } else if (arg == "--tls-ca") {
      if (!next(&arguments->client.tls_root_certs_path)) return false;
      arguments->client.use_tls = true;
    } else if (arg == "--tls-server-name") {
      if (!next(&arguments->client.tls_server_name)) return false;
    } else if (arg == "--no-sync") {
      arguments->database.sync_writes = false;
    } else if (arg == "--memory-limit") {
      if (!next(&value)) return false;
      uint64_t bytes;
      if (!absl::SimpleAtoi(value, &bytes)) {
        *error = absl::StrCat("invalid --memory-limit '", value, "' (bytes)");
        return false;
      }
      arguments->database.memory_budget_bytes = bytes;
    } else if (arg == "--policy") {
      if (!next(&value)) return false;
      absl::StatusOr<tessera::PolicyOptions> policy = tessera::ParsePolicy(value);
      if (!policy.ok()) {
        *error = std::string(policy.status().message());
        return false;
      }
      arguments->database.scheduler.policy = *policy;
    } else if (arg == "--admission-threshold") {
      if (!next(&value)) return false;
      if (!absl::SimpleAtod(value, &arguments->database.admission_threshold) ||
          !(arguments->database.admission_threshold >= 0 && arguments->database.admission_threshold <= 1)) {
        *error = absl::StrCat("invalid --admission-threshold '", value, "' (a fraction in [0, 1])");
        return false;
      }
    } else if (arg == "--threads") {
      if (!next(&value)) return false;
      if (!absl::SimpleAtoi(value, &arguments->database.worker_threads) || arguments->database.worker_threads < 1) {
        *error = absl::StrCat("invalid --threads '", value, "'");
        return false;
      }
    } else if (arg == "-h" || arg == "--help") {
      *error = "";
      return false;
    } else if (!arg.empty() && arg[0] == '-') {
      *error = absl::StrCat("unknown option ", arg);
      return false;
    } else if (arguments->database.data_directory.empty()) {
      arguments->database.data_directory = arg;
    } else {
      *error = absl::StrCat("unexpected argument ", arg);
      return false;
    }
  }
  if (!arguments->connect.empty() && !arguments->database.data_directory.empty()) {
    *error = "give a data directory or --connect, not both";
    return false;
  }
  if (arguments->connect.empty() && (!arguments->client.token.empty() || arguments->client.use_tls)) {
    *error = "--token and --tls-ca need --connect";
    return false;
  }
  return true;
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
  Arguments arguments;
  std::string error;
  if (!ParseArguments(argc, argv, &arguments, &error)) {
    if (!error.empty()) std::cerr << "tessera: " << error << "\n";
    std::cerr << kUsage;
    return error.empty() ? 0 : 2;
  }

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
  const std::string description =
      temporary_directory.empty() ? arguments.database.data_directory
                                  : absl::StrCat("a temporary data directory (", temporary_directory,
                                                 ", deleted at exit)");
  int status = 0;
  {
    absl::StatusOr<std::unique_ptr<tessera::Database>> database = tessera::Database::Open(arguments.database);
    if (!database.ok()) {
      std::cerr << "tessera: cannot open " << arguments.database.data_directory << ": "
                << database.status().message() << std::endl;
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
