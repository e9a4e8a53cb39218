#include "scheduler/policy.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace tessera {
namespace {

PolicyCandidate Ready(double predicted_ns, int priority = 1, uint64_t arrival = 0) {
  PolicyCandidate c;
  c.ready = true;
  c.priority = priority;
  c.arrival = arrival;
  c.has_prediction = predicted_ns > 0;
  c.predicted_ns = predicted_ns;
  return c;
}

std::vector<double> Probabilities(const PolicyOptions& options, const std::vector<PolicyCandidate>& candidates) {
  std::vector<double> weights(candidates.size());
  PolicyScratch scratch;
  ComputePolicyWeights(options, candidates, weights, &scratch);
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (sum > 0) {
    for (double& w : weights) w /= sum;
  }
  return weights;
}

PolicyOptions Policy(const std::string& name) {
  absl::StatusOr<PolicyOptions> options = ParsePolicy(name);
  EXPECT_TRUE(options.ok()) << options.status();
  return *options;
}

// Expected CPU share of each candidate: p_j * t_j normalised.
std::vector<double> CpuShares(const std::vector<double>& p, const std::vector<PolicyCandidate>& candidates) {
  std::vector<double> share(p.size());
  double sum = 0;
  for (size_t i = 0; i < p.size(); ++i) sum += share[i] = p[i] * candidates[i].predicted_ns;
  for (double& s : share) s /= sum;
  return share;
}

TEST(PolicyTest, ParsesEveryPolicyName) {
  for (const char* name : {"static", "fair", "hpf", "pp", "pp-exp", "lottery", "fcfs", "srpt", "ifsrpt"}) {
    EXPECT_EQ(PolicyName(Policy(name)), name);
  }
  EXPECT_EQ(PolicyName(Policy("PP-Linear")), "pp");
  absl::StatusOr<PolicyOptions> bad = ParsePolicy("fastest");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("fastest"), std::string::npos);
}

TEST(PolicyTest, StaticIsUniformOverReadyQueries) {
  std::vector<PolicyCandidate> c = {Ready(1), Ready(100), Ready(5)};
  c[2].ready = false;
  EXPECT_EQ(Probabilities(Policy("static"), c), (std::vector<double>{0.5, 0.5, 0.0}));
}

TEST(PolicyTest, FairIsInverseToPredictedTime) {
  std::vector<PolicyCandidate> c = {Ready(1e3), Ready(2e3), Ready(4e3)};
  std::vector<double> p = Probabilities(Policy("fair"), c);
  EXPECT_NEAR(p[0] + p[1] + p[2], 1.0, 1e-12);
  EXPECT_NEAR(p[0] / p[1], 2.0, 1e-9);  // pb_i / pb_j = t_j / t_i
  EXPECT_NEAR(p[1] / p[2], 2.0, 1e-9);
  for (double share : CpuShares(p, c)) EXPECT_NEAR(share, 1.0 / 3, 1e-9);
}

TEST(PolicyTest, FairUsesDefaultProbabilitiesUntilEveryQueryHasAPrediction) {
  std::vector<PolicyCandidate> c = {Ready(1e3), Ready(0)};
  EXPECT_EQ(Probabilities(Policy("fair"), c), (std::vector<double>{0.5, 0.5}));
}

TEST(PolicyTest, NoReadyQueryMeansAllZero) {
  std::vector<PolicyCandidate> c = {Ready(1e3), Ready(2e3)};
  for (auto& x : c) x.ready = false;
  for (const char* name : {"static", "fair", "hpf", "pp", "lottery", "fcfs", "srpt", "ifsrpt"}) {
    EXPECT_EQ(Probabilities(Policy(name), c), (std::vector<double>{0, 0})) << name;
  }
}

TEST(PolicyTest, HighestPriorityFirstServesOnlyTheTopReadyLevelFairly) {
  std::vector<PolicyCandidate> c = {Ready(1e3, 1), Ready(1e3, 3), Ready(3e3, 3), Ready(1e3, 2)};
  std::vector<double> p = Probabilities(Policy("hpf"), c);
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[3], 0);
  EXPECT_NEAR(p[1], 0.75, 1e-12);
  EXPECT_NEAR(p[2], 0.25, 1e-12);
  // The top level has no ready work order: the next level fills the workers.
  c[1].ready = c[2].ready = false;
  p = Probabilities(Policy("hpf"), c);
  EXPECT_EQ(p, (std::vector<double>{0, 0, 0, 1}));
}

TEST(PolicyTest, ProportionalPriorityGivesClassesCpuProportionalToPriority) {
  // Class 1: t = 1, 3; class 2: t = 2 (the dissertation's formula with the class's expected work-order time).
  std::vector<PolicyCandidate> c = {Ready(1e3, 1), Ready(3e3, 1), Ready(2e3, 2)};
  std::vector<double> p = Probabilities(Policy("pp"), c);
  std::vector<double> cpu = CpuShares(p, c);
  EXPECT_NEAR(cpu[0] + cpu[1], 1.0 / 3, 1e-9);
  EXPECT_NEAR(cpu[2], 2.0 / 3, 1e-9);
  EXPECT_NEAR(cpu[0], cpu[1], 1e-9);  // fair inside a class

  // Equal t_j: exactly the textbook n_PV = t_PV / w_PV with w = mean t.
  c = {Ready(2e3, 1), Ready(2e3, 2), Ready(2e3, 4)};
  p = Probabilities(Policy("pp"), c);
  EXPECT_NEAR(p[0], 1.0 / 7, 1e-9);
  EXPECT_NEAR(p[1], 2.0 / 7, 1e-9);
  EXPECT_NEAR(p[2], 4.0 / 7, 1e-9);
}

TEST(PolicyTest, ProportionalPriorityExponentialScale) {
  std::vector<PolicyCandidate> c = {Ready(1e3, 1), Ready(5e3, 2), Ready(2e3, 3)};
  std::vector<double> cpu = CpuShares(Probabilities(Policy("pp-exp"), c), c);
  EXPECT_NEAR(cpu[0], 1.0 / 7, 1e-9);
  EXPECT_NEAR(cpu[1], 2.0 / 7, 1e-9);
  EXPECT_NEAR(cpu[2], 4.0 / 7, 1e-9);
}

TEST(PolicyTest, ProportionalPriorityColdStartIsPriorityProportionalPicks) {
  std::vector<PolicyCandidate> c = {Ready(1e3, 1), Ready(0, 3)};
  std::vector<double> p = Probabilities(Policy("pp"), c);
  EXPECT_NEAR(p[0], 0.25, 1e-12);
  EXPECT_NEAR(p[1], 0.75, 1e-12);
}

TEST(PolicyTest, LotteryGivesCpuProportionalToTickets) {
  std::vector<PolicyCandidate> c = {Ready(1e3, 1), Ready(4e3, 3)};
  std::vector<double> cpu = CpuShares(Probabilities(Policy("lottery"), c), c);
  EXPECT_NEAR(cpu[0], 0.25, 1e-9);
  EXPECT_NEAR(cpu[1], 0.75, 1e-9);
}

TEST(PolicyTest, FcfsServesTheEarliestReadyArrival) {
  std::vector<PolicyCandidate> c = {Ready(1e3, 1, 5), Ready(1e3, 1, 2), Ready(1e3, 1, 1)};
  c[2].ready = false;
  EXPECT_EQ(Probabilities(Policy("fcfs"), c), (std::vector<double>{0, 1, 0}));
}

TEST(PolicyTest, SrptServesTheLeastRemainingWorkAndRanksUnknownLast) {
  std::vector<PolicyCandidate> c = {Ready(1e3, 1, 0), Ready(1e3, 1, 1), Ready(1e3, 1, 2), Ready(1e3, 1, 3)};
  c[0].remaining_ns = 5e6;
  c[1].remaining_ns = 2e6;
  c[2].remaining_ns = -1;
  c[3].remaining_ns = 2e6;  // tie with [1]: the earlier arrival wins
  EXPECT_EQ(Probabilities(Policy("srpt"), c), (std::vector<double>{0, 1, 0, 0}));
  c[0].remaining_ns = c[1].remaining_ns = c[3].remaining_ns = -1;
  EXPECT_EQ(Probabilities(Policy("srpt"), c), (std::vector<double>{1, 0, 0, 0}));
}

// Aging: a query's remaining work counts srpt_aging ns less per ns it has waited, so a long query is not
// starved by a stream of shorter newer ones; with aging 0 the order is by size alone.
TEST(PolicyTest, SrptAgesRemainingWorkByTheTimeWaited) {
  std::vector<PolicyCandidate> c = {Ready(1e3, 1, 0), Ready(1e3, 1, 1)};
  c[0].remaining_ns = 100e6;  // long, arrived at 0
  c[0].arrival_ns = 0;
  c[1].remaining_ns = 10e6;  // 90 ms shorter
  PolicyOptions options = Policy("srpt");
  ASSERT_EQ(options.srpt_aging, 0.25);
  c[1].arrival_ns = 300'000'000;  // 300 ms later: 0.25 x 300 ms of aging does not make up 90 ms
  EXPECT_EQ(Probabilities(options, c), (std::vector<double>{0, 1}));
  c[1].arrival_ns = 400'000'000;  // 400 ms later: 100 ms of aging does
  EXPECT_EQ(Probabilities(options, c), (std::vector<double>{1, 0}));
  options.srpt_aging = 0;
  EXPECT_EQ(Probabilities(options, c), (std::vector<double>{0, 1}));
}

TEST(PolicyTest, InelasticFirstSrptPrefersAnInelasticQueryOverAShorterElasticOne) {
  std::vector<PolicyCandidate> c = {Ready(1e3, 1, 0), Ready(1e3, 1, 1), Ready(1e3, 1, 2)};
  c[0].remaining_ns = 1e3;  // tiny, elastic: SRPT's choice
  c[1].remaining_ns = 1e9;  // huge, inelastic
  c[1].inelastic = true;
  c[2].remaining_ns = 1e8;  // inelastic and shorter than [1]
  c[2].inelastic = true;
  EXPECT_EQ(Probabilities(Policy("srpt"), c), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(Probabilities(Policy("ifsrpt"), c), (std::vector<double>{0, 0, 1}));
  c[1].inelastic = c[2].inelastic = false;
  EXPECT_EQ(Probabilities(Policy("ifsrpt"), c), (std::vector<double>{1, 0, 0}));
}

}  // namespace
}  // namespace tessera
