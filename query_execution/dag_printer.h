#pragma once
// Renders an ExecutionDag for EXPLAIN: as indented text, or as a Graphviz digraph (EXPLAIN (FORMAT DOT)).
//
// Text, one line per operator in id order, then the memory estimate:
//   #3 HashJoinProbe (INNER, scan lineitem, filter) <- #0 pipelining, #2 blocking; est. 6001215 rows, 1.2 GiB
//   ...
//   memory estimate: min 1.3 GiB, max 2.1 GiB
// The result operator's line ends in "; result". Operator names are kept by the DAG, so the DAG can be printed
// after the query ran (when the QueryManager has released the operators).
// With `progress` (EXPLAIN ANALYZE, QueryManager::Progress() after the query finished), each operator line is
// followed by "    actual: work orders N, rows in N, rows out N, busy N.NNN ms".
//
// DOT: one node per operator (op<id>, labelled with id, name, detail and estimate), result operator drawn bold;
// one edge per DAG edge from producer to consumer, labelled "pipelining" (solid) or "blocking" (dashed).
//
// Pure functions; thread-safe.

#include <string>
#include <vector>

#include "query_execution/execution_dag.h"
#include "query_execution/query_manager.h"

namespace tessera {

std::string DagToText(const ExecutionDag& dag, const std::vector<OperatorStatus>* progress = nullptr);
std::string DagToDot(const ExecutionDag& dag, const std::vector<OperatorStatus>* progress = nullptr);

// "512 B", "1.5 KiB", "3.2 MiB", "1.1 GiB".
std::string FormatBytes(int64_t bytes);

}  // namespace tessera
