// Command-line parsing shared by the benchmark programs: the house's gflags parsing (common/command_line_flags.h)
// with the program's name taken from argv[0] and its flags those of one file.
//
// --help lists only the program's own flags and exits 0; an unknown flag or a bad value prints gflags' error and
// the usage and exits with status 2. Every other gflags help flag (--helpfull, --helpxml, --helpmatch, --version)
// keeps its gflags behaviour.
#pragma once

#include <gflags/gflags.h>

#include <string>

#include "common/command_line_flags.h"

namespace tessera::bench {

// The program as ParseProgramFlags describes it: `usage` and the flags defined in `main_file` (pass __FILE__).
inline ProgramDescription BenchmarkProgram(const char* argv0, const char* usage, const char* main_file) {
  std::string name = argv0;
  name = name.substr(name.rfind('/') + 1);
  return ProgramDescription{name, usage, {main_file}};
}

// Sets the usage message, parses and removes the flags from argc/argv (what is left are the positional arguments,
// argv[0] first) and handles the help flags.
inline void ParseCommandLine(int* argc, char*** argv, const char* usage, const char* main_file) {
  ParseProgramFlags(argc, argv, BenchmarkProgram((*argv)[0], usage, main_file));
}

}  // namespace tessera::bench
