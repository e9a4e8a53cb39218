#include "scheduler/learning_agent.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "scheduler/autoregression.h"

namespace tessera {
namespace {

TEST(AutoregressionTest, ConstantWindowPredictsTheConstant) {
  std::vector<double> series(20, 500.0);
  AutoregressionModel model = FitAutoregression(series, 2);
  EXPECT_NEAR(PredictAutoregression(model, series), 500.0, 1e-6);
}

TEST(AutoregressionTest, RecoversAnAr1Coefficient) {
  // x_t - 100 = 0.8 (x_{t-1} - 100), started away from the mean, no noise.
  std::vector<double> series;
  double x = 200;
  for (int i = 0; i < 30; ++i) {
    series.push_back(x);
    x = 100 + 0.8 * (x - 100);
  }
  AutoregressionModel model = FitAutoregression(series, 1);
  ASSERT_EQ(model.order, 1);
  // The fit centres on the window mean rather than 100, so it is close, not exact; still far better than the
  // mean.
  EXPECT_NEAR(model.coefficients[0], 0.8, 0.1);
  EXPECT_LT(std::fabs(PredictAutoregression(model, series) - x), 0.3 * std::fabs(model.mean - x));
}

TEST(AutoregressionTest, Ar2ExtrapolatesALinearTrend) {
  std::vector<double> series;
  for (int i = 0; i < 32; ++i) series.push_back(1000 + 10 * i);
  AutoregressionModel model = FitAutoregression(series, 2);
  EXPECT_NEAR(PredictAutoregression(model, series), 1000 + 10 * 32, 1.0);
}

TEST(AutoregressionTest, TooFewValuesFitsTheMean) {
  std::vector<double> series = {1, 2, 3};
  AutoregressionModel model = FitAutoregression(series, 2);
  EXPECT_EQ(model.order, 0);
  EXPECT_DOUBLE_EQ(PredictAutoregression(model, series), 2.0);
}

TEST(LearningAgentTest, NoPredictionBeforeTheFirstRecord) {
  LearningAgent agent(LearningAgentOptions{});
  LearningAgent::QueryHistory* query = agent.AddQuery();
  double predicted;
  EXPECT_FALSE(agent.Predict(query, &predicted));
  agent.Record(query, 0, 1000);
  ASSERT_TRUE(agent.Predict(query, &predicted));
  EXPECT_EQ(predicted, 1000);
}

// Operator ids come from SQL plans: a huge or negative id must neither abort the process nor grow the table.
TEST(LearningAgentTest, OutOfRangeOperatorIdsAreIgnored) {
  LearningAgent agent(LearningAgentOptions{});
  LearningAgent::QueryHistory* query = agent.AddQuery();
  agent.Record(query, 655'301, 1000);
  agent.Record(query, -1, 1000);
  agent.RemoveOperator(query, 655'301);
  double predicted;
  EXPECT_FALSE(agent.Predict(query, &predicted));
  agent.Record(query, 3, 2000);
  ASSERT_TRUE(agent.Predict(query, 655'301, &predicted));
  EXPECT_EQ(predicted, 2000);
}

TEST(LearningAgentTest, BothPredictorsConvergeOnConstantDurations) {
  for (PredictorKind kind : {PredictorKind::kWindowMean, PredictorKind::kAutoregression}) {
    LearningAgentOptions options;
    options.predictor = kind;
    LearningAgent agent(options);
    LearningAgent::QueryHistory* query = agent.AddQuery();
    // A noisy start, then constant: the window forgets the start.
    for (int i = 0; i < 10; ++i) agent.Record(query, 0, 1000 + 500 * (i % 3));
    for (int i = 0; i < 100; ++i) agent.Record(query, 0, 40'000);
    double predicted;
    ASSERT_TRUE(agent.Predict(query, &predicted));
    EXPECT_NEAR(predicted, 40'000, 1.0) << PredictorName(kind);
    EXPECT_GT(agent.stats(query).records, 0);
  }
}

TEST(LearningAgentTest, WindowMeanPoolsTheLastTenOfEveryActiveOperator) {
  LearningAgent agent(LearningAgentOptions{});
  LearningAgent::QueryHistory* query = agent.AddQuery();
  for (int i = 0; i < 25; ++i) agent.Record(query, 0, i < 15 ? 999'999 : 100);  // last 10 are 100
  for (int i = 0; i < 5; ++i) agent.Record(query, 1, 400);
  double predicted;
  ASSERT_TRUE(agent.Predict(query, &predicted));
  EXPECT_DOUBLE_EQ(predicted, (10 * 100.0 + 5 * 400.0) / 15);
  // Operator 0 finished: its history goes (dissertation A.5).
  agent.RemoveOperator(query, 0);
  ASSERT_TRUE(agent.Predict(query, &predicted));
  EXPECT_DOUBLE_EQ(predicted, 400);
  // No active operator: the last prediction is kept.
  agent.RemoveOperator(query, 1);
  ASSERT_TRUE(agent.Predict(query, &predicted));
  EXPECT_DOUBLE_EQ(predicted, 400);
  // A new phase replaces it at once.
  agent.Record(query, 2, 7);
  ASSERT_TRUE(agent.Predict(query, &predicted));
  EXPECT_DOUBLE_EQ(predicted, 7);
}

// Q4.1's shape in SSB: a short operator (two ~20 us work orders, the second only when the probe ends) stays
// active through the whole probe phase. Its samples stay in the pooled mean, which then under-predicts every
// probe work order; the probe's own window does not.
TEST(LearningAgentTest, NextOperatorPredictionIgnoresAShortOperatorThatStaysActive) {
  for (PredictionScope scope : {PredictionScope::kNextOperator, PredictionScope::kPooled}) {
    LearningAgentOptions options;
    options.scope = scope;
    LearningAgent agent(options);
    LearningAgent::QueryHistory* query = agent.AddQuery();
    agent.Record(query, 1, 20'000);
    agent.Record(query, 1, 20'000);
    for (int i = 0; i < 40; ++i) agent.Record(query, 0, 400'000);
    const double pooled = (10 * 400'000.0 + 2 * 20'000.0) / 12;
    double predicted;
    ASSERT_TRUE(agent.Predict(query, 0, &predicted));
    EXPECT_DOUBLE_EQ(predicted, scope == PredictionScope::kNextOperator ? 400'000 : pooled)
        << PredictionScopeName(scope);
    // Too little history of the next operator (2 < min_operator_records), an unknown next operator, or one
    // never seen: the pooled prediction.
    ASSERT_TRUE(agent.Predict(query, 1, &predicted));
    EXPECT_DOUBLE_EQ(predicted, pooled);
    ASSERT_TRUE(agent.Predict(query, -1, &predicted));
    EXPECT_DOUBLE_EQ(predicted, pooled);
    ASSERT_TRUE(agent.Predict(query, 7, &predicted));
    EXPECT_DOUBLE_EQ(predicted, pooled);
    // Once the operator has enough history it predicts itself.
    agent.Record(query, 1, 20'000);
    ASSERT_TRUE(agent.Predict(query, 1, &predicted));
    EXPECT_DOUBLE_EQ(predicted,
                     scope == PredictionScope::kNextOperator ? 20'000 : (10 * 400'000.0 + 3 * 20'000.0) / 13);
  }
}

TEST(LearningAgentTest, NextOperatorScopeAppliesToAutoregressionToo) {
  LearningAgentOptions options;
  options.predictor = PredictorKind::kAutoregression;
  LearningAgent agent(options);
  LearningAgent::QueryHistory* query = agent.AddQuery();
  for (int i = 0; i < 5; ++i) agent.Record(query, 1, 1'000);
  for (int i = 0; i < 40; ++i) agent.Record(query, 0, 100'000);
  double predicted;
  ASSERT_TRUE(agent.Predict(query, 0, &predicted));
  EXPECT_NEAR(predicted, 100'000, 1.0);
  ASSERT_TRUE(agent.Predict(query, -1, &predicted));  // weighted by record count: 32 and 5
  EXPECT_NEAR(predicted, (32 * 100'000.0 + 5 * 1'000.0) / 37, 1.0);
}

// Two active operators whose work orders alternate: the pooled mean is wrong for every one of them, the
// recorded operator's own mean is right; the error statistics score the prediction the scope makes.
TEST(LearningAgentTest, PredictionErrorScoresThePredictionOfTheScopeInUse) {
  double mean_absolute_error[2];
  for (PredictionScope scope : {PredictionScope::kNextOperator, PredictionScope::kPooled}) {
    LearningAgentOptions options;
    options.scope = scope;
    LearningAgent agent(options);
    LearningAgent::QueryHistory* query = agent.AddQuery();
    for (int i = 0; i < 200; ++i) agent.Record(query, i % 2, i % 2 == 0 ? 1'000 : 100);
    const PredictionError& error = agent.stats(query).mean_error;
    EXPECT_EQ(error.count, 199);
    mean_absolute_error[static_cast<int>(scope)] = error.MeanAbsoluteErrorNs();
  }
  // Pooled: 550 predicted for both, 450 off. Per operator: exact after the first 3 records of each.
  EXPECT_NEAR(mean_absolute_error[static_cast<int>(PredictionScope::kPooled)], 450, 10);
  EXPECT_LT(mean_absolute_error[static_cast<int>(PredictionScope::kNextOperator)], 20);
}

TEST(LearningAgentTest, QueriesAreIndependent) {
  LearningAgent agent(LearningAgentOptions{});
  LearningAgent::QueryHistory* a = agent.AddQuery();
  LearningAgent::QueryHistory* b = agent.AddQuery();
  agent.Record(a, 0, 100);
  agent.Record(b, 0, 900);
  agent.RemoveQuery(a);
  double predicted;
  ASSERT_TRUE(agent.Predict(b, &predicted));
  EXPECT_EQ(predicted, 900);
}

TEST(LearningAgentTest, ReportsPredictionErrorAndAutoregressionWinsOnATrend) {
  LearningAgentOptions options;
  options.evaluate_both_predictors = true;
  LearningAgent agent(options);
  LearningAgent::QueryHistory* query = agent.AddQuery();
  // Work orders that grow steadily (e.g. a probe whose hash table keeps growing).
  for (int i = 0; i < 400; ++i) agent.Record(query, 0, 10'000 + 50 * i);
  const QueryLearningStats& stats = agent.stats(query);
  EXPECT_EQ(stats.mean_error.count, 399);  // every record but the first was predicted
  EXPECT_EQ(stats.autoregression_error.count, 399);
  // The window mean lags a trend by half its window (~5 steps of 50 ns); AR(2) follows it.
  EXPECT_NEAR(stats.mean_error.MeanAbsoluteErrorNs(), 275, 30);
  EXPECT_LT(stats.autoregression_error.MeanAbsoluteErrorNs(), 0.5 * stats.mean_error.MeanAbsoluteErrorNs());
  EXPECT_EQ(agent.total_error(PredictorKind::kWindowMean).count, 399);
  EXPECT_GT(stats.mean_error.MeanRelativeError(), 0);
}

TEST(LearningAgentTest, APreemptionSpikeIsClampedButAPhaseChangeIsLearned) {
  LearningAgent agent(LearningAgentOptions{});  // outlier_factor 8
  LearningAgent::QueryHistory* query = agent.AddQuery();
  for (int i = 0; i < 20; ++i) agent.Record(query, 0, 1000);
  agent.Record(query, 0, 5'000'000);  // one work order stretched by a preemption
  double predicted;
  ASSERT_TRUE(agent.Predict(query, &predicted));
  EXPECT_LE(predicted, (9 * 1000.0 + 8 * 1000.0) / 10 + 1);
  // The error statistics still see the real duration of what follows.
  for (int i = 0; i < 30; ++i) agent.Record(query, 0, 50'000);  // a genuine 50x phase change
  ASSERT_TRUE(agent.Predict(query, &predicted));
  EXPECT_EQ(predicted, 50'000);
}

TEST(LearningAgentTest, GlobalMeanTracksAllRecords) {
  LearningAgent agent(LearningAgentOptions{});
  EXPECT_EQ(agent.global_mean_ns(), 0);
  LearningAgent::QueryHistory* query = agent.AddQuery();
  for (int i = 0; i < 1000; ++i) agent.Record(query, 0, 2000);
  EXPECT_NEAR(agent.global_mean_ns(), 2000, 1e-6);
}

TEST(LearningAgentTest, OperatorCostsAreOwnThenRememberedByPlanSignature) {
  LearningAgent agent(LearningAgentOptions{});
  LearningAgent::QueryHistory* first = agent.AddQuery(/*plan_signature=*/7);
  double cost;
  EXPECT_FALSE(agent.PredictOperatorCost(first, 1, &cost));  // nothing measured anywhere
  for (int i = 0; i < 5; ++i) agent.Record(first, 1, 3000);
  ASSERT_TRUE(agent.PredictOperatorCost(first, 1, &cost));  // its own window mean
  EXPECT_EQ(cost, 3000);
  agent.RemoveOperator(first, 1);  // finished: remembered under plan 7
  agent.RemoveQuery(first);

  LearningAgent::QueryHistory* same_plan = agent.AddQuery(7);
  LearningAgent::QueryHistory* other_plan = agent.AddQuery(8);
  LearningAgent::QueryHistory* no_plan = agent.AddQuery();
  ASSERT_TRUE(agent.PredictOperatorCost(same_plan, 1, &cost));
  EXPECT_EQ(cost, 3000);
  EXPECT_FALSE(agent.PredictOperatorCost(same_plan, 0, &cost));  // another operator of the plan
  EXPECT_FALSE(agent.PredictOperatorCost(other_plan, 1, &cost));
  EXPECT_FALSE(agent.PredictOperatorCost(no_plan, 1, &cost));
  // Its own records win over the remembered cost; when it finishes, the memory averages the two runs.
  for (int i = 0; i < 4; ++i) agent.Record(same_plan, 1, 1000);
  ASSERT_TRUE(agent.PredictOperatorCost(same_plan, 1, &cost));
  EXPECT_EQ(cost, 1000);
  agent.RemoveOperator(same_plan, 1);
  LearningAgent::QueryHistory* third = agent.AddQuery(7);
  ASSERT_TRUE(agent.PredictOperatorCost(third, 1, &cost));
  EXPECT_EQ(cost, 2000);
}

TEST(LearningAgentTest, RemainingTimeUsesThePlansRememberedWorkOrderCountsOverTheEstimate) {
  LearningAgent agent(LearningAgentOptions{});
  // A first run of plan 7: operator 0 ran 10 work orders of 1000 ns, operator 1 100 of 50 ns.
  LearningAgent::QueryHistory* first = agent.AddQuery(7);
  for (int i = 0; i < 10; ++i) agent.Record(first, 0, 1000);
  agent.RemoveOperator(first, 0);
  for (int i = 0; i < 100; ++i) agent.Record(first, 1, 50);
  agent.RemoveOperator(first, 1);
  agent.RemoveQuery(first);

  // The plan's estimate says 3 and 500 work orders; the remembered counts win (less what is done), and an
  // operator no earlier run finished (2) keeps the estimate at the fallback cost.
  LearningAgent::QueryHistory* again = agent.AddQuery(7);
  const std::vector<int64_t> estimate = {3, 500, 4};
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(again, estimate, /*fallback_ns=*/200), 10 * 1000 + 100 * 50 + 4 * 200);
  for (int i = 0; i < 4; ++i) agent.Record(again, 0, 1000);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(again, estimate, 200), 6 * 1000 + 100 * 50 + 4 * 200);
  // Finished operators (nothing remaining) count nothing; an operator past its remembered count keeps one.
  for (int i = 0; i < 8; ++i) agent.Record(again, 0, 1000);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(again, {5, 0, 0}, 200), 1 * 1000);

  // Without a plan signature: the estimate x the operators' own costs.
  LearningAgent::QueryHistory* unknown = agent.AddQuery();
  for (int i = 0; i < 3; ++i) agent.Record(unknown, 0, 400);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(unknown, {5, 2}, 100), 5 * 400 + 2 * 100);
}

TEST(LearningAgentTest, RemainingEstimateErrorComparesSampledEstimatesWithWhatFollowed) {
  LearningAgent agent(LearningAgentOptions{});
  LearningAgent::QueryHistory* query = agent.AddQuery();
  // 8 work orders of 1000 ns. Estimates sampled at 0, 1, 2, 4 records (not at 3: between samples).
  agent.NoteRemainingEstimate(query, 8000);  // exact, at 0 done (stage 0)
  agent.Record(query, 0, 1000);
  agent.NoteRemainingEstimate(query, 14000);  // 2x the 7000 left (stage 0)
  agent.Record(query, 0, 1000);
  agent.NoteRemainingEstimate(query, 6000);  // exact (stage 1: 2/8 done)
  agent.Record(query, 0, 1000);
  agent.NoteRemainingEstimate(query, 1);  // not sampled
  agent.Record(query, 0, 1000);
  agent.NoteRemainingEstimate(query, 2000);  // half the 4000 left (stage 2)
  for (int i = 0; i < 4; ++i) agent.Record(query, 0, 1000);
  agent.RemoveQuery(query);
  const RemainingEstimateError& error = agent.remaining_estimate_error();
  EXPECT_EQ(error.count[0], 2);
  EXPECT_EQ(error.count[1], 1);
  EXPECT_EQ(error.count[2], 1);
  EXPECT_EQ(error.count[3], 0);
  EXPECT_DOUBLE_EQ(error.MeanRelative(0), 0.5);
  EXPECT_DOUBLE_EQ(error.GeometricBias(0), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(error.MeanRelative(2), 0.5);
  EXPECT_DOUBLE_EQ(error.GeometricBias(2), 0.5);
}

// The oracle yardstick of experiment 5: the plan's fastest finished query's total time x the share of its work
// orders not yet done; before any query of the plan finished, the staged estimate.
TEST(LearningAgentTest, TheOracleIsThePlansFastestTotalTimesTheWorkOrdersLeft) {
  LearningAgent agent(LearningAgentOptions{});
  LearningAgent::QueryHistory* unknown = agent.AddQuery(7);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(unknown, {3}, 1000, RemainingEstimate::kOracle),
                   agent.EstimateRemainingNs(unknown, {3}, 1000));
  agent.RemoveQuery(unknown);
  for (int64_t cost : {2000, 1000, 3000}) {  // the fastest (4 x 1000 ns) is the plan's total
    LearningAgent::QueryHistory* done = agent.AddQuery(7);
    for (int i = 0; i < 4; ++i) agent.Record(done, 0, cost);
    agent.RemoveQuery(done);
  }
  LearningAgent::QueryHistory* query = agent.AddQuery(7);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(query, {1}, 1000, RemainingEstimate::kOracle), 4000);
  agent.Record(query, 0, 5000);  // slowed by interference: only the count matters
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(query, {1}, 1000, RemainingEstimate::kOracle), 3000);
  for (int i = 0; i < 4; ++i) agent.Record(query, 0, 1000);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(query, {1}, 1000, RemainingEstimate::kOracle), 4000.0 / 64);
  agent.RemoveQuery(query);
}

TEST(LearningAgentTest, APlansEstimatesAreCorrectedByHowTheyErredBefore) {
  LearningAgent agent(LearningAgentOptions{});
  // Plan 9 estimates half of what follows: 2 work orders of operator 0 estimated, 4 of 1000 ns run.
  LearningAgent::QueryHistory* first = agent.AddQuery(9);
  agent.NoteRemainingEstimate(first, agent.EstimateRemainingNs(first, {2}, /*fallback_ns=*/1000));  // 2000 of 4000
  for (int i = 0; i < 4; ++i) agent.Record(first, 0, 1000);
  agent.RemoveQuery(first);  // operator 0 was not finished: no remembered count, only the correction

  LearningAgent::QueryHistory* second = agent.AddQuery(9);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(second, {2}, 1000), 4000) << "scaled by actual / estimate = 2";
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(second, {2}, 1000, RemainingEstimate::kPlanCounts), 2000);
  // Its samples learn from the raw estimate: the same bias, the same correction.
  agent.NoteRemainingEstimate(second, agent.EstimateRemainingNs(second, {2}, 1000));
  for (int i = 0; i < 4; ++i) agent.Record(second, 0, 1000);
  agent.RemoveQuery(second);
  LearningAgent::QueryHistory* third = agent.AddQuery(9);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(third, {2}, 1000), 4000);
  LearningAgent::QueryHistory* other_plan = agent.AddQuery(10);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(other_plan, {2}, 1000), 2000);
}

TEST(LearningAgentTest, APlansCorrectionIsLearnedPerStageOfLife) {
  LearningAgent agent(LearningAgentOptions{});
  // Plan 11 runs 10 work orders of 1000 ns. Estimated at its start it runs 2x longer than estimated (5000 of
  // 10000); estimated in its last quarter, 0.5x (2000 of the last 1000).
  LearningAgent::QueryHistory* first = agent.AddQuery(11);
  agent.NoteRemainingEstimate(first, agent.EstimateRemainingNs(first, {5}, /*fallback_ns=*/1000));
  for (int i = 0; i < 9; ++i) agent.Record(first, 0, 1000);
  agent.NoteRemainingEstimate(first, agent.EstimateRemainingNs(first, {2}, 1000));  // 9000 / 11000 done: stage 3
  agent.Record(first, 0, 1000);
  agent.RemoveQuery(first);

  LearningAgent::QueryHistory* second = agent.AddQuery(11);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(second, {5}, 1000), 10000) << "stage 0's correction: x2";
  for (int i = 0; i < 12; ++i) agent.Record(second, 0, 1000);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(second, {2}, 1000), 1000) << "12000 / 14000 done: stage 3's, x0.5";
  // One factor per plan (the first step) applies the mean of the two corrections, x1, at every stage.
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(second, {2}, 1000, RemainingEstimate::kPlanCorrection), 2000);
  EXPECT_DOUBLE_EQ(agent.EstimateRemainingNs(second, {5}, 1000, RemainingEstimate::kPlanCorrection), 5000);
}

TEST(LearningAgentTest, AnOperatorsFirstWorkOrdersBlendWithItsRememberedCost) {
  LearningAgentOptions options;
  options.mean_window = 4;
  LearningAgent agent(options);
  LearningAgent::QueryHistory* first = agent.AddQuery(/*plan_signature=*/5);
  for (int i = 0; i < 4; ++i) agent.Record(first, 0, 1000);
  agent.RemoveOperator(first, 0);
  agent.RemoveQuery(first);
  LearningAgent::QueryHistory* second = agent.AddQuery(5);
  agent.Record(second, 0, 5000);  // one cold work order
  double cost;
  ASSERT_TRUE(agent.PredictOperatorCost(second, 0, &cost));
  EXPECT_EQ(cost, 5000);
  ASSERT_TRUE(agent.PredictOperatorCost(second, 0, &cost, /*blend=*/true));
  EXPECT_EQ(cost, (5000 + 3 * 1000) / 4);
  for (int i = 0; i < 3; ++i) agent.Record(second, 0, 2000);
  ASSERT_TRUE(agent.PredictOperatorCost(second, 0, &cost, /*blend=*/true));
  EXPECT_EQ(cost, (5000 + 3 * 2000) / 4) << "a full window is the operator's own";
}

}  // namespace
}  // namespace tessera
