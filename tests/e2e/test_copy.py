"""End-to-end tests of COPY through the client connection (issue #18 and #19): COPY ... FROM STDIN and TO STDOUT
over the PostgreSQL protocol with psycopg 3 (cursor.copy()) and psql (\\copy), a bad row in the middle (an error
naming its line, the table unchanged, the connection usable), CopyFail, a client that disconnects mid-stream, and
a large input streamed under a memory limit (the server's peak RSS stays far below the input's size).

Each test module starts one tessera-server on an empty data directory with free ports; every wait is bounded.
Environment: TESSERA_SERVER_BIN, TESSERA_BIN (the shell), PSQL (optional), TESSERA_CLIENT_CACHE.
"""
import os
import subprocess
import sys
import time

import pytest

psycopg = pytest.importorskip("psycopg")

import test_pgwire  # noqa: E402 (its Server)
from test_pgwire import BOUND_S, ROOT, TOKEN  # noqa: E402

SHELL = os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli", "tessera"))


class Server(test_pgwire.Server):
    """tessera-server with both protocols on 127.0.0.1 and free ports (test_pgwire.py's), two threads, the token."""

    def __init__(self, data_dir, *extra_args):
        super().__init__(data_dir, "--threads", "2", "--token", TOKEN, *extra_args)

    def peak_rss_bytes(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        raise AssertionError("no VmHWM")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = Server(str(tmp_path_factory.mktemp("copy") / "db"))
    yield process
    assert process.stop() == 0


def scalar(connection, sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()[0]


ROWS = [(1, "plain", "2024-01-02", "1.50", True),
        (2, None, None, None, None),
        (3, "tab\there, comma", "1999-12-31", "-3.25", False),
        (4, "line\nbreak \\ backslash \\N", "2000-02-29", "0.00", True),
        (5, "", "2001-01-01", "12345.67", False),
        (6, "ünïcødé ✓", "1970-01-01", "7.00", True)]
COLUMNS = "(id INTEGER, s VARCHAR, d DATE, x DECIMAL(10,2), b BOOLEAN)"


def as_text(row):
    return tuple(None if v is None else str(v) for v in row)


# --- PostgreSQL protocol: psycopg 3 ---

def test_psycopg_copy_rows_in_and_out(server):
    with server.connect() as connection, connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE rows_io {COLUMNS}")
        with cursor.copy("COPY rows_io FROM STDIN") as copy:
            for row in ROWS:
                copy.write_row(row)
        assert cursor.statusmessage == "COPY 6" and cursor.rowcount == 6
        with cursor.copy("COPY rows_io TO STDOUT") as copy:
            out = sorted(copy.rows(), key=lambda r: int(r[0]))
        expected = [as_text(r) for r in ROWS]
        # Booleans come back as Tessera prints them.
        expected = [r[:4] + ({"True": "true", "False": "false"}.get(r[4], r[4]),) for r in expected]
        assert out == expected
        with cursor.copy("COPY (SELECT id, s FROM rows_io WHERE id > 4 ORDER BY id) TO STDOUT (FORMAT csv, HEADER)") \
                as copy:
            text = b"".join(bytes(data) for data in copy).decode()
        assert text == 'id,s\n5,""\n6,ünïcødé ✓\n'


def test_psycopg_copy_csv_in_pieces_with_header(server):
    lines = ["id,s,d,x,b"] + [f"{i},\"name, {i}\",2020-01-{i % 28 + 1:02d},{i}.25,{'true' if i % 2 else 'false'}"
                              for i in range(20000)]
    data = ("\n".join(lines) + "\n").encode()
    with server.connect() as connection, connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE csv_in {COLUMNS}")
        with cursor.copy("COPY csv_in FROM STDIN WITH (FORMAT csv, HEADER)") as copy:
            # Pieces whose borders fall anywhere, inside lines and fields.
            at = 0
            for size in (1, 7, 4096, 100003) * 100:
                if at >= len(data):
                    break
                copy.write(data[at:at + size])
                at += size
            copy.write(data[at:])
        assert cursor.rowcount == 20000
        cursor.execute("SELECT count(*), sum(id), count(DISTINCT s), sum(x) FROM csv_in")
        count, total, distinct, x = cursor.fetchone()
        assert (count, total, distinct) == (20000, sum(range(20000)), 20000)
        assert float(x) == sum(range(20000)) + 0.25 * 20000


def test_bad_row_in_the_middle_names_its_line_and_changes_nothing(server):
    with server.connect() as connection, connection.cursor() as cursor:
        cursor.execute("CREATE TABLE bad_row (id INTEGER, s VARCHAR)")
        cursor.execute("INSERT INTO bad_row VALUES (-1, 'before')")
        with pytest.raises(psycopg.errors.InvalidTextRepresentation) as raised:
            with cursor.copy("COPY bad_row FROM STDIN") as copy:
                for i in range(100000):
                    copy.write_row(("x" if i == 50000 else i, f"s{i}"))
        message = str(raised.value)
        assert "STDIN line 50001, column id: invalid input for INTEGER: 'x'" in message, message
        # The connection goes on, and the table is as it was.
        assert scalar(connection, "SELECT count(*) FROM bad_row") == 1
        with pytest.raises(psycopg.errors.BadCopyFileFormat) as raised:
            with cursor.copy("COPY bad_row FROM STDIN") as copy:
                copy.write(b"1\ta\n2\tb\textra\n")
        assert "STDIN line 2, expected 2 fields, found 3" in str(raised.value)
        assert scalar(connection, "SELECT count(*) FROM bad_row") == 1


def test_copy_fail_leaves_the_table_unchanged(server):
    with server.connect() as connection, connection.cursor() as cursor:
        cursor.execute("CREATE TABLE failed (id INTEGER)")
        with pytest.raises(ZeroDivisionError):
            with cursor.copy("COPY failed FROM STDIN") as copy:
                for i in range(200000):
                    copy.write_row((i,))
                1 / 0  # psycopg sends CopyFail with the exception's text
        assert scalar(connection, "SELECT count(*) FROM failed") == 0
        # The same by hand: the server's answer to CopyFail is 57014 with the client's reason.
        connection.pgconn.send_query(b"COPY failed FROM STDIN")
        result = connection.pgconn.get_result()
        assert result.status == psycopg.pq.ExecStatus.COPY_IN
        connection.pgconn.put_copy_data(b"1\n2\n")
        connection.pgconn.put_copy_end(b"the user changed their mind")
        result = connection.pgconn.get_result()
        assert result.status == psycopg.pq.ExecStatus.FATAL_ERROR
        assert result.error_field(psycopg.pq.DiagnosticField.SQLSTATE) == b"57014"
        assert b"COPY from stdin failed: the user changed their mind" in result.error_message
        while connection.pgconn.get_result() is not None:
            pass
        assert scalar(connection, "SELECT count(*) FROM failed") == 0


def test_cancel_request_mid_copy_commits_nothing(server):
    with server.connect() as connection, connection.cursor() as cursor:
        cursor.execute("CREATE TABLE cancelled (id INTEGER)")
        piece = "".join(f"{i}\n" for i in range(10000)).encode()
        with pytest.raises(psycopg.errors.QueryCanceled):
            with cursor.copy("COPY cancelled FROM STDIN") as copy:
                copy.write(piece)
                connection.cancel()  # a CancelRequest on another connection, as psql's Ctrl-C sends
                deadline = time.monotonic() + 2  # the server drops what follows until CopyDone
                while time.monotonic() < deadline:
                    copy.write(piece)
        assert scalar(connection, "SELECT count(*) FROM cancelled") == 0


def test_a_client_that_disconnects_mid_copy_commits_nothing(server):
    with server.connect() as connection:
        connection.execute("CREATE TABLE dropped (id INTEGER)")
    # A child process sends part of the data and dies without CopyDone.
    script = f"""
import os, psycopg
c = psycopg.connect(host="127.0.0.1", port={server.pg_port}, user="t", dbname="db", password="{TOKEN}",
                    autocommit=True)
cur = c.cursor()
with cur.copy("COPY dropped FROM STDIN") as copy:
    for i in range(300000):
        copy.write_row((i,))
    os._exit(3)
"""
    child = subprocess.run([sys.executable, "-c", script], timeout=BOUND_S, capture_output=True, text=True)
    assert child.returncode == 3, child.stderr
    with server.connect() as connection:
        deadline = time.monotonic() + BOUND_S
        # The server notices the end of the connection, aborts the COPY and frees the session.
        assert scalar(connection, "SELECT count(*) FROM dropped") == 0
        time.sleep(0.5)
        assert scalar(connection, "SELECT count(*) FROM dropped") == 0
        assert time.monotonic() < deadline


def test_copy_without_a_stream_over_the_extended_protocol_is_refused(server):
    with server.connect() as connection, connection.cursor() as cursor:
        cursor.execute("CREATE TABLE extended (id INTEGER)")
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as raised:
            cursor.execute("COPY extended FROM STDIN", prepare=True)
        assert "needs a client that streams the data" in str(raised.value)


# --- PostgreSQL protocol: psql's \copy ---

def test_psql_backslash_copy_from_and_to_local_files(server, tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("".join(f"{i},name {i},2021-03-{i % 28 + 1:02d}\n" for i in range(5000)))
    out_csv = tmp_path / "out.csv"
    out_text = tmp_path / "out.txt"
    result = server.psql(
        "-v", "ON_ERROR_STOP=1",
        "-c", "CREATE TABLE via_psql (id INTEGER, name VARCHAR, day DATE)",
        "-c", f"\\copy via_psql from '{source}' with (format csv)",
        "-c", f"\\copy via_psql to '{out_csv}' with (format csv)",
        "-c", f"\\copy (select id, name from via_psql where id < 3 order by id) to '{out_text}'")
    assert result.returncode == 0, result.stderr
    assert "COPY 5000" in result.stdout
    assert sorted(out_csv.read_text().splitlines()) == sorted(source.read_text().splitlines())
    assert out_text.read_text() == "0\tname 0\n1\tname 1\n2\tname 2\n"
    bad = tmp_path / "bad.csv"
    bad.write_text("1,a,2021-01-01\n2,b,2021-02-30\n")
    result = server.psql("-c", f"\\copy via_psql from '{bad}' with (format csv)")
    assert result.returncode != 0
    assert "STDIN line 2, column day: invalid input for DATE: '2021-02-30'" in result.stderr, result.stderr
    with server.connect() as connection:
        assert scalar(connection, "SELECT count(*) FROM via_psql") == 5000


# --- memory: the input streams, it is never held whole ---

def test_large_input_streams_under_a_memory_limit(tmp_path):
    """600 MB of rows through COPY FROM STDIN into a server with a 256 MB memory limit: the rows compress to a few
    MB of blocks, so a server that held the input (or a large part of it) would pass the bound below."""
    server = Server(str(tmp_path / "db"), "--memory-limit", str(256 << 20))
    try:
        with server.connect() as connection, connection.cursor() as cursor:
            cursor.execute("CREATE TABLE big (id BIGINT, tag VARCHAR, pad VARCHAR)")
            line = "\t".join(["7", "the same tag every time", "x" * 80]) + "\n"
            piece = (line * (1 << 20 // len(line) + 1)).encode()
            target = 600 << 20
            sent = 0
            with cursor.copy("COPY big FROM STDIN") as copy:
                while sent < target:
                    copy.write(piece)
                    sent += len(piece)
            rows = sent // len(line)
            assert cursor.rowcount == rows
            assert scalar(connection, "SELECT count(*) FROM big") == rows
        peak = server.peak_rss_bytes()
        print(f"streamed {sent >> 20} MiB; server peak RSS {peak >> 20} MiB")
        assert peak < sent // 3, f"peak RSS {peak >> 20} MiB for {sent >> 20} MiB streamed"
    finally:
        assert server.stop() == 0


# --- gRPC: the Python client's copy_in / copy_out, the shell's \copy over --connect ---

sys.path.insert(0, os.path.join(ROOT, "client", "python"))
import tessera_client  # noqa: E402


@pytest.fixture(scope="module")
def client(server):
    connection = tessera_client.connect(server.grpc_target, token=TOKEN)
    yield connection
    connection.close()


def test_grpc_copy_in_and_out(client, tmp_path):
    client.execute(f"CREATE TABLE grpc_io {COLUMNS}")
    text = "".join(f"{i}\tname {i}\t2020-02-{i % 28 + 1:02d}\t{i}.50\t{'t' if i % 2 else 'f'}\n" for i in range(30000))
    # From an iterator of small pieces (borders inside lines), then from a file object.
    pieces = (text[at:at + 999] for at in range(0, len(text), 999))
    result = client.copy_in("COPY grpc_io FROM STDIN", pieces)
    assert (result.status_message, result.rows_affected) == ("COPY 30000", 30000)
    path = tmp_path / "more.csv"
    path.write_text("id,s\n-1,\"a, b\"\n-2,\n")
    with open(path, "rb") as f:
        result = client.copy_in("COPY grpc_io (id, s) FROM STDIN (FORMAT csv, HEADER)", f, chunk_bytes=3)
    assert result.rows_affected == 2
    assert client.execute("SELECT count(*), sum(id) FROM grpc_io").rows == [(30002, sum(range(30000)) - 3)]
    out = client.copy_out("COPY (SELECT id, s FROM grpc_io WHERE id < 2 ORDER BY id) TO STDOUT (FORMAT csv)")
    assert out.data == b'-2,\n-1,"a, b"\n0,name 0\n1,name 1\n'
    assert out.status_message == "COPY 4"
    with open(tmp_path / "all.txt", "wb") as f:
        result = client.copy_out("COPY grpc_io TO STDOUT", f)
    assert result.rows_affected == 30002
    lines = (tmp_path / "all.txt").read_text().splitlines()
    assert len(lines) == 30002 and "0\tname 0\t2020-02-01\t0.50\tfalse" in lines and "-2\t\\N\t\\N\t\\N\t\\N" in lines


def test_grpc_bad_row_and_wrong_statements(client):
    client.execute("CREATE TABLE grpc_bad (id INTEGER)")
    client.execute("INSERT INTO grpc_bad VALUES (1)")

    def rows():  # pieces of 1000 lines
        for start in range(0, 200000, 1000):
            yield "".join(f"{'oops' if i == 150000 else i}\n" for i in range(start, start + 1000))

    with pytest.raises(tessera_client.TesseraError) as raised:
        client.copy_in("COPY grpc_bad FROM STDIN", rows())
    assert raised.value.code == tessera_client.grpc.StatusCode.INVALID_ARGUMENT
    assert "STDIN line 150001, column id: invalid input for INTEGER: 'oops'" in str(raised.value)
    assert client.execute("SELECT count(*) FROM grpc_bad").rows == [(1,)]
    # A COPY call runs its COPY and nothing else.
    for call, sql in ((client.copy_in, "DROP TABLE grpc_bad"), (client.copy_out, "COPY grpc_bad FROM STDIN"),
                      (client.copy_in, "COPY grpc_bad TO STDOUT")):
        with pytest.raises(tessera_client.TesseraError) as raised:
            call(sql, b"") if call == client.copy_in else call(sql)
        assert raised.value.code == tessera_client.grpc.StatusCode.INVALID_ARGUMENT
    assert client.execute("SELECT count(*) FROM grpc_bad").rows == [(1,)]
    # Execute has no stream for it.
    with pytest.raises(tessera_client.TesseraError) as raised:
        client.execute("COPY grpc_bad FROM STDIN")
    assert "needs a client that streams the data" in str(raised.value)


def test_grpc_cancelled_copy_commits_nothing(server, client):
    client.execute("CREATE TABLE grpc_cancel (id INTEGER)")
    other = tessera_client.connect(server.grpc_target, token=TOKEN)
    try:
        def rows():  # pieces of 1000 lines, endless until the cancel ends the call
            for start in range(0, 1 << 40, 1000):
                if start == 100000:
                    other.cancel(session_id=client.session_id)
                yield "".join(f"{i}\n" for i in range(start, start + 1000))

        with pytest.raises(tessera_client.TesseraError) as raised:
            client.copy_in("COPY grpc_cancel FROM STDIN", rows())
        assert raised.value.code == tessera_client.grpc.StatusCode.CANCELLED, raised.value
    finally:
        other.close()
    assert client.execute("SELECT count(*) FROM grpc_cancel").rows == [(0,)]


def test_shell_backslash_copy_over_connect(server, tmp_path):
    source = tmp_path / "local.tbl"
    source.write_text("".join(f"{i}|item {i}|\n" for i in range(1000)))
    script = (f"CREATE TABLE shell_copy (id INTEGER, name VARCHAR);\n"
              f"\\copy shell_copy FROM '{source}' (FORMAT tbl)\n"
              f"\\copy (SELECT * FROM shell_copy WHERE id < 3 ORDER BY id) TO '{tmp_path / 'out.csv'}' (FORMAT csv)\n"
              f"SELECT count(*) FROM shell_copy;\n"
              f"\\copy shell_copy FROM '{tmp_path / 'missing.csv'}'\n")
    env = dict(os.environ, TESSERA_TOKEN=TOKEN)
    run = subprocess.run([SHELL, "--connect", server.grpc_target, "--token", TOKEN, "--csv"],
                         input=script, capture_output=True, text=True, timeout=BOUND_S, env=env)
    assert "COPY 1000" in run.stdout and "COPY 3" in run.stdout, run.stdout + run.stderr
    assert (tmp_path / "out.csv").read_text() == "0,item 0\n1,item 1\n2,item 2\n"
    assert "cannot read" in run.stderr and "missing.csv" in run.stderr
    assert "1000" in run.stdout.splitlines()
