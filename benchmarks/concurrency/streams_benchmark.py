#!/usr/bin/env python3
"""Concurrent query streams against one tessera-server, and against DuckDB in the same run.

    benchmarks/concurrency/streams_benchmark.py [--benchmark ssb|tpch] [--sf 1] [--streams 1,2,4,8,16] [--rounds 1]
        [--repeat 1] [--config NAME:SPEC ...] [--protocols grpc,pg] [--no-duckdb] [--json FILE] [--quick]

For each configuration (--config) one tessera-server (`--data DIR --threads T`, 127.0.0.1, a free port) is started,
every query is run once alone to warm up and once alone as the reference, then for each N in --streams: N client
sessions (one Python thread each) run their stream of queries together, released by a barrier. DuckDB: one
in-memory database with the same data, `SET threads=T`, N cursors in N threads, the same streams.

--protocols grpc,pg measures each configuration twice on the same server (started with --pg-listen): through the
gRPC Python client (engine NAME) and through psycopg 3 over the PostgreSQL protocol (engine NAME/pg, autocommit,
simple query protocol, text results). The two run one after the other, never at the same time.

Stream i (0-based) of SSB runs the 13 queries in file order starting at query i mod 13; TPC-H stream i runs TPC-H
Appendix A row i+1 (benchmarks/runner/bench_streams.py). Each stream repeats its order --rounds times.
q/s = all queries of all streams / (last finish - barrier release); p50/p95 are per-query latencies measured by
the client (send to last row decoded). Every result of a concurrent run must equal the same engine's result of
the query run alone, and tessera's alone results must equal DuckDB's (benchmarks/runner comparison rules);
differences and errors are printed and make the exit code 1 (a stream stops at its first error).

A configuration is NAME:SPEC, SPEC a ';'-separated list of items:
    --flag value         server flags for this configuration's server (e.g. --policy fcfs)
    name=value           shorthand for SET name = 'value', run by every session after connecting
    any SQL statement    run by every session after connecting, e.g. SET scheduler_policy = 'fcfs'
e.g. --config fair:scheduler_policy=fair --config "fcfs:SET scheduler_policy='fcfs'" --config "hpf:--policy hpf".
scheduler_policy (and admission_threshold) are server-wide: every session setting it sets the same value, and
each configuration gets a server of its own, so one configuration's settings never leak into the next.
See benchmarks/concurrency/README.md.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "runner"))

import bench_data  # noqa: E402
import bench_results  # noqa: E402
import bench_streams  # noqa: E402
from bench_data import SetupError, progress  # noqa: E402

SERVER_CANDIDATES = ["build/server/tessera-server", "build/cli/tessera-server"]
CLIENT_CANDIDATES = ["client/python", "cli/python"]
START_TIMEOUT_S = 60
MAX_PROBLEMS_SHOWN = 20


def first_existing(candidates, test=os.path.exists):
    for candidate in candidates:
        path = os.path.join(ROOT, candidate)
        if test(path):
            return path
    return os.path.join(ROOT, candidates[0])


def import_client():
    directory = first_existing(CLIENT_CANDIDATES, lambda p: os.path.exists(os.path.join(p, "tessera_client.py")))
    sys.path.insert(0, directory)
    try:
        import tessera_client  # noqa: E402 pylint: disable=import-outside-toplevel
    except ImportError as e:
        raise SetupError(f"cannot import tessera_client from {directory}: {e} (pip install grpcio grpcio-tools)")
    return tessera_client


# ----------------------------------------------------------------------------------------------------------------
# configurations


def split_items(spec: str) -> list[str]:
    """SPEC's items: split at ';' outside single or double quotes, stripped, empty ones dropped."""
    items, current, quote = [], [], None
    for c in spec:
        if quote:
            quote = None if c == quote else quote
        elif c in ("'", '"'):
            quote = c
        elif c == ";":
            items.append("".join(current))
            current = []
            continue
        current.append(c)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


class Config:
    """A named tessera configuration: server flags and statements every session runs after connecting."""

    def __init__(self, text: str):
        match = re.match(r"^([\w.+-]+):(.*)$", text, re.S)
        name, spec = (match.group(1), match.group(2)) if match else (None, text)
        self.server_flags: list[str] = []
        self.statements: list[str] = []
        for item in split_items(spec):
            if item.startswith("--"):
                self.server_flags += shlex.split(item)
            elif re.match(r"^[A-Za-z_]\w*\s*=\s*[^\s'\"]+$", item):
                key, value = (s.strip() for s in item.split("=", 1))
                self.statements.append(f"SET {key} = '{value}'")
            else:
                self.statements.append(item)
        self.name = name or (spec.strip() or "default")

    def describe(self) -> str:
        parts = [" ".join(self.server_flags)] if self.server_flags else []
        return "; ".join(parts + self.statements) or "server defaults"


# ----------------------------------------------------------------------------------------------------------------
# the server


class Server:
    """tessera-server on 127.0.0.1 and a free port (it prints the port it got); stopped by its pid."""

    def __init__(self, binary, data_dir, threads, flags, pg=False):
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.args = [binary, "--data", data_dir, "--threads", str(threads), "--listen", "127.0.0.1:0", *flags]
        if pg:
            self.args += ["--pg-listen", "127.0.0.1:0"]
        progress("starting " + " ".join(shlex.quote(a) for a in self.args))
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        # With --pg-listen the PostgreSQL line comes first, then the gRPC one (read by a thread: once the first
        # line is read, the second may already sit in the pipe's buffer, where select() does not see it).
        lines = []

        def read_lines():
            for line in self.process.stdout:
                lines.append(line)
                if "listening on" in line:
                    return

        reader = threading.Thread(target=read_lines, daemon=True)
        reader.start()
        reader.join(START_TIMEOUT_S)
        line = lines[-1] if lines else ""
        if "listening on" not in line:
            self.stop()
            raise SetupError(f"tessera-server did not start: {line.strip()!r} {self.error_tail()}")
        self.target = line.strip().rsplit(" ", 1)[1]
        self.pg_port = next((int(l.strip().rsplit(":", 1)[1]) for l in lines if "PostgreSQL protocol on" in l), None)
        # Keep reading stdout so that the server never blocks writing to it.
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()

    def error_tail(self) -> str:
        self.stderr.seek(0)
        return " ".join(self.stderr.read().strip().splitlines()[-5:])

    def check_alive(self):
        code = self.process.poll()
        if code is not None:
            how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
            return f"tessera-server died ({how}): {self.error_tail()}"
        return None

    def stop(self):
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        return self.process.returncode


# ----------------------------------------------------------------------------------------------------------------
# engines: one session per stream


class TesseraSession:
    def __init__(self, client_module, target, config):
        self.client = client_module.connect(target)
        for statement in config.statements:
            self.client.execute(statement)

    def run(self, sql):
        result = self.client.execute(sql, timeout=3600)
        return result.column_names, [[bench_results.to_text(v) for v in row] for row in result.rows]

    def close(self):
        self.client.close()


class PgSession:
    """One psycopg 3 connection over the PostgreSQL protocol; queries without parameters go through the simple
    query protocol (so a query text may hold several statements), results in text format."""

    def __init__(self, port, config):
        import psycopg  # noqa: E402 pylint: disable=import-outside-toplevel

        self.conn = psycopg.connect(host="127.0.0.1", port=port, user="bench", dbname="bench", autocommit=True)
        for statement in config.statements:
            self.conn.execute(statement)

    def run(self, sql):
        cursor = self.conn.execute(sql)
        if cursor.description is None:
            return None, []
        header = [d.name for d in cursor.description]
        return header, [[bench_results.to_text(v) for v in row] for row in cursor.fetchall()]

    def close(self):
        self.conn.close()


class DuckDBSession:
    def __init__(self, con):
        self.cursor = con.cursor()

    def run(self, sql):
        header, rows = None, []
        for statement in bench_results.split_statements(sql):
            cursor = self.cursor.execute(statement)
            if cursor.description is not None:
                rows = cursor.fetchall()
                header = [d[0] for d in cursor.description]
        return header, [[bench_results.to_text(v) for v in row] for row in rows]

    def close(self):
        self.cursor.close()


def error_text(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def run_alone(session, queries, sqls):
    """Every query once in order: {query id: (header, rows, ms)}; an error is kept as the string."""
    results = {}
    for query in queries:
        start = time.perf_counter()
        try:
            header, rows = session.run(sqls[query.id])
            results[query.id] = (header, rows, (time.perf_counter() - start) * 1000)
        except Exception as e:  # noqa: BLE001: any engine error is reported, not raised
            results[query.id] = error_text(e)
    return results


def run_streams(open_session, orders, sqls):
    """Runs the streams (lists of query ids) concurrently; returns (wall seconds, [(stream, query id, ms, header,
    rows or error)]). Sessions are opened (and configured) before the barrier."""
    count = len(orders)
    sessions = [None] * count
    records = [[] for _ in range(count)]
    ends = [None] * count
    setup_errors = []
    start_time = []
    barrier = threading.Barrier(count, action=lambda: start_time.append(time.perf_counter()))

    def stream(i):
        try:
            sessions[i] = open_session()
        except Exception as e:  # noqa: BLE001
            setup_errors.append(f"stream {i}: cannot open a session: {error_text(e)}")
            barrier.abort()
            return
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            return
        for query_id in orders[i]:
            begin = time.perf_counter()
            try:
                header, rows = sessions[i].run(sqls[query_id])
                records[i].append((i, query_id, (time.perf_counter() - begin) * 1000, header, rows))
            except Exception as e:  # noqa: BLE001: the stream stops at its first error
                records[i].append((i, query_id, (time.perf_counter() - begin) * 1000, None, error_text(e)))
                break
        ends[i] = time.perf_counter()

    threads = [threading.Thread(target=stream, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in sessions:
        if s is not None:
            try:
                s.close()
            except Exception:  # noqa: BLE001
                pass
    if setup_errors:
        raise RuntimeError("; ".join(setup_errors))
    wall = max(e for e in ends if e is not None) - start_time[0]
    return wall, [r for stream_records in records for r in stream_records]


def stream_orders(bench, queries, count, rounds):
    ids = [q.id for q in queries]
    orders = []
    for i in range(count):
        if bench.name == "tpch":
            by_number = {q.number: q.id for q in queries}
            order = [by_number[n] for n in bench_streams.stream_order(i + 1, set(by_number))]
        else:
            start = i % len(ids)
            order = ids[start:] + ids[:start]
        orders.append(order * rounds)
    return orders


def percentile(values, fraction):
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(fraction * len(ordered)))) - 1]


class Engine:
    """One engine or tessera configuration: how to open a stream's session, its alone results, its health."""

    def __init__(self, name, open_session=None, alone=None, check=lambda: None, server=None, error=None):
        self.name, self.open_session, self.alone, self.check = name, open_session, alone, check
        self.server, self.error = server, error

    def cpu_seconds(self) -> float:
        """CPU time used so far by the engine: the server process (user + system, all threads), or for DuckDB,
        which runs inside this process, this whole process (its client threads included)."""
        if self.server is None:
            return time.process_time()
        with open(f"/proc/{self.server.process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(engine, orders, sqls, order_keys):
    """One run of the streams `orders` on `engine`: a dict with the wall time, the latencies, errors, mismatches."""
    count = len(orders)
    try:
        cpu_before = engine.cpu_seconds()
        wall, records = run_streams(engine.open_session, orders, sqls)
        cpu = engine.cpu_seconds() - cpu_before
    except Exception as e:  # noqa: BLE001
        crashed = engine.check()
        return {"streams": count, "wall_s": None, "latencies": [], "per_query": {},
                "errors": [error_text(e)] + ([crashed] if crashed else []), "mismatches": []}
    errors, mismatches, per_query = [], [], {}
    for stream, query_id, ms, header, rows in records:
        if header is None:
            errors.append(f"stream {stream} {query_id}: {rows}")
            continue
        per_query.setdefault(query_id, []).append(ms)
        reference = engine.alone.get(query_id)
        if isinstance(reference, tuple):
            difference = bench_results.compare_results(rows, reference[1], order_keys[query_id], header)
            if difference:
                mismatches.append(f"stream {stream} {query_id}: {difference}")
    crashed = engine.check()
    if crashed:
        errors.insert(0, crashed)
    return {"streams": count, "queries": len(records), "wall_s": wall, "qps": len(records) / wall,
            "cpu_ms_per_query": 1000 * cpu / max(1, len(records)),
            "latencies": [r[2] for r in records if r[3] is not None], "per_query": per_query, "errors": errors,
            "mismatches": mismatches}


def summarize(engine_name, count, runs) -> dict:
    """The runs of one (stream count, engine): median q/s over the repetitions, percentiles over all latencies."""
    latencies = [ms for r in runs for ms in r["latencies"]]
    errors = [e for r in runs for e in r["errors"]]
    per_query = {}
    for r in runs:
        for q, values in r["per_query"].items():
            per_query.setdefault(q, []).extend(values)
    qps = [r["qps"] for r in runs if r.get("qps") and not r["errors"]]
    cpu = [r["cpu_ms_per_query"] for r in runs if r.get("cpu_ms_per_query") is not None and not r["errors"]]
    return {
        "streams": count, "engine": engine_name, "queries": sum(r.get("queries", 0) for r in runs),
        "qps": statistics.median(qps) if qps and not errors else None,
        "qps_runs": [r.get("qps") for r in runs], "wall_s_runs": [r.get("wall_s") for r in runs],
        "cpu_ms_per_query": statistics.median(cpu) if cpu and not errors else None,
        "p50_ms": statistics.median(latencies) if latencies else None,
        "p95_ms": percentile(latencies, 0.95) if latencies else None,
        "per_query_median_ms": {q: statistics.median(v) for q, v in per_query.items()},
        "errors": errors, "mismatches": [m for r in runs for m in r["mismatches"]],
    }


# ----------------------------------------------------------------------------------------------------------------
# the report


def format_table(title, results, engines) -> str:
    duck = {r["streams"]: r for r in results if r["engine"] == "duckdb"}
    header = (f"{'streams':>7} | {'engine/config':<22} | {'q/s':>8} | {'CPU ms/q':>8} | {'p50 ms':>8} | {'p95 ms':>8} | "
              f"{'ratio vs DuckDB':>15}")
    lines = [title, header, "-" * len(header)]
    order = {name: i for i, name in enumerate(engines)}
    for r in sorted(results, key=lambda r: (r["streams"], order.get(r["engine"], 99))):
        if r.get("error") or r.get("qps") is None:
            reason = r.get("error") or (r.get("errors") or ["failed"])[0]
            lines.append(f"{r['streams']:>7} | {r['engine']:<22} | FAILED: {reason}")
            continue
        d = duck.get(r["streams"])
        ratio = "-" if r["engine"] == "duckdb" or not d or not d.get("qps") else f"{d['qps'] / r['qps']:.2f}x"
        mark = "  MISMATCH" if r["mismatches"] else ""
        cpu = f"{r['cpu_ms_per_query']:>8.1f}" if r.get("cpu_ms_per_query") is not None else f"{'-':>8}"
        lines.append(f"{r['streams']:>7} | {r['engine']:<22} | {r['qps']:>8.2f} | {cpu} | {r['p50_ms']:>8.1f} | "
                     f"{r['p95_ms']:>8.1f} | {ratio:>15}{mark}")
    if duck:
        lines.append("ratio vs DuckDB = DuckDB's q/s / this q/s (= wall time relative to DuckDB's): "
                     "below 1.00x is faster than DuckDB")
    lines.append("CPU ms/q = the engine's CPU time over the run / its queries (tessera: the server process; DuckDB: "
                 "this process, its client threads included); steadier than q/s on a loaded machine")
    return "\n".join(lines)


def cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


# ----------------------------------------------------------------------------------------------------------------


def start_tessera(args, config, data_dir, client_module, queries, sqls, order_keys, duck_alone, report, problems):
    """Starts the configuration's server and runs every query alone on it through each protocol (warm-up, then the
    reference); one engine per protocol of --protocols."""
    server = Server(args.server, data_dir, args.threads, config.server_flags, pg="pg" in args.protocols)
    engines = []
    for protocol in args.protocols:
        name = config.name if protocol == "grpc" else f"{config.name}/pg"
        if protocol == "grpc":
            open_session = lambda: TesseraSession(client_module, server.target, config)  # noqa: E731
        else:
            open_session = lambda: PgSession(server.pg_port, config)  # noqa: E731
        engine = Engine(name, server=server, check=server.check_alive)
        engines.append(engine)
        try:
            with client_module.connect(server.target) as c:
                c.health()
            progress(f"{name} ({config.describe()}): every query alone (warm-up, then the reference) ...")
            session = open_session()
            policy = session.run("SHOW scheduler_policy")[1][0][1]
            report["configs"][config.name]["scheduler_policy"] = policy
            progress(f"{name}: SHOW scheduler_policy = {policy}")
            run_alone(session, queries, sqls)
            engine.alone = run_alone(session, queries, sqls)
            session.close()
        except Exception as e:  # noqa: BLE001: a failing configuration is reported; the others still run
            engine.error = f"{type(e).__name__}: {error_text(e)}"
            crashed = server.check_alive()
            problems.append(f"{name}: {engine.error}" + (f"; {crashed}" if crashed else ""))
            continue
        report["tessera_alone_ms"][name] = {q: v[2] for q, v in engine.alone.items() if isinstance(v, tuple)}
        # Answers alone must equal DuckDB's, and the PostgreSQL protocol's must equal gRPC's.
        references = [("duckdb", duck_alone)] + ([(engines[0].name, engines[0].alone)]
                                                 if protocol != "grpc" and engines[0].alone else [])
        for query in queries:
            value = engine.alone[query.id]
            if isinstance(value, str):
                problems.append(f"{name} {query.id} alone: ERROR {value}")
                continue
            for reference_name, reference in references:
                if reference and isinstance(reference.get(query.id), tuple):
                    difference = bench_results.compare_results(value[1], reference[query.id][1],
                                                               order_keys[query.id], value[0])
                    if difference:
                        problems.append(f"{name} {query.id} alone: MISMATCH vs {reference_name}: {difference}")
        engine.open_session = open_session
    return engines


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmark", choices=sorted(bench_data.BENCHMARKS), default="ssb", help="default ssb")
    parser.add_argument("--sf", help="scale factor (default 1; --quick: 0.1)")
    parser.add_argument("--streams", help="stream counts (default 1,2,4,8,16; --quick: 1,2)")
    parser.add_argument("--rounds", type=int, default=1, help="times each stream runs its query order (default 1)")
    parser.add_argument("--config", "--tessera-config", dest="configs", action="append", metavar="NAME:SPEC",
                        help="a tessera configuration (repeatable; default: one, 'default', the server's defaults)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="measure every (stream count, engine) this many times, interleaved; q/s is the median "
                             "(default 1)")
    parser.add_argument("--protocols", default="grpc",
                        help="grpc, pg or grpc,pg: the client paths measured for each configuration (pg: psycopg 3 "
                             "over --pg-listen; default grpc)")
    parser.add_argument("--no-duckdb", action="store_true", help="do not run DuckDB")
    parser.add_argument("--threads", type=int, default=2, help="threads for tessera-server and DuckDB (default 2)")
    parser.add_argument("--quick", action="store_true", help="smoke test: SF 0.1, streams 1,2")
    parser.add_argument("--json", metavar="FILE", help="write the full report as JSON")
    parser.add_argument("--server", default=os.environ.get("TESSERA_SERVER_BIN"),
                        help="tessera-server (default $TESSERA_SERVER_BIN, else the first of "
                             + ", ".join(SERVER_CANDIDATES) + " that exists)")
    parser.add_argument("--tessera", default=os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli",
                                                                                          "tessera")),
                        help="the tessera shell, to load the data directory (default build/cli/tessera, $TESSERA_BIN)")
    parser.add_argument("--ssb-dbgen", default=os.environ.get("SSB_DBGEN", os.path.join(
        ROOT, "build", "benchmarks", "ssb_generator", "ssb-dbgen")), help="the SSB generator")
    parser.add_argument("--cache", default=os.environ.get("TESSERA_BENCH_CACHE", os.path.expanduser("~/.cache/tessera")),
                        help="generated data and loaded data directories (default ~/.cache/tessera, as tessera-bench)")
    parser.add_argument("--data-dir", help="tessera data directory (default CACHE/<benchmark>-sf<SF>-tessera)")
    args = parser.parse_args(argv)
    args.sf = args.sf or ("0.1" if args.quick else "1")
    streams = args.streams or ("1,2" if args.quick else "1,2,4,8,16")
    try:
        args.stream_counts = [int(s) for s in streams.split(",") if s.strip()]
    except ValueError:
        parser.error("--streams takes counts like 1,2,4")
    if not args.stream_counts or min(args.stream_counts) < 1:
        parser.error("--streams takes positive counts like 1,2,4")
    if args.rounds < 1 or args.threads < 1 or args.repeat < 1:
        parser.error("--rounds, --repeat and --threads must be positive")
    args.server = args.server or first_existing(SERVER_CANDIDATES)
    args.protocols = [p.strip() for p in args.protocols.split(",") if p.strip()]
    if not args.protocols or any(p not in ("grpc", "pg") for p in args.protocols) or \
            len(set(args.protocols)) != len(args.protocols):
        parser.error("--protocols takes grpc, pg or grpc,pg")
    args.config_list = [Config(c) for c in (args.configs or ["default:"])]
    names = [c.name for c in args.config_list]
    if len(set(names)) != len(names) or "duckdb" in names or any(n.endswith("/pg") for n in names):
        parser.error("configuration names must be distinct, not 'duckdb' and not end in /pg")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    bench = bench_data.BENCHMARKS[args.benchmark]()
    problems: list[str] = []
    results: list[dict] = []
    engines: list[Engine] = []
    views = None  # hard-linked views of the data directory, one per server after the first
    report = {
        "tool": "streams_benchmark", "benchmark": bench.name, "rounds": args.rounds, "repeat": args.repeat,
        "threads": args.threads,
        "streams": args.stream_counts, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "host": platform.node(),
        "cpu": cpu_model(), "cpu_count": os.cpu_count(), "loadavg_start": list(os.getloadavg()),
        "command": " ".join(shlex.quote(a) for a in sys.argv),
        "configs": {c.name: {"server_flags": c.server_flags, "statements": c.statements} for c in args.config_list},
    }
    try:
        sf = bench_data.format_sf(args.sf)
        report["sf"] = sf
        if not os.access(args.server, os.X_OK):
            raise SetupError(f"{args.server} not found (--server, or build tessera-server)")
        if not os.access(args.tessera, os.X_OK):
            raise SetupError(f"{args.tessera} not found (--tessera: the shell loads the data directory)")
        client_module = import_client()
        os.makedirs(args.cache, exist_ok=True)
        tbl_dir = bench_data.generate(bench, sf, args.cache, args.ssb_dbgen)
        data_dir = os.path.abspath(args.data_dir or os.path.join(args.cache, f"{bench.name}-sf{sf}-tessera"))
        bench_data.ensure_loaded(bench, sf, tbl_dir, data_dir, args.tessera, args.threads)
        queries = bench.all_queries()
        sqls = {q.id: q.sql(sf) for q in queries}
        order_keys = {q.id: bench_results.order_by_keys(sqls[q.id]) for q in queries}
        duck_alone = None
        if not args.no_duckdb:
            con, _ = bench_data.duckdb_connect(bench, tbl_dir, args.threads)
            import duckdb  # noqa: E402 pylint: disable=import-outside-toplevel

            report["duckdb_version"] = duckdb.__version__
            progress("duckdb: every query alone (warm-up, then the reference) ...")
            session = DuckDBSession(con)
            run_alone(session, queries, sqls)
            duck_alone = run_alone(session, queries, sqls)
            session.close()
            for query_id, value in duck_alone.items():
                if isinstance(value, str):
                    problems.append(f"duckdb {query_id} alone: ERROR {value}")
            report["duckdb_alone_ms"] = {q: v[2] for q, v in duck_alone.items() if isinstance(v, tuple)}
            duck = Engine("duckdb", lambda: DuckDBSession(con), duck_alone)
        report["tessera_alone_ms"] = {}
        # One opener per data directory (its LOCK file): every server after the first gets a hard-linked view.
        views = tempfile.mkdtemp(prefix="streams-benchmark-")
        for i, config in enumerate(args.config_list):
            config_dir = data_dir if i == 0 else bench_streams.linked_copy(data_dir, os.path.join(views, f"db{i}"))
            engines += start_tessera(args, config, config_dir, client_module, queries, sqls, order_keys,
                                     duck_alone, report, problems)
        if not args.no_duckdb:
            engines.append(duck)
        runs = {}
        for repetition in range(args.repeat):
            for count in args.stream_counts:
                orders = stream_orders(bench, queries, count, args.rounds)
                # Rotate the engines' order per repetition so that none always runs first (or last).
                shift = (repetition + args.stream_counts.index(count)) % len(engines)
                for engine in engines[shift:] + engines[:shift]:
                    if engine.error:
                        continue
                    progress(f"{engine.name}: {count} stream(s) x {len(orders[0])} queries"
                             + (f" (repetition {repetition + 1} of {args.repeat})" if args.repeat > 1 else "")
                             + " ...")
                    run = measure(engine, orders, sqls, order_keys)
                    runs.setdefault((count, engine.name), []).append(run)
                    progress(f"  {run['queries']} queries in {run['wall_s']:.2f} s = {run['qps']:.1f} q/s"
                             if run["wall_s"] else "  FAILED")
                    for line in (run["errors"] + run["mismatches"])[:5]:
                        progress(f"  {line}")
        for count in args.stream_counts:
            for engine in engines:
                if engine.error:
                    results.append({"streams": count, "engine": engine.name, "error": engine.error})
                    continue
                result = summarize(engine.name, count, runs[(count, engine.name)])
                results.append(result)
                problems += [f"{engine.name}, {count} streams: ERROR {e}" for e in result["errors"]]
                problems += [f"{engine.name}, {count} streams: MISMATCH vs alone: {m}" for m in result["mismatches"]]
        stopped = set()  # a server serves one engine per protocol: checked and stopped once
        for engine in engines:
            if engine.server is not None and id(engine.server) not in stopped:
                stopped.add(id(engine.server))
                crashed = engine.server.check_alive()
                code = engine.server.stop()
                if crashed:
                    if not any(crashed in p for p in problems):
                        problems.append(f"{engine.name}: {crashed}")
                elif code != 0:
                    problems.append(f"{engine.name}: tessera-server exited with {code} on SIGTERM: "
                                    f"{engine.server.error_tail()}")
    except SetupError as e:
        print(f"streams_benchmark: {e}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("streams_benchmark: interrupted", file=sys.stderr)
        return 130
    finally:
        for engine in engines:
            if engine.server is not None:
                engine.server.stop()
        if views is not None:
            shutil.rmtree(views, ignore_errors=True)
    report["loadavg_end"] = list(os.getloadavg())
    report["results"] = results
    report["problems"] = problems
    title = (f"{bench.title} SF{sf}: {len(queries)} queries x {args.rounds} round(s) per stream, "
             + (f"median q/s of {args.repeat} repetitions, " if args.repeat > 1 else "")
             + f"tessera-server --threads {args.threads}"
             + (f" vs DuckDB {report['duckdb_version']} (threads={args.threads})" if "duckdb_version" in report
                else ""))
    report["table"] = format_table(title, results, [e.name for e in engines])
    print(report["table"])
    print(f"load average (1 min) at start {report['loadavg_start'][0]:.2f}, at end {report['loadavg_end'][0]:.2f}, "
          f"on {os.cpu_count()} cores")
    if problems:
        print(f"{len(problems)} problem(s):")
        for problem in problems[:MAX_PROBLEMS_SHOWN]:
            print(f"  {problem}")
        if len(problems) > MAX_PROBLEMS_SHOWN:
            print(f"  ... and {len(problems) - MAX_PROBLEMS_SHOWN} more (all in --json)")
    else:
        checked = sum(r.get("queries", 0) for r in results)
        print(f"answers: all {checked} concurrent results equal their query's result alone"
              + ("; tessera's alone results equal DuckDB's" if "duckdb_version" in report else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        progress(f"wrote {args.json}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
