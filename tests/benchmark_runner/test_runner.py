"""Tests of tessera-bench (benchmarks/runner/).

Most tests need neither the engine nor data: output parsing, answer comparison, SQL lexing, the TPC-H stream order
table, statistics, reports and the SVG chart, and failure reporting (through a fake tessera script). The end-to-end
tests run the real build/cli/tessera ($TESSERA_BIN) at SF 0.01 and are skipped when it or the generators are missing.

    python3 -m pytest tests/benchmark_runner -q
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(ROOT, "benchmarks", "runner")
sys.path.insert(0, RUNNER)

import bench_data  # noqa: E402
import bench_engines  # noqa: E402
import bench_report  # noqa: E402
import bench_results  # noqa: E402
import bench_streams  # noqa: E402
import bench_tpcds  # noqa: E402
import tessera_bench  # noqa: E402

TESSERA = os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli", "tessera"))
SERVER = os.environ.get("TESSERA_SERVER_BIN", os.path.join(ROOT, "build", "server", "tessera-server"))
TPCH_QUERIES = os.path.join(ROOT, "benchmarks", "tpch", "queries")

# TPC-H Q1 at SF1, from ../shared/benchmarks/tpch/answers-sf1/q01.csv (exact, DuckDB 2.0.0).
Q1_HEADER = ["l_returnflag", "l_linestatus", "sum_qty", "sum_base_price", "sum_disc_price", "sum_charge", "avg_qty",
             "avg_price", "avg_disc", "count_order"]
Q1_ROWS = [
    "A|F|37734107.00|56586554400.73|53758257134.8700|55909065222.827692|25.522005853257337|38273.129734621674|"
    "0.049985295838397614|1478493",
    "N|F|991417.00|1487504710.38|1413082168.0541|1469649223.194375|25.516471920522985|38284.4677608483|"
    "0.0500934266742163|38854",
    "N|O|74476040.00|111701729697.74|106118230307.6056|110367043872.497010|25.50222676958499|38249.11798890827|"
    "0.049996586053704085|2920374",
    "R|F|37719753.00|56568041380.90|53741292684.6040|55889619119.831932|25.50579361269077|38250.85462609966|"
    "0.05000940583012706|1478870",
]
Q1 = [row.split("|") for row in Q1_ROWS]
# TPC-H Q2 at SF1, first rows (CHAR(25) s_name, with a comma inside s_address).
Q2_ROWS = [
    ["9938.53", "Supplier#000005359", "UNITED KINGDOM", "185358", "Manufacturer#4", "QKuHYh,vZGiwu2FWEJoLDx04",
     "33-429-790-6131", "uriously regular requests hag"],
    ["9937.84", "Supplier#000005969", "ROMANIA", "108438", "Manufacturer#1", "ANDENSOSmk,miq23Xfb5RWt6dvUcvt6Qa",
     "29-520-692-3537", "efully express instructions. regular requests against the slyly fin"],
]


# ---------------------------------------------------------------------------------------------------------------
# parsing tessera's CSV output


def test_parse_output_with_quotes_and_time_lines():
    text = textwrap.dedent('''\
        CREATE TABLE
        Time: 30.7219 ms
        s_name,s_address,note
        Supplier#000005359,"QKuHYh,vZGiwu2FWEJoLDx04","he said ""hi"""
        Supplier#2,"two
        lines",
        Time: 1.5e+03 ms
        ''')
    statements = bench_results.parse_tessera_output(text)
    assert len(statements) == 2
    assert statements[0].header == ["CREATE TABLE"] and statements[0].rows == []
    assert statements[0].time_ms == pytest.approx(30.7219)
    assert statements[1].header == ["s_name", "s_address", "note"]
    assert statements[1].rows == [["Supplier#000005359", "QKuHYh,vZGiwu2FWEJoLDx04", 'he said "hi"'],
                                  ["Supplier#2", "two\nlines", ""]]
    assert statements[1].time_ms == 1500.0


def test_parse_output_null_row_and_truncated_output():
    # A one-column NULL prints as an empty line; output that ends without a Time line is an unfinished statement.
    text = "x\n\n7\nTime: 2 ms\nrevenue\n12\n"
    statements = bench_results.parse_tessera_output(text)
    assert statements[0].rows == [[""], ["7"]]
    assert statements[1].time_ms is None and statements[1].rows == [["12"]]
    assert bench_results.parse_tessera_output("") == []


def test_collect_runs_sums_statements_and_skips_warmup():
    text = "a\n1\nTime: 10 ms\n" + "".join(f"a\n1\nTime: {ms} ms\n" for ms in (3, 4, 5))
    run = bench_engines.QueryRun()
    bench_engines.collect_runs(bench_results.parse_tessera_output(text), 1, 3, run)
    assert run.warmup_ms == 10 and run.times_ms == [3, 4, 5] and run.median_ms == 4
    run = bench_engines.QueryRun()
    two_statements = "".join(f"CREATE VIEW\nTime: 1 ms\na\n{i}\nTime: {ms} ms\n" for i, ms in enumerate((9, 2, 4)))
    bench_engines.collect_runs(bench_results.parse_tessera_output(two_statements), 2, 2, run)
    assert run.warmup_ms == 10 and run.times_ms == [3, 5] and run.rows == [["2"]]


# ---------------------------------------------------------------------------------------------------------------
# answer comparison


def test_values_equal_tolerances():
    eq = bench_results.values_equal
    assert eq("53758257134.8700", "53758257134.87")
    assert eq("25.522005853257337", "25.522005853257337")
    assert eq("25.52200585325734", "25.522005853257337")  # relative 1e-9
    assert not eq("25.5220058", "25.522005853257337")
    assert eq("56586554400.734", "56586554400.73")  # the reference prints 2 decimals: 0.01 absolute
    assert eq("9938.525", "9938.53")
    assert not eq("9938.50", "9938.53")
    assert eq("0.05", "0.049985295838397614") is False  # full-precision reference: relative only
    assert eq("Supplier#000005359       ", "Supplier#000005359")  # CHAR(25) padding
    assert not eq("UNITED KINGDOM", "UNITED STATES")
    assert eq("", "") and not eq("", "0")
    assert eq("1995-03-15", "1995-03-15") and not eq("1995-03-15", "1995-03-16")
    assert eq("true", "t") and not eq("true", "false")


def test_compare_q1_rows_from_answers_sf1():
    order_keys = [("l_returnflag", False), ("l_linestatus", False)]
    assert bench_results.compare_results(Q1, Q1, order_keys, Q1_HEADER) is None
    # Money rounded to cents, as the TPC's own answer set prints it, still matches.
    rounded = [row[:3] + [f"{float(row[3]):.2f}"] + row[4:] for row in Q1]
    assert bench_results.compare_results(rounded, Q1, order_keys, Q1_HEADER) is None
    off = [row[:] for row in Q1]
    off[2][9] = "2920375"
    difference = bench_results.compare_results(off, Q1, order_keys, Q1_HEADER)
    assert difference and "row 3" in difference and "2920375" in difference
    # ORDER BY l_returnflag, l_linestatus: swapping rows is wrong.
    swapped = [Q1[1], Q1[0]] + Q1[2:]
    assert "out of order" in bench_results.compare_results(swapped, Q1, order_keys, Q1_HEADER)
    # Without ORDER BY the rows are a multiset.
    assert bench_results.compare_results(swapped, Q1) is None
    assert bench_results.compare_results(Q1[:3], Q1) == "3 rows, expected 4"
    assert "columns" in bench_results.compare_results([r[:9] for r in Q1], Q1)


def test_order_by_an_aliased_expression_maps_to_its_output_column():
    # TPC-DS Q71: ORDER BY i_brand_id, output column brand_id; rows tied on the keys differ in t_minute.
    sql = "SELECT i_brand_id brand_id, t_hour, t_minute, sum(p) AS ext_price FROM t GROUP BY 1, 2, 3 " \
          "ORDER BY ext_price DESC, i_brand_id, t_hour"
    keys = bench_results.order_by_keys(sql)
    assert keys == [("ext_price", True), ("brand_id", False), ("t_hour", False)]
    header = ["brand_id", "t_hour", "t_minute", "ext_price"]
    expected = [["7", "17", "21", "0.00"], ["7", "17", "18", "0.00"]]
    assert bench_results.compare_results(expected[::-1], expected, keys, header) is None
    assert "out of order" in bench_results.compare_results(expected[::-1], expected, [("t_minute", True)], header)
    # NULLS FIRST under DESC (ext_price NULL): ties after the NULL rows may still come in any order.
    with_null = [["7", "9", "38", ""], ["7", "9", "8", ""], ["7", "17", "21", "5.00"], ["7", "17", "18", "5.00"]]
    swapped = [with_null[1], with_null[0], with_null[3], with_null[2]]
    assert bench_results.compare_results(swapped, with_null, keys, header) is None
    # Values a cent apart are ordered, not tied: a later key need not be sorted across them.
    near = [["10009015", "9", "53", "8149.68"], ["7001005", "19", "48", "8149.67"]]
    assert bench_results.compare_results(near, near, keys, header) is None
    assert bench_results.is_sorted(near, bench_results._key_columns(keys, header))
    # An output name wins over an expression of the same spelling.
    assert bench_results.order_by_keys("SELECT a AS b, b AS a FROM t ORDER BY a") == [("a", False)]


def test_compare_ties_of_order_keys_may_come_in_any_order():
    header = ["c_count", "custdist", "name"]
    expected = [["9", "6641", "a"], ["10", "6532", "b"], ["10", "6532", "c"], ["11", "1", "d"]]
    actual = [expected[0], expected[2], expected[1], expected[3]]
    keys = bench_results.order_by_keys("SELECT 1 ORDER BY custdist DESC, c_count DESC")
    # Sorted by the keys, only the tie (6532, 10) is in another order: fine.
    assert bench_results.compare_results(actual, expected, keys, header) is None
    # A key that is not an output column: the order cannot be judged, so it must match exactly.
    assert bench_results.compare_results(actual, expected, [("length(name)", False)], header) is not None


def test_compare_strings_with_padding_and_multiset_with_near_numbers():
    padded = [[c + "   " if not c[0].isdigit() else c for c in row] for row in Q2_ROWS]
    assert bench_results.compare_results(padded, Q2_ROWS) is None
    expected = [["x", "1.0000000000001"], ["x", "1.0000000000002"], ["y", "5"]]
    actual = [["y", "5.000000000001"], ["x", "1.0000000000002"], ["x", "1.0000000000001"]]
    assert bench_results.compare_results(actual, expected) is None
    assert bench_results.compare_results([["y", "6"]] + actual[1:], expected) == "row (y|6): column 2 6, expected 5"


def test_compare_duckdb_python_values():
    import datetime
    from decimal import Decimal

    texts = [bench_results.to_text(v) for v in (Decimal("37734107.00"), 25.522005853257337, 1478493,
                                                 datetime.date(1995, 3, 15), None, "A", True)]
    assert texts == ["37734107.00", "25.522005853257337", "1478493", "1995-03-15", "", "A", "true"]


def test_read_answer_file_from_shared_answers():
    path = os.path.join(os.path.dirname(ROOT), "shared", "benchmarks", "tpch", "answers-sf1", "q01.csv")
    if not os.path.exists(path):
        pytest.skip("no ../shared/benchmarks/tpch/answers-sf1")
    header, rows = bench_results.read_answer_file(path)
    assert header == Q1_HEADER and rows == Q1


# ---------------------------------------------------------------------------------------------------------------
# SQL lexing


def test_split_statements_respects_quotes_and_comments():
    sql = "SELECT ';' AS a; -- x; y\n/* ; */ SELECT \"a;b\" FROM t;\n  \n"
    assert bench_results.split_statements(sql) == ["SELECT ';' AS a", "-- x; y\n/* ; */ SELECT \"a;b\" FROM t"]
    assert bench_results.split_statements("-- only a comment\n") == []


def test_order_by_keys_of_tpch_queries():
    def keys(n):
        with open(os.path.join(TPCH_QUERIES, f"q{n:02d}.sql")) as f:
            return bench_results.order_by_keys(f.read())

    assert keys(1) == [("l_returnflag", False), ("l_linestatus", False)]
    assert keys(3) == [("revenue", True), ("o_orderdate", False)]  # LIMIT 10 is not part of the key
    assert keys(6) is None and keys(14) is None and keys(17) is None and keys(19) is None
    assert keys(15) == [("s_suppkey", False)]
    # ORDER BY inside a subquery or a string does not count.
    assert bench_results.order_by_keys("SELECT * FROM (SELECT a FROM t ORDER BY a) s") is None
    assert bench_results.order_by_keys("SELECT 'order by x' FROM t") is None
    assert bench_results.order_by_keys("SELECT a FROM t ORDER BY 1 DESC NULLS LAST, t.b") == [("1", True),
                                                                                            ("t.b", False)]


def test_every_tpch_order_by_maps_to_output_columns():
    answers = os.path.join(os.path.dirname(ROOT), "shared", "benchmarks", "tpch", "answers-sf1")
    if not os.path.isdir(answers):
        pytest.skip("no answers-sf1")
    for n in range(1, 23):
        with open(os.path.join(TPCH_QUERIES, f"q{n:02d}.sql")) as f:
            keys = bench_results.order_by_keys(f.read())
        header, rows = bench_results.read_answer_file(os.path.join(answers, f"q{n:02d}.csv"))
        if keys:
            columns = bench_results._key_columns(keys, header)
            assert columns is not None, f"Q{n}"
            assert bench_results.is_sorted(rows, columns), f"Q{n} answer not sorted by its keys"


# ---------------------------------------------------------------------------------------------------------------
# TPC-H stream order


def test_stream_order_table():
    table = bench_streams.STREAM_ORDER
    assert len(table) == 41
    assert table[0] == [14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12]
    assert table[1] == [21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4]
    assert table[2] == [6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21]
    assert table[3] == [8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3]
    assert table[4] == [5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20]
    for row in table:
        assert sorted(row) == list(range(1, 23))
    assert len({tuple(row) for row in table}) == 41


def test_stream_selection():
    assert bench_streams.throughput_streams(4) == [1, 2, 3, 4]  # stream 0 belongs to the power test
    assert bench_streams.stream_order(1, {1, 4, 22}) == [22, 1, 4]
    assert bench_streams.stream_order(41) == bench_streams.STREAM_ORDER[0]


# ---------------------------------------------------------------------------------------------------------------
# statistics, queries, reports


def test_median_and_geomean():
    assert bench_results.median([5.0, 1.0, 3.0]) == 3.0
    assert bench_results.median([4.0, 1.0]) == 2.5
    assert bench_results.median([]) is None
    assert bench_results.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert bench_results.geomean([0.5, 2.0, None]) == pytest.approx(1.0)
    assert bench_results.geomean([]) is None


def test_query_selection_and_q11_fraction():
    tpch, ssb = bench_data.Tpch(), bench_data.Ssb()
    assert [q.id for q in tpch.select("1,6,14")] == ["Q01", "Q06", "Q14"]
    assert [q.id for q in tpch.select("q3-5, 3")] == ["Q03", "Q04", "Q05"]
    assert len(tpch.select(None)) == 22
    with pytest.raises(bench_data.SetupError):
        tpch.select("23")
    assert [q.id for q in ssb.select("1.1,3")] == ["Q1.1", "Q3.1", "Q3.2", "Q3.3", "Q3.4"]
    assert len(ssb.select("")) == 13
    q11 = tpch.select("11")[0]
    assert "0.0001000000" in q11.sql("1")
    assert "* 0.01\n" in q11.sql("0.01") and "0.0001" not in q11.sql("0.01")
    assert "* 0.00001\n" in q11.sql("10")
    assert "* 0.0000033333\n" in q11.sql("30")  # 0.0001 / 30 does not terminate: ten decimals, as qgen prints
    assert bench_data.format_sf("1.0") == "1" and bench_data.format_sf("0.010") == "0.01"
    assert bench_data.format_sf("10") == "10"


def _row(query, t, d, status="ok", detail=""):
    return {"query": query, "tessera_ms": t, "duckdb_ms": d, "ratio": t / d if t and d else None,
            "verified": status, "detail": detail, "tessera_runs_ms": [t] if t else [], "duckdb_runs_ms": [d]}


def test_summary_and_table():
    rows = [_row("Q01", 200.0, 100.0), _row("Q06", 10.0, 20.0),
            _row("Q02", None, 50.0, "FAILED", "cannot execute Join CROSS yet")]
    summary = bench_report.summarize(rows)
    assert summary["ran_on_both"] == 2 and summary["tessera_total_ms"] == 210.0
    assert summary["duckdb_total_ms"] == 120.0 and summary["geomean_ratio"] == pytest.approx(1.0)
    assert summary["failed"] == 1 and summary["ok"] == 2
    table = bench_report.format_table("TPC-H SF1", rows, summary, compare=True)
    assert "FAILED: cannot execute Join CROSS yet" in table
    assert "2.00x" in table and "0.50x" in table and "total (2 on both)" in table


def test_tpcds_table_says_correct_wrong_rejected():
    rows = [_row("Q01", 20.0, 10.0), _row("Q02", None, 50.0, "FAILED", "function round does not exist"),
            _row("Q03", 5.0, 5.0, "MISMATCH", "vs duckdb: 3 rows, expected 4")]
    table = bench_report.format_table("TPC-DS SF1", rows, bench_report.summarize(rows), compare=True,
                                      labels=tessera_bench.TPCDS_LABELS)
    assert "rejected: function round does not exist" in table and "wrong: vs duckdb" in table
    assert "verified: 1 correct, 1 wrong, 1 rejected" in table


def test_tpcds_types_and_query_selection(tmp_path):
    assert bench_tpcds.tessera_type("BIGINT") == "BIGINT" and bench_tpcds.tessera_type("INTEGER") == "INTEGER"
    assert bench_tpcds.tessera_type("DECIMAL(7,2)") == "DECIMAL(7,2)" and bench_tpcds.tessera_type("DATE") == "DATE"
    assert bench_tpcds.tessera_type("VARCHAR") == "VARCHAR"
    with pytest.raises(bench_data.SetupError):
        bench_tpcds.tessera_type("BLOB")
    tpcds = bench_tpcds.Tpcds()
    tpcds.bind(str(tmp_path))
    assert tpcds.schema_path == str(tmp_path / "schema.sql")
    assert [q.id for q in tpcds.select("1,77,5-6")] == ["Q01", "Q77", "Q05", "Q06"]
    assert len(tpcds.select(None)) == 99
    with pytest.raises(bench_data.SetupError):
        tpcds.select("100")
    assert "NULL '\\N'" in tpcds.copy_options and "QUOTE" in tpcds.copy_options


def test_error_lines_lose_the_query_file_prefix():
    stderr = "Error: /tmp/tessera-bench-x/Q02.sql:1: function round does not exist at line 4, column 8\n  ^\n"
    assert bench_engines._error_from_stderr(stderr, 1) == "function round does not exist at line 4, column 8"


def test_svg_chart_is_valid_and_marks_failures():
    rows = [_row("Q01", 200.0, 100.0), _row("Q06", 1.0, 20.0, "MISMATCH", "vs duckdb: 3 rows, expected 4"),
            _row("Q<2>", None, 50.0, "FAILED", "cannot execute Join CROSS yet")]
    report = {"title": "TPC-H", "sf": "1", "runs": 3, "threads": 2, "compare": "duckdb", "duckdb_version": "2.0.0",
              "queries": rows, "summary": bench_report.summarize(rows), "date": "today"}
    svg = bench_report.query_chart(report)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == ns + "svg"
    bars = [r for r in root.iter(ns + "rect") if r.find(ns + "title") is not None]
    assert len(bars) == 5  # 3 duckdb bars, 2 tessera bars (the failed query has none)
    texts = "".join(root.itertext())
    assert "Q<2>" in texts and "FAILED" in texts and "MISMATCH" in texts and "log scale" in texts
    linear = bench_report.bar_chart_svg("t", ["a", "b"], [("s", "#000", [1.0, 2.0])], "ms")
    assert "log scale" not in linear
    ET.fromstring(linear)


def test_csv_and_json_output(tmp_path):
    rows = [_row("Q01", 200.0, 100.0)]
    report = {"benchmark": "tpch", "sf": "1", "threads": 2, "runs": 3, "queries": rows,
              "summary": bench_report.summarize(rows)}
    bench_report.write_csv(str(tmp_path / "r.csv"), report)
    bench_report.write_json(str(tmp_path / "r.json"), report)
    lines = (tmp_path / "r.csv").read_text().splitlines()
    assert lines[0].startswith("benchmark,sf,query,tessera_median_ms,duckdb_median_ms,ratio,verified")
    assert lines[1].startswith("tpch,1,Q01,200.000,100.000,2.0000,ok")
    assert json.loads((tmp_path / "r.json").read_text())["queries"][0]["query"] == "Q01"


# ---------------------------------------------------------------------------------------------------------------
# failures through a fake tessera


FAKE_TESSERA = r'''#!/usr/bin/env python3
import os, signal, sys, time
mode = os.environ["FAKE_MODE"]
files = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "-f"]
for index, path in enumerate(files):
    if mode == "fail" and index == 2:
        print("Error: cannot execute Join CROSS yet", file=sys.stderr)
        sys.exit(1)
    if mode == "crash" and index == 1:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "hang":
        time.sleep(30)
    print('name,value\n"a,b",1.50\nTime: %d ms' % (10 + index), flush=True)
'''


@pytest.fixture
def fake_tessera(tmp_path):
    path = tmp_path / "tessera"
    path.write_text(FAKE_TESSERA)
    path.chmod(0o755)
    query = tmp_path / "q.sql"
    query.write_text("SELECT 1;")
    return str(path), str(query), str(tmp_path)


@pytest.mark.parametrize("mode, error", [
    ("ok", None),
    ("fail", "cannot execute Join CROSS yet (in timed run 2 of 3)"),
    ("crash", "crashed with SIGSEGV (in timed run 1 of 3)"),
    ("hang", "timeout after 2 s"),
])
def test_tessera_engine_reports_failures(fake_tessera, monkeypatch, mode, error):
    binary, query, directory = fake_tessera
    monkeypatch.setenv("FAKE_MODE", mode)
    # Only the hanging one should time out, also on a busy machine.
    engine = bench_engines.TesseraEngine(binary, directory, 2, timeout=2 if mode == "hang" else 120)
    run = engine.run(query, 1, 3)
    assert run.error == error
    if mode == "ok":
        assert run.times_ms == [11, 12, 13] and run.warmup_ms == 10 and run.rows == [["a,b", "1.50"]]
        status, detail, _ = tessera_bench.verify(run, [("ref", ["name", "value"], [["a,b", "1.5"]])], None)
        assert (status, detail) == ("ok", "")
    else:
        status, detail, _ = tessera_bench.verify(run, [], None)
        assert status == "FAILED" and detail == error


CLI_FAKE_TESSERA = r'''#!/usr/bin/env python3
# Enough of tessera for a whole tessera-bench run: loads succeed, q06 fails like an unsupported join.
import sys
args = sys.argv[2:]
for i, a in enumerate(args):
    if a not in ("-c", "-f"):
        continue
    text = args[i + 1]
    if a == "-f" and text.endswith("schema.sql"):
        print("CREATE TABLE\nTime: 1 ms\n" * open(text).read().count("CREATE TABLE"), end="")
    elif a == "-c" and text.startswith("COPY"):
        print("COPY 3\nTime: 2 ms")
    elif a == "-f" and "Q06" in text:
        print("Error: cannot execute Join CROSS yet", file=sys.stderr)
        sys.exit(1)
    else:
        print("x\n1\nTime: 5 ms")
'''


def test_cli_reports_failed_queries_and_goes_on(tmp_path):
    fake = tmp_path / "tessera"
    fake.write_text(CLI_FAKE_TESSERA)
    fake.chmod(0o755)
    tbl_dir = tmp_path / "cache" / "tpch-sf1"
    tbl_dir.mkdir(parents=True)
    for table in bench_data.Tpch.tables:
        (tbl_dir / f"{table}.tbl").write_text("")
    (tbl_dir / ".complete").write_text("")
    (tmp_path / "answers").mkdir()
    common = ["tpch", "--sf", "1", "--queries", "1,6,14", "--runs", "2", "--tessera", str(fake), "--cache",
              str(tmp_path / "cache"), "--answers", str(tmp_path / "answers"), "--json", str(tmp_path / "r.json")]
    result = subprocess.run([os.path.join(RUNNER, "tessera-bench")] + common, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "FAILED: cannot execute Join CROSS yet" in result.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert [(q["query"], q["verified"]) for q in report["queries"]] == [
        ("Q01", "unverified"), ("Q06", "FAILED"), ("Q14", "unverified")]
    assert report["queries"][0]["tessera_runs_ms"] == [5.0, 5.0]
    assert report["load"]["rows"] == {t: 3 for t in bench_data.Tpch.tables}
    strict = subprocess.run([os.path.join(RUNNER, "tessera-bench")] + common + ["--strict"], capture_output=True,
                            text=True, timeout=120)
    assert strict.returncode == 1, strict.stderr


def test_foreign_data_directory_is_not_wiped(tmp_path):
    data_dir = tmp_path / "mine"
    data_dir.mkdir()
    (data_dir / "precious.txt").write_text("keep me")
    tbl = tmp_path / "tbl"
    tbl.mkdir()
    for table in bench_data.Ssb.tables:
        (tbl / f"{table}.tbl").write_text("")
    with pytest.raises(bench_data.SetupError, match="not loaded by tessera-bench"):
        bench_data.ensure_loaded(bench_data.Ssb(), "1", str(tbl), str(data_dir), "/bin/false", 1, reload=True)
    assert (data_dir / "precious.txt").read_text() == "keep me"


class _CountingSource(bench_data.TblFiles):
    """A load source (as bench_tpcds.StreamedTables) that expects 4 rows of `short` and records open / close."""

    def __init__(self, bench, tbl_dir, short):
        super().__init__(bench, tbl_dir)
        self.key = "source_rows"
        self.expected_rows = {t: 4 if t == short else 3 for t in bench.tables}
        self.calls = []

    def identity(self):
        return {"tbl_dir": self.tbl_dir, "source_rows": self.expected_rows}

    def open(self):
        self.calls.append("open")
        return super().open()

    def close(self):
        self.calls.append("close")
        return None


def test_failed_load_removes_its_data_directory(tmp_path):
    fake = tmp_path / "tessera"
    fake.write_text(CLI_FAKE_TESSERA)
    fake.chmod(0o755)
    bench = bench_data.Tpch()
    tbl = tmp_path / "tbl"
    tbl.mkdir()
    data_dir = tmp_path / "data"
    # A table cut short (the fake COPY says 3 rows where the source has 4): an error naming it, no directory left.
    short = _CountingSource(bench, str(tbl), "orders")
    with pytest.raises(bench_data.SetupError, match="rows differ from the source: orders 3 of 4"):
        bench_data.ensure_loaded(bench, "1", str(tbl), str(data_dir), str(fake), 1, source=short)
    assert short.calls == ["open", "close"] and not data_dir.exists()
    # A tessera that fails: its message, no directory left.
    with pytest.raises(bench_data.SetupError, match="loading into .* failed: exit code 1"):
        bench_data.ensure_loaded(bench, "1", str(tbl), str(data_dir), "/bin/false", 1,
                                 source=_CountingSource(bench, str(tbl), None))
    assert not data_dir.exists()
    # A complete load is stamped with the source's identity and the rows it loaded.
    complete = _CountingSource(bench, str(tbl), None)
    stamp = bench_data.ensure_loaded(bench, "1", str(tbl), str(data_dir), str(fake), 1, source=complete)
    assert stamp["source_rows"] == complete.expected_rows and stamp["rows"] == complete.expected_rows


# ---------------------------------------------------------------------------------------------------------------
# end to end with the real engine


def _need_engine():
    if not os.access(TESSERA, os.X_OK):
        pytest.skip(f"{TESSERA} not built")
    if not shutil.which("tpchgen-cli"):
        pytest.skip("tpchgen-cli not installed")


@pytest.fixture(scope="module")
def cache():
    # The same SF0.01 .tbl cache as tests/e2e (generated once).
    return os.environ.get("TESSERA_TEST_CACHE", os.path.join("/tmp", "tessera-test-cache"))


def test_end_to_end_q1_q6_against_duckdb(tmp_path, cache):
    _need_engine()
    pytest.importorskip("duckdb")
    report_path = tmp_path / "report.json"
    result = subprocess.run(
        [os.path.join(RUNNER, "tessera-bench"), "tpch", "--sf", "0.01", "--queries", "1,6", "--runs", "1",
         "--compare", "duckdb", "--tessera", TESSERA, "--cache", cache, "--data-dir", str(tmp_path / "db"),
         "--json", str(report_path), "--csv", str(tmp_path / "r.csv"), "--chart", str(tmp_path / "r.svg")],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(report_path.read_text())
    statuses = {q["query"]: (q["verified"], q["detail"]) for q in report["queries"]}
    assert statuses == {"Q01": ("ok", ""), "Q06": ("ok", "")}, result.stdout
    for q in report["queries"]:
        assert q["verified_against"] == ["duckdb"]
        assert len(q["tessera_runs_ms"]) == 1 and q["tessera_ms"] > 0 and q["duckdb_ms"] > 0
    assert "Q01" in result.stdout and "geomean" in result.stdout
    ET.parse(tmp_path / "r.svg")
    # The second run finds the load cached.
    again = subprocess.run(
        [os.path.join(RUNNER, "tessera-bench"), "tpch", "--sf", "0.01", "--queries", "6", "--runs", "1",
         "--tessera", TESSERA, "--cache", cache, "--data-dir", str(tmp_path / "db")],
        capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "using the TPC-H SF0.01 data loaded" in again.stderr, again.stderr


def test_end_to_end_throughput_streams(tmp_path, cache):
    _need_engine()
    report_path = tmp_path / "throughput.json"
    result = subprocess.run(
        [os.path.join(RUNNER, "tessera-bench"), "tpch", "--sf", "0.01", "--queries", "1,6", "--throughput",
         "--streams", "1,2", "--tessera", TESSERA, "--cache", cache, "--data-dir", str(tmp_path / "db"),
         "--json", str(report_path)],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(report_path.read_text())
    assert [r["streams"] for r in report["throughput"]] == [1, 2]
    for r in report["throughput"]:
        assert r["error"] is None and r["queries_per_hour"] > 0 and not r["inconsistent"]
    # Stream 2 runs Q6 before Q1 (Appendix A), stream 1 Q6 before Q1 as well.
    assert report["throughput"][1]["per_stream"][1]["order"] == ["Q06", "Q01"]


def test_end_to_end_throughput_with_refreshes_on_one_server(tmp_path, cache):
    """--refresh: the query streams and the refresh stream are clients of one tessera-server; the tables are checked
    against DuckDB after each refresh pair and the queries after the last."""
    _need_engine()
    pytest.importorskip("duckdb")
    if not os.access(SERVER, os.X_OK):
        pytest.skip(f"{SERVER} not built")
    report_path = tmp_path / "refresh.json"
    result = subprocess.run(
        [os.path.join(RUNNER, "tessera-bench"), "tpch", "--sf", "0.01", "--queries", "1,6,18", "--throughput",
         "--refresh", "--streams", "1,2", "--tessera", TESSERA, "--server", SERVER, "--cache", cache,
         "--data-dir", str(tmp_path / "db"), "--json", str(report_path)],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(report_path.read_text())
    assert report["one_server"] and "client of one tessera-server" in result.stdout
    for r, pairs in zip(report["throughput"], ([1], [1, 2])):
        assert r["error"] is None and r["queries_per_hour"] > 0, r
        refresh = r["refresh"]
        assert refresh["error"] is None and refresh["pairs"] == pairs
        assert set(refresh["times_ms"]) == {f"{rf} #{p}" for p in pairs for rf in ("RF1", "RF2")}
        check = refresh["verification"]
        assert check["status"] == "verified" and check["pairs_checked"] == pairs and check["verified"] == 3, check
    # The loaded data directory is as loaded: the refreshes changed the server's view of it only (pair 1 deletes
    # order 1 and inserts order 9, bench_refresh.sparse_key).
    again = subprocess.run([TESSERA, str(tmp_path / "db"), "--csv", "-c",
                            "SELECT o_orderkey FROM orders WHERE o_orderkey IN (1, 9)"],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stdout.split() == ["o_orderkey", "1"], again.stdout + again.stderr
