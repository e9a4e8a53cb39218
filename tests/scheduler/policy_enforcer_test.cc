#include "scheduler/policy_enforcer.h"

#include <gtest/gtest.h>

#include <map>

namespace tessera {
namespace {

PolicyCandidate Ready(double predicted_ns, int priority = 1) {
  PolicyCandidate c;
  c.ready = true;
  c.priority = priority;
  c.has_prediction = true;
  c.predicted_ns = predicted_ns;
  return c;
}

TEST(PolicyEnforcerTest, PickFrequenciesFollowTheProbabilities) {
  PolicyEnforcer enforcer(PolicyOptions{}, /*seed=*/7);  // fair
  int owners[3];
  enforcer.Add(&owners[0], Ready(1e3));
  enforcer.Add(&owners[1], Ready(2e3));
  enforcer.Add(&owners[2], Ready(4e3));
  EXPECT_NEAR(enforcer.Probability(0), 4.0 / 7, 1e-12);
  std::map<void*, int> picks;
  constexpr int kPicks = 200000;
  for (int i = 0; i < kPicks; ++i) ++picks[enforcer.Pick()];
  EXPECT_NEAR(picks[&owners[0]] / double(kPicks), 4.0 / 7, 0.01);
  EXPECT_NEAR(picks[&owners[1]] / double(kPicks), 2.0 / 7, 0.01);
  EXPECT_NEAR(picks[&owners[2]] / double(kPicks), 1.0 / 7, 0.01);
}

TEST(PolicyEnforcerTest, NeverPicksAQueryWithoutReadyWork) {
  PolicyEnforcer enforcer(PolicyOptions{}, 1);
  int a, b;
  enforcer.Add(&a, Ready(1e3));
  enforcer.Add(&b, Ready(1e3));
  enforcer.SetReady(0, false);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(enforcer.Pick(), &b);
  enforcer.SetReady(1, false);
  EXPECT_EQ(enforcer.Pick(), nullptr);
}

TEST(PolicyEnforcerTest, RemoveMovesTheLastSlot) {
  PolicyEnforcer enforcer(PolicyOptions{}, 1);
  int a, b, c;
  enforcer.Add(&a, Ready(1e3));
  enforcer.Add(&b, Ready(1e3));
  enforcer.Add(&c, Ready(5e3));
  EXPECT_EQ(enforcer.Remove(0), &c);  // c now lives in slot 0
  EXPECT_EQ(enforcer.owner(0), &c);
  EXPECT_EQ(enforcer.candidate(0).predicted_ns, 5e3);
  EXPECT_EQ(enforcer.Remove(1), nullptr);  // the last slot: nothing moves
  EXPECT_EQ(enforcer.size(), 1);
  EXPECT_EQ(enforcer.Pick(), &c);
}

TEST(PolicyEnforcerTest, PolicyAndInputChangesTakeEffectAtTheNextPick) {
  PolicyEnforcer enforcer(PolicyOptions{}, 3);
  int low, high;
  enforcer.Add(&low, Ready(1e3, 1));
  enforcer.Add(&high, Ready(1e3, 2));
  EXPECT_NEAR(enforcer.Probability(0), 0.5, 1e-12);
  PolicyOptions hpf;
  hpf.kind = PolicyKind::kHighestPriorityFirst;
  enforcer.SetPolicy(hpf);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(enforcer.Pick(), &high);
  enforcer.mutable_candidate(0).priority = 5;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(enforcer.Pick(), &low);
}

TEST(PolicyEnforcerTest, SameSeedSameSequence) {
  auto run = [](uint64_t seed) {
    PolicyEnforcer enforcer(PolicyOptions{}, seed);
    static int owners[4];
    for (int i = 0; i < 4; ++i) enforcer.Add(&owners[i], Ready(1e3 * (i + 1)));
    std::vector<void*> picks;
    for (int i = 0; i < 100; ++i) picks.push_back(enforcer.Pick());
    return picks;
  };
  EXPECT_EQ(run(11), run(11));
  EXPECT_NE(run(11), run(12));
}

}  // namespace
}  // namespace tessera
