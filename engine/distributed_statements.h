#pragma once
// Statements in a `tessera-server --distributed` cluster (distributed/README.md): what the master (rank 0) does
// beyond a single server, and the service every other rank runs. Internal to engine/ and the server's startup.
//
// The master runs every statement as a single server would, and also: DDL (CREATE / DROP TABLE and VIEW), ANALYZE
// and INSERT ... VALUES into a replicated table on every other rank, in the same order (so every rank has the
// same catalog); COPY FROM by routing each line of the file to the rank its partition key hashes to (every line
// to every rank for a replicated table). Queries are planned on the master alone (plan_builder.h).
//
// Threading: the master's functions run in the calling session's thread; several sessions may call them at once
// (each request has its own MPI tag). RunRankService runs on one thread of a rank and serves the master's commands
// in order, except table streams, which run on threads of their own.

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/query_result.h"
#include "engine/session.h"
#include "engine/statement_handlers.h"
#include "parser/ast.h"

namespace tessera {

// Master: whether `statement` must also run on every other rank once it succeeded here.
bool RunsOnEveryRank(Database& database, const parser::Statement& statement);

// Master: Unimplemented, naming the construct, for the statements a cluster cannot run yet (INSERT into a
// partitioned table, INSERT ... SELECT, COPY TO of a partitioned table); OK for the others.
absl::Status CheckDistributedStatement(Database& database, const parser::Statement& statement);

// Master: runs `sql` on every other rank, in rank order. The first rank's error is returned as "rank K: ...";
// ranks before it have run the statement (there is no distributed commit yet).
absl::Status RunOnOtherRanks(Database& database, std::string_view sql);

// Master: COPY t FROM 'file': reads the file here and sends each line to the rank that holds it; every rank loads
// its lines with the statement's own options. Returns the total rows loaded. A line whose partition key is not a
// value of the column's type fails the statement before any rank loads; a rank whose load fails fails the
// statement with "rank K: ...", and the ranks that loaded keep their rows (no distributed commit yet).
absl::StatusOr<QueryResult> ExecuteDistributedCopy(Database& database, const parser::CopyStatement& statement,
                                                   const QueryRunOptions& options);

// Master: makes the optimizer's view of partitioned table `table` ("" = every partitioned table) cover the whole
// cluster: its row count becomes the sum over the ranks, its column statistics the merge of every rank's (min/max
// and distinct sketches exactly; null counts may count a rank's NULLs again after several loads). Called after
// COPY and ANALYZE. Without it the optimizer would plan with the master's part alone, and plans that rely on a
// key range (exact filters) would be wrong.
absl::Status RefreshClusterStatistics(Database& database, const std::string& table);

// Every other rank: serves the master's commands (rank_protocol.h) until the master sends kShutdown.
absl::Status RunRankService(Database& database);

// Master: tells every other rank's service to return.
void StopRankServices(Database& database);

}  // namespace tessera
