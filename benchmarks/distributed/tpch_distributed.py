#!/usr/bin/env python3
"""The cost of distribution on one machine (issue #20): TPC-H on `tessera-server --distributed` with R ranks x W
workers against one server with R*W workers, the same cores. Loads both (once; data directories are kept under
--work), runs each query --runs times after a warm-up through the shell's --connect, the two servers taking turns
run by run (both stay up; the idle one sleeps), so that load from outside falls on both alike, checks every answer
against the reference, and reads the bytes each query exchanged from EXPLAIN ANALYZE ("received N blocks, B
bytes" of every gather, plus "broadcast B bytes" sent to the ranks, plus what each hash split sent and received on
the master).

  benchmarks/distributed/tpch_distributed.py --tbl ~/.cache/tessera/tpch-sf1 \\
      --answers ../shared/benchmarks/tpch/answers-sf1 --ranks 2 --workers 1 --runs 3

Prints one row per query (median seconds of each configuration, their ratio, bytes exchanged, answer check) and
the sums. Times are wall-clock per statement as the client sees it (the same client overhead in both columns).

With --baseline-server (another tessera-server binary, e.g. the commit before a change), a third configuration
takes its turn in the same runs: the same cluster shape from that binary, on its own data directory, so a change's
before / after times and bytes come from one run under the same outside load. With --variant LABEL=FLAGS (repeated)
more clusters of the same shape take their turns, from --server with those flags (e.g. a sweep of
--distributed-split-groups), each on a copy of the cluster's data directory. --extra NAME=SQL adds a query of
one's own, its answer checked against the single server's.
"""
import argparse
import csv
import io
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from test_distributed import PARTITION_KEYS, partitioned_schema  # noqa: E402
from test_tpch_answers import TABLES, matches  # noqa: E402

QUERIES = os.path.join(ROOT, "benchmarks", "tpch", "queries")
# --benchmark ssb: the star schema with lineorder partitioned on its order key and the dimensions replicated;
# its answers are checked against the single server's (whose SSB answers benchmarks/runner checks against DuckDB).
SSB_QUERIES = os.path.join(ROOT, "benchmarks", "ssb", "queries")
SSB_TABLES = ["part", "supplier", "customer", "date", "lineorder"]
SSB_PARTITION_KEYS = {"lineorder": "lo_orderkey"}
EXTRA = {}  # --extra: name -> SQL text
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1")


def start(command, env=None):
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    ready, _, _ = select.select([process.stdout], [], [], 300)
    line = process.stdout.readline() if ready else ""
    if "listening on" not in line:
        process.kill()
        raise SystemExit(f"server did not start: {line!r}")
    return process, "127.0.0.1:" + line.strip().rsplit(":", 1)[1]


def sql(shell, target, statement, timeout=3600):
    result = subprocess.run([shell, "--connect", target, "--csv", "-c", statement], capture_output=True, text=True,
                            timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip())
    return result.stdout


def load(shell, target, tbl_dir, schema, marker, tables=TABLES):
    if os.path.exists(marker):
        return
    sql(shell, target, schema)
    for table in tables:
        began = time.monotonic()
        sql(shell, target, f"COPY {table} FROM '{tbl_dir}/{table}.tbl' (DELIMITER '|')")
        print(f"  loaded {table} in {time.monotonic() - began:.1f} s", file=sys.stderr)
    open(marker, "w").close()


def same_rows(output, reference):
    """The cluster's answer against the single server's: the same rows in any order, DOUBLE values to 9 digits."""
    def normalized(text):
        def field(value):
            return f"{float(value):.9g}" if re.fullmatch(r"-?\d+\.\d{6,}(e-?\d+)?", value) else value
        return sorted([field(value) for value in row] for row in list(csv.reader(io.StringIO(text)))[1:])
    return normalized(output) == normalized(reference)


def check(query, output, answers):
    rows = [row if row else [""] for row in list(csv.reader(io.StringIO(output)))[1:]]
    with open(os.path.join(answers, f"q{query:02d}.csv")) as f:
        expected = [line.rstrip("\n").split("|") for line in f.readlines()[1:]]
    if len(rows) != len(expected):
        return False
    if "order by" not in open(os.path.join(QUERIES, f"q{query:02d}.sql")).read().lower():
        rows.sort()
        expected.sort()
    return all(len(a) == len(e) and all(matches(x, y) for x, y in zip(a, e)) for a, e in zip(rows, expected))


def run_queries(shell, targets, queries, runs, answers):
    """Runs every query on each of `targets` (server, explain?) in turn, run after run, so that load from outside
    falls on all of them alike. Returns one {query: (median s, bytes exchanged, answer ok, of which hash splits)}
    per target. A query
    is a TPC-H number (checked against `answers`, or the first target's answer without them) or an SSB name like
    "1.1" (checked against the first target's answer)."""
    results = [{} for _ in targets]
    for query in queries:
        ssb = isinstance(query, str)
        text = EXTRA[query] if query in EXTRA else open(
            os.path.join(SSB_QUERIES, f"q{query}.sql") if ssb else os.path.join(QUERIES, f"q{query:02d}.sql")).read()
        outputs = [sql(shell, target, text) for target, _ in targets]  # warm-up, and the answers checked
        times = [[] for _ in targets]
        for _ in range(runs):
            for i, (target, _) in enumerate(targets):
                began = time.monotonic()
                sql(shell, target, text)
                times[i].append(time.monotonic() - began)
        for i, (target, explain) in enumerate(targets):
            exchanged = split = 0
            if explain:
                plan = sql(shell, target, "EXPLAIN ANALYZE " + text)
                exchanged = sum(int(b) for b in re.findall(r"received \d+ blocks, (\d+) bytes", plan))
                exchanged += sum(int(b) for b in re.findall(r"broadcast (\d+) bytes", plan))
                # Hash splits: what the master sent to and received from the other ranks (with 2 ranks every
                # byte of the exchange; with more, the traffic between the other ranks is not seen here).
                split = sum(int(a) + int(b) for a, b in re.findall(r"sent (\d+) bytes, received (\d+) bytes", plan))
                exchanged += split
            ok = same_rows(outputs[i], outputs[0]) if ssb or answers is None else check(query, outputs[i], answers)
            results[i][query] = (statistics.median(times[i]), exchanged, ok, split)
        # The medians, and every run's time (a query whose time swings shows it here).
        print(f"  q{query}: " + ", ".join(f"{r[query][0]:.3f} s" for r in results) + "  (runs: " +
              "; ".join(" ".join(f"{t:.2f}" for t in target_times) for target_times in times) + ")", file=sys.stderr)
    return results


def stop(process):
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=300)
    except subprocess.TimeoutExpired:
        process.kill()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tbl", required=True, help="directory of the TPC-H .tbl files")
    parser.add_argument("--answers", help="directory of the reference answers (qNN.csv); without it (e.g. SF10) "
                        "every configuration's answers are checked against the single server's")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1, help="workers per rank")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queries", default="1-22", help="TPC-H query numbers (first-last, or a comma list)")
    parser.add_argument("--variant", action="append", default=[], metavar="LABEL=FLAGS",
                        help="another cluster from --server with these extra flags, taking its turn (repeatable)")
    parser.add_argument("--extra", action="append", default=[], metavar="NAME=SQL",
                        help="a query of one's own, checked against the single server's answer (repeatable)")
    parser.add_argument("--benchmark", choices=["tpch", "ssb"], default="tpch",
                        help="ssb: the 13 SSB queries over --tbl's SSB tables (--answers is then not read)")
    parser.add_argument("--work", default=os.path.join(os.path.expanduser("~"), ".cache", "tessera", "distributed"))
    parser.add_argument("--shell", default=os.path.join(ROOT, "build", "cli", "tessera"))
    parser.add_argument("--server", default=os.path.join(ROOT, "build", "server", "tessera-server"))
    parser.add_argument("--mpirun", default=shutil.which("mpirun"))
    parser.add_argument("--baseline-server", help="a second tessera-server binary run as the same cluster (before / "
                        "after a change)")
    parser.add_argument("--memory-limit-gb", type=float, default=0,
                        help="the single server's --memory-limit; each rank gets this / --ranks (the same memory, as "
                        "the same cores; default: every server chooses its own from /proc/meminfo, which overcommits "
                        "with several servers at SF10)")
    parser.add_argument("--bandwidth-gbit", type=float, default=10.0,
                        help="network bandwidth of the predicted speedup (docs/decisions/0011)")
    args = parser.parse_args()
    if "," in args.queries:
        queries = [int(q) for q in args.queries.split(",")]
    else:
        first, _, last = args.queries.partition("-")
        queries = list(range(int(first), int(last or first) + 1))
    for extra in args.extra:
        name, _, text = extra.partition("=")
        EXTRA[name] = text
        queries.append(name)
    tables, schema, cluster_schema, keys = TABLES, os.path.join(ROOT, "benchmarks", "tpch", "schema.sql"), \
        partitioned_schema(), PARTITION_KEYS
    if args.benchmark == "ssb":
        queries = [name[1:-4] for name in sorted(os.listdir(SSB_QUERIES))]
        tables, schema, cluster_schema, keys = SSB_TABLES, os.path.join(ROOT, "benchmarks", "ssb", "schema.sql"), \
            partitioned_schema("ssb", SSB_PARTITION_KEYS), SSB_PARTITION_KEYS
    tag = os.path.basename(os.path.normpath(args.tbl))
    os.makedirs(args.work, exist_ok=True)

    def memory_flags(share):
        return ["--memory-limit", str(int(args.memory_limit_gb * 1e9 / share))] if args.memory_limit_gb else []

    single_dir = os.path.join(args.work, f"{tag}-single")
    print(f"1 rank x {args.ranks * args.workers} workers", file=sys.stderr)
    single_process, single_target = start([args.server, "--data", single_dir, "--listen", "127.0.0.1:0", "--no-sync",
                                           "--threads", str(args.ranks * args.workers), "--allowed-directories",
                                           args.tbl, *memory_flags(1)])
    cluster_process = None
    baseline_process = None
    variant_processes = []
    try:
        load(args.shell, single_target, args.tbl, open(schema).read(), os.path.join(args.work, f"{tag}-single.loaded"),
             tables)
        def start_cluster(server, name, flags=()):
            print(f"{args.ranks} ranks x {args.workers} workers ({name})", file=sys.stderr)
            process, target = start(
                [args.mpirun, "--oversubscribe", "-np", str(args.ranks), server, "--distributed", "--data",
                 os.path.join(args.work, name), "--listen", "127.0.0.1:0", "--no-sync", "--threads",
                 str(args.workers), "--allowed-directories", args.tbl, *memory_flags(args.ranks), *flags], env=MPI_ENV)
            load(args.shell, target, args.tbl, cluster_schema, os.path.join(args.work, f"{name}.loaded"), tables)
            return process, target

        cluster_process, cluster_target = start_cluster(args.server, f"{tag}-cluster-{args.ranks}")
        targets = [(single_target, False), (cluster_target, True)]
        if args.baseline_server:
            baseline_process, baseline_target = start_cluster(args.baseline_server,
                                                              f"{tag}-cluster-{args.ranks}-baseline")
            targets.append((baseline_target, True))
        for variant in args.variant:
            label, _, flags = variant.partition("=")
            name = f"{tag}-cluster-{args.ranks}-{label}"
            if not os.path.exists(os.path.join(args.work, f"{name}.loaded")):
                # A copy of the loaded cluster (its servers are up, but nothing writes its files after the load).
                shutil.copytree(os.path.join(args.work, f"{tag}-cluster-{args.ranks}"), os.path.join(args.work, name))
                open(os.path.join(args.work, f"{name}.loaded"), "w").close()
            process, target = start_cluster(args.server, name, flags.split())
            variant_processes.append(process)
            targets.append((target, True))
        # The servers stay up (an idle one sleeps) and take turns, so outside load hits them alike.
        results = run_queries(args.shell, targets, queries, args.runs, args.answers)
        single, cluster = results[0], results[1]
        # The baseline and the variants, in the order of `targets`: (label, results).
        others = list(zip((["baseline"] if args.baseline_server else []) +
                          [variant.partition("=")[0] for variant in args.variant], results[2:]))
    finally:
        stop(single_process)
        for process in (cluster_process, baseline_process, *variant_processes):
            if process is not None:
                stop(process)

    print(f"{args.benchmark.upper()} {tag}: 1 rank x {args.ranks * args.workers} workers vs {args.ranks} ranks x {args.workers} workers "
          f"(partitioned: {', '.join(sorted(keys))}); median of {args.runs} runs")
    for label, flags in [(v.partition("=")[0], v.partition("=")[2]) for v in args.variant]:
        print(f"  variant {label}: {flags}")
    extra = "".join(f" {label + ' (s)':>13} {'ratio':>6} {label + ' (MB)':>14}" for label, _ in others)
    print(f"{'query':>5} {'1 rank (s)':>11} {'cluster (s)':>12} {'ratio':>6} {'exchanged (MB)':>15}{extra}  answers")
    for query in queries:
        a, _, ok_a, _ = single[query]
        b, exchanged, ok_b, _ = cluster[query]
        ok = ok_a and ok_b
        columns = ""
        for _, other in others:
            c, other_exchanged, ok_c, _ = other[query]
            ok = ok and ok_c
            columns += f" {c:>13.3f} {c / a:>6.2f} {other_exchanged / 1e6:>14.1f}"
        name = f"q{query}" if isinstance(query, str) else f"q{query:02d}"
        print(f"{name:>5} {a:>11.3f} {b:>12.3f} {b / a:>6.2f} {exchanged / 1e6:>15.1f}{columns}  "
              f"{'ok' if ok else 'MISMATCH'}")
    total_a = sum(single[q][0] for q in queries)
    total_b = sum(cluster[q][0] for q in queries)
    columns = ""
    for _, other in others:
        total_c = sum(other[q][0] for q in queries)
        columns += f" {total_c:>13.3f} {total_c / total_a:>6.2f} {sum(other[q][1] for q in queries) / 1e6:>14.1f}"
    print(f"{'sum':>5} {total_a:>11.3f} {total_b:>12.3f} {total_b / total_a:>6.2f} "
          f"{sum(cluster[q][1] for q in queries) / 1e6:>15.1f}{columns}")
    print_predicted_speedup(single, cluster, queries, args.ranks, args.bandwidth_gbit)


def print_predicted_speedup(single, cluster, queries, ranks, bandwidth_gbit):
    """The predicted speedup on 2, 4 and 8 nodes (docs/decisions/0011, assumptions (a)-(c)): T1 / (T1 / N +
    bytes_N / bandwidth), T1 the single server's time, bytes_N the bytes on the master's link with N nodes, from
    what this run measured with `ranks` ranks: gathers and broadcasts scaled by (N - 1) / (ranks - 1) (the master
    receives from and sends to every other rank; exact for broadcasts and gathers of partial groups, an upper
    bound for gathers of rows), hash splits by ((N - 1) / N^2) / ((ranks - 1) / ranks^2) (each node sends
    (N - 1) / N of its 1 / N of the split input and receives as much, on its own link, all links at once)."""
    if ranks < 2:
        return
    bytes_per_second = bandwidth_gbit * 1e9 / 8
    nodes = (2, 4, 8)

    def predicted_time(query, n):
        _, exchanged, _, split = cluster[query]
        link = (exchanged - split) * (n - 1) / (ranks - 1) + split * ((n - 1) / n**2) / ((ranks - 1) / ranks**2)
        return single[query][0] / n + link / bytes_per_second

    print(f"predicted speedup at {bandwidth_gbit:g} Gbit/s (bytes of {ranks} ranks: gathers and broadcasts scaled "
          f"by (N - 1) / {ranks - 1}, hash splits by (N - 1) / N^2 per link)")
    print(f"{'query':>5} {'gathered + broadcast (MB)':>26} {'split (MB)':>11} " +
          " ".join(f"{f'{n} nodes':>8}" for n in nodes))
    for query in queries:
        name = f"q{query}" if isinstance(query, str) else f"q{query:02d}"
        _, exchanged, _, split = cluster[query]
        print(f"{name:>5} {(exchanged - split) / 1e6:>26.1f} {split / 1e6:>11.1f} " +
              " ".join(f"{single[query][0] / predicted_time(query, n):>7.2f}x" for n in nodes))
    total = sum(single[q][0] for q in queries)
    gathered = sum(cluster[q][1] - cluster[q][3] for q in queries)
    split = sum(cluster[q][3] for q in queries)
    print(f"{'sum':>5} {gathered / 1e6:>26.1f} {split / 1e6:>11.1f} " +
          " ".join(f"{total / sum(predicted_time(q, n) for q in queries):>7.2f}x" for n in nodes))


if __name__ == "__main__":
    main()
