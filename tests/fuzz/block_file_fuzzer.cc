// Fuzz target for the block reader (storage/block_layout.h): bytes as a block that arrived from outside, then every
// value of every column read through BlockView as a scan would. The checksum flag is cleared first, so that
// mutations reach the structural checks instead of stopping at a CRC (what BlockView::Validate does for the
// unsealed blocks other ranks send; blocks from disk are sealed and their CRCs catch random damage first). Beyond
// "never crash, hang or read out of bounds":
//  - a block that does not validate fails with DataLoss;
//  - a block that validates can be read whole: every row of every column through GetValue with the column's own
//    type (DECIMAL as 64-bit: the width only the table knows; 128-bit decimals need the catalog's type).
// Blocks whose row count times column count passes kMaxCells are only validated (a frame-of-reference column of
// bit width 0 holds any number of rows in 8 bytes: a legitimately huge block would only make the run slow).
//
// Build and run: tests/fuzz/README.md. The corpus is blocks that tessera wrote (plain and compressed, every
// fixed-width type, strings plain and as dictionaries, NULLs).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "catalog/types.h"
#include "storage/block_layout.h"

namespace tessera {
namespace {

constexpr uint64_t kMaxCells = uint64_t{1} << 20;

void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "block_file_fuzzer: %s\n%.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// The type a reader would use for a chunk of type id `id` (false: no column type has that id).
bool TypeOfChunk(uint8_t id, Type* type) {
  switch (static_cast<TypeId>(id)) {
    case TypeId::kBoolean:
      *type = Type::Boolean();
      return true;
    case TypeId::kInteger:
      *type = Type::Integer();
      return true;
    case TypeId::kBigInt:
      *type = Type::BigInt();
      return true;
    case TypeId::kDouble:
      *type = Type::Double();
      return true;
    case TypeId::kDecimal:
      *type = Type::Decimal(18, 2);
      return true;
    case TypeId::kChar:
    case TypeId::kVarchar:
      *type = Type::Varchar();
      return true;
    case TypeId::kDate:
      *type = Type::Date();
      return true;
    case TypeId::kTimestamp:
      *type = Type::Timestamp();
      return true;
    case TypeId::kInterval:
      *type = Type::IntervalType();
      return true;
    default:
      return false;
  }
}

}  // namespace
}  // namespace tessera

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  if (size < sizeof(BlockHeader)) return 0;
  // An 8-byte aligned copy of exactly `size` bytes (blocks live 8-byte aligned; AddressSanitizer sees the end).
  std::vector<uint64_t> storage((size + 7) / 8);
  uint8_t* block = reinterpret_cast<uint8_t*>(storage.data());
  std::memcpy(block, data, size);
  auto* header = reinterpret_cast<BlockHeader*>(block);
  header->flags &= ~kBlockChecksummed;
  const size_t columns = header->column_count;
  const absl::Status valid = BlockView::Validate(block, size, columns);
  if (!valid.ok()) {
    if (valid.code() != absl::StatusCode::kDataLoss) Fail("a rejected block is not DataLoss", valid.ToString());
    return 0;
  }
  const BlockView view(block);
  if (static_cast<uint64_t>(view.row_count()) * columns > kMaxCells) return 0;
  uint64_t checksum = 0;  // keeps the reads from being optimized away
  for (size_t c = 0; c < columns; ++c) {
    Type type;
    if (!TypeOfChunk(view.chunk(static_cast<int>(c)).type_id, &type)) continue;
    for (uint32_t row = 0; row < view.row_count(); ++row) {
      const Value value = view.GetValue(static_cast<int>(c), row, type);
      checksum += value.is_null() ? 1 : value.ToString().size();
    }
  }
  if (checksum == ~uint64_t{0}) std::fprintf(stderr, "%llu\n", static_cast<unsigned long long>(checksum));
  return 0;
}
