#pragma once
// Autoregression AR(p) for the LearningAgent (dissertation appendix A.5: "linear regression, specifically
// autoregression"): fit x_t - m = sum_{i=1..p} a_i (x_{t-i} - m) by least squares over a window, m the window
// mean, with a tiny ridge term so that constant or collinear windows give a = 0 (prediction m) instead of a
// singular system. p <= kMaxAutoregressionOrder; no allocation.

#include <span>

namespace tessera {

inline constexpr int kMaxAutoregressionOrder = 8;

struct AutoregressionModel {
  int order = 0;  // 0 until fitted: predicts the mean
  double mean = 0;
  double coefficients[kMaxAutoregressionOrder] = {};
};

// Fits `order` coefficients on `series` (oldest first). Needs at least 2 * order + 1 values, else fits order
// 0 (the mean). Returns the fitted model.
AutoregressionModel FitAutoregression(std::span<const double> series, int order);

// One-step-ahead prediction after the last value of `series` (oldest first; at least model.order values).
double PredictAutoregression(const AutoregressionModel& model, std::span<const double> series);

}  // namespace tessera
