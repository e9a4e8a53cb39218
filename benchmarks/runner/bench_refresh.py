"""TPC-H refresh functions RF1 (new orders and their lineitems) and RF2 (deletes of old orders and their lineitems).

tpchgen-cli writes no update sets (dbgen's -U), so the runner makes them here, deterministically, by the
specification's rules (TPC-H 2.27 / 4.2.2.x and dbgen's key scheme):
- Order keys are sparse: dbgen's MK_SPARSE puts order index i at key (((i >> 3) << 2 | seq) << 3) | (i & 7); the
  initial population is seq 0 (keys 1-7, 32-39, 64-71, ...), so the keys with seq 1-3 are free for new orders.
- Refresh pair n (n = 1, 2, ...) covers order indexes (n - 1) * C + 1 .. n * C with C = SF * 1500 (0.1 % of ORDERS):
  RF1 inserts orders with those indexes at seq 1 (never a key of the initial population or of another pair), each
  with 1 to 7 lineitems; RF2 deletes the orders of the initial population with those indexes (seq 0) and their
  lineitems. After pair n the table has as many orders as before, as the specification requires.
- Row contents follow dbgen's domains: O_CUSTKEY a customer with custkey % 3 != 0, dates from 1992-01-01 to
  1998-08-02 minus 151 days, L_PARTKEY random, L_SUPPKEY one of the part's four suppliers (the PARTSUPP formula),
  L_EXTENDEDPRICE = quantity * P_RETAILPRICE (the PART formula), flags and order status from the dates and the
  current date 1995-06-17, O_TOTALPRICE from the lineitems. Comments are short random words. The random stream is
  Python's Mersenne Twister seeded with the pair number (not dbgen's streams, so the rows differ from dbgen's).

Both engines apply the same SQL (refresh_sql): RF1 is two COPYs of the generated .tbl files; RF2 loads the keys into
a table and deletes with IN subqueries, lineitems first.
"""
from __future__ import annotations

import datetime
import os
import random

START_DATE = datetime.date(1992, 1, 1)
END_DATE = datetime.date(1998, 12, 31)
CURRENT_DATE = datetime.date(1995, 6, 17)
WORDS = ["furiously", "carefully", "quickly", "slyly", "blithely", "final", "regular", "special", "pending",
         "express", "ironic", "bold", "even", "silent", "deposits", "requests", "accounts", "packages", "theodolites",
         "foxes", "pinto", "beans", "instructions", "dependencies", "excuses", "platelets", "asymptotes"]
PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"]
INSTRUCTIONS = ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"]
MODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]


def sparse_key(index: int, seq: int) -> int:
    """dbgen's MK_SPARSE: the order key of order index `index` (1-based) in key slot `seq` (0 = initial data)."""
    return (((index >> 3) << 2 | seq) << 3) | (index & 7)


def orders_per_pair(sf: float) -> int:
    return max(1, int(round(float(sf) * 1500)))


def _comment(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _retail_price(partkey: int) -> float:
    return (90000 + ((partkey // 10) % 20001) + 100 * (partkey % 1000)) / 100


def _supplier(partkey: int, i: int, suppliers: int) -> int:
    return (partkey + i * (suppliers // 4 + (partkey - 1) // suppliers)) % suppliers + 1


def write_pair(sf: float, pair: int, directory: str) -> dict:
    """Writes refresh pair `pair`'s files into `directory`: orders.u<pair>.tbl, lineitem.u<pair>.tbl (RF1) and
    delete.<pair>.tbl (RF2's order keys). Returns their paths and row counts."""
    sf = float(sf)
    count = orders_per_pair(sf)
    customers = max(1, int(sf * 150_000))
    parts = max(1, int(sf * 200_000))
    suppliers = max(4, int(sf * 10_000))
    rng = random.Random(pair)
    first = (pair - 1) * count + 1
    paths = {name: os.path.join(directory, name) for name in
             (f"orders.u{pair}.tbl", f"lineitem.u{pair}.tbl", f"delete.{pair}.tbl")}
    order_path, line_path, delete_path = paths.values()
    lines_written = 0
    with open(order_path, "w") as orders, open(line_path, "w") as lines:
        for index in range(first, first + count):
            key = sparse_key(index, 1)
            custkey = rng.randrange(1, customers + 1)
            while custkey % 3 == 0:
                custkey = rng.randrange(1, customers + 1)
            order_date = START_DATE + datetime.timedelta(days=rng.randrange(0, (END_DATE - START_DATE).days - 151 + 1))
            total = 0.0
            statuses = set()
            for line_number in range(1, rng.randrange(1, 8) + 1):
                partkey = rng.randrange(1, parts + 1)
                suppkey = _supplier(partkey, rng.randrange(0, 4), suppliers)
                quantity = rng.randrange(1, 51)
                price = round(quantity * _retail_price(partkey), 2)
                discount = rng.randrange(0, 11) / 100
                tax = rng.randrange(0, 9) / 100
                ship = order_date + datetime.timedelta(days=rng.randrange(1, 122))
                commit = order_date + datetime.timedelta(days=rng.randrange(30, 91))
                receipt = ship + datetime.timedelta(days=rng.randrange(1, 31))
                returnflag = rng.choice("RA") if receipt <= CURRENT_DATE else "N"
                linestatus = "O" if ship > CURRENT_DATE else "F"
                statuses.add(linestatus)
                total += price * (1 + tax) * (1 - discount)
                lines.write(f"{key}|{partkey}|{suppkey}|{line_number}|{quantity}|{price:.2f}|{discount:.2f}|"
                            f"{tax:.2f}|{returnflag}|{linestatus}|{ship}|{commit}|{receipt}|"
                            f"{rng.choice(INSTRUCTIONS)}|{rng.choice(MODES)}|{_comment(rng, 3)}|\n")
                lines_written += 1
            status = "F" if statuses == {"F"} else "O" if statuses == {"O"} else "P"
            orders.write(f"{key}|{custkey}|{status}|{total:.2f}|{order_date}|{rng.choice(PRIORITIES)}|"
                         f"Clerk#{rng.randrange(1, max(2, int(sf * 1000)) + 1):09d}|0|{_comment(rng, 5)}|\n")
    with open(delete_path, "w") as deletes:
        for index in range(first, first + count):
            deletes.write(f"{sparse_key(index, 0)}|\n")
    return {"pair": pair, "paths": paths, "orders": count, "lineitems": lines_written}


def _quoted(path: str) -> str:
    return "'" + os.path.abspath(path).replace("'", "''") + "'"


def refresh_sql(pair_files: dict) -> tuple[list[str], list[str]]:
    """RF1's and RF2's statements for one pair (the same SQL runs in tessera and in DuckDB)."""
    order_path, line_path, delete_path = pair_files["paths"].values()
    rf1 = [f"COPY orders FROM {_quoted(order_path)} (DELIMITER '|')",
           f"COPY lineitem FROM {_quoted(line_path)} (DELIMITER '|')"]
    rf2 = ["CREATE TABLE rf2_keys (k BIGINT)",
           f"COPY rf2_keys FROM {_quoted(delete_path)} (DELIMITER '|')",
           "DELETE FROM lineitem WHERE l_orderkey IN (SELECT k FROM rf2_keys)",
           "DELETE FROM orders WHERE o_orderkey IN (SELECT k FROM rf2_keys)",
           "DROP TABLE rf2_keys"]
    return rf1, rf2


# Run after each refresh pair, in the refresh stream, and by DuckDB after the same pair: the answers after every pair
# (the 22 queries are verified after the last pair; bench_refresh.verify_pair_checks).
CHECK_SQL = ["SELECT count(*), sum(o_totalprice), sum(o_orderkey), sum(o_custkey) FROM orders",
             "SELECT count(*), sum(l_extendedprice), sum(l_quantity), sum(l_orderkey) FROM lineitem"]


class RefreshStream:
    """The throughput test's refresh stream: RF1 then RF2 of each pair, then CHECK_SQL, as one shell connected to the
    tessera-server the query streams use (`engine` is connected: TesseraEngine.connect), so a query sees the database
    before or after each refresh statement, as the server's snapshots have it. Started at the timed streams' start;
    its end counts in the measurement interval like a query stream's (CHECK_SQL's few scans included, not in the RF
    times)."""

    def __init__(self, engine, pairs: list[dict], workdir: str):
        self.pairs = pairs
        self.sql_path = os.path.join(workdir, "refresh.sql")
        self.statements = []  # (pair, "RF1" / "RF2" / "check") per statement
        with open(self.sql_path, "w") as f:
            for pair in pairs:
                rf1, rf2 = refresh_sql(pair)
                for name, statements in (("RF1", rf1), ("RF2", rf2), ("check", CHECK_SQL)):
                    for statement in statements:
                        f.write(statement + ";\n")
                        self.statements.append((pair["pair"], name))
        self.args = engine.base_args() + ["-f", self.sql_path]
        self.elapsed_s = None
        self.error = None
        self.times_ms = {}  # "RF1 #n" -> ms
        self.checks = {}  # pair -> [(header, rows)] of CHECK_SQL after it
        self._thread = None

    def start(self, start: float) -> None:
        import threading

        self._thread = threading.Thread(target=self._run, args=(start,), daemon=True)
        self._thread.start()

    def _run(self, start: float) -> None:
        import subprocess
        import time

        import bench_results
        from bench_engines import _error_from_stderr

        process = subprocess.run(self.args, capture_output=True, text=True, errors="replace")
        self.elapsed_s = time.perf_counter() - start
        timed = [s for s in bench_results.parse_tessera_output(process.stdout) if s.time_ms is not None]
        for (pair, name), statement in zip(self.statements, timed):
            if name == "check":
                self.checks.setdefault(pair, []).append((statement.header, statement.rows))
                continue
            key = f"{name} #{pair}"
            self.times_ms[key] = self.times_ms.get(key, 0.0) + statement.time_ms
        if process.returncode != 0:
            self.error = _error_from_stderr(process.stderr, process.returncode)
        elif len(timed) != len(self.statements):
            self.error = f"{len(timed)} of {len(self.statements)} refresh statements ran"

    def join(self) -> None:
        self._thread.join()


def verify_pair_checks(refresh: RefreshStream, expected: dict) -> list[str]:
    """Differences between the refresh stream's CHECK_SQL answers after each pair and `expected` (pair -> [(header,
    rows)], DuckDB's after the same pairs)."""
    import bench_results

    problems = []
    for pair in refresh.pairs:
        number = pair["pair"]
        got = refresh.checks.get(number, [])
        if len(got) != len(CHECK_SQL):
            problems.append(f"pair {number}: {len(got)} of {len(CHECK_SQL)} checks ran")
            continue
        for sql, (header, rows), (_, want) in zip(CHECK_SQL, got, expected[number]):
            difference = bench_results.compare_results(rows, want, [], header)
            if difference:
                problems.append(f"pair {number}, {sql}: {difference}")
    return problems
