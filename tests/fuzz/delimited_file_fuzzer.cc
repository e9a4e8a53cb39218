// Fuzz target for the delimited-file reader (storage/delimited_file.h), COPY FROM's parser. The first four bytes
// pick the format (delimiter, quote, header, NULL string), the chunk sizes and the target columns; the rest is the
// file, loaded into a table with a column of every type. Beyond "never crash, hang or read out of bounds":
//  - a failure is InvalidArgument or FailedPrecondition with a message starting "COPY t", never anything else;
//  - cutting the file into many small chunks loads the same rows as one chunk (or fails as one chunk does);
//  - every block built is valid (BlockView::Validate) and the blocks' row counts add up to the rows loaded.
//
// Build and run: tests/fuzz/README.md.

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "storage/buffer_pool.h"
#include "storage/delimited_file.h"
#include "storage/storage_manager.h"
#include "storage/topology.h"

namespace tessera {
namespace {

void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "delimited_file_fuzzer: %s\n%.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// One data directory for the whole run: the storage the reader writes its blocks through.
struct Environment {
  Environment() {
    const std::filesystem::path base =
        std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    directory = (base / ("tessera_delimited_fuzzer_" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(directory);
    topology = MakeFakeTopology(1, 1);
    pool = std::make_unique<BufferPool>(512 << 20, topology.get());
    catalog = *Catalog::Open(directory, /*sync=*/false);
    storage = *StorageManager::Open(directory, *catalog, pool.get(), topology.get(), /*sync_writes=*/false);
    input_path = directory + "/input.txt";
    table.name = "t";
    table.block_size_bytes = kMinBlockSizeBytes;
    table.columns = {{"b", Type::Boolean(), false, {}},      {"i", Type::Integer(), true, Value::Integer(7)},
                     {"l", Type::BigInt(), false, {}},       {"d", Type::Double(), false, {}},
                     {"m", Type::Decimal(15, 2), false, {}}, {"w", Type::Decimal(30, 4), false, {}},
                     {"c", Type::Char(3), false, {}},        {"v", Type::Varchar(8), false, {}},
                     {"s", Type::Varchar(), false, {}},      {"t", Type::Date(), false, {}},
                     {"ts", Type::Timestamp(), false, {}},   {"iv", Type::IntervalType(), false, {}}};
  }
  ~Environment() {
    storage.reset();
    catalog.reset();
    std::filesystem::remove_all(directory);
  }

  std::string directory;
  std::string input_path;
  std::unique_ptr<Topology> topology;
  std::unique_ptr<BufferPool> pool;
  std::unique_ptr<Catalog> catalog;
  std::unique_ptr<StorageManager> storage;
  TableDescriptor table;
};

Environment& Env() {
  static Environment* environment = new Environment();
  return *environment;
}

struct Outcome {
  absl::Status status;
  int64_t rows = 0;
};

Outcome Load(const std::vector<int>& targets, const DelimitedFormat& format, const ChunkSizing& sizing) {
  Environment& env = Env();
  Outcome outcome;
  auto chunks = DelimitedFileChunks::Open(env.input_path, env.table, targets, format, sizing);
  if (!chunks.ok()) {
    outcome.status = chunks.status();
    return outcome;
  }
  auto writer = env.storage->CreateSegmentWriter(env.catalog->AllocateSegmentId());
  if (!writer.ok()) Fail("cannot create a segment writer", writer.status().ToString());
  LoadBlockWriter out(env.table.columns, *env.storage, **writer);
  std::atomic<bool> abandon{false};
  for (size_t c = 0; c < (*chunks)->chunk_count() && outcome.status.ok(); ++c) {
    outcome.status = (*chunks)->ParseChunk(c, out, abandon);
  }
  if (!outcome.status.ok()) return outcome;
  int64_t block_rows = 0;
  for (const PendingBlock& block : out.loaded().blocks) {
    absl::Status valid = BlockView::Validate(block.data(), block.view().used_bytes(), env.table.columns.size());
    if (!valid.ok()) Fail("an invalid block was built", valid.ToString());
    block_rows += block.view().row_count();
  }
  outcome.rows = out.loaded().row_count;
  if (block_rows != outcome.rows) Fail("blocks and row count disagree", std::to_string(block_rows));
  return outcome;  // the writer, destroyed unfinished, removes its file; the blocks go back to the pool
}

void CheckFailure(const absl::Status& status) {
  if (status.ok()) return;
  if (status.code() != absl::StatusCode::kInvalidArgument && status.code() != absl::StatusCode::kFailedPrecondition) {
    Fail("unexpected error code", status.ToString());
  }
  if (!std::string(status.message()).starts_with("COPY t")) Fail("error does not name the COPY", status.ToString());
}

}  // namespace
}  // namespace tessera

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  if (size < 4) return 0;
  static const char kDelimiters[] = {',', '|', '\t', ';'};
  static const char kQuotes[] = {'"', '\'', '\0', '"'};
  static const char* const kNullStrings[] = {"", "NULL", "\\N", "-"};
  DelimitedFormat format;
  format.delimiter = kDelimiters[data[0] & 3];
  format.quote = kQuotes[(data[0] >> 2) & 3];
  format.header = (data[0] >> 4) & 1;
  format.null_string = kNullStrings[(data[0] >> 5) & 3];
  // Target columns: all in order, or a rotation of a prefix of them (table columns not listed get defaults).
  std::vector<int> targets;
  const int columns = static_cast<int>(Env().table.columns.size());
  if (data[1] % 4 != 0) {
    const int count = 1 + data[1] % columns;
    for (int k = 0; k < count; ++k) targets.push_back((k + data[2]) % columns);
  }
  const std::string_view file(reinterpret_cast<const char*>(data) + 4, size - 4);
  {
    std::ofstream out(Env().input_path, std::ios::binary | std::ios::trunc);
    out.write(file.data(), static_cast<std::streamsize>(file.size()));
  }
  ChunkSizing one_chunk;
  ChunkSizing small_chunks;
  // A few chunks of a few bytes each: every chunk flushes a block of its own, and blocks are what costs.
  small_chunks.min_bytes = 1 + data[3] % 64;
  small_chunks.target_chunks = 2 + data[3] % 7;
  Outcome whole = Load(targets, format, one_chunk);
  CheckFailure(whole.status);
  Outcome chunked = Load(targets, format, small_chunks);
  CheckFailure(chunked.status);
  // With a header the line skipped is the first of the file, whichever chunking.
  if (whole.status.ok() != chunked.status.ok() || whole.rows != chunked.rows) {
    Fail("chunking changes the result", "one chunk: " + whole.status.ToString() + ", " + std::to_string(whole.rows) +
                                            " rows; small chunks: " + chunked.status.ToString() + ", " +
                                            std::to_string(chunked.rows) + " rows");
  }
  return 0;
}
