#!/usr/bin/env python3
"""TPC-H load benchmark: Tessera's COPY against DuckDB's on the same .tbl files, in the same run.

Prints, per table and in total: rows, load time, MB/s, and the memory the loaded database occupies (Tessera's
buffer-pool bytes for base blocks) next to the raw file size. Each engine loads into a fresh database; the
median of --runs runs is reported.

    python3 benchmarks/load/load_benchmark.py --sf 1 [--tessera build/cli/tessera] [--runs 3]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLES = ["region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]


def generate(sf, cache):
    directory = os.path.join(cache, f"tpch-sf{sf}")
    if not os.path.exists(os.path.join(directory, ".complete")):
        os.makedirs(directory, exist_ok=True)
        print(f"generating TPC-H SF{sf} into {directory} ...", file=sys.stderr)
        subprocess.run(["tpchgen-cli", "tbl", "-s", str(sf), "-o", directory], check=True)
        open(os.path.join(directory, ".complete"), "w").close()
    return directory


def schema_sql():
    with open(os.path.join(ROOT, "benchmarks", "tpch", "schema.sql")) as f:
        return f.read()


def tessera_load(binary, tbl_dir, threads, sync):
    data_dir = tempfile.mkdtemp(prefix="tessera-load-")
    try:
        subprocess.run([binary, data_dir, "-c", schema_sql()], check=True, stdout=subprocess.DEVNULL)
        args = [binary, data_dir, "--csv"]
        if threads:
            args += ["--threads", str(threads)]
        if not sync:
            args.append("--no-sync")
        for table in TABLES:
            args += ["-c", f"COPY {table} FROM '{tbl_dir}/{table}.tbl' (DELIMITER '|')"]
        args += ["-c", "SHOW MEMORY", "-c", "SHOW TABLES"]
        start = time.perf_counter()
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
        elapsed = time.perf_counter() - start
        lines = out.splitlines()
        memory = {}
        rows = {}
        for line in lines:
            parts = line.split(",")
            if len(parts) == 2 and parts[1].isdigit():
                memory[parts[0]] = int(parts[1])
            if len(parts) == 4 and parts[1] == "table":
                rows[parts[0]] = int(parts[2])
        return elapsed, memory.get("base blocks", 0), rows
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def duckdb_load(tbl_dir, threads):
    import duckdb

    con = duckdb.connect(":memory:")
    con.execute(f"SET threads={threads or os.cpu_count()}")
    con.execute(schema_sql())
    start = time.perf_counter()
    for table in TABLES:
        con.execute(f"COPY {table} FROM '{tbl_dir}/{table}.tbl' (DELIMITER '|', HEADER false)")
    elapsed = time.perf_counter() - start
    memory = con.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()[0]
    rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    con.close()
    return elapsed, memory, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sf", default="1")
    parser.add_argument("--tessera", default=os.path.join(ROOT, "build", "cli", "tessera"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="0 = all cores")
    parser.add_argument("--no-sync", action="store_true", help="Tessera: do not fsync block files")
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/tessera"))
    args = parser.parse_args()

    tbl_dir = generate(args.sf, args.cache)
    raw_bytes = sum(os.path.getsize(os.path.join(tbl_dir, f"{t}.tbl")) for t in TABLES)

    tessera_runs, duckdb_runs = [], []
    for run in range(args.runs):
        t = tessera_load(args.tessera, tbl_dir, args.threads, not args.no_sync)
        d = duckdb_load(tbl_dir, args.threads)
        print(f"run {run + 1}: tessera {t[0]:.2f} s, duckdb {d[0]:.2f} s", file=sys.stderr)
        tessera_runs.append(t)
        duckdb_runs.append(d)
    t_time = statistics.median(r[0] for r in tessera_runs)
    d_time = statistics.median(r[0] for r in duckdb_runs)
    t_rows, d_rows = tessera_runs[-1][2], duckdb_runs[-1][2]
    mb = raw_bytes / 1e6

    print(f"\nTPC-H SF{args.sf} load, median of {args.runs} runs ({os.cpu_count()} cores)")
    print(f"raw .tbl files: {mb:,.1f} MB")
    print(f"{'engine':<10} {'time (s)':>9} {'MB/s':>8} {'memory (MB)':>12} {'memory/raw':>11}")
    for name, seconds, memory in [("tessera", t_time, tessera_runs[-1][1]), ("duckdb", d_time, duckdb_runs[-1][1])]:
        print(f"{name:<10} {seconds:>9.2f} {mb / seconds:>8.1f} {memory / 1e6:>12.1f} {memory / raw_bytes:>11.2f}")
    print(f"tessera / duckdb load time: {t_time / d_time:.2f}x")
    print(f"\n{'table':<10} {'tessera rows':>14} {'duckdb rows':>14}")
    ok = True
    for table in TABLES:
        match = t_rows.get(table) == d_rows.get(table)
        ok &= match
        print(f"{table:<10} {t_rows.get(table, 0):>14,} {d_rows.get(table, 0):>14,} {'' if match else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
