"""Benchmarks (tables, schema, queries), data generation and loading, with their caches.

Layout under the cache directory (default ~/.cache/tessera, the same one benchmarks/load/load_benchmark.py uses):

    tpch-sf1/            .tbl files from tpchgen-cli, `.complete` once generation finished
    ssb-sf1/             .tbl files from ssb-dbgen, `.complete` likewise
    tpch-sf1-tessera/    the loaded tessera data directory, `.tessera-bench.json` once the load finished

A data directory is reloaded when its stamp does not match the benchmark, scale factor, schema text or .tbl files.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import bench_results

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STAMP = ".tessera-bench.json"


class SetupError(Exception):
    """Generation or loading failed; the message says what to do."""


_START = time.monotonic()


def progress(message: str) -> None:
    print(f"[tessera-bench {time.monotonic() - _START:7.1f}s] {message}", file=sys.stderr, flush=True)


def format_sf(sf) -> str:
    """'1', '0.01', '10': the canonical spelling used in cache names and reports."""
    try:
        value = Decimal(str(sf))
    except InvalidOperation:
        raise SetupError(f"invalid scale factor {sf!r}")
    if value <= 0:
        raise SetupError(f"scale factor must be positive, not {sf}")
    text = format(value.normalize(), "f")
    return text


@dataclass
class Query:
    id: str  # as shown: Q01, Q1.1
    path: str  # the query file
    number: int | None = None  # TPC-H query number

    def sql(self, sf: str) -> str:
        with open(self.path) as f:
            text = f.read()
        if self.number == 11 and Decimal(sf) != 1:
            # Q11's FRACTION is 0.0001 / SF (TPC-H 2.4.11.3); the file holds the SF1 value.
            # Ten decimals, as qgen prints it: 0.0001 / 30 does not terminate (and as a constant of 28 digits
            # overflowed DECIMAL arithmetic).
            fraction = format((Decimal("0.0001") / Decimal(sf)).quantize(Decimal("1e-10")).normalize(), "f")
            text = re.sub(r"\b0\.0001(?:0*)\b", fraction, text, count=1)
        return text


class Benchmark:
    name: str
    title: str
    tables: list[str]
    copy_options = "DELIMITER '|'"  # of tessera's COPY FROM for the .tbl files

    def __init__(self, root: str = ROOT):
        self.root = root

    @property
    def schema_path(self) -> str:
        return os.path.join(self.root, "benchmarks", self.name, "schema.sql")

    def schema_sql(self) -> str:
        with open(self.schema_path) as f:
            return f.read()

    def all_queries(self) -> list[Query]:
        raise NotImplementedError

    def select(self, spec: str | None) -> list[Query]:
        raise NotImplementedError

    def reference_answer(self, query: Query, sf: str, answers_dir: str | None):
        return None


def select_numbered(queries: list[Query], spec: str | None, title: str, example: str) -> list[Query]:
    """The queries that `spec` names by number (`1,6,14`, `1-5`, `q3`), in the order named; all without a spec.
    queries[n - 1] must be query n."""
    if not spec:
        return queries
    chosen = []
    for part in spec.split(","):
        part = part.strip().lower().lstrip("q")
        if not part:
            continue
        try:
            if "-" in part:
                low, high = (int(x.strip().lstrip("q")) for x in part.split("-", 1))
                numbers = range(low, high + 1)
            else:
                numbers = [int(part)]
        except ValueError:
            raise SetupError(f"bad {title} query '{part}' in --queries (use numbers 1-{len(queries)}, e.g. {example})")
        for n in numbers:
            if not 1 <= n <= len(queries):
                raise SetupError(f"{title} has queries 1 to {len(queries)}, not {n}")
            if queries[n - 1] not in chosen:
                chosen.append(queries[n - 1])
    return chosen


class Tpch(Benchmark):
    name = "tpch"
    title = "TPC-H"
    tables = ["region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]

    def all_queries(self):
        return [Query(f"Q{n:02d}", os.path.join(self.root, "benchmarks", "tpch", "queries", f"q{n:02d}.sql"), n)
                for n in range(1, 23)]

    def select(self, spec):
        return select_numbered(self.all_queries(), spec, self.title, "1,6,14 or 1-5")

    def reference_answer(self, query, sf, answers_dir):
        if answers_dir and Decimal(sf) == 1:
            path = os.path.join(answers_dir, f"q{query.number:02d}.csv")
            if os.path.exists(path):
                return path
        return None


class Ssb(Benchmark):
    name = "ssb"
    title = "SSB"
    tables = ["part", "supplier", "customer", "date", "lineorder"]

    def all_queries(self):
        files = glob.glob(os.path.join(self.root, "benchmarks", "ssb", "queries", "q*.sql"))

        def key(path):
            flight, number = os.path.basename(path)[1:-4].split(".")
            return int(flight), int(number)

        return [Query("Q" + os.path.basename(p)[1:-4], p) for p in sorted(files, key=key)]

    def select(self, spec):
        queries = self.all_queries()
        if not spec:
            return queries
        chosen = []
        for part in spec.split(","):
            part = part.strip().lower().lstrip("q")
            if not part:
                continue
            matched = [q for q in queries if q.id[1:] == part or ("." not in part and q.id[1:].split(".")[0] == part)]
            if not matched:
                raise SetupError(f"no SSB query '{part}' (use 1.1 ... 4.3, or a flight number like 2)")
            chosen += [q for q in matched if q not in chosen]
        return chosen


BENCHMARKS = {"tpch": Tpch, "ssb": Ssb}


def default_answers_dir() -> str | None:
    for candidate in (os.environ.get("TESSERA_BENCH_ANSWERS"),
                      os.path.join(os.path.dirname(ROOT), "shared", "benchmarks", "tpch", "answers-sf1"),
                      os.path.join(ROOT, "shared", "benchmarks", "tpch", "answers-sf1")):
        if candidate and os.path.isdir(candidate):
            return candidate
    return None


# --------------------------------------------------------------------------------------------------------------
# generation


def generate(bench: Benchmark, sf: str, cache: str, ssb_dbgen: str) -> str:
    """The directory holding the benchmark's .tbl files at `sf`, generating them once."""
    directory = os.path.join(cache, f"{bench.name}-sf{sf}")
    if os.path.exists(os.path.join(directory, ".complete")) and all(
            os.path.exists(os.path.join(directory, f"{t}.tbl")) for t in bench.tables):
        return directory
    partial = directory + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    if bench.name == "tpch":
        tool = shutil.which("tpchgen-cli")
        if not tool:
            raise SetupError("tpchgen-cli not found (pip install tpchgen-cli, or scripts/install_deps.sh)")
        command = [tool, "tbl", "-s", sf, "-o", partial]
    else:
        if not os.access(ssb_dbgen, os.X_OK):
            raise SetupError(f"{ssb_dbgen} not found (ninja -C build ssb-dbgen)")
        command = [ssb_dbgen, "--sf", sf, "--output", partial, "--quiet"]
    progress(f"generating {bench.title} SF{sf} into {directory} ({os.path.basename(command[0])}) ...")
    start = time.monotonic()
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise SetupError(f"{' '.join(command)} failed: {result.stderr.strip()[-2000:]}")
    missing = [t for t in bench.tables if not os.path.exists(os.path.join(partial, f"{t}.tbl"))]
    if missing:
        raise SetupError(f"generator did not write {', '.join(t + '.tbl' for t in missing)} into {partial}")
    open(os.path.join(partial, ".complete"), "w").close()
    shutil.rmtree(directory, ignore_errors=True)
    os.rename(partial, directory)
    size = sum(os.path.getsize(os.path.join(directory, f"{t}.tbl")) for t in bench.tables)
    progress(f"generated {size / 1e6:,.0f} MB in {time.monotonic() - start:.1f} s")
    return directory


# --------------------------------------------------------------------------------------------------------------
# loading into tessera


class TblFiles:
    """Where a load reads its tables: one `<table>.tbl` file per table in `tbl_dir` (the default source of
    ensure_loaded). Another source (bench_tpcds.StreamedTables: named pipes fed from DuckDB) offers the same five
    members: `key` (the stamp entry that identifies the data), identity(), open() -> {table: path}, watch(process)
    and close() -> an error or None, and `expected_rows` ({table: rows} to check the load against, or None)."""
    key = "tbl_bytes"
    expected_rows = None

    def __init__(self, bench: Benchmark, tbl_dir: str):
        self.tables = bench.tables
        self.tbl_dir = os.path.abspath(tbl_dir)

    def identity(self) -> dict:
        return {"tbl_dir": self.tbl_dir,
                "tbl_bytes": {t: os.path.getsize(os.path.join(self.tbl_dir, f"{t}.tbl")) for t in self.tables}}

    def open(self) -> dict[str, str]:
        return {t: os.path.join(self.tbl_dir, f"{t}.tbl") for t in self.tables}

    def watch(self, process: subprocess.Popen) -> None:
        pass

    def close(self) -> str | None:
        return None


def _read_stamp(data_dir: str) -> dict | None:
    try:
        with open(os.path.join(data_dir, STAMP)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _tessera_tables(tessera: str, data_dir: str) -> set[str] | None:
    """The tables a data directory holds, or None when tessera cannot open it."""
    try:
        result = subprocess.run([tessera, data_dir, "--csv", "-c", "SHOW TABLES"], capture_output=True, text=True,
                                timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    statements = bench_results.parse_tessera_output(result.stdout)
    if not statements:
        return None
    return {row[0].strip().lower() for row in statements[0].rows if row}


def ensure_loaded(bench: Benchmark, sf: str, tbl_dir: str, data_dir: str, tessera: str, threads: int,
                  reload: bool = False, source=None, memory_limit: int | None = None) -> dict:
    """Loads the tables (from `source`, default the .tbl files of `tbl_dir`) into the tessera data directory unless
    an up-to-date load is there. Returns the stamp. A failed load removes the data directory it began.
    `memory_limit`: tessera's --memory-limit while loading."""
    source = source or TblFiles(bench, tbl_dir)
    wanted = {"benchmark": bench.name, "sf": sf,
              "schema_sha256": hashlib.sha256(bench.schema_sql().encode()).hexdigest(), **source.identity()}
    stamp = _read_stamp(data_dir)
    keys = ("benchmark", "sf", "schema_sha256", source.key)
    if stamp and not reload and all(stamp.get(k) == wanted[k] for k in keys):
        tables = _tessera_tables(tessera, data_dir)
        if tables is not None and set(bench.tables) <= tables:
            progress(f"using the {bench.title} SF{sf} data loaded in {data_dir}")
            return stamp
        progress(f"{data_dir} does not open or lacks tables with this tessera; reloading")
    elif stamp and not reload:
        changed = [k for k in keys if stamp.get(k) != wanted.get(k)]
        progress(f"{data_dir} was loaded with a different {', '.join(changed)}; reloading")
    if os.path.exists(data_dir) and os.listdir(data_dir):
        ours = stamp is not None
        looks_like_tessera = os.path.exists(os.path.join(data_dir, "catalog.tcat"))
        if not ours and not (reload and looks_like_tessera):
            raise SetupError(f"{data_dir} exists and was not loaded by tessera-bench; "
                             "pass --reload to replace it (only a tessera data directory is replaced)")
        shutil.rmtree(data_dir)
    os.makedirs(data_dir, exist_ok=True)
    try:
        rows, seconds = _load(bench, sf, data_dir, tessera, threads, source, memory_limit)
    except BaseException:
        shutil.rmtree(data_dir, ignore_errors=True)
        progress(f"removed the half-loaded {data_dir}")
        raise
    stamp = dict(wanted, rows=rows, load_seconds=round(seconds, 3), tessera=os.path.abspath(tessera),
                 loaded_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    with open(os.path.join(data_dir, STAMP + ".tmp"), "w") as f:
        json.dump(stamp, f, indent=2)
    os.replace(os.path.join(data_dir, STAMP + ".tmp"), os.path.join(data_dir, STAMP))
    return stamp


def _load(bench: Benchmark, sf: str, data_dir: str, tessera: str, threads: int, source,
          memory_limit: int | None) -> tuple[dict, float]:
    """One tessera process: the schema, then COPY per table from `source`. ({table: rows}, seconds)."""
    args = [tessera, data_dir, "--csv", "--timing", "--no-sync"]
    if threads:
        args += ["--threads", str(threads)]
    if memory_limit:
        args += ["--memory-limit", str(memory_limit)]
    args += ["-f", bench.schema_path]
    schema_statements = len(bench_results.split_statements(bench.schema_sql()))
    progress(f"loading {bench.title} SF{sf} into tessera ({data_dir}) ...")
    start = time.monotonic()
    rows: dict[str, int] = {}
    process = None
    try:
        paths = source.open()
        for table in bench.tables:
            args += ["-c", f"COPY {table} FROM {_sql_string(paths[table])} ({bench.copy_options})"]
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        source.watch(process)
        statement = 0
        last_line = ""
        for line in process.stdout:
            line = line.rstrip("\n")
            timing = bench_results.TIME_LINE.match(line)
            if timing:
                if schema_statements <= statement < schema_statements + len(bench.tables):
                    table = bench.tables[statement - schema_statements]
                    match = re.match(r"COPY (\d+)", last_line)
                    rows[table] = int(match.group(1)) if match else -1
                    progress(f"  {table:<10} {rows[table]:>12,} rows in {float(timing.group(1)) / 1000:7.2f} s "
                             f"({time.monotonic() - start:.0f} s elapsed)")
                statement += 1
            last_line = line
        stderr = process.stderr.read()
        process.wait()
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        source_error = source.close()
    if process.returncode != 0 or source_error:
        message = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {process.returncode}"
        raise SetupError(f"loading into {data_dir} failed: {source_error or message}")
    short = [f"{t} {rows.get(t)} of {n}" for t, n in (source.expected_rows or {}).items() if rows.get(t) != n]
    if short:
        raise SetupError(f"loading into {data_dir} failed: rows differ from the source: {', '.join(short)}")
    seconds = time.monotonic() - start
    progress(f"loaded in {seconds:.1f} s")
    return rows, seconds


# --------------------------------------------------------------------------------------------------------------
# loading into DuckDB


def duckdb_connect(bench: Benchmark, tbl_dir: str, threads: int):
    """An in-memory DuckDB database with the benchmark's tables loaded from the same .tbl files."""
    try:
        import duckdb
    except ImportError:
        raise SetupError("--compare duckdb needs the duckdb package (pip install duckdb)")
    con = duckdb.connect(":memory:")
    con.execute(f"SET threads={int(threads)}")
    for statement in bench_results.split_statements(bench.schema_sql()):
        con.execute(statement)
    progress(f"loading {bench.title} into DuckDB {duckdb.__version__} (in memory, {threads} threads) ...")
    start = time.monotonic()
    rows = {}
    for table in bench.tables:
        path = os.path.join(os.path.abspath(tbl_dir), f"{table}.tbl")
        con.execute(f"COPY {table} FROM {_sql_string(path)} (DELIMITER '|', HEADER false)")
        rows[table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    progress(f"DuckDB loaded in {time.monotonic() - start:.1f} s")
    return con, rows
