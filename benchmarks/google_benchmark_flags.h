// Command-line parsing for the Google Benchmark programs: Google Benchmark's own flags (--benchmark_filter,
// --benchmark_repetitions, --benchmark_format, ...) and the program's gflags flags on one command line.
#pragma once

#include <benchmark/benchmark.h>

#include <cstring>

#include "benchmarks/command_line_flags.h"

namespace tessera::bench {

// Google Benchmark takes its --benchmark_* flags out of argv first, then gflags parses the rest
// (ParseCommandLine). --help prints the program's flags, then Google Benchmark's, and exits 0.
inline void ParseBenchmarkCommandLine(int* argc, char*** argv, const char* usage, const char* main_file) {
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp((*argv)[i], "--help") == 0 || std::strcmp((*argv)[i], "-help") == 0 ||
        std::strcmp((*argv)[i], "-h") == 0) {
      std::fputs(ProgramHelp(BenchmarkProgram((*argv)[0], usage, main_file)).c_str(), stdout);
      std::fputs("\nGoogle Benchmark's flags:\n", stdout);
      std::fflush(stdout);
      int help_argc = 2;
      char help[] = "--help";
      char* help_argv[] = {(*argv)[0], help, nullptr};
      benchmark::Initialize(&help_argc, help_argv);  // prints its usage and exits 0
      std::exit(0);
    }
  }
  benchmark::Initialize(argc, *argv);
  ParseCommandLine(argc, argv, usage, main_file);
}

}  // namespace tessera::bench
