#pragma once
// Conversions between the engine's types (absl::Status, Type, Value rows, QueryProgress) and the tessera.v1
// messages of server/tessera.proto, shared by the server (server/tessera_server.h) and the C++ client
// (client/remote_connection.h). Stateless and thread-safe.

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/query_result.h"
#include "grpcpp/support/status.h"
#include "scheduler/schedulable_query.h"
#include "server/tessera.pb.h"

namespace tessera {

// absl and gRPC share the canonical status codes; the message travels unchanged (caret lines included).
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

void TypeToProto(Type type, v1::ColumnType* out);
// InvalidArgument for an unknown type id or parameters outside the type's range.
absl::StatusOr<Type> TypeFromProto(const v1::ColumnType& type);

void HeaderToProto(const std::vector<ResultColumn>& columns, v1::ResultHeader* out);
absl::StatusOr<std::vector<ResultColumn>> HeaderFromProto(const v1::ResultHeader& header);

// Encodes rows [begin, end) of `result` column by column (see ColumnBatch in the .proto). A value whose type
// differs from its column's (e.g. an INTEGER in a BIGINT column) is cast to the column type first.
void RowsToBatch(const QueryResult& result, size_t begin, size_t end, v1::RowBatch* out);
// Appends the batch's rows to `rows`; InvalidArgument when the batch does not fit `columns` (column count, array
// lengths).
absl::Status AppendBatchRows(const v1::RowBatch& batch, const std::vector<ResultColumn>& columns,
                             std::vector<std::vector<Value>>* rows);

void ProgressToProto(const QueryProgress& progress, v1::ProgressResponse* out);
QueryProgress ProgressFromProto(const v1::ProgressResponse& progress);

}  // namespace tessera
