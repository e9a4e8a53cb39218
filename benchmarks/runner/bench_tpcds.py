"""TPC-DS: the benchmark's data, schema and 99 queries from DuckDB's tpcds extension, in a private venv.

The extension (dsdgen and the query texts) ships in the PyPI package `duckdb-extension-tpcds`, built for one DuckDB
version, so the runner keeps a venv with exactly that pair under the cache directory and re-runs itself with the
venv's python for `tessera-bench tpcds` (`reexec_in_venv`). Layout under the cache directory:

    tpcds-venv-1.5.5/      python venv with duckdb==1.5.5 and duckdb-extension-tpcds==1.5.5, `.complete` once set up
    tpcds-sf1/             tpcds.duckdb (dsdgen's database), one .tbl per table ('|' after every field, NULL = \\N),
                           schema.sql (the tables in tessera's types), queries/q01.sql ... q99.sql, `.complete`
    tpcds-sf1-tessera/     the loaded tessera data directory (bench_data.ensure_loaded, as for TPC-H)

Streamed (`is_streamed`: `--streamed`, or SF >= STREAMED_FROM_SF): `tpcds-sf10/` holds no .tbl files; the load
reads every table through a named pipe that a writer process fills from tpcds.duckdb (StreamedTables), and
`--compare duckdb` queries tpcds.duckdb on disk instead of an in-memory copy.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from bench_data import Benchmark, Query, SetupError, progress, select_numbered

DUCKDB_VERSION = "1.5.5"
VENV_PACKAGES = [f"duckdb=={DUCKDB_VERSION}", f"duckdb-extension-tpcds=={DUCKDB_VERSION}"]
# Set in the environment of the re-executed runner, so that a venv whose python is a symlink to the system one
# is not re-entered forever.
VENV_MARKER = "TESSERA_BENCH_TPCDS_VENV"

TABLES = ["call_center", "catalog_page", "catalog_returns", "catalog_sales", "customer", "customer_address",
          "customer_demographics", "date_dim", "household_demographics", "income_band", "inventory", "item",
          "promotion", "reason", "ship_mode", "store", "store_returns", "store_sales", "time_dim", "warehouse",
          "web_page", "web_returns", "web_sales", "web_site"]


def venv_dir(cache: str) -> str:
    return os.path.join(cache, f"tpcds-venv-{DUCKDB_VERSION}")


def venv_python(cache: str) -> str:
    return os.path.join(venv_dir(cache), "bin", "python")


def ensure_venv(cache: str) -> str:
    """The python of the venv holding the pinned duckdb and tpcds extension, creating it once."""
    directory = venv_dir(cache)
    if os.path.exists(os.path.join(directory, ".complete")):
        return venv_python(cache)
    shutil.rmtree(directory, ignore_errors=True)
    progress(f"creating {directory} with {', '.join(VENV_PACKAGES)} ...")
    try:
        subprocess.run([sys.executable, "-m", "venv", directory], check=True, capture_output=True, text=True)
        subprocess.run([venv_python(cache), "-m", "pip", "install", "--quiet", *VENV_PACKAGES], check=True,
                       capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        shutil.rmtree(directory, ignore_errors=True)
        raise SetupError(f"setting up the TPC-DS venv failed: {' '.join(e.cmd)}: "
                         f"{(e.stderr or e.stdout or '').strip()[-2000:]}")
    open(os.path.join(directory, ".complete"), "w").close()
    return venv_python(cache)


def reexec_in_venv(cache: str, script: str, argv: list[str]) -> None:
    """Replaces this process by the runner under the venv's python, unless it already is that."""
    if os.environ.get(VENV_MARKER):
        return
    python = ensure_venv(cache)
    os.environ[VENV_MARKER] = "1"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(python, [python, script, *argv])


def extension_path() -> str:
    try:
        import duckdb_extension_tpcds
    except ImportError:
        raise SetupError("the duckdb-extension-tpcds package is missing (run tessera-bench tpcds, which sets "
                         "up its venv, or pip install " + " ".join(VENV_PACKAGES) + ")")
    package = os.path.dirname(duckdb_extension_tpcds.__file__)
    found = sorted(glob.glob(os.path.join(package, "extensions", "*", "tpcds.duckdb_extension")))
    if not found:
        raise SetupError(f"no tpcds.duckdb_extension under {package}")
    return found[-1]


def duckdb_with_tpcds(path: str = ":memory:", read_only: bool = False):
    """A DuckDB connection with the tpcds extension loaded."""
    import duckdb

    con = duckdb.connect(path, read_only=read_only, config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{extension_path()}'")
    return con


# DuckDB's type names (information_schema.columns.data_type) as tessera's CREATE TABLE types.
_TYPE_PATTERNS = [
    (r"BIGINT|HUGEINT|UBIGINT", "BIGINT"),
    (r"INTEGER|SMALLINT|TINYINT|UINTEGER|USMALLINT|UTINYINT", "INTEGER"),
    (r"DOUBLE|FLOAT|REAL", "DOUBLE"),
    (r"DECIMAL\(\d+,\d+\)", None),  # as is
    (r"VARCHAR(\(\d+\))?", None),
    (r"DATE", "DATE"),
    (r"TIMESTAMP", "TIMESTAMP"),
    (r"BOOLEAN", "BOOLEAN"),
]


def tessera_type(duckdb_type: str) -> str:
    for pattern, replacement in _TYPE_PATTERNS:
        if re.fullmatch(pattern, duckdb_type):
            return replacement or duckdb_type
    raise SetupError(f"no tessera type for DuckDB's {duckdb_type}")


def schema_sql(con) -> str:
    """CREATE TABLE statements for the TPC-DS tables of `con`, in tessera's types (NOT NULL kept)."""
    statements = []
    for table in TABLES:
        columns = con.execute("SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                              "WHERE table_name = ? ORDER BY ordinal_position", [table]).fetchall()
        if not columns:
            raise SetupError(f"dsdgen made no table {table}")
        lines = [f"  {name} {tessera_type(kind)}{'' if nullable == 'YES' else ' NOT NULL'}"
                 for name, kind, nullable in columns]
        statements.append(f"CREATE TABLE {table} (\n" + ",\n".join(lines) + "\n);\n")
    return "\n".join(statements)


# SF at and above which generation keeps only tpcds.duckdb (no .tbl files) and the load streams each table through
# a named pipe: SF10's .tbl files (about 12 GB) plus tessera's copy do not fit this machine's disk.
STREAMED_FROM_SF = 10.0


def is_streamed(sf: str, forced: bool = False) -> bool:
    return forced or float(sf) >= STREAMED_FROM_SF


def export_sql(table: str, path: str) -> str:
    """DuckDB's COPY of `table` to `path` in the layout tessera's COPY (copy_options) reads: '|' after every field
    (the '' column), NULL as \\N, strings holding '|' or '"' quoted. USE_TMP_FILE false: DuckDB would otherwise
    write an existing path (a named pipe) as path.tmp and rename it."""
    return (f"COPY (SELECT *, '' FROM {table}) TO '{path.replace(chr(39), chr(39) * 2)}' "
            "(FORMAT csv, DELIMITER '|', HEADER false, QUOTE '\"', NULL '\\N', USE_TMP_FILE false)")


def generate(sf: str, cache: str, streamed: bool = False) -> str:
    """The directory with the TPC-DS data, schema and queries at `sf`, generating them once (in the venv).

    Streamed (`is_streamed`): only tpcds.duckdb, schema.sql and the queries; load_streamed exports each table
    from tpcds.duckdb while tessera reads it. Otherwise also one .tbl file per table."""
    directory = os.path.join(cache, f"tpcds-sf{sf}")
    if os.path.exists(os.path.join(directory, ".complete")):
        if streamed or all(os.path.exists(os.path.join(directory, f"{t}.tbl")) for t in TABLES):
            return directory
        progress(f"{directory} was generated streamed (no .tbl files); generating again with them")
    partial = directory + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(os.path.join(partial, "queries"))
    progress(f"generating TPC-DS SF{sf} into {directory} (DuckDB {DUCKDB_VERSION} dsdgen"
             + (", database only: the load streams it)" if streamed else ")") + " ...")
    start = time.monotonic()
    try:
        con = duckdb_with_tpcds(os.path.join(partial, "tpcds.duckdb"))
        con.execute(f"CALL dsdgen(sf={sf})")
        progress(f"dsdgen done in {time.monotonic() - start:.1f} s")
        with open(os.path.join(partial, "schema.sql"), "w") as f:
            f.write(schema_sql(con))
        if not streamed:
            for table in TABLES:
                con.execute(export_sql(table, os.path.join(partial, f"{table}.tbl")))
        for number, text in con.execute("SELECT query_nr, query FROM tpcds_queries() ORDER BY query_nr").fetchall():
            with open(os.path.join(partial, "queries", f"q{number:02d}.sql"), "w") as f:
                f.write(text.strip() + "\n")
        con.execute("CHECKPOINT")
        con.close()
    except BaseException as e:
        shutil.rmtree(partial, ignore_errors=True)
        if isinstance(e, Exception):
            raise SetupError(f"generating TPC-DS SF{sf} failed ({partial} removed): {e}")
        raise
    open(os.path.join(partial, ".complete"), "w").close()
    shutil.rmtree(directory, ignore_errors=True)
    os.rename(partial, directory)
    if streamed:
        size = os.path.getsize(os.path.join(directory, "tpcds.duckdb"))
        progress(f"generated a {size / 1e6:,.0f} MB tpcds.duckdb in {time.monotonic() - start:.1f} s")
    else:
        size = sum(os.path.getsize(os.path.join(directory, f"{t}.tbl")) for t in TABLES)
        progress(f"generated {size / 1e6:,.0f} MB of .tbl files in {time.monotonic() - start:.1f} s")
    return directory


class StreamedTables:
    """A load source (bench_data.TblFiles's members) without .tbl files: one named pipe `<table>.tbl` per table in a
    private temporary directory, which a writer process (this file run as a script, in the venv) fills table after
    table with DuckDB's COPY from `tpcds.duckdb`, in the order tessera's COPYs read them; nothing lands on disk.

    A writer that fails makes watch() end tessera (which may be waiting to open the next pipe), and close() reports
    its error; a tessera that fails leaves the writer waiting on a pipe, which close() ends. `expected_rows`
    (DuckDB's row counts) catches a table cut short."""
    key = "source_rows"

    def __init__(self, gen_dir: str, threads: int):
        self.database = os.path.join(os.path.abspath(gen_dir), "tpcds.duckdb")
        self.threads = max(1, threads)
        con = duckdb_with_tpcds(self.database, read_only=True)
        self.expected_rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
        con.close()
        self.pipes = None
        self.writer = None
        self.watcher = None

    def identity(self) -> dict:
        return {"tbl_dir": os.path.dirname(self.database), "source": self.database,
                "source_rows": self.expected_rows}

    def open(self) -> dict[str, str]:
        self.pipes = tempfile.mkdtemp(prefix="tpcds-pipes-")
        paths = {t: os.path.join(self.pipes, f"{t}.tbl") for t in TABLES}
        for path in paths.values():
            os.mkfifo(path)
        self.writer = subprocess.Popen([sys.executable, os.path.abspath(__file__), "export", self.database,
                                        self.pipes, str(self.threads)], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True)
        return paths

    def watch(self, process: subprocess.Popen) -> None:
        def end_tessera_if_writer_failed():
            if self.writer.wait() != 0 and process.poll() is None:
                process.kill()

        self.watcher = threading.Thread(target=end_tessera_if_writer_failed, daemon=True)
        self.watcher.start()

    def close(self) -> str | None:
        error = None
        if self.writer is not None:
            if self.writer.poll() is None:
                self.writer.kill()
            stderr = self.writer.stderr.read()
            if self.writer.wait() > 0:
                error = f"exporting from {self.database} failed: " + (stderr.strip().splitlines() or ["?"])[-1]
            self.writer = None
        if self.watcher is not None:
            self.watcher.join()
            self.watcher = None
        if self.pipes is not None:
            shutil.rmtree(self.pipes, ignore_errors=True)
            self.pipes = None
        return error


def _export_main(database: str, pipes: str, threads: str) -> None:
    """The writer of StreamedTables: every table of `database` into `pipes`/<table>.tbl, in TABLES order."""
    con = duckdb_with_tpcds(database, read_only=True)
    con.execute(f"SET threads={int(threads)}")
    for table in TABLES:
        con.execute(export_sql(table, os.path.join(pipes, f"{table}.tbl")))
    con.close()


# DuckDB's memory limit when it queries tpcds.duckdb on disk (streamed scale factors): tessera's query processes
# run beside it and need the rest of the machine.
ON_DISK_MEMORY_FRACTION = 0.3


def duckdb_connect(data_dir: str, threads: int, on_disk: bool = False):
    """DuckDB holding the generated tables, and their row counts: an in-memory copy of tpcds.duckdb, or with
    `on_disk` (streamed scale factors, whose copy would not fit beside tessera) tpcds.duckdb itself, read-only,
    with ON_DISK_MEMORY_FRACTION of the machine's memory."""
    source = os.path.join(data_dir, "tpcds.duckdb")
    if on_disk:
        con = duckdb_with_tpcds(source, read_only=True)
        con.execute(f"SET threads={int(threads)}")
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        con.execute(f"SET memory_limit='{int(memory * ON_DISK_MEMORY_FRACTION) // (1 << 20)}MB'")
        progress(f"DuckDB {DUCKDB_VERSION} queries {source} on disk ({threads} threads, "
                 f"{ON_DISK_MEMORY_FRACTION:.0%} of memory)")
        return con, {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    con = duckdb_with_tpcds()
    con.execute(f"SET threads={int(threads)}")
    con.execute(f"ATTACH '{source.replace(chr(39), chr(39) * 2)}' AS generated (READ_ONLY)")
    progress(f"loading TPC-DS into DuckDB {DUCKDB_VERSION} (in memory, {threads} threads) ...")
    start = time.monotonic()
    rows = {}
    for table in TABLES:
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM generated.{table}")
        rows[table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    con.execute("DETACH generated")
    progress(f"DuckDB loaded in {time.monotonic() - start:.1f} s")
    return con, rows


class Tpcds(Benchmark):
    """TPC-DS with DuckDB's dsdgen and query texts; bind() to the generated directory before use."""
    name = "tpcds"
    title = "TPC-DS"
    tables = TABLES
    # NULL is \N, not an empty field, and every line ends with a delimiter (as dsdgen's own files do): tessera's
    # COPY accepts one trailing delimiter, so a line whose last field is NULL or '' would otherwise lack a field.
    copy_options = "DELIMITER '|', NULL '\\N', QUOTE '\"'"  # a path ending in .tbl turns quoting off

    def __init__(self, root=None):
        super().__init__(*([root] if root else []))
        self.data_dir = None
        self.streamed = False

    def bind(self, data_dir: str, streamed: bool = False) -> None:
        self.data_dir = data_dir
        self.streamed = streamed

    @property
    def schema_path(self) -> str:
        return os.path.join(self.data_dir, "schema.sql")

    def all_queries(self):
        return [Query(f"Q{n:02d}", os.path.join(self.data_dir, "queries", f"q{n:02d}.sql"), n) for n in range(1, 100)]

    def select(self, spec):
        return select_numbered(self.all_queries(), spec, self.title, "3,7 or 1-10")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "export":
        _export_main(*sys.argv[2:])
    else:
        sys.exit("usage: bench_tpcds.py export TPCDS.duckdb PIPE_DIR THREADS (StreamedTables' writer)")
