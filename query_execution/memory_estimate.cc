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

// Work orders operator `i` is expected to issue: its own estimate, else the most of its producers over pipelining
// edges (a streaming consumer issues about one work order per block its producer writes); -1 when unknown.
double ExpectedWorkOrders(const ExecutionDag& dag, const std::vector<std::vector<const DagEdge*>>& in_edges, int i,
                          std::vector<double>& memo) {
  if (memo[i] != -2) return memo[i];
  memo[i] = -1;  // also guards against revisiting (the DAG is acyclic, so this is only the default)
  const int64_t own = dag.op(i) == nullptr ? -1 : dag.op(i)->EstimatedWorkOrders();
  if (own > 0) return memo[i] = static_cast<double>(own);
  double most = -1;
  for (const DagEdge* edge : in_edges[i]) {
    if (edge->pipelining && edge->consumer_input != DagEdge::kOrderingOnly) {
      most = std::max(most, ExpectedWorkOrders(dag, in_edges, edge->producer, memo));
    }
  }
  return memo[i] = most;
}

// Operator `i`'s output is streamed: it is not the result, and every consumer reads it over a pipelining edge and
// releases each block once read (RelationalOperator::ReleasesInputBlocks).
bool IsStreamed(const ExecutionDag& dag, const std::vector<std::vector<const DagEdge*>>& out_edges, int i) {
  if (i == dag.result_operator()) return false;
  bool fed = false;
  for (const DagEdge* edge : out_edges[i]) {
    if (edge->consumer_input == DagEdge::kOrderingOnly) continue;
    fed = true;
    if (!edge->pipelining || dag.op(edge->consumer) == nullptr ||
        !dag.op(edge->consumer)->ReleasesInputBlocks(edge->consumer_input)) {
      return false;
    }
  }
  return fed;
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
      const int64_t length =
          type.length() == 0 ? kAssumedStringBytes : std::min<int64_t>(type.length(), kAssumedStringBytes);
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
  std::vector<std::vector<const DagEdge*>> in_edges(n), out_edges(n);
  for (const DagEdge& edge : dag.edges()) {
    in_edges[edge.consumer].push_back(&edge);
    out_edges[edge.producer].push_back(&edge);
  }
  std::vector<double> memo(n, -2);
  std::vector<int64_t> resident(n);  // per operator: what it holds at the most at one time
  for (int i = 0; i < n; ++i) {
    const OperatorEstimate& estimate = dag.estimate(i);
    resident[i] = estimate.bytes();
    const double work_orders = ExpectedWorkOrders(dag, in_edges, i, memo);
    if (work_orders > kStreamedWorkOrdersResident && IsStreamed(dag, out_edges, i)) {
      const double window = static_cast<double>(estimate.output_bytes) * kStreamedWorkOrdersResident / work_orders;
      resident[i] = SaturatingAdd(estimate.structure_bytes, static_cast<int64_t>(std::ceil(window)));
    }
  }
  QueryMemoryEstimate result;
  for (int i = 0; i < n; ++i) result.max_bytes = SaturatingAdd(result.max_bytes, resident[i]);

  // Pipelines: connected components over pipelining edges.
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (const DagEdge& edge : dag.edges()) {
    if (edge.pipelining) parent[Find(parent, edge.producer)] = Find(parent, edge.consumer);
  }
  std::vector<std::vector<int>> producers(n);
  for (const DagEdge& edge : dag.edges()) producers[edge.consumer].push_back(edge.producer);

  std::vector<std::set<int>> pipeline_needs(n);  // per pipeline root: the operators whose memory it needs
  for (int i = 0; i < n; ++i) {
    std::set<int>& needed = pipeline_needs[Find(parent, i)];
    needed.insert(i);
    // Every producer's relation is read while this operator runs, and what a producer retains stays with it.
    for (int producer : producers[i]) {
      needed.insert(producer);
      if (dag.estimate(producer).retains_inputs) {
        for (int retained : producers[producer]) needed.insert(retained);
      }
    }
  }
  for (const std::set<int>& needed : pipeline_needs) {
    int64_t bytes = 0;
    for (int i : needed) bytes = SaturatingAdd(bytes, resident[i]);
    result.min_bytes = std::max(result.min_bytes, bytes);
  }
  return result;
}

}  // namespace tessera
