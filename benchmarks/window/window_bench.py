#!/usr/bin/env python3
"""Window functions on TPC-H lineitem: tessera against DuckDB, same data, same run, same thread count.

    python3 benchmarks/window/window_bench.py [--sf 1] [--runs 3] [--threads 2]

Uses the runner's data (benchmarks/runner: tpchgen-cli .tbl files in ~/.cache/tessera/tpch-sf<SF>, loaded into
tessera once). Each query wraps the window in an aggregate, so the timings measure the window and not the
transfer of 6 M rows; both engines' answers must agree. Prints the median of --runs timed runs after a warm-up.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runner"))
import bench_data  # noqa: E402
import bench_engines  # noqa: E402
import bench_results  # noqa: E402

QUERIES = {
    "rank by supplier": "SELECT count(*), sum(r), max(r) FROM (SELECT l_orderkey, rank() OVER (PARTITION BY "
                        "l_suppkey ORDER BY l_extendedprice DESC) AS r FROM lineitem) t",
    "running sum per order": "SELECT sum(s) FROM (SELECT sum(l_quantity) OVER (PARTITION BY l_orderkey ORDER BY "
                             "l_linenumber) AS s FROM lineitem) t",
    "sliding avg per part": "SELECT sum(a) FROM (SELECT avg(l_extendedprice) OVER (PARTITION BY l_partkey "
                            "ORDER BY l_shipdate, l_orderkey, l_linenumber ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING) "
                            "AS a FROM lineitem) t",
    "3 functions, 1 sort": "SELECT sum(rn), sum(dr), count(l) FROM (SELECT row_number() OVER w AS rn, "
                           "dense_rank() OVER w AS dr, lag(l_quantity) OVER w AS l FROM lineitem "
                           "WINDOW w AS (PARTITION BY l_suppkey ORDER BY l_shipdate)) t",
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sf", default="1")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", default=os.environ.get("TESSERA_BENCH_CACHE",
                                                          os.path.expanduser("~/.cache/tessera")))
    parser.add_argument("--tessera", default=os.environ.get("TESSERA_BIN",
                                                            os.path.join(bench_data.ROOT, "build", "cli", "tessera")))
    parser.add_argument("--data-dir", help="tessera data directory (default CACHE/tpch-sf<SF>-tessera-window: its "
                        "own, so that other runs holding the runner's directory do not block this one)")
    args = parser.parse_args()
    bench = bench_data.Tpch()
    tbl_dir = bench_data.generate(bench, args.sf, args.cache, "")
    data_dir = args.data_dir or os.path.join(args.cache, f"tpch-sf{args.sf}-tessera-window")
    bench_data.ensure_loaded(bench, args.sf, tbl_dir, data_dir, args.tessera, args.threads)
    tessera = bench_engines.TesseraEngine(args.tessera, data_dir, args.threads)
    con, _ = bench_data.duckdb_connect(bench, tbl_dir, args.threads)
    duckdb = bench_engines.DuckDBEngine(con)
    print(f"TPC-H SF{args.sf} lineitem, median of {args.runs} runs after 1 warm-up, {args.threads} threads")
    print(f"{'query':<24}{'tessera ms':>12}{'duckdb ms':>12}  answers")
    failed = False
    for name, sql in QUERIES.items():
        with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
            f.write(sql + ";\n")
            path = f.name
        ours = tessera.run(path, 1, args.runs)
        os.unlink(path)
        theirs = duckdb.run(sql, args.runs)
        if ours.error or theirs.error:
            status = f"FAILED: {ours.error or theirs.error}"
        else:
            equal = len(ours.rows) == len(theirs.rows) and all(
                len(a) == len(b) and all(abs(float(x) - float(y)) <= 1e-9 * max(1.0, abs(float(y)))
                                         for x, y in zip(a, b))
                for a, b in zip(ours.rows, theirs.rows))
            status = "same" if equal else f"DIFFER: tessera {ours.rows} duckdb {theirs.rows}"
        failed |= status != "same"
        print(f"{name:<24}{bench_results.median(ours.times_ms) or 0:>12.1f}"
              f"{bench_results.median(theirs.times_ms) or 0:>12.1f}  {status}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
