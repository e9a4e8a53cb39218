#pragma once
// Picks the query whose work order is dispatched next, with the probabilities the current policy (policy.h)
// assigns to the active queries.
//
// Each active query occupies a dense slot holding its PolicyCandidate. Any change marks the weights stale;
// the next Pick recomputes them once (O(Q log Q)) into preallocated buffers and draws with a seeded PRNG and
// a binary search over the cumulative weights. Nothing allocates on the Pick path once the buffers have grown
// to the number of queries.
//
// Threading: not thread-safe; owned and used by the Foreman thread (tests use it directly).

#include <cstdint>
#include <vector>

#include "common/fast_random.h"
#include "scheduler/policy.h"

namespace tessera {

class PolicyEnforcer {
 public:
  PolicyEnforcer(const PolicyOptions& options, uint64_t seed);

  void SetPolicy(const PolicyOptions& options);
  const PolicyOptions& policy() const { return options_; }

  // Registers a query; `owner` is what Pick returns for it. Returns its slot.
  int Add(void* owner, const PolicyCandidate& candidate);
  // Unregisters `slot`. The last slot moves into `slot`: returns that slot's owner (whose slot is now
  // `slot`), or null if `slot` was the last one.
  void* Remove(int slot);

  // Read or change a query's inputs. The mutable accessor marks the weights stale.
  const PolicyCandidate& candidate(int slot) const { return candidates_[slot]; }
  PolicyCandidate& mutable_candidate(int slot) {
    stale_ = true;
    return candidates_[slot];
  }
  void SetReady(int slot, bool ready) {
    if (candidates_[slot].ready != ready) {
      candidates_[slot].ready = ready;
      stale_ = true;
    }
  }
  // For inputs changed behind the enforcer's back (e.g. shared predictions).
  void MarkStale() { stale_ = true; }

  // The owner of the picked ready query, or null if no query is ready.
  void* Pick();

  // The current probability that Pick returns `slot` (diagnostics and tests).
  double Probability(int slot);
  int size() const { return static_cast<int>(candidates_.size()); }
  void* owner(int slot) const { return owners_[slot]; }

 private:
  void Recompute();

  PolicyOptions options_;
  FastRandom random_;
  std::vector<PolicyCandidate> candidates_;
  std::vector<void*> owners_;
  std::vector<double> weights_;
  std::vector<double> cumulative_;
  PolicyScratch scratch_;
  double total_ = 0;
  bool stale_ = true;
};

}  // namespace tessera
