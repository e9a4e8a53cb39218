// The C++ client library (RemoteConnection) against an in-process TesseraServer: results identical to the
// in-process path for every type, error codes and messages kept, Cancel and Progress from another thread, session
// priority, catalog calls, token authentication and an unreachable server; COPY FROM STDIN / TO STDOUT through
// ExecuteCopy (the gRPC CopyIn / CopyOut calls) as the in-process path does them.

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "client/remote_connection.h"
#include "engine/connection.h"
#include "engine/copy_channel.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "server/tessera_server.h"

namespace tessera {
namespace {

// 10^9 row pairs in 20 probe work orders (see session_cancel_test.cc): long enough to cancel while it runs.
constexpr char kLongQuery[] = "SELECT count(*) FROM probe, build WHERE probe.x + build.x = 17";

class RemoteConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / absl::StrCat("remote_connection_test_", getpid());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
    {
      std::ofstream numbers(directory_ / "numbers.csv");
      for (int i = 0; i < 5000; ++i) numbers << i << "\n";
    }
    DatabaseOptions options;
    options.data_directory = (directory_ / "db").string();
    options.sync_writes = false;
    options.worker_threads = 2;
    absl::StatusOr<std::unique_ptr<Database>> database = Database::Open(options);
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    const std::string numbers = (directory_ / "numbers.csv").string();
    std::string load = absl::StrCat(
        "CREATE TABLE typed (i INTEGER, b BIGINT, d DOUBLE, n DECIMAL(12,2), w DECIMAL(30,5), s VARCHAR(20), "
        "c CHAR(3), dt DATE, ts TIMESTAMP, f BOOLEAN);"
        "INSERT INTO typed VALUES (1, 10000000000, 0.25, 1234.50, 123456789012345678901.12345, 'héllo', 'ab', "
        "'2024-02-29', '2024-02-29 12:34:56.5', true), (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
        "(-7, -1, -1e300, -0.01, -0.00001, '', 'xyz', '1970-01-01', '1969-12-31 23:59:59', false);"
        "CREATE TABLE build (x BIGINT); CREATE TABLE probe (x BIGINT);",
        "COPY build FROM '", numbers, "'; COPY build FROM '", numbers, "';");
    for (int i = 0; i < 20; ++i) absl::StrAppend(&load, "COPY probe FROM '", numbers, "';");
    Session session(database_.get());
    absl::StatusOr<QueryResult> loaded = session.Execute(load);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    StartServer("");
  }

  void TearDown() override {
    server_.reset();
    database_.reset();
    std::filesystem::remove_all(directory_);
  }

  void StartServer(const std::string& token, int64_t session_idle_timeout_ms = 3'600'000,
                   const std::string& tls_cert = "", const std::string& tls_key = "") {
    server_.reset();
    ServerOptions options;
    options.tls_cert_path = tls_cert;
    options.tls_key_path = tls_key;
    options.listen_address = "127.0.0.1:0";
    options.token = token;
    options.session_idle_timeout_ms = session_idle_timeout_ms;
    absl::StatusOr<std::unique_ptr<TesseraServer>> server = TesseraServer::Start(database_.get(), options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    address_ = absl::StrCat("127.0.0.1:", server_->port());
  }

  std::unique_ptr<RemoteConnection> Connect(ClientOptions options = {}) {
    absl::StatusOr<std::unique_ptr<RemoteConnection>> connection = RemoteConnection::Connect(address_, options);
    EXPECT_TRUE(connection.ok()) << connection.status();
    return connection.ok() ? *std::move(connection) : nullptr;
  }

  std::filesystem::path directory_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<TesseraServer> server_;
  std::string address_;
};

void ExpectSameResult(const QueryResult& remote, const QueryResult& local) {
  ASSERT_EQ(remote.columns.size(), local.columns.size());
  for (size_t c = 0; c < local.columns.size(); ++c) {
    EXPECT_EQ(remote.columns[c].name, local.columns[c].name);
    EXPECT_EQ(remote.columns[c].type, local.columns[c].type) << local.columns[c].type.ToString();
  }
  ASSERT_EQ(remote.rows.size(), local.rows.size());
  for (size_t r = 0; r < local.rows.size(); ++r) {
    for (size_t c = 0; c < local.columns.size(); ++c) {
      const Value& a = remote.rows[r][c];
      const Value& b = local.rows[r][c];
      EXPECT_EQ(a.is_null(), b.is_null()) << "row " << r << " column " << c;
      if (!a.is_null() && !b.is_null()) {
        EXPECT_EQ(a.Compare(b), 0) << "row " << r << " column " << c << ": " << a.ToString() << " vs " << b.ToString();
        EXPECT_EQ(a.ToString(), b.ToString());
      }
    }
  }
  EXPECT_EQ(remote.returns_rows, local.returns_rows);
  EXPECT_EQ(remote.status_message, local.status_message);
  EXPECT_EQ(remote.rows_affected, local.rows_affected);
}

TEST_F(RemoteConnectionTest, ResultsMatchTheInProcessPath) {
  std::unique_ptr<RemoteConnection> remote = Connect(ClientOptions{.max_batch_rows = 2});
  ASSERT_NE(remote, nullptr);
  InProcessConnection local(database_.get());
  for (const char* sql : {"SELECT * FROM typed ORDER BY i", "SELECT x, x * 2 AS y FROM build ORDER BY x LIMIT 3000",
                          "SELECT i + 1, n * 2, w, upper(s) FROM typed", "SELECT NULL AS nothing", "SHOW TABLES",
                          "DESCRIBE typed", "CREATE TABLE empty_one (x INTEGER)",
                          "INSERT INTO empty_one VALUES (1), (2)", "SELECT * FROM empty_one WHERE x > 5"}) {
    SCOPED_TRACE(sql);
    absl::StatusOr<QueryResult> remote_result = remote->Execute(sql);
    ASSERT_TRUE(remote_result.ok()) << remote_result.status();
    if (absl::string_view(sql).substr(0, 6) == "CREATE" || absl::string_view(sql).substr(0, 6) == "INSERT") {
      EXPECT_FALSE(remote_result->returns_rows);
      EXPECT_FALSE(remote_result->status_message.empty());
      continue;  // not repeatable in-process
    }
    absl::StatusOr<QueryResult> local_result = local.Execute(sql);
    ASSERT_TRUE(local_result.ok()) << local_result.status();
    ExpectSameResult(*remote_result, *local_result);
  }
}

TEST_F(RemoteConnectionTest, ErrorsKeepTheirCodeAndMessage) {
  std::unique_ptr<Connection> remote = *ConnectRemote(address_, ClientOptions{});
  InProcessConnection local(database_.get());
  for (const char* sql : {"SELECT FROM WHERE", "SELECT * FROM missing_table", "SELECT 1/0 FROM typed",
                          "SET priority = 0", "CREATE TABLE typed (x INTEGER)"}) {
    SCOPED_TRACE(sql);
    absl::StatusOr<QueryResult> remote_result = remote->Execute(sql);
    absl::StatusOr<QueryResult> local_result = local.Execute(sql);
    EXPECT_EQ(remote_result.status(), local_result.status());
  }
  absl::StatusOr<QueryResult> syntax = remote->Execute("SELECT FROM WHERE");
  EXPECT_EQ(syntax.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(syntax.status().message().find('^'), absl::string_view::npos);
  EXPECT_EQ(remote->Progress().status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RemoteConnectionTest, CancelAndProgressFromAnotherThread) {
  std::unique_ptr<RemoteConnection> remote = Connect();
  ASSERT_NE(remote, nullptr);
  absl::StatusOr<QueryResult> result;
  std::thread runner([&] { result = remote->Execute(kLongQuery); });
  bool saw_progress = false;
  for (int i = 0; i < 6000 && !saw_progress; ++i) {
    absl::StatusOr<QueryProgress> progress = remote->Progress();
    saw_progress = progress.ok() && !progress->operators.empty();
    if (saw_progress) {
      EXPECT_GE(progress->fraction_done, 0);
      EXPECT_LE(progress->fraction_done, 1);
    }
    if (!saw_progress) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(saw_progress);
  remote->Cancel();
  runner.join();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
  // The session serves the next statement.
  absl::StatusOr<QueryResult> after = remote->Execute("SELECT count(*) FROM build");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->rows[0][0].AsInt64(), 10000);
}

TEST_F(RemoteConnectionTest, PriorityCatalogAndHealth) {
  std::unique_ptr<RemoteConnection> remote = Connect(ClientOptions{.priority = 4});
  ASSERT_NE(remote, nullptr);
  absl::StatusOr<QueryResult> shown = remote->Execute("SHOW priority");
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_EQ(shown->rows[0][1].AsString(), "4");
  ASSERT_TRUE(remote->SetPriority(9).ok());
  EXPECT_EQ(remote->Execute("SHOW priority")->rows[0][1].AsString(), "9");
  EXPECT_EQ(remote->SetPriority(0).code(), absl::StatusCode::kInvalidArgument);

  absl::StatusOr<std::vector<RemoteTableInfo>> tables = remote->ListTables();
  ASSERT_TRUE(tables.ok()) << tables.status();
  ASSERT_EQ(tables->size(), 3u);
  EXPECT_EQ((*tables)[0].name, "build");
  EXPECT_EQ((*tables)[0].row_count, 10000);
  absl::StatusOr<std::vector<RemoteColumnInfo>> columns = remote->DescribeTable("typed");
  ASSERT_TRUE(columns.ok()) << columns.status();
  ASSERT_EQ(columns->size(), 10u);
  EXPECT_EQ((*columns)[4].type, Type::Decimal(30, 5));
  EXPECT_EQ(remote->DescribeTable("nope").status().code(), absl::StatusCode::kNotFound);

  absl::StatusOr<ServerHealth> health = remote->Health();
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_TRUE(health->serving);
  EXPECT_EQ(health->open_sessions, 1);
  EXPECT_FALSE(remote->session_id().empty());
}

TEST_F(RemoteConnectionTest, TokenAuthentication) {
  StartServer("let-me-in");
  for (const char* token : {"", "wrong"}) {
    absl::StatusOr<std::unique_ptr<Connection>> rejected = ConnectRemote(address_, ClientOptions{.token = token});
    EXPECT_EQ(rejected.status().code(), absl::StatusCode::kUnauthenticated) << rejected.status();
  }
  std::unique_ptr<RemoteConnection> remote = Connect(ClientOptions{.token = "let-me-in"});
  ASSERT_NE(remote, nullptr);
  EXPECT_TRUE(remote->Execute("SELECT 1").ok());
}

// The client's side of a COPY: input in pieces of `piece` bytes, output collected; fails reading at `fail_at`.
class StringCopyChannel : public CopyChannel {
 public:
  explicit StringCopyChannel(std::string input = "", size_t piece = 1 << 20)
      : input_(std::move(input)), piece_(piece) {}
  absl::Status BeginCopyIn(const CopyStreamShape&) override { return absl::OkStatus(); }
  absl::StatusOr<bool> ReadCopyData(std::string* data) override {
    if (at_ >= fail_at_) return absl::DataLossError("cannot read the local file");
    if (at_ >= input_.size()) return false;
    *data = input_.substr(at_, piece_);
    at_ += data->size();
    return true;
  }
  absl::Status BeginCopyOut(const CopyStreamShape&) override { return absl::OkStatus(); }
  absl::Status WriteCopyData(std::string_view data) override {
    output.append(data);
    return absl::OkStatus();
  }
  std::string output;
  size_t fail_at_ = SIZE_MAX;

 private:
  std::string input_;
  size_t piece_;
  size_t at_ = 0;
};

TEST_F(RemoteConnectionTest, CopyInAndOutAsInProcess) {
  std::unique_ptr<RemoteConnection> remote = Connect();
  ASSERT_NE(remote, nullptr);
  InProcessConnection local(database_.get());
  for (const std::string options : {"", " (FORMAT csv, HEADER)"}) {
    SCOPED_TRACE(options);
    StringCopyChannel from_remote;
    StringCopyChannel from_local;
    const std::string copy_out = absl::StrCat("COPY typed TO STDOUT", options);
    absl::StatusOr<QueryResult> out = remote->ExecuteCopy(copy_out, from_remote);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->status_message, "COPY 3");
    ASSERT_TRUE(local.ExecuteCopy(copy_out, from_local).ok());
    EXPECT_EQ(from_remote.output, from_local.output);

    ASSERT_TRUE(remote
                    ->Execute("DROP TABLE IF EXISTS copied; CREATE TABLE copied (i INTEGER, b BIGINT, d DOUBLE, "
                              "n DECIMAL(12,2), w DECIMAL(30,5), s VARCHAR(20), c CHAR(3), dt DATE, ts TIMESTAMP, "
                              "f BOOLEAN)")
                    .ok());
    StringCopyChannel in(from_remote.output, /*piece=*/7);
    absl::StatusOr<QueryResult> loaded = remote->ExecuteCopy(absl::StrCat("COPY copied FROM STDIN", options), in);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->rows_affected, 3);
    absl::StatusOr<QueryResult> copied = remote->Execute("SELECT * FROM copied ORDER BY i");
    absl::StatusOr<QueryResult> typed = local.Execute("SELECT * FROM typed ORDER BY i");
    ASSERT_TRUE(copied.ok() && typed.ok());
    ExpectSameResult(*copied, *typed);
  }
  // A large load in pieces larger than one message (split into kCopyChunkBytes messages).
  std::string numbers;
  for (int i = 0; i < 300000; ++i) absl::StrAppend(&numbers, i, "\n");
  ASSERT_TRUE(remote->Execute("CREATE TABLE many (x BIGINT)").ok());
  StringCopyChannel big(numbers, 4 << 20);
  absl::StatusOr<QueryResult> loaded = remote->ExecuteCopy("COPY many FROM STDIN", big);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(remote->Execute("SELECT count(*), sum(x) FROM many")->rows[0][1].AsInt64(), 299999LL * 300000 / 2);
}

TEST_F(RemoteConnectionTest, CopyErrorsLeaveTheTableUnchanged) {
  std::unique_ptr<RemoteConnection> remote = Connect();
  ASSERT_NE(remote, nullptr);
  ASSERT_TRUE(remote->Execute("CREATE TABLE t (x INTEGER)").ok());
  std::string lines;
  for (int i = 0; i < 100000; ++i) absl::StrAppend(&lines, i == 70000 ? "seven" : absl::StrCat(i), "\n");
  StringCopyChannel bad(lines, 4096);
  absl::StatusOr<QueryResult> copied = remote->ExecuteCopy("COPY t FROM STDIN", bad);
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(copied.status().message().find("STDIN line 70001, column x: invalid input for INTEGER: 'seven'"),
            std::string::npos)
      << copied.status();
  // The local file fails midway: the call is cancelled and nothing commits.
  std::string good;
  for (int i = 0; i < 100000; ++i) absl::StrAppend(&good, i, "\n");
  StringCopyChannel failing(good, 4096);
  failing.fail_at_ = good.size() / 2;
  copied = remote->ExecuteCopy("COPY t FROM STDIN", failing);
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), absl::StatusCode::kDataLoss) << copied.status();
  EXPECT_EQ(remote->Execute("SELECT count(*) FROM t")->rows[0][0].AsInt64(), 0);
  StringCopyChannel unused;
  EXPECT_EQ(remote->ExecuteCopy("SELECT 1", unused).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RemoteConnectionTest, ExpiredSessionIsReopened) {
  StartServer("", /*session_idle_timeout_ms=*/200);
  std::unique_ptr<RemoteConnection> remote = Connect(ClientOptions{.priority = 6});
  ASSERT_NE(remote, nullptr);
  const std::string first_session = remote->session_id();
  // The server closes idle sessions once a second at most; wait (bounded) until it has closed this one.
  for (int i = 0; i < 100 && remote->Health()->open_sessions != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(remote->Health()->open_sessions, 0);
  absl::StatusOr<QueryResult> result = remote->Execute("SHOW priority");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->rows[0][1].AsString(), "6");  // the options' settings again
  EXPECT_NE(remote->session_id(), first_session);
  // A COPY too, once the new session expired as well: the server read none of its data before refusing.
  ASSERT_TRUE(remote->Execute("CREATE TABLE reopened (x INTEGER)").ok());
  for (int i = 0; i < 100 && remote->Health()->open_sessions != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(remote->Health()->open_sessions, 0);
  StringCopyChannel data("1\n2\n3\n");
  absl::StatusOr<QueryResult> copied = remote->ExecuteCopy("COPY reopened FROM STDIN", data);
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(copied->rows_affected, 3);
}

TEST_F(RemoteConnectionTest, Tls) {
  const std::string cert = (directory_ / "cert.pem").string();
  const std::string key = (directory_ / "key.pem").string();
  const std::string command =
      absl::StrCat("openssl req -x509 -newkey rsa:2048 -nodes -keyout ", key, " -out ", cert,
                   " -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1");
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "openssl cannot make a self-signed certificate here";
  StartServer("", 3'600'000, cert, key);
  std::unique_ptr<RemoteConnection> remote =
      Connect(ClientOptions{.use_tls = true, .tls_root_certs_path = cert, .tls_server_name = "localhost"});
  ASSERT_NE(remote, nullptr);
  absl::StatusOr<QueryResult> result = remote->Execute("SELECT count(*) FROM build");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->rows[0][0].AsInt64(), 10000);
  // Plaintext to a TLS server, and TLS without trusting its certificate, cannot connect.
  EXPECT_FALSE(ConnectRemote(address_, ClientOptions{.connect_timeout_ms = 500}).ok());
  EXPECT_FALSE(ConnectRemote(address_, ClientOptions{.use_tls = true, .connect_timeout_ms = 500}).ok());
  EXPECT_EQ(ConnectRemote(address_, ClientOptions{.use_tls = true, .tls_root_certs_path = "/nonexistent.pem"})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RemoteConnectionTest, UnreachableServerIsUnavailable) {
  const int port = server_->port();
  server_.reset();
  absl::StatusOr<std::unique_ptr<Connection>> connection =
      ConnectRemote(absl::StrCat("127.0.0.1:", port), ClientOptions{.connect_timeout_ms = 300});
  EXPECT_EQ(connection.status().code(), absl::StatusCode::kUnavailable) << connection.status();
}

TEST_F(RemoteConnectionTest, ServerShutdownCancelsRunningQueries) {
  std::unique_ptr<RemoteConnection> remote = Connect();
  ASSERT_NE(remote, nullptr);
  absl::StatusOr<QueryResult> result;
  std::thread runner([&] { result = remote->Execute(kLongQuery); });
  for (int i = 0; i < 6000 && !remote->Progress().ok(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  server_->Shutdown();
  runner.join();
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(result.status().code() == absl::StatusCode::kCancelled ||
              result.status().code() == absl::StatusCode::kUnavailable)
      << result.status();
}

}  // namespace
}  // namespace tessera
