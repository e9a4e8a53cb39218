#include "storage/lru2_replacer.h"

namespace tessera {

void Lru2Replacer::RecordAccess(uint64_t id) {
  absl::MutexLock lock(&mutex_);
  History& history = histories_[id];
  if (history.evictable) evictable_.erase({history.key(), id});
  history.previous = history.last;
  history.last = ++now_;
  if (history.evictable) evictable_.insert({history.key(), id});
}

void Lru2Replacer::SetEvictable(uint64_t id, bool evictable) {
  absl::MutexLock lock(&mutex_);
  auto it = histories_.find(id);
  if (it == histories_.end() || it->second.evictable == evictable) return;
  it->second.evictable = evictable;
  if (evictable) {
    evictable_.insert({it->second.key(), id});
  } else {
    evictable_.erase({it->second.key(), id});
  }
}

void Lru2Replacer::Remove(uint64_t id) {
  absl::MutexLock lock(&mutex_);
  auto it = histories_.find(id);
  if (it == histories_.end()) return;
  if (it->second.evictable) evictable_.erase({it->second.key(), id});
  histories_.erase(it);
}

std::optional<uint64_t> Lru2Replacer::PickVictim() {
  absl::MutexLock lock(&mutex_);
  if (evictable_.empty()) return std::nullopt;
  const uint64_t victim = evictable_.begin()->second;
  evictable_.erase(evictable_.begin());
  histories_.erase(victim);
  return victim;
}

size_t Lru2Replacer::NumEvictable() const {
  absl::MutexLock lock(&mutex_);
  return evictable_.size();
}

size_t Lru2Replacer::NumTracked() const {
  absl::MutexLock lock(&mutex_);
  return histories_.size();
}

}  // namespace tessera
