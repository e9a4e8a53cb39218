"""Tests of benchmarks/soak/soak_benchmark.py: sizes, and a smoke run (TPC-H and SSB at SF 0.01, 8 sessions for
15 seconds with cancels, disconnects and priority changes) that must end with 0 problems: every answer verified,
no unexpected error, every session freed, RSS under the bound.

The smoke run needs the shell ($TESSERA_BIN), tessera-server ($TESSERA_SERVER_BIN), ssb-dbgen ($SSB_DBGEN),
tpchgen-cli and grpcio-tools; it is skipped when one is missing. Data goes to $TESSERA_TEST_CACHE.

    python3 -m pytest tests/benchmark_soak -q
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "soak"))

import soak_benchmark  # noqa: E402

SCRIPT = os.path.join(ROOT, "benchmarks", "soak", "soak_benchmark.py")
TESSERA = os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli", "tessera"))
SERVER = os.environ.get("TESSERA_SERVER_BIN", os.path.join(ROOT, "build", "server", "tessera-server"))
DBGEN = os.environ.get("SSB_DBGEN", os.path.join(ROOT, "build", "benchmarks", "ssb_generator", "ssb-dbgen"))


def test_parse_bytes():
    assert soak_benchmark.parse_bytes("2GB") == 2 << 30
    assert soak_benchmark.parse_bytes("512mb") == 512 << 20
    assert soak_benchmark.parse_bytes("1000") == 1000
    with pytest.raises(Exception):
        soak_benchmark.parse_bytes("lots")


def test_smoke_run():
    for path in (TESSERA, SERVER, DBGEN):
        if not os.access(path, os.X_OK):
            pytest.skip(f"{path} not built")
    if not shutil.which("tpchgen-cli"):
        pytest.skip("tpchgen-cli not installed (TPC-H data)")
    pytest.importorskip("grpc_tools")
    cache = os.environ.get("TESSERA_TEST_CACHE", os.path.join(tempfile.gettempdir(), "tessera-test-cache"))
    with tempfile.TemporaryDirectory() as tmp:
        report_path = os.path.join(tmp, "report.json")
        process = subprocess.run(
            [sys.executable, SCRIPT, "--quick", "--minutes", "0.25", "--cache", cache, "--server", SERVER,
             "--tessera", TESSERA, "--ssb-dbgen", DBGEN, "--cancel-rate", "0.2", "--disconnect-rate", "0.1",
             "--priority-rate", "0.2", "--json", report_path],
            capture_output=True, text=True, timeout=600)
        assert process.returncode == 0, process.stdout + process.stderr
        assert "0 problem(s)" in process.stdout, process.stdout
        report = json.load(open(report_path))
    assert report["problems"] == []
    for name in ("tpch", "ssb"):
        stats = report["stats"][name]
        assert stats["verified"] > 0 and stats["count"]["cancel"] > 0 and stats["count"]["disconnect"] > 0
        assert stats["priority_changes"] > 0 and stats["p99_ms"] >= stats["p50_ms"]
        assert report["rss"][name], "RSS was sampled"
