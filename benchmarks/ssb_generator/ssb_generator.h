#pragma once
// Star Schema Benchmark (SSB) data generator: the five SSB tables (lineorder, customer, supplier, part, date)
// in ssb-dbgen's `.tbl` text format ('|'-separated fields, a trailing '|' on every line), with the value
// distributions of the SSB specification (O'Neil, O'Neil, Chen, Revilak, rev. 3) as ssb-dbgen realises them.
// README.md in this folder lists every spec choice and every place where we deliberately differ from
// ssb-dbgen.
//
// Determinism: every table is cut into fixed chunks (a fixed number of rows, or of orders for lineorder) that
// do not depend on the thread count. A chunk draws from its own random stream seeded from (seed, table,
// chunk), so the bytes of a table are a pure function of (scale factor, seed) whatever the thread count and
// whichever other tables are generated in the same run.
//
// Uses only the C++ standard library. Reports errors by return value; never throws.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::ssb {

enum class SsbTable : int { kLineorder = 0, kCustomer = 1, kSupplier = 2, kPart = 3, kDate = 4 };
inline constexpr int kNumSsbTables = 5;

// "lineorder", "customer", "supplier", "part" or "date"; also the file name stem (`<name>.tbl`).
std::string_view TableName(SsbTable table);
// Parses a name produced by TableName (exact, lower case). Returns false for anything else.
bool ParseTableName(std::string_view name, SsbTable* table);

// Cardinalities of one scale factor. lineorder has no fixed row count: `orders` orders of 1..7 lines each
// (about 4 * orders rows).
struct ScaleCounts {
  int64_t customers = 0;  // max(1, 30,000 * SF)
  int64_t suppliers = 0;  // max(1, 2,000 * SF)
  int64_t parts = 0;      // 200,000 * floor(1 + log2 SF) for SF >= 1; max(1, 200,000 * SF) below 1
  int64_t orders = 0;     // max(1, 1,500,000 * SF)
  int64_t dates = 0;      // always 2,557: 1992-01-01 .. 1998-12-31
};

// Computes the cardinalities for `scale_factor` (products are rounded down, but a product within 1e-9 of an
// integer is taken as that integer, so 0.29 * 30,000 gives 8,700). Returns false and sets *error if the scale
// factor is not a finite number in (0, 100000].
bool ComputeScaleCounts(double scale_factor, ScaleCounts* counts, std::string* error);

// The largest lo_orderkey the scale factor produces (keys are sparse as in dbgen: 8 used, 24 skipped).
int64_t MaxOrderKey(const ScaleCounts& counts);

// Chunking. A "unit" is a row, except for lineorder where it is an order. Chunk c covers units
// [c * UnitsPerChunk, min((c + 1) * UnitsPerChunk, NumUnits)), numbered from 0.
int64_t UnitsPerChunk(SsbTable table);
int64_t NumUnits(SsbTable table, const ScaleCounts& counts);
int64_t NumChunks(SsbTable table, const ScaleCounts& counts);

// A growable byte buffer that the row formatters write into through raw pointers (no per-byte bounds checks:
// callers Reserve() an upper bound for a row, write, then Commit()).
class ChunkBuffer {
 public:
  ChunkBuffer() = default;
  ChunkBuffer(const ChunkBuffer&) = delete;
  ChunkBuffer& operator=(const ChunkBuffer&) = delete;

  // Makes room for at least `bytes` more bytes and returns where they start.
  char* Reserve(size_t bytes) {
    if (size_ + bytes > capacity_) Grow(size_ + bytes);
    return data_.get() + size_;
  }
  // Marks everything up to `end` (a pointer into the region returned by the last Reserve) as written.
  void Commit(const char* end) { size_ = static_cast<size_t>(end - data_.get()); }
  void Clear() { size_ = 0; }

  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  void Grow(size_t min_capacity);

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Appends the `.tbl` text of chunk `chunk` (0 <= chunk < NumChunks) of `table` to *out and returns the number
// of rows appended. A pure function of its arguments; safe to call concurrently on different buffers.
int64_t GenerateChunk(SsbTable table, const ScaleCounts& counts, uint64_t seed, int64_t chunk, ChunkBuffer* out);

struct GeneratorOptions {
  double scale_factor = 1.0;
  uint64_t seed = 42;
  int threads = 0;               // <= 0: std::thread::hardware_concurrency()
  std::string output_dir;        // created if missing; files are <dir>/<table>.tbl, overwritten
  std::vector<SsbTable> tables;  // empty: all five
  bool progress = false;         // progress and a summary on stderr
};

struct TableReport {
  SsbTable table = SsbTable::kLineorder;
  std::string path;
  int64_t rows = 0;
  int64_t bytes = 0;
};

struct GenerationReport {
  std::vector<TableReport> tables;  // in the order of GeneratorOptions::tables (or the default order)
  double seconds = 0;
  int threads = 0;
};

// Generates the requested tables into options.output_dir using options.threads workers. Returns false and
// sets *error (files may then be incomplete) on an invalid option or an I/O failure. `report` may be null.
bool GenerateSsb(const GeneratorOptions& options, GenerationReport* report, std::string* error);

}  // namespace tessera::ssb
