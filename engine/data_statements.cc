// CREATE TABLE, DROP TABLE, COPY, INSERT ... VALUES / SELECT and ANALYZE. COPY FROM and INSERT ... SELECT run as
// queries under the Foreman (their DAGs end in a load operator); the others run here, in the session's thread.

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "catalog/catalog.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "engine/constant_expression.h"
#include "engine/statement_handlers.h"
#include "optimizer/binder.h"
#include "parser/parser.h"
#include "query_execution/plan_builder.h"
#include "relational_operators/copy_from_operator.h"
#include "relational_operators/table_load.h"
#include "storage/block_statistics.h"
#include "storage/delimited_file.h"
#include "storage/storage_manager.h"

namespace tessera {
namespace {

using parser::ParsedExpr;

QueryResult StatusOnly(std::string message, int64_t rows = 0) {
  QueryResult result;
  result.status_message = std::move(message);
  result.rows_affected = rows;
  return result;
}

absl::StatusOr<uint32_t> ParseBlockSize(const Value& value) {
  int64_t bytes = 0;
  if (value.type().IsString()) {
    std::string text = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(value.AsString()));
    int64_t multiplier = 1;
    for (auto [suffix, factor] : {std::pair{"KIB", 1 << 10},
                                  {"MIB", 1 << 20},
                                  {"KB", 1 << 10},
                                  {"MB", 1 << 20},
                                  {"K", 1 << 10},
                                  {"M", 1 << 20},
                                  {"B", 1}}) {
      if (absl::EndsWith(text, suffix)) {
        multiplier = factor;
        text = std::string(absl::StripAsciiWhitespace(text.substr(0, text.size() - strlen(suffix))));
        break;
      }
    }
    if (!absl::SimpleAtoi(text, &bytes)) {
      return absl::InvalidArgumentError(absl::StrCat("invalid block_size '", value.AsString(), "'"));
    }
    bytes *= multiplier;
  } else if (value.type().id() == TypeId::kInteger || value.type().id() == TypeId::kBigInt) {
    bytes = value.AsInt64();
  } else {
    return absl::InvalidArgumentError("block_size must be a number of bytes or a string such as '4MB'");
  }
  if (bytes < kMinBlockSizeBytes || bytes > kMaxBlockSizeBytes) {
    return absl::InvalidArgumentError(absl::StrCat("block_size ", bytes, " is out of range (", kMinBlockSizeBytes,
                                                   " to ", kMaxBlockSizeBytes, " bytes)"));
  }
  return static_cast<uint32_t>(bytes);
}

// Installs `loaded`, already written by `writer`, as a new segment of the table `planned` was read from, in its
// current version (other loads may have committed since): flush the block file, make the blocks readable, then
// commit the catalog. Fails (Aborted) when the table was dropped meanwhile. Any failure before the catalog commit leaves
// the table as it was and removes the segment file (the writer removes it when it is destroyed unfinished).
absl::Status CommitLoad(Database& database, const TableDescriptor& planned, std::unique_ptr<SegmentWriter> writer,
                        LoadedRows loaded) {
  if (loaded.row_count == 0) return absl::OkStatus();
  TESSERA_RETURN_IF_ERROR(writer->Finish());  // outside the mutex: it waits for the disk
  StorageManager& storage = database.storage();
  SegmentDescriptor segment = DescribeSegment(writer->segment_id(), loaded);
  absl::MutexLock lock(&TableWriteMutex());
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> current = database.catalog().GetTable(planned.name);
  if (!current.ok() || (*current)->table_id != planned.table_id) {
    storage.DeleteSegmentFile(segment.segment_id);
    return absl::AbortedError(absl::StrCat("table '", planned.name, "' was dropped while rows were loaded into it"));
  }
  auto updated = std::make_shared<TableDescriptor>(**current);
  updated->segments.push_back(segment);
  updated->row_count += loaded.row_count;
  for (size_t c = 0; c < updated->statistics.size(); ++c) updated->statistics[c].Merge(loaded.statistics[c]);
  // Readable before the catalog lists it: a query that takes the new version at once must find its blocks.
  storage.RegisterSegment(segment, planned.columns, std::move(loaded.blocks));
  absl::Status committed = database.catalog().ReplaceTable(*current, std::move(updated));
  if (!committed.ok()) storage.DropSegment(segment.segment_id);  // its blocks and its file
  return committed;
}

}  // namespace

absl::StatusOr<std::shared_ptr<TableLoad>> StartLoad(Database& database, std::shared_ptr<const TableDescriptor> table,
                                                     const QueryRunOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<SegmentWriter> writer,
                           database.storage().CreateSegmentWriter(database.catalog().AllocateSegmentId()));
  TableLoad::CommitFunction commit = [&database, table](std::unique_ptr<SegmentWriter> writer, LoadedRows rows) {
    return CommitLoad(database, *table, std::move(writer), std::move(rows));
  };
  auto load = std::make_shared<TableLoad>(table, &database.storage(), std::move(writer), std::move(commit));
  load->set_compress(options.compress_loads);
  return load;
}

namespace {

// Runs a load's DAG under the Foreman and returns the rows it committed. The statement succeeded iff the load
// committed: a cancel that lands while the commit work order runs does not undo it. Otherwise the load's segment
// file is gone once the last reference to `load` (the caller's) is.
absl::StatusOr<int64_t> RunLoad(Database& database, std::unique_ptr<ExecutionDag> dag, const TableLoad& load,
                                const QueryRunOptions& options) {
  absl::StatusOr<std::shared_ptr<ExecutionQuery>> query = RunDag(database, std::move(dag), options);
  if (load.committed()) return load.committed_rows();
  if (!query.ok()) return query.status();
  return absl::InternalError("a load finished without committing");
}

}  // namespace

absl::StatusOr<std::vector<std::shared_ptr<const TableDescriptor>>> NamedTableOrAll(const Catalog& catalog,
                                                                                    const std::string& name) {
  if (name.empty()) return catalog.ListTables();
  TESSERA_ASSIGN_OR_RETURN(auto table, catalog.GetTable(name));
  return std::vector<std::shared_ptr<const TableDescriptor>>{std::move(table)};
}

absl::StatusOr<std::vector<int>> ResolveColumnList(const TableDescriptor& table,
                                                   const std::vector<std::string>& names) {
  std::vector<int> indexes;
  for (const std::string& name : names) {
    int index = FindColumn(table.columns, name);
    if (index < 0) {
      std::vector<std::string> candidates;
      for (const ColumnSchema& column : table.columns) candidates.push_back(column.name);
      std::string hint = ClosestName(name, candidates);
      return absl::NotFoundError(absl::StrCat("column '", name, "' of table '", table.name, "' does not exist",
                                              hint.empty() ? "" : absl::StrCat("; did you mean '", hint, "'?")));
    }
    if (std::find(indexes.begin(), indexes.end(), index) != indexes.end()) {
      return absl::InvalidArgumentError(absl::StrCat("column '", name, "' is listed more than once"));
    }
    indexes.push_back(index);
  }
  return indexes;
}

namespace {

// Files default to CSV (.tbl files to dbgen's format), STDIN / STDOUT to PostgreSQL's text format, as psql's \copy
// and psycopg's cursor.copy() speak it; FORMAT csv | text | tbl chooses.
absl::StatusOr<DelimitedFormat> CopyFormat(const parser::CopyStatement& statement) {
  DelimitedFormat format;
  std::string lower_path = absl::AsciiStrToLower(statement.path);
  bool tbl = absl::EndsWith(lower_path, ".tbl");
  bool text = statement.stdio;
  std::optional<char> delimiter;
  std::optional<char> quote;
  std::optional<std::string> null_string;
  for (const auto& [name, expr] : statement.options) {
    TESSERA_ASSIGN_OR_RETURN(Value value, EvaluateConstant(*expr, statement.text));
    auto single_char = [&](std::string_view option) -> absl::StatusOr<char> {
      if (!value.type().IsString() || value.AsString().size() > 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("COPY option ", std::string(option), " must be a single character"));
      }
      return value.AsString().empty() ? '\0' : value.AsString()[0];
    };
    if (name == "delimiter" || name == "delim" || name == "sep") {
      TESSERA_ASSIGN_OR_RETURN(char c, single_char("DELIMITER"));
      if (c == '\0' || c == '\n') return absl::InvalidArgumentError("COPY DELIMITER cannot be empty or a newline");
      delimiter = c;
    } else if (name == "quote") {
      TESSERA_ASSIGN_OR_RETURN(char c, single_char("QUOTE"));
      quote = c;
    } else if (name == "header") {
      if (value.type().id() == TypeId::kBoolean) {
        format.header = value.AsBool();
      } else {
        absl::StatusOr<Value> as_bool = value.CastTo(Type::Boolean());
        if (!as_bool.ok()) return absl::InvalidArgumentError("COPY option HEADER must be true or false");
        format.header = as_bool->AsBool();
      }
    } else if (name == "null") {
      if (!value.type().IsString()) return absl::InvalidArgumentError("COPY option NULL must be a string");
      null_string = value.AsString();
    } else if (name == "format") {
      std::string kind = value.type().IsString() ? absl::AsciiStrToLower(value.AsString()) : "";
      tbl = kind == "tbl";
      text = kind == "text";
      if (kind != "tbl" && kind != "text" && kind != "csv") {
        return absl::InvalidArgumentError("COPY FORMAT must be csv, text or tbl");
      }
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown COPY option '", name, "' (known: DELIMITER, HEADER, NULL, QUOTE, FORMAT)"));
    }
  }
  if (tbl) {
    format.delimiter = '|';
    format.quote = '\0';
    format.trailing_delimiter = true;
  } else if (text) {
    if (quote) return absl::InvalidArgumentError("COPY QUOTE is available only in CSV format");
    format.delimiter = '\t';
    format.quote = '\0';
    format.null_string = "\\N";
    format.backslash_escapes = true;
  }
  if (delimiter) format.delimiter = *delimiter;
  if (quote) format.quote = *quote;
  if (null_string) format.null_string = *null_string;
  if (format.backslash_escapes && format.delimiter == '\\') {
    return absl::InvalidArgumentError("COPY DELIMITER cannot be a backslash in text format");
  }
  return format;
}

absl::Status CopyToError(absl::string_view what, const std::string& path, int error) {
  std::string message = absl::StrCat("COPY TO: ", what, " '", path, "': ", std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

// COPY t TO 'path'. ExportDelimitedFile writes a temporary file beside the file it is given and renames it into
// place; here it writes into a private directory that mkdtemp creates beside `path` (mode 0700, a name nobody can
// know in advance), and that file is renamed over `path`. So no one else's link can stand where the temporary file
// is created (a link planted at a predictable temporary name would make the server write through it: into its
// catalog, or out of its --allowed-directories), concurrent COPY TOs of one target never share a temporary file
// (each leaves a whole file; the last rename wins), and a failed COPY TO leaves `path` as it was and nothing
// beside it. A symbolic link at `path` itself is replaced, not written through.
absl::StatusOr<int64_t> ExportAtomically(Database& database, const std::string& path, const TableDescriptor& table,
                                         const DelimitedFormat& format) {
  const std::filesystem::path target(path);
  const std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return absl::InvalidArgumentError(absl::StrCat("COPY TO '", path, "': not a file name"));
  }
  const std::filesystem::path directory = target.has_parent_path() ? target.parent_path() : ".";
  std::string staging = (directory / ".tessera-copy-XXXXXX").string();
  if (::mkdtemp(staging.data()) == nullptr) return CopyToError("cannot create", path, errno);
  absl::StatusOr<int64_t> rows =
      ExportDelimitedFile((std::filesystem::path(staging) / name).string(), table, format, database.storage());
  absl::Status status = rows.status();
  if (status.ok() && ::rename((std::filesystem::path(staging) / name).c_str(), path.c_str()) != 0) {
    status = CopyToError("cannot create", path, errno);
  }
  std::error_code ignored;
  std::filesystem::remove_all(staging, ignored);  // empty after the rename; the partial file after a failure
  if (!status.ok()) return status;
  if (database.options().sync_writes) {
    // The rename is durable once the directory is.
    int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return CopyToError("cannot sync the directory of", path, errno);
    int synced = ::fsync(fd);
    int error = errno;
    ::close(fd);
    if (synced != 0) return CopyToError("cannot sync the directory of", path, error);
  }
  return rows;
}

}  // namespace

absl::StatusOr<DelimitedFormat> CopyStatementFormat(const parser::CopyStatement& statement) {
  return CopyFormat(statement);
}

// A load holds it only for its commit, not while it reads and builds blocks, so loads into the same or different
// tables run concurrently and their segments add up in commit order.
absl::Mutex& TableWriteMutex() {
  static absl::Mutex mutex;
  return mutex;
}

// CREATE TABLE's WITH (...) options into `table`.
absl::Status ApplyTableOptions(const parser::CreateTableStatement& statement, TableDescriptor* table) {
  for (const auto& [name, expr] : statement.options) {
    TESSERA_ASSIGN_OR_RETURN(Value value, EvaluateConstant(*expr, statement.text));
    if (name == "block_size") {
      TESSERA_ASSIGN_OR_RETURN(table->block_size_bytes, ParseBlockSize(value));
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown table option '", name, "' (known: block_size)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<QueryResult> ExecuteCreateTable(Database& database, const parser::CreateTableStatement& statement) {
  Catalog& catalog = database.catalog();
  if (catalog.HasTable(statement.table) && statement.if_not_exists) return StatusOnly("CREATE TABLE");
  TableDescriptor table;
  table.name = statement.table;
  if (statement.columns.empty()) return absl::InvalidArgumentError("a table needs at least one column");
  for (const parser::ColumnDefinition& definition : statement.columns) {
    if (FindColumn(table.columns, definition.name) >= 0) {
      return absl::InvalidArgumentError(
          parser::FormatErrorWithCaret(statement.text, definition.position,
                                       absl::StrCat("column '", definition.name, "' specified more than once")));
    }
    if (definition.name == kRowIdColumnName) {
      return absl::InvalidArgumentError(parser::FormatErrorWithCaret(
          statement.text, definition.position, absl::StrCat("column name '", definition.name, "' is reserved")));
    }
    ColumnSchema column;
    column.name = definition.name;
    absl::StatusOr<Type> type =
        Type::FromName(definition.type.name, definition.type.parameters.data(), definition.type.parameters.size());
    if (!type.ok()) {
      return absl::InvalidArgumentError(
          parser::FormatErrorWithCaret(statement.text, definition.type.position, std::string(type.status().message())));
    }
    column.type = *type;
    column.not_null = definition.not_null || definition.primary_key;
    if (definition.default_value != nullptr) {
      TESSERA_ASSIGN_OR_RETURN(Value value, EvaluateConstant(*definition.default_value, statement.text));
      if (!value.is_null()) {
        absl::StatusOr<Value> cast = value.CastTo(column.type);
        if (!cast.ok()) {
          return absl::InvalidArgumentError(parser::FormatErrorWithCaret(
              statement.text, definition.default_value->position,
              absl::StrCat("invalid DEFAULT for column '", column.name, "': ", cast.status().message())));
        }
        column.default_value = *std::move(cast);
      } else if (column.not_null) {
        return absl::InvalidArgumentError(absl::StrCat("column '", column.name, "' is NOT NULL but defaults to NULL"));
      }
    }
    table.columns.push_back(std::move(column));
  }
  for (const std::string& key : statement.primary_key) {
    int index = FindColumn(table.columns, key);
    if (index < 0) return absl::InvalidArgumentError(absl::StrCat("PRIMARY KEY column '", key, "' does not exist"));
    table.columns[index].not_null = true;
  }
  if (!statement.partition_column.empty()) {
    table.partition_column = FindColumn(table.columns, statement.partition_column);
    if (table.partition_column < 0) {
      return absl::InvalidArgumentError(absl::StrCat("PARTITION BY HASH column '", statement.partition_column,
                                                     "' does not exist in table '", table.name, "'"));
    }
  }
  TESSERA_RETURN_IF_ERROR(ApplyTableOptions(statement, &table));
  absl::Status status = catalog.CreateTable(std::move(table));
  if (absl::IsAlreadyExists(status) && statement.if_not_exists) return StatusOnly("CREATE TABLE");
  TESSERA_RETURN_IF_ERROR(status);
  return StatusOnly("CREATE TABLE");
}

absl::StatusOr<QueryResult> ExecuteCreateTableAs(Database& database, const parser::CreateTableStatement& statement,
                                                 const QueryRunOptions& options) {
  Catalog& catalog = database.catalog();
  if (catalog.HasTable(statement.table) && statement.if_not_exists) return StatusOnly("SELECT 0", 0);
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<optimizer::LogicalOperator> plan,
                           optimizer::PlanQuery(*statement.query, catalog, statement.text, options.optimizer));
  TableDescriptor table;
  table.name = statement.table;
  for (const optimizer::OutputColumn& output : plan->output()) {
    if (FindColumn(table.columns, output.name) >= 0 || output.name == kRowIdColumnName) {
      return absl::InvalidArgumentError(
          parser::FormatErrorWithCaret(statement.text, statement.query->position,
                                       absl::StrCat("CREATE TABLE ... AS: the query has two columns named '",
                                                    output.name, "'; name them apart with AS")));
    }
    if (output.type.id() == TypeId::kNull) {
      return absl::InvalidArgumentError(parser::FormatErrorWithCaret(
          statement.text, statement.query->position,
          absl::StrCat("CREATE TABLE ... AS: column '", output.name, "' has no type (NULL); cast it")));
    }
    ColumnSchema column;
    column.name = output.name;
    column.type = output.type;
    table.columns.push_back(std::move(column));
  }
  TESSERA_RETURN_IF_ERROR(ApplyTableOptions(statement, &table));
  absl::Status created = catalog.CreateTable(std::move(table));
  if (absl::IsAlreadyExists(created) && statement.if_not_exists) return StatusOnly("SELECT 0", 0);
  TESSERA_RETURN_IF_ERROR(created);
  // The rows go in as INSERT ... SELECT's do; a failed load leaves no table behind.
  absl::StatusOr<int64_t> rows = [&]() -> absl::StatusOr<int64_t> {
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> created_table, catalog.GetTable(statement.table));
    std::vector<int> targets;
    for (size_t c = 0; c < created_table->columns.size(); ++c) targets.push_back(static_cast<int>(c));
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<TableLoad> load, StartLoad(database, created_table, options));
    TESSERA_ASSIGN_OR_RETURN(
        std::unique_ptr<ExecutionDag> dag,
        BuildInsertDag(*plan, InsertTarget{load, std::move(targets)}, &database.storage(), &database.buffer_pool()));
    return RunLoad(database, std::move(dag), *load, options);
  }();
  if (!rows.ok()) {
    parser::DropStatement drop(parser::StatementKind::kDropTable);
    drop.name = statement.table;
    drop.if_exists = true;
    ExecuteDropTable(database, drop).IgnoreError();
    return rows.status();
  }
  return StatusOnly(absl::StrCat("SELECT ", *rows), *rows);
}

absl::StatusOr<QueryResult> ExecuteDropTable(Database& database, const parser::DropStatement& statement) {
  absl::MutexLock lock(&TableWriteMutex());
  if (!database.catalog().HasTable(statement.name)) {
    if (statement.if_exists) return StatusOnly("DROP TABLE");
  }
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> dropped,
                           database.catalog().DropTable(statement.name));
  for (const SegmentDescriptor& segment : dropped->segments) database.storage().DropSegment(segment.segment_id);
  return StatusOnly("DROP TABLE");
}

absl::StatusOr<QueryResult> ExecuteCopy(Database& database, const parser::CopyStatement& statement,
                                        const QueryRunOptions& options) {
  if (statement.query != nullptr) {
    return absl::UnimplementedError("COPY (query) TO a file is not supported yet; use TO STDOUT");
  }
  TESSERA_ASSIGN_OR_RETURN(DelimitedFormat format, CopyFormat(statement));
  TESSERA_RETURN_IF_ERROR(CheckFileAccess(database.options().file_access, database.options().data_directory,
                                          statement.path, /*writing=*/!statement.from));
  if (!statement.from) {
    if (!statement.columns.empty()) return absl::UnimplementedError("COPY TO with a column list is not supported yet");
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> table,
                             database.catalog().GetTable(statement.table));
    TESSERA_ASSIGN_OR_RETURN(int64_t rows, ExportAtomically(database, statement.path, *table, format));
    return StatusOnly(absl::StrCat("COPY ", rows), rows);
  }
  struct stat info;
  if (::stat(statement.path.c_str(), &info) == 0 && S_ISFIFO(info.st_mode)) {
    return ExecuteCopyFromPipe(database, statement, options);
  }
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> table, database.catalog().GetTable(statement.table));
  TESSERA_ASSIGN_OR_RETURN(std::vector<int> columns, ResolveColumnList(*table, statement.columns));
  // Chunks of 8 to 32 MiB, about 8 per worker: short enough work orders for progress, cancellation and sharing
  // the cores with other queries, long enough that a chunk's last, partly filled block is a small share.
  ChunkSizing sizing;
  sizing.min_bytes = 8 << 20;
  sizing.max_bytes = 32 << 20;
  sizing.target_chunks = static_cast<size_t>(std::max(1, database.options().worker_threads)) * 8;
  const FileAccessPolicy& access = database.options().file_access;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<DelimitedFileChunks> file,
                           DelimitedFileChunks::Open(statement.path, *table, columns, format, sizing, [&](int fd) {
                             return CheckOpenedFileAccess(access, database.options().data_directory, statement.path, fd,
                                                          /*writing=*/false);
                           }));
  const int64_t file_bytes = static_cast<int64_t>(file->file_bytes());
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<TableLoad> load, StartLoad(database, table, options));
  auto dag = std::make_unique<ExecutionDag>();
  std::unique_ptr<BufferPool> account = BufferPool::NewAccount(&database.buffer_pool());
  const int index = dag->AddOperator(std::make_unique<CopyFromOperator>(std::move(file), load, account.get()),
                                     absl::StrCat("into ", table->name, " from '", statement.path, "'"));
  dag->set_memory_account(std::move(account));
  dag->set_result_operator(index);
  // The loaded blocks stay in memory until the commit; they take about the file's size.
  dag->set_memory_estimate(QueryMemoryEstimate{file_bytes, file_bytes});
  TESSERA_ASSIGN_OR_RETURN(int64_t rows, RunLoad(database, std::move(dag), *load, options));
  return StatusOnly(absl::StrCat("COPY ", rows), rows);
}

absl::StatusOr<QueryResult> ExecuteInsertSelect(Database& database, const parser::InsertStatement& statement,
                                                const QueryRunOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> table, database.catalog().GetTable(statement.table));
  TESSERA_ASSIGN_OR_RETURN(std::vector<int> targets, ResolveColumnList(*table, statement.columns));
  if (targets.empty()) {
    for (size_t c = 0; c < table->columns.size(); ++c) targets.push_back(static_cast<int>(c));
  }
  // The query reads the catalog as it is now: INSERT INTO t SELECT ... FROM t reads t's rows before the insert.
  TESSERA_ASSIGN_OR_RETURN(
      std::unique_ptr<optimizer::LogicalOperator> plan,
      optimizer::PlanQuery(*statement.query, database.catalog(), statement.text, options.optimizer));
  if (plan->output().size() != targets.size()) {
    return absl::InvalidArgumentError(
        parser::FormatErrorWithCaret(statement.text, statement.position,
                                     absl::StrCat("INSERT ... SELECT: the query returns ", plan->output().size(),
                                                  " columns but ", targets.size(), " columns are targeted")));
  }
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<TableLoad> load, StartLoad(database, table, options));
  TESSERA_ASSIGN_OR_RETURN(
      std::unique_ptr<ExecutionDag> dag,
      BuildInsertDag(*plan, InsertTarget{load, std::move(targets)}, &database.storage(), &database.buffer_pool()));
  TESSERA_ASSIGN_OR_RETURN(int64_t rows, RunLoad(database, std::move(dag), *load, options));
  return StatusOnly(absl::StrCat("INSERT ", rows), rows);
}

absl::StatusOr<QueryResult> ExecuteInsert(Database& database, const parser::InsertStatement& statement) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> table, database.catalog().GetTable(statement.table));
  TESSERA_ASSIGN_OR_RETURN(std::vector<int> targets, ResolveColumnList(*table, statement.columns));
  if (targets.empty()) {
    for (size_t c = 0; c < table->columns.size(); ++c) targets.push_back(static_cast<int>(c));
  }
  const size_t row_count = statement.values.size();
  std::vector<std::vector<Value>> rows;
  rows.reserve(row_count);
  for (size_t r = 0; r < row_count; ++r) {
    const auto& exprs = statement.values[r];
    if (exprs.size() != targets.size()) {
      return absl::InvalidArgumentError(
          parser::FormatErrorWithCaret(statement.text, exprs.empty() ? statement.position : exprs[0]->position,
                                       absl::StrCat("INSERT row ", r + 1, " has ", exprs.size(), " values but ",
                                                    targets.size(), " columns are targeted")));
    }
    std::vector<Value> row(table->columns.size());
    std::vector<bool> given(table->columns.size(), false);
    for (size_t i = 0; i < targets.size(); ++i) {
      const ColumnSchema& column = table->columns[targets[i]];
      TESSERA_ASSIGN_OR_RETURN(Value value, EvaluateConstant(*exprs[i], statement.text));
      if (!value.is_null()) {
        absl::StatusOr<Value> cast = value.CastTo(column.type);
        if (!cast.ok()) {
          return absl::InvalidArgumentError(parser::FormatErrorWithCaret(
              statement.text, exprs[i]->position, absl::StrCat("column ", column.name, ": ", cast.status().message())));
        }
        value = *std::move(cast);
      } else {
        value = Value::Null(column.type);
      }
      row[targets[i]] = std::move(value);
      given[targets[i]] = true;
    }
    for (size_t c = 0; c < table->columns.size(); ++c) {
      const ColumnSchema& column = table->columns[c];
      if (!given[c]) row[c] = column.default_value.value_or(Value::Null(column.type));
      if (column.not_null && row[c].is_null()) {
        return absl::InvalidArgumentError(
            absl::StrCat("INSERT row ", r + 1, ": NULL in NOT NULL column '", column.name, "'"));
      }
    }
    rows.push_back(std::move(row));
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<SegmentWriter> writer,
                           database.storage().CreateSegmentWriter(database.catalog().AllocateSegmentId()));
  TESSERA_ASSIGN_OR_RETURN(LoadedRows loaded, LoadRows(*table, rows, database.storage(), *writer));
  int64_t count = loaded.row_count;
  TESSERA_RETURN_IF_ERROR(CommitLoad(database, *table, std::move(writer), std::move(loaded)));
  return StatusOnly(absl::StrCat("INSERT ", count), count);
}

absl::Status AnalyzeTableLocked(Database& database, const std::shared_ptr<const TableDescriptor>& table) {
  std::vector<ColumnStatistics> statistics(table->columns.size());
  for (const SegmentDescriptor& segment : table->segments) {
    for (uint32_t b = 0; b < segment.blocks.size(); ++b) {
      TESSERA_ASSIGN_OR_RETURN(BlockHandle handle, database.storage().PinBlock(BlockId{segment.segment_id, b}));
      // Deleted rows are left out, so the statistics describe the live rows.
      const DeletedRows* deleted = segment.DeletedIn(b);
      AccumulateBlockStatistics(handle.view(), table->columns, &statistics,
                                deleted != nullptr && deleted->deleted_count() > 0 ? deleted->words() : nullptr);
    }
  }
  auto updated = std::make_shared<TableDescriptor>(*table);
  updated->statistics = std::move(statistics);
  updated->stale_rows = 0;
  return database.catalog().ReplaceTable(table, std::move(updated));
}

absl::Status AnalyzeStaleTable(Database& database, const std::string& table) {
  absl::MutexLock lock(&TableWriteMutex());
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> current = database.catalog().GetTable(table);
  if (!current.ok() || (*current)->stale_rows == 0) return absl::OkStatus();
  return AnalyzeTableLocked(database, *current);
}

absl::StatusOr<QueryResult> ExecuteAnalyze(Database& database, const parser::AnalyzeStatement& statement) {
  absl::MutexLock lock(&TableWriteMutex());
  TESSERA_ASSIGN_OR_RETURN(auto tables, NamedTableOrAll(database.catalog(), statement.table));
  for (const auto& table : tables) TESSERA_RETURN_IF_ERROR(AnalyzeTableLocked(database, table));
  return StatusOnly("ANALYZE");
}

}  // namespace tessera
