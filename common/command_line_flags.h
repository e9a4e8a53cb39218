// Command-line flags for every Tessera program: gflags, with one usage text and one exit status for usage errors.
//
// A program DEFINEs its flags with gflags (in its main file, or in a flag file shared by several programs, such
// as engine/database_flags.h) and calls ParseProgramFlags first thing in main. Then:
//   * --help prints the program's usage and only its own flags (those defined in `flag_files`; gflags' own --help
//     lists every flag linked in, glog's too) to standard output and exits 0; --helpfull, --helpxml, --helpmatch
//     and --version keep their gflags behaviour;
//   * an unknown flag, a flag without its value or a value of the wrong type prints gflags' error, then the usage
//     and a pointer to --help, to standard error and exits 2;
//   * a program that finds a bad value itself after parsing calls ExitWithUsageError, which does the same.
// It also turns off absl::Mutex's lock-order (deadlock) check, which Debian's Abseil leaves on as in a debug build
// (`--mutex-deadlock-detection` turns it back on; the unit tests, which do not call this, keep it).
// Both `--flag value` and `--flag=value` work, a dash in a flag name stands for an underscore (`--no-sync` is the
// bool flag no_sync), `--` ends the flags, and everything that is not a flag is left in argv in order.
//
// Threads: call from main before any thread starts (gflags is not safe to parse concurrently).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct ProgramDescription {
  // The name in error messages ("tessera-server").
  std::string name;
  // The usage line(s) and a short description, first in --help and after a usage error; it should begin with
  // "usage: NAME".
  std::string usage;
  // The source files whose flags --help lists: each the __FILE__ of a file that DEFINEs flags (a flag's file
  // matches when the two paths are equal or one ends with the other).
  std::vector<std::string> flag_files;
};

// Parses and removes the flags from argc/argv (argv[0] and the positional arguments are left, in order), and
// handles --help and usage errors as above. Returns only when the flags parsed.
void ParseProgramFlags(int* argc, char*** argv, const ProgramDescription& program);

// The usage, then each of the program's flags (name, type, default, help) in the order of their names.
std::string ProgramHelp(const ProgramDescription& program);

// Prints "NAME: message", the usage and a pointer to --help to standard error and exits with status 2.
[[noreturn]] void ExitWithUsageError(const ProgramDescription& program, std::string_view message);

}  // namespace tessera
