// ssb-dbgen: writes the Star Schema Benchmark tables as ssb-dbgen-style .tbl files.
//
//   ssb-dbgen --sf 1 --output DIR [--seed 42] [--threads N] [--tables lineorder,customer,...] [--quiet]
//
// Flags are gflags (--help lists them; --flag value and --flag=value both work). Exit status: 0 on success, 1 on a
// generation or I/O error, 2 on a usage error (an unknown flag, a missing or bad value).

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "benchmarks/command_line_flags.h"
#include "benchmarks/ssb_generator/ssb_generator.h"

namespace {

using tessera::ssb::GenerationReport;
using tessera::ssb::GeneratorOptions;
using tessera::ssb::SsbTable;

constexpr char kUsage[] =
    "writes the Star Schema Benchmark tables as DIR/<table>.tbl ('|'-separated, trailing '|').\n"
    "usage: ssb-dbgen --sf SCALE --output DIR [--seed N] [--threads N] [--tables T1,T2,...] [--quiet]\n"
    "Exit status: 0 on success, 1 on a generation or I/O error, 2 on an unknown flag or a missing or bad value.";

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ssb-dbgen: %s (see ssb-dbgen --help)\n", message.c_str());
  return 2;
}

// The one-letter forms the hand-written parser accepted (-s 1, -o DIR, -j 4, -T part, -q, -h), rewritten to the
// flag names before gflags sees them (gflags reads -s as a flag named "s").
void RewriteShortForms(int argc, char** argv) {
  static const struct {
    const char* short_form;
    const char* long_form;
  } kShortForms[] = {{"-s", "--sf"},     {"-o", "--output"}, {"-j", "--threads"},
                     {"-T", "--tables"}, {"-q", "--quiet"},  {"-h", "--help"}};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return;
    for (const auto& form : kShortForms) {
      if (std::strcmp(argv[i], form.short_form) == 0) argv[i] = const_cast<char*>(form.long_form);
    }
  }
}

bool ParseDouble(const std::string& text, double* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *value = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size();
}

bool ParseTables(const std::string& list, std::vector<SsbTable>* tables) {
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    SsbTable table;
    if (!tessera::ssb::ParseTableName(std::string_view(list).substr(begin, end - begin), &table)) return false;
    for (SsbTable seen : *tables) {
      if (seen == table) return false;  // each table once
    }
    tables->push_back(table);
    begin = end + 1;
  }
  return !tables->empty();
}

}  // namespace

// A string, not a double flag, so that a bad scale factor gets this program's message.
DEFINE_string(sf, "", "scale factor, e.g. 1, 10 or 0.01 (SF1: 6M lineorder rows, about 0.6 GB); required");
DEFINE_string(output, "", "output directory (created if missing; existing files are overwritten); required");
DEFINE_uint64(seed, 42, "random seed; the output is a function of (SF, seed) only");
DEFINE_int32(threads, 0, "worker threads (0: all cores); does not change the output");
DEFINE_string(tables, "", "comma-separated subset of lineorder,customer,supplier,part,date (empty: all)");
DEFINE_bool(quiet, false, "no progress on stderr");

int main(int argc, char** argv) {
  RewriteShortForms(argc, argv);
  tessera::bench::ParseCommandLine(&argc, &argv, kUsage, __FILE__);
  if (argc > 1) return UsageError(std::string("unexpected argument '") + argv[1] + "'");
  if (FLAGS_sf.empty()) return UsageError("--sf is required");
  if (FLAGS_output.empty()) return UsageError("--output is required");
  if (FLAGS_threads < 0 || FLAGS_threads > 1024) {
    return UsageError("bad thread count '" + std::to_string(FLAGS_threads) + "'");
  }
  GeneratorOptions options;
  if (!ParseDouble(FLAGS_sf, &options.scale_factor)) return UsageError("bad scale factor '" + FLAGS_sf + "'");
  options.output_dir = FLAGS_output;
  options.seed = FLAGS_seed;
  if (FLAGS_threads > 0) options.threads = FLAGS_threads;
  options.progress = !FLAGS_quiet;
  if (!gflags::GetCommandLineFlagInfoOrDie("tables").is_default) {
    options.tables.clear();
    if (!ParseTables(FLAGS_tables, &options.tables)) {
      return UsageError("bad table list '" + FLAGS_tables + "' (tables: lineorder,customer,supplier,part,date)");
    }
  }
  tessera::ssb::ScaleCounts counts;
  std::string error;
  if (!tessera::ssb::ComputeScaleCounts(options.scale_factor, &counts, &error)) return UsageError(error);

  GenerationReport report;
  if (!tessera::ssb::GenerateSsb(options, &report, &error)) {
    std::fprintf(stderr, "ssb-dbgen: error: %s\n", error.c_str());
    return 1;
  }
  if (options.progress) {
    int64_t bytes = 0;
    for (const auto& t : report.tables) bytes += t.bytes;
    std::fprintf(stderr, "ssb-dbgen: SF %g, seed %llu: %.1f MB in %.2f s with %d threads\n", options.scale_factor,
                 static_cast<unsigned long long>(options.seed), static_cast<double>(bytes) / 1e6, report.seconds,
                 report.threads);
  }
  return 0;
}
