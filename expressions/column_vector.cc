#include "expressions/column_vector.h"

#include <algorithm>
#include <cstring>

#include "glog/logging.h"

namespace tessera {

static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= 16, "owned buffers must be 16-byte aligned for __int128");

size_t ColumnVector::ValueWidth() const {
  if (type_.IsString()) return sizeof(std::string_view);
  return static_cast<size_t>(type_.FixedWidth());
}

void ColumnVector::BorrowFixed(const void* values, const uint8_t* validity, uint32_t validity_bit_offset,
                               uint32_t size) {
  data_ = values;
  validity_ = validity;
  validity_bit_offset_ = validity_bit_offset;
  size_ = size;
}

void ColumnVector::Reserve(uint32_t capacity) {
  const size_t bytes = std::max<size_t>(ValueWidth() * capacity, 16);
  if (bytes > buffer_bytes_) {
    const bool was_owned = is_owned();
    std::unique_ptr<uint8_t[]> grown(new uint8_t[bytes]());
    if (buffer_ != nullptr) std::memcpy(grown.get(), buffer_.get(), buffer_bytes_);
    buffer_ = std::move(grown);
    buffer_bytes_ = bytes;
    if (was_owned) data_ = buffer_.get();
  }
  const size_t validity_bytes = BitmapBytes(std::max<uint32_t>(capacity, 64));
  if (validity_bytes > owned_validity_bytes_) {
    const bool validity_owned = validity_ != nullptr && validity_ == owned_validity_.get();
    std::unique_ptr<uint8_t[]> grown(new uint8_t[validity_bytes]());
    if (owned_validity_ != nullptr) std::memcpy(grown.get(), owned_validity_.get(), owned_validity_bytes_);
    owned_validity_ = std::move(grown);
    owned_validity_bytes_ = validity_bytes;
    if (validity_owned) validity_ = owned_validity_.get();
  }
}

void ColumnVector::ResetOwned(uint32_t size) {
  Reserve(size);
  data_ = buffer_.get();
  validity_ = nullptr;
  validity_bit_offset_ = 0;
  size_ = size;
  arena_.Reset();
}

void ColumnVector::BorrowValidity(const uint8_t* validity, uint32_t bit_offset) {
  validity_ = validity;
  validity_bit_offset_ = bit_offset;
}

uint8_t* ColumnVector::MutableValidity() {
  if (validity_ != nullptr && validity_ == owned_validity_.get()) return owned_validity_.get();
  const size_t bytes = BitmapBytes(size_);
  if (bytes > owned_validity_bytes_) {
    // Only reached for a vector never reserved/reset to this size; keep the borrowed bits readable meanwhile.
    std::unique_ptr<uint8_t[]> grown(new uint8_t[bytes]());
    owned_validity_ = std::move(grown);
    owned_validity_bytes_ = bytes;
  }
  uint8_t* out = owned_validity_.get();
  if (validity_ == nullptr) {
    std::memset(out, 0xFF, bytes);
  } else if ((validity_bit_offset_ & 7) == 0) {
    std::memcpy(out, validity_ + (validity_bit_offset_ >> 3), bytes);
  } else {
    // Unaligned source: shift byte pairs, reading only bytes that hold bits of rows 0..size-1.
    const uint8_t* source = validity_ + (validity_bit_offset_ >> 3);
    const unsigned shift = validity_bit_offset_ & 7;
    const size_t source_bytes = BitmapBytes(shift + size_);
    for (size_t i = 0; i < bytes; ++i) {
      unsigned low = source[i] >> shift;
      unsigned high = i + 1 < source_bytes ? static_cast<unsigned>(source[i + 1]) << (8 - shift) : 0;
      out[i] = static_cast<uint8_t>(low | high);
    }
  }
  validity_ = out;
  validity_bit_offset_ = 0;
  return out;
}

void ColumnVector::SetNull(uint32_t row) {
  DCHECK_LT(row, size_);
  ClearBit(MutableValidity(), row);
}

Value ColumnVector::GetValue(uint32_t row) const {
  if (IsNull(row) || type_.id() == TypeId::kNull) return Value::Null(type_);
  switch (type_.id()) {
    case TypeId::kBoolean:
      return Value::Boolean(values<uint8_t>()[row] != 0);
    case TypeId::kInteger:
      return Value::Integer(values<int32_t>()[row]);
    case TypeId::kBigInt:
      return Value::BigInt(values<int64_t>()[row]);
    case TypeId::kDouble:
      return Value::Double(values<double>()[row]);
    case TypeId::kDecimal:
      if (type_.IsWideDecimal()) {
        int128 v;
        std::memcpy(&v, values<uint8_t>() + 16 * static_cast<size_t>(row), sizeof(v));
        return Value::Decimal(v, type_);
      }
      return Value::Decimal(values<int64_t>()[row], type_);
    case TypeId::kDate:
      return Value::Date(values<int32_t>()[row]);
    case TypeId::kTimestamp:
      return Value::Timestamp(values<int64_t>()[row]);
    case TypeId::kInterval:
      return Value::IntervalValue(values<Interval>()[row]);
    case TypeId::kChar:
    case TypeId::kVarchar:
      return Value::String(std::string(strings()[row]), type_);
    case TypeId::kNull:
      break;
  }
  return Value::Null(type_);
}

}  // namespace tessera
