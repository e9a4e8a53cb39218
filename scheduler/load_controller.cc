#include "scheduler/load_controller.h"

#include <glog/logging.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace tessera {

const char* AdmissionStateName(AdmissionState state) {
  switch (state) {
    case AdmissionState::kAdmitted:
      return "admitted";
    case AdmissionState::kWaiting:
      return "waiting for memory";
    case AdmissionState::kSuspended:
      return "suspended";
  }
  return "?";
}

LoadController::LoadController(const LoadControlOptions& options, std::function<int64_t(Owner)> footprint,
                               std::function<int64_t(Owner)> spillable, std::function<double(Owner)> rank)
    : options_(options), footprint_(std::move(footprint)), spillable_(std::move(spillable)), rank_(std::move(rank)) {}

int64_t LoadController::Threshold(const MemoryGauge& gauge) const {
  const double threshold = options_.threshold_fraction * static_cast<double>(gauge.budget_bytes);
  if (threshold >= static_cast<double>(std::numeric_limits<int64_t>::max())) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(std::max(0.0, threshold));
}

int64_t LoadController::Claimable(Owner owner, const Entry& entry) const {
  if (entry.state != AdmissionState::kAdmitted) return 0;
  return std::max<int64_t>(0, entry.committed - footprint_(owner));
}

int64_t LoadController::Free() const {
  const MemoryGauge gauge = options_.memory();
  int64_t free = Threshold(gauge) - gauge.used_bytes;
  for (const auto& [owner, entry] : entries_) free -= Claimable(owner, entry);
  return free;
}

QueryMemoryRequest LoadController::Capped(const QueryMemoryRequest& request) const {
  const double cap = options_.max_query_fraction * static_cast<double>(Threshold(options_.memory()));
  const int64_t cap_bytes = cap >= static_cast<double>(std::numeric_limits<int64_t>::max())
                                ? std::numeric_limits<int64_t>::max()
                                : static_cast<int64_t>(cap);
  QueryMemoryRequest capped;
  capped.max_bytes = std::min(request.max_bytes, cap_bytes);
  capped.min_bytes = std::min(request.min_bytes, capped.max_bytes);
  return capped;
}

bool LoadController::Fits(Owner owner, Entry& entry, int64_t free, bool force) {
  const QueryMemoryRequest request = Capped(entry.request);
  if (entry.state == AdmissionState::kSuspended) {
    if (entry.given_back + entry.spilled > free && !force) return false;
    // While its spill runs, the spill releases memory before reporting it (Spilled): the footprint from before it
    // counts what is being written, whether or not it has left yet.
    entry.committed =
        (entry.spilling ? entry.footprint_before_spill : footprint_(owner)) + entry.spilled + entry.given_back;
    entry.given_back = 0;
    entry.spilled = 0;
  } else if (request.max_bytes <= free) {
    entry.committed = request.max_bytes;
  } else if (request.min_bytes <= free) {
    entry.committed = free;  // the middle band: whatever is not promised to others
  } else if (force) {
    entry.committed = request.max_bytes;
  } else {
    return false;
  }
  entry.state = AdmissionState::kAdmitted;
  return true;
}

int LoadController::Admitted() const {
  int admitted = 0;
  for (const auto& [owner, entry] : entries_) admitted += entry.state == AdmissionState::kAdmitted ? 1 : 0;
  return admitted;
}

bool LoadController::Admit(Owner owner, Entry& entry, int64_t free, bool force) {
  if (enabled()) return Fits(owner, entry, free, force);
  entry.state = AdmissionState::kAdmitted;
  entry.committed = 0;
  entry.given_back = 0;
  entry.spilled = 0;
  return true;
}

LoadController::Decision LoadController::Arrive(Owner owner, int priority, const QueryMemoryRequest& request,
                                                bool priority_policy) {
  Decision decision;
  Entry entry;
  entry.priority = priority;
  entry.arrival = next_arrival_++;
  entry.state = AdmissionState::kWaiting;
  if (!enabled() && !capped()) {
    entry.state = AdmissionState::kAdmitted;
    entries_.emplace(owner, entry);
    return decision;
  }
  entry.request.max_bytes = std::max<int64_t>(0, request.max_bytes);
  entry.request.min_bytes = std::clamp<int64_t>(request.min_bytes, 0, entry.request.max_bytes);

  int admitted = 0;
  bool held_back_ahead = false;  // a waiting or suspended query of at least this priority came first
  int lowest_admitted_priority = std::numeric_limits<int>::max();
  int highest_admitted_priority = std::numeric_limits<int>::min();
  for (const auto& [other, other_entry] : entries_) {
    if (other_entry.state != AdmissionState::kAdmitted) {
      held_back_ahead |= other_entry.priority >= priority;
      continue;
    }
    ++admitted;
    lowest_admitted_priority = std::min(lowest_admitted_priority, other_entry.priority);
    highest_admitted_priority = std::max(highest_admitted_priority, other_entry.priority);
  }
  const bool above_the_cap =
      capped() && admitted >= options_.max_admitted && !(priority_policy && priority > highest_admitted_priority);
  if (held_back_ahead || above_the_cap) {
    decision.admitted = false;
    entries_.emplace(owner, entry);
    return decision;
  }
  const bool any_admitted = admitted > 0;
  if (!enabled()) {
    Admit(owner, entry, 0, /*force=*/true);
    entries_.emplace(owner, entry);
    return decision;
  }
  const int64_t free = Free();
  if (Fits(owner, entry, free, /*force=*/!any_admitted)) {
    entries_.emplace(owner, entry);
    return decision;
  }

  const int64_t needed = Capped(entry.request).min_bytes;
  if (priority_policy && priority > lowest_admitted_priority) {
    // Victims: lower-priority admitted queries, largest commitment first, until the new query's minimum fits.
    std::vector<std::pair<int64_t, Owner>> candidates;
    for (const auto& [other, other_entry] : entries_) {
      if (other_entry.state == AdmissionState::kAdmitted && other_entry.priority < priority) {
        candidates.emplace_back(other_entry.committed, other);
      }
    }
    std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    int64_t gained = 0;           // claimable memory the victims give back at once
    int64_t gained_by_spill = 0;  // what their spills free once their running work orders have finished
    std::vector<Owner> victims;
    for (const auto& [committed, victim] : candidates) {
      if (free + gained + gained_by_spill >= needed) break;
      const int64_t claimable = Claimable(victim, entries_.at(victim));
      const int64_t spillable = spilling() ? spillable_(victim) : 0;
      if (claimable == 0 && spillable == 0) continue;  // suspending it would free nothing
      gained += claimable;
      gained_by_spill += spillable;
      victims.push_back(victim);
    }
    if (free + gained + gained_by_spill >= needed) {
      for (Owner victim : victims) {
        Entry& suspended = entries_.at(victim);
        suspended.given_back = Claimable(victim, suspended);
        suspended.state = AdmissionState::kSuspended;
        suspended.suspended_at = next_suspension_++;
        ++suspended.suspensions;
        ++suspensions_;
      }
      decision.suspend = std::move(victims);
      if (free + gained < needed) {
        // The room comes with the spills: wait for them (Spilled reconsiders).
        decision.admitted = false;
        entries_.emplace(owner, entry);
        return decision;
      }
      // Running queries may have allocated since `free` was read; the query the victims made room for is
      // admitted regardless.
      if (!Fits(owner, entry, Free(), /*force=*/false)) Fits(owner, entry, 0, /*force=*/true);
      entries_.emplace(owner, entry);
      return decision;
    }
  }
  decision.admitted = false;
  entries_.emplace(owner, entry);
  return decision;
}

std::vector<LoadController::Owner> LoadController::Leave(Owner owner) {
  entries_.erase(owner);
  return Reconsider();
}

void LoadController::SpillStarted(Owner owner) {
  auto it = entries_.find(owner);
  if (it == entries_.end()) return;
  it->second.spilling = true;
  it->second.footprint_before_spill = footprint_(owner);
}

std::vector<LoadController::Owner> LoadController::Spilled(Owner owner, int64_t bytes) {
  auto it = entries_.find(owner);
  if (it != entries_.end()) {
    it->second.spilling = false;
    spilled_bytes_total_ += std::max<int64_t>(0, bytes);
    // Re-admitted meanwhile: its commitment already holds the bytes (Fits).
    if (it->second.state == AdmissionState::kSuspended) it->second.spilled += std::max<int64_t>(0, bytes);
  }
  return Reconsider();
}

std::vector<LoadController::Owner> LoadController::Reconfigure(double threshold_fraction, double max_query_fraction) {
  options_.threshold_fraction = threshold_fraction;
  options_.max_query_fraction = max_query_fraction;
  if (enabled() || capped()) return Reconsider();
  std::vector<Owner> admitted;
  for (auto& [owner, entry] : entries_) {
    if (entry.state == AdmissionState::kAdmitted) continue;
    entry.state = AdmissionState::kAdmitted;
    entry.committed = 0;
    entry.given_back = 0;
    entry.spilled = 0;
    admitted.push_back(owner);
  }
  return admitted;
}

std::vector<LoadController::Owner> LoadController::AdmitBeyondTheCap() {
  // Only while the cap binds: below it, Reconsider has admitted whatever fits, and what waits waits for memory.
  if (!capped() || Admitted() < options_.max_admitted) return {};
  return Reconsider(/*beyond_the_cap=*/true);
}

std::vector<LoadController::Owner> LoadController::Reconsider() { return Reconsider(/*beyond_the_cap=*/false); }

std::vector<LoadController::Owner> LoadController::Reconsider(bool beyond_the_cap) {
  std::vector<Owner> admitted;
  if (!enabled() && !capped()) return admitted;
  struct Candidate {
    Owner owner;
    const Entry* entry;
    double rank;  // waiting queries: the policy's rank, +inf for none
  };
  std::vector<Candidate> candidates;
  int admitted_count = 0;
  for (const auto& [other, entry] : entries_) {
    if (entry.state == AdmissionState::kAdmitted) {
      ++admitted_count;
    } else {
      double rank = std::numeric_limits<double>::infinity();
      if (entry.state == AdmissionState::kWaiting && rank_) {
        const double own = rank_(other);
        if (own >= 0) rank = own;  // false for NaN
      }
      candidates.push_back({other, &entry, rank});
    }
  }
  if (candidates.empty()) return admitted;
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.entry->priority != b.entry->priority) return a.entry->priority > b.entry->priority;
    const bool a_suspended = a.entry->state == AdmissionState::kSuspended;
    const bool b_suspended = b.entry->state == AdmissionState::kSuspended;
    if (a_suspended != b_suspended) return a_suspended;
    if (a_suspended) return a.entry->suspended_at > b.entry->suspended_at;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.entry->arrival < b.entry->arrival;
  });
  for (const Candidate& candidate : candidates) {
    if (beyond_the_cap ? !admitted.empty() : capped() && admitted_count >= options_.max_admitted) break;
    Entry& entry = entries_.at(candidate.owner);
    const bool force = admitted_count == 0 && !beyond_the_cap;  // never forced beyond the cap: memory must fit
    if (!Admit(candidate.owner, entry, enabled() ? Free() : 0, force)) break;
    ++admitted_count;
    admitted.push_back(candidate.owner);
  }
  return admitted;
}

void LoadController::SetPriority(Owner owner, int priority) {
  auto it = entries_.find(owner);
  if (it != entries_.end()) it->second.priority = priority;
}

AdmissionState LoadController::state(Owner owner) const {
  auto it = entries_.find(owner);
  return it == entries_.end() ? AdmissionState::kAdmitted : it->second.state;
}

const char* LoadController::StateName(Owner owner) const {
  const AdmissionState admission = state(owner);
  if (admission == AdmissionState::kWaiting && capped() && Admitted() >= options_.max_admitted) {
    return "waiting for a query slot";
  }
  return AdmissionStateName(admission);
}

int LoadController::suspensions(Owner owner) const {
  auto it = entries_.find(owner);
  return it == entries_.end() ? 0 : it->second.suspensions;
}

LoadControlStats LoadController::Stats() const {
  LoadControlStats stats;
  stats.suspensions = suspensions_;
  stats.spilled_bytes_total = spilled_bytes_total_;
  for (const auto& [owner, entry] : entries_) {
    stats.spilled_bytes += entry.spilled;
    if (spilling() && entry.state == AdmissionState::kAdmitted) stats.spillable_bytes += spillable_(owner);
    switch (entry.state) {
      case AdmissionState::kAdmitted:
        ++stats.admitted;
        break;
      case AdmissionState::kWaiting:
        ++stats.waiting;
        break;
      case AdmissionState::kSuspended:
        ++stats.suspended;
        break;
    }
  }
  if (!enabled()) return stats;
  stats.threshold_fraction = options_.threshold_fraction;
  const MemoryGauge gauge = options_.memory();
  stats.threshold_bytes = Threshold(gauge);
  stats.used_bytes = gauge.used_bytes;
  for (const auto& [owner, entry] : entries_) stats.claimable_bytes += Claimable(owner, entry);
  return stats;
}

}  // namespace tessera
