#!/usr/bin/env python3
"""tessera-bench: TPC-H and SSB benchmark runner for tessera, against DuckDB on the same data.

    tessera-bench tpch --sf 1 [--runs 5] [--queries 1,6,14] [--compare duckdb] [--threads N]
                       [--csv FILE] [--json FILE] [--chart FILE.svg] [--data-dir DIR] [--cache DIR]
    tessera-bench ssb --sf 1 ...
    tessera-bench tpch --throughput --streams 1,2,4 --sf 1
    tessera-bench tpcds --sf 1 --compare duckdb     (data, schema and queries from DuckDB's tpcds extension)

Generates the data once (cached), loads it into a tessera data directory once (cached; reloaded when the schema,
the scale factor or the .tbl files change), runs every query in its own tessera process (one warm-up, then --runs
timed runs), verifies the answers (TPC-H SF1: the reference answers; --compare duckdb: DuckDB's own result on the
same files) and prints a table. See benchmarks/runner/README.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
import shutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_data  # noqa: E402
import bench_engines  # noqa: E402
import bench_refresh  # noqa: E402
import bench_report  # noqa: E402
import bench_results  # noqa: E402
import bench_server  # noqa: E402
import bench_streams  # noqa: E402
import bench_tpcds  # noqa: E402
from bench_data import SetupError, progress  # noqa: E402

ROOT = bench_data.ROOT
BENCHMARKS = dict(bench_data.BENCHMARKS, tpcds=bench_tpcds.Tpcds)
# Words for the verification statuses in the table of TPC-DS, whose queries tessera may reject (unsupported SQL).
TPCDS_LABELS = {"ok": "correct", "MISMATCH": "wrong", "FAILED": "rejected"}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="tessera-bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmark", choices=sorted(BENCHMARKS), help="tpch, ssb or tpcds")
    parser.add_argument("--sf", default="1", help="scale factor (default 1)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per query after one warm-up (default 5)")
    parser.add_argument("--queries", help="TPC-H / TPC-DS: 1,6,14 or 1-5; SSB: 1.1,2.3 or a flight like 3 "
                                           "(default: all)")
    parser.add_argument("--compare", choices=["duckdb"], help="also run DuckDB (in-process, in memory)")
    parser.add_argument("--threads", type=int, default=0, help="threads for both engines (default: all cores)")
    parser.add_argument("--csv", metavar="FILE", help="write per-query results as CSV")
    parser.add_argument("--json", metavar="FILE", help="write the full report as JSON")
    parser.add_argument("--chart", metavar="FILE.svg", help="write an SVG bar chart")
    parser.add_argument("--data-dir", help="tessera data directory (default: CACHE/<benchmark>-sf<SF>-tessera)")
    parser.add_argument("--cache", default=os.environ.get("TESSERA_BENCH_CACHE",
                                                          os.path.expanduser("~/.cache/tessera")),
                        help="where generated data and loaded data directories live (default ~/.cache/tessera)")
    parser.add_argument("--tessera", default=os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli",
                                                                                          "tessera")),
                        help="the tessera shell binary (default build/cli/tessera, or $TESSERA_BIN)")
    parser.add_argument("--ssb-dbgen", default=os.path.join(ROOT, "build", "benchmarks", "ssb_generator",
                                                            "ssb-dbgen"), help="the SSB generator binary")
    parser.add_argument("--answers", default=None, help="TPC-H SF1 reference answers (default: "
                                                        "../shared/benchmarks/tpch/answers-sf1)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds allowed to one tessera process (a query's warm-up + runs; default 900, "
                             "TPC-DS 300)")
    parser.add_argument("--memory-limit", type=int, help="passed to tessera as --memory-limit BYTES")
    parser.add_argument("--streamed", action="store_true",
                        help="TPC-DS: keep only dsdgen's tpcds.duckdb (no .tbl files), load tessera through named "
                             "pipes and run DuckDB on that file (default from SF %g)" % bench_tpcds.STREAMED_FROM_SF)
    parser.add_argument("--reload", action="store_true", help="load the data directory again even if up to date")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a query FAILED or MISMATCHed")
    parser.add_argument("--throughput", action="store_true", help="TPC-H throughput test with concurrent streams")
    parser.add_argument("--streams", default="1,2,4", help="stream counts for --throughput (default 1,2,4)")
    parser.add_argument("--refresh", action="store_true",
                        help="--throughput with a refresh stream (RF1 + RF2 per query stream) beside the query "
                             "streams, all on one tessera-server; the answers after each refresh pair are checked "
                             "against DuckDB doing the same")
    parser.add_argument("--one-server", action="store_true",
                        help="--throughput with every stream a client of one tessera-server (as --refresh runs "
                             "them) instead of one tessera process per stream: the baseline of --refresh")
    parser.add_argument("--server", default=os.environ.get("TESSERA_SERVER_BIN",
                                                           os.path.join(ROOT, "build", "server", "tessera-server")),
                        help="the tessera-server binary of --refresh / --one-server (default "
                             "build/server/tessera-server, or $TESSERA_SERVER_BIN)")
    args = parser.parse_args(argv)
    if args.timeout is None:
        args.timeout = 300 if args.benchmark == "tpcds" else 900
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.threads < 0:
        parser.error("--threads must be positive")
    if args.throughput and args.benchmark != "tpch":
        parser.error("--throughput is the TPC-H throughput test (tpch only)")
    if (args.refresh or args.one_server) and not args.throughput:
        parser.error("--refresh and --one-server go with --throughput")
    try:
        args.stream_counts = [int(s) for s in args.streams.split(",") if s.strip()]
    except ValueError:
        parser.error("--streams takes counts like 1,2,4")
    if not args.stream_counts or min(args.stream_counts) < 1:
        parser.error("--streams takes positive counts like 1,2,4")
    return args


def git_commit() -> str | None:
    try:
        result = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                timeout=10)
        return result.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def base_report(args, bench, sf, threads) -> dict:
    return {
        "tool": "tessera-bench",
        "benchmark": bench.name,
        "title": bench.title,
        "sf": sf,
        "runs": args.runs,
        "threads": threads,
        "compare": args.compare,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "tessera": dict(bench_engines.tessera_version(args.tessera), git_commit=git_commit()),
        "loadavg_start": _loadavg(),
    }


def _loadavg():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine_notes(report, args) -> list[str]:
    """Lines that qualify the timings: a busy machine, a tessera binary replaced during the run."""
    notes = []
    report["loadavg_end"] = _loadavg()
    cores = report["cpu_count"] or 1
    start, end = report.get("loadavg_start"), report["loadavg_end"]
    if start and end:
        line = f"load average (1 min) at start {start[0]:.2f}, at end {end[0]:.2f}, on {cores} cores"
        if max(start[0], end[0]) > 0.5 * cores:
            line += ": the machine was busy, timings are noisy"
        notes.append(line)
    now = bench_engines.tessera_version(args.tessera)
    if now.get("mtime") != report["tessera"].get("mtime") or now.get("bytes") != report["tessera"].get("bytes"):
        notes.append(f"WARNING: {args.tessera} changed during the run (rebuilt?); results may mix two builds")
        report["tessera_changed_during_run"] = True
    return notes


def reference_results(bench, query, sf, answers_dir, duck_run):
    """[(name, header, rows)] to verify against."""
    references = []
    answer = bench.reference_answer(query, sf, answers_dir)
    if answer:
        header, rows = bench_results.read_answer_file(answer)
        references.append(("answers-sf1", header, rows))
    if duck_run is not None and duck_run.ok:
        references.append(("duckdb", duck_run.header, duck_run.rows))
    return references


def verify(run: bench_engines.QueryRun, references, order_keys) -> tuple[str, str, list[str]]:
    """(status, detail, reference names): status is ok, MISMATCH, FAILED or unverified."""
    if not run.ok:
        return "FAILED", run.error, []
    problems = []
    consistency = bench_engines.runs_consistent(run, order_keys)
    if consistency:
        problems.append(consistency)
    for name, header, rows in references:
        difference = bench_results.compare_results(run.rows, rows, order_keys, run.header or header)
        if difference:
            problems.append(f"vs {name}: {difference}")
    names = [name for name, _, _ in references]
    if problems:
        return "MISMATCH", "; ".join(problems), names
    return ("ok" if references else "unverified"), "", names


def run_queries(args, bench, sf, threads, tbl_dir, data_dir, queries, workdir, report) -> dict:
    tessera = bench_engines.TesseraEngine(args.tessera, data_dir, threads, args.memory_limit, args.timeout)
    duck = None
    if args.compare == "duckdb":
        if bench.name == "tpcds":
            con, duck_rows = bench_tpcds.duckdb_connect(tbl_dir, threads, on_disk=bench.streamed)
        else:
            con, duck_rows = bench_data.duckdb_connect(bench, tbl_dir, threads)
        import duckdb

        report["duckdb_version"] = duckdb.__version__
        report["duckdb_rows"] = duck_rows
        tessera_rows = report.get("load", {}).get("rows") or {}
        differing = [t for t in bench.tables if t in tessera_rows and tessera_rows[t] != duck_rows.get(t)]
        if differing:
            progress("WARNING: row counts differ between the engines: "
                     + ", ".join(f"{t} tessera {tessera_rows[t]} duckdb {duck_rows.get(t)}" for t in differing))
        duck = bench_engines.DuckDBEngine(con)
    answers_dir = args.answers or bench_data.default_answers_dir()
    labels = TPCDS_LABELS if bench.name == "tpcds" else None
    rows = []
    for query in queries:
        sql = query.sql(sf)
        path = os.path.join(workdir, f"{query.id}.sql")
        with open(path, "w") as f:
            f.write(sql)
        statements = max(1, len(bench_results.split_statements(sql)))
        order_keys = bench_results.order_by_keys(sql)
        progress(f"{query.id}: tessera, 1 warm-up + {args.runs} runs ...")
        t_run = tessera.run(path, statements, args.runs)
        d_run = None
        if duck:
            progress(f"{query.id}: duckdb, 1 warm-up + {args.runs} runs ...")
            d_run = duck.run(sql, args.runs)
        references = reference_results(bench, query, sf, answers_dir, d_run)
        status, detail, against = verify(t_run, references, order_keys)
        if d_run is not None and not d_run.ok:
            detail = (detail + "; " if detail else "") + f"duckdb failed: {d_run.error}"
        t_ms = t_run.median_ms
        d_ms = d_run.median_ms if d_run is not None else None
        row = {
            "query": query.id,
            "file": os.path.relpath(query.path, ROOT),
            "tessera_ms": t_ms,
            "tessera_runs_ms": t_run.times_ms,
            "tessera_warmup_ms": t_run.warmup_ms,
            "duckdb_ms": d_ms,
            "duckdb_runs_ms": d_run.times_ms if d_run is not None else None,
            "duckdb_warmup_ms": d_run.warmup_ms if d_run is not None else None,
            "ratio": t_ms / d_ms if t_ms is not None and d_ms else None,
            "verified": status,
            "detail": detail,
            "verified_against": against,
            "ordered": bool(order_keys),
            "rows": len(t_run.rows) if t_run.ok and t_run.rows is not None else None,
        }
        rows.append(row)
        progress(f"{query.id}: tessera {bench_report.fmt_ms(t_ms)} ms"
                 + (f", duckdb {bench_report.fmt_ms(d_ms)} ms" if duck else "")
                 + f", {bench_report.status_text(row, 160, labels)}")
    report["queries"] = rows
    report["summary"] = bench_report.summarize(rows)
    title = (f"{bench.title} SF{sf}: median of {args.runs} runs after 1 warm-up, {threads} threads"
             + (f", tessera vs DuckDB {report['duckdb_version']}" if duck else ""))
    report["table"] = bench_report.format_table(title, rows, report["summary"], compare=bool(duck), labels=labels)
    return report


def qualify(engine, numbers, paths, statements, timeout):
    """Runs each query once, in one process, restarting after a failure: {number: QueryRun}."""
    results = {}
    pending = list(numbers)
    while pending:
        args = engine.base_args()
        for n in pending:
            args += ["-f", paths[n]]
        try:
            process = subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=timeout)
            stdout, returncode, stderr = process.stdout, process.returncode, process.stderr
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            returncode, stderr = None, ""
        done = [s for s in bench_results.parse_tessera_output(stdout) if s.time_ms is not None]
        index = 0
        finished = 0
        for n in pending:
            chunk = done[index:index + statements[n]]
            if len(chunk) < statements[n]:
                break
            run = bench_engines.QueryRun(times_ms=[sum(s.time_ms for s in chunk)], header=chunk[-1].header,
                                         rows=chunk[-1].rows)
            results[n] = run
            index += statements[n]
            finished += 1
        if finished == len(pending):
            break
        failed = pending[finished]
        error = (f"timeout after {timeout:g} s" if returncode is None
                 else bench_engines._error_from_stderr(stderr, returncode) if returncode != 0
                 else "unexpected output")
        results[failed] = bench_engines.QueryRun(error=error)
        progress(f"  Q{failed:02d} FAILED: {error}")
        pending = pending[finished + 1:]
    return results


def run_throughput(args, bench, sf, threads, data_dir, queries, workdir, report) -> dict:
    engine = bench_engines.TesseraEngine(args.tessera, data_dir, threads, args.memory_limit, args.timeout)
    answers_dir = args.answers or bench_data.default_answers_dir()
    paths, sqls, statements, order_keys = {}, {}, {}, {}
    for query in queries:
        sql = query.sql(sf)
        path = os.path.join(workdir, f"{query.id}.sql")
        with open(path, "w") as f:
            f.write(sql)
        paths[query.number], sqls[query.number] = path, sql
        statements[query.number] = max(1, len(bench_results.split_statements(sql)))
        order_keys[query.number] = bench_results.order_by_keys(sql)
    numbers = [q.number for q in queries]
    progress(f"qualification: every query once in one process ({len(numbers)} queries) ...")
    baseline = qualify(engine, numbers, paths, statements, args.timeout)
    working = [n for n in numbers if baseline[n].ok]
    qualification = []
    for query in queries:
        run = baseline[query.number]
        status, detail, _ = verify(run, reference_results(bench, query, sf, answers_dir, None),
                                   order_keys[query.number])
        qualification.append({"query": query.id, "verified": status, "detail": detail,
                              "single_run_ms": run.times_ms[0] if run.ok else None})
    report["qualification"] = qualification
    report["stream_queries"] = [f"Q{n:02d}" for n in working]
    report["excluded"] = {f"Q{n:02d}": baseline[n].error for n in numbers if not baseline[n].ok}
    if report["excluded"]:
        progress(f"excluded from the streams (they fail): {', '.join(report['excluded'])}")
    results = []
    duck = {}  # the DuckDB database of --refresh, the pairs applied to it so far and its answers after each
    report["one_server"] = bool(args.refresh or args.one_server)
    if working:
        queries_by_number = {n: (paths[n], sqls[n]) for n in working}
        for count in args.stream_counts:
            streams = bench_streams.throughput_streams(count)
            progress(f"throughput: {count} concurrent stream(s) {streams}, {len(working)} queries each ...")
            server, stream_engine, refresh = None, engine, None
            try:
                if report["one_server"]:
                    files_dir = os.path.join(workdir, "refresh-files")
                    os.makedirs(files_dir, exist_ok=True)
                    server = bench_server.TesseraServer(args.server, data_dir, os.path.join(workdir, "server-db"),
                                                        threads, args.memory_limit, files_dir)
                    stream_engine = bench_engines.TesseraEngine(args.tessera, None, threads, None, args.timeout,
                                                                connect=server.target)
                if args.refresh:
                    pairs = [bench_refresh.write_pair(sf, n, files_dir) for n in range(1, count + 1)]
                    refresh = bench_refresh.RefreshStream(stream_engine, pairs, workdir)
                runs = bench_streams.run_streams(stream_engine, queries_by_number, statements, streams, workdir,
                                                 args.timeout * max(1, len(working)), progress,
                                                 on_start=refresh.start if refresh else None)
                # Under refreshes a stream's answers are of whichever version its query started on: checked after.
                results.append(_throughput_result(count, runs, baseline, order_keys, working, sf,
                                                  check_answers=refresh is None))
                r = results[-1]
                if refresh:
                    refresh.join()
                    _add_refresh(r, refresh, count, sf, working)
                    progress(f"  refresh stream: {refresh.elapsed_s:.2f} s" + (f", FAILED: {refresh.error}"
                                                                              if refresh.error else ""))
                    r["refresh"]["verification"] = verify_refreshed(stream_engine, bench, threads, refresh, working,
                                                                     paths, sqls, statements, order_keys,
                                                                     report["tbl_dir"], duck)
                if server and server.died():
                    r["error"] = "; ".join(filter(None, [r["error"], server.died()]))
            finally:
                if server:
                    server.stop()
            progress(f"  {count} stream(s): " + (f"FAILED: {r['error']}" if r["error"] else
                                                  f"{r['elapsed_s']:.2f} s, {r['queries_per_hour']:,.0f} queries/hour"))
    first = next((r for r in results if r["queries_per_hour"]), None)
    for r in results:
        r["scaling"] = r["queries_per_hour"] / first["queries_per_hour"] if first and r["queries_per_hour"] else None
    report["throughput"] = results
    report["table"] = format_throughput(report, threads)
    return report


def _add_refresh(result, refresh, count, sf, working) -> None:
    """Adds the refresh stream to a throughput result: its times, and its end in the measurement interval."""
    result["refresh"] = {"pairs": [p["pair"] for p in refresh.pairs], "elapsed_s": refresh.elapsed_s,
                         "times_ms": refresh.times_ms, "error": refresh.error,
                         "rows": {f"#{p['pair']}": {"orders": p["orders"], "lineitems": p["lineitems"]}
                                  for p in refresh.pairs}}
    if refresh.error:
        result["error"] = "; ".join(filter(None, [result["error"], f"refresh stream: {refresh.error}"]))
        result["queries_per_hour"] = result["throughput_at_size"] = None
        return
    if result["elapsed_s"] is not None and result["queries_per_hour"]:
        elapsed = max(result["elapsed_s"], refresh.elapsed_s)
        result["elapsed_s"] = elapsed
        result["queries_per_hour"] = result["queries"] * 3600 / elapsed
        result["throughput_at_size"] = (count * 22 * 3600 / elapsed * float(sf)) if len(working) == 22 else None


def verify_refreshed(engine, bench, threads, refresh, working, paths, sqls, statements, order_keys, tbl_dir,
                     duck) -> dict:
    """Checks the refreshed server (`engine` is connected to it) against DuckDB doing the same refresh pairs: the
    refresh stream's CHECK_SQL answers after each pair, and every stream query after the last pair (one in-memory
    DuckDB for the whole run: pairs are applied to it in order, its CHECK_SQL answers kept per pair)."""
    if refresh.error:
        return {"status": "not run (the refresh stream failed)"}
    pairs = [p["pair"] for p in refresh.pairs]
    if "con" not in duck:
        duck["con"], _ = bench_data.duckdb_connect(bench, tbl_dir, threads)
        duck["applied"], duck["checks"] = 0, {}
    if duck["applied"] > pairs[-1] or pairs[0] != 1:
        return {"status": "not run (the stream counts must grow for the DuckDB reference)"}
    reference = bench_engines.DuckDBEngine(duck["con"])
    for pair in refresh.pairs:
        if pair["pair"] <= duck["applied"]:
            continue
        rf1, rf2 = bench_refresh.refresh_sql(pair)
        for statement in rf1 + rf2:
            duck["con"].execute(statement)
        duck["applied"] = pair["pair"]
        duck["checks"][pair["pair"]] = [(run.header, run.rows) for run in
                                        (reference.run(sql, 0) for sql in bench_refresh.CHECK_SQL)]
    mismatches = bench_refresh.verify_pair_checks(refresh, duck["checks"])
    verified = 0
    for number in working:
        run = engine.run(paths[number], statements[number], 1)
        expected = reference.run(sqls[number], 0)
        if not run.ok or expected.error:
            mismatches.append(f"Q{number:02d}: {run.error or expected.error}")
            continue
        difference = bench_results.compare_results(run.rows, expected.rows, order_keys[number], run.header)
        if difference:
            mismatches.append(f"Q{number:02d}: {difference}")
        else:
            verified += 1
    progress(f"  after each refresh pair {pairs[0]}..{pairs[-1]}: {len(bench_refresh.CHECK_SQL)} table checks"
             f"{' equal' if not mismatches else ''} DuckDB's; after the last: {verified} of {len(working)} queries "
             f"equal DuckDB's" + (f"; MISMATCH {'; '.join(mismatches[:3])}" if mismatches else ""))
    return {"status": "verified" if not mismatches else "MISMATCH", "verified": verified,
            "pairs_checked": pairs, "mismatches": mismatches}


def _throughput_result(count, runs, baseline, order_keys, working, sf, check_answers=True) -> dict:
    errors = [f"stream {r.stream}: {r.error}" for r in runs if r.error]
    inconsistent = []
    for r in runs if check_answers else []:
        for q, (header, rows) in zip(r.queries, r.results):
            difference = bench_results.compare_results(rows, baseline[q].rows, order_keys[q], header)
            if difference:
                inconsistent.append(f"stream {r.stream} Q{q:02d}: {difference}")
    elapsed = max((r.elapsed_s for r in runs if r.elapsed_s is not None), default=None)
    total_queries = sum(len(r.queries) for r in runs)
    qph = total_queries * 3600 / elapsed if elapsed and not errors else None
    return {
        "streams": count,
        "stream_numbers": [r.stream for r in runs],
        "elapsed_s": elapsed,
        "queries": total_queries,
        "queries_per_hour": qph,
        "throughput_at_size": (count * 22 * 3600 / elapsed * float(sf)) if qph and len(working) == 22 else None,
        "error": "; ".join(errors) or None,
        "inconsistent": inconsistent,
        "per_stream": [{"stream": r.stream, "order": [f"Q{q:02d}" for q in r.queries], "elapsed_s": r.elapsed_s,
                        "sum_query_s": sum(r.times_ms) / 1000, "times_ms": dict(zip((f"Q{q:02d}" for q in r.queries),
                                                                                      r.times_ms)),
                        "error": r.error} for r in runs],
    }


def format_throughput(report, threads) -> str:
    lines = [f"{report['title']} SF{report['sf']} throughput: {len(report['stream_queries'])} queries per stream "
             f"(TPC-H Appendix A order), " + (f"every stream a client of one tessera-server with {threads} threads"
                                               if report.get("one_server") else
                                               f"one tessera process per stream, {threads} threads each")]
    if report["excluded"]:
        lines.append("excluded (FAILED): " + "; ".join(f"{q}: {e}" for q, e in report["excluded"].items()))
    relative = f"vs {report['throughput'][0]['streams']}" if report["throughput"] else "vs"
    header = f"{'streams':>7}  {'Ts (s)':>9}  {'queries/hour':>13}  {relative:>8}  per-stream elapsed (s)"
    lines += [header, "-" * len(header)]
    for r in report["throughput"]:
        per_stream = ", ".join("-" if s["elapsed_s"] is None else f"{s['elapsed_s']:.2f}" for s in r["per_stream"])
        if r["error"]:
            lines.append(f"{r['streams']:>7}  FAILED: {r['error']}")
            continue
        lines.append(f"{r['streams']:>7}  {r['elapsed_s']:>9.2f}  {r['queries_per_hour']:>13,.0f}  "
                     f"{bench_report.fmt_ratio(r['scaling']):>8}  {per_stream}")
        if r["throughput_at_size"]:
            lines[-1] += f"   (Throughput@Size {r['throughput_at_size']:,.1f})"
        if r["inconsistent"]:
            lines.append(f"{'':>7}  MISMATCH vs the single-stream results: {'; '.join(r['inconsistent'][:3])}")
        if r.get("refresh"):
            refresh = r["refresh"]
            times = ", ".join(f"{k} {v:.0f} ms" for k, v in refresh["times_ms"].items())
            check = refresh.get("verification", {})
            lines.append(f"{'':>7}  refresh stream {refresh['elapsed_s']:.2f} s ({times}); answers: "
                         f"{check.get('status', '-')}" + (f" (tables after each of pairs {check['pairs_checked']} "
                                                         f"and {check['verified']} queries after the last equal "
                                                         f"DuckDB's)" if check.get("verified") is not None else ""))
    # Per-query mean time at each stream count: how contention slows each query.
    if report["throughput"]:
        counts = [r for r in report["throughput"] if not r["error"]]
        if counts:
            lines.append("")
            lines.append("mean query time (ms) per stream count:")
            lines.append(f"{'query':<6}" + "".join(f"{str(r['streams']) + ' str':>12}" for r in counts))
            for q in report["stream_queries"]:
                cells = []
                for r in counts:
                    times = [s["times_ms"].get(q) for s in r["per_stream"] if s["times_ms"].get(q) is not None]
                    cells.append(f"{sum(times) / len(times):>12,.1f}" if times else f"{'-':>12}")
                lines.append(f"{q:<6}" + "".join(cells))
    bad = [q for q in report["qualification"] if q["verified"] == "MISMATCH"]
    if bad:
        lines.append("single-stream MISMATCH vs reference: " + "; ".join(f"{q['query']}: {q['detail']}" for q in bad))
    return "\n".join(lines)


def main(argv=None) -> int:
    args = parse_args(argv)
    bench = BENCHMARKS[args.benchmark]()
    try:
        sf = bench_data.format_sf(args.sf)
        threads = args.threads or os.cpu_count() or 1
        if not os.access(args.tessera, os.X_OK):
            raise SetupError(f"{args.tessera} not found; build it with `ninja -C build tessera`")
        os.makedirs(args.cache, exist_ok=True)
        if bench.name == "tpcds":
            # The pinned duckdb and its tpcds extension live in a venv: continue under its python.
            bench_tpcds.reexec_in_venv(args.cache, os.path.abspath(__file__),
                                       sys.argv[1:] if argv is None else list(argv))
            streamed = bench_tpcds.is_streamed(sf, args.streamed)
            tbl_dir = bench_tpcds.generate(sf, args.cache, streamed)
            bench.bind(tbl_dir, streamed)
        else:
            tbl_dir = bench_data.generate(bench, sf, args.cache, args.ssb_dbgen)
        queries = bench.select(args.queries)
        data_dir = os.path.abspath(args.data_dir or os.path.join(args.cache, f"{bench.name}-sf{sf}-tessera"))
        report = base_report(args, bench, sf, threads)
        report.update(tbl_dir=tbl_dir, data_dir=data_dir)
        source = bench_tpcds.StreamedTables(tbl_dir, threads) if getattr(bench, "streamed", False) else None
        report["load"] = bench_data.ensure_loaded(bench, sf, tbl_dir, data_dir, args.tessera, threads, args.reload,
                                                  source, args.memory_limit)
        workdir = tempfile.mkdtemp(prefix="tessera-bench-")
        try:
            if args.throughput:
                if args.compare:
                    progress("note: --compare is ignored by --throughput")
                report = run_throughput(args, bench, sf, threads, data_dir, queries, workdir, report)
            else:
                report = run_queries(args, bench, sf, threads, tbl_dir, data_dir, queries, workdir, report)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    except SetupError as e:
        print(f"tessera-bench: {e}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("tessera-bench: interrupted", file=sys.stderr)
        return 130
    notes = machine_notes(report, args)
    report["notes"] = notes
    print(report["table"])
    for note in notes:
        print(note)
    if args.csv:
        (write_throughput_csv if args.throughput else bench_report.write_csv)(args.csv, report)
    if args.json:
        bench_report.write_json(args.json, report)
    if args.chart:
        svg = bench_report.throughput_chart(report) if args.throughput else bench_report.query_chart(report)
        with open(args.chart, "w") as f:
            f.write(svg)
    for path in (args.csv, args.json, args.chart):
        if path:
            progress(f"wrote {path}")
    if args.strict:
        if args.throughput:
            bad = bool(report["excluded"]) or any(r["error"] or r["inconsistent"] for r in report["throughput"])
        else:
            bad = report["summary"]["failed"] or report["summary"]["mismatch"]
        return 1 if bad else 0
    return 0


def write_throughput_csv(path, report) -> None:
    import csv

    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["benchmark", "sf", "streams", "stream", "query", "position", "time_ms", "stream_elapsed_s",
                         "total_elapsed_s", "queries_per_hour", "threads"])
        for r in report["throughput"]:
            for s in r["per_stream"]:
                for position, (q, ms) in enumerate(s["times_ms"].items(), 1):
                    writer.writerow([report["benchmark"], report["sf"], r["streams"], s["stream"], q, position,
                                     f"{ms:.3f}", "" if s["elapsed_s"] is None else f"{s['elapsed_s']:.3f}",
                                     "" if r["elapsed_s"] is None else f"{r['elapsed_s']:.3f}",
                                     "" if r["queries_per_hour"] is None else f"{r['queries_per_hour']:.1f}",
                                     report["threads"]])


if __name__ == "__main__":
    sys.exit(main())
