#!/usr/bin/env python3
"""DELETE and the ANALYZE after it on a loaded TPC-H data directory, for two tessera shell binaries in the same run.

    benchmarks/deletions/delete_statements.py --data-dir ~/.cache/tessera/tpch-sf1-tessera \\
        --baseline /path/to/tessera-before [--tessera build/cli/tessera] [--runs 3] [--threads 2]

Each run of each binary opens its own hard-linked view of the data directory (benchmarks/runner/bench_streams.py:
linked_copy; the directory itself never changes), turns the background compaction and the automatic ANALYZE off,
reads lineitem once (untimed: the blocks come from disk), then runs, timed by the shell's --timing:
    DELETE FROM lineitem WHERE <--where>         (default l_orderkey % 8 = 1: 749,688 rows at SF1, every block)
    ANALYZE lineitem                             (every block has deletions: the live-row path of the statistics)
and checks that both binaries deleted the same number of rows and leave the same SHOW STATS row count. The binaries
alternate (baseline, tessera, baseline, ...) so that a busy machine slows both alike; the table gives the median
and the fastest run of each. Exit status 1 when the binaries disagree.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "runner"))

import bench_streams  # noqa: E402

TIME_LINE = re.compile(r"^Time: ([0-9.]+) ms")


def run_once(binary: str, data_dir: str, threads: int, where: str) -> dict:
    """One run on a fresh view: {"DELETE": ms, "ANALYZE": ms, "deleted": n, "rows": live rows after}."""
    with tempfile.TemporaryDirectory(prefix="tessera-delete-") as scratch:
        view = bench_streams.linked_copy(data_dir, os.path.join(scratch, "db"))
        statements = ["SET compaction_threshold = 0", "SET auto_analyze_threshold = 0",
                      f"SELECT count(*) FROM lineitem WHERE {where}",
                      f"DELETE FROM lineitem WHERE {where}", "ANALYZE lineitem",
                      "SELECT count(*) FROM lineitem"]
        args = [binary, view, "--csv", "--timing", "--no-sync", "--threads", str(threads)]
        for statement in statements:
            args += ["-c", statement]
        process = subprocess.run(args, capture_output=True, text=True, timeout=1800)
        if process.returncode != 0:
            raise RuntimeError(f"{binary} failed: {process.stderr.strip()[-500:]}")
        times = [float(m.group(1)) for m in map(TIME_LINE.match, process.stdout.splitlines()) if m]
        deleted = re.search(r"DELETE (\d+)", process.stdout)
        counts = [line for line in process.stdout.splitlines() if line.isdigit()]
        shutil.rmtree(view, ignore_errors=True)
    if len(times) != len(statements) or deleted is None or len(counts) != 2:
        raise RuntimeError(f"{binary}: unexpected output:\n{process.stdout[-1000:]}")
    return {"DELETE": times[3], "ANALYZE": times[4], "deleted": int(deleted.group(1)), "rows": int(counts[1]),
            "found": int(counts[0])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=os.path.expanduser("~/.cache/tessera/tpch-sf1-tessera"),
                        help="a loaded TPC-H data directory (tessera-bench tpch --sf 1 makes one)")
    parser.add_argument("--tessera", default=os.path.join(ROOT, "build", "cli", "tessera"))
    parser.add_argument("--baseline", required=True, help="the tessera binary to compare with")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--where", default="l_orderkey % 8 = 1")
    args = parser.parse_args()
    binaries = {"baseline": args.baseline, "tessera": args.tessera}
    results = {name: [] for name in binaries}
    for run in range(args.runs):
        for name, binary in binaries.items():
            result = run_once(binary, args.data_dir, args.threads, args.where)
            results[name].append(result)
            print(f"run {run + 1} {name}: DELETE {result['DELETE']:.1f} ms ({result['deleted']} rows), "
                  f"ANALYZE {result['ANALYZE']:.1f} ms", flush=True)
    print(f"\nDELETE FROM lineitem WHERE {args.where}; ANALYZE lineitem ({args.runs} runs each, {args.threads} threads)")
    print(f"{'binary':<10} {'DELETE median':>14} {'fastest':>9} {'ANALYZE median':>15} {'fastest':>9}")
    for name, runs in results.items():
        d = [r["DELETE"] for r in runs]
        a = [r["ANALYZE"] for r in runs]
        print(f"{name:<10} {statistics.median(d):>11.1f} ms {min(d):>6.1f} ms {statistics.median(a):>12.1f} ms "
              f"{min(a):>6.1f} ms")
    outcomes = {(r["deleted"], r["rows"], r["found"]) for runs in results.values() for r in runs}
    same = len(outcomes) == 1 and all(found == deleted for deleted, _, found in outcomes)
    print("check: rows deleted and rows left " + ("same" if same else f"DIFFERENT {sorted(outcomes)}"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
