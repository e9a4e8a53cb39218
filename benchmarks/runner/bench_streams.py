"""The TPC-H throughput test: S concurrent query streams, each its own tessera process on the same data (a hard-linked
view of the data directory per stream after the first: a directory admits one opener at a time), or, when the
engine is connected to a tessera-server (the runner's --refresh and --one-server), each a shell of that server.

Stream order: TPC-H specification, Appendix A ("Ordered Sets"): stream 00 is the power test's order, streams 01..S
run concurrently in the throughput test; stream numbers past 40 wrap around (the table has 41 rows).

How a run works, for S streams:
1. Every stream process starts with `-f WARMUP -f FIFO`: WARMUP is its own stream's queries (untimed; the first
   query after opening a data directory reads its blocks from disk), FIFO a named pipe. After the warm-up the
   process blocks opening the pipe: a barrier.
2. When all S have reported the warm-up's last `Time:` line, the runner writes the timed stream's SQL into every
   pipe at once; that instant is the start of the measurement interval.
3. Each stream's end is when its last `Time:` line arrives. Ts = the last stream's end - start, and
   queries per hour = S * queries / Ts * 3600 (TPC-H's Throughput@Size multiplies that by SF when all 22 ran).

Deviations from the specification, on purpose: the queries use the validation parameters in every stream (qgen
would draw parameters per stream). With --refresh a refresh stream runs beside them (bench_refresh.py).
"""
from __future__ import annotations

import errno
import os
import shutil
import threading
import time
from dataclasses import dataclass, field

import bench_results

# TPC-H specification Appendix A: query order of streams 00 to 40.
STREAM_ORDER = [
    [14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12],
    [21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4],
    [6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21],
    [8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3],
    [5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20],
    [21, 15, 4, 6, 7, 16, 19, 18, 14, 22, 11, 13, 3, 1, 2, 5, 8, 20, 12, 17, 10, 9],
    [10, 3, 15, 13, 6, 8, 9, 7, 4, 11, 22, 18, 12, 1, 5, 16, 2, 14, 19, 20, 17, 21],
    [18, 8, 20, 21, 2, 4, 22, 17, 1, 11, 9, 19, 3, 13, 5, 7, 10, 16, 6, 14, 15, 12],
    [19, 1, 15, 17, 5, 8, 9, 12, 14, 7, 4, 3, 20, 16, 6, 22, 10, 13, 2, 21, 18, 11],
    [8, 13, 2, 20, 17, 3, 6, 21, 18, 11, 19, 10, 15, 4, 22, 1, 7, 12, 9, 14, 5, 16],
    [6, 15, 18, 17, 12, 1, 7, 2, 22, 13, 21, 10, 14, 9, 3, 16, 20, 19, 11, 4, 8, 5],
    [15, 14, 18, 17, 10, 20, 16, 11, 1, 8, 4, 22, 5, 12, 3, 9, 21, 2, 13, 6, 19, 7],
    [1, 7, 16, 17, 18, 22, 12, 6, 8, 9, 11, 4, 2, 5, 20, 21, 13, 10, 19, 3, 14, 15],
    [21, 17, 7, 3, 1, 10, 12, 22, 9, 16, 6, 11, 2, 4, 5, 14, 8, 20, 13, 18, 15, 19],
    [2, 9, 5, 4, 18, 1, 20, 15, 16, 17, 7, 21, 13, 14, 19, 8, 22, 11, 10, 3, 12, 6],
    [16, 9, 17, 8, 14, 11, 10, 12, 6, 21, 7, 3, 15, 5, 22, 20, 1, 13, 19, 2, 4, 18],
    [1, 3, 6, 5, 2, 16, 14, 22, 17, 20, 4, 9, 10, 11, 15, 8, 12, 19, 18, 13, 7, 21],
    [3, 16, 5, 11, 21, 9, 2, 15, 10, 18, 17, 7, 8, 19, 14, 13, 1, 4, 22, 20, 6, 12],
    [14, 4, 13, 5, 21, 11, 8, 6, 3, 17, 2, 20, 1, 19, 10, 9, 12, 18, 15, 7, 22, 16],
    [4, 12, 22, 14, 5, 15, 16, 2, 8, 10, 17, 9, 21, 7, 3, 6, 13, 18, 11, 20, 19, 1],
    [16, 15, 14, 13, 4, 22, 18, 19, 7, 1, 12, 17, 5, 10, 20, 3, 9, 21, 11, 2, 6, 8],
    [20, 14, 21, 12, 15, 17, 4, 19, 13, 10, 11, 1, 16, 5, 18, 7, 8, 22, 9, 6, 3, 2],
    [16, 14, 13, 2, 21, 10, 11, 4, 1, 22, 18, 12, 19, 5, 7, 8, 6, 3, 15, 20, 9, 17],
    [18, 15, 9, 14, 12, 2, 8, 11, 22, 21, 16, 1, 6, 17, 5, 10, 19, 4, 20, 13, 3, 7],
    [7, 3, 10, 14, 13, 21, 18, 6, 20, 4, 9, 8, 22, 15, 2, 1, 5, 12, 19, 17, 11, 16],
    [18, 1, 13, 7, 16, 10, 14, 2, 19, 5, 21, 11, 22, 15, 8, 17, 20, 3, 4, 12, 6, 9],
    [13, 2, 22, 5, 11, 21, 20, 14, 7, 10, 4, 9, 19, 18, 6, 3, 1, 8, 15, 12, 17, 16],
    [14, 17, 21, 8, 2, 9, 6, 4, 5, 13, 22, 7, 15, 3, 1, 18, 16, 11, 10, 12, 20, 19],
    [10, 22, 1, 12, 13, 18, 21, 20, 2, 14, 16, 7, 15, 3, 4, 17, 5, 19, 6, 8, 9, 11],
    [10, 8, 9, 18, 12, 6, 1, 5, 20, 11, 17, 22, 16, 3, 13, 2, 15, 21, 14, 19, 7, 4],
    [7, 17, 22, 5, 3, 10, 13, 18, 9, 1, 14, 15, 21, 19, 16, 12, 8, 6, 11, 20, 4, 2],
    [2, 9, 21, 3, 4, 7, 1, 11, 16, 5, 20, 19, 18, 8, 17, 13, 10, 12, 15, 6, 14, 22],
    [15, 12, 8, 4, 22, 13, 16, 17, 18, 3, 7, 5, 6, 1, 9, 11, 21, 10, 14, 20, 19, 2],
    [15, 16, 2, 11, 17, 7, 5, 14, 20, 4, 21, 3, 10, 9, 12, 8, 13, 6, 18, 19, 22, 1],
    [1, 13, 11, 3, 4, 21, 6, 14, 15, 22, 18, 9, 7, 5, 10, 20, 12, 16, 17, 8, 19, 2],
    [14, 17, 22, 20, 8, 16, 5, 10, 1, 13, 2, 21, 12, 9, 4, 18, 3, 7, 6, 19, 15, 11],
    [9, 17, 7, 4, 5, 13, 21, 18, 11, 3, 22, 1, 6, 16, 20, 14, 15, 10, 8, 2, 12, 19],
    [13, 14, 5, 22, 19, 11, 9, 6, 18, 15, 8, 10, 7, 4, 17, 16, 3, 1, 12, 2, 21, 20],
    [20, 5, 4, 14, 11, 1, 6, 16, 8, 22, 7, 3, 2, 12, 21, 19, 17, 13, 10, 15, 18, 9],
    [3, 7, 14, 15, 6, 5, 21, 20, 18, 10, 4, 16, 19, 1, 13, 9, 8, 17, 11, 12, 22, 2],
    [13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19],
]


def stream_order(stream: int, allowed=None) -> list[int]:
    """TPC-H query numbers in stream `stream`'s order (0 = power test), keeping only `allowed` ones if given."""
    order = STREAM_ORDER[stream % len(STREAM_ORDER)]
    return [q for q in order if allowed is None or q in allowed]


def throughput_streams(count: int) -> list[int]:
    """The stream numbers of a throughput test with `count` streams: 1..count (stream 0 is the power test's)."""
    return list(range(1, count + 1))


@dataclass
class StreamRun:
    stream: int
    queries: list[int]
    times_ms: list[float] = field(default_factory=list)  # tessera's per-query times, in stream order
    elapsed_s: float | None = None  # from the common start to this stream's last result
    results: list = field(default_factory=list)  # (header, rows) per query
    error: str | None = None


class _StreamProcess:
    def __init__(self, args, warmup_statements: int):
        import subprocess

        self.warmup_statements = warmup_statements
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        errors="replace")
        self.lines: list[str] = []
        self.time_arrivals: list[float] = []
        self.warm = threading.Event()
        self.stderr = ""
        self._out = threading.Thread(target=self._read_stdout, daemon=True)
        self._err = threading.Thread(target=self._read_stderr, daemon=True)
        self._out.start()
        self._err.start()

    def _read_stdout(self):
        for line in self.process.stdout:
            self.lines.append(line)
            if bench_results.TIME_LINE.match(line.rstrip("\n")):
                self.time_arrivals.append(time.perf_counter())
                if len(self.time_arrivals) == self.warmup_statements:
                    self.warm.set()
        self.warm.set()  # ended (possibly early): do not wait for it any longer

    def _read_stderr(self):
        self.stderr = self.process.stderr.read()

    def join(self, timeout):
        try:
            self.process.wait(timeout=timeout)
        except Exception:
            self.process.kill()
            self.process.wait()
            raise
        finally:
            self._out.join(5)
            self._err.join(5)


def _release(fifo: str, sql: str, process) -> None:
    """Writes the timed stream into its pipe once the stream process opened it for reading."""
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as e:
            if e.errno != errno.ENXIO or process.poll() is not None:
                return
            time.sleep(0.0005)
    os.set_blocking(fd, True)
    with os.fdopen(fd, "w") as f:
        f.write(sql)


def run_streams(engine, queries_by_number: dict, statements_by_number: dict, streams: list[int], workdir: str,
                timeout: float, log, on_start=None) -> list[StreamRun]:
    """Runs the given streams concurrently (see the module doc); queries_by_number: TPC-H number -> (path, sql).
    `on_start(start)` (optional) is called at the start of the measurement interval (the refresh stream)."""
    allowed = set(queries_by_number)
    runs, processes, timed_sql, copies = [], [], [], []
    for stream in streams:
        order = stream_order(stream, allowed)
        run = StreamRun(stream, order)
        warmup = os.path.join(workdir, f"stream{stream}-warmup.sql")
        with open(warmup, "w") as f:
            f.write("\n".join(_terminated(queries_by_number[q][1]) for q in order))
        fifo = os.path.join(workdir, f"stream{stream}-{os.getpid()}-{time.monotonic_ns()}.fifo")
        os.mkfifo(fifo)
        warmup_statements = sum(statements_by_number[q] for q in order)
        args = engine.base_args()
        if runs and not engine.connect:  # every stream after the first reads its own view of the data directory
            args[args.index(engine.data_dir)] = linked_copy(engine.data_dir, os.path.join(workdir, f"stream{stream}-db"))
            copies.append(args[1])
        processes.append((_StreamProcess(args + ["-f", warmup, "-f", fifo], warmup_statements), fifo))
        timed_sql.append("\n".join(_terminated(queries_by_number[q][1]) for q in order))
        runs.append(run)
    deadline = time.monotonic() + timeout
    for process, _ in processes:
        process.warm.wait(max(0.0, deadline - time.monotonic()))
    log(f"  {len(streams)} stream(s) warm; starting the timed streams")
    start = time.perf_counter()
    if on_start is not None:
        on_start(start)
    writers = [threading.Thread(target=_release, args=(fifo, sql, p.process), daemon=True)
               for (p, fifo), sql in zip(processes, timed_sql)]
    for w in writers:
        w.start()
    for (process, fifo), run in zip(processes, runs):
        try:
            process.join(max(1.0, deadline - time.monotonic()))
        except Exception:
            run.error = f"timeout after {timeout:g} s"
        finally:
            try:
                os.unlink(fifo)
            except OSError:
                pass
        warmup_count = process.warmup_statements
        statements = [s for s in bench_results.parse_tessera_output("".join(process.lines)) if s.time_ms is not None]
        timed = statements[warmup_count:]
        arrivals = process.time_arrivals[warmup_count:]
        index = 0
        for q in run.queries:
            chunk = timed[index:index + statements_by_number[q]]
            if len(chunk) < statements_by_number[q]:
                break
            run.times_ms.append(sum(s.time_ms for s in chunk))
            run.results.append((chunk[-1].header, chunk[-1].rows))
            index += statements_by_number[q]
        if run.error is None and process.process.returncode != 0:
            from bench_engines import _error_from_stderr

            failed_at = run.queries[len(run.times_ms)] if len(run.times_ms) < len(run.queries) else None
            where = f" (Q{failed_at:02d}" + (", warm-up)" if len(statements) < warmup_count else ")") \
                if failed_at else ""
            run.error = _error_from_stderr(process.stderr, process.process.returncode) + where
        if run.error is None and len(run.times_ms) != len(run.queries):
            run.error = f"stream ended after {len(run.times_ms)} of {len(run.queries)} queries"
        if arrivals and run.error is None:
            run.elapsed_s = arrivals[-1] - start
    for copy in copies:
        shutil.rmtree(copy, ignore_errors=True)
    return runs


def linked_copy(data_dir: str, target: str) -> str:
    """A copy of `data_dir` made of hard links (no data copied), without its LOCK file.

    A data directory admits one opener at a time (catalog/README.md: an exclusive flock on LOCK), so concurrent
    read-only streams each open their own view. Nothing a stream does changes the original: the catalog is
    replaced by rename, block files of committed segments are never rewritten, and orphan removal unlinks only the
    copy's links."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(data_dir, target, copy_function=os.link, ignore=lambda d, names: [n for n in names if n == "LOCK"])
    return target


def _terminated(sql: str) -> str:
    sql = sql.rstrip()
    return sql if sql.endswith(";") else sql + ";"
