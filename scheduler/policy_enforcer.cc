#include "scheduler/policy_enforcer.h"

#include <algorithm>

namespace tessera {

PolicyEnforcer::PolicyEnforcer(const PolicyOptions& options, uint64_t seed) : options_(options), random_(seed) {}

void PolicyEnforcer::SetPolicy(const PolicyOptions& options) {
  options_ = options;
  stale_ = true;
}

int PolicyEnforcer::Add(void* owner, const PolicyCandidate& candidate) {
  candidates_.push_back(candidate);
  owners_.push_back(owner);
  weights_.push_back(0);
  cumulative_.push_back(0);
  stale_ = true;
  return static_cast<int>(candidates_.size()) - 1;
}

void* PolicyEnforcer::Remove(int slot) {
  const int last = static_cast<int>(candidates_.size()) - 1;
  void* moved = nullptr;
  if (slot != last) {
    candidates_[slot] = candidates_[last];
    owners_[slot] = owners_[last];
    moved = owners_[slot];
  }
  candidates_.pop_back();
  owners_.pop_back();
  weights_.pop_back();
  cumulative_.pop_back();
  stale_ = true;
  return moved;
}

void PolicyEnforcer::Recompute() {
  ComputePolicyWeights(options_, candidates_, weights_, &scratch_);
  double sum = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    sum += weights_[i];
    cumulative_[i] = sum;
  }
  total_ = sum;
  stale_ = false;
}

void* PolicyEnforcer::Pick() {
  if (stale_) Recompute();
  if (total_ <= 0) return nullptr;
  const double draw = random_.NextDouble() * total_;
  size_t i = std::upper_bound(cumulative_.begin(), cumulative_.end(), draw) - cumulative_.begin();
  if (i >= cumulative_.size()) i = cumulative_.size() - 1;  // draw rounded up to total_
  while (weights_[i] <= 0) --i;                             // never land on a zero-weight slot
  return owners_[i];
}

double PolicyEnforcer::Probability(int slot) {
  if (stale_) Recompute();
  return total_ > 0 ? weights_[slot] / total_ : 0.0;
}

}  // namespace tessera
