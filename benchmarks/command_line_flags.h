// Command-line parsing shared by the benchmark programs: gflags, with a --help that lists only the program's own
// flags.
//
// gflags' own --help lists every flag linked into the binary (gflags' and glog's too, about forty) and exits with
// status 1; a benchmark's --help should show its handful of flags and exit 0. Every other gflags help flag
// (--helpfull, --helpxml, --helpmatch, --version) keeps its gflags behaviour.
#pragma once

#include <gflags/gflags.h>

#include <cstdlib>

DECLARE_bool(help);

namespace tessera::bench {

// Sets the usage message, parses and removes the flags from argc/argv (what is left are the positional arguments,
// argv[0] first) and handles the help flags. `main_file` is the file that defines the program's flags; pass
// __FILE__ from it. An unknown flag or a bad value prints gflags' error and exits with status 1.
inline void ParseCommandLine(int* argc, char*** argv, const char* usage, const char* main_file) {
  gflags::SetUsageMessage(usage);
  gflags::ParseCommandLineNonHelpFlags(argc, argv, /*remove_flags=*/true);
  if (FLAGS_help) {
    gflags::ShowUsageWithFlagsRestrict((*argv)[0], main_file);
    std::exit(0);
  }
  gflags::HandleCommandLineHelpFlags();
}

}  // namespace tessera::bench
