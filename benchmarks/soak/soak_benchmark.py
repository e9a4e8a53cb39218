#!/usr/bin/env python3
"""Soak test: many sessions for a bounded time against tessera-server, with cancels, abrupt disconnects and
changing priorities; every answer checked, server memory watched (issue #18).

    benchmarks/soak/soak_benchmark.py [--sessions 64] [--minutes 30] [--sf 0.1] [--benchmarks tpch,ssb]
        [--memory-limit 2GB] [--threads 2] [--seed 1] [--json FILE] [--quick]

One tessera-server per benchmark (TPC-H and SSB share table names, so each has its own data directory: a hard-linked
view of the directory the benchmark runner loads, benchmarks/runner/bench_data.py), each started with
--memory-limit. Every query is first run alone on its server: that answer is the reference. Then --sessions Python
threads (session i on benchmark i mod the count) run random queries until --minutes have passed. Each query is
one of:
  plain       execute and compare the answer with the reference (bench_results.compare_results);
  cancel      start, wait a random time (up to 1.5x its time alone), Cancel: the query ends CANCELLED, or completed first with the right answer;
  disconnect  start on a throw-away connection, wait a random time, close the channel without closing the session
              (a client that vanished): the server must free the session (lease) and cancel the query;
and before a query a session sometimes changes its priority (UpdateSession) or runs the query at another priority.
Any other error is unexpected. A sampler reads each server's RSS (/proc/PID/status) every second; the bound is
--memory-limit plus --rss-overhead. At the end each server must be alive, answer Health, and have freed every
session (its open_sessions back to 0 within 20 s).

The report: per benchmark, queries by kind, verified answers, mismatches, unexpected errors (by message), p50/p99
latency of plain queries, RSS over time (a line every --rss-every seconds) and its maximum. Exit code 1 when there
is any unexpected error, mismatch, crash, leaked session or RSS over the bound. See benchmarks/soak/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "runner"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "concurrency"))

import bench_data  # noqa: E402
import bench_results  # noqa: E402
import bench_streams  # noqa: E402
import streams_benchmark  # noqa: E402  (Server, import_client, error_text, percentile)
from bench_data import SetupError, progress  # noqa: E402

KINDS = ("plain", "cancel", "disconnect")
SIZE_SUFFIXES = {"": 1, "B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}


def parse_bytes(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?B?)\s*", text.upper())
    if not match:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size like 2GB or 512MB")
    return int(float(match.group(1)) * SIZE_SUFFIXES[match.group(2)])


def rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class Target:
    """One benchmark's server, its queries and their answers alone."""

    def __init__(self, bench, sf, server, queries, sqls, order_keys):
        self.bench, self.sf, self.server = bench, sf, server
        self.queries, self.sqls, self.order_keys = queries, sqls, order_keys
        self.reference = {}
        self.alone_s = {}  # query id -> seconds alone: cancels and disconnects come within 1.5x of it
        self.rss = []  # (seconds since start, bytes)


class Stats:
    """Counters of one benchmark, shared by its sessions (under `lock`)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.count = {k: 0 for k in KINDS}
        self.verified = 0
        self.cancelled = 0  # cancel kind that ended CANCELLED (the others completed first, and were verified)
        self.priority_changes = 0
        self.latencies_ms = []
        self.mismatches = []
        self.unexpected = {}  # message -> count

    def error(self, message):
        message = re.sub(r"\d+", "N", message)  # one line per kind of error, not per query id
        with self.lock:
            self.unexpected[message] = self.unexpected.get(message, 0) + 1


def check_answer(target, stats, query_id, result):
    header = result.column_names
    rows = [[bench_results.to_text(v) for v in row] for row in result.rows]
    difference = bench_results.compare_results(rows, target.reference[query_id][1], target.order_keys[query_id],
                                               header)
    with stats.lock:
        if difference:
            stats.mismatches.append(f"{query_id}: {difference}")
        else:
            stats.verified += 1


def code_of(error) -> str:
    return getattr(getattr(error, "code", None), "name", None) or str(getattr(error, "code", "?"))


def run_session(index, target, stats, client_module, deadline, args):
    rng = random.Random(args.seed * 1_000_003 + index)
    connect = lambda: client_module.connect(target.server.target, lease_seconds=3)  # noqa: E731
    client = None
    while time.monotonic() < deadline:
        try:
            if client is None:
                client = connect()
            query = rng.choice(target.queries)
            sql = target.sqls[query.id]
            priority = 0
            if rng.random() < args.priority_rate:
                if rng.random() < 0.5:
                    client.set_priority(rng.randint(1, 5))
                else:
                    priority = rng.randint(1, 5)
                with stats.lock:
                    stats.priority_changes += 1
            draw = rng.random()
            kind = "cancel" if draw < args.cancel_rate else (
                "disconnect" if draw < args.cancel_rate + args.disconnect_rate else "plain")
            with stats.lock:
                stats.count[kind] += 1
            if kind == "plain":
                begin = time.perf_counter()
                result = client.execute(sql, priority=priority, timeout=args.query_timeout)
                with stats.lock:
                    stats.latencies_ms.append((time.perf_counter() - begin) * 1000)
                check_answer(target, stats, query.id, result)
            elif kind == "cancel":
                running = client.start(sql, priority=priority, timeout=args.query_timeout)
                time.sleep(rng.uniform(0, min(args.max_wait_s, 1.5 * target.alone_s[query.id])))
                try:
                    running.cancel()
                except client_module.TesseraError as e:
                    if code_of(e) != "NOT_FOUND":  # NOT_FOUND: it finished first; its answer is checked below
                        stats.error(f"Cancel: {code_of(e)}: {streams_benchmark.error_text(e)}")
                try:
                    check_answer(target, stats, query.id, running.result())
                except client_module.TesseraError as e:
                    if code_of(e) != "CANCELLED":
                        raise
                    with stats.lock:
                        stats.cancelled += 1
            else:
                doomed = connect()
                running = doomed.start(sql, priority=priority, timeout=args.query_timeout)
                time.sleep(rng.uniform(0, min(args.max_wait_s, 1.5 * target.alone_s[query.id])))
                doomed._closed.set()  # pylint: disable=protected-access  (stop its lease renewal, as a dead process)
                doomed._channel.close()  # pylint: disable=protected-access  (no CloseSession: the client vanished)
                doomed._channel = None  # pylint: disable=protected-access
        except client_module.TesseraError as e:
            stats.error(f"{code_of(e)}: {streams_benchmark.error_text(e)}")
            if client is not None:
                try:
                    client.close()
                except Exception:  # noqa: BLE001
                    pass
            client = None
        except Exception as e:  # noqa: BLE001: anything else is unexpected too, and the session carries on
            stats.error(f"{type(e).__name__}: {streams_benchmark.error_text(e)}")
            client = None
    if client is not None:
        client.close()


def sample_rss(targets, stop, started, every_s):
    while not stop.wait(every_s):
        for target in targets:
            value = rss_bytes(target.server.process.pid)
            if value is not None:
                target.rss.append((time.monotonic() - started, value))


def open_sessions(client_module, target) -> int | None:
    try:
        with client_module.connect(target.server.target, lease_seconds=0) as c:
            return c.health().open_sessions - 1  # minus this one
    except Exception:  # noqa: BLE001
        return None


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=64, help="concurrent sessions (default 64)")
    parser.add_argument("--minutes", type=float, default=30, help="how long the sessions run (default 30)")
    parser.add_argument("--sf", default=None, help="scale factor, 0.01 to 1 (default 0.1; --quick: 0.01)")
    parser.add_argument("--benchmarks", default="tpch,ssb", help="tpch, ssb or both (default tpch,ssb)")
    parser.add_argument("--memory-limit", type=parse_bytes, default=parse_bytes("2GB"),
                        help="each server's --memory-limit (default 2GB)")
    parser.add_argument("--rss-overhead", type=parse_bytes, default=parse_bytes("512MB"),
                        help="RSS allowed above the memory limit: code, threads, gRPC buffers (default 512MB)")
    parser.add_argument("--threads", type=int, default=2, help="each server's worker threads (default 2)")
    parser.add_argument("--cancel-rate", type=float, default=0.1, help="share of queries cancelled (default 0.1)")
    parser.add_argument("--disconnect-rate", type=float, default=0.05,
                        help="share of queries whose connection is dropped mid-query (default 0.05)")
    parser.add_argument("--priority-rate", type=float, default=0.1,
                        help="share of queries preceded by a priority change (default 0.1)")
    parser.add_argument("--max-wait-s", type=float, default=1.0,
                        help="a cancel or disconnect comes up to this long after the start, and within 1.5x the "
                             "query's time alone (default 1)")
    parser.add_argument("--query-timeout", type=float, default=600, help="client deadline per query (default 600 s)")
    parser.add_argument("--rss-every", type=float, default=60, help="seconds between RSS lines in the report")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="smoke test: SF 0.01, 8 sessions, 20 seconds")
    parser.add_argument("--json", metavar="FILE", help="write the full report as JSON")
    parser.add_argument("--server", default=os.environ.get("TESSERA_SERVER_BIN"),
                        help="tessera-server (default $TESSERA_SERVER_BIN or build/server/tessera-server)")
    parser.add_argument("--tessera", default=os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli",
                                                                                          "tessera")),
                        help="the tessera shell, to load the data directory (default build/cli/tessera)")
    parser.add_argument("--ssb-dbgen", default=os.environ.get("SSB_DBGEN", os.path.join(
        ROOT, "build", "benchmarks", "ssb_generator", "ssb-dbgen")), help="the SSB generator")
    parser.add_argument("--cache", default=os.environ.get("TESSERA_BENCH_CACHE", os.path.expanduser("~/.cache/tessera")),
                        help="generated and loaded data (default ~/.cache/tessera, as tessera-bench)")
    args = parser.parse_args(argv)
    if args.quick:
        args.sf = args.sf or "0.01"
        if "--sessions" not in " ".join(argv or sys.argv):
            args.sessions = 8
        if "--minutes" not in " ".join(argv or sys.argv):
            args.minutes = 20 / 60
        args.rss_every = min(args.rss_every, 5)
    args.sf = args.sf or "0.1"
    args.benchmark_names = [b.strip() for b in args.benchmarks.split(",") if b.strip()]
    if not args.benchmark_names or any(b not in bench_data.BENCHMARKS for b in args.benchmark_names):
        parser.error("--benchmarks takes tpch, ssb or tpch,ssb")
    if args.sessions < 1 or args.minutes <= 0 or args.threads < 1:
        parser.error("--sessions, --minutes and --threads must be positive")
    if args.cancel_rate + args.disconnect_rate > 1:
        parser.error("--cancel-rate + --disconnect-rate must be at most 1")
    args.server = args.server or streams_benchmark.first_existing(streams_benchmark.SERVER_CANDIDATES)
    return args


def mb(n) -> str:
    return f"{n / (1 << 20):.0f}"


def report_lines(args, targets, stats_by, elapsed_s, bound, leaked, crashed) -> list[str]:
    lines = [f"soak: {args.sessions} sessions for {elapsed_s / 60:.1f} min, SF {targets[0].sf}, "
             f"tessera-server --threads {args.threads} --memory-limit {mb(args.memory_limit)} MB per benchmark; "
             f"cancels {args.cancel_rate:.0%}, disconnects {args.disconnect_rate:.0%}, "
             f"priority changes {args.priority_rate:.0%}"]
    header = (f"{'benchmark':<9} | {'queries':>7} | {'plain':>6} | {'cancel':>6} | {'cancelled':>9} | "
              f"{'disconn.':>8} | {'prio':>5} | {'verified':>8} | {'mismatch':>8} | {'unexpected':>10} | "
              f"{'p50 ms':>8} | {'p99 ms':>8} | {'max RSS MB':>10}")
    lines += [header, "-" * len(header)]
    for target in targets:
        s = stats_by[target.bench.name]
        total = sum(s.count.values())
        p50 = f"{statistics.median(s.latencies_ms):.0f}" if s.latencies_ms else "-"
        p99 = f"{streams_benchmark.percentile(s.latencies_ms, 0.99):.0f}" if s.latencies_ms else "-"
        peak = max((v for _, v in target.rss), default=0)
        lines.append(f"{target.bench.name:<9} | {total:>7} | {s.count['plain']:>6} | {s.count['cancel']:>6} | "
                     f"{s.cancelled:>9} | {s.count['disconnect']:>8} | {s.priority_changes:>5} | {s.verified:>8} | "
                     f"{len(s.mismatches):>8} | {sum(s.unexpected.values()):>10} | {p50:>8} | {p99:>8} | "
                     f"{mb(peak):>10}")
    for target in targets:
        points = []
        next_at = 0.0
        for t, value in target.rss:
            if t >= next_at:
                points.append(f"{t / 60:.1f}m {mb(value)}")
                next_at = t + args.rss_every
        lines.append(f"RSS MB over time, {target.bench.name}: " + ", ".join(points))
    lines.append(f"RSS bound (memory limit + overhead) {mb(bound)} MB: "
                 + ("held" if all(max((v for _, v in t.rss), default=0) <= bound for t in targets) else "EXCEEDED"))
    lines.append("sessions after the run: " + ", ".join(
        f"{name} {'?' if n is None else n} open" for name, n in leaked.items()))
    for name, line in crashed.items():
        lines.append(f"{name}: {line}")
    return lines


def main(argv=None) -> int:
    args = parse_args(argv)
    servers, views = [], None
    try:
        if not os.access(args.server, os.X_OK):
            raise SetupError(f"{args.server} not found (--server, or build tessera-server)")
        if not os.access(args.tessera, os.X_OK):
            raise SetupError(f"{args.tessera} not found (--tessera: the shell loads the data directory)")
        client_module = streams_benchmark.import_client()
        sf = bench_data.format_sf(args.sf)
        views = tempfile.mkdtemp(prefix="soak-benchmark-")
        targets = []
        for name in args.benchmark_names:
            bench = bench_data.BENCHMARKS[name]()
            tbl_dir = bench_data.generate(bench, sf, args.cache, args.ssb_dbgen)
            data_dir = os.path.join(args.cache, f"{bench.name}-sf{sf}-tessera")
            bench_data.ensure_loaded(bench, sf, tbl_dir, data_dir, args.tessera, args.threads)
            view = bench_streams.linked_copy(data_dir, os.path.join(views, name))
            server = streams_benchmark.Server(args.server, view, args.threads,
                                              ["--memory-limit", str(args.memory_limit)])
            servers.append(server)
            queries = bench.all_queries()
            sqls = {q.id: q.sql(sf) for q in queries}
            target = Target(bench, sf, server, queries, sqls,
                            {q.id: bench_results.order_by_keys(sqls[q.id]) for q in queries})
            progress(f"{name}: every query alone (the reference answers) ...")
            with client_module.connect(server.target) as c:
                for q in queries:
                    begin = time.perf_counter()
                    result = c.execute(sqls[q.id], timeout=args.query_timeout)
                    target.alone_s[q.id] = time.perf_counter() - begin
                    target.reference[q.id] = (result.column_names,
                                              [[bench_results.to_text(v) for v in row] for row in result.rows])
            targets.append(target)
        stats_by = {t.bench.name: Stats() for t in targets}
        progress(f"{args.sessions} sessions for {args.minutes:g} min ...")
        started = time.monotonic()
        deadline = started + args.minutes * 60
        stop = threading.Event()
        sampler = threading.Thread(target=sample_rss, args=(targets, stop, started, 1.0), daemon=True)
        sampler.start()
        threads = []
        for i in range(args.sessions):
            target = targets[i % len(targets)]
            threads.append(threading.Thread(target=run_session, daemon=True, args=(
                i, target, stats_by[target.bench.name], client_module, deadline, args)))
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            time.sleep(min(30.0, max(1.0, deadline - time.monotonic())))
            done = {n: sum(s.count.values()) for n, s in stats_by.items()}
            progress(f"  {(time.monotonic() - started) / 60:.1f} min: queries {done}, unexpected "
                     f"{ {n: sum(s.unexpected.values()) for n, s in stats_by.items()} }")
        elapsed = time.monotonic() - started
        # Sessions of vanished clients go when their lease (3 s) runs out.
        leaked = {}
        for target in targets:
            for _ in range(20):
                leaked[target.bench.name] = open_sessions(client_module, target)
                if leaked[target.bench.name] == 0:
                    break
                time.sleep(1)
        stop.set()
        sampler.join()
        crashed = {t.bench.name: t.server.check_alive() for t in targets if t.server.check_alive()}
        bound = args.memory_limit + args.rss_overhead
        lines = report_lines(args, targets, stats_by, elapsed, bound, leaked, crashed)
        problems = []
        for target in targets:
            s = stats_by[target.bench.name]
            problems += [f"{target.bench.name}: MISMATCH {m}" for m in s.mismatches]
            problems += [f"{target.bench.name}: {n} x {m}" for m, n in sorted(s.unexpected.items(), key=lambda x: -x[1])]
            if max((v for _, v in target.rss), default=0) > bound:
                problems.append(f"{target.bench.name}: RSS over {mb(bound)} MB")
            if leaked.get(target.bench.name) != 0:
                problems.append(f"{target.bench.name}: {leaked.get(target.bench.name)} sessions still open")
        problems += [f"{n}: {c}" for n, c in crashed.items()]
        for server in servers:
            code = server.stop()
            if code not in (0, None) and not crashed:
                problems.append(f"tessera-server exited with {code} on SIGTERM: {server.error_tail()}")
        print("\n".join(lines))
        print(f"{len(problems)} problem(s)" + (":" if problems else ""))
        for problem in problems[:30]:
            print(f"  {problem}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"tool": "soak_benchmark", "args": {k: v for k, v in vars(args).items()
                                                             if isinstance(v, (int, float, str, list))},
                           "date": time.strftime("%Y-%m-%d %H:%M:%S"), "elapsed_s": elapsed,
                           "cpu_count": os.cpu_count(), "loadavg": list(os.getloadavg()), "table": lines,
                           "rss": {t.bench.name: t.rss for t in targets},
                           "stats": {n: {"count": s.count, "verified": s.verified, "cancelled": s.cancelled,
                                         "priority_changes": s.priority_changes, "mismatches": s.mismatches,
                                         "unexpected": s.unexpected,
                                         "p50_ms": statistics.median(s.latencies_ms) if s.latencies_ms else None,
                                         "p99_ms": streams_benchmark.percentile(s.latencies_ms, 0.99)
                                         if s.latencies_ms else None}
                                     for n, s in stats_by.items()},
                           "problems": problems}, f, indent=1)
        return 1 if problems else 0
    except SetupError as e:
        print(f"soak_benchmark: {e}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("soak_benchmark: interrupted", file=sys.stderr)
        return 130
    finally:
        for server in servers:
            server.stop()
        if views is not None:
            shutil.rmtree(views, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
