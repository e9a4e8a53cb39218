"""Checks the built-in SSB generator (benchmarks/ssb_generator) against the SSB benchmark material.

Runs `ssb-dbgen` (path from $SSB_DBGEN, default build/benchmarks/ssb_generator/ssb-dbgen) at SF1, loads the .tbl
files into DuckDB with the column names and types of ssb/schema.sql, and checks
  * the table cardinalities against ssb-dbgen's SF1 sizes,
  * the fraction of lineorder rows each of the 13 SSB queries' WHERE clause selects against the "ssb-dbgen SF1
    rows" column of benchmarks/README.md: within 15% for every query selecting at least 100 rows,
  * referential integrity and the column formulas (prices, dates, cities, brands),
and, at a small scale factor, that the output is a function of (scale factor, seed) only: the same bytes for any
thread count and any table subset, different bytes for another seed.

The benchmark material (schema.sql, queries/) is found through $SSB_BENCH_DIR, else ../shared/benchmarks/ssb next
to the repository, else /work/shared/benchmarks/ssb.

Run: SSB_DBGEN=build-ssb/benchmarks/ssb_generator/ssb-dbgen python3 -m pytest -s tests/ssb_generator
"""

import hashlib
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).resolve().parents[2]
DBGEN = Path(os.environ.get("SSB_DBGEN", REPO / "build" / "benchmarks" / "ssb_generator" / "ssb-dbgen"))

# benchmarks/README.md, "SSB selectivities": lineorder rows that pass each query's WHERE clause on the output of
# the public ssb-dbgen at SF1 (6,001,173 lineorder rows), and its table sizes.
README_SELECTED_ROWS = {
    "q1.1": 118_735,
    "q1.2": 4_251,
    "q1.3": 470,
    "q2.1": 46_026,
    "q2.2": 10_577,
    "q2.3": 1_143,
    "q3.1": 246_821,
    "q3.2": 8_606,
    "q3.3": 339,
    "q3.4": 5,
    "q4.1": 90_353,
    "q4.2": 21_803,
    "q4.3": 447,
}
README_SF1_ROWS = {"lineorder": 6_001_173, "customer": 30_000, "part": 200_000, "supplier": 2_000, "date": 2_557}
SELECTIVITY_TOLERANCE = 0.15
MIN_ROWS_FOR_TOLERANCE = 100
# lineorder has 1.5M orders of uniformly 1..7 lines: 6.0M rows with a standard deviation of about 2,450.
LINEORDER_TOLERANCE = 0.002

TABLES = ("lineorder", "customer", "supplier", "part", "date")


def _bench_dir():
    candidates = []
    if os.environ.get("SSB_BENCH_DIR"):
        candidates.append(Path(os.environ["SSB_BENCH_DIR"]))
    candidates += [REPO.parent / "shared" / "benchmarks" / "ssb", Path("/work/shared/benchmarks/ssb")]
    for c in candidates:
        if (c / "schema.sql").is_file() and (c / "queries").is_dir():
            return c
    pytest.fail(f"SSB benchmark material (schema.sql, queries/) not found; tried {candidates}; set SSB_BENCH_DIR")


def _parse_schema(schema_sql):
    """Returns {table: [(column, type), ...]} in column order."""
    tables = {}
    for name, body in re.findall(r"CREATE\s+TABLE\s+(\w+)\s*\((.*?)\)\s*;", schema_sql, re.S | re.I):
        columns = []
        for line in body.splitlines():
            m = re.match(r"\s*(\w+)\s+(\w+(?:\s*\(\s*\d+\s*\))?)", line)
            if m:
                columns.append((m.group(1), re.sub(r"\s+", "", m.group(2)).upper()))
        tables[name.lower()] = columns
    return tables


def _run_dbgen(sf, out_dir, seed=None, threads=None, tables=None):
    if not DBGEN.is_file():
        pytest.fail(f"ssb-dbgen not found at {DBGEN}; build it (ninja ssb-dbgen) or set SSB_DBGEN")
    cmd = [str(DBGEN), "--sf", str(sf), "--output", str(out_dir), "--quiet"]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    if tables is not None:
        cmd += ["--tables", ",".join(tables)]
    start = time.monotonic()
    subprocess.run(cmd, check=True)
    return time.monotonic() - start


def _digests(out_dir):
    result = {}
    for path in sorted(Path(out_dir).glob("*.tbl")):
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        result[path.name] = h.hexdigest()
    return result


# ---------------------------------------------------------------------------------------------------------------
# SF1 data set, loaded once.


@pytest.fixture(scope="module")
def bench_dir():
    return _bench_dir()


@pytest.fixture(scope="module")
def schema(bench_dir):
    return _parse_schema((bench_dir / "schema.sql").read_text())


@pytest.fixture(scope="module")
def sf1(tmp_path_factory, bench_dir, schema):
    out = tmp_path_factory.mktemp("ssb_sf1")
    seconds = _run_dbgen(1, out)
    print(f"\nssb-dbgen SF1 (default seed, all cores): {seconds:.2f} s")

    con = duckdb.connect()
    con.execute((bench_dir / "schema.sql").read_text())  # the exact DDL: types and NOT NULL are enforced on load
    for table in TABLES:
        columns = dict(schema[table])
        columns["trailing_empty"] = "VARCHAR"  # the empty field after each line's trailing '|'
        spec = "{" + ", ".join(f"'{c}': '{t}'" for c, t in columns.items()) + "}"
        path = out / f"{table}.tbl"
        con.execute(
            f"INSERT INTO {table} SELECT * EXCLUDE (trailing_empty) FROM read_csv('{path}', delim='|', "
            f"header=false, quote='', escape='', auto_detect=false, columns={spec})"
        )
    yield out, con
    con.close()
    shutil.rmtree(out, ignore_errors=True)  # 620 MB


def test_files_use_tbl_format(sf1, schema):
    out, _ = sf1
    for table in TABLES:
        with open(out / f"{table}.tbl", "rb") as f:
            head = [f.readline() for _ in range(3)]
            f.seek(-4096, os.SEEK_END)
            tail = f.read().split(b"\n")[-2]
        for line in head + [tail]:
            text = line.decode().rstrip("\n")
            assert text.endswith("|"), (table, text)
            assert text.count("|") == len(schema[table]), (table, text)


def test_cardinalities(sf1):
    _, con = sf1
    for table in ("customer", "part", "supplier", "date"):
        (rows,) = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        assert rows == README_SF1_ROWS[table], table
    rows, orders, max_line = con.execute(
        "SELECT count(*), count(DISTINCT lo_orderkey), max(lo_linenumber) FROM lineorder"
    ).fetchone()
    print(f"\nlineorder: {rows:,} rows (ssb-dbgen SF1: {README_SF1_ROWS['lineorder']:,}), {orders:,} orders")
    assert orders == 1_500_000
    assert max_line == 7
    assert abs(rows / README_SF1_ROWS["lineorder"] - 1) <= LINEORDER_TOLERANCE


def _selectivity_sql(query_sql):
    """SELECT count(*) over the query's FROM ... WHERE ..., without its GROUP BY / ORDER BY."""
    body = query_sql.strip().rstrip(";")
    body = re.split(r"\bGROUP\s+BY\b|\bORDER\s+BY\b", body, flags=re.I)[0]
    from_at = re.search(r"\bFROM\b", body, re.I).start()
    return "SELECT count(*) " + body[from_at:]


def test_query_selectivities(sf1, bench_dir):
    _, con = sf1
    (total,) = con.execute("SELECT count(*) FROM lineorder").fetchone()
    lines = [
        "",
        "| query | ssb-dbgen SF1 rows | ssb-dbgen fraction | generated rows | generated fraction | ratio |",
        "|---|---|---|---|---|---|",
    ]
    failures = []
    for name, expected in README_SELECTED_ROWS.items():
        sql = _selectivity_sql((bench_dir / "queries" / f"{name}.sql").read_text())
        (rows,) = con.execute(sql).fetchone()
        ratio = rows / expected
        lines.append(
            f"| {name.upper()} | {expected:,} | {expected / README_SF1_ROWS['lineorder']:.3g} | {rows:,} | "
            f"{rows / total:.3g} | {ratio:.3f} |"
        )
        if expected >= MIN_ROWS_FOR_TOLERANCE and abs(ratio - 1) > SELECTIVITY_TOLERANCE:
            failures.append(f"{name}: {rows:,} rows vs ssb-dbgen {expected:,} (ratio {ratio:.3f})")
        if expected < MIN_ROWS_FOR_TOLERANCE:
            assert rows < 20 * MIN_ROWS_FOR_TOLERANCE, name  # same order of magnitude at least
    print("\n".join(lines))
    assert not failures, failures


def test_referential_integrity(sf1):
    _, con = sf1
    checks = {
        "custkey": "SELECT count(*) FROM lineorder ANTI JOIN customer ON lo_custkey = c_custkey",
        "partkey": "SELECT count(*) FROM lineorder ANTI JOIN part ON lo_partkey = p_partkey",
        "suppkey": "SELECT count(*) FROM lineorder ANTI JOIN supplier ON lo_suppkey = s_suppkey",
        "orderdate": "SELECT count(*) FROM lineorder ANTI JOIN date ON lo_orderdate = d_datekey",
        "commitdate": "SELECT count(*) FROM lineorder ANTI JOIN date ON lo_commitdate = d_datekey",
    }
    for what, sql in checks.items():
        assert con.execute(sql).fetchone()[0] == 0, what


def test_lineorder_columns(sf1):
    _, con = sf1
    row = con.execute(
        """
        SELECT min(lo_orderdate), max(lo_orderdate), min(lo_quantity), max(lo_quantity),
               min(lo_discount), max(lo_discount), min(lo_tax), max(lo_tax),
               count(DISTINCT lo_orderpriority), count(DISTINCT lo_shipmode), count(DISTINCT lo_shippriority)
        FROM lineorder
        """
    ).fetchone()
    assert row == (19920101, 19980802, 1, 50, 0, 10, 0, 8, 5, 7, 1)
    bad = con.execute(
        """
        WITH l AS (
          SELECT *, 90000 + (lo_partkey // 10) % 20001 + (lo_partkey % 1000) * 100 AS price,
                 strptime(lo_commitdate::VARCHAR, '%Y%m%d') - strptime(lo_orderdate::VARCHAR, '%Y%m%d') AS delay
          FROM lineorder)
        SELECT count_if(lo_extendedprice <> price * lo_quantity),
               count_if(lo_revenue <> lo_extendedprice * (100 - lo_discount) // 100),
               count_if(lo_supplycost <> 6 * price // 10),
               count_if(delay < INTERVAL 30 DAY OR delay > INTERVAL 90 DAY),
               count_if(lo_custkey % 3 = 0)  -- dbgen: every third customer places no orders
        FROM l
        """
    ).fetchone()
    assert bad == (0, 0, 0, 0, 0)
    (bad_totals,) = con.execute(
        """
        SELECT count(*) FROM (
          SELECT lo_orderkey, any_value(lo_ordertotalprice) AS total, count(DISTINCT lo_ordertotalprice) AS n,
                 sum(lo_revenue * (100 + lo_tax) // 100) AS computed
          FROM lineorder GROUP BY lo_orderkey)
        WHERE n <> 1 OR total <> computed
        """
    ).fetchone()
    assert bad_totals == 0


def test_dimension_columns(sf1):
    _, con = sf1
    for table, p in (("customer", "c"), ("supplier", "s")):
        row = con.execute(
            f"""
            SELECT count(DISTINCT {p}_nation), count(DISTINCT {p}_region), count(DISTINCT {p}_city),
                   count_if({p}_city <> rpad(left({p}_nation, 9), 9, ' ') || right({p}_city, 1)),
                   count_if(NOT regexp_full_match({p}_phone, '\\d\\d-\\d{{3}}-\\d{{3}}-\\d{{4}}')),
                   max(length({p}_address)) <= 25
            FROM {table}
            """
        ).fetchone()
        nations, regions, cities, bad_cities, bad_phones, short_addresses = row
        assert (nations, regions, bad_cities, bad_phones, short_addresses) == (25, 5, 0, 0, True), table
        assert 240 <= cities <= 250, table  # 25 nations x 10 digits; 2,000 suppliers may miss one
    (segments,) = con.execute("SELECT count(DISTINCT c_mktsegment) FROM customer").fetchone()
    assert segments == 5
    row = con.execute(
        """
        SELECT count(DISTINCT p_mfgr), count(DISTINCT p_category), count(DISTINCT p_brand1),
               count(DISTINCT p_color), count(DISTINCT p_type), count(DISTINCT p_container),
               min(p_size), max(p_size),
               count_if(NOT starts_with(p_category, p_mfgr) OR NOT starts_with(p_brand1, p_category)),
               max(length(p_name)) <= 22
        FROM part
        """
    ).fetchone()
    assert row == (5, 25, 1000, 92, 150, 40, 1, 50, 0, True)
    row = con.execute(
        """
        SELECT min(d_datekey), max(d_datekey),
               count_if(d_datekey <> d_year * 10000 + d_monthnuminyear * 100 + d_daynuminmonth),
               count_if(d_yearmonthnum <> d_year * 100 + d_monthnuminyear),
               count_if(d_yearmonth <> left(d_month, 3) || d_year::VARCHAR),
               count_if(d_date <> d_month || ' ' || d_daynuminmonth::VARCHAR || ', ' || d_year::VARCHAR),
               count_if(d_dayofweek <> dayname(strptime(d_datekey::VARCHAR, '%Y%m%d'))),
               count_if(d_daynuminweek <> dayofweek(strptime(d_datekey::VARCHAR, '%Y%m%d')) + 1),
               count_if(d_daynuminyear <> dayofyear(strptime(d_datekey::VARCHAR, '%Y%m%d'))),
               count(DISTINCT d_sellingseason), sum(d_lastdayinmonthfl::INTEGER), sum(d_holidayfl::INTEGER)
        FROM date
        """
    ).fetchone()
    assert row == (19920101, 19981231, 0, 0, 0, 0, 0, 0, 0, 5, 84, 70)


# ---------------------------------------------------------------------------------------------------------------
# Determinism at a small scale factor (several chunks per table: 15 lineorder chunks, 2 part chunks).


def test_deterministic_for_seed_and_thread_count(tmp_path):
    sf = 0.1
    _run_dbgen(sf, tmp_path / "t1", seed=7, threads=1)
    _run_dbgen(sf, tmp_path / "t4", seed=7, threads=4)
    _run_dbgen(sf, tmp_path / "t3", seed=7, threads=3)
    _run_dbgen(sf, tmp_path / "other_seed", seed=8, threads=4)
    _run_dbgen(sf, tmp_path / "subset", seed=7, threads=2, tables=["part", "lineorder"])
    reference = _digests(tmp_path / "t1")
    assert sorted(reference) == sorted(f"{t}.tbl" for t in TABLES)
    assert _digests(tmp_path / "t4") == reference
    assert _digests(tmp_path / "t3") == reference
    subset = _digests(tmp_path / "subset")
    assert subset == {k: reference[k] for k in ("part.tbl", "lineorder.tbl")}
    other = _digests(tmp_path / "other_seed")
    for table in ("lineorder", "customer", "supplier", "part"):
        assert other[f"{table}.tbl"] != reference[f"{table}.tbl"], table
    assert other["date.tbl"] == reference["date.tbl"]  # the calendar has no randomness
    for run in tmp_path.iterdir():
        shutil.rmtree(run)  # about 60 MB per run; kept when an assertion fails


def test_default_seed_is_stable(tmp_path):
    _run_dbgen(0.01, tmp_path / "a")
    _run_dbgen(0.01, tmp_path / "b", seed=42, threads=2)
    assert _digests(tmp_path / "a") == _digests(tmp_path / "b")


def test_small_scale_factor_lines(tmp_path, schema):
    _run_dbgen(0.01, tmp_path)
    expected_rows = {"customer": 300, "supplier": 20, "part": 2_000, "date": 2_557}
    for table in TABLES:
        lines = (tmp_path / f"{table}.tbl").read_text().split("\n")
        assert lines[-1] == ""
        lines = lines[:-1]
        if table in expected_rows:
            assert len(lines) == expected_rows[table], table
        else:
            assert len({line.split("|", 1)[0] for line in lines}) == 15_000
        bad = [l for l in lines if not l.endswith("|") or l.count("|") != len(schema[table])]
        assert not bad, (table, bad[:3])


def test_rejects_bad_arguments(tmp_path):
    for args in (["--sf", "0"], ["--sf", "abc"], ["--sf", "1", "--tables", "nation"], ["--output", str(tmp_path)]):
        result = subprocess.run([str(DBGEN), *args, "--output", str(tmp_path)], capture_output=True)
        assert result.returncode == 2, args
