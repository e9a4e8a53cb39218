#include "query_execution/memory_estimate.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace tessera {
namespace {

constexpr int64_t kAssumedStringBytes = 32;
constexpr int64_t kMaxBytes = OperatorEstimate::kMaxEstimateBytes;  // estimates saturate here instead of overflowing

int64_t SaturatingAdd(int64_t a, int64_t b) { return a > kMaxBytes - b ? kMaxBytes : a + b; }
constexpr int64_t kStringOffsetBytes = 4;

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

int64_t EstimatedRowBytes(const std::vector<Type>& types) {
  int64_t bytes = 0;
  for (const Type& type : types) {
    bytes += 1;  // null flag
    if (type.FixedWidth() > 0) {
      bytes += type.FixedWidth();
    } else if (type.id() == TypeId::kChar) {
      bytes += type.length() + kStringOffsetBytes;
    } else if (type.IsString()) {
      const int64_t length = type.length() == 0 ? kAssumedStringBytes
                                                : std::min<int64_t>(type.length(), kAssumedStringBytes);
      bytes += length + kStringOffsetBytes;
    }
  }
  return bytes;
}

int64_t EstimatedBytes(double rows, int64_t row_bytes) {
  if (!(rows > 0) || row_bytes <= 0) return 0;
  const double bytes = std::ceil(rows) * static_cast<double>(row_bytes);
  return bytes >= static_cast<double>(kMaxBytes) ? kMaxBytes : static_cast<int64_t>(bytes);
}

QueryMemoryEstimate EstimateQueryMemory(const ExecutionDag& dag) {
  const int n = dag.size();
  QueryMemoryEstimate result;
  for (int i = 0; i < n; ++i) result.max_bytes = SaturatingAdd(result.max_bytes, dag.estimate(i).bytes());

  // Pipelines: connected components over pipelining edges.
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (const DagEdge& edge : dag.edges()) {
    if (edge.pipelining) parent[Find(parent, edge.producer)] = Find(parent, edge.consumer);
  }
  std::vector<std::vector<int>> producers(n);
  for (const DagEdge& edge : dag.edges()) producers[edge.consumer].push_back(edge.producer);

  std::vector<std::set<int>> resident(n);  // per pipeline root: the operators whose memory it needs
  for (int i = 0; i < n; ++i) {
    std::set<int>& needed = resident[Find(parent, i)];
    needed.insert(i);
    // Every producer's relation is read while this operator runs, and what a producer retains stays with it.
    for (int producer : producers[i]) {
      needed.insert(producer);
      if (dag.estimate(producer).retains_inputs) {
        for (int retained : producers[producer]) needed.insert(retained);
      }
    }
  }
  for (const std::set<int>& needed : resident) {
    int64_t bytes = 0;
    for (int i : needed) bytes = SaturatingAdd(bytes, dag.estimate(i).bytes());
    result.min_bytes = std::max(result.min_bytes, bytes);
  }
  return result;
}

}  // namespace tessera
