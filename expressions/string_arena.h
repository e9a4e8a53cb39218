#pragma once
// StringArena: a chunked bump allocator for variable-length bytes (string results of kernels, MIN/MAX string
// aggregate states). Pointers it hands out stay valid until Reset() or destruction; the arena never moves
// bytes it has handed out. Reset() keeps the chunks for reuse, so a steady-state workload allocates nothing.
//
// Not thread-safe: one arena per owner (a column vector, a per-thread aggregation table).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace tessera {

class StringArena {
 public:
  StringArena() = default;
  StringArena(StringArena&&) = default;
  StringArena& operator=(StringArena&&) = default;
  StringArena(const StringArena&) = delete;
  StringArena& operator=(const StringArena&) = delete;

  // `bytes` uninitialized bytes (1-byte aligned). Allocates a new chunk only when the current ones are full.
  char* Allocate(size_t bytes) {
    if (bytes <= remaining_) {
      char* result = cursor_;
      cursor_ += bytes;
      remaining_ -= bytes;
      return result;
    }
    return AllocateSlow(bytes);
  }
  std::string_view Copy(std::string_view text) {
    if (text.empty()) return {};
    char* destination = Allocate(text.size());
    __builtin_memcpy(destination, text.data(), text.size());
    return {destination, text.size()};
  }

  // Forgets every allocation (pointers handed out become invalid) but keeps the chunks.
  void Reset();
  // Bytes held in chunks (for memory accounting).
  size_t reserved_bytes() const { return reserved_bytes_; }

 private:
  char* AllocateSlow(size_t bytes);

  static constexpr size_t kMinChunkBytes = 32 * 1024;

  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t capacity = 0;
  };
  std::vector<Chunk> chunks_;
  size_t current_ = 0;  // index of the chunk `cursor_` points into (valid when !chunks_.empty())
  char* cursor_ = nullptr;
  size_t remaining_ = 0;
  size_t reserved_bytes_ = 0;
};

}  // namespace tessera
