#include "distributed/rank_protocol.h"

#include "absl/strings/str_cat.h"
#include "common/byte_stream.h"

namespace tessera::distributed {

std::string EncodeCommand(const Command& command) {
  ByteWriter out;
  out.PutU8(static_cast<uint8_t>(command.kind));
  out.PutU32(static_cast<uint32_t>(command.tag));
  out.PutString(command.text);
  return out.Release();
}

absl::StatusOr<Command> DecodeCommand(std::string_view message) {
  ByteReader in(message);
  uint8_t kind = 0;
  uint32_t tag = 0;
  Command command;
  if (!in.GetU8(&kind) || !in.GetU32(&tag) || !in.GetString(&command.text) || !in.AtEnd() ||
      kind < static_cast<uint8_t>(CommandKind::kExecute) || kind > static_cast<uint8_t>(CommandKind::kRelease)) {
    return absl::DataLossError("malformed command from the master");
  }
  command.kind = static_cast<CommandKind>(kind);
  command.tag = static_cast<int>(tag);
  return command;
}

std::string EncodeReply(const absl::Status& status, int64_t rows) {
  ByteWriter out;
  out.PutU32(static_cast<uint32_t>(status.code()));
  out.PutString(std::string(status.message()));
  out.PutI64(rows);
  return out.Release();
}

absl::StatusOr<int64_t> DecodeReply(std::string_view message, int rank) {
  ByteReader in(message);
  uint32_t code = 0;
  std::string text;
  int64_t rows = 0;
  if (!in.GetU32(&code) || !in.GetString(&text) || !in.GetI64(&rows) || !in.AtEnd()) {
    return absl::DataLossError(absl::StrCat("rank ", rank, ": malformed reply"));
  }
  if (code != 0) return absl::Status(static_cast<absl::StatusCode>(code), absl::StrCat("rank ", rank, ": ", text));
  return rows;
}

std::string EncodeTableStatistics(int64_t rows, const std::vector<ColumnStatistics>& statistics) {
  ByteWriter out;
  out.PutI64(rows);
  out.PutU32(static_cast<uint32_t>(statistics.size()));
  for (const ColumnStatistics& column : statistics) {
    out.PutI64(column.null_count);
    out.PutString(column.min.Serialize());
    out.PutString(column.max.Serialize());
    out.PutString(column.distinct.Serialize());
  }
  return out.Release();
}

absl::Status DecodeTableStatistics(std::string_view message, int64_t* rows, std::vector<ColumnStatistics>* statistics) {
  ByteReader in(message);
  uint32_t columns = 0;
  if (!in.GetI64(rows) || !in.GetU32(&columns)) return absl::DataLossError("malformed table statistics");
  statistics->assign(columns, ColumnStatistics{});
  for (ColumnStatistics& column : *statistics) {
    std::string min, max, sketch;
    if (!in.GetI64(&column.null_count) || !in.GetString(&min) || !in.GetString(&max) || !in.GetString(&sketch) ||
        !column.distinct.Deserialize(sketch)) {
      return absl::DataLossError("malformed table statistics");
    }
    absl::StatusOr<Value> min_value = Value::Deserialize(min);
    absl::StatusOr<Value> max_value = Value::Deserialize(max);
    if (!min_value.ok() || !max_value.ok()) return absl::DataLossError("malformed table statistics");
    column.min = *std::move(min_value);
    column.max = *std::move(max_value);
  }
  if (!in.AtEnd()) return absl::DataLossError("malformed table statistics");
  return absl::OkStatus();
}

}  // namespace tessera::distributed
