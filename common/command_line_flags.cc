#include "common/command_line_flags.h"

#include <gflags/gflags.h>
#include <unistd.h>

#include "absl/synchronization/mutex.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

DECLARE_bool(help);
DEFINE_bool(
    mutex_deadlock_detection, false,
    "Let absl::Mutex check every lock order for cycles (Debian's Abseil is built with the check on: about 40 ns "
    "per nested lock and a process-wide lock; off in the programs, on in the unit tests)");

namespace tessera {
namespace {

// The usage and where the flags are listed: what follows a usage error (the whole flag list would bury the error).
std::string ShortUsage(const ProgramDescription& program) {
  std::string usage = program.usage;
  if (!usage.empty() && usage.back() != '\n') usage += '\n';
  return usage + "Run '" + program.name + " --help' for the flags.\n";
}

// gflags reports a parse error by printing it and calling exit(1); while ParseProgramFlags runs, this exit handler
// turns that into the usage and status 2 (every Tessera program's status for a usage error).
const ProgramDescription* parsing_program = nullptr;

void ExitWithUsageOnParseError() {
  if (parsing_program == nullptr) return;
  const std::string usage = ShortUsage(*parsing_program);
  std::fputs(usage.c_str(), stderr);
  std::fflush(stderr);
  _exit(2);  // not exit(): already inside exit's handlers
}

bool SameFile(std::string_view flag_file, std::string_view program_file) {
  if (flag_file.size() < program_file.size()) std::swap(flag_file, program_file);
  return flag_file.ends_with(program_file) &&
         (flag_file.size() == program_file.size() || flag_file[flag_file.size() - program_file.size() - 1] == '/');
}

// "  --flag-name (type, default D)\n      help\n", the name spelled with dashes as the programs document it.
std::string DescribeFlag(const gflags::CommandLineFlagInfo& flag) {
  std::string name = flag.name;
  std::replace(name.begin(), name.end(), '_', '-');
  std::string default_value = flag.default_value;
  if (flag.type == "double") {
    char shortest[32];
    std::snprintf(shortest, sizeof(shortest), "%g", std::strtod(default_value.c_str(), nullptr));
    default_value = shortest;
  } else if (flag.type == "string") {
    default_value = "\"" + default_value + "\"";
  }
  return "  --" + name + " (" + flag.type + ", default " + default_value + ")\n      " + flag.description + "\n";
}

}  // namespace

std::string ProgramHelp(const ProgramDescription& program) {
  std::string help = program.usage;
  if (!help.empty() && help.back() != '\n') help += '\n';
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);  // sorted by file, then by name
  std::vector<const gflags::CommandLineFlagInfo*> own;
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    for (const std::string& file : program.flag_files) {
      if (SameFile(flag.filename, file)) {
        own.push_back(&flag);
        break;
      }
    }
  }
  std::sort(own.begin(), own.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  if (!own.empty()) help += "\nFlags (--name value or --name=value; a bool flag alone means true):\n";
  for (const gflags::CommandLineFlagInfo* flag : own) help += DescribeFlag(*flag);
  return help;
}

void ParseProgramFlags(int* argc, char*** argv, const ProgramDescription& program) {
  static std::atomic<bool> handler_installed{false};
  if (!handler_installed.exchange(true)) std::atexit(ExitWithUsageOnParseError);
  gflags::SetUsageMessage(program.usage);
  parsing_program = &program;
  gflags::ParseCommandLineNonHelpFlags(argc, argv, /*remove_flags=*/true);
  parsing_program = nullptr;
  absl::SetMutexDeadlockDetectionMode(FLAGS_mutex_deadlock_detection ? absl::OnDeadlockCycle::kAbort
                                                                     : absl::OnDeadlockCycle::kIgnore);
  if (FLAGS_help) {
    const std::string help = ProgramHelp(program);
    std::fputs(help.c_str(), stdout);
    std::fflush(stdout);
    std::exit(0);
  }
  gflags::HandleCommandLineHelpFlags();
}

void ExitWithUsageError(const ProgramDescription& program, std::string_view message) {
  std::string text = program.name + ": " + std::string(message) + "\n" + ShortUsage(program);
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  std::exit(2);
}

}  // namespace tessera
