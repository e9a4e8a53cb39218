#include "query_execution/dag_printer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tessera {
namespace {

std::string OperatorTitle(const ExecutionDag& dag, int index) {
  std::string title = absl::StrCat("#", index, " ", dag.name(index));
  if (!dag.detail(index).empty()) absl::StrAppend(&title, " (", dag.detail(index), ")");
  return title;
}

std::string EstimateText(const OperatorEstimate& estimate) {
  return absl::StrCat("est. ", static_cast<int64_t>(std::llround(estimate.output_rows)), " rows, ",
                      FormatBytes(estimate.bytes()));
}

std::string ActualText(const OperatorStatus& status) {
  std::string text = absl::StrFormat("work orders %d, rows in %d, rows out %d, busy %.3f ms", status.finished,
                                     status.rows_in, status.rows_out, static_cast<double>(status.busy_ns) / 1e6);
  if (status.shared > 0) absl::StrAppend(&text, ", ", status.shared, " in shared scans");
  if (!status.runtime_detail.empty()) absl::StrAppend(&text, "; ", status.runtime_detail);
  return text;
}

// The estimate, and with progress (EXPLAIN ANALYZE) the query's actual peak.
std::string MemoryText(const ExecutionDag& dag, bool with_actual) {
  const QueryMemoryEstimate& memory = dag.memory_estimate();
  std::string text =
      absl::StrCat("memory estimate: min ", FormatBytes(memory.min_bytes), ", max ", FormatBytes(memory.max_bytes));
  if (with_actual) absl::StrAppend(&text, "; actual peak ", FormatBytes(dag.PeakMemoryBytes()));
  return text;
}

// Escapes a DOT double-quoted string; newlines become "\n" (a line break in the label).
std::string DotQuoted(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '\n') {
      quoted += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') quoted.push_back('\\');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return quoted;
}

}  // namespace

std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

std::string DagToText(const ExecutionDag& dag, const std::vector<OperatorStatus>* progress) {
  std::vector<std::vector<const DagEdge*>> inputs(dag.size());
  for (const DagEdge& edge : dag.edges()) inputs[edge.consumer].push_back(&edge);
  std::string text;
  for (int i = 0; i < dag.size(); ++i) {
    absl::StrAppend(&text, OperatorTitle(dag, i));
    for (size_t e = 0; e < inputs[i].size(); ++e) {
      absl::StrAppend(&text, e == 0 ? " <- " : ", ", "#", inputs[i][e]->producer, " ",
                      inputs[i][e]->pipelining ? "pipelining" : "blocking");
    }
    absl::StrAppend(&text, "; ", EstimateText(dag.estimate(i)), i == dag.result_operator() ? "; result" : "", "\n");
    if (progress != nullptr && i < static_cast<int>(progress->size())) {
      absl::StrAppend(&text, "    actual: ", ActualText((*progress)[i]), "\n");
    }
  }
  absl::StrAppend(&text, MemoryText(dag, progress != nullptr), "\n");
  return text;
}

std::string DagToDot(const ExecutionDag& dag, const std::vector<OperatorStatus>* progress) {
  std::string dot = "digraph plan {\n  rankdir=BT;\n  node [shape=box];\n";
  absl::StrAppend(&dot, "  label=", DotQuoted(MemoryText(dag, progress != nullptr)), ";\n");
  for (int i = 0; i < dag.size(); ++i) {
    std::string label = absl::StrCat(OperatorTitle(dag, i), "\n", EstimateText(dag.estimate(i)));
    if (progress != nullptr && i < static_cast<int>(progress->size())) {
      absl::StrAppend(&label, "\n", ActualText((*progress)[i]));
    }
    absl::StrAppend(&dot, "  op", i, " [label=", DotQuoted(label), i == dag.result_operator() ? ", style=bold" : "",
                    "];\n");
  }
  for (const DagEdge& edge : dag.edges()) {
    absl::StrAppend(
        &dot, "  op", edge.producer, " -> op", edge.consumer,
        edge.pipelining ? " [label=\"pipelining\", style=solid];\n" : " [label=\"blocking\", style=dashed];\n");
  }
  absl::StrAppend(&dot, "}\n");
  return dot;
}

}  // namespace tessera
