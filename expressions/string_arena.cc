#include "expressions/string_arena.h"

#include <algorithm>

namespace tessera {

void StringArena::Reset() {
  current_ = 0;
  if (chunks_.empty()) {
    cursor_ = nullptr;
    remaining_ = 0;
    return;
  }
  cursor_ = chunks_[0].data.get();
  remaining_ = chunks_[0].capacity;
}

char* StringArena::AllocateSlow(size_t bytes) {
  // Try the chunks kept by Reset() first, then add a new one (at least double the last, so the number of
  // chunks stays logarithmic in the bytes held).
  while (!chunks_.empty() && current_ + 1 < chunks_.size()) {
    ++current_;
    cursor_ = chunks_[current_].data.get();
    remaining_ = chunks_[current_].capacity;
    if (bytes <= remaining_) return Allocate(bytes);
  }
  const size_t last = chunks_.empty() ? 0 : chunks_.back().capacity;
  const size_t capacity = std::max({kMinChunkBytes, bytes, 2 * last});
  chunks_.push_back(Chunk{std::unique_ptr<char[]>(new char[capacity]), capacity});
  reserved_bytes_ += capacity;
  current_ = chunks_.size() - 1;
  cursor_ = chunks_.back().data.get();
  remaining_ = capacity;
  return Allocate(bytes);
}

}  // namespace tessera
