#pragma once
// LRU-2 replacement bookkeeping (O'Neil, O'Neil, Weikum: "The LRU-K page replacement algorithm", 1993, K=2).
//
// Tracks opaque uint64_t ids (e.g. block ids) and picks the evictable id whose backward 2-distance (now minus
// the time of its second-most-recent access) is largest. Ids with fewer than two accesses have infinite
// distance and are picked first, the one with the oldest last access first. Time is a logical counter
// advanced by every RecordAccess. The correlated-reference period of the paper is not modelled: callers record
// one access per use of a block (per work order), not per row.
//
// It holds no memory of its own and evicts nothing: the owner (the storage manager's Evictor) asks for a
// victim, then frees it.
//
// Threading: every method is thread-safe (one internal mutex; each call is O(log n)).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace tessera {

class Lru2Replacer {
 public:
  Lru2Replacer() = default;
  Lru2Replacer(const Lru2Replacer&) = delete;
  Lru2Replacer& operator=(const Lru2Replacer&) = delete;

  // Records an access to `id` at the next logical timestamp, keeping its last two. An id seen for the first
  // time starts being tracked as NOT evictable (it is typically pinned by the caller); call SetEvictable.
  void RecordAccess(uint64_t id);

  // Marks a tracked id as a candidate for PickVictim (true) or not (false). Ignored for untracked ids.
  void SetEvictable(uint64_t id, bool evictable);

  // Stops tracking `id` (evictable or not), e.g. when its block is dropped. Ignored for untracked ids.
  void Remove(uint64_t id);

  // The evictable id with the largest backward 2-distance, which stops being tracked; nullopt when no id is
  // evictable.
  std::optional<uint64_t> PickVictim();

  // Number of tracked ids that are evictable.
  size_t NumEvictable() const;
  // Number of tracked ids.
  size_t NumTracked() const;

 private:
  // Victim order: ids with one access (rank 0) by last access, then ids with two (rank 1) by the older of
  // their last two accesses; the smallest key is the victim. Timestamps are unique, so keys are.
  using Key = std::pair<int, uint64_t>;
  struct History {
    uint64_t last = 0;      // most recent access
    uint64_t previous = 0;  // second most recent; 0 = none (timestamps start at 1)
    bool evictable = false;
    Key key() const { return previous == 0 ? Key{0, last} : Key{1, previous}; }
  };

  mutable absl::Mutex mutex_;
  uint64_t now_ ABSL_GUARDED_BY(mutex_) = 0;
  absl::flat_hash_map<uint64_t, History> histories_ ABSL_GUARDED_BY(mutex_);
  // Evictable ids ordered by victim key.
  std::set<std::pair<Key, uint64_t>> evictable_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace tessera
