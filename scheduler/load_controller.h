#pragma once
// The LoadController: admits, wait-lists and suspends queries so that the memory they may claim never exceeds
// the buffer pool's threshold (dissertation §3.7.4, §3.5.1; research note §2.5).
//
// Notation (bytes):
//   M            threshold = threshold_fraction x the buffer pool's budget
//   used         the pool's memory in use now (base blocks, and every query's temporary blocks and structures)
//   committed(q) what an admitted query q may claim in total: its estimate's max, or less (see below)
//   footprint(q) what q holds now (SchedulableQuery::MemoryFootprint)
//   claimable(q) max(0, committed(q) - footprint(q)): what q may still allocate
//   free         M - used - sum of claimable(q) over admitted queries
//
// Rules (a query's estimate is first capped at max_query_fraction x M, see LoadControlOptions):
//   - A new query waits behind any waiting or suspended query of the same or a higher priority (no overtaking).
//   - A query with an estimate {min, max} is admitted with committed = max if max <= free.
//   - The middle band (min <= free < max), which the dissertation leaves open, is admitted with committed = free:
//     the query runs and may use whatever is not promised to others. Its larger allocations may then fail with
//     the pool's ResourceExhausted error, which fails the query alone and frees what it held.
//   - Otherwise (min > free) it is not admitted now. Under a priority policy (hpf, pp, pp-exp, lottery), if its
//     priority is above the lowest admitted priority, admitted lower-priority queries are suspended in decreasing
//     order of committed memory until enough is free again; a suspended query gives back its claimable memory,
//     and with spilling on (LoadControlOptions::spill_directory) also what it can spill (`spillable`: its
//     temporary blocks and hash / aggregation tables, written to the spill directory once its running work orders
//     have finished). If suspending all of them would not make room, none is suspended. Under the other policies,
//     or when no suspension helps, the new query is wait-listed. When the room needs the victims' spills, the new
//     query waits for them: the Foreman reports each finished spill (Spilled), which reconsiders the held-back
//     queries (the new one first: it has the higher priority).
//   - When no query is admitted, the first waiting one is admitted anyway (nothing else can free memory).
//   - Whenever a query leaves (finished or cancelled), waiting and suspended queries are reconsidered: highest
//     priority first, then suspended before waiting, the most recently suspended first, waiting ones in the
//     policy's order (`rank`, below: under SRPT / IF-SRPT the least aged remaining-time estimate first, as the
//     policy itself would pick; otherwise arrival order); each is admitted if it fits, and the first that does not
//     fit stops the round (no overtaking).
//     A suspended query needs its earlier claimable memory plus what it spilled, and comes back with committed =
//     its footprint + both (the Foreman reads the spilled memory back before it dispatches again).
//
// Suspension stops the Foreman from dispatching the query's work orders; work orders already running finish, the
// query's spillable memory leaves the buffer pool (with spilling on), and the query resumes where it stopped with
// its memory read back to the same addresses, so its answer is unaffected.
//
// A cap on admitted queries (LoadControlOptions::max_admitted, a multiprogramming level), independent of memory:
// while that many are admitted, a new query waits like one that does not fit (admitted in the same order when a
// query leaves: the policy's order, so that SRPT does not turn into FCFS at the door), except that under a priority policy a query of a higher priority than every admitted
// one is admitted above the cap (the policy would give it the cores anyway). Suspended queries do not count.
// The cap is work-conserving: when a worker would go idle because no admitted query has a work order ready (build
// phases, a last single work order), the Foreman admits the next query waiting for a slot beyond the cap
// (AdmitBeyondTheCap). Measured on 2 cores, 16 SSB SF10 streams: 4 admitted at once do 16-27% more queries per
// second than 16, as each query's hash tables and filters then stay in the caches between its work orders
// (docs/decisions/0001).
//
// Disabled (every query admitted at once) when LoadControlOptions::memory is empty or the threshold is 0, and
// max_admitted is 0.
//
// Threading: not thread-safe; owned and used by the Foreman thread. The gauge and footprint callbacks are called
// on that thread.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "scheduler/schedulable_query.h"

namespace tessera {

struct MemoryGauge {
  int64_t used_bytes = 0;
  int64_t budget_bytes = 0;
};

struct LoadControlOptions {
  // The buffer pool's use and budget now. Empty: no load control.
  std::function<MemoryGauge()> memory;
  // M = threshold_fraction x budget (Quickstep's code uses 0.8 of the pool); 0 = no load control.
  double threshold_fraction = 0.9;
  // No query is promised more than this fraction of M: its estimate's min and max are capped there. Cardinality
  // estimates can be off by orders of magnitude (a non-equi join estimated at 20 GiB that allocates 1 MiB), and
  // one such estimate would otherwise hold every other query back. A query that really needs more still gets it
  // from the pool while memory lasts, and fails alone with ResourceExhausted when it does not (like SQL Server's
  // per-query memory-grant cap).
  double max_query_fraction = 0.25;
  // At most this many queries admitted at once (0: no cap); see the top of this file.
  int max_admitted = 0;
  // Where suspended queries spill their memory (the Database sets the data directory's temp/ folder); empty: a
  // suspended query keeps its memory resident and only gives back what it has not allocated yet.
  std::string spill_directory;
};

enum class AdmissionState { kAdmitted, kWaiting, kSuspended };
const char* AdmissionStateName(AdmissionState state);

struct LoadControlStats {
  double threshold_fraction = 0;  // 0: admission control is off
  int64_t threshold_bytes = 0;
  int64_t used_bytes = 0;
  int64_t claimable_bytes = 0;  // promised to admitted queries, not yet allocated
  int admitted = 0;
  int waiting = 0;
  int suspended = 0;
  int64_t suspensions = 0;          // over the controller's life
  int64_t spillable_bytes = 0;      // what admitted queries could spill now (0 when spilling is off)
  int64_t spilled_bytes = 0;        // held in spill files by suspended queries now
  int64_t spilled_bytes_total = 0;  // spilled over the controller's life
};

class LoadController {
 public:
  using Owner = void*;  // the Foreman's per-query state, opaque here
  // `footprint` returns an owner's current footprint in bytes; `spillable` what it could spill now (empty, or no
  // spill directory: suspension spills nothing). `rank` orders waiting queries of one priority: smaller goes
  // first; negative or NaN (or `rank` empty) = no rank, after every ranked one, in arrival order. The Foreman's
  // rank is SRPT's key (remaining-time estimate + srpt_aging x arrival time, so a long query's rank falls behind
  // no newer arrival for ever: nothing starves while aging > 0) under srpt / ifsrpt, and none otherwise. Called
  // once per waiting query each time the held-back queries are reconsidered.
  LoadController(const LoadControlOptions& options, std::function<int64_t(Owner)> footprint,
                 std::function<int64_t(Owner)> spillable = {}, std::function<double(Owner)> rank = {});

  // Memory admission control is on.
  bool enabled() const { return static_cast<bool>(options_.memory) && options_.threshold_fraction > 0; }
  // The cap on admitted queries is on.
  bool capped() const { return options_.max_admitted > 0; }
  bool spilling() const { return enabled() && static_cast<bool>(spillable_) && !options_.spill_directory.empty(); }

  struct Decision {
    bool admitted = true;
    std::vector<Owner> suspend;  // admitted queries to suspend now (already marked suspended here)
  };
  // A new query. `priority_policy`: whether the active policy ranks queries by priority (then lower-priority
  // queries may be suspended for it).
  Decision Arrive(Owner owner, int priority, const QueryMemoryRequest& request, bool priority_policy);
  // The query left (finished or cancelled); returns the waiting or suspended queries admitted in its place, in
  // the order they were admitted.
  std::vector<Owner> Leave(Owner owner);
  // A worker would go idle: while the cap binds, admits the first held-back query (in the order described at the
  // top) if its memory fits, beyond the cap; returns it, or nothing.
  std::vector<Owner> AdmitBeyondTheCap();
  // The suspended query `owner` starts to spill (its footprint will fall by what it writes, before Spilled).
  void SpillStarted(Owner owner);
  // The query `owner` spilled `bytes` (0 when it had nothing to spill or the spill failed or was cancelled); returns
  // the held-back queries admitted now that the memory is free, in the order they were admitted. A query
  // re-admitted while the spill was in flight was committed its footprint from before the spill (SpillStarted), so
  // the bytes count as its claimable memory until they are read back.
  std::vector<Owner> Spilled(Owner owner, int64_t bytes);
  void SetPriority(Owner owner, int priority);
  // Changes the threshold and the per-query cap at run time (a threshold of 0 turns admission control off) and
  // returns the held-back queries admitted by the change: all of them when it is now off.
  std::vector<Owner> Reconfigure(double threshold_fraction, double max_query_fraction);
  AdmissionState state(Owner owner) const;
  // state()'s name for progress reports: "admitted", "waiting for memory", "waiting for a query slot" (held back
  // by the cap) or "suspended".
  const char* StateName(Owner owner) const;
  // How often `owner` was suspended so far.
  int suspensions(Owner owner) const;

  LoadControlStats Stats() const;

 private:
  struct Entry {
    int priority = 1;
    QueryMemoryRequest request;
    AdmissionState state = AdmissionState::kAdmitted;
    int64_t committed = 0;
    int64_t given_back = 0;              // a suspended query's claimable memory at suspension
    int64_t spilled = 0;                 // what a suspended query spilled (comes back with it)
    bool spilling = false;               // between SpillStarted and Spilled
    int64_t footprint_before_spill = 0;  // its footprint at SpillStarted
    uint64_t arrival = 0;
    uint64_t suspended_at = 0;
    int suspensions = 0;
  };

  int64_t Threshold(const MemoryGauge& gauge) const;
  // `request` with max and min capped at max_query_fraction x M.
  QueryMemoryRequest Capped(const QueryMemoryRequest& request) const;
  int64_t Claimable(Owner owner, const Entry& entry) const;
  int Admitted() const;
  // Admits a held-back query: by memory (Fits) when memory control is on, else at once.
  bool Admit(Owner owner, Entry& entry, int64_t free, bool force);
  // M - used - claimable of every admitted query.
  int64_t Free() const;
  // What a waiting or suspended query needs to be admitted: min and the committed memory it gets.
  bool Fits(Owner owner, Entry& entry, int64_t free, bool force);

  // Admits waiting and suspended queries in the order described at the top while they fit. `beyond_the_cap`: at
  // most one, ignoring the cap on admitted queries, and only if its memory fits (AdmitBeyondTheCap).
  std::vector<Owner> Reconsider();
  std::vector<Owner> Reconsider(bool beyond_the_cap);

  LoadControlOptions options_;
  const std::function<int64_t(Owner)> footprint_;
  const std::function<int64_t(Owner)> spillable_;
  const std::function<double(Owner)> rank_;
  absl::flat_hash_map<Owner, Entry> entries_;
  uint64_t next_arrival_ = 0;
  uint64_t next_suspension_ = 0;
  int64_t suspensions_ = 0;
  int64_t spilled_bytes_total_ = 0;
};

}  // namespace tessera
