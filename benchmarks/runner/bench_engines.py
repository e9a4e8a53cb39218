"""Running one query on each engine: a warm-up and N timed runs, keeping the results.

Tessera: one process per query, the query file given warm-up + N times (`-f q.sql -f q.sql ...`) with --timing, so
every run after the first finds the blocks the warm-up read. The times are tessera's own `Time:` lines (parse +
plan + execute + formatting the result), summed over the statements of the file.
DuckDB: in this process, on a connection holding the same data in memory, timed around execute + fetchall.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field

import bench_results


@dataclass
class QueryRun:
    times_ms: list[float] = field(default_factory=list)  # the timed runs, warm-up excluded
    warmup_ms: float | None = None
    header: list[str] | None = None  # the result of the last run
    rows: list[list[str]] | None = None
    run_results: list[list[list[str]]] = field(default_factory=list)  # every timed run's rows (consistency)
    error: str | None = None  # set when the query failed; times may hold the runs that finished

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def median_ms(self):
        return bench_results.median(self.times_ms) if self.ok else None


# "q.sql:1: " before an error of a statement from a -f file: the runner's own temporary file, not worth showing.
_FILE_PREFIX = re.compile(r"^\S+\.sql:\d+: ")


def _error_from_stderr(stderr: str, returncode: int) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error:") or line.startswith("tessera:")]
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        detail = f" ({errors[-1]})" if errors else (f" ({lines[-1]})" if lines else "")
        return f"crashed with {name}{detail}"
    if errors:
        message = errors[-1]
        message = message[len("Error:"):].strip() if message.startswith("Error:") else message
        return _FILE_PREFIX.sub("", message, count=1)
    return lines[-1] if lines else f"exit code {returncode}"


def collect_runs(statements: list[bench_results.StatementOutput], per_run: int, runs: int, run: QueryRun) -> None:
    """Fills `run` from parsed output of warm-up + `runs` repetitions of a `per_run`-statement file."""
    complete = [s for s in statements if s.time_ms is not None]
    for index in range(min(len(complete) // per_run, runs + 1)):
        chunk = complete[index * per_run:(index + 1) * per_run]
        total = sum(s.time_ms for s in chunk)
        last = chunk[-1]
        if index == 0:
            run.warmup_ms = total
        else:
            run.times_ms.append(total)
            run.run_results.append(last.rows)
        run.header, run.rows = last.header, last.rows


class TesseraEngine:
    """The tessera shell on a data directory of its own, or (`connect`, HOST:PORT) a shell connected to a
    tessera-server, which then holds the data directory, the threads and the memory limit (data_dir is None)."""
    name = "tessera"

    def __init__(self, binary: str, data_dir: str | None, threads: int, memory_limit: int | None = None,
                 timeout: float = 900, connect: str | None = None):
        self.binary, self.data_dir, self.threads = binary, data_dir, threads
        self.memory_limit, self.timeout, self.connect = memory_limit, timeout, connect

    def base_args(self) -> list[str]:
        if self.connect:
            return [self.binary, "--connect", self.connect, "--csv", "--timing"]
        args = [self.binary, self.data_dir, "--csv", "--timing", "--threads", str(self.threads)]
        if self.memory_limit:
            args += ["--memory-limit", str(self.memory_limit)]
        return args

    def run(self, sql_file: str, statements_per_run: int, runs: int) -> QueryRun:
        args = self.base_args() + ["-f", sql_file] * (runs + 1)
        result = QueryRun()
        try:
            process = subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=self.timeout)
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            collect_runs(bench_results.parse_tessera_output(stdout), statements_per_run, runs, result)
            result.error = f"timeout after {self.timeout:g} s"
            return result
        except OSError as e:
            result.error = f"cannot run {self.binary}: {e}"
            return result
        statements = bench_results.parse_tessera_output(process.stdout)
        collect_runs(statements, statements_per_run, runs, result)
        expected = statements_per_run * (runs + 1)
        finished = sum(1 for s in statements if s.time_ms is not None)
        if process.returncode != 0:
            message = _error_from_stderr(process.stderr, process.returncode)
            if finished >= statements_per_run:  # the warm-up passed; say which run broke
                message += f" (in timed run {finished // statements_per_run} of {runs})"
            result.error = message
        elif finished != expected:
            result.error = f"unexpected output: {finished} timed statements, expected {expected}"
        return result


class DuckDBEngine:
    name = "duckdb"

    def __init__(self, connection):
        self.con = connection

    def run(self, sql: str, runs: int) -> QueryRun:
        statements = bench_results.split_statements(sql)
        result = QueryRun()
        for index in range(runs + 1):
            try:
                start = time.perf_counter()
                header, rows = None, None
                for statement in statements:
                    cursor = self.con.execute(statement)
                    if cursor.description is not None:
                        rows = cursor.fetchall()
                        header = [d[0] for d in cursor.description]
                elapsed = (time.perf_counter() - start) * 1000
            except Exception as e:  # duckdb.Error and friends: report, go on
                result.error = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                return result
            texts = [[bench_results.to_text(v) for v in row] for row in rows] if rows is not None else []
            if index == 0:
                result.warmup_ms = elapsed
            else:
                result.times_ms.append(elapsed)
                result.run_results.append(texts)
            result.header, result.rows = header, texts
        return result


def runs_consistent(run: QueryRun, order_keys) -> str | None:
    """None when every timed run returned the same result as the last; else the first difference."""
    for index, rows in enumerate(run.run_results[:-1]):
        difference = bench_results.compare_results(rows, run.rows, order_keys, run.header)
        if difference:
            return f"timed run {index + 1} differs from the last: {difference}"
    return None


def tessera_version(binary: str) -> dict:
    info = {"path": os.path.abspath(binary)}
    try:
        st = os.stat(binary)
        info["mtime"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(st.st_mtime))
        info["bytes"] = st.st_size
    except OSError:
        pass
    return info
