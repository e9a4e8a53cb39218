"""End-to-end: TPC-H loads through the tessera binary with exact row counts and statistics (checked against
DuckDB on the same files), survives restarts, reproduces the files with COPY TO, and an interrupted COPY leaves
the table as it was.

Environment: TESSERA_BIN (the shell binary), TESSERA_TPCH_SF (default 0.01), TESSERA_TEST_CACHE (data cache).
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import duckdb
import pytest

TABLES = ["region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESSERA = os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli", "tessera"))
SF = os.environ.get("TESSERA_TPCH_SF", "0.01")
SCHEMA = open(os.path.join(ROOT, "benchmarks", "tpch", "schema.sql")).read()


def tessera(data_dir, *statements, check=True):
    args = [TESSERA, data_dir, "--csv", "--no-sync"]
    for statement in statements:
        args += ["-c", statement]
    result = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if check and result.returncode != 0:
        raise AssertionError(f"tessera failed: {result.stderr}")
    return result


@pytest.fixture(scope="module")
def tbl_dir():
    cache = os.environ.get("TESSERA_TEST_CACHE", os.path.join(tempfile.gettempdir(), "tessera-test-cache"))
    directory = os.path.join(cache, f"tpch-sf{SF}")
    if not os.path.exists(os.path.join(directory, ".complete")):
        os.makedirs(directory, exist_ok=True)
        subprocess.run(["tpchgen-cli", "tbl", "-s", SF, "-o", directory], check=True)
        open(os.path.join(directory, ".complete"), "w").close()
    return directory


@pytest.fixture(scope="module")
def loaded(tbl_dir):
    data_dir = tempfile.mkdtemp(prefix="tessera-e2e-")
    tessera(data_dir, SCHEMA)
    tessera(data_dir, *[f"COPY {t} FROM '{tbl_dir}/{t}.tbl' (DELIMITER '|')" for t in TABLES])
    yield data_dir
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def reference(tbl_dir):
    con = duckdb.connect()
    con.execute(SCHEMA)
    for t in TABLES:
        con.execute(f"COPY {t} FROM '{tbl_dir}/{t}.tbl' (DELIMITER '|', HEADER false)")
    return con


def csv_rows(output):
    lines = output.strip().splitlines()
    return [line.split(",") for line in lines[1:]]


def test_row_counts_match_duckdb_after_restart(loaded, reference):
    # Every tessera invocation opens the data directory afresh: this is a restart.
    rows = {r[0]: int(r[2]) for r in csv_rows(tessera(loaded, "SHOW TABLES").stdout)}
    for t in TABLES:
        assert rows[t] == reference.execute(f"SELECT count(*) FROM {t}").fetchone()[0], t
        assert int(csv_rows(tessera(loaded, f"SELECT count(*) FROM {t}").stdout)[0][0]) == rows[t]


def normalize(value):
    text = str(value)
    return text.rstrip()


def test_min_max_and_null_statistics_match_duckdb(loaded, reference):
    out = tessera(loaded, "SHOW STATS").stdout
    import csv
    import io

    stats = list(csv.reader(io.StringIO(out)))[1:]
    assert len(stats) == sum(len(reference.execute(f"DESCRIBE {t}").fetchall()) for t in TABLES)
    for table, column, row_count, null_count, distinct, minimum, maximum, encoding, stored, plain, stale in stats:
        assert stale == "0"  # nothing deleted
        lo, hi, nulls, exact_distinct = reference.execute(
            f"SELECT min({column})::VARCHAR, max({column})::VARCHAR, count(*) - count({column}), "
            f"count(DISTINCT {column}) FROM {table}").fetchone()
        assert (table, column, minimum) == (table, column, lo)
        assert (table, column, maximum) == (table, column, hi)
        assert int(null_count) == nulls
        # HyperLogLog with 2048 registers: within 10% (or 3 for tiny domains).
        assert abs(int(distinct) - exact_distinct) <= max(3, 0.1 * exact_distinct), (table, column)
        # An encoding is chosen only where it is smaller than plain.
        assert 0 < int(stored) <= int(plain), (table, column, encoding)


def test_copy_to_reproduces_the_loaded_files(loaded, tbl_dir, tmp_path):
    for t in ["nation", "orders", "lineitem"]:
        out = tmp_path / f"{t}.tbl"
        tessera(loaded, f"COPY {t} TO '{out}' (DELIMITER '|', FORMAT tbl)")
        # Same values in the same order; dbgen writes whole quantities as "17" where DECIMAL(15,2) prints
        # "17.00", so numbers compare by value and everything else byte for byte.
        exported = open(out).read().splitlines()
        original = open(f"{tbl_dir}/{t}.tbl").read().splitlines()
        assert len(exported) == len(original), t
        for line_a, line_b in zip(exported, original):
            if line_a == line_b:
                continue
            for a, b in zip(line_a.split("|"), line_b.split("|"), strict=True):
                assert a == b or float(a) == float(b), (t, line_a, line_b)


def test_bad_line_fails_the_whole_copy_and_loses_nothing(loaded, tbl_dir, tmp_path):
    before = csv_rows(tessera(loaded, "SELECT count(*) FROM orders").stdout)[0][0]
    lines = open(f"{tbl_dir}/orders.tbl").read().splitlines(keepends=True)
    fields = lines[500].split("|")
    fields[3] = "12x.50"
    lines[500] = "|".join(fields)
    bad = tmp_path / "orders_bad.tbl"
    bad.write_text("".join(lines))
    result = tessera(loaded, f"COPY orders FROM '{bad}' (DELIMITER '|')", check=False)
    assert result.returncode != 0
    assert f"line 501, column o_totalprice: invalid input for DECIMAL(15,2): '12x.50'" in result.stderr
    assert csv_rows(tessera(loaded, "SELECT count(*) FROM orders").stdout)[0][0] == before


def test_killed_copy_leaves_the_table_as_it_was(tbl_dir, tmp_path):
    data_dir = str(tmp_path / "db")
    tessera(data_dir, SCHEMA)
    # A big enough file that the load is still running when it is killed.
    big = tmp_path / "lineitem_big.tbl"
    with open(big, "wb") as out:
        chunk = open(f"{tbl_dir}/lineitem.tbl", "rb").read()
        for _ in range(max(1, int(20 / (float(SF) * 100)))):
            out.write(chunk)
    for delay in [0.05, 0.2]:
        process = subprocess.Popen([TESSERA, data_dir, "-c", f"COPY lineitem FROM '{big}' (DELIMITER '|')"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        count = int(csv_rows(tessera(data_dir, "SELECT count(*) FROM lineitem").stdout)[0][0])
        lines = sum(1 for _ in open(big, "rb"))
        # All or nothing: whole copies of the file only, and exactly one segment file per committed load
        # (the killed load's half-written file is removed when the directory is opened).
        assert count % lines == 0
        segments = os.listdir(os.path.join(data_dir, "segments"))
        assert len(segments) == count // lines


def test_tables_larger_than_the_memory_budget_are_evicted_and_reloaded(loaded, tmp_path):
    # lineitem at SF 0.01 takes several (compressed) blocks; a budget of half its resident size holds only some of
    # them at once, so reading the table evicts blocks (LRU-2) and reads them back from their segment files
    # transparently.
    def memory_of(out):
        return dict(line.split(",") for line in out.splitlines() if line.count(",") == 1 and not line.startswith("kind"))

    full = tmp_path / "full.tbl"
    out = tessera(loaded, f"COPY lineitem TO '{full}' (FORMAT tbl)", "SHOW MEMORY").stdout
    budget = int(memory_of(out)["base blocks"]) // 2
    assert budget > 0
    limited = tmp_path / "limited.tbl"
    args = [TESSERA, loaded, "--csv", "--memory-limit", str(budget),
            "-c", f"COPY lineitem TO '{limited}' (FORMAT tbl)", "-c", "SHOW MEMORY"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    memory = memory_of(out)
    assert int(memory["evictions"]) > 0
    assert int(memory["total used"]) <= budget
    assert open(full, "rb").read() == open(limited, "rb").read()
