#pragma once
// The messages between the master (rank 0) and the other ranks (distributed/README.md, "Contracts"; the streams'
// credits and tags: docs/decisions/0011, "Contract details").
//
// Commands go from the master to a rank's service on kCommandTag; each names the request tag (Cluster::
// NewRequestTag) that everything else of that request uses, so requests of concurrent sessions never mix:
//   kExecute    SQL text (DDL, INSERT into a replicated table) that the rank runs in its own session; the rank
//               answers one Reply.
//   kCopyIn     a COPY statement whose file name is kCopyPathPlaceholder; the master then sends the rank's lines
//               as messages of up to kCopyChunkBytes and one empty message; the rank writes them to a file in its
//               data directory, runs the statement on it, and answers one Reply (rows loaded).
//   kRunFragment  a plan fragment (query_execution/plan_fragment.h): the rank runs it over its own data and streams
//               the result blocks on the request tag under credits (block_stream.h).
//   kShutdown   the rank's service returns (the master is shutting down).
//   kStatistics a table name: the rank answers one Reply and, when it is OK, the row count and column statistics
//               of its part (EncodeTableStatistics), which the master merges into its catalog for the optimizer.
//   kShuffle    the rank's side of a hash-split exchange (repartition_operator.h, EncodeShuffleRequest): it runs
//               the input fragment over its data, splits the rows by the rank of their key and exchanges the
//               parts with every other rank (rank to rank, block streams on the exchange's two tags); its own
//               partition waits there for the fragment that reads it. No Reply: a failure travels in the streams.
//   kRelease    the data tag of a hash split whose partition no fragment will read (the master's query ended or
//               was cancelled before its gather sent this rank the fragment): the rank drops the partition now,
//               or when its split ends if it has not yet. No Reply.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "catalog/column_statistics.h"

namespace tessera::distributed {

enum class CommandKind : uint8_t {
  kExecute = 1,
  kCopyIn = 2,
  kRunFragment = 3,
  kShutdown = 4,
  kStatistics = 5,
  kShuffle = 6,
  kRelease = 7
};

inline constexpr char kCopyPathPlaceholder[] = "\x01path\x01";
inline constexpr size_t kCopyChunkBytes = 4 << 20;

struct Command {
  CommandKind kind = CommandKind::kShutdown;
  int tag = 0;       // the request tag
  std::string text;  // SQL, the COPY statement, or the table name
};

std::string EncodeCommand(const Command& command);
absl::StatusOr<Command> DecodeCommand(std::string_view message);

// A rank's answer: its status (code and message) and, for COPY, the rows it loaded.
std::string EncodeReply(const absl::Status& status, int64_t rows);
// The status the reply carries (its message prefixed with "rank K: "), or the rows.
absl::StatusOr<int64_t> DecodeReply(std::string_view message, int rank);

// A rank's part of a table: its rows and per-column statistics.
std::string EncodeTableStatistics(int64_t rows, const std::vector<ColumnStatistics>& statistics);
absl::Status DecodeTableStatistics(std::string_view message, int64_t* rows, std::vector<ColumnStatistics>* statistics);

}  // namespace tessera::distributed
