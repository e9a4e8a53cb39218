// ssb-dbgen: writes the Star Schema Benchmark tables as ssb-dbgen-style .tbl files.
//
//   ssb-dbgen --sf 1 --output DIR [--seed 42] [--threads N] [--tables lineorder,customer,...] [--quiet]
//
// Exit status: 0 on success, 1 on a generation or I/O error, 2 on a usage error.

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "benchmarks/ssb_generator/ssb_generator.h"

namespace {

using tessera::ssb::GenerationReport;
using tessera::ssb::GeneratorOptions;
using tessera::ssb::SsbTable;

constexpr char kUsage[] =
    "usage: ssb-dbgen --sf SCALE --output DIR [--seed N] [--threads N] [--tables T1,T2,...] [--quiet]\n"
    "\n"
    "Generates the Star Schema Benchmark tables as DIR/<table>.tbl ('|'-separated, trailing '|').\n"
    "  --sf SCALE      scale factor, e.g. 1, 10 or 0.01 (SF1: 6M lineorder rows, about 0.6 GB)\n"
    "  --output DIR    output directory (created if missing; existing files are overwritten)\n"
    "  --seed N        random seed (default 42); output is a function of (SF, seed) only\n"
    "  --threads N     worker threads (default: all cores); does not change the output\n"
    "  --tables LIST   comma-separated subset of lineorder,customer,supplier,part,date (default: all)\n"
    "  --quiet         no progress on stderr\n";

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ssb-dbgen: %s\n\n%s", message.c_str(), kUsage);
  return 2;
}

bool ParseDouble(const std::string& text, double* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *value = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size();
}

bool ParseUint(const std::string& text, unsigned long long* value) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  char* end = nullptr;
  errno = 0;
  *value = std::strtoull(text.c_str(), &end, 10);
  return errno == 0 && end == text.c_str() + text.size();
}

bool ParseTables(const std::string& list, std::vector<SsbTable>* tables) {
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    SsbTable table;
    if (!tessera::ssb::ParseTableName(std::string_view(list).substr(begin, end - begin), &table))
      return false;
    for (SsbTable seen : *tables) {
      if (seen == table) return false;  // each table once
    }
    tables->push_back(table);
    begin = end + 1;
  }
  return !tables->empty();
}

}  // namespace

int main(int argc, char** argv) {
  GeneratorOptions options;
  options.progress = true;
  bool have_sf = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const size_t eq = arg.find('=');
    const bool inline_value = arg.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--quiet" || arg == "-q") {
      options.progress = false;
      continue;
    }
    const bool takes_value = arg == "--sf" || arg == "-s" || arg == "--output" || arg == "-o" ||
                             arg == "--seed" || arg == "--threads" || arg == "-j" || arg == "--tables" ||
                             arg == "-T";
    if (!takes_value) return UsageError("unknown argument '" + arg + "'");
    if (!inline_value) {
      if (i + 1 >= argc) return UsageError(arg + " needs a value");
      value = argv[++i];
    }
    if (arg == "--sf" || arg == "-s") {
      if (!ParseDouble(value, &options.scale_factor)) return UsageError("bad scale factor '" + value + "'");
      have_sf = true;
    } else if (arg == "--output" || arg == "-o") {
      options.output_dir = value;
    } else if (arg == "--seed") {
      unsigned long long seed;
      if (!ParseUint(value, &seed)) return UsageError("bad seed '" + value + "'");
      options.seed = seed;
    } else if (arg == "--threads" || arg == "-j") {
      unsigned long long threads;
      if (!ParseUint(value, &threads) || threads > 1024)
        return UsageError("bad thread count '" + value + "'");
      options.threads = static_cast<int>(threads);
    } else {
      options.tables.clear();
      if (!ParseTables(value, &options.tables)) {
        return UsageError("bad table list '" + value + "' (tables: lineorder,customer,supplier,part,date)");
      }
    }
  }
  if (!have_sf) return UsageError("--sf is required");
  if (options.output_dir.empty()) return UsageError("--output is required");
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
    std::fprintf(stderr, "ssb-dbgen: SF %g, seed %llu: %.1f MB in %.2f s with %d threads\n",
                 options.scale_factor, static_cast<unsigned long long>(options.seed),
                 static_cast<double>(bytes) / 1e6, report.seconds, report.threads);
  }
  return 0;
}
