#include "scheduler/autoregression.h"

#include <algorithm>
#include <cmath>

namespace tessera {

AutoregressionModel FitAutoregression(std::span<const double> series, int order) {
  AutoregressionModel model;
  const int n = static_cast<int>(series.size());
  if (n == 0) return model;
  double mean = 0;
  for (double x : series) mean += x;
  mean /= n;
  model.mean = mean;
  order = std::clamp(order, 0, kMaxAutoregressionOrder);
  if (n < 2 * order + 1 || order == 0) return model;

  // Normal equations A a = b with A[i][j] = sum_t y_{t-1-i} y_{t-1-j}, b[i] = sum_t y_t y_{t-1-i}.
  double a[kMaxAutoregressionOrder][kMaxAutoregressionOrder + 1] = {};
  double energy = 0;
  for (int t = order; t < n; ++t) {
    const double y = series[t] - mean;
    energy += y * y;
    for (int i = 0; i < order; ++i) {
      const double yi = series[t - 1 - i] - mean;
      for (int j = 0; j < order; ++j) a[i][j] += yi * (series[t - 1 - j] - mean);
      a[i][order] += y * yi;
    }
  }
  // Ridge: relative to the window's energy, plus an absolute floor for an all-constant window.
  const double ridge = 1e-6 * energy / (n - order) + 1e-12;
  for (int i = 0; i < order; ++i) a[i][i] += ridge;
  // Gaussian elimination with partial pivoting.
  for (int col = 0; col < order; ++col) {
    int pivot = col;
    for (int row = col + 1; row < order; ++row) {
      if (std::fabs(a[row][col]) > std::fabs(a[pivot][col])) pivot = row;
    }
    if (std::fabs(a[pivot][col]) < 1e-300) return model;  // degenerate: keep the mean
    if (pivot != col) {
      for (int k = 0; k <= order; ++k) std::swap(a[col][k], a[pivot][k]);
    }
    for (int row = col + 1; row < order; ++row) {
      const double factor = a[row][col] / a[col][col];
      for (int k = col; k <= order; ++k) a[row][k] -= factor * a[col][k];
    }
  }
  for (int row = order - 1; row >= 0; --row) {
    double value = a[row][order];
    for (int k = row + 1; k < order; ++k) value -= a[row][k] * model.coefficients[k];
    model.coefficients[row] = value / a[row][row];
  }
  model.order = order;
  return model;
}

double PredictAutoregression(const AutoregressionModel& model, std::span<const double> series) {
  double prediction = model.mean;
  const int n = static_cast<int>(series.size());
  for (int i = 0; i < model.order && i < n; ++i) {
    prediction += model.coefficients[i] * (series[n - 1 - i] - model.mean);
  }
  return prediction;
}

}  // namespace tessera
