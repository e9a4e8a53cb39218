"""End-to-end tests of tessera-server through the Python client (client/python/tessera_client.py): concurrent TPC-H
clients with checked answers, cancellation, progress, sessions and settings, bad input (garbage bytes, oversized
statements, unknown sessions and queries, clients that vanish), token authentication, TLS, and SIGTERM.

Every server is started on 127.0.0.1 with port 0 (it prints the port it got) and stopped by its pid with SIGTERM;
every wait is bounded. Environment: TESSERA_BIN (the shell, to load data), TESSERA_SERVER_BIN, TESSERA_TEST_CACHE.
"""
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import grpc
import pytest

from process_control import stop_by_pid
from test_tpch_answers import QUERIES, ROOT, assert_matches_reference, database  # noqa: F401 (database: fixture)

sys.path.insert(0, os.path.join(ROOT, "client", "python"))
import tessera_client  # noqa: E402

SERVER = os.environ.get("TESSERA_SERVER_BIN", os.path.join(ROOT, "build", "server", "tessera-server"))
# A long query made of many short work orders, so that it is still running when a test cancels it and stops soon
# after: lineitem again in 64 KiB blocks (about 120 of them), joined with itself on a two-valued key (1.8e9 pairs,
# about a minute on 2 cores) under a condition no pair meets (no output, little memory).
LONG_QUERY = ("SELECT count(*) FROM lineitem_small l1, lineitem_small l2 "
              "WHERE l1.l_linestatus = l2.l_linestatus AND l1.l_extendedprice < l2.l_extendedprice * 0.001")
BOUND_S = 60  # the longest any single wait in these tests may take


class Server:
    """A tessera-server process on 127.0.0.1 and a free port."""

    def __init__(self, data_dir, *extra_args):
        self.process = subprocess.Popen(
            [SERVER, "--data", data_dir, "--listen", "127.0.0.1:0", "--no-sync", *extra_args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], BOUND_S)
        line = self.process.stdout.readline() if ready else ""
        if "listening on" not in line:
            self.process.kill()
            raise AssertionError(f"server did not start: {line!r} {self.process.stderr.read()}")
        self.port = int(line.strip().rsplit(":", 1)[1])
        self.target = f"127.0.0.1:{self.port}"

    def stop(self):
        """SIGTERM by pid; returns the exit code (killing the process if it does not stop in time)."""
        return stop_by_pid(self.process, BOUND_S)


def as_csv_text(value):
    """A Python client value as the shell prints it in CSV, for assert_matches_reference."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def run_tpch(client, query):
    with open(os.path.join(QUERIES, f"q{query:02d}.sql")) as f:
        result = client.execute(f.read(), timeout=300)
    assert_matches_reference(query, [[as_csv_text(v) for v in row] for row in result.rows])


def wait_until(predicate, what):
    deadline = time.monotonic() + BOUND_S
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def can_open_session(target):
    try:
        tessera_client.connect(target, lease_seconds=0).close()
        return True
    except tessera_client.TesseraError as error:
        assert error.code == grpc.StatusCode.RESOURCE_EXHAUSTED, error
        return False


def running_ids(client):
    return {q.query_id for q in client.list_queries()}


def tpch_tbl_dir():
    """Where the database fixture's generated TPC-H SF 0.01 .tbl files are."""
    cache = os.environ.get("TESSERA_TEST_CACHE", os.path.join(tempfile.gettempdir(), "tessera-test-cache"))
    return os.path.join(cache, "tpch-sf0.01")


def create_lineitem_small(target):
    """Loads lineitem again as lineitem_small with 64 KiB blocks, through the server (DDL and COPY over gRPC)."""
    with open(os.path.join(ROOT, "benchmarks", "tpch", "schema.sql")) as f:
        schema = f.read()
    lineitem = re.search(r"CREATE TABLE lineitem \(.*?\);", schema, re.S).group(0)
    create = lineitem.replace("CREATE TABLE lineitem", "CREATE TABLE lineitem_small")[:-1]
    tbl = os.path.join(tpch_tbl_dir(), "lineitem.tbl")
    with tessera_client.connect(target) as c:
        c.execute(create + " WITH (block_size = '64KB')")
        assert c.execute(f"COPY lineitem_small FROM '{tbl}' (DELIMITER '|')").rows_affected == 60175


@pytest.fixture(scope="module")
def server(database):  # noqa: F811 (the fixture imported above)
    process = Server(database, "--threads", "2", "--allowed-directories", tpch_tbl_dir())
    create_lineitem_small(process.target)
    yield process
    assert process.stop() == 0


@pytest.fixture
def client(server):
    with tessera_client.connect(server.target) as c:
        yield c


@pytest.fixture(scope="module")
def empty_dir():
    directory = tempfile.mkdtemp(prefix="tessera-server-")
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_health_types_and_errors(server, client):
    health = client.health()
    assert health.serving and health.version.startswith("tessera")
    result = client.execute("SELECT n_nationkey, n_name FROM nation WHERE n_nationkey < 3 ORDER BY n_nationkey")
    assert result.columns == [("n_nationkey", "INTEGER"), ("n_name", "CHAR(25)")]
    assert [r[0] for r in result.rows] == [0, 1, 2] and result.rows[0][1].rstrip() == "ALGERIA"
    assert result.query_id > 0
    # Several statements: the last one's result.
    assert client.execute("SELECT 1; SELECT 2 AS two").rows == [(2,)]
    with pytest.raises(tessera_client.TesseraError) as error:
        client.execute("SELECT n_name FROM nation WHERE")
    assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "^" in error.value.message  # the parser's caret survives the trip
    with pytest.raises(tessera_client.TesseraError) as error:
        client.execute("SELECT * FROM no_such_table")
    assert error.value.code == grpc.StatusCode.NOT_FOUND and "no_such_table" in error.value.message
    tables = {t.name: t for t in client.list_tables()}
    assert tables["lineitem"].row_count == 60175 and not tables["lineitem"].is_view
    described = client.describe("region")
    assert [c.name for c in described.columns] == ["r_regionkey", "r_name", "r_comment"]
    with pytest.raises(tessera_client.TesseraError) as error:
        client.describe("no_such_table")
    assert error.value.code == grpc.StatusCode.NOT_FOUND


def test_result_streams_in_bounded_batches(server):
    pb2, pb2_grpc = tessera_client._load_stubs()
    with tessera_client.connect(server.target) as c, grpc.insecure_channel(server.target) as channel:
        stub = pb2_grpc.TesseraStub(channel)
        request = pb2.ExecuteRequest(session_id=c.session_id, sql=b"SELECT l_orderkey FROM lineitem", max_batch_rows=500)
        responses = list(stub.Execute(request, timeout=BOUND_S))
        kinds = [r.WhichOneof("payload") for r in responses]
        assert kinds[0] == "header" and kinds[-1] == "summary" and set(kinds[1:-1]) == {"batch"}
        assert all(0 < r.batch.row_count <= 500 for r in responses[1:-1])
        assert sum(r.batch.row_count for r in responses[1:-1]) == responses[-1].summary.row_count == 60175


def test_large_result_streams_inside_the_memory_limit(empty_dir):
    """A SELECT whose rows, held as values, would need several times the server's --memory-limit streams to the
    client block by block while the query runs (it used to fail with 'add a LIMIT or aggregate')."""
    server = Server(os.path.join(empty_dir, "streaming"), "--memory-limit", str(64 << 20))
    try:
        pb2, pb2_grpc = tessera_client._load_stubs()
        with tessera_client.connect(server.target) as c, grpc.insecure_channel(server.target) as channel:
            c.execute("CREATE TABLE small (k INTEGER NOT NULL)")
            c.execute("INSERT INTO small VALUES " + ", ".join(f"({i})" for i in range(1000)))
            c.execute("CREATE TABLE big (k INTEGER NOT NULL, g INTEGER NOT NULL)")
            c.execute("INSERT INTO big SELECT a.k * 1000 + b.k, b.k % 10 FROM small a, small b")
            stub = pb2_grpc.TesseraStub(channel)
            request = pb2.ExecuteRequest(session_id=c.session_id, sql=b"SELECT k, g, k + 1 AS k1, g * 3 AS g3 FROM big")
            rows = 0
            summary = None
            for response in stub.Execute(request, timeout=BOUND_S):
                kind = response.WhichOneof("payload")
                if kind == "batch":
                    rows += response.batch.row_count
                elif kind == "summary":
                    summary = response.summary
            assert rows == summary.row_count == 1_000_000
            # The session is usable afterwards and the server kept nothing of the result.
            assert c.execute("SELECT count(*) FROM big").rows == [(1_000_000,)]
    finally:
        assert server.stop() == 0


def test_sixteen_concurrent_clients_tpch(server):
    """16 sessions run TPC-H queries at once, each from its own place in the list, until it has run all 22 or the
    time budget is spent (after at least 2 each, which together cover all 22); every answer must be right."""
    clients, budget_s = 16, 60
    errors, done = [], [[] for _ in range(clients)]
    deadline = time.monotonic() + budget_s

    def work(i):
        try:
            with tessera_client.connect(server.target) as c:
                start = i * 22 // clients
                for k in range(22):
                    if len(done[i]) >= 2 and time.monotonic() > deadline:
                        break
                    query = (start + k) % 22 + 1
                    run_tpch(c, query)
                    done[i].append(query)
        except Exception as e:  # pylint: disable=broad-except
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a client hung"
    assert not errors, errors
    assert all(len(d) >= 2 for d in done)
    assert set().union(*map(set, done)) == set(range(1, 23))


def test_cancel_long_query_others_unaffected(server):
    with tessera_client.connect(server.target) as long_client, tessera_client.connect(server.target) as other, \
            tessera_client.connect(server.target) as admin:
        running = long_client.start(LONG_QUERY, timeout=600)
        query_id = running.query_id
        wait_until(lambda: query_id in running_ids(admin), "the long query to run")
        wait_until(lambda: admin.progress(query_id=query_id).work_orders_issued > 0, "work orders")
        progress = admin.progress(query_id=query_id)
        assert progress.session_id == long_client.session_id and 0 <= progress.fraction_done <= 1
        assert progress.operators and all(op.name for op in progress.operators)
        # Another session keeps getting right answers while the long query runs.
        for query in (6, 1, 14):
            run_tpch(other, query)
        assert admin.cancel(query_id=query_id) is True
        with pytest.raises(tessera_client.TesseraError) as error:
            running.result()
        assert error.value.code == grpc.StatusCode.CANCELLED
        wait_until(lambda: query_id not in running_ids(admin), "the cancelled query to end")
        # The cancelled session works again; cancelling by session works too.
        assert long_client.execute("SELECT count(*) FROM region").rows == [(5,)]
        running = long_client.start(LONG_QUERY, timeout=600)
        wait_until(lambda: running.query_id in running_ids(admin), "the second long query to run")
        assert admin.cancel(session_id=long_client.session_id) is True
        with pytest.raises(tessera_client.TesseraError) as error:
            running.result()
        assert error.value.code == grpc.StatusCode.CANCELLED
        run_tpch(other, 6)
        # Cancelling an idle session is a no-op.
        assert admin.cancel(session_id=long_client.session_id) is False


def test_priority_through_rpc_fields(server):
    with tessera_client.connect(server.target, priority=5) as c, tessera_client.connect(server.target) as admin:
        assert c.execute("SHOW priority").rows == [("priority", "5")]
        assert c.set_priority(2).priority == 2
        assert c.execute("SHOW priority").rows == [("priority", "2")]
        # A per-execution priority, visible while it runs, that leaves the session's setting alone.
        # (The comment puts a 2-byte character across the 200th byte: ListQueries shows a valid UTF-8 prefix.)
        running = c.start(LONG_QUERY + " -- " + "x" * (199 - len(LONG_QUERY) - 4) + "é", priority=7, timeout=600)
        wait_until(lambda: running.query_id in running_ids(admin), "the query to run")
        listed = [q for q in admin.list_queries() if q.query_id == running.query_id]
        assert [q.priority for q in listed] == [7] and listed[0].sql.endswith(" -- " + "x" * (199 - len(LONG_QUERY) - 4))
        # While it runs, the session's priority can change (it applies to the running query as well) ...
        assert c.set_priority(3).priority == 3
        assert [q.priority for q in admin.list_queries() if q.query_id == running.query_id] == [3]
        # ... but another execute on the same session is refused.
        with pytest.raises(tessera_client.TesseraError) as error:
            c.execute("SELECT 1")
        assert error.value.code == grpc.StatusCode.FAILED_PRECONDITION
        running.cancel()
        with pytest.raises(tessera_client.TesseraError):
            running.result()
        assert c.execute("SHOW priority").rows == [("priority", "3")]
        with pytest.raises(tessera_client.TesseraError) as error:
            c.set_priority(-1)
        assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
        # Unknown names are refused; a quote inside a value reaches the server intact (named in its error).
        with pytest.raises(tessera_client.TesseraError) as error:
            c.update_settings(my_setting="x")
        assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT and "unknown setting 'my_setting'" in str(error.value)
        with pytest.raises(tessera_client.TesseraError) as error:
            c.update_settings(disabled_rules="a'b")
        assert "a'b" in str(error.value)
        assert c.update_settings(scan_sharing="batch").settings["scan_sharing"] == "batch"


def test_work_order_log_of_a_live_server(empty_dir):
    """--work-order-log FILE: one JSON line per executed work order, rotated at --work-order-log-max-bytes."""
    log = os.path.join(empty_dir, "work_orders.jsonl")
    server = Server(os.path.join(empty_dir, "logged"), "--work-order-log", log, "--work-order-log-max-bytes", "1024")
    try:
        with tessera_client.connect(server.target) as c:
            c.execute("CREATE TABLE t (x INTEGER)")
            c.execute("INSERT INTO t VALUES " + ", ".join(f"({i})" for i in range(1000)))
            for _ in range(20):
                assert c.execute("SELECT count(*), sum(x) FROM t").rows == [(1000, 499500)]
    finally:
        assert server.stop() == 0
    import json
    records = []
    for path in (log + ".1", log):
        with open(path) as f:
            records += [json.loads(line) for line in f]
    assert os.path.getsize(log + ".1") >= 1024 and records
    assert all({"query", "operator", "worker", "start_ns", "end_ns", "rows"} <= set(r) for r in records)
    assert all(r["end_ns"] >= r["start_ns"] for r in records)


def test_show_queries_and_cancel_query_from_another_session(server):
    """SHOW QUERIES lists every session's running statement with its scheduler state; CANCEL QUERY id from another
    session cancels it (issue #19's operability)."""
    with tessera_client.connect(server.target) as a, tessera_client.connect(server.target) as b:
        running = a.start(LONG_QUERY, priority=3, timeout=600)
        wait_until(lambda: running.query_id in running_ids(b), "the query to run")
        shown = b.execute("SHOW QUERIES")
        assert shown.column_names == ["query_id", "session_id", "priority", "admission", "progress", "elapsed_ms",
                                      "sql"]
        mine = [row for row in shown.rows if row[0] == running.query_id]
        assert len(mine) == 1, shown.rows
        query_id, session_id, priority, admission, progress, elapsed_ms, sql = mine[0]
        assert session_id == a.session_id and priority == 3 and sql == LONG_QUERY and elapsed_ms >= 0
        assert admission in (None, "admitted", "waiting for memory", "suspended")
        assert progress is None or 0 <= progress <= 1
        assert [row[6] for row in shown.rows if row[1] == b.session_id] == ["SHOW QUERIES"]
        assert b.execute(f"CANCEL QUERY {running.query_id}").status_message == "CANCEL"
        with pytest.raises(tessera_client.TesseraError) as error:
            running.result()
        assert error.value.code == grpc.StatusCode.CANCELLED
        wait_until(lambda: running.query_id not in running_ids(b), "the query to end")
        with pytest.raises(tessera_client.TesseraError) as error:
            b.execute(f"CANCEL QUERY {running.query_id}")
        assert error.value.code == grpc.StatusCode.NOT_FOUND and f"no running query with id {running.query_id}" in \
            error.value.message
        with pytest.raises(tessera_client.TesseraError) as error:
            b.execute("CANCEL QUERY abc")
        assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT and "a query id" in error.value.message
        assert a.execute("SELECT 1").rows == [(1,)]


def test_bad_input_leaves_server_serving(server, client):
    # Garbage bytes and an HTTP/1 request to the port.
    for garbage in (os.urandom(8192), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"\x00" * 100000):
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            try:
                s.sendall(garbage)
                s.recv(1024)
            except OSError:
                pass  # the server may reset the connection
    assert client.health().serving
    # Oversized statements: the server's limit (1 MiB by default), then gRPC's message limit.
    with pytest.raises(tessera_client.TesseraError) as error:
        client.execute("SELECT 1 -- " + "x" * (1 << 20))
    assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT and "limit" in error.value.message
    with pytest.raises(tessera_client.TesseraError) as error:
        client.execute("SELECT 1 -- " + "x" * (4 << 20))
    assert error.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    # Statements that are not UTF-8 (a stray byte, a truncated character, an encoded surrogate, an overlong '/'):
    # a clear error naming the byte, not the transport's empty INTERNAL.
    for sql, offset in ((b"SELECT '\xff'", 8), (b"SELECT 'caf\xc3", 11), (b"SELECT '\xed\xa0\x80'", 8),
                        (b"SELECT 1 \xc0\xaf", 9)):
        with pytest.raises(tessera_client.TesseraError) as error:
            client.execute(sql)
        assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT, sql
        assert f"not valid UTF-8: byte {offset} " in error.value.message, (sql, error.value.message)
    assert client.execute("SELECT 'caf\u00e9 \U0001F600'".encode()).rows == [("caf\u00e9 \U0001F600",)]
    # Unknown session, unknown query, progress of an idle session.
    pb2, pb2_grpc = tessera_client._load_stubs()
    with grpc.insecure_channel(server.target) as channel:
        stub = pb2_grpc.TesseraStub(channel)
        with pytest.raises(grpc.RpcError) as rpc_error:
            list(stub.Execute(pb2.ExecuteRequest(session_id="no-such-session", sql=b"SELECT 1"), timeout=BOUND_S))
        assert rpc_error.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(tessera_client.TesseraError) as error:
        client.cancel(query_id=987654321)
    assert error.value.code == grpc.StatusCode.NOT_FOUND
    with pytest.raises(tessera_client.TesseraError) as error:
        client.progress()
    assert error.value.code == grpc.StatusCode.NOT_FOUND
    with pytest.raises(tessera_client.TesseraError) as error:
        client.cancel(session_id="no-such-session")
    assert error.value.code == grpc.StatusCode.NOT_FOUND
    assert client.health().serving
    run_tpch(client, 6)


def test_clients_that_go_away_are_cleaned_up(server, client):
    # A process killed while its query runs: the server notices the closed connection and cancels the query.
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.path.join(ROOT, "client", "python")!r})
        import tessera_client
        c = tessera_client.connect({server.target!r})
        running = c.start({LONG_QUERY!r})
        print(running.query_id, flush=True)
        time.sleep(600)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([child.stdout], [], [], BOUND_S)
        assert ready, "the child client did not start its query"
        query_id = int(child.stdout.readline())
        wait_until(lambda: query_id in running_ids(client), "the child's query to run")
    finally:
        child.kill()
        child.wait()
    wait_until(lambda: query_id not in running_ids(client), "the server to cancel the orphaned query")
    # A client that drops its call mid-execution, and one that stops reading mid-stream.
    with tessera_client.connect(server.target) as c:
        running = c.start(LONG_QUERY)
        wait_until(lambda: running.query_id in running_ids(client), "the query to run")
        running.abandon()
        wait_until(lambda: running.query_id not in running_ids(client), "the server to cancel the dropped call")
        call = c._stub.Execute(c._pb2.ExecuteRequest(session_id=c.session_id, sql=b"SELECT * FROM lineitem",
                                                     max_batch_rows=100), timeout=BOUND_S)
        assert next(call).WhichOneof("payload") == "header"
        call.cancel()
        # The session is usable again once the server has noticed.
        wait_until(lambda: not running_ids(client), "the abandoned stream to end")
        assert c.execute("SELECT count(*) FROM nation").rows == [(25,)]
    # A closed session is gone.
    c2 = tessera_client.connect(server.target)
    session_id = c2.session_id
    c2.close()
    with pytest.raises(tessera_client.TesseraError) as error:
        client.cancel(session_id=session_id)
    assert error.value.code == grpc.StatusCode.NOT_FOUND
    assert client.health().serving
    run_tpch(client, 1)


def test_token_authentication(empty_dir):
    server = Server(os.path.join(empty_dir, "token"), "--token", "s3cret")
    try:
        for token in (None, "wrong"):
            with pytest.raises(tessera_client.TesseraError) as error:
                tessera_client.connect(server.target, token=token)
            assert error.value.code == grpc.StatusCode.UNAUTHENTICATED
        with tessera_client.connect(server.target, token="s3cret") as c:
            assert c.execute("SELECT 40 + 2 AS answer").rows == [(42,)]
            assert c.health().serving
            # Every call checks the token, not only OpenSession.
            pb2, pb2_grpc = tessera_client._load_stubs()
            with grpc.insecure_channel(server.target) as channel:
                with pytest.raises(grpc.RpcError) as rpc_error:
                    list(pb2_grpc.TesseraStub(channel).Execute(
                        pb2.ExecuteRequest(session_id=c.session_id, sql=b"SELECT 1"), timeout=BOUND_S))
                assert rpc_error.value.code() == grpc.StatusCode.UNAUTHENTICATED
                # Health needs no token.
                assert pb2_grpc.TesseraStub(channel).Health(pb2.HealthRequest(), timeout=BOUND_S).serving
    finally:
        assert server.stop() == 0


def test_session_limit_and_bad_arguments(empty_dir):
    server = Server(os.path.join(empty_dir, "limits"), "--max-sessions", "2", "--max-statement-bytes", "100")
    try:
        first, second = tessera_client.connect(server.target), tessera_client.connect(server.target)
        with pytest.raises(tessera_client.TesseraError) as error:
            tessera_client.connect(server.target)
        assert error.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED and "max-sessions" in error.value.message
        first.close()
        third = tessera_client.connect(server.target)
        with pytest.raises(tessera_client.TesseraError) as error:
            third.execute("SELECT 1 -- " + "x" * 100)
        assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT and "limit is 100" in error.value.message
        assert third.execute("SELECT 1").rows == [(1,)]
        second.close()
        third.close()
        # Another server cannot take the same port; bad arguments are refused with the usage.
        taken = subprocess.run([SERVER, "--data", os.path.join(empty_dir, "other"), "--listen", server.target],
                               capture_output=True, text=True, timeout=BOUND_S)
        assert taken.returncode == 1 and "cannot listen" in taken.stderr
    finally:
        assert server.stop() == 0
    for args in ([], ["--data"], ["--data", empty_dir, "--threads", "0"], ["--data", empty_dir, "--bogus"],
                 ["--data", empty_dir, "--max-sessions", "x"], ["--data", empty_dir, "--pg-auth", "md5"],
                 ["--data", empty_dir, "stray"]):
        refused = subprocess.run([SERVER, *args], capture_output=True, text=True, timeout=BOUND_S)
        assert refused.returncode == 2 and "usage: tessera-server" in refused.stderr, args
    # --help comes from gflags: every flag of the server, none of glog's, exit status 0.
    shown = subprocess.run([SERVER, "--help"], capture_output=True, text=True, timeout=BOUND_S)
    assert shown.returncode == 0 and "usage: tessera-server" in shown.stdout
    assert "--session-idle-timeout" in shown.stdout and "--admission-threshold" in shown.stdout
    assert "--logtostderr" not in shown.stdout


def test_copy_reads_and_writes_files_only_under_allowed_directories(server, client, empty_dir):
    # The fixture's server allows the .tbl directory: COPY from it works (the fixture loaded lineitem_small),
    # anything else is refused with the flag named, also through a symbolic link or `..`.
    link = os.path.join(tpch_tbl_dir(), "etc-link")
    if not os.path.lexists(link):
        os.symlink("/etc", link)
    for path in ("/etc/passwd", os.path.join(link, "passwd"),
                 os.path.join(tpch_tbl_dir(), "..", "..", "passwd")):
        with pytest.raises(tessera_client.TesseraError) as error:
            client.execute(f"COPY nation FROM '{path}' (DELIMITER '|')")
        assert error.value.code == grpc.StatusCode.PERMISSION_DENIED and "--allowed-directories" in str(error.value)
    with pytest.raises(tessera_client.TesseraError) as error:
        client.execute(f"COPY nation TO '{os.path.join(empty_dir, 'out.tbl')}'")
    assert error.value.code == grpc.StatusCode.PERMISSION_DENIED
    out = os.path.join(tpch_tbl_dir(), f"nation-out-{os.getpid()}.tbl")
    try:
        assert client.execute(f"COPY nation TO '{out}' (DELIMITER '|')").rows_affected == 25
    finally:
        os.unlink(out)
    # Without the flag the server reads and writes no file at all.
    bare = Server(os.path.join(empty_dir, "bare"))
    try:
        with tessera_client.connect(bare.target) as c:
            c.execute("CREATE TABLE t (x INTEGER)")
            with pytest.raises(tessera_client.TesseraError) as error:
                c.execute(f"COPY t FROM '{os.path.join(tpch_tbl_dir(), 'nation.tbl')}'")
            assert "none given" in str(error.value)
    finally:
        assert bare.stop() == 0


def test_sessions_of_killed_clients_are_freed_within_their_lease(empty_dir):
    # With --max-sessions 2, two clients killed with SIGKILL (one idle, one running a query) used to lock everyone
    # out until the idle timeout; their leases (2 s here) expire and a new client gets a session within seconds.
    server = Server(os.path.join(empty_dir, "leases"), "--max-sessions", "2")
    children = []
    try:
        for sql in ("SELECT 1", "SELECT count(*) FROM (SELECT 1 AS x) a, (SELECT 1 AS y) b"):
            script = textwrap.dedent(f"""
                import sys, time
                sys.path.insert(0, {os.path.join(ROOT, "client", "python")!r})
                import tessera_client
                c = tessera_client.connect({server.target!r}, lease_seconds=2)
                c.execute({sql!r})
                print("ready", flush=True)
                time.sleep(600)
            """)
            child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
            children.append(child)
            ready, _, _ = select.select([child.stdout], [], [], BOUND_S)
            assert ready and child.stdout.readline().strip() == "ready"
        with pytest.raises(tessera_client.TesseraError) as error:
            tessera_client.connect(server.target, lease_seconds=0)
        assert error.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        time.sleep(3)  # longer than the lease: the living clients' renewals keep their sessions
        with pytest.raises(tessera_client.TesseraError):
            tessera_client.connect(server.target, lease_seconds=0)
        for child in children:
            child.kill()
            child.wait()
        # Within the test's bound (seconds), far below the idle timeout (an hour).
        wait_until(lambda: can_open_session(server.target), "a session after the kills")
    finally:
        for child in children:
            child.kill()
            child.wait()
        assert server.stop() == 0


def test_authentication_never_fails_open(empty_dir):
    # An empty or blank token is an error at start, never a server without authentication.
    blank = os.path.join(empty_dir, "blank-token")
    with open(blank, "w") as f:
        f.write("  \n")
    data = os.path.join(empty_dir, "auth")
    for args in (["--token", ""], ["--token", "   "], ["--token-file", blank]):
        refused = subprocess.run([SERVER, "--data", data, *args], capture_output=True, text=True, timeout=BOUND_S)
        assert refused.returncode == 2 and ("empty" in refused.stderr or "blank" in refused.stderr), args
    # Listening beyond loopback without a token warns loudly (and still serves).
    server = Server(data, "--listen", "0.0.0.0:0")
    assert server.stop() == 0
    assert "WITHOUT AUTHENTICATION" in server.process.stderr.read()


def test_expired_session_is_reopened(empty_dir):
    server = Server(os.path.join(empty_dir, "idle"), "--session-idle-timeout", "1")
    try:
        with tessera_client.connect(server.target, priority=3) as c:
            first = c.session_id
            wait_until(lambda: c.health().open_sessions == 0, "the idle session to be closed")
            with pytest.raises(tessera_client.TesseraError) as error:
                c.cancel(session_id=first)
            assert error.value.code == grpc.StatusCode.NOT_FOUND
            assert c.execute("SHOW priority").rows == [("priority", "3")]  # a new session, same settings
            assert c.session_id != first
    finally:
        assert server.stop() == 0


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_tls(empty_dir):
    cert, key = os.path.join(empty_dir, "cert.pem"), os.path.join(empty_dir, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=BOUND_S)
    server = Server(os.path.join(empty_dir, "tls"), "--tls-cert", cert, "--tls-key", key)
    try:
        with open(cert, "rb") as f:
            root = f.read()
        with tessera_client.connect(server.target, root_certificates=root, server_name="localhost") as c:
            assert c.execute("SELECT 'over tls' AS s").rows == [("over tls",)]
        # A plaintext client cannot talk to it.
        with pytest.raises(tessera_client.TesseraError):
            tessera_client.connect(server.target, timeout=3)
    finally:
        assert server.stop() == 0


def test_sigterm_during_query_then_restart(database, server):  # noqa: F811 (server: lineitem_small exists)
    data_dir = tempfile.mkdtemp(prefix="tessera-server-sigterm-")
    shutil.rmtree(data_dir)
    shutil.copytree(database, data_dir)
    try:
        server = Server(data_dir)
        c = tessera_client.connect(server.target)
        running = c.start(LONG_QUERY, timeout=600)
        wait_until(lambda: running.query_id in running_ids(c), "the long query to run")
        assert server.stop() == 0
        with pytest.raises(tessera_client.TesseraError) as error:
            running.result()
        assert error.value.code in (grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE)
        assert "shutting down" in server.process.stderr.read()
        server = Server(data_dir)
        try:
            with tessera_client.connect(server.target) as c:
                assert c.execute("SELECT count(*) FROM lineitem").rows == [(60175,)]
                assert c.execute("SELECT count(*) FROM lineitem_small").rows == [(60175,)]
                run_tpch(c, 6)
                run_tpch(c, 3)
        finally:
            assert server.stop() == 0
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
