"""Tests of benchmarks/concurrency/streams_benchmark.py: configuration parsing, stream orders, percentiles, and a
smoke run (SSB SF 0.01, 1 and 2 streams, two configurations and DuckDB) that must verify every answer.

The smoke run needs the shell ($TESSERA_BIN), tessera-server ($TESSERA_SERVER_BIN), ssb-dbgen ($SSB_DBGEN), duckdb
and grpcio-tools; it is skipped when one is missing. Data goes to $TESSERA_TEST_CACHE.

    python3 -m pytest tests/benchmark_concurrency -q
"""
import json
import os
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "concurrency"))

import streams_benchmark  # noqa: E402
from streams_benchmark import Config  # noqa: E402

SCRIPT = os.path.join(ROOT, "benchmarks", "concurrency", "streams_benchmark.py")
TESSERA = os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli", "tessera"))
SERVER = os.environ.get("TESSERA_SERVER_BIN") or streams_benchmark.first_existing(streams_benchmark.SERVER_CANDIDATES)
DBGEN = os.environ.get("SSB_DBGEN", os.path.join(ROOT, "build", "benchmarks", "ssb_generator", "ssb-dbgen"))


def test_config_items():
    config = Config("fcfs:--policy fcfs; SET scheduler_policy = 'a;b'; scan_sharing=off")
    assert config.name == "fcfs"
    assert config.server_flags == ["--policy", "fcfs"]
    assert config.statements == ["SET scheduler_policy = 'a;b'", "SET scan_sharing = 'off'"]
    assert Config("default:").name == "default" and Config("default:").statements == []
    unnamed = Config("SET x = 'y:z'")
    assert unnamed.name == "SET x = 'y:z'" and unnamed.statements == ["SET x = 'y:z'"]


def test_stream_orders():
    import bench_data

    ssb = bench_data.Ssb()
    queries = ssb.all_queries()
    orders = streams_benchmark.stream_orders(ssb, queries, 14, 2)
    assert orders[0][:2] == ["Q1.1", "Q1.2"] and len(orders[0]) == 26
    assert orders[1][0] == "Q1.2" and orders[12][0] == "Q4.3" and orders[13] == orders[0]
    tpch = bench_data.Tpch()
    orders = streams_benchmark.stream_orders(tpch, tpch.all_queries(), 2, 1)
    assert orders[0][:3] == ["Q21", "Q03", "Q18"] and sorted(orders[1]) == sorted(q.id for q in tpch.all_queries())


def test_percentile():
    values = list(range(1, 101))
    assert streams_benchmark.percentile(values, 0.95) == 95
    assert streams_benchmark.percentile([7.0], 0.95) == 7.0
    assert streams_benchmark.percentile([1, 2], 0.5) == 1


def test_smoke_run():
    for path in (TESSERA, SERVER, DBGEN):
        if not os.access(path, os.X_OK):
            pytest.skip(f"{path} not built")
    pytest.importorskip("duckdb")
    pytest.importorskip("grpc_tools")
    pytest.importorskip("psycopg")
    cache = os.environ.get("TESSERA_TEST_CACHE", os.path.join(tempfile.gettempdir(), "tessera-test-cache"))
    with tempfile.TemporaryDirectory() as tmp:
        report_path = os.path.join(tmp, "report.json")
        process = subprocess.run(
            [sys.executable, SCRIPT, "--quick", "--sf", "0.01", "--cache", cache, "--server", SERVER,
             "--tessera", TESSERA, "--ssb-dbgen", DBGEN, "--config", "fair:scheduler_policy=fair",
             "--config", "fcfs:--policy fcfs", "--protocols", "grpc,pg", "--json", report_path],
            capture_output=True, text=True, timeout=300)
        assert process.returncode == 0, process.stdout + process.stderr
        # (1 + 2 streams) x 13 queries x 5 engines (fair, fair/pg, fcfs, fcfs/pg, duckdb)
        assert "answers: all 195 concurrent results equal" in process.stdout, process.stdout
        report = json.load(open(report_path))
    assert report["configs"]["fair"]["scheduler_policy"] == "fair"
    assert report["configs"]["fcfs"]["scheduler_policy"] == "fcfs"
    assert {(r["streams"], r["engine"]) for r in report["results"]} == {
        (n, e) for n in (1, 2) for e in ("fair", "fair/pg", "fcfs", "fcfs/pg", "duckdb")}
    assert all(r["qps"] > 0 and r["p95_ms"] >= r["p50_ms"] for r in report["results"])
