#pragma once
// Column vectors and selection vectors: the unit of vectorized evaluation.
//
// A ColumnVector holds up to kVectorSize values of one type in its physical representation (catalog/types.h),
// except strings, which are std::string_view (pointing into a block's heap or the vector's own arena). Values
// of rows that are NULL are unspecified. A vector either borrows memory (zero-copy view of a block's column)
// or owns a buffer it reuses across batches: evaluation allocates only when a vector first grows.
//
// Owned value buffers are 16-byte aligned (DECIMAL(p > 18) values are __int128). The validity of a vector can
// be borrowed independently of its values (e.g. a cast result shares its input's NULLs); marking a row NULL
// in a vector with borrowed validity first copies the bitmap (copy-on-write), so a borrowed bitmap is never
// written.
//
// A SelectionVector lists the active row positions (ascending) of a batch; a null SelectionVector* means all
// rows 0..size-1 are active. Not thread-safe: one evaluator (and its vectors) per worker.
//
// ColumnVector is move-only: a borrowed or owned view is tied to the memory it was set up with.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/types.h"
#include "catalog/value.h"
#include "common/bitmap.h"
#include "expressions/string_arena.h"

namespace tessera {

constexpr uint32_t kVectorSize = 2048;

class ColumnVector {
 public:
  ColumnVector() = default;
  explicit ColumnVector(Type type) : type_(type) {}
  ColumnVector(ColumnVector&&) = default;
  ColumnVector& operator=(ColumnVector&&) = default;
  ColumnVector(const ColumnVector&) = delete;
  ColumnVector& operator=(const ColumnVector&) = delete;

  const Type& type() const { return type_; }
  void set_type(Type type) { type_ = type; }
  uint32_t size() const { return size_; }

  // Borrow: points at external values (e.g. a block column at row `offset`) without copying. `validity` may
  // be null (no NULLs); `validity_bit_offset` is the bit of row 0 in it. For strings use BorrowStrings.
  void BorrowFixed(const void* values, const uint8_t* validity, uint32_t validity_bit_offset, uint32_t size);
  void BorrowStrings(const std::string_view* values, const uint8_t* validity, uint32_t validity_bit_offset,
                     uint32_t size) {
    BorrowFixed(values, validity, validity_bit_offset, size);
  }
  // Owned storage for `size` values (reuses the buffer); validity reset to all valid, arena emptied.
  void ResetOwned(uint32_t size);
  // Grows the owned buffers to hold `capacity` values of the current type (and its validity) without changing
  // the contents; later ResetOwned(size <= capacity) then allocates nothing.
  void Reserve(uint32_t capacity);

  template <typename T>
  const T* values() const {
    return static_cast<const T*>(data_);
  }
  template <typename T>
  T* mutable_values() {
    return static_cast<T*>(owned_data());
  }
  const std::string_view* strings() const { return static_cast<const std::string_view*>(data_); }
  std::string_view* mutable_strings() { return static_cast<std::string_view*>(owned_data()); }
  const void* raw_values() const { return data_; }
  bool is_owned() const { return data_ != nullptr && data_ == buffer_.get(); }

  bool IsNull(uint32_t row) const { return validity_ != nullptr && !GetBit(validity_, validity_bit_offset_ + row); }
  bool has_nulls() const { return validity_ != nullptr; }
  // The validity bitmap (null: no NULLs) and the bit of row 0 in it.
  const uint8_t* validity() const { return validity_; }
  uint32_t validity_bit_offset() const { return validity_bit_offset_; }

  // Marks a row NULL in an owned vector (allocates the bitmap on first use).
  void SetNull(uint32_t row);
  // Uses `validity` (bit `bit_offset` = row 0; null = no NULLs) as this vector's NULLs without copying it.
  // The bitmap must outlive the vector's use; SetNull copies it first.
  void BorrowValidity(const uint8_t* validity, uint32_t bit_offset);
  void BorrowValidityFrom(const ColumnVector& other) { BorrowValidity(other.validity_, other.validity_bit_offset_); }
  // An owned, writable bitmap with bit offset 0 holding the current NULLs of rows 0..size-1 (all valid if
  // there were none). Rows >= size are unspecified.
  uint8_t* MutableValidity();

  // Copies `text` into the vector's arena and returns a view that lives until the next ResetOwned.
  std::string_view AppendToArena(std::string_view text) { return arena_.Copy(text); }
  // `bytes` uninitialized bytes in the arena, valid until the next ResetOwned.
  char* AllocateInArena(size_t bytes) { return arena_.Allocate(bytes); }

  // Row `row` as a Value of type() (row-at-a-time paths: results, error messages, tests). Not for hot loops.
  Value GetValue(uint32_t row) const;

 private:
  void* owned_data() { return buffer_.get(); }
  size_t ValueWidth() const;

  Type type_;
  uint32_t size_ = 0;
  const void* data_ = nullptr;
  const uint8_t* validity_ = nullptr;
  uint32_t validity_bit_offset_ = 0;
  std::unique_ptr<uint8_t[]> buffer_;  // owned values; operator new[] aligns to 16 bytes
  size_t buffer_bytes_ = 0;
  std::unique_ptr<uint8_t[]> owned_validity_;
  size_t owned_validity_bytes_ = 0;
  StringArena arena_;
};

struct SelectionVector {
  std::vector<uint32_t> rows;  // capacity kVectorSize, reserved once
  uint32_t count = 0;
};

}  // namespace tessera
