// SELECT through the query engine: bind and optimize (optimizer/), build the operator DAG (query_execution/),
// run its work orders, and collect the result relation's rows.

#include "catalog/catalog.h"
#include "cli/statement_handlers.h"
#include "common/status_macros.h"
#include "optimizer/binder.h"
#include "query_execution/plan_builder.h"
#include "query_execution/query_manager.h"
#include "scheduler/execution_query.h"
#include "scheduler/foreman.h"
#include "storage/storage_manager.h"

namespace tessera {

absl::StatusOr<QueryResult> ExecuteQuery(Database& database, const parser::SelectQueryStatement& statement) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<optimizer::LogicalOperator> plan,
                           optimizer::PlanQuery(*statement.query, database.catalog(), statement.text));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ExecutionDag> dag,
                           BuildExecutionDag(*plan, &database.storage(), &database.buffer_pool()));
  auto query = std::make_shared<ExecutionQuery>(database.NextQueryId(), /*priority=*/1,
                                                std::make_unique<QueryManager>(std::move(dag)));
  TESSERA_ASSIGN_OR_RETURN(QueryHandle handle, database.foreman().Submit(query));
  const QueryOutcome& outcome = handle.Wait();
  TESSERA_RETURN_IF_ERROR(query->manager().status());
  TESSERA_RETURN_IF_ERROR(outcome.status);

  QueryResult result;
  result.returns_rows = true;
  for (const optimizer::OutputColumn& column : plan->output()) result.columns.push_back({column.name, column.type});
  const TemporaryRelation& relation = *query->manager().result();
  for (uint32_t b = 0; b < relation.block_count(); ++b) {
    BlockView block = relation.block(b);
    for (uint32_t r = 0; r < block.row_count(); ++r) {
      std::vector<Value> row;
      row.reserve(result.columns.size());
      for (size_t c = 0; c < result.columns.size(); ++c) {
        row.push_back(block.GetValue(static_cast<int>(c), r, relation.schema()[c].type));
      }
      result.rows.push_back(std::move(row));
    }
  }
  return result;
}

}  // namespace tessera
