#pragma once
// Little-endian, length-prefixed binary encoding for small persistent metadata (the catalog file).
// Not for hot paths. A reader never reads past its buffer: every Read* returns false on truncated input.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tessera {

class ByteWriter {
 public:
  void PutU8(uint8_t v) { buffer_.push_back(static_cast<char>(v)); }
  void PutU32(uint32_t v) { buffer_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void PutU64(uint64_t v) { buffer_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void PutI64(int64_t v) { PutU64(static_cast<uint64_t>(v)); }
  void PutString(std::string_view s) {
    PutU32(static_cast<uint32_t>(s.size()));
    buffer_.append(s.data(), s.size());
  }
  const std::string& data() const { return buffer_; }
  std::string Release() { return std::move(buffer_); }

 private:
  std::string buffer_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view data) : data_(data) {}
  bool GetU8(uint8_t* v) { return GetRaw(v, sizeof(*v)); }
  bool GetU32(uint32_t* v) { return GetRaw(v, sizeof(*v)); }
  bool GetU64(uint64_t* v) { return GetRaw(v, sizeof(*v)); }
  bool GetI64(int64_t* v) { return GetRaw(v, sizeof(*v)); }
  bool GetString(std::string* s) {
    uint32_t size;
    if (!GetU32(&size) || data_.size() - position_ < size) return false;
    s->assign(data_.data() + position_, size);
    position_ += size;
    return true;
  }
  bool AtEnd() const { return position_ == data_.size(); }
  // Bytes not read yet: a count read from the input may be checked against it before anything is sized by it.
  size_t remaining() const { return data_.size() - position_; }

 private:
  bool GetRaw(void* out, size_t bytes) {
    if (data_.size() - position_ < bytes) return false;
    std::memcpy(out, data_.data() + position_, bytes);
    position_ += bytes;
    return true;
  }
  std::string_view data_;
  size_t position_ = 0;
};

}  // namespace tessera
