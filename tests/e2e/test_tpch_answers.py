"""All 22 TPC-H queries at scale factor 0.01 against the answers checked in under tests/data/tpch_sf0.01_answers
(computed by DuckDB on the same tpchgen-cli data; regenerate with make_tpch_answers.py).

Numbers match within a relative 1e-9, or 0.01 absolute when the reference prints at most two decimals (money).
Queries without ORDER BY compare as multisets.
"""
import csv
import io
import os
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESSERA = os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli", "tessera"))
ANSWERS = os.path.join(ROOT, "tests", "data", "tpch_sf0.01_answers")
QUERIES = os.path.join(ROOT, "benchmarks", "tpch", "queries")
TABLES = ["region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]


def tpch_tbl_dir():
    """The TPC-H SF 0.01 .tbl files, generated once into the test cache (also used by test_distributed.py)."""
    cache = os.environ.get("TESSERA_TEST_CACHE", os.path.join(tempfile.gettempdir(), "tessera-test-cache"))
    tbl_dir = os.path.join(cache, "tpch-sf0.01")
    if not os.path.exists(os.path.join(tbl_dir, ".complete")):
        os.makedirs(tbl_dir, exist_ok=True)
        subprocess.run(["tpchgen-cli", "tbl", "-s", "0.01", "-o", tbl_dir], check=True)
        open(os.path.join(tbl_dir, ".complete"), "w").close()
    return tbl_dir


@pytest.fixture(scope="module")
def database():
    tbl_dir = tpch_tbl_dir()
    data_dir = tempfile.mkdtemp(prefix="tessera-tpch-")
    schema = open(os.path.join(ROOT, "benchmarks", "tpch", "schema.sql")).read()
    args = [TESSERA, data_dir, "--no-sync", "-c", schema]
    for t in TABLES:
        args += ["-c", f"COPY {t} FROM '{tbl_dir}/{t}.tbl' (DELIMITER '|')"]
    subprocess.run(args, check=True, capture_output=True)
    yield data_dir
    shutil.rmtree(data_dir, ignore_errors=True)


def matches(actual, expected):
    if expected == "":
        return actual == ""
    try:
        e = float(expected)
        a = float(actual)
    except ValueError:
        return actual.rstrip() == expected.rstrip()
    decimals = len(expected.split(".")[1]) if "." in expected else 0
    tolerance = 0.01 if decimals <= 2 and "e" not in expected.lower() else 1e-9 * max(1.0, abs(e))
    return abs(a - e) <= max(tolerance, 1e-9 * abs(e))


@pytest.mark.parametrize("query", range(1, 23))
def test_query_matches_reference(database, query):
    sql_file = os.path.join(QUERIES, f"q{query:02d}.sql")
    result = subprocess.run([TESSERA, database, "--csv", "-f", sql_file], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    # A one-column NULL prints as an empty line, which csv reads as no fields.
    actual = [row if row else [""] for row in list(csv.reader(io.StringIO(result.stdout)))[1:]]
    assert_matches_reference(query, actual)


def assert_matches_reference(query, actual):
    """Checks TPC-H query `query`'s rows against the reference answer. `actual`: rows as lists of strings, as the
    shell prints them in CSV (NULL as ''). Also used by the server tests (test_server.py)."""
    sql_file = os.path.join(QUERIES, f"q{query:02d}.sql")
    with open(os.path.join(ANSWERS, f"q{query:02d}.csv")) as f:
        expected = [line.rstrip("\n").split("|") for line in f.readlines()[1:]]
    assert len(actual) == len(expected), f"{len(actual)} rows, expected {len(expected)}"
    if "order by" not in open(sql_file).read().lower():
        actual.sort()
        expected.sort()
    for i, (a_row, e_row) in enumerate(zip(actual, expected)):
        assert len(a_row) == len(e_row), f"row {i}: {a_row} vs {e_row}"
        for a, e in zip(a_row, e_row):
            assert matches(a, e), f"row {i}: {a_row} vs expected {e_row}"
