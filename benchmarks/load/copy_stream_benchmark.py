#!/usr/bin/env python3
"""COPY through the client connection against the server's own COPY of a file, same server, same run (issue #18).

Loads TPC-H lineitem (the .tbl file dbgen writes) into a fresh tessera-server, alternating in every round:
  server file   COPY lineitem FROM '/path/lineitem.tbl' over gRPC: the server reads the file (CopyFrom operator, one
                work order per chunk on the Foreman's workers)
  grpc stdin    COPY lineitem FROM STDIN (FORMAT tbl) with the Python client's copy_in (gRPC CopyIn, 256 KiB messages)
  pg stdin      the same over the PostgreSQL protocol with psycopg 3's cursor.copy() (1 MiB writes)
  shell \\copy   the shell (C++ client, --connect) running \\copy lineitem FROM 'file' (FORMAT tbl)
Each load goes into a new empty table; the server's peak RSS is reset before each (/proc/PID/clear_refs) and read
after it. Prints every round and a table of medians: seconds, MB/s of the file, rows, peak RSS.

  python3 benchmarks/load/copy_stream_benchmark.py [--tbl ~/.cache/tessera/tpch-sf1/lineitem.tbl] [--rounds 3]
                                                   [--threads 2] [--methods server,grpc,pg,shell]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))
import tessera_client  # noqa: E402


def lineitem_schema(name):
    with open(os.path.join(ROOT, "benchmarks", "tpch", "schema.sql")) as f:
        schema = f.read()
    create = re.search(r"CREATE TABLE lineitem \(.*?\);", schema, re.S).group(0)
    return create.replace("CREATE TABLE lineitem", f"CREATE TABLE {name}")


class Server:
    def __init__(self, data_dir, allowed, threads):
        self.process = subprocess.Popen(
            [os.path.join(ROOT, "build", "server", "tessera-server"), "--data", data_dir, "--listen", "127.0.0.1:0",
             "--pg-listen", "127.0.0.1:0", "--no-sync", "--threads", str(threads), "--allowed-directories", allowed],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = [self.process.stdout.readline() for _ in range(2)]
        self.pg_port = int(lines[0].strip().rsplit(":", 1)[1])
        self.grpc_target = lines[1].strip().rsplit(" ", 1)[1]

    def reset_peak(self):
        with open(f"/proc/{self.process.pid}/clear_refs", "w") as f:
            f.write("5")

    def peak_rss_mib(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self):
        self.process.terminate()
        self.process.wait(60)


def load(method, server, client, tbl, table):
    if method == "server":
        return client.execute(f"COPY {table} FROM '{tbl}'").rows_affected
    if method == "grpc":
        with open(tbl, "rb") as f:
            return client.copy_in(f"COPY {table} FROM STDIN (FORMAT tbl)", f).rows_affected
    if method == "pg":
        import psycopg
        with psycopg.connect(host="127.0.0.1", port=server.pg_port, user="bench", dbname="tpch",
                             autocommit=True) as connection, connection.cursor() as cursor, open(tbl, "rb") as f:
            with cursor.copy(f"COPY {table} FROM STDIN (FORMAT tbl)") as copy:
                while piece := f.read(1 << 20):
                    copy.write(piece)
            return cursor.rowcount
    if method == "shell":
        run = subprocess.run([os.path.join(ROOT, "build", "cli", "tessera"), "--connect", server.grpc_target],
                             input=f"\\copy {table} FROM '{tbl}' (FORMAT tbl)\n", capture_output=True, text=True,
                             check=True)
        return int(re.search(r"COPY (\d+)", run.stdout).group(1))
    raise ValueError(method)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tbl", default=os.path.expanduser("~/.cache/tessera/tpch-sf1/lineitem.tbl"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--methods", default="server,grpc,pg,shell")
    args = parser.parse_args()
    methods = args.methods.split(",")
    tbl = os.path.abspath(args.tbl)
    size_mb = os.path.getsize(tbl) / 1e6
    with open(tbl, "rb") as f:  # warm the page cache
        while f.read(64 << 20):
            pass
    data_dir = tempfile.mkdtemp(prefix="copy_stream_benchmark_")
    server = Server(os.path.join(data_dir, "db"), os.path.dirname(tbl), args.threads)
    client = tessera_client.connect(server.grpc_target)
    times = {m: [] for m in methods}
    peaks = {m: [] for m in methods}
    rows = {}
    try:
        serial = 0
        for round_number in range(args.rounds):
            order = methods if round_number % 2 == 0 else list(reversed(methods))
            for method in order:
                serial += 1
                table = f"lineitem_{serial}"
                client.execute(lineitem_schema(table))
                server.reset_peak()
                start = time.monotonic()
                rows[method] = load(method, server, client, tbl, table)
                elapsed = time.monotonic() - start
                peak = server.peak_rss_mib()
                client.execute(f"DROP TABLE {table}")
                times[method].append(elapsed)
                peaks[method].append(peak)
                print(f"round {round_number + 1} {method:7s} {elapsed:7.2f} s {size_mb / elapsed:7.1f} MB/s "
                      f"{rows[method]} rows, peak RSS {peak:.0f} MiB", flush=True)
    finally:
        client.close()
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    print(f"\n{os.path.basename(tbl)}: {size_mb:.0f} MB, {args.threads} worker threads, {args.rounds} rounds")
    print(f"| method | rows | median s | MB/s | / server file | peak RSS MiB (max) |")
    print(f"|---|---:|---:|---:|---:|---:|")
    base = statistics.median(times[methods[0]])
    for method in methods:
        median = statistics.median(times[method])
        print(f"| {method} | {rows[method]:,} | {median:.2f} | {size_mb / median:.0f} | {median / base:.2f} | "
              f"{max(peaks[method]):.0f} |")


if __name__ == "__main__":
    main()
