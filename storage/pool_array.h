#pragma once
// PoolArray<T>: a fixed-length array of trivially copyable T in buffer-pool memory, for the run-time structures
// of queries (hash-join entries and buckets, match flags, sort runs). One BufferPool::Allocate of kind kBlob per
// array, so the array counts against the budget (and the query's account) exactly while it exists, and arrays of
// at least 1 MiB are 2 MiB-aligned slots homed on a NUMA node and advised to use transparent huge pages: a hash
// probe's random reads then miss the TLB far less often than in heap memory.
//
// Move-only. The memory is freed when the array is destroyed, reset or assigned over; Resize grows or shrinks it. Not thread-safe by itself;
// the elements are plain memory (concurrent writers use std::atomic_ref).

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "storage/buffer_pool.h"

namespace tessera {

template <typename T>
class PoolArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "PoolArray holds plain data only");

 public:
  PoolArray() = default;
  // An empty array tied to `pool` (not owned), which Resize can grow; allocates nothing.
  explicit PoolArray(BufferPool* pool) : pool_(pool) {}
  ~PoolArray() { Reset(); }
  PoolArray(PoolArray&& other) noexcept { *this = std::move(other); }
  PoolArray& operator=(PoolArray&& other) noexcept {
    if (this != &other) {
      Reset();
      std::swap(pool_, other.pool_);
      std::swap(data_, other.data_);
      std::swap(size_, other.size_);
    }
    return *this;
  }
  PoolArray(const PoolArray&) = delete;
  PoolArray& operator=(const PoolArray&) = delete;

  // `size` elements of uninitialized memory from `pool` on NUMA node `node` (-1: any); ResourceExhausted over
  // the budget. A size of 0 allocates nothing.
  static absl::StatusOr<PoolArray> Allocate(BufferPool* pool, size_t size, int node = -1) {
    PoolArray array;
    array.pool_ = pool;
    if (size == 0) return array;
    absl::StatusOr<void*> memory = pool->Allocate(MemoryKind::kBlob, size * sizeof(T), node);
    if (!memory.ok()) return memory.status();
    array.pool_ = pool;
    array.data_ = static_cast<T*>(*memory);
    array.size_ = size;
    return array;
  }
  // As Allocate, with every byte zero.
  static absl::StatusOr<PoolArray> AllocateZeroed(BufferPool* pool, size_t size, int node = -1) {
    absl::StatusOr<PoolArray> array = Allocate(pool, size, node);
    if (array.ok() && size > 0) std::memset(static_cast<void*>(array->data_), 0, size * sizeof(T));
    return array;
  }

  // Changes the length to `size`, keeping the first min(size(), size) elements (new ones are uninitialized).
  // A large array grows by remapping its pages, without copying (BufferPool::Reallocate). The array must come
  // from Allocate or the pool constructor. On error (ResourceExhausted) it is unchanged.
  absl::Status Resize(size_t size) {
    if (size == 0) {
      BufferPool* pool = pool_;
      Reset();
      pool_ = pool;
      return absl::OkStatus();
    }
    absl::StatusOr<void*> memory = pool_->Reallocate(MemoryKind::kBlob, data_, size_ * sizeof(T), size * sizeof(T));
    if (!memory.ok()) return memory.status();
    data_ = static_cast<T*>(*memory);
    size_ = size;
    return absl::OkStatus();
  }

  // Frees the memory; the array is empty afterwards (and no longer tied to its pool).
  void Reset() {
    if (data_ != nullptr) pool_->Free(data_, MemoryKind::kBlob, size_ * sizeof(T));
    pool_ = nullptr;
    data_ = nullptr;
    size_ = 0;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  BufferPool* pool_ = nullptr;
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tessera
