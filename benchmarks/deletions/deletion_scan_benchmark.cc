// Scans of base blocks with deleted rows: one table of --rows rows (two BIGINT columns in plain 2 MiB blocks, as
// a load builds them) read by a BlockScanner (relational_operators/block_scanner.h) without deletions and with a
// fraction of its rows deleted (DeletedRows of catalog/row_deletions.h on every block), in the same run:
//   scan/filter/<p>   a < 500 (half the rows), then sum(b) over the passing rows: a filtered scan
//   scan/all/<p>      sum(b) over every live row: a scan without a filter
//   mask/<kernel>/<p> the live-row list of every vector alone: `words` is DeletedRows::LiveRows (what the scanner
//                     runs), `rowwise` the row-at-a-time loop it replaced, kept here as the baseline
// where <p> is the percentage of deleted rows (0: no deletion bitmap at all). Every variant of a fraction must see
// the live rows and sums computed row at a time (exit status 1 and "DIFFERENT" otherwise; the last line says
// "same").
//
// Usage: deletion_scan_benchmark [--rows=8388608] [--benchmark_filter=...] (--help lists all flags)

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/google_benchmark_flags.h"
#include "catalog/row_deletions.h"
#include "expressions/bound_expression.h"
#include "relational_operators/block_scanner.h"
#include "storage/block_builder.h"
#include "storage/block_layout.h"

DEFINE_int64(rows, 8 << 20, "rows of the table");

namespace tessera {
namespace {

constexpr uint32_t kBlockBytes = 2 << 20;

std::vector<std::vector<uint8_t>>& Blocks() {
  static auto* blocks = new std::vector<std::vector<uint8_t>>;
  return *blocks;
}

// Deletion bitmaps per percentage, one per block (random rows, a fixed seed).
std::map<int, std::vector<std::unique_ptr<DeletedRows>>>& Deletions() {
  static auto* deletions = new std::map<int, std::vector<std::unique_ptr<DeletedRows>>>;
  return *deletions;
}

// The answers of one percentage, computed row at a time from the blocks and bitmaps.
struct Check {
  int64_t live = 0;
  int64_t sum_all = 0;
  int64_t sum_filtered = 0;
};
std::map<int, Check>& Checks() {
  static auto* checks = new std::map<int, Check>;
  return *checks;
}
bool g_different = false;

void Agree(benchmark::State& state, int64_t expected, int64_t got) {
  if (expected != got) {
    g_different = true;
    state.SkipWithError("differs from the answer computed row at a time");
  }
}

void BuildTable() {
  const std::vector<ColumnSchema> schema = {{"a", Type::BigInt(), true, {}}, {"b", Type::BigInt(), true, {}}};
  BlockBuilder builder(schema, kBlockBytes);
  auto seal = [&builder] {
    Blocks().emplace_back(builder.EncodedSize());
    builder.Finish(Blocks().back().data());
  };
  uint64_t state = 88172645463325252ull;
  for (int64_t r = 0; r < FLAGS_rows; ++r) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    const int64_t a = static_cast<int64_t>(state % 1000);
    for (int attempt = 0; attempt < 2; ++attempt) {
      builder.Append<int64_t>(0, a);
      builder.Append<int64_t>(1, r);
      if (builder.CommitRow()) break;
      seal();
    }
  }
  seal();
  for (int percent : {0, 1, 10}) {
    auto& bitmaps = Deletions()[percent];
    Check& check = Checks()[percent];
    uint64_t seed = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(percent + 1);
    for (const auto& bytes : Blocks()) {
      const BlockView block(bytes.data());
      auto bitmap = std::make_unique<DeletedRows>(block.row_count());
      for (uint32_t r = 0; r < block.row_count(); ++r) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        if (seed % 100 < static_cast<uint64_t>(percent)) {
          bitmap->Delete(r);
          continue;
        }
        const int64_t b = block.Values<int64_t>(1)[r];
        ++check.live;
        check.sum_all += b;
        if (block.Values<int64_t>(0)[r] < 500) check.sum_filtered += b;
      }
      if (percent > 0) bitmaps.push_back(std::move(bitmap));
    }
  }
}

const DeletedRows* BlockDeletions(int percent, size_t block) {
  const auto& bitmaps = Deletions()[percent];
  return bitmaps.empty() ? nullptr : bitmaps[block].get();
}

void BM_Scan(benchmark::State& state, int percent, bool filtered) {
  ScanSpec spec;
  spec.block_columns = {0, 1};
  spec.types = {Type::BigInt(), Type::BigInt()};
  if (filtered) {
    spec.filter = MakeComparison(ComparisonOp::kLess, MakeColumn(0, Type::BigInt()), MakeConstant(Value::BigInt(500)));
  }
  spec.Prepare();
  int64_t sum = 0;
  for (auto _ : state) {
    sum = 0;
    for (size_t b = 0; b < Blocks().size(); ++b) {
      const BlockView block(Blocks()[b].data());
      BlockScanner scanner(spec);
      scanner.SetBlockRows(BlockDeletions(percent, b), static_cast<uint32_t>(b));
      while (true) {
        absl::StatusOr<bool> more = scanner.Next(block);
        if (!more.ok()) {
          state.SkipWithError(std::string(more.status().message()).c_str());
          return;
        }
        if (!*more) break;
        const int64_t* values = scanner.batch().columns[1].values<int64_t>();
        const SelectionVector* selection = scanner.selection();
        const uint32_t selected = scanner.selected_count();
        if (selection == nullptr) {
          for (uint32_t i = 0; i < selected; ++i) sum += values[i];
        } else {
          for (uint32_t i = 0; i < selected; ++i) sum += values[selection->rows[i]];
        }
      }
    }
    benchmark::DoNotOptimize(sum);
  }
  const Check& check = Checks()[percent];
  Agree(state, filtered ? check.sum_filtered : check.sum_all, sum);
  state.counters["sum"] = static_cast<double>(sum);
  state.SetItemsProcessed(state.iterations() * FLAGS_rows);
}

// The loop BlockScanner::Next ran before DeletedRows::LiveRows: one bit test per row.
uint32_t LiveRowsRowwise(const DeletedRows& deleted, uint32_t first, uint32_t count, uint32_t* rows) {
  uint32_t live = 0;
  for (uint32_t r = 0; r < count; ++r) {
    rows[live] = r;
    live += !deleted.IsDeleted(first + r);
  }
  return live;
}

void BM_Mask(benchmark::State& state, int percent, bool words) {
  std::vector<uint32_t> rows(kVectorSize);
  int64_t live = 0;
  for (auto _ : state) {
    live = 0;
    for (size_t b = 0; b < Blocks().size(); ++b) {
      const DeletedRows& deleted = *BlockDeletions(percent, b);
      for (uint32_t first = 0; first < deleted.row_count(); first += kVectorSize) {
        const uint32_t count = std::min(kVectorSize, deleted.row_count() - first);
        live +=
            words ? deleted.LiveRows(first, count, rows.data()) : LiveRowsRowwise(deleted, first, count, rows.data());
        benchmark::DoNotOptimize(rows.data());
      }
    }
  }
  Agree(state, Checks()[percent].live, live);
  state.counters["live"] = static_cast<double>(live);
  state.SetItemsProcessed(state.iterations() * FLAGS_rows);
}

int Main(int argc, char** argv) {
  bench::ParseBenchmarkCommandLine(
      &argc, &argv,
      "scans of blocks with deleted rows against the same table without deletions, and the live-row kernel.\n"
      "usage: deletion_scan_benchmark [--rows=N] [--benchmark_* flags]",
      __FILE__);
  if (argc > 1 || FLAGS_rows < kVectorSize) {
    std::fprintf(stderr, "deletion_scan_benchmark: bad arguments (see --help)\n");
    return 2;
  }
  BuildTable();
  for (bool filtered : {true, false}) {
    for (int percent : {0, 1, 10}) {
      const std::string name = std::string("BM_Scan/") + (filtered ? "filter/" : "all/") + std::to_string(percent);
      benchmark::RegisterBenchmark(name.c_str(), BM_Scan, percent, filtered)->Unit(benchmark::kMillisecond);
    }
  }
  for (int percent : {1, 10}) {
    for (bool words : {false, true}) {
      const std::string name = std::string("BM_Mask/") + (words ? "words/" : "rowwise/") + std::to_string(percent);
      benchmark::RegisterBenchmark(name.c_str(), BM_Mask, percent, words)->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("check: live rows and sums against the row-at-a-time answers: %s\n", g_different ? "DIFFERENT" : "same");
  return g_different ? 1 : 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
