#include "scheduler/policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tessera {
namespace {

// Fair weights within one group (a level): 1/t_j if every member has a prediction, else uniform. Returns the
// sum.
double FairWithinGroup(std::span<const PolicyCandidate> candidates, std::span<const int> group,
                       std::span<double> weights) {
  bool all_predicted = true;
  for (int i : group) all_predicted = all_predicted && candidates[i].has_prediction && candidates[i].predicted_ns > 0;
  double sum = 0;
  for (int i : group) {
    weights[i] = all_predicted ? 1.0 / candidates[i].predicted_ns : 1.0;
    sum += weights[i];
  }
  return sum;
}

int EffectivePriority(const PolicyCandidate& candidate) { return std::max(1, candidate.priority); }

// The one ready candidate that a strict-order policy serves: least aged remaining work (remaining_ns +
// aging × arrival_ns; unknown remaining = +inf) among those accepted by `filter`, ties broken by arrival; or by
// arrival alone if `by_remaining` is false. Ranking by remaining + aging × arrival time is ranking by remaining −
// aging × time waited (the clock term is the same for every candidate), so no clock is needed here.
template <typename Filter>
int StrictChoice(std::span<const PolicyCandidate> candidates, bool by_remaining, double aging, Filter filter) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i) {
    const PolicyCandidate& c = candidates[i];
    if (!c.ready || !filter(c)) continue;
    if (best < 0) {
      best = i;
      continue;
    }
    const PolicyCandidate& b = candidates[best];
    if (by_remaining) {
      const double remaining = c.remaining_ns < 0 ? std::numeric_limits<double>::infinity()
                                                  : c.remaining_ns + aging * static_cast<double>(c.arrival_ns);
      const double best_remaining = b.remaining_ns < 0 ? std::numeric_limits<double>::infinity()
                                                       : b.remaining_ns + aging * static_cast<double>(b.arrival_ns);
      if (remaining < best_remaining || (remaining == best_remaining && c.arrival < b.arrival)) best = i;
    } else if (c.arrival < b.arrival) {
      best = i;
    }
  }
  return best;
}

void ProportionalPriority(const PolicyOptions& options, std::span<const PolicyCandidate> candidates,
                          std::span<double> weights, std::vector<int>& order) {
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return EffectivePriority(candidates[a]) < EffectivePriority(candidates[b]); });
  const int max_priority = EffectivePriority(candidates[order.back()]);
  bool all_predicted = true;
  for (int i : order) all_predicted = all_predicted && candidates[i].has_prediction && candidates[i].predicted_ns > 0;
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    const int pv = EffectivePriority(candidates[order[begin]]);
    while (end < order.size() && EffectivePriority(candidates[order[end]]) == pv) ++end;
    std::span<const int> group(order.data() + begin, end - begin);
    const double share = options.scale == PriorityScale::kLinear
                             ? static_cast<double>(pv)
                             : std::pow(options.exponential_base, static_cast<double>(pv - max_priority));
    // Intra-class fair weights, normalised to p(j | PV).
    const double sum = FairWithinGroup(candidates, group, weights);
    double n = share;
    if (all_predicted) {
      // w_PV = expected time of a work order picked from this class = sum_j p(j | PV) t_j. The dissertation
      // writes the arithmetic mean of t_j, which equals this only for uniform intra-class picks or equal t_j;
      // with fair intra-class picks it is the harmonic mean, and using it keeps class CPU shares exactly ∝
      // s(PV).
      double w = 0;
      for (int i : group) w += weights[i] / sum * candidates[i].predicted_ns;
      n = share / w;
    }
    for (int i : group) weights[i] = weights[i] / sum * n;  // p(j) ∝ n_PV * p(j | PV)
    begin = end;
  }
}

}  // namespace

absl::StatusOr<PolicyOptions> ParsePolicy(const std::string& name) {
  const std::string lower = absl::AsciiStrToLower(name);
  PolicyOptions options;
  if (lower == "static") {
    options.kind = PolicyKind::kStatic;
  } else if (lower == "fair") {
    options.kind = PolicyKind::kFair;
  } else if (lower == "hpf") {
    options.kind = PolicyKind::kHighestPriorityFirst;
  } else if (lower == "pp" || lower == "pp-linear") {
    options.kind = PolicyKind::kProportionalPriority;
  } else if (lower == "pp-exp") {
    options.kind = PolicyKind::kProportionalPriority;
    options.scale = PriorityScale::kExponential;
  } else if (lower == "lottery") {
    options.kind = PolicyKind::kLottery;
  } else if (lower == "fcfs") {
    options.kind = PolicyKind::kFcfs;
  } else if (lower == "srpt") {
    options.kind = PolicyKind::kSrpt;
  } else if (lower == "ifsrpt") {
    options.kind = PolicyKind::kInelasticFirstSrpt;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown scheduling policy '", name,
                                                   "' (static, fair, hpf, pp, pp-exp, lottery, fcfs, srpt, ifsrpt)"));
  }
  return options;
}

bool RanksByPriority(PolicyKind kind) {
  return kind == PolicyKind::kHighestPriorityFirst || kind == PolicyKind::kProportionalPriority ||
         kind == PolicyKind::kLottery;
}

std::string PolicyName(const PolicyOptions& options) {
  switch (options.kind) {
    case PolicyKind::kStatic:
      return "static";
    case PolicyKind::kFair:
      return "fair";
    case PolicyKind::kHighestPriorityFirst:
      return "hpf";
    case PolicyKind::kProportionalPriority:
      return options.scale == PriorityScale::kLinear ? "pp" : "pp-exp";
    case PolicyKind::kLottery:
      return "lottery";
    case PolicyKind::kFcfs:
      return "fcfs";
    case PolicyKind::kSrpt:
      return "srpt";
    case PolicyKind::kInelasticFirstSrpt:
      return "ifsrpt";
  }
  return "unknown";
}

void ComputePolicyWeights(const PolicyOptions& options, std::span<const PolicyCandidate> candidates,
                          std::span<double> weights, PolicyScratch* scratch) {
  std::fill(weights.begin(), weights.end(), 0.0);
  std::vector<int>& ready = scratch->order;
  ready.clear();
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i) {
    if (candidates[i].ready) ready.push_back(i);
  }
  if (ready.empty()) return;

  switch (options.kind) {
    case PolicyKind::kStatic:
      for (int i : ready) weights[i] = 1.0;
      return;
    case PolicyKind::kFair:
      FairWithinGroup(candidates, ready, weights);
      return;
    case PolicyKind::kLottery: {
      FairWithinGroup(candidates, ready, weights);
      for (int i : ready) weights[i] *= EffectivePriority(candidates[i]);
      return;
    }
    case PolicyKind::kHighestPriorityFirst: {
      int top = 0;
      for (int i : ready) top = std::max(top, EffectivePriority(candidates[i]));
      ready.erase(
          std::remove_if(ready.begin(), ready.end(), [&](int i) { return EffectivePriority(candidates[i]) != top; }),
          ready.end());
      FairWithinGroup(candidates, ready, weights);
      return;
    }
    case PolicyKind::kProportionalPriority:
      ProportionalPriority(options, candidates, weights, ready);
      return;
    case PolicyKind::kFcfs: {
      weights[StrictChoice(candidates, /*by_remaining=*/false, 0, [](const PolicyCandidate&) { return true; })] = 1.0;
      return;
    }
    case PolicyKind::kSrpt: {
      weights[StrictChoice(candidates, /*by_remaining=*/true, options.srpt_aging,
                           [](const PolicyCandidate&) { return true; })] = 1.0;
      return;
    }
    case PolicyKind::kInelasticFirstSrpt: {
      int choice =
          StrictChoice(candidates, true, options.srpt_aging, [](const PolicyCandidate& c) { return c.inelastic; });
      if (choice < 0)
        choice = StrictChoice(candidates, true, options.srpt_aging, [](const PolicyCandidate&) { return true; });
      weights[choice] = 1.0;
      return;
    }
  }
}

}  // namespace tessera
