"""Tests of benchmarks/pipelining/pipelining_study.py: parsing EXPLAIN ANALYZE output (operators, their inputs and
work orders, the memory line), the run order, the summary and table, and a small end-to-end run_query against a
temporary data directory (needs the shell $TESSERA_BIN, skipped without it; no benchmark data).

    python3 -m pytest tests/benchmark_pipelining -q
"""
import os
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "pipelining"))

import pipelining_study  # noqa: E402
from pipelining_study import QueryResult, parse_explain_analyze  # noqa: E402

TESSERA = os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli", "tessera"))

# TPC-H Q3 at SF1 with pipelining on, as the shell prints it with --csv (rows quoted when they hold a comma).
Q3_ON = """== logical plan ==
Limit 10
  Sort [revenue DESC, o_orderdate ASC]
          Join SEMI exact filter [1, 150000] (from inner join) keys=[o_custkey = c_custkey]
== operator DAG ==
"#0 ExactFilterBuild (exact filter [1, 150000], scan customer, filter); est. 30000 rows, 18.3 KiB"
"    actual: work orders 14, rows in 150000, rows out 30142, busy 71.791 ms"
"#1 Select (scan orders, filter, 1 runtime filters) <- #0 blocking; est. 221279 rows, 4.0 MiB"
"    actual: work orders 96, rows in 1500000, rows out 147126, busy 259.938 ms"
"#2 Select <- #1 pipelining; est. 221279 rows, 4.0 MiB"
"    actual: work orders 96, rows in 147126, rows out 147126, busy 2.290 ms"
"#3 HashJoinBuild (1 key) <- #2 pipelining; est. 221279 rows, 6.8 MiB"
"    actual: work orders 97, rows in 0, rows out 0, busy 28.968 ms; hash buckets"
"#4 HashJoinProbe (INNER, scan lineitem, filter, 1 runtime filters) <- #3 blocking, #1 pipelining; est. 468865 rows"
"    actual: work orders 385, rows in 6001215, rows out 30519, busy 2181.331 ms; direct look-ups in 0 of 1 join"
"#5 TopK (2 keys, limit 10) <- #4 blocking; est. 10 rows, 7.2 MiB; result"
"    actual: work orders 2, rows in 11620, rows out 10, busy 0.090 ms"
"memory estimate: min 76.5 MiB, max 114.5 MiB; actual peak 13.8 MiB"
== timing ==
bind: 0.074 ms
operator DAG: 0.360 ms
execution: 1356.195 ms
"""


def rows_of(text):
    """The single-column rows the shell's CSV output gives (quotes stripped as the CSV reader would)."""
    return [line[1:-1] if line.startswith('"') else line for line in text.splitlines()]


def test_parse_explain_analyze():
    analysis = parse_explain_analyze(rows_of(Q3_ON))
    assert [op.name for op in analysis.operators] == [
        "ExactFilterBuild", "Select", "Select", "HashJoinBuild", "HashJoinProbe", "TopK"]
    assert [op.work_orders for op in analysis.operators] == [14, 96, 96, 97, 385, 2]
    assert analysis.work_orders == 690
    assert analysis.operators[0].inputs == []
    assert analysis.operators[4].inputs == [(3, "blocking"), (1, "pipelining")]
    assert analysis.edges("pipelining") == 3 and analysis.edges("blocking") == 3
    assert analysis.estimate_min_bytes == round(76.5 * 2 ** 20)
    assert analysis.estimate_max_bytes == round(114.5 * 2 ** 20)
    assert analysis.peak_bytes == round(13.8 * 2 ** 20)
    assert analysis.execution_ms == 1356.195


def test_parse_bytes_units():
    assert pipelining_study.parse_bytes("82", "B") == 82
    assert pipelining_study.parse_bytes("27.2", "KiB") == round(27.2 * 1024)
    assert pipelining_study.parse_bytes("1.5", "GiB") == 3 * 2 ** 29


def test_parse_explain_analyze_errors():
    with pytest.raises(ValueError, match="no operator DAG"):
        parse_explain_analyze(["== logical plan ==", "Limit 10"])
    without_memory = [line for line in rows_of(Q3_ON) if not line.startswith("memory estimate")]
    with pytest.raises(ValueError, match="actual peak"):
        parse_explain_analyze(without_memory)
    # Plain EXPLAIN (no ANALYZE) has no actual lines.
    without_actual = [line for line in rows_of(Q3_ON) if "actual: work orders" not in line]
    with pytest.raises(ValueError, match="no 'actual: work orders' for operator #0"):
        parse_explain_analyze(without_actual)


def test_schedule_interleaves_and_alternates():
    order = pipelining_study.schedule(3)
    assert order[:2] == [("on", False), ("off", False)]
    assert [mode for mode, timed in order if timed] == ["on", "off", "off", "on", "on", "off"]
    assert pipelining_study.rounds(2) == ["on", "off", "off", "on"]
    assert pipelining_study.median_int([5, 1, 9, 3]) == 3 and pipelining_study.median_int([]) is None


def result(query, on_ms, off_ms, peak_on, peak_off, error=None):
    return QueryResult("tpch", query, {"on": [on_ms], "off": [off_ms]}, {"on": on_ms, "off": off_ms},
                       {"on": peak_on, "off": peak_off}, {"on": [peak_on], "off": [peak_off]}, {"on": 0, "off": 0},
                       {"on": 10, "off": 10},
                       {"on": 2, "off": 0}, {"on": 1, "off": 3}, rows=1, error=error)


def test_summary_and_table():
    results = [result("Q01", 100.0, 200.0, 2 ** 20, 4 * 2 ** 20), result("Q02", 50.0, 50.0, 2 ** 20, 2 ** 20),
               result("Q03", 1.0, 1.0, 1, 1, error="timeout after 1 s")]
    summary = pipelining_study.summarize(results)
    assert summary["failed"] == 1 and summary["queries"] == 3
    assert summary["time_ms_on"] == 150.0 and summary["time_ms_off"] == 250.0
    assert summary["time_ratio_on_off"] == pytest.approx(0.6)
    assert summary["peak_ratio_on_off"] == pytest.approx(0.4)
    assert summary["time_ratio_geomean"] == pytest.approx(0.5 ** 0.5)
    assert summary["work_orders_ratio_on_off"] == 1.0
    table = pipelining_study.format_table("title", results, summary)
    assert "Q01        100.0     200.0    0.50       1.0       4.0    0.25" in table
    assert "timeout after 1 s" in table and "1 failed" in table


def test_run_query_end_to_end():
    if not os.access(TESSERA, os.X_OK):
        pytest.skip(f"{TESSERA} not built")
    with tempfile.TemporaryDirectory() as data_dir:
        setup = subprocess.run(
            [TESSERA, data_dir, "-c", "CREATE TABLE t (a INT, b INT)", "-c", "CREATE TABLE u (b INT, c VARCHAR)",
             "-c", "INSERT INTO t VALUES " + ", ".join(f"({x % 97}, {x % 7})" for x in range(5000)),
             "-c", "INSERT INTO u VALUES (0, 'zero'), (1, 'one'), (2, 'two'), (3, 'three')"],
            capture_output=True, text=True, timeout=120)
        assert setup.returncode == 0, setup.stdout + setup.stderr
        sql = "SELECT u.c, count(*), sum(t.a) FROM t JOIN u ON t.b = u.b WHERE t.a < 50 GROUP BY u.c ORDER BY 1;"
        r = pipelining_study.run_query(TESSERA, data_dir, 2, 2, "test", "Q1", sql, 120, analyze_runs=2)
    assert r.error is None, r.error
    assert r.rows == 4
    assert len(r.times_ms["on"]) == 2 and len(r.times_ms["off"]) == 2
    assert r.work_orders["on"] > 0 and r.work_orders["off"] > 0
    assert r.blocking_edges["off"] > 0 and r.pipelining_edges["off"] == 0
    assert r.peak_bytes["on"] > 0 and r.peak_bytes["off"] > 0
    assert len(r.peak_bytes_runs["on"]) == 2 and r.peak_bytes["on"] in r.peak_bytes_runs["on"]


def test_three_modes_rotate_and_divide_by_the_baseline():
    modes = ("eager", "lazy", "elastic")
    assert pipelining_study.rounds(3, modes) == ["eager", "lazy", "elastic", "lazy", "elastic", "eager",
                                                 "elastic", "eager", "lazy"]
    assert pipelining_study.schedule(1, modes)[:3] == [("eager", False), ("lazy", False), ("elastic", False)]
    r = QueryResult("tpch", "Q01", {m: [t] for m, t in zip(modes, (100.0, 200.0, 80.0))},
                    {"eager": 100.0, "lazy": 200.0, "elastic": 80.0},
                    {"eager": 4 * 2 ** 20, "lazy": 8 * 2 ** 20, "elastic": 2 * 2 ** 20},
                    {m: [] for m in modes}, {m: 0 for m in modes}, {m: 10 for m in modes},
                    {"eager": 2, "lazy": 0, "elastic": 2}, {"eager": 1, "lazy": 3, "elastic": 1}, rows=1)
    summary = pipelining_study.summarize([r], modes, "eager")
    assert summary["time_ratio_elastic_eager"] == pytest.approx(0.8)
    assert summary["peak_ratio_lazy_eager"] == pytest.approx(2.0)
    assert summary["time_ratio_geomean_elastic"] == pytest.approx(0.8)
    table = pipelining_study.format_table("title", [r], summary)
    assert "lazy/eager" in table and "elastic/eager" in table and "peak elastic" in table
    assert "Q01        100.0     200.0      80.0    2.00    0.80       4.0       8.0       2.0    2.00    0.50" in table
