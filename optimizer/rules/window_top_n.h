#pragma once
// Top-N per partition: a Filter directly over a Window whose predicate ANDs `rk <= N` (or `rk < N`, `rk = N`,
// either side) where rk is a row_number() or rank() call of that Window sets Window::limit_call / limit, so the
// window operator keeps only each partition's best rows (ties at the N-th rank included) before it sorts: TPC-DS
// Q67 (`rank() OVER (PARTITION BY i_category ORDER BY sumsales DESC) ... WHERE rk <= 100`) sorted every group of a
// ROLLUP to keep 100 rows per category. The Filter stays (the Window's limit only drops rows it would drop).
//
// Fires only when every call of the Window is a row_number, rank or dense_rank (WindowTopNApplies: the values of
// the rows kept do not depend on the rows dropped), on an integer constant, and not for dense_rank() <= N (its N
// best values may span more than N rows) nor for a predicate that ORs the bound with anything. With several
// such conjuncts the smallest bound wins.
//
// Runs after ColumnPruning, which renumbers a Window's calls.

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class WindowTopN final : public Rule {
 public:
  std::string name() const override { return "WindowTopN"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
