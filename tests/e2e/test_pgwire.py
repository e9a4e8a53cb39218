"""End-to-end tests of tessera-server's PostgreSQL protocol (--pg-listen) with real clients: psql (Debian's
postgresql-client) and psycopg 3, plus a few raw protocol exchanges (portals with a row limit, garbage bytes).

The TPC-H SF 0.01 database of test_tpch_answers.py is served on 127.0.0.1 with free ports and a token (the
PostgreSQL password); the server is stopped by its pid with SIGTERM. Every wait is bounded.
Environment: TESSERA_BIN (the shell, to load data), TESSERA_SERVER_BIN, TESSERA_TEST_CACHE, PSQL (optional).
"""
import base64
import datetime
import hashlib
import hmac
import decimal
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

from process_control import stop_by_pid
from test_tpch_answers import QUERIES, ROOT, assert_matches_reference, database  # noqa: F401 (database: fixture)

psycopg = pytest.importorskip("psycopg")

SERVER = os.environ.get("TESSERA_SERVER_BIN", os.path.join(ROOT, "build", "server", "tessera-server"))
PSQL = os.environ.get("PSQL", shutil.which("psql") or "psql")
TOKEN = "pg-s3cret"
BOUND_S = 60
# Long enough to be cancelled mid-run (lineitem joined with itself on a two-valued key, no output).
LONG_QUERY = ("SELECT count(*) FROM lineitem l1, lineitem l2 "
              "WHERE l1.l_linestatus = l2.l_linestatus AND l1.l_extendedprice < l2.l_extendedprice * 0.001")


class Server:
    """tessera-server with both protocols on 127.0.0.1 and free ports."""

    def __init__(self, data_dir, *extra_args):
        self.process = subprocess.Popen(
            [SERVER, "--data", data_dir, "--listen", "127.0.0.1:0", "--pg-listen", "127.0.0.1:0", "--no-sync",
             *extra_args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Two lines: the PostgreSQL port, then the gRPC one (a reader thread, since the pipe's buffer may already
        # hold both lines when select() would be asked about the second).
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(self.process.stdout.readline() for _ in range(2)),
                                  daemon=True)
        reader.start()
        reader.join(BOUND_S)
        if len(lines) < 2 or not all(lines):
            self.process.kill()
            raise AssertionError(f"server did not start: {lines} {self.process.stderr.read()}")
        assert "PostgreSQL protocol on" in lines[0] and "listening on" in lines[1], lines
        self.pg_port = int(lines[0].strip().rsplit(":", 1)[1])
        self.grpc_target = lines[1].strip().rsplit(" ", 1)[1]

    def connect(self, **kwargs):
        kwargs.setdefault("autocommit", True)
        kwargs.setdefault("password", TOKEN)
        return psycopg.connect(host="127.0.0.1", port=self.pg_port, user="tester", dbname="tpch",
                               connect_timeout=BOUND_S, **kwargs)

    def psql(self, *args, password=TOKEN):
        env = dict(os.environ, PGPASSWORD=password, PGCONNECT_TIMEOUT=str(BOUND_S))
        return subprocess.run([PSQL, "-X", "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "tester", "-d", "tpch",
                               *args], capture_output=True, text=True, env=env, timeout=BOUND_S * 5)

    def stop(self):
        """SIGTERM by pid; returns the exit code (killing the process if it does not stop in time)."""
        return stop_by_pid(self.process, BOUND_S)


@pytest.fixture(scope="module")
def server(database):  # noqa: F811 (the fixture imported above)
    process = Server(database, "--threads", "2", "--token", TOKEN, "--max-sessions", "24")
    yield process
    assert process.stop() == 0


def tpch_sql(query):
    with open(os.path.join(QUERIES, f"q{query:02d}.sql")) as f:
        return f.read()


def as_text(value):
    """A psycopg value as the shell prints it in CSV, for assert_matches_reference."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


# --- psql ---

def test_psql_runs_a_tpch_query(server):
    result = server.psql("-A", "-t", "-F", "|", "-f", os.path.join(QUERIES, "q01.sql"))
    assert result.returncode == 0, result.stderr
    rows = [line.split("|") for line in result.stdout.splitlines() if line]
    assert_matches_reference(1, rows)


def test_psql_aligned_output_and_errors(server):
    result = server.psql("-c", "SELECT n_nationkey, n_name FROM nation WHERE n_nationkey < 2 ORDER BY 1")
    assert result.returncode == 0, result.stderr
    assert "ALGERIA" in result.stdout and "ARGENTINA" in result.stdout and "(2 rows)" in result.stdout
    result = server.psql("-c", "SELECT n_nam FROM nation")
    assert result.returncode == 1
    # psql draws its own caret from the error's position.
    assert "column 'n_nam' does not exist" in result.stderr and "LINE 1: SELECT n_nam FROM nation" in result.stderr


def test_psql_describes_tables(server):
    result = server.psql("-c", "\\dt", "-c", "\\d lineitem", "-c", "\\dt no_such*", "-c", "\\d nation")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for table in ("lineitem", "orders", "region"):
        assert f"public | {table}" in out
    assert 'Table "public.lineitem"' in out
    assert "l_orderkey" in out and "l_shipinstruct" in out and "numeric(15,2)" in out and "date" in out
    assert 'Table "public.nation"' in out and "n_comment" in out
    assert "Did not find any relation named" in out or "Did not find any relation named" in result.stderr


def test_psql_wrong_password_is_refused(server):
    result = server.psql("-c", "SELECT 1", password="wrong")
    assert result.returncode == 2
    assert "password authentication failed" in result.stderr


# --- psycopg 3 ---

@pytest.mark.parametrize("query", range(1, 23))
def test_tpch_answers_over_psycopg(server, query):
    with server.connect() as conn:
        rows = conn.execute(tpch_sql(query)).fetchall()
    assert_matches_reference(query, [[as_text(v) for v in row] for row in rows])


def test_parameterized_queries(server):
    with server.connect() as conn:
        count = conn.execute("SELECT count(*) FROM orders WHERE o_orderdate >= %s AND o_orderdate < %s",
                             (datetime.date(1995, 1, 1), datetime.date(1995, 2, 1))).fetchone()[0]
        assert count == conn.execute("SELECT count(*) FROM orders WHERE o_orderdate >= DATE '1995-01-01' "
                                     "AND o_orderdate < DATE '1995-02-01'").fetchone()[0]
        assert count > 0
        name = conn.execute("SELECT n_name FROM nation WHERE n_nationkey = %s", (7,)).fetchone()[0]
        assert name == "GERMANY"
        assert conn.execute("SELECT n_nationkey FROM nation WHERE n_name = %s", ("GERMANY",)).fetchone()[0] == 7
        # A quote inside a parameter stays data: no row matches, nothing breaks.
        assert conn.execute("SELECT count(*) FROM nation WHERE n_name = %s", ("x' OR '1'='1",)).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM lineitem WHERE l_discount = %s AND l_quantity < %s",
                            (decimal.Decimal("0.05"), 10)).fetchone()[0] > 0
        row = conn.execute("SELECT %s, %s, %s, %s, %s", ("it's", None, 2.5, True, -3)).fetchone()
        assert row == ("it's", None, 2.5, True, -3)
        # The same parameters in binary format.
        row = conn.cursor(binary=True).execute(
            "SELECT n_name, %b FROM nation WHERE n_nationkey = %b AND n_regionkey = %b",
            (decimal.Decimal("-12.50"), 7, 3)).fetchone()
        assert row == ("GERMANY", decimal.Decimal("-12.50"))
        # psycopg prepares a statement run often enough (named statements, Bind/Execute).
        for key in range(8):
            assert conn.execute("SELECT n_nationkey FROM nation WHERE n_nationkey = %s", (key,)).fetchone() == (key,)


def test_every_type_in_text_and_binary(server):
    expected = (42, 9_000_000_000, 2.5, decimal.Decimal("1234.567"), decimal.Decimal("123456789012345678901.12345"),
                "ab", "héllo", "it's", datetime.date(1995, 3, 15), datetime.datetime(2024, 2, 29, 12, 34, 56, 500000),
                datetime.timedelta(days=3, hours=4, minutes=5, seconds=6), True)
    with server.connect() as conn:
        conn.execute("DROP TABLE IF EXISTS pg_types")
        conn.execute("CREATE TABLE pg_types (i INTEGER, b BIGINT, d DOUBLE, n DECIMAL(12,3), w DECIMAL(30,5), "
                     "c CHAR(4), v VARCHAR(20), s VARCHAR, dt DATE, ts TIMESTAMP, iv INTERVAL, f BOOLEAN)")
        conn.execute("INSERT INTO pg_types VALUES (42, 9000000000, 2.5, 1234.567, 123456789012345678901.12345, 'ab', "
                     "'héllo', 'it''s', DATE '1995-03-15', TIMESTAMP '2024-02-29 12:34:56.5', "
                     "INTERVAL '3 days 04:05:06', true), "
                     "(NULL, NULL, NULL, -0.001, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
        for binary in (False, True):
            cursor = conn.cursor(binary=binary)
            rows = cursor.execute("SELECT * FROM pg_types ORDER BY i").fetchall()
            assert rows[0] == expected, f"binary={binary}"
            assert rows[1] == (None, None, None, decimal.Decimal("-0.001")) + (None,) * 8, f"binary={binary}"
            assert [c.type_code for c in cursor.description] == [23, 20, 701, 1700, 1700, 1042, 1043, 25, 1082,
                                                                  1114, 1186, 16]
        conn.execute("DROP TABLE pg_types")


@pytest.mark.parametrize("sql, sqlstate, position", [
    ("SELEC 1", "42601", 1),
    ("SELECT * FROM no_such_table", "42P01", 15),
    ("SELECT no_such_column FROM nation", "42703", 8),
    ("SELECT 1 / 0", "22012", None),
    ("SELECT CAST('abc' AS INTEGER)", "22P02", None),
    ("SELECT no_such_function(1)", "42883", None),
])
def test_sqlstate_of_bad_sql(server, sql, sqlstate, position):
    with server.connect() as conn:
        with pytest.raises(psycopg.Error) as error:
            conn.execute(sql)
        assert error.value.sqlstate == sqlstate, error.value.diag.message_primary
        if position is not None:
            assert error.value.diag.statement_position == str(position)
        # The connection goes on.
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_cancel_a_long_query(server):
    with server.connect() as conn:
        def cancel_soon():
            time.sleep(1.0)
            conn.cancel()
        canceller = threading.Thread(target=cancel_soon)
        canceller.start()
        start = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute(LONG_QUERY)
        canceller.join()
        assert time.monotonic() - start < BOUND_S
        assert conn.execute("SELECT count(*) FROM region").fetchone() == (5,)


def test_statement_timeout_is_query_canceled(server):
    with server.connect() as conn:
        conn.execute("SET statement_timeout = '200ms'")
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute(LONG_QUERY)


def test_driver_settings_and_version(server):
    with server.connect() as conn:
        assert conn.info.parameter_status("server_version") == "15.0"
        assert conn.info.parameter_status("client_encoding") == "UTF8"
        assert conn.info.parameter_status("integer_datetimes") == "on"
        assert conn.execute("SELECT version()").fetchone()[0].startswith("PostgreSQL 15.0 (Tessera")
        conn.execute("SET application_name = 'pgwire-test'")
        assert conn.info.parameter_status("application_name") == "pgwire-test"
        assert conn.execute("SHOW application_name").fetchone() == ("pgwire-test",)
        notices = []
        conn.add_notice_handler(lambda diag: notices.append(diag.message_primary))
        conn.execute("SET search_path TO public")
        assert any("search_path" in n for n in notices)
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            conn.execute("SET client_encoding = 'LATIN1'")
        # Tessera's own settings go to the engine.
        conn.execute("SET priority = 3")
        assert conn.execute("SHOW priority").fetchone() == ("priority", "3")


def test_startup_options(server):
    with server.connect(options="-c priority=3 -c application_name=from\\ options") as conn:
        assert conn.execute("SHOW priority").fetchone() == ("priority", "3")
        assert conn.info.parameter_status("application_name") == "from options"
    with server.connect(options="-c statement_timeout=200ms") as conn:
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute(LONG_QUERY)
    with pytest.raises(psycopg.OperationalError, match="unknown setting 'no_such_setting'"):
        server.connect(options="-c no_such_setting=1")


def test_transaction_blocks(server):
    with server.connect(autocommit=False) as conn:  # psycopg sends BEGIN itself
        assert conn.execute("SELECT count(*) FROM region").fetchone() == (5,)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        conn.commit()
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("SELECT 1 / 0")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.rollback()
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_too_many_connections(tmp_path):
    server = Server(str(tmp_path / "data"), "--threads", "1", "--max-sessions", "2")
    try:
        first, second = server.connect(password=None), server.connect(password=None)
        with pytest.raises(psycopg.OperationalError, match="too many"):
            server.connect(password=None)
        first.close()
        deadline = time.monotonic() + BOUND_S
        while True:  # the slot frees once the server has seen the close
            try:
                server.connect(password=None).close()
                break
            except psycopg.OperationalError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        second.close()
    finally:
        assert server.stop() == 0


def test_idle_session_timeout_ends_the_connection(tmp_path):
    server = Server(str(tmp_path / "data"), "--threads", "1", "--session-idle-timeout", "1")
    try:
        with server.connect(password=None) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            time.sleep(2.0)  # the registry closes sessions idle for 1 s (checked every 250 ms)
            with pytest.raises(psycopg.Error) as error:
                conn.execute("SELECT 1")
            assert error.value.sqlstate == "57P05", error.value
            with pytest.raises(psycopg.OperationalError):  # the server closed the connection
                conn.execute("SELECT 1")
    finally:
        assert server.stop() == 0


def test_a_client_that_hangs_up_has_its_query_cancelled(tmp_path):
    server = Server(str(tmp_path / "data"), "--threads", "1", "--max-sessions", "1")
    try:
        with server.connect(password=None) as conn:
            conn.execute("CREATE TABLE big (x BIGINT)")
            conn.execute("INSERT INTO big VALUES (1), (2), (3), (4), (5), (6), (7), (8)")
            for _ in range(13):
                conn.execute("INSERT INTO big SELECT x + (SELECT count(*) FROM big) FROM big")
        # The slot of the connection closed above frees once the server has seen it close (asynchronously).
        start = time.monotonic()
        while True:
            raw = Raw(server.pg_port)
            try:
                raw.startup()
                break
            except AssertionError as refused:
                raw.sock.close()
                assert "53300" in str(refused) and time.monotonic() - start < BOUND_S / 2, refused
                time.sleep(0.05)
        sql = b"SELECT count(*) FROM big a, big b WHERE a.x + b.x < 0"  # 4e9 pairs: minutes
        raw.message(b"Q", sql + b"\0")
        time.sleep(0.5)
        raw.sock.close()
        # The only session slot frees once the server has cancelled the query of the client that hung up.
        start = time.monotonic()
        while True:
            try:
                server.connect(password=None).close()
                break
            except psycopg.OperationalError:
                assert time.monotonic() - start < BOUND_S / 2, "the abandoned query was not cancelled"
                time.sleep(0.05)
    finally:
        assert server.stop() == 0


def test_a_taken_port_is_an_error_at_start(tmp_path):
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    try:
        result = subprocess.run([SERVER, "--data", str(tmp_path / "data"), "--listen", "127.0.0.1:0", "--pg-listen",
                                 f"127.0.0.1:{holder.getsockname()[1]}"], capture_output=True, text=True,
                                timeout=BOUND_S)
        assert result.returncode == 1 and "cannot listen on" in result.stderr, result.stderr
    finally:
        holder.close()


def test_cleartext_password_when_asked_for(tmp_path):
    server = Server(str(tmp_path / "data"), "--threads", "1", "--token", TOKEN, "--pg-auth", "password")
    try:
        with server.connect() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            server.connect(password="wrong")
        raw = Raw(server.pg_port)
        raw.startup()  # answers AuthenticationCleartextPassword (3) with the token
        raw.sock.close()
    finally:
        assert server.stop() == 0


def test_scram_exchange_by_hand(server):
    """The raw exchange: AuthenticationSASL offers SCRAM-SHA-256 only; a wrong proof is refused with 28P01."""
    raw = Raw(server.pg_port)
    body = struct.pack("!i", 196608) + b"user\0raw\0\0"
    raw.send(struct.pack("!i", len(body) + 4) + body)
    kind, payload = raw.read()
    assert kind == b"R" and payload == struct.pack("!i", 10) + b"SCRAM-SHA-256\0\0"
    client_first = b"n,,n=,r=abcdefghijklmnop"
    raw.message(b"p", b"SCRAM-SHA-256\0" + struct.pack("!i", len(client_first)) + client_first)
    kind, payload = raw.read()
    assert kind == b"R" and payload[:4] == struct.pack("!i", 11)
    server_first = payload[4:].decode()
    nonce = server_first.split(",")[0][2:]
    assert nonce.startswith("abcdefghijklmnop") and ",i=4096" in server_first
    raw.message(b"p", f"c=biws,r={nonce},p=".encode() + base64.b64encode(b"\0" * 32))
    kind, payload = raw.read()
    assert kind == b"E" and b"28P01" in payload
    raw.sock.close()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_tls_with_the_servers_certificate(tmp_path):
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=BOUND_S)
    server = Server(str(tmp_path / "data"), "--threads", "1", "--token", TOKEN, "--tls-cert", cert, "--tls-key", key)
    try:
        # verify-full: the certificate is checked against the CA file and the host name.
        with psycopg.connect(host="localhost", port=server.pg_port, user="u", dbname="d", password=TOKEN,
                             sslmode="verify-full", sslrootcert=cert, autocommit=True) as conn:
            assert conn.pgconn.ssl_in_use
            assert conn.execute("SELECT %s, 1 + %s", ("tls", 1)).fetchone() == ("tls", 2)
        result = server.psql("-c", "SELECT 40 + 2")
        assert result.returncode == 0 and "42" in result.stdout, result.stderr
        # A client that refuses TLS still gets in: the server does not insist (no hostssl rule).
        with server.connect(sslmode="disable") as conn:
            assert not conn.pgconn.ssl_in_use
    finally:
        assert server.stop() == 0


JDBC_VERSION = "42.7.14"


def jdbc_driver_jar():
    """The PostgreSQL JDBC driver from the local Maven repository, fetched by Maven when it is not there yet."""
    jar = os.path.expanduser(f"~/.m2/repository/org/postgresql/postgresql/{JDBC_VERSION}/"
                             f"postgresql-{JDBC_VERSION}.jar")
    if not os.path.exists(jar) and shutil.which("mvn"):
        subprocess.run(["mvn", "-q", "-B", "dependency:get", f"-Dartifact=org.postgresql:postgresql:{JDBC_VERSION}",
                        "-Dtransitive=false"], capture_output=True, timeout=600)
    return jar if os.path.exists(jar) else None


@pytest.mark.skipif(shutil.which("java") is None, reason="no JDK")
def test_jdbc_driver(server):
    jar = jdbc_driver_jar()
    if jar is None:
        pytest.skip("the PostgreSQL JDBC driver is not in the local Maven repository and Maven could not fetch it")
    result = subprocess.run(["java", "-cp", jar, os.path.join(os.path.dirname(__file__), "jdbc", "JdbcSmoke.java"),
                             str(server.pg_port), TOKEN], capture_output=True, text=True, timeout=BOUND_S * 5)
    assert result.returncode == 0 and "JDBC OK" in result.stdout, result.stdout + result.stderr


# --- raw protocol ---

class Raw:
    """A minimal frontend for exchanges no driver makes on purpose."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=BOUND_S)

    def send(self, data):
        self.sock.sendall(data)

    def startup(self, password=TOKEN):
        body = struct.pack("!i", 196608) + b"user\0raw\0database\0tpch\0\0"
        self.send(struct.pack("!i", len(body) + 4) + body)
        kind, payload = self.read()
        if kind == b"R" and struct.unpack("!i", payload[:4])[0] == 3:
            self.message(b"p", password.encode() + b"\0")
            kind, payload = self.read()
        elif kind == b"R" and struct.unpack("!i", payload[:4])[0] == 10:
            self.scram(password.encode())
            kind, payload = self.read()
        assert (kind, payload) == (b"R", b"\0\0\0\0"), (kind, payload)
        return self.until(b"Z")

    def scram(self, password):
        """The client side of SCRAM-SHA-256 (RFC 5802), written from the RFC, independent of the server's code."""
        client_first_bare = b"n=,r=" + base64.b64encode(os.urandom(18))
        client_first = b"n,," + client_first_bare
        self.message(b"p", b"SCRAM-SHA-256\0" + struct.pack("!i", len(client_first)) + client_first)
        kind, payload = self.read()
        assert kind == b"R" and struct.unpack("!i", payload[:4])[0] == 11, (kind, payload)
        server_first = payload[4:]
        fields = dict(item.split(b"=", 1) for item in server_first.split(b","))
        salted = hashlib.pbkdf2_hmac("sha256", password, base64.b64decode(fields[b"s"]), int(fields[b"i"]))
        client_key = hmac.new(salted, b"Client Key", "sha256").digest()
        without_proof = b"c=biws,r=" + fields[b"r"]
        auth_message = client_first_bare + b"," + server_first + b"," + without_proof
        signature = hmac.new(hashlib.sha256(client_key).digest(), auth_message, "sha256").digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        self.message(b"p", without_proof + b",p=" + base64.b64encode(proof))
        kind, payload = self.read()
        assert kind == b"R" and struct.unpack("!i", payload[:4])[0] == 12, (kind, payload)
        server_key = hmac.new(salted, b"Server Key", "sha256").digest()
        assert payload[4:] == b"v=" + base64.b64encode(hmac.new(server_key, auth_message, "sha256").digest())

    def message(self, kind, body=b""):
        self.send(kind + struct.pack("!i", len(body) + 4) + body)

    def read(self):
        header = self.exactly(5)
        length = struct.unpack("!i", header[1:])[0]
        return header[:1], self.exactly(length - 4)

    def exactly(self, count):
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    def until(self, kind):
        messages = []
        while True:
            message = self.read()
            messages.append(message)
            if message[0] == kind:
                return messages


def test_portal_with_row_limit_suspends(server):
    raw = Raw(server.pg_port)
    raw.startup()
    raw.message(b"P", b"\0SELECT n_nationkey FROM nation WHERE n_regionkey = $1 ORDER BY 1\0\0\0")
    raw.message(b"B", b"p1\0\0\0\0\0\x01\0\0\0\x011\0\0")  # $1 = '1' (text), results in text
    raw.message(b"E", b"p1\0" + struct.pack("!i", 3))
    raw.message(b"H")
    first = raw.until(b"s")  # PortalSuspended
    raw.message(b"E", b"p1\0" + struct.pack("!i", 3))
    raw.message(b"S")
    rest = raw.until(b"Z")
    values = [int(m[1][6:].decode()) for m in first + rest if m[0] == b"D"]
    assert values == [1, 2, 3, 17, 24]
    assert (b"C", b"SELECT 2\0") in rest
    raw.sock.close()


def test_garbage_does_not_crash_the_server(server):
    attacks = [
        os.urandom(64),
        b"\xff\xff\xff\xff" + os.urandom(16),          # a negative startup length
        struct.pack("!i", 1 << 30) + b"\0\3\0\0",       # a huge startup length
        struct.pack("!ii", 8, 1234),                    # an unknown protocol
        struct.pack("!i", 100) + b"\0\3\0\0user",       # a truncated startup packet, then EOF
        b"",                                            # connect and close
    ]
    for attack in attacks:
        sock = socket.create_connection(("127.0.0.1", server.pg_port), timeout=BOUND_S)
        sock.sendall(attack)
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(4096):
            pass
        sock.close()
    # After startup: a huge message length, an unknown message type, a malformed Bind.
    for after in [b"Q" + struct.pack("!i", 0x7FFFFFFF), b"\x01" + struct.pack("!i", 4),
                  b"B" + struct.pack("!i", 6) + b"\0\0"]:
        raw = Raw(server.pg_port)
        raw.startup()
        raw.send(after)
        kind, payload = raw.read()
        assert kind == b"E" and b"08P01" in payload, payload
        raw.sock.close()
    with server.connect() as conn:
        assert conn.execute("SELECT count(*) FROM nation").fetchone() == (25,)
