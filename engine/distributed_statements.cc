#include "engine/distributed_statements.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "catalog/catalog.h"
#include "common/status_macros.h"
#include "distributed/block_stream.h"
#include "distributed/cluster.h"
#include "distributed/partitioning.h"
#include "distributed/rank_protocol.h"
#include "distributed/repartition_operator.h"
#include "engine/file_access.h"
#include "glog/logging.h"
#include "parser/parser.h"
#include "query_execution/plan_builder.h"
#include "query_execution/plan_fragment.h"
#include "relational_operators/block_input.h"
#include "storage/buffer_pool.h"

namespace tessera {
namespace {

using distributed::Cluster;
using distributed::Command;
using distributed::CommandKind;
using distributed::StreamTags;

constexpr int kMaster = 0;

std::string QuotedLiteral(std::string_view text) {
  return absl::StrCat("'", absl::StrReplaceAll(absl::string_view(text.data(), text.size()), {{"'", "''"}}), "'");
}

// The statement's text with the file name replaced by distributed::kCopyPathPlaceholder.
absl::StatusOr<std::string> CopyTemplate(const parser::CopyStatement& statement) {
  const std::string literal = QuotedLiteral(statement.path);
  const size_t at = statement.text.find(literal);
  if (at == std::string::npos) {
    return absl::InternalError("COPY: cannot find the file name in the statement's text");
  }
  std::string text = statement.text;
  text.replace(at, literal.size(), distributed::kCopyPathPlaceholder);
  return text;
}

std::string WithPath(std::string text, const std::string& path) {
  const size_t at = text.find(distributed::kCopyPathPlaceholder);
  if (at != std::string::npos) {
    text.replace(at, std::string_view(distributed::kCopyPathPlaceholder).size(), QuotedLiteral(path));
  }
  return text;
}

// The field `index` of `line` (without its line end) under `format`: false when the line has fewer fields.
// A quoted field's text is unquoted into `scratch`.
bool FieldOf(std::string_view line, int index, const DelimitedFormat& format, std::string* scratch,
             std::string_view* field, bool* is_null) {
  size_t begin = 0;
  for (int i = 0;; ++i) {
    if (begin > line.size()) return false;
    const bool quoted = format.quote != '\0' && begin < line.size() && line[begin] == format.quote;
    size_t end = begin;
    if (quoted) {
      scratch->clear();
      end = begin + 1;
      while (end < line.size()) {
        if (line[end] == format.quote) {
          if (end + 1 < line.size() && line[end + 1] == format.quote) {
            scratch->push_back(format.quote);
            end += 2;
            continue;
          }
          ++end;
          break;
        }
        scratch->push_back(line[end++]);
      }
      end = std::min(line.find(format.delimiter, end), line.size());
    } else {
      end = std::min(line.find(format.delimiter, begin), line.size());
    }
    if (i == index) {
      if (quoted) {
        *field = *scratch;
        *is_null = false;
      } else {
        *field = line.substr(begin, end - begin);
        *is_null = *field == format.null_string;
      }
      return true;
    }
    begin = end + 1;
  }
}

// Sends every rank's routed lines in chunks; the master's own lines go to a local file.
class LineRouter {
 public:
  LineRouter(Cluster& cluster, int tag, std::FILE* local) : cluster_(cluster), tag_(tag), local_(local) {
    buffers_.resize(cluster.size());
  }

  absl::Status Add(int rank, std::string_view line) {
    std::string& buffer = buffers_[rank];
    buffer.append(line.data(), line.size());
    buffer.push_back('\n');
    if (buffer.size() >= distributed::kCopyChunkBytes) return Flush(rank);
    return absl::OkStatus();
  }

  absl::Status AddToAll(std::string_view line) {
    for (int rank = 0; rank < cluster_.size(); ++rank) TESSERA_RETURN_IF_ERROR(Add(rank, line));
    return absl::OkStatus();
  }

  absl::Status Flush(int rank) {
    std::string& buffer = buffers_[rank];
    if (buffer.empty()) return absl::OkStatus();
    if (rank == kMaster) {
      if (std::fwrite(buffer.data(), 1, buffer.size(), local_) != buffer.size()) {
        return absl::InternalError("COPY: cannot write the master's part of the rows");
      }
    } else {
      TESSERA_RETURN_IF_ERROR(cluster_.Send(rank, tag_, buffer));
    }
    buffer.clear();
    return absl::OkStatus();
  }

  absl::Status FlushAll() {
    for (int rank = 0; rank < cluster_.size(); ++rank) TESSERA_RETURN_IF_ERROR(Flush(rank));
    return absl::OkStatus();
  }

 private:
  Cluster& cluster_;
  const int tag_;
  std::FILE* const local_;
  std::vector<std::string> buffers_;
};

// Reads `path` line by line and routes each line (header lines to every rank).
absl::Status RouteLines(const std::string& path, const TableDescriptor& table, int key_field,
                        const DelimitedFormat& format, int ranks, LineRouter* router) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) return absl::NotFoundError(absl::StrCat("cannot open file '", path, "'"));
  const Type key_type = key_field >= 0 ? table.columns[table.partition_column].type : Type::Integer();
  std::string pending;  // a line cut by the end of the read buffer
  std::vector<char> buffer(8 << 20);
  std::string scratch;
  int64_t line_number = 0;
  auto route = [&](std::string_view line) -> absl::Status {
    ++line_number;
    if ((line_number == 1 && format.header) || key_field < 0) return router->AddToAll(line);
    std::string_view content = line;
    if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
    if (content.empty()) return router->Add(kMaster, line);  // the master's COPY reports or skips it
    std::string_view key;
    bool is_null = false;
    if (!FieldOf(content, key_field, format, &scratch, &key, &is_null)) {
      return absl::InvalidArgumentError(absl::StrCat("COPY: line ", line_number, " of '", path, "' has no field ",
                                                     key_field + 1, " (the partition key)"));
    }
    absl::StatusOr<int> rank = distributed::RankOfKeyText(key, is_null, key_type, ranks);
    if (!rank.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("COPY: line ", line_number, " of '", path, "': ", rank.status().message()));
    }
    return router->Add(*rank, line);
  };
  while (true) {
    const size_t got = std::fread(buffer.data(), 1, buffer.size(), file.get());
    if (got == 0) break;
    std::string_view chunk(buffer.data(), got);
    size_t start = 0;
    while (true) {
      const size_t newline = chunk.find('\n', start);
      if (newline == std::string_view::npos) break;
      if (!pending.empty()) {
        pending.append(chunk.substr(start, newline - start));
        TESSERA_RETURN_IF_ERROR(route(pending));
        pending.clear();
      } else {
        TESSERA_RETURN_IF_ERROR(route(chunk.substr(start, newline - start)));
      }
      start = newline + 1;
    }
    pending.append(chunk.substr(start));
  }
  if (std::ferror(file.get())) return absl::InternalError(absl::StrCat("error reading '", path, "'"));
  if (!pending.empty()) TESSERA_RETURN_IF_ERROR(route(pending));
  return router->FlushAll();
}

std::string IncomingPath(const Database& database, int tag, const std::string& source_path) {
  return absl::StrCat(database.options().cluster_incoming_directory, "/copy-", tag, "-",
                      std::filesystem::path(source_path).filename().string());
}

// The rank's end of a kCopyIn: writes the chunks to a file, then loads it if the master says so.
absl::StatusOr<int64_t> ReceiveCopy(Database& database, Session& session, const Command& command) {
  Cluster& cluster = *database.options().cluster;
  const size_t split = command.text.find('\n');
  const std::string name = command.text.substr(0, split);
  const std::string statement = command.text.substr(split + 1);
  const std::string path = IncomingPath(database, command.tag, name);
  absl::Status written;
  {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"), &std::fclose);
    if (file == nullptr) written = absl::InternalError(absl::StrCat("cannot create '", path, "'"));
    while (true) {
      TESSERA_ASSIGN_OR_RETURN(std::string chunk, cluster.Receive(kMaster, command.tag));
      if (chunk.empty()) break;
      if (written.ok() && std::fwrite(chunk.data(), 1, chunk.size(), file.get()) != chunk.size()) {
        written = absl::InternalError(absl::StrCat("cannot write '", path, "'"));
      }
    }
  }
  TESSERA_ASSIGN_OR_RETURN(std::string decision, cluster.Receive(kMaster, command.tag));
  absl::StatusOr<int64_t> rows = int64_t{0};
  if (!written.ok()) {
    rows = written;
  } else if (decision == "load") {
    absl::StatusOr<QueryResult> result = session.Execute(WithPath(statement, path));
    rows = result.ok() ? absl::StatusOr<int64_t>(result->rows_affected) : result.status();
  }
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  return rows;
}

// Gather streams of the rank's service, each on its own thread: the fragment runs under the rank's Foreman, then
// its result streams to the master under credits (a stream waits for credits from a worker of the master; serving
// streams in order could wait on a query the master cannot run yet).
class StreamThreads {
 public:
  ~StreamThreads() { JoinAll(); }

  void Start(Database& database, const Command& command) {
    JoinFinished();
    auto done = std::make_shared<std::atomic<bool>>(false);
    threads_.push_back({std::thread([this, &database, command, done] {
                          if (command.kind == CommandKind::kShuffle) {
                            Shuffle(database, command);
                          } else {
                            Serve(database, command);
                          }
                          done->store(true);
                        }),
                        done});
  }

  void JoinAll() {
    for (Entry& entry : threads_) entry.thread.join();
    threads_.clear();
  }

  // The master will not read the partition of hash split `tag` (kRelease).
  void Release(int tag) { exchanges_.Release(tag); }

 private:
  struct Entry {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  // A hash split's rank side (distributed/repartition_operator.h): the input fragment runs under the rank's
  // Foreman while this thread splits each result block as the fragment writes it (RunDag's drain), and the parts
  // stream to their ranks as they fill (ExchangeParts with GrowingRelations, on a thread of its own, under the
  // streams' credits) while the other ranks' parts arrive; this rank's partition waits in exchanges_ for the
  // fragment that reads it. A rank whose fragment fails still ends every stream (with its error), so no rank
  // waits for it.
  void Shuffle(Database& database, const Command& command) {
    Cluster& cluster = *database.options().cluster;
    absl::StatusOr<distributed::ShuffleRequest> request = distributed::DecodeShuffleRequest(command.text);
    if (!request.ok()) {
      LOG(ERROR) << "rank " << cluster.rank() << ": " << request.status();
      return;
    }
    std::vector<std::shared_ptr<TemporaryRelation>> parts;
    distributed::GrowingRelations growing;
    std::thread exchange;
    absl::Status exchanged;
    distributed::StreamTotals sent, received;
    // Once the parts exist (the fragment's first result, whose schema they take).
    const auto start_exchange = [&] {
      exchange = std::thread([&] {
        exchanged = distributed::ExchangeParts(cluster, request->tags, parts, parts[cluster.rank()].get(),
                                               /*cancelled=*/nullptr, &sent, &received, &growing);
      });
    };
    absl::Status status = SplitFragment(database, *request, &parts, &growing, start_exchange);
    if (exchange.joinable()) {
      growing.Finish(status);  // a failed fragment ends the streams to the other ranks with its error
      exchange.join();
      if (status.ok()) status = exchanged;
    } else {
      if (status.ok()) status = absl::InternalError("the input of a hash split produced no result");
      distributed::FailExchange(cluster, request->tags, status, &database.buffer_pool());
    }
    if (status.ok()) {
      exchanges_.Put(request->tags.data, std::move(parts[cluster.rank()]));
    } else {
      // E.g. a peer that died: the master reports it to the query too, this says the rank did not hang on it.
      LOG(WARNING) << "rank " << cluster.rank() << ": a hash split failed: " << status;
      exchanges_.Put(request->tags.data, status);
    }
  }

  // Runs the hash split's input fragment and splits each block of its result into `parts` (one relation per
  // rank, created from the first result's schema, then `start_exchange` runs) as the fragment writes it, waking
  // `growing`'s senders; the result's blocks are released once split. The last partial blocks are flushed
  // before it returns.
  // The fragment may read the partitions of other hash splits (a nested split): they are taken first, even when
  // the fragment cannot run.
  absl::Status SplitFragment(Database& database, const distributed::ShuffleRequest& request,
                             std::vector<std::shared_ptr<TemporaryRelation>>* parts,
                             distributed::GrowingRelations* growing, const std::function<void()>& start_exchange) {
    std::vector<const optimizer::LogicalOperator*> placeholders;
    std::vector<int> exchange_tags;
    TESSERA_ASSIGN_OR_RETURN(optimizer::LogicalOperatorPtr fragment,
                             DecodePlanFragment(request.fragment, database.catalog(), &placeholders, &exchange_tags));
    std::vector<FragmentInput> inputs;
    absl::Status taken;
    for (size_t i = 0; i < placeholders.size(); ++i) {
      const absl::Status status = exchange_tags[i] != 0
                                      ? TakePartition(placeholders[i], exchange_tags[i], &inputs)
                                      : absl::InternalError("the input of a hash split reads a broadcast input");
      if (taken.ok()) taken = status;
    }
    TESSERA_RETURN_IF_ERROR(taken);
    std::unique_ptr<distributed::HashSplitter> splitter;
    ScanSpec scan;
    uint32_t next = 0;
    ResultDrain drain = [&](TemporaryRelation& result) -> absl::StatusOr<bool> {
      const std::vector<ColumnSchema>& schema = result.schema();
      if (splitter == nullptr) {
        if (request.key_column < 0 || request.key_column >= static_cast<int>(schema.size())) {
          return absl::DataLossError("the key column of a hash split is not a column of its input");
        }
        std::vector<TemporaryRelation*> targets;
        for (int rank = 0; rank < database.options().cluster->size(); ++rank) {
          parts->push_back(std::make_shared<TemporaryRelation>(schema, &database.buffer_pool()));
          targets.push_back(parts->back().get());
        }
        for (size_t c = 0; c < schema.size(); ++c) {
          scan.block_columns.push_back(static_cast<int>(c));
          scan.types.push_back(schema[c].type);
        }
        scan.Prepare();
        splitter = std::make_unique<distributed::HashSplitter>(targets, request.key_column);
        start_exchange();
      }
      const uint32_t available = result.block_count();
      const bool released = next < available;
      for (; next < available; ++next) {
        const BlockView block = result.block(next);
        BlockScanner scanner(scan);
        while (true) {
          TESSERA_ASSIGN_OR_RETURN(bool more, scanner.Next(block));
          if (!more) break;
          TESSERA_RETURN_IF_ERROR(splitter->Add(scanner.batch(), scanner.selection(), schema.size()));
        }
        result.ReleaseBlock(next);
      }
      growing->Appended();
      return released;
    };
    std::shared_ptr<ExecutionQuery> query;
    TESSERA_RETURN_IF_ERROR(Run(database, *fragment, inputs, &query, drain).status());
    if (splitter == nullptr) return absl::InternalError("the input of a hash split produced no result");
    TESSERA_RETURN_IF_ERROR(splitter->Flush());
    growing->Appended();
    return absl::OkStatus();
  }

  void Serve(Database& database, const Command& command) {
    Cluster& cluster = *database.options().cluster;
    std::shared_ptr<ExecutionQuery> query;  // keeps the fragment's result (and its memory account) while it streams
    absl::StatusOr<std::shared_ptr<TemporaryRelation>> result = RunFragment(database, command, &query);
    // The master closed the stream before sending the broadcast inputs (its query failed): nobody listens.
    if (absl::IsCancelled(result.status())) return;
    const absl::Status status =
        result.ok() ? distributed::SendBlockStream(cluster, kMaster, StreamTags::Same(command.tag),
                                                   BlockInput::FromRelation(*result), (*result)->block_count())
                    : distributed::SendFailedStream(cluster, kMaster, StreamTags::Same(command.tag), result.status());
    if (!status.ok()) LOG(ERROR) << "rank " << cluster.rank() << ": a gather stream failed: " << status;
  }

  // Runs the plan fragment of `command` (query_execution/plan_fragment.h) over this rank's data and its broadcast
  // inputs (received first, on the command's tag) under the rank's Foreman; returns its result relation, owned by
  // `query`.
  absl::StatusOr<std::shared_ptr<TemporaryRelation>> RunFragment(Database& database, const Command& command,
                                                                 std::shared_ptr<ExecutionQuery>* query) {
    std::vector<const optimizer::LogicalOperator*> placeholders;
    std::vector<int> exchange_tags;
    absl::StatusOr<optimizer::LogicalOperatorPtr> fragment =
        DecodePlanFragment(command.text, database.catalog(), &placeholders, &exchange_tags);
    std::vector<FragmentInput> inputs;
    // The inputs are received (and exchanges taken) even when the fragment cannot run, so that the stream stays
    // in step.
    absl::Status taken;
    for (size_t i = 0; i < placeholders.size(); ++i) {
      if (exchange_tags[i] != 0) {
        const absl::Status status = TakePartition(placeholders[i], exchange_tags[i], &inputs);
        if (taken.ok()) taken = status;
        continue;
      }
      std::vector<ColumnSchema> schema;
      for (const optimizer::OutputColumn& column : placeholders[i]->output()) {
        schema.push_back({column.name, column.type, false, {}});
      }
      auto relation = std::make_shared<TemporaryRelation>(std::move(schema), &database.buffer_pool());
      TESSERA_RETURN_IF_ERROR(
          distributed::ReceiveRelation(*database.options().cluster, kMaster, command.tag, relation.get()));
      inputs.push_back({placeholders[i], std::move(relation)});
    }
    if (!fragment.ok()) return fragment.status();
    TESSERA_RETURN_IF_ERROR(taken);
    return Run(database, **fragment, inputs, query);
  }

  // Waits for the partition of hash split `tag` (the input `placeholder` of a fragment) and adds it to `inputs`.
  absl::Status TakePartition(const optimizer::LogicalOperator* placeholder, int tag,
                             std::vector<FragmentInput>* inputs) {
    absl::StatusOr<std::shared_ptr<TemporaryRelation>> partition = exchanges_.Take(tag, kExchangeTimeout);
    // Serve keeps Cancelled for a stream the master abandoned; a split that the master's query ended before it ran
    // (a query failed early by another exchange, ExternalFailure) is a failure to report.
    if (absl::IsCancelled(partition.status())) return absl::AbortedError(partition.status().message());
    TESSERA_RETURN_IF_ERROR(partition.status());
    inputs->push_back({placeholder, *std::move(partition)});
    return absl::OkStatus();
  }

  // Plans `fragment` with `inputs` and runs it under the rank's Foreman; the result relation is owned by `query`.
  // With `drain`, the result is read as it is written (RunDag).
  static absl::StatusOr<std::shared_ptr<TemporaryRelation>> Run(Database& database,
                                                                const optimizer::LogicalOperator& fragment,
                                                                const std::vector<FragmentInput>& inputs,
                                                                std::shared_ptr<ExecutionQuery>* query,
                                                                const ResultDrain& drain = nullptr) {
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ExecutionDag> dag,
                             BuildExecutionDag(fragment, &database.storage(), &database.buffer_pool(),
                                               /*cluster=*/nullptr, inputs));
    std::atomic<QueryId> running{0};
    std::atomic<bool> cancel{false};
    QueryRunOptions options;
    options.running_query = &running;
    options.cancel_requested = &cancel;
    TESSERA_ASSIGN_OR_RETURN(*query, RunDag(database, std::move(dag), options, drain));
    return (*query)->manager().result();
  }

  void JoinFinished() {
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // How long a rank's fragment waits for the partition of a hash split it reads (the exchange itself waits
  // for every rank's part first).
  static constexpr std::chrono::milliseconds kExchangeTimeout{std::chrono::minutes(10)};

  std::list<Entry> threads_;
  distributed::ExchangeResults exchanges_;
};

}  // namespace

bool RunsOnEveryRank(Database& database, const parser::Statement& statement) {
  using parser::StatementKind;
  switch (statement.kind) {
    case StatementKind::kCreateTable:
    case StatementKind::kDropTable:
    case StatementKind::kCreateView:
    case StatementKind::kDropView:
    case StatementKind::kAnalyze:
      return true;
    case StatementKind::kInsert:  // INSERT ... VALUES into a replicated table (CheckDistributedStatement)
      return true;
    default:
      return false;
  }
}

absl::Status CheckDistributedStatement(Database& database, const parser::Statement& statement) {
  using parser::StatementKind;
  if (statement.kind == StatementKind::kInsert) {
    const auto& insert = static_cast<const parser::InsertStatement&>(statement);
    if (insert.query != nullptr) {
      return absl::UnimplementedError("INSERT ... SELECT is not supported in a distributed cluster yet");
    }
    absl::StatusOr<std::shared_ptr<const TableDescriptor>> table = database.catalog().GetTable(insert.table);
    if (table.ok() && (*table)->partition_column >= 0) {
      return absl::UnimplementedError(absl::StrCat("INSERT into the partitioned table '", insert.table,
                                                   "' is not supported in a distributed cluster yet (use COPY)"));
    }
  }
  if (statement.kind == StatementKind::kCreateTable &&
      static_cast<const parser::CreateTableStatement&>(statement).query != nullptr) {
    return absl::UnimplementedError("CREATE TABLE ... AS SELECT is not supported in a distributed cluster yet");
  }
  if (statement.kind == StatementKind::kDelete || statement.kind == StatementKind::kUpdate ||
      statement.kind == StatementKind::kVacuum) {
    // Each rank holds its own rows and deletions; a statement that changes them must run on every rank as one.
    const char* name = statement.kind == StatementKind::kDelete   ? "DELETE"
                       : statement.kind == StatementKind::kUpdate ? "UPDATE"
                                                                  : "VACUUM";
    return absl::UnimplementedError(absl::StrCat(name, " is not supported in a distributed cluster yet"));
  }
  if (statement.kind == StatementKind::kCopy) {
    const auto& copy = static_cast<const parser::CopyStatement&>(statement);
    absl::StatusOr<std::shared_ptr<const TableDescriptor>> table = database.catalog().GetTable(copy.table);
    if (!copy.from && table.ok() && (*table)->partition_column >= 0) {
      return absl::UnimplementedError(absl::StrCat("COPY TO of the partitioned table '", copy.table,
                                                   "' is not supported in a distributed cluster yet"));
    }
  }
  return absl::OkStatus();
}

absl::Status RunOnOtherRanks(Database& database, std::string_view sql) {
  Cluster& cluster = *database.options().cluster;
  for (int rank = 1; rank < cluster.size(); ++rank) {
    const int tag = cluster.NewRequestTag();
    TESSERA_RETURN_IF_ERROR(cluster.Send(rank, distributed::kCommandTag,
                                         distributed::EncodeCommand({CommandKind::kExecute, tag, std::string(sql)})));
    TESSERA_ASSIGN_OR_RETURN(std::string reply, cluster.Receive(rank, tag));
    TESSERA_RETURN_IF_ERROR(distributed::DecodeReply(reply, rank).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<QueryResult> ExecuteDistributedCopy(Database& database, const parser::CopyStatement& statement,
                                                   const QueryRunOptions& options) {
  Cluster& cluster = *database.options().cluster;
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> table, database.catalog().GetTable(statement.table));
  TESSERA_ASSIGN_OR_RETURN(DelimitedFormat format, CopyStatementFormat(statement));
  TESSERA_RETURN_IF_ERROR(CheckFileAccess(database.options().file_access, database.options().data_directory,
                                          statement.path, /*writing=*/false));
  int key_field = -1;  // -1: replicated, every line to every rank
  if (table->partition_column >= 0) {
    const std::string& key = table->columns[table->partition_column].name;
    if (statement.columns.empty()) {
      key_field = table->partition_column;
    } else {
      for (size_t i = 0; i < statement.columns.size(); ++i) {
        if (statement.columns[i] == key) key_field = static_cast<int>(i);
      }
      if (key_field < 0) {
        return absl::InvalidArgumentError(absl::StrCat("COPY into the partitioned table '", table->name,
                                                       "' must list its partition column '", key, "'"));
      }
    }
  }
  TESSERA_ASSIGN_OR_RETURN(std::string statement_template, CopyTemplate(statement));
  const int tag = cluster.NewRequestTag();
  const std::string name = std::filesystem::path(statement.path).filename().string();
  for (int rank = 1; rank < cluster.size(); ++rank) {
    TESSERA_RETURN_IF_ERROR(cluster.Send(
        rank, distributed::kCommandTag,
        distributed::EncodeCommand({CommandKind::kCopyIn, tag, absl::StrCat(name, "\n", statement_template)})));
  }
  const std::string local_path = IncomingPath(database, tag, statement.path);
  absl::Status routed;
  {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> local(std::fopen(local_path.c_str(), "wb"), &std::fclose);
    if (local == nullptr) {
      routed = absl::InternalError(absl::StrCat("cannot create '", local_path, "'"));
    } else {
      LineRouter router(cluster, tag, local.get());
      routed = RouteLines(statement.path, *table, key_field, format, cluster.size(), &router);
    }
  }
  // Every rank gets the end of its lines; ranks load only once the master's own part loaded.
  for (int rank = 1; rank < cluster.size(); ++rank) TESSERA_RETURN_IF_ERROR(cluster.Send(rank, tag, nullptr, 0));
  int64_t rows = 0;
  if (routed.ok()) {
    absl::StatusOr<std::vector<std::unique_ptr<parser::Statement>>> local_statement =
        parser::ParseStatements(WithPath(statement_template, local_path));
    if (!local_statement.ok() || local_statement->size() != 1) {
      routed = absl::InternalError("COPY: cannot re-read the statement for the master's part");
    } else {
      absl::StatusOr<QueryResult> loaded =
          ExecuteCopy(database, static_cast<const parser::CopyStatement&>(*local_statement->front()), options);
      if (loaded.ok()) rows += loaded->rows_affected;
      else routed = loaded.status();
    }
  }
  std::error_code ignored;
  std::filesystem::remove(local_path, ignored);
  for (int rank = 1; rank < cluster.size(); ++rank) {
    TESSERA_RETURN_IF_ERROR(cluster.Send(rank, tag, routed.ok() ? "load" : "abort"));
  }
  absl::Status first_error = routed;
  for (int rank = 1; rank < cluster.size(); ++rank) {
    TESSERA_ASSIGN_OR_RETURN(std::string reply, cluster.Receive(rank, tag));
    absl::StatusOr<int64_t> loaded = distributed::DecodeReply(reply, rank);
    if (loaded.ok()) rows += *loaded;
    else if (first_error.ok()) first_error = loaded.status();
  }
  TESSERA_RETURN_IF_ERROR(first_error);
  TESSERA_RETURN_IF_ERROR(RefreshClusterStatistics(database, table->name));
  QueryResult result;
  result.status_message = absl::StrCat("COPY ", rows);
  result.rows_affected = rows;
  return result;
}

absl::Status RefreshClusterStatistics(Database& database, const std::string& table_name) {
  Cluster& cluster = *database.options().cluster;
  std::vector<std::string> tables;
  if (!table_name.empty()) {
    tables.push_back(table_name);
  } else {
    for (const auto& table : database.catalog().ListTables()) tables.push_back(table->name);
  }
  for (const std::string& name : tables) {
    for (int attempt = 0;; ++attempt) {
      TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> current, database.catalog().GetTable(name));
      if (current->partition_column < 0) break;
      auto updated = std::make_shared<TableDescriptor>(*current);
      updated->row_count = 0;
      for (const SegmentDescriptor& segment : current->segments) updated->row_count += segment.row_count;
      for (int rank = 1; rank < cluster.size(); ++rank) {
        const int tag = cluster.NewRequestTag();
        TESSERA_RETURN_IF_ERROR(cluster.Send(rank, distributed::kCommandTag,
                                             distributed::EncodeCommand({CommandKind::kStatistics, tag, name})));
        TESSERA_ASSIGN_OR_RETURN(std::string reply, cluster.Receive(rank, tag));
        TESSERA_RETURN_IF_ERROR(distributed::DecodeReply(reply, rank).status());
        TESSERA_ASSIGN_OR_RETURN(std::string message, cluster.Receive(rank, tag));
        int64_t rows = 0;
        std::vector<ColumnStatistics> statistics;
        TESSERA_RETURN_IF_ERROR(distributed::DecodeTableStatistics(message, &rows, &statistics));
        if (statistics.size() != updated->statistics.size()) {
          return absl::FailedPreconditionError(
              absl::StrCat("rank ", rank, ": table '", name, "' has another schema than on the master"));
        }
        updated->row_count += rows;
        for (size_t c = 0; c < statistics.size(); ++c) updated->statistics[c].Merge(statistics[c]);
      }
      absl::Status replaced = database.catalog().ReplaceTable(current, std::move(updated));
      if (replaced.ok()) break;
      if (!absl::IsAborted(replaced) || attempt >= 10) return replaced;  // Aborted: a concurrent load won; again
    }
  }
  return absl::OkStatus();
}

absl::Status RunRankService(Database& database) {
  Cluster& cluster = *database.options().cluster;
  Session session(&database);
  StreamThreads streams;
  while (true) {
    TESSERA_ASSIGN_OR_RETURN(std::string message, cluster.Receive(kMaster, distributed::kCommandTag));
    TESSERA_ASSIGN_OR_RETURN(Command command, distributed::DecodeCommand(message));
    switch (command.kind) {
      case CommandKind::kShutdown:
        streams.JoinAll();
        return absl::OkStatus();
      case CommandKind::kRunFragment:
      case CommandKind::kShuffle:
        streams.Start(database, command);
        break;
      case CommandKind::kRelease:
        streams.Release(command.tag);
        break;
      case CommandKind::kExecute: {
        absl::StatusOr<QueryResult> result = session.Execute(command.text);
        TESSERA_RETURN_IF_ERROR(cluster.Send(
            kMaster, command.tag, distributed::EncodeReply(result.status(), result.ok() ? result->rows_affected : 0)));
        break;
      }
      case CommandKind::kStatistics: {
        absl::StatusOr<std::shared_ptr<const TableDescriptor>> table = database.catalog().GetTable(command.text);
        TESSERA_RETURN_IF_ERROR(cluster.Send(kMaster, command.tag, distributed::EncodeReply(table.status(), 0)));
        if (table.ok()) {
          int64_t rows = 0;
          for (const SegmentDescriptor& segment : (*table)->segments) rows += segment.row_count;
          TESSERA_RETURN_IF_ERROR(
              cluster.Send(kMaster, command.tag, distributed::EncodeTableStatistics(rows, (*table)->statistics)));
        }
        break;
      }
      case CommandKind::kCopyIn: {
        absl::StatusOr<int64_t> rows = ReceiveCopy(database, session, command);
        TESSERA_RETURN_IF_ERROR(
            cluster.Send(kMaster, command.tag, distributed::EncodeReply(rows.status(), rows.ok() ? *rows : 0)));
        break;
      }
    }
  }
}

void StopRankServices(Database& database) {
  Cluster& cluster = *database.options().cluster;
  for (int rank = 1; rank < cluster.size(); ++rank) {
    absl::Status sent =
        cluster.Send(rank, distributed::kCommandTag, distributed::EncodeCommand({CommandKind::kShutdown, 0, ""}));
    if (!sent.ok()) LOG(WARNING) << "cannot stop rank " << rank << ": " << sent;
  }
}

}  // namespace tessera
