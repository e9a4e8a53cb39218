// Column encodings of base blocks (storage/column_encoding.h): decode and filter throughput of each encoding next
// to memcpy of the same (decoded) bytes and to the plain layout that scans borrow without copying, in the same run.
// A Google Benchmark program; see README.md here and docs/decisions/0009-column-encodings.md for the figures.
//
// Each case is one column of --rows values in 2 MiB blocks built by BlockBuilder as a load builds them
// (PlanCompressed / FinishCompressed) and, for the baselines, plain (Finish). A benchmark iteration reads the whole
// column a vector (2048 rows) at a time, as a scan does:
//   memcpy          copies each vector's plain values into a vector buffer (8 or 16 bytes a row)
//   decode          decodes each vector into the same buffer (BlockView::DecodeFixed / DecodeStrings)
//   decode/scalar   integers, where the build has the AVX-512 kernels: the portable kernels alone
//   decode/selected integers: only the rows of a fixed selection of about one row in 32 of each vector
//                   (BlockView::DecodeFixedRows, as a scan decodes a column after filters kept under 1/16)
//   filter/plain    value < constant (strings: = constant) over the plain block into a selection vector
//   filter/decoded  decode, then the same filter over the buffer
//   filter/codes    the constant translated into code space once per block, codes compared: dictionaries a
//                   code per row, frame of reference SelectCodesInRange over the packed codes (no decode)
//   keys/plain      a dense key filter (a join's key filter or dense LIP filter: a bit vector over the column's
//                   value range, about a quarter of the keys in it; bloom_filter.h) probed with the plain values
//                   (LipFilter::KeepMembers, as a scan of plain blocks does)
//   keys/decoded    decode, then the same probe (a runtime filter's key before probing on codes)
//   keys/codes      the filter tested on the packed codes (SelectCodesInBitmap: BlockScanner::ProbeCodes)
//   keys/selected/decoded, keys/selected/codes: the same two after an earlier filter kept about half of the rows
//                   (an input selection, as for a scan's second runtime filter)
//   both/sequential value < constant and the key filter, on codes, one after the other (SelectCodesInRange, then
//                   SelectCodesInBitmap on its rows: a scan's integer term and key filter before they were fused)
//   both/fused      the same conjunction in one pass (SelectCodesAllOf: BlockScanner::FuseCodeFilters)
// Every filter variant must select the same rows, and every key filter variant with the same input (exit status 1
// and an error otherwise).
//
// Usage: column_encoding_benchmark [--rows=8388608] [--benchmark_filter=...] (--help lists all flags)

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/google_benchmark_flags.h"
#include "expressions/batch.h"
#include "relational_operators/bloom_filter.h"
#include "storage/block_builder.h"
#include "storage/block_layout.h"
#include "storage/buffer_pool.h"
#include "storage/column_encoding.h"

DEFINE_int64(rows, 8 << 20, "rows of each column");

namespace tessera {
namespace {

constexpr uint32_t kVector = 2048;
constexpr uint32_t kBlockBytes = 2 << 20;

// One column stored twice, compressed and plain, and the filter constant.
struct Column {
  std::string name;
  Type type;
  std::vector<std::vector<uint8_t>> compressed;  // blocks
  std::vector<std::vector<uint8_t>> plain;
  int64_t constant = 0;         // integers: value < constant
  std::string string_constant;  // strings: value = constant
  int64_t bytes_per_row = 8;    // decoded
  int64_t selected = -1;        // rows the first filter variant selected
  // Integers of up to kMaxKeyFilterBits bits: a dense key filter over [base, base + 2^bits).
  std::unique_ptr<LipFilter> key_filter;
  int64_t key_selected = -1;           // rows the first key filter variant selected
  int64_t selected_key_selected = -1;  // the same after the input selection
  int64_t both_selected = -1;          // rows the first both/ variant selected
};

constexpr int kMaxKeyFilterBits = 24;

BufferPool& Pool() {
  static auto* pool = new BufferPool(int64_t{1} << 30, nullptr);
  return *pool;
}

bool g_different = false;

void Seal(BlockBuilder& builder, bool compress, std::vector<std::vector<uint8_t>>* blocks) {
  blocks->emplace_back(compress ? builder.PlanCompressed() : builder.EncodedSize());
  if (compress) {
    builder.FinishCompressed(blocks->back().data());
  } else {
    builder.Finish(blocks->back().data());
  }
}

// An integer column whose values span `bits` bits (each block spans the same range): frame of reference.
std::unique_ptr<Column> IntegerColumn(int bits) {
  auto column = std::make_unique<Column>();
  column->name = "for" + std::to_string(bits);
  column->type = Type::BigInt();
  const std::vector<ColumnSchema> schema = {{"v", column->type, false, {}}};
  BlockBuilder compressed(schema, kBlockBytes);
  BlockBuilder plain(schema, kBlockBytes);
  uint64_t state = 88172645463325252ull;
  const uint64_t mask = bits == 0 ? 0 : (uint64_t{1} << bits) - 1;
  const int64_t base = 1000003;
  for (int64_t r = 0; r < FLAGS_rows; ++r) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    const int64_t value = base + static_cast<int64_t>(state & mask);
    for (auto* builder : {&compressed, &plain}) {
      builder->Append<int64_t>(0, value);
      if (!builder->CommitRow()) {
        Seal(*builder, builder == &compressed, builder == &compressed ? &column->compressed : &column->plain);
        builder->Append<int64_t>(0, value);
        builder->CommitRow();
      }
    }
  }
  Seal(compressed, true, &column->compressed);
  Seal(plain, false, &column->plain);
  column->constant = base + static_cast<int64_t>(mask / 2);  // about half the rows pass
  if (bits <= kMaxKeyFilterBits) {
    column->key_filter = std::make_unique<LipFilter>("v");
    if (!column->key_filter->BuildDense(base, mask, &Pool()).ok()) std::abort();
    for (uint64_t key = 0; key <= mask; ++key) {
      if ((key * 0x9e3779b97f4a7c15ull) >> 62 == 0)
        column->key_filter->InsertDenseKey(base + static_cast<int64_t>(key));
    }
  }
  return column;
}

// A string column of `distinct` values of TPC-H l_shipmode's shape: dictionary.
std::unique_ptr<Column> StringColumn(int distinct) {
  auto column = std::make_unique<Column>();
  column->name = "dict" + std::to_string(distinct);
  column->type = Type::Varchar(16);
  column->bytes_per_row = sizeof(std::string_view);
  const std::vector<ColumnSchema> schema = {{"v", column->type, false, {}}};
  BlockBuilder compressed(schema, kBlockBytes);
  BlockBuilder plain(schema, kBlockBytes);
  std::vector<std::string> values;
  for (int i = 0; i < distinct; ++i) values.push_back("MODE#" + std::to_string(i * 7919 % 1000));
  column->string_constant = values[distinct / 2];
  uint64_t state = 88172645463325252ull;
  for (int64_t r = 0; r < FLAGS_rows; ++r) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    const std::string& value = values[state % distinct];
    for (auto* builder : {&compressed, &plain}) {
      builder->AppendString(0, value);
      if (!builder->CommitRow()) {
        Seal(*builder, builder == &compressed, builder == &compressed ? &column->compressed : &column->plain);
        builder->AppendString(0, value);
        builder->CommitRow();
      }
    }
  }
  Seal(compressed, true, &column->compressed);
  Seal(plain, false, &column->plain);
  return column;
}

std::vector<std::unique_ptr<Column>>& Columns() {
  static auto* columns = new std::vector<std::unique_ptr<Column>>;
  return *columns;
}

enum class Variant {
  kMemcpy,
  kDecode,
  kDecodeScalar,
  kDecodeSelected,
  kFilterPlain,
  kFilterDecoded,
  kFilterCodes,
  kKeysPlain,
  kKeysDecoded,
  kKeysCodes,
  kKeysSelectedDecoded,
  kKeysSelectedCodes,
  kBothSequential,
  kBothFused
};

const char* VariantName(Variant variant) {
  switch (variant) {
    case Variant::kMemcpy:
      return "memcpy";
    case Variant::kDecode:
      return "decode";
    case Variant::kDecodeScalar:
      return "decode/scalar";
    case Variant::kDecodeSelected:
      return "decode/selected";
    case Variant::kFilterPlain:
      return "filter/plain";
    case Variant::kFilterDecoded:
      return "filter/decoded";
    case Variant::kFilterCodes:
      return "filter/codes";
    case Variant::kKeysPlain:
      return "keys/plain";
    case Variant::kKeysDecoded:
      return "keys/decoded";
    case Variant::kKeysCodes:
      return "keys/codes";
    case Variant::kKeysSelectedDecoded:
      return "keys/selected/decoded";
    case Variant::kKeysSelectedCodes:
      return "keys/selected/codes";
    case Variant::kBothSequential:
      return "both/sequential";
    case Variant::kBothFused:
      return "both/fused";
  }
  return "";
}

// Branch-free selection of rows whose value passes.
template <typename T, typename Pass>
uint32_t Select(const T* values, uint32_t count, uint32_t* selection, Pass pass) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < count; ++i) {
    selection[n] = i;
    n += pass(values[i]) ? 1 : 0;
  }
  return n;
}

int64_t RunInteger(const Column& column, Variant variant, const SelectionVector& input, int64_t* buffer,
                   uint32_t* selection) {
  int64_t selected = 0;
  const bool compressed = variant == Variant::kDecode || variant == Variant::kDecodeScalar ||
                          variant == Variant::kDecodeSelected || variant == Variant::kFilterDecoded ||
                          variant == Variant::kFilterCodes;
  const auto& blocks = compressed ? column.compressed : column.plain;
  const int64_t constant = column.constant;
  auto less = [constant](int64_t v) { return v < constant; };
  for (const auto& bytes : blocks) {
    const BlockView block(bytes.data());
    // value < constant as codes: [0, constant - base - 1], clipped (no value below the base passes: none).
    int64_t base = 0;
    std::memcpy(&base, block.chunk(0).zone_min, sizeof(base));
    const bool none = constant <= base;
    const uint64_t high = none ? 0 : static_cast<uint64_t>(constant - base - 1);
    for (uint32_t first = 0; first < block.row_count(); first += kVector) {
      const uint32_t count = std::min(kVector, block.row_count() - first);
      switch (variant) {
        case Variant::kMemcpy:
          std::memcpy(buffer, block.Values<int64_t>(0) + first, count * sizeof(int64_t));
          break;
        case Variant::kDecode:
          block.DecodeFixed<int64_t>(0, first, count, buffer);
          break;
        case Variant::kDecodeSelected: {
          const uint32_t input_count = static_cast<uint32_t>(
              std::lower_bound(input.rows.begin(), input.rows.begin() + input.count, count) - input.rows.begin());
          block.DecodeFixedRows<int64_t>(0, first, input.rows.data(), input_count, buffer);
          break;
        }
        case Variant::kDecodeScalar: {
          const ColumnChunk& chunk = block.chunk(0);
          int64_t base;
          std::memcpy(&base, chunk.zone_min, sizeof(base));
          UnpackCodesScalar<int64_t>(block.data() + chunk.values_offset, chunk.bit_width, base, first, count, buffer);
          break;
        }
        case Variant::kFilterPlain:
          selected += Select(block.Values<int64_t>(0) + first, count, selection, less);
          break;
        case Variant::kFilterDecoded:
          block.DecodeFixed<int64_t>(0, first, count, buffer);
          selected += Select(buffer, count, selection, less);
          break;
        case Variant::kFilterCodes:
          if (!none) {
            const ColumnChunk& chunk = block.chunk(0);
            selected += SelectCodesInRange(block.data() + chunk.values_offset, chunk.bit_width, first, count, nullptr,
                                           0, 0, high, selection);
          }
          break;
        default:  // the key variants: RunKeys
          break;
      }
    }
  }
  benchmark::DoNotOptimize(buffer[0]);
  return selected;
}

// A BIGINT chunk's zone map [min, max].
std::pair<int64_t, int64_t> ZoneRange(const ColumnChunk& chunk) {
  int64_t zone_min = 0;
  int64_t zone_max = 0;
  std::memcpy(&zone_min, chunk.zone_min, sizeof(zone_min));
  std::memcpy(&zone_max, chunk.zone_max, sizeof(zone_max));
  return {zone_min, zone_max};
}

// The key filter variants over an integer column: rows whose value the dense key filter holds, of every row or
// (kKeysSelected*) of the rows of `input`, a fixed selection of about half of each vector.
int64_t RunKeys(const Column& column, Variant variant, const SelectionVector& input, SelectionVector* selection) {
  int64_t selected = 0;
  const bool selected_input = variant == Variant::kKeysSelectedDecoded || variant == Variant::kKeysSelectedCodes;
  const auto& blocks = variant == Variant::kKeysPlain ? column.plain : column.compressed;
  RuntimeFilter::DenseKeyBits set;
  if (!column.key_filter->dense_key_bits(&set)) std::abort();
  ColumnVector keys;
  const std::vector<const ColumnVector*> key_columns = {&keys};
  for (const auto& bytes : blocks) {
    const BlockView block(bytes.data());
    const ColumnChunk& chunk = block.chunk(0);
    const auto [zone_min, zone_max] = ZoneRange(chunk);
    for (uint32_t first = 0; first < block.row_count(); first += kVector) {
      const uint32_t count = std::min(kVector, block.row_count() - first);
      // The input rows of this vector: a prefix of `input` (ascending rows below kVector).
      const uint32_t input_count =
          !selected_input
              ? 0
              : static_cast<uint32_t>(std::lower_bound(input.rows.begin(), input.rows.begin() + input.count, count) -
                                      input.rows.begin());
      if (variant == Variant::kKeysCodes || variant == Variant::kKeysSelectedCodes) {  // no clipping: the set covers
        selected += SelectCodesInBitmap(block.data() + chunk.values_offset, chunk.bit_width, first, count,
                                        selected_input ? input.rows.data() : nullptr, input_count, 0,
                                        static_cast<uint64_t>(zone_max - zone_min), set.words,
                                        static_cast<uint64_t>(zone_min - set.min), selection->rows.data());
        continue;
      }
      LoadBatchColumn(block, column.type, 0, first, count, &keys);
      SelectionVector vector_input;
      if (selected_input) {
        vector_input.rows.assign(input.rows.begin(), input.rows.begin() + input_count);
        vector_input.count = input_count;
      }
      column.key_filter->KeepMembers(key_columns, selected_input ? &vector_input : nullptr, count, selection);
      selected += selection->count;
    }
  }
  return selected;
}

// value < constant and the key filter's membership, on the codes of every row (both/ variants).
int64_t RunBoth(const Column& column, Variant variant, SelectionVector* selection) {
  int64_t selected = 0;
  RuntimeFilter::DenseKeyBits set;
  if (!column.key_filter->dense_key_bits(&set)) std::abort();
  for (const auto& bytes : column.compressed) {
    const BlockView block(bytes.data());
    const ColumnChunk& chunk = block.chunk(0);
    const auto [zone_min, zone_max] = ZoneRange(chunk);
    if (column.constant <= zone_min) continue;  // no value below the constant
    const uint64_t span = static_cast<uint64_t>(zone_max - zone_min);
    const uint64_t high = std::min(static_cast<uint64_t>(column.constant - zone_min - 1), span);
    const uint8_t* packed = block.data() + chunk.values_offset;
    uint32_t* rows = selection->rows.data();
    for (uint32_t first = 0; first < block.row_count(); first += kVector) {
      const uint32_t count = std::min(kVector, block.row_count() - first);
      if (variant == Variant::kBothSequential) {
        const uint32_t kept = SelectCodesInRange(packed, chunk.bit_width, first, count, nullptr, 0, 0, high, rows);
        selected += SelectCodesInBitmap(packed, chunk.bit_width, first, count, rows, kept, 0, span, set.words,
                                        static_cast<uint64_t>(zone_min - set.min), rows);
        continue;
      }
      PackedCodeTest tests[2];
      tests[0] = {packed, chunk.bit_width, 0, static_cast<uint32_t>(high)};
      tests[1] = {packed,    chunk.bit_width,
                  0,         static_cast<uint32_t>(span),
                  set.words, static_cast<uint32_t>(zone_min - set.min)};
      selected += SelectCodesAllOf(tests, 2, first, count, rows);
    }
  }
  return selected;
}

int64_t RunString(const Column& column, Variant variant, std::string_view* buffer, uint32_t* codes,
                  uint32_t* selection) {
  int64_t selected = 0;
  const bool compressed = variant != Variant::kMemcpy && variant != Variant::kFilterPlain;
  const auto& blocks = compressed ? column.compressed : column.plain;
  const std::string_view constant = column.string_constant;
  auto equal = [constant](std::string_view v) { return v == constant; };
  for (const auto& bytes : blocks) {
    const BlockView block(bytes.data());
    uint32_t code = 0;
    if (variant == Variant::kFilterCodes) {
      const StringDictionary dictionary = block.Dictionary(0);
      code = dictionary.LowerBound(constant);
      if (code < dictionary.size() && dictionary[code] != constant) code = dictionary.size();  // matches no code
    }
    const uint8_t* packed = block.data() + block.chunk(0).values_offset;
    const int width = block.chunk(0).bit_width;
    for (uint32_t first = 0; first < block.row_count(); first += kVector) {
      const uint32_t count = std::min(kVector, block.row_count() - first);
      switch (variant) {
        case Variant::kMemcpy:
        case Variant::kFilterPlain: {
          // What a scan of a plain block does: views from the offsets (expressions/batch.cc).
          const uint32_t* offsets = block.StringOffsets(0) + first;
          const char* heap = block.StringHeap(0);
          for (uint32_t r = 0; r < count; ++r)
            buffer[r] = std::string_view(heap + offsets[r], offsets[r + 1] - offsets[r]);
          if (variant == Variant::kFilterPlain) selected += Select(buffer, count, selection, equal);
          break;
        }
        case Variant::kDecode:
          block.DecodeStrings(0, first, count, buffer);
          break;
        case Variant::kDecodeScalar:
          break;  // integers only
        case Variant::kFilterDecoded:
          block.DecodeStrings(0, first, count, buffer);
          selected += Select(buffer, count, selection, equal);
          break;
        case Variant::kFilterCodes:
          UnpackCodes<uint32_t>(packed, width, 0, first, count, codes);
          selected += Select(codes, count, selection, [code](uint32_t c) { return c == code; });
          break;
        default:  // the key variants: RunKeys
          break;
      }
    }
  }
  benchmark::DoNotOptimize(buffer[0]);
  return selected;
}

void BM_Column(benchmark::State& state, Column* column, Variant variant) {
  std::vector<int64_t> integers(kVector);
  std::vector<std::string_view> strings(kVector);
  std::vector<uint32_t> codes(kVector);
  std::vector<uint32_t> selection(kVector);
  SelectionVector key_selection;
  key_selection.rows.resize(kVector);
  // Fixed input selections: about half of each vector's rows for keys/selected, one in 32 for decode/selected.
  SelectionVector input;
  std::mt19937 random(7);
  const uint32_t one_in = variant == Variant::kDecodeSelected ? 32 : 2;
  for (uint32_t row = 0; row < kVector; ++row) {
    if (random() % one_in == 0) input.rows.push_back(row);
  }
  input.count = static_cast<uint32_t>(input.rows.size());
  const bool selected_keys = variant == Variant::kKeysSelectedDecoded || variant == Variant::kKeysSelectedCodes;
  const bool keys = selected_keys || variant == Variant::kKeysPlain || variant == Variant::kKeysDecoded ||
                    variant == Variant::kKeysCodes;
  const bool both = variant == Variant::kBothSequential || variant == Variant::kBothFused;
  int64_t selected = 0;
  for (auto _ : state) {
    if (both) {
      selected = RunBoth(*column, variant, &key_selection);
    } else if (keys) {
      selected = RunKeys(*column, variant, input, &key_selection);
    } else {
      selected = column->type.IsString() ? RunString(*column, variant, strings.data(), codes.data(), selection.data())
                                         : RunInteger(*column, variant, input, integers.data(), selection.data());
    }
  }
  const bool filters =
      variant == Variant::kFilterPlain || variant == Variant::kFilterDecoded || variant == Variant::kFilterCodes;
  if (filters || keys || both) {
    int64_t& first_selected =
        both ? column->both_selected
             : (selected_keys ? column->selected_key_selected : (keys ? column->key_selected : column->selected));
    if (first_selected < 0) first_selected = selected;
    if (selected != first_selected) {
      g_different = true;
      state.SkipWithError("selected rows differ from the first filter's");
    }
    state.counters["selected"] = static_cast<double>(selected);
  }
  state.SetItemsProcessed(state.iterations() * FLAGS_rows);
  state.SetBytesProcessed(state.iterations() * FLAGS_rows * column->bytes_per_row);
  size_t stored = 0;
  size_t plain = 0;
  for (const auto& block : column->compressed) stored += block.size();
  for (const auto& block : column->plain) plain += block.size();
  state.counters["ratio"] = static_cast<double>(plain) / static_cast<double>(stored);
  state.SetLabel(BlockView(column->compressed[0].data()).IsEncoded(0)
                     ? ColumnEncodingName(BlockView(column->compressed[0].data()).encoding(0))
                     : "plain");
}

int Main(int argc, char** argv) {
  bench::ParseBenchmarkCommandLine(
      &argc, &argv,
      "column encodings: decode and filter throughput next to memcpy and the plain layout.\n"
      "usage: column_encoding_benchmark [--rows=N] [--benchmark_* flags]",
      __FILE__);
  if (argc > 1 || FLAGS_rows < kVector) {
    std::fprintf(stderr, "column_encoding_benchmark: bad arguments (see --help)\n");
    return 2;
  }
  // Widths of TPC-H columns: 0 (constant), 4 (l_discount), 12 (dates), 17 (l_extendedprice), 24 (l_orderkey
  // within a block: about 23), 32; and dictionaries of 7 (l_shipmode) and 150 (p_type) values.
  for (int bits : {0, 4, 12, 17, 24, 32}) Columns().push_back(IntegerColumn(bits));
  for (int distinct : {7, 150}) Columns().push_back(StringColumn(distinct));
  for (const auto& column : Columns()) {
    std::vector<Variant> variants = {Variant::kMemcpy, Variant::kDecode, Variant::kFilterPlain,
                                     Variant::kFilterDecoded};
    variants.push_back(Variant::kFilterCodes);
    if (!column->type.IsString() && UnpackCodesHasSimd()) variants.insert(variants.begin() + 2, Variant::kDecodeScalar);
    if (!column->type.IsString()) variants.insert(variants.begin() + 2, Variant::kDecodeSelected);
    if (column->key_filter != nullptr) {
      variants.insert(variants.end(), {Variant::kKeysPlain, Variant::kKeysDecoded, Variant::kKeysCodes,
                                       Variant::kKeysSelectedDecoded, Variant::kKeysSelectedCodes});
      variants.insert(variants.end(), {Variant::kBothSequential, Variant::kBothFused});
    }
    for (Variant variant : variants) {
      const std::string name = "BM_Column/" + column->name + "/" + VariantName(variant);
      benchmark::RegisterBenchmark(name.c_str(), BM_Column, column.get(), variant)->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("check: rows selected by every filter variant: %s\n", g_different ? "DIFFERENT" : "same");
  return g_different ? 1 : 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
