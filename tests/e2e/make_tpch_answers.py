#!/usr/bin/env python3
"""Regenerates tests/data/tpch_sf0.01_answers/qNN.csv with DuckDB (the reference engine) on tpchgen-cli data.

    python3 tests/e2e/make_tpch_answers.py [TBL_DIR]

The files are '|'-separated with a header line, like ../shared/benchmarks/tpch/answers-sf1.
"""
import os
import subprocess
import sys

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLES = ["region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]


def main():
    tbl_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/tpch-sf0.01"
    if not os.path.exists(os.path.join(tbl_dir, "lineitem.tbl")):
        os.makedirs(tbl_dir, exist_ok=True)
        subprocess.run(["tpchgen-cli", "tbl", "-s", "0.01", "-o", tbl_dir], check=True)
    con = duckdb.connect()
    con.execute(open(os.path.join(ROOT, "benchmarks", "tpch", "schema.sql")).read())
    for t in TABLES:
        con.execute(f"COPY {t} FROM '{tbl_dir}/{t}.tbl' (DELIMITER '|')")
    out_dir = os.path.join(ROOT, "tests", "data", "tpch_sf0.01_answers")
    for q in range(1, 23):
        sql = open(os.path.join(ROOT, "benchmarks", "tpch", "queries", f"q{q:02d}.sql")).read()
        cursor = con.execute(sql)
        names = [d[0] for d in cursor.description]
        with open(os.path.join(out_dir, f"q{q:02d}.csv"), "w") as f:
            f.write("|".join(names) + "\n")
            for row in cursor.fetchall():
                f.write("|".join("" if v is None else str(v) for v in row) + "\n")


if __name__ == "__main__":
    main()
