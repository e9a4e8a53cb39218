#!/usr/bin/env python3
"""A large SELECT result through tessera-server under a memory limit: rows, time and the server's peak resident memory.

For each server binary given (e.g. this build and a baseline build), starts `tessera-server --data DIR
--memory-limit BYTES` on 127.0.0.1, runs the query once over gRPC (raw stubs; each batch is decoded by size only and
dropped, so the client holds nothing) and, with --pg and psycopg 3 installed, once over the PostgreSQL protocol
(`cursor.stream`, row by row), while a thread samples the server's VmRSS every 20 ms. Prints one table; a query that
fails is reported with its error. The server is stopped by its pid at the end.

    benchmarks/streaming/result_streaming.py --data ~/.cache/tessera/tpch-sf1-tessera --memory-limit 1G \
        --server new=build/server/tessera-server --server old=/path/to/baseline/tessera-server --pg
"""
import argparse
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "runner"))
import tessera_client  # noqa: E402
from bench_streams import linked_copy  # noqa: E402


def parse_bytes(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower()
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class RssSampler(threading.Thread):
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                self.peak = max(self.peak, rss_bytes(self.pid))
            except OSError:
                return
            time.sleep(0.02)


def start_server(binary, data_dir, memory_limit, pg):
    args = [binary, "--data", data_dir, "--listen", "127.0.0.1:0", "--memory-limit", str(memory_limit), "--no-sync"]
    if pg:
        args += ["--pg-listen", "127.0.0.1:0"]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ports = {}
    deadline = time.time() + 60
    while "grpc" not in ports and time.time() < deadline:  # the PostgreSQL line comes first
        ready, _, _ = select.select([process.stdout], [], [], 1)
        if ready:
            line = process.stdout.readline()
            if not line:
                break
            if "PostgreSQL protocol on" in line:
                ports["pg"] = int(line.strip().rsplit(":", 1)[1])
            elif "listening on" in line:
                ports["grpc"] = int(line.strip().rsplit(":", 1)[1])
    if "grpc" not in ports:
        process.kill()
        raise SystemExit(f"{binary} did not start: {process.stderr.read()}")
    return process, ports


def stop(process):
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_grpc(port, sql):
    pb2, pb2_grpc = tessera_client._load_stubs()
    import grpc
    with tessera_client.connect(f"127.0.0.1:{port}") as client, grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb2_grpc.TesseraStub(channel)
        rows = 0
        for response in stub.Execute(pb2.ExecuteRequest(session_id=client.session_id, sql=sql.encode())):
            if response.WhichOneof("payload") == "batch":
                rows += response.batch.row_count
        return rows


def run_pg(port, sql):
    import psycopg
    with psycopg.connect(host="127.0.0.1", port=port, user="tessera", dbname="tessera", autocommit=True) as connection:
        rows = 0
        for _ in connection.cursor().stream(sql):
            rows += 1
        return rows


def measure(name, binary, data_dir, memory_limit, sql, pg):
    process, ports = start_server(binary, data_dir, memory_limit, pg)
    results = []
    try:
        runs = [("grpc", run_grpc, ports["grpc"])]
        if pg and "pg" in ports:
            runs.append(("pg", run_pg, ports["pg"]))
        for protocol, run, port in runs:
            idle_rss = rss_bytes(process.pid)
            sampler = RssSampler(process.pid)
            sampler.start()
            start = time.time()
            try:
                rows, error = run(port, sql), ""
            except Exception as exception:  # noqa: BLE001 (reported in the table)
                rows, error = 0, str(exception).splitlines()[0][:100]
            seconds = time.time() - start
            sampler.stop.set()
            sampler.join()
            results.append((name, protocol, rows, seconds, idle_rss, sampler.peak, error))
    finally:
        stop(process)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.path.expanduser("~/.cache/tessera/tpch-sf1-tessera"))
    parser.add_argument("--memory-limit", default="1G")
    parser.add_argument("--sql", default="SELECT * FROM lineitem")
    parser.add_argument("--server", action="append", default=[],
                        help="NAME=PATH of a tessera-server binary (repeatable; default this build's)")
    parser.add_argument("--pg", action="store_true", help="also over the PostgreSQL protocol (psycopg 3)")
    args = parser.parse_args()
    servers = [s.split("=", 1) for s in args.server] or [["this", os.path.join(ROOT, "build", "server", "tessera-server")]]
    memory_limit = parse_bytes(args.memory_limit)
    workdir = tempfile.mkdtemp(prefix="result_streaming_")
    try:
        rows = []
        for name, binary in servers:
            data_dir = linked_copy(args.data, os.path.join(workdir, name))
            rows += measure(name, binary, data_dir, memory_limit, args.sql, args.pg)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"{args.sql!r} under --memory-limit {memory_limit >> 20} MiB")
    print(f"{'server':<10} {'protocol':<8} {'rows':>10} {'s':>7} {'rows/s':>10} {'RSS idle MiB':>12} "
          f"{'RSS peak MiB':>12}  error")
    for name, protocol, count, seconds, idle, peak, error in rows:
        print(f"{name:<10} {protocol:<8} {count:>10} {seconds:>7.2f} {count / seconds:>10.0f} {idle >> 20:>12} "
              f"{peak >> 20:>12}  {error}")
    return 1 if any(r[-1] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
