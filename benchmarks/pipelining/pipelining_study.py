#!/usr/bin/env python3
"""The pipelining study (issue #14, dissertation chapter 4): every TPC-H and SSB query with `SET pipelining = on`
and `off`, interleaved, for wall time, peak temporary memory and work orders.

    python3 benchmarks/pipelining/pipelining_study.py [--benchmarks tpch,ssb] [--sf 1] [--threads 2] [--runs 3]
        [--queries tpch:1,3;ssb:1.1] [--json benchmarks/pipelining/results-sf1.json]

Each query runs in its own shell process (`tessera DATA_DIR --csv --timing --threads N -c ...`): one warm-up per
mode, then `--runs` rounds of both modes, the first mode alternating between rounds (on/off, off/on, ...); the
wall time is the median of the shell's `Time:` lines. Then `--analyze-runs` EXPLAIN ANALYZE rounds (modes
alternating likewise) give the query's peak temporary memory ("memory estimate: ...; actual peak N": the most the
query's buffer-pool account held at once: temporary blocks, hash and aggregation tables, sort buffers, filters;
base-table blocks are not counted) and the work orders of every operator ("actual: work orders N"), each the median
over those runs (the peak depends on how work orders interleave). The answers of the two modes must be equal.

Data comes from the tessera-bench caches (benchmarks/runner/bench_data.py: ~/.cache/tessera/tpch-sf1-tessera, ...);
missing data is generated only with --generate.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "runner"))

import bench_data  # noqa: E402
import bench_results  # noqa: E402

MODES = ("on", "off")
_UNITS = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3, "TiB": 1024 ** 4}
_BYTES = r"([0-9.]+) (B|KiB|MiB|GiB|TiB)"
_OPERATOR = re.compile(r"^#(\d+) (\w+)(.*)$")
_INPUTS = re.compile(r"<- ((?:#\d+ \w+(?:, )?)+)")
_INPUT = re.compile(r"#(\d+) (\w+)")
_WORK_ORDERS = re.compile(r"^actual: work orders (\d+)")
_MEMORY = re.compile(rf"^memory estimate: min {_BYTES}, max {_BYTES}; actual peak {_BYTES}$")
_EXECUTION = re.compile(r"^execution: ([0-9.]+) ms$")


def parse_bytes(number: str, unit: str) -> int:
    """'27.2', 'KiB' -> 27852 (FormatBytes in query_execution/dag_printer.cc prints one decimal)."""
    return round(float(number) * _UNITS[unit])


@dataclass
class OperatorStats:
    id: int
    name: str  # HashJoinProbe, Select, ...
    inputs: list[tuple[int, str]] = field(default_factory=list)  # (producer, 'pipelining' | 'blocking')
    work_orders: int | None = None


@dataclass
class Analysis:
    """What one EXPLAIN ANALYZE printed."""
    operators: list[OperatorStats]
    estimate_min_bytes: int
    estimate_max_bytes: int
    peak_bytes: int
    execution_ms: float | None

    @property
    def work_orders(self) -> int:
        return sum(op.work_orders or 0 for op in self.operators)

    def edges(self, kind: str) -> int:
        return sum(1 for op in self.operators for _, k in op.inputs if k == kind)


def parse_explain_analyze(lines: list[str]) -> Analysis:
    """Parses the plan lines of EXPLAIN ANALYZE (one per row, as the shell prints them, surrounding blanks allowed).
    Raises ValueError when the operator DAG, an operator's work orders or the memory line is missing."""
    operators: list[OperatorStats] = []
    memory = None
    execution_ms = None
    in_dag = False
    for raw in lines:
        line = raw.strip()
        if line == "== operator DAG ==":
            in_dag = True
            continue
        if line.startswith("== "):
            in_dag = False
        if match := _EXECUTION.match(line):
            execution_ms = float(match.group(1))
        if not in_dag:
            continue
        if match := _OPERATOR.match(line):
            op = OperatorStats(int(match.group(1)), match.group(2))
            # Only the part before "; est." names inputs; details in parentheses never contain "<- #".
            head = match.group(3).split("; est.", 1)[0]
            if inputs := _INPUTS.search(head):
                op.inputs = [(int(p), kind) for p, kind in _INPUT.findall(inputs.group(1))]
            operators.append(op)
        elif match := _WORK_ORDERS.match(line):
            if not operators:
                raise ValueError(f"work orders before any operator: {line!r}")
            operators[-1].work_orders = int(match.group(1))
        elif match := _MEMORY.match(line):
            memory = match.groups()
    if not operators:
        raise ValueError("no operator DAG in the EXPLAIN ANALYZE output")
    missing = [f"#{op.id}" for op in operators if op.work_orders is None]
    if missing:
        raise ValueError(f"no 'actual: work orders' for operator {', '.join(missing)}")
    if memory is None:
        raise ValueError("no 'memory estimate: ...; actual peak ...' line")
    return Analysis(operators, parse_bytes(*memory[0:2]), parse_bytes(*memory[2:4]), parse_bytes(*memory[4:6]),
                    execution_ms)


def rounds(runs: int, modes=MODES) -> list[str]:
    """`runs` rounds of every mode, changing which goes first: two modes alternate (on, off, off, on, on, off, ...),
    more rotate (eager, lazy, elastic, lazy, elastic, eager, ...)."""
    order = []
    for i in range(runs):
        if len(modes) == 2:
            order += list(modes) if i % 2 == 0 else list(modes[::-1])
        else:
            k = i % len(modes)
            order += list(modes[k:]) + list(modes[:k])
    return order


def schedule(runs: int, modes=MODES) -> list[tuple[str, bool]]:
    """The (mode, timed) order of one query's runs: a warm-up of each mode, then `runs` rounds."""
    return [(mode, False) for mode in modes] + [(mode, True) for mode in rounds(runs, modes)]


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def median_int(values: list[int]) -> int | None:
    """The median, the lower middle value for an even count (stays one of the measured values)."""
    return statistics.median_low(values) if values else None


def canonical_rows(rows: list[list[str]]) -> list[list[str]]:
    return sorted(rows)


@dataclass
class QueryResult:
    benchmark: str
    query: str
    times_ms: dict[str, list[float]]
    median_ms: dict[str, float | None]
    peak_bytes: dict[str, int | None]  # median over the EXPLAIN ANALYZE runs
    peak_bytes_runs: dict[str, list[int]]
    estimate_max_bytes: dict[str, int | None]
    work_orders: dict[str, int | None]  # median over the EXPLAIN ANALYZE runs
    pipelining_edges: dict[str, int | None]
    blocking_edges: dict[str, int | None]
    rows: int | None = None
    error: str | None = None
    loadavg: float | None = None  # 1-minute load average when the query finished


def run_query(tessera: str, data_dir: str, threads: int, runs: int, bench_name: str, query_id: str, sql: str,
              timeout: float, analyze_runs: int = 3, modes=MODES) -> QueryResult:
    sql = sql.strip().rstrip(";").strip()
    order = schedule(runs, modes)
    args = [tessera, data_dir, "--csv", "--timing", "--threads", str(threads)]
    for mode, _ in order:
        args += ["-c", f"SET pipelining = {mode}", "-c", sql]
    analyze_order = rounds(analyze_runs, modes)
    for mode in analyze_order:
        args += ["-c", f"SET pipelining = {mode}", "-c", f"EXPLAIN ANALYZE {sql}"]
    result = QueryResult(bench_name, query_id, times_ms={m: [] for m in modes}, median_ms={}, peak_bytes={},
                         peak_bytes_runs={m: [] for m in modes}, estimate_max_bytes={}, work_orders={},
                         pipelining_edges={}, blocking_edges={})
    try:
        process = subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        result.error = f"timeout after {timeout:g} s"
        return result
    statements = [s for s in bench_results.parse_tessera_output(process.stdout) if s.time_ms is not None]
    expected = 2 * len(order) + 2 * len(analyze_order)
    if process.returncode != 0 or len(statements) != expected:
        tail = process.stderr.strip().splitlines()[-1:] or [f"exit code {process.returncode}"]
        result.error = f"{len(statements)} of {expected} statements finished: {tail[0]}"
        return result
    answers = {}
    for i, (mode, timed) in enumerate(order):
        output = statements[2 * i + 1]
        if timed:
            result.times_ms[mode].append(output.time_ms)
        answers.setdefault(mode, canonical_rows(output.rows))
    if any(answers[m] != answers[modes[0]] for m in modes):
        result.error = f"pipelining {' and '.join(modes)} returned different answers"
    result.rows = len(answers[modes[0]])
    work_orders = {m: [] for m in modes}
    for j, mode in enumerate(analyze_order):
        output = statements[2 * len(order) + 2 * j + 1]
        try:
            analysis = parse_explain_analyze([row[0] if row else "" for row in output.rows])
        except ValueError as e:
            result.error = result.error or f"EXPLAIN ANALYZE ({mode}): {e}"
            continue
        result.peak_bytes_runs[mode].append(analysis.peak_bytes)
        work_orders[mode].append(analysis.work_orders)
        result.estimate_max_bytes[mode] = analysis.estimate_max_bytes
        result.pipelining_edges[mode] = analysis.edges("pipelining")
        result.blocking_edges[mode] = analysis.edges("blocking")
    for mode in modes:
        result.median_ms[mode] = median(result.times_ms[mode])
        result.peak_bytes[mode] = median_int(result.peak_bytes_runs[mode])
        result.work_orders[mode] = median_int(work_orders[mode])
    result.loadavg = os.getloadavg()[0]
    return result


# --------------------------------------------------------------------------------------------------------------
# report


def ratio(numerator, denominator) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return None
    product = 1.0
    for v in values:
        product *= v ** (1 / len(values))
    return product


def mib(value) -> str:
    return "-" if value is None else f"{value / 2 ** 20:.1f}"


def num(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def summarize(results: list[QueryResult], modes=MODES, baseline: str | None = None) -> dict:
    """Totals per mode and, for every other mode m, the ratios m / baseline (default: the last mode) of the totals
    (`time_ratio_m_baseline`, ...) and their per-query geometric means (`time_ratio_geomean`, ... for the first
    mode; `time_ratio_geomean_m` for each)."""
    baseline = baseline or modes[-1]
    ok = [r for r in results if r.error is None]

    def total(attr: str, mode: str):
        return sum(getattr(r, attr)[mode] or 0 for r in ok)

    summary = {"queries": len(results), "failed": len(results) - len(ok), "modes": list(modes), "baseline": baseline}
    for mode in modes:
        summary[f"time_ms_{mode}"] = total("median_ms", mode)
        summary[f"peak_bytes_{mode}"] = total("peak_bytes", mode)
        summary[f"work_orders_{mode}"] = total("work_orders", mode)
    for mode in [m for m in modes if m != baseline]:
        summary[f"time_ratio_{mode}_{baseline}"] = ratio(summary[f"time_ms_{mode}"], summary[f"time_ms_{baseline}"])
        summary[f"peak_ratio_{mode}_{baseline}"] = ratio(summary[f"peak_bytes_{mode}"],
                                                         summary[f"peak_bytes_{baseline}"])
        summary[f"work_orders_ratio_{mode}_{baseline}"] = ratio(summary[f"work_orders_{mode}"],
                                                                summary[f"work_orders_{baseline}"])
        summary[f"time_ratio_geomean_{mode}"] = geomean(
            [ratio(r.median_ms[mode], r.median_ms[baseline]) for r in ok])
        summary[f"peak_ratio_geomean_{mode}"] = geomean(
            [ratio(r.peak_bytes[mode], r.peak_bytes[baseline]) for r in ok])
    first = [m for m in modes if m != baseline][0]
    summary["time_ratio_geomean"] = summary[f"time_ratio_geomean_{first}"]
    summary["peak_ratio_geomean"] = summary[f"peak_ratio_geomean_{first}"]
    return summary


def format_table(title: str, results: list[QueryResult], summary: dict) -> str:
    """Columns per mode side by side: time, ratio to the baseline, peak memory, ratio, work orders, and the
    pipelining edges of the first mode's DAG."""
    modes = summary.get("modes", list(MODES))
    baseline = summary.get("baseline", modes[-1])
    others = [m for m in modes if m != baseline]
    header = (f"{'query':<6} " + " ".join(f"{m + ' ms':>9}" for m in modes) + " "
              + " ".join(f"{m + '/' + baseline:>7}" for m in others) + " "
              + " ".join(f"{'peak ' + m:>9}" for m in modes) + " "
              + " ".join(f"{m + '/' + baseline:>7}" for m in others) + " "
              + " ".join(f"{'WO ' + m:>6}" for m in modes) + f" {'pipe':>4}  note")
    lines = [title, "", header, "-" * len(header)]
    for r in results:
        lines.append(
            f"{r.query:<6} " + " ".join(num(r.median_ms.get(m), '9.1f') for m in modes) + " "
            + " ".join(num(ratio(r.median_ms.get(m), r.median_ms.get(baseline)), '7.2f') for m in others) + " "
            + " ".join(f"{mib(r.peak_bytes.get(m)):>9}" for m in modes) + " "
            + " ".join(num(ratio(r.peak_bytes.get(m), r.peak_bytes.get(baseline)), '7.2f') for m in others) + " "
            + " ".join(num(r.work_orders.get(m), '6d') for m in modes) + " "
            + f"{num(r.pipelining_edges.get(modes[0]), '4d')}  {r.error or ''}".rstrip())
    lines.append("-" * len(header))
    lines.append(
        f"{'total':<6} " + " ".join(f"{summary[f'time_ms_{m}']:9.1f}" for m in modes) + " "
        + " ".join(num(summary[f"time_ratio_{m}_{baseline}"], '7.2f') for m in others) + " "
        + " ".join(f"{mib(summary[f'peak_bytes_{m}']):>9}" for m in modes) + " "
        + " ".join(num(summary[f"peak_ratio_{m}_{baseline}"], '7.2f') for m in others) + " "
        + " ".join(f"{summary[f'work_orders_{m}']:6d}" for m in modes))
    lines.append(
        f"geometric mean of per-query {', '.join(m + '/' + baseline for m in others)} ratios: time "
        + ", ".join(num(summary[f"time_ratio_geomean_{m}"], '.3f') for m in others) + "; peak memory "
        + ", ".join(num(summary[f"peak_ratio_geomean_{m}"], '.3f') for m in others)
        + (f"; {summary['failed']} failed" if summary["failed"] else ""))
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------------
# main


def parse_query_spec(spec: str | None) -> dict[str, str]:
    """'tpch:1,3;ssb:1.1' -> {'tpch': '1,3', 'ssb': '1.1'}."""
    chosen = {}
    for part in (spec or "").split(";"):
        if not part.strip():
            continue
        name, _, queries = part.partition(":")
        if name.strip() not in bench_data.BENCHMARKS:
            raise bench_data.SetupError(f"--queries: unknown benchmark '{name.strip()}' (tpch or ssb)")
        chosen[name.strip()] = queries.strip()
    return chosen


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmarks", default="tpch,ssb")
    parser.add_argument("--sf", default="1")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="timed rounds of both modes (after a warm-up)")
    parser.add_argument("--analyze-runs", type=int, default=3,
                        help="EXPLAIN ANALYZE rounds of both modes for peak memory and work orders (median)")
    parser.add_argument("--queries", help="e.g. 'tpch:1,3,9,18;ssb:1.1' (default: all of each benchmark)")
    parser.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "tessera"))
    parser.add_argument("--tessera", default=os.path.join(ROOT, "build", "cli", "tessera"))
    parser.add_argument("--ssb-dbgen", default=os.path.join(ROOT, "build", "benchmarks", "ssb_generator", "ssb-dbgen"))
    parser.add_argument("--generate", action="store_true", help="generate and load data that is not cached")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per query (all its runs)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--modes", default="on,off",
                        help="SET pipelining modes compared, e.g. eager,lazy,elastic (on = eager, off = lazy)")
    parser.add_argument("--baseline", help="the mode the others are divided by (default: the last of --modes)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.threads < 1 or args.analyze_runs < 1:
        parser.error("--runs, --analyze-runs and --threads must be positive")
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    baseline = args.baseline or modes[-1]
    if len(modes) < 2 or baseline not in modes:
        parser.error("--modes needs two or more modes, and --baseline one of them")
    try:
        sf = bench_data.format_sf(args.sf)
        specs = parse_query_spec(args.queries)
        names = [n.strip() for n in args.benchmarks.split(",") if n.strip()]
        for name in names:
            if name not in bench_data.BENCHMARKS:
                raise bench_data.SetupError(f"unknown benchmark '{name}' (tpch or ssb)")
        if not os.access(args.tessera, os.X_OK):
            raise bench_data.SetupError(f"{args.tessera} not found (cmake --build build --target tessera)")
        report = {"sf": sf, "threads": args.threads, "runs": args.runs, "analyze_runs": args.analyze_runs, "tessera": os.path.abspath(args.tessera),
                  "loadavg_start": os.getloadavg(), "cpus": os.cpu_count(),
                  "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "benchmarks": {}}
        for name in names:
            bench = bench_data.BENCHMARKS[name]()
            tbl_dir = os.path.join(args.cache, f"{bench.name}-sf{sf}")
            data_dir = os.path.join(args.cache, f"{bench.name}-sf{sf}-tessera")
            if not os.path.exists(os.path.join(tbl_dir, ".complete")) and not args.generate:
                raise bench_data.SetupError(f"no {bench.title} SF{sf} data in {tbl_dir} (pass --generate)")
            tbl_dir = bench_data.generate(bench, sf, args.cache, args.ssb_dbgen)
            bench_data.ensure_loaded(bench, sf, tbl_dir, data_dir, args.tessera, args.threads)
            queries = bench.select(specs.get(name)) if name in specs or not specs else []
            results = []
            for query in queries:
                result = run_query(args.tessera, data_dir, args.threads, args.runs, name, query.id, query.sql(sf),
                                   args.timeout, args.analyze_runs, modes)
                bench_data.progress(
                    f"{bench.title} {query.id}: "
                    + ", ".join(f"{m} {num(result.median_ms.get(m), '.1f')} ms" for m in modes) + "; peak "
                    + " / ".join(f"{m} {mib(result.peak_bytes.get(m))}" for m in modes)
                    + f" MiB, load {num(result.loadavg, '.2f')}" + (f", ERROR {result.error}" if result.error else ""))
                results.append(result)
            if not results:
                continue
            summary = summarize(results, modes, baseline)
            title = (f"{bench.title} SF{sf}, {args.threads} worker threads, pipelining {' vs '.join(modes)}: median of "
                     f"{args.runs} interleaved runs after a warm-up; peak memory and work orders: median of "
                     f"{args.analyze_runs} EXPLAIN ANALYZE each")
            table = format_table(title, results, summary)
            print(table + "\n", flush=True)
            report["benchmarks"][name] = {"summary": summary, "table": table,
                                          "queries": [asdict(r) for r in results]}
        report["loadavg_end"] = os.getloadavg()
        print(f"load average (1, 5, 15 min): start {', '.join(f'{x:.2f}' for x in report['loadavg_start'])}; "
              f"end {', '.join(f'{x:.2f}' for x in report['loadavg_end'])} on {report['cpus']} CPUs")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=2)
                f.write("\n")
        failed = sum(b["summary"]["failed"] for b in report["benchmarks"].values())
        return 1 if failed else 0
    except bench_data.SetupError as e:
        print(f"pipelining_study: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
