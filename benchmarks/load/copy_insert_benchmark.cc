// COPY FROM and INSERT ... SELECT: the old paths against the load operators under the Foreman, in the same process
// and run, alternating old and new in every round; prints per-run times and medians. See README.md.
//
//   copy_insert_benchmark [--tbl ~/.cache/tessera/tpch-sf1/lineitem.tbl] [--runs 3] [--threads 2]
//                         [--insert-max-orderkey N]   (default 1000000, about 1M rows; 0 = all of lineitem)
//                         [--pin-workers 0|1]         (default 1: the Foreman's workers pinned to cores, as the server)
//   (gflags: --help lists the flags; --flag value and --flag=value both work)
//
// Everything is written into a fresh temporary data directory (removed at the end), without fsync.
//   - COPY old: LoadDelimitedFile (storage/delimited_file.h) on --threads private threads, then the segment's final
//     flush; no catalog commit (the table is dropped after each run).
//   - COPY new: the COPY statement (CopyFrom operator under the Foreman, including its commit).
//   - INSERT old: what INSERT ... SELECT did before: run the SELECT to a result of rows of Values, cast every value
//     to the target type, build blocks with LoadRows, flush the segment (no commit).
//   - INSERT new: the INSERT ... SELECT statement (Insert operator, including its commit).

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmarks/command_line_flags.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "engine/session.h"
#include "storage/delimited_file.h"

DEFINE_string(tbl, "", "TPC-H lineitem.tbl to load (default: $HOME/.cache/tessera/tpch-sf1/lineitem.tbl)");
DEFINE_int32(runs, 3, "rounds; each round runs the old and the new path of COPY and of INSERT ... SELECT");
DEFINE_int32(threads, 2, "threads of the old COPY path and worker threads of the Foreman");
// The old INSERT path holds the query's result as rows of Values (about 3.5 KB per lineitem row), so all of
// lineitem (6M rows) does not fit on a 24 GiB machine: by default ~1M rows.
DEFINE_int64(insert_max_orderkey, 1'000'000, "INSERT ... SELECT copies lineitem rows with l_orderkey <= N (0: all)");
DEFINE_int32(pin_workers, 1, "1: the Foreman's workers pinned to cores, as in the server; 0: not pinned");

namespace tessera {
namespace {

constexpr char kLineitemColumns[] =
    "(l_orderkey BIGINT NOT NULL, l_partkey INTEGER NOT NULL, l_suppkey INTEGER NOT NULL, "
    "l_linenumber INTEGER NOT NULL, l_quantity DECIMAL(15,2) NOT NULL, l_extendedprice DECIMAL(15,2) NOT NULL, "
    "l_discount DECIMAL(15,2) NOT NULL, l_tax DECIMAL(15,2) NOT NULL, l_returnflag CHAR(1) NOT NULL, "
    "l_linestatus CHAR(1) NOT NULL, l_shipdate DATE NOT NULL, l_commitdate DATE NOT NULL, "
    "l_receiptdate DATE NOT NULL, l_shipinstruct CHAR(25) NOT NULL, l_shipmode CHAR(10) NOT NULL, "
    "l_comment VARCHAR(44) NOT NULL)";

void Check(const absl::Status& status, const char* what) {
  if (status.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, std::string(status.message()).c_str());
  std::exit(1);
}

QueryResult Run(Session& session, const std::string& sql) {
  absl::StatusOr<QueryResult> result = session.Execute(sql);
  Check(result.status(), sql.c_str());
  return *std::move(result);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The COPY before the CopyFrom operator: private threads, outside the Foreman. Returns rows loaded; `blocks` gets
// the blocks built.
int64_t OldCopy(Database& database, const std::string& table_name, const std::string& path, int threads,
                int64_t* blocks) {
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> table = database.catalog().GetTable(table_name);
  Check(table.status(), "GetTable");
  absl::StatusOr<std::unique_ptr<SegmentWriter>> writer =
      database.storage().CreateSegmentWriter(database.catalog().AllocateSegmentId());
  Check(writer.status(), "CreateSegmentWriter");
  DelimitedFormat format;
  format.delimiter = '|';
  format.quote = '\0';
  format.trailing_delimiter = true;
  absl::StatusOr<LoadedRows> loaded =
      LoadDelimitedFile(path, **table, {}, format, database.storage(), **writer, threads);
  Check(loaded.status(), "LoadDelimitedFile");
  *blocks = static_cast<int64_t>(loaded->blocks.size());
  Check((*writer)->Finish(), "Finish");
  database.storage().DeleteSegmentFile((*writer)->segment_id());
  return loaded->row_count;
}

// INSERT ... SELECT before the Insert operator: the query's rows as Values, cast one by one, then LoadRows.
int64_t OldInsert(Database& database, Session& session, const std::string& table_name, const std::string& select) {
  QueryResult selected = Run(session, select);
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> table = database.catalog().GetTable(table_name);
  Check(table.status(), "GetTable");
  const std::vector<ColumnSchema>& columns = (*table)->columns;
  std::vector<std::vector<Value>> rows;
  rows.reserve(selected.rows.size());
  for (const std::vector<Value>& source : selected.rows) {
    std::vector<Value> row(columns.size());
    for (size_t c = 0; c < columns.size(); ++c) {
      absl::StatusOr<Value> cast =
          source[c].is_null() ? Value::Null(columns[c].type) : source[c].CastTo(columns[c].type);
      Check(cast.status(), "CastTo");
      row[c] = *std::move(cast);
    }
    rows.push_back(std::move(row));
  }
  selected.rows.clear();
  absl::StatusOr<std::unique_ptr<SegmentWriter>> writer =
      database.storage().CreateSegmentWriter(database.catalog().AllocateSegmentId());
  Check(writer.status(), "CreateSegmentWriter");
  absl::StatusOr<LoadedRows> loaded = LoadRows(**table, rows, database.storage(), **writer);
  Check(loaded.status(), "LoadRows");
  Check((*writer)->Finish(), "Finish");
  database.storage().DeleteSegmentFile((*writer)->segment_id());
  return loaded->row_count;
}

constexpr char kUsage[] =
    "COPY FROM and INSERT ... SELECT: the old paths against the load operators, alternating in every round.\n"
    "usage: copy_insert_benchmark [--tbl lineitem.tbl] [--runs 3] [--threads 2] [--insert-max-orderkey N] "
    "[--pin-workers 0|1]";

int Main(int argc, char** argv) {
  bench::ParseCommandLine(&argc, &argv, kUsage, __FILE__);
  const char* home = std::getenv("HOME");
  const std::string tbl =
      !FLAGS_tbl.empty() ? FLAGS_tbl : absl::StrCat(home ? home : "", "/.cache/tessera/tpch-sf1/lineitem.tbl");
  const int runs = FLAGS_runs;
  const int threads = FLAGS_threads;
  const int pin_workers = FLAGS_pin_workers;
  const int64_t insert_max_orderkey = FLAGS_insert_max_orderkey;
  if (argc > 1 || runs <= 0 || threads <= 0) {
    std::fprintf(stderr, "copy_insert_benchmark: bad arguments (--runs and --threads must be > 0; see --help)\n");
    return 2;
  }
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / absl::StrCat("copy_insert_benchmark_", getpid());
  DatabaseOptions options;
  options.data_directory = directory.string();
  options.sync_writes = false;
  options.worker_threads = threads;
  options.scheduler.pool.pin_to_cpus = pin_workers != 0;
  absl::StatusOr<std::unique_ptr<Database>> opened = Database::Open(options);
  Check(opened.status(), "Database::Open");
  Database& database = **opened;
  Session session(&database);
  const double file_mb = static_cast<double>(std::filesystem::file_size(tbl)) / (1 << 20);
  std::printf("file %s (%.0f MiB), %d worker threads (%s), %d runs\n", tbl.c_str(), file_mb, threads,
              pin_workers != 0 ? "pinned" : "not pinned", runs);

  {
    // Warm the page cache, so that the first COPY does not pay for reading the file from disk.
    absl::StatusOr<MappedFile> mapped = MappedFile::Open(tbl);
    Check(mapped.status(), "MappedFile::Open");
    uint64_t sum = 0;
    for (size_t i = 0; i < mapped->contents().size(); i += 4096) sum += static_cast<uint8_t>(mapped->contents()[i]);
    if (sum == 1) std::printf(" ");
  }
  std::vector<double> copy_old, copy_new, insert_old, insert_new;
  int64_t copy_rows = 0;
  int64_t old_blocks = 0;
  for (int run = 0; run < runs; ++run) {
    Run(session, absl::StrCat("CREATE TABLE copy_old ", kLineitemColumns));
    int64_t start = MonotonicNanos();
    copy_rows = OldCopy(database, "copy_old", tbl, threads, &old_blocks);
    copy_old.push_back((MonotonicNanos() - start) / 1e9);
    Run(session, "DROP TABLE copy_old");

    Run(session, absl::StrCat("CREATE TABLE copy_new ", kLineitemColumns));
    start = MonotonicNanos();
    const int64_t rows = Run(session, absl::StrCat("COPY copy_new FROM '", tbl, "' (DELIMITER '|')")).rows_affected;
    copy_new.push_back((MonotonicNanos() - start) / 1e9);
    if (rows != copy_rows) Check(absl::InternalError(absl::StrCat(rows, " vs ", copy_rows, " rows")), "COPY");
    std::printf("COPY run %d: old %.2f s, new %.2f s (%lld rows)\n", run + 1, copy_old.back(), copy_new.back(),
                static_cast<long long>(rows));
    if (run + 1 < runs) Run(session, "DROP TABLE copy_new");
  }
  for (const std::vector<Value>& row : Run(session, "SHOW TABLES").rows) {
    if (row[0].AsString() == "copy_new") {
      std::printf("blocks built: old %lld, new %s\n", static_cast<long long>(old_blocks), row[3].ToString().c_str());
    }
  }
  const std::string select = absl::StrCat(
      "SELECT * FROM copy_new",
      insert_max_orderkey > 0 ? absl::StrCat(" WHERE l_orderkey <= ", insert_max_orderkey) : std::string());
  int64_t insert_rows = 0;
  for (int run = 0; run < runs; ++run) {
    Run(session, absl::StrCat("CREATE TABLE insert_old ", kLineitemColumns));
    int64_t start = MonotonicNanos();
    insert_rows = OldInsert(database, session, "insert_old", select);
    insert_old.push_back((MonotonicNanos() - start) / 1e9);
    Run(session, "DROP TABLE insert_old");

    Run(session, absl::StrCat("CREATE TABLE insert_new ", kLineitemColumns));
    start = MonotonicNanos();
    const int64_t rows = Run(session, absl::StrCat("INSERT INTO insert_new ", select)).rows_affected;
    insert_new.push_back((MonotonicNanos() - start) / 1e9);
    if (rows != insert_rows) Check(absl::InternalError(absl::StrCat(rows, " vs ", insert_rows, " rows")), "INSERT");
    std::printf("INSERT run %d: old %.2f s, new %.2f s (%lld rows)\n", run + 1, insert_old.back(), insert_new.back(),
                static_cast<long long>(rows));
    Run(session, "DROP TABLE insert_new");
  }

  // All of lineitem through the new path alone (a plain scan: the Insert operator reads the table's blocks itself).
  std::vector<double> insert_all;
  int64_t insert_all_rows = 0;
  if (insert_max_orderkey > 0) {
    for (int run = 0; run < runs; ++run) {
      Run(session, absl::StrCat("CREATE TABLE insert_all ", kLineitemColumns));
      const int64_t start = MonotonicNanos();
      insert_all_rows = Run(session, "INSERT INTO insert_all SELECT * FROM copy_new").rows_affected;
      insert_all.push_back((MonotonicNanos() - start) / 1e9);
      std::printf("INSERT all run %d: new %.2f s (%lld rows)\n", run + 1, insert_all.back(),
                  static_cast<long long>(insert_all_rows));
      Run(session, "DROP TABLE insert_all");
    }
  }

  std::printf("\n| statement | rows | old median s | new median s | new / old |\n|---|---:|---:|---:|---:|\n");
  std::printf("| COPY lineitem FROM tbl | %lld | %.2f | %.2f | %.2f |\n", static_cast<long long>(copy_rows),
              Median(copy_old), Median(copy_new), Median(copy_new) / Median(copy_old));
  std::printf("| INSERT INTO t %s | %lld | %.2f | %.2f | %.2f |\n", select.c_str(), static_cast<long long>(insert_rows),
              Median(insert_old), Median(insert_new), Median(insert_new) / Median(insert_old));
  if (!insert_all.empty()) {
    std::printf("| INSERT INTO t SELECT * FROM copy_new | %lld | (does not fit in memory) | %.2f | |\n",
                static_cast<long long>(insert_all_rows), Median(insert_all));
  }
  session.Execute("DROP TABLE copy_new").IgnoreError();
  opened->reset();
  std::filesystem::remove_all(directory);
  return 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) { return tessera::Main(argc, argv); }
