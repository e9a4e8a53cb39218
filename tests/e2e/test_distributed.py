"""tessera-server --distributed under mpirun (distributed/README.md): two ranks on this machine, lineitem, orders,
customer, part and partsupp hash-partitioned, the other tables replicated. All 22 TPC-H queries at scale factor
0.01 against the checked-in answers (through the shell's --connect), with 2 and 3 ranks; query shapes that run on
the ranks (partial aggregation, co-located joins, joins with replicated tables) against the same query with the
work kept on the master; the exchanges in EXPLAIN, the statements a cluster refuses, and data directories refused
in another cluster layout or by a single server.

ctest runs this file only when the build found MPI (tests/e2e/CMakeLists.txt); otherwise it reports the test as
skipped with the reason.
"""
import contextlib
import csv
import io
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from process_control import stop_by_pid
from test_tpch_answers import QUERIES, ROOT, TABLES, assert_matches_reference, tpch_tbl_dir

TESSERA = os.environ.get("TESSERA_BIN", os.path.join(ROOT, "build", "cli", "tessera"))
SERVER = os.environ.get("TESSERA_SERVER_BIN", os.path.join(ROOT, "build", "server", "tessera-server"))
MPIEXEC = os.environ.get("TESSERA_MPIEXEC") or shutil.which("mpirun")
BOUND_S = 120
PARTITION_KEYS = {"orders": "o_orderkey", "lineitem": "l_orderkey", "customer": "c_custkey", "part": "p_partkey",
                  "partsupp": "ps_partkey"}

pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="mpirun not found")

# Open MPI refuses to run as root without these (CI containers run as root).
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1")


class Cluster:
    """mpirun -np `ranks` tessera-server --distributed on 127.0.0.1 and a free port."""

    def __init__(self, base_dir, ranks, *extra_args, env=MPI_ENV):
        self.process = subprocess.Popen(
            [MPIEXEC, "--oversubscribe", "-np", str(ranks), SERVER, "--distributed", "--data", base_dir,
             "--listen", "127.0.0.1:0", "--threads", "1", "--no-sync", *extra_args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        ready, _, _ = select.select([self.process.stdout], [], [], BOUND_S)
        line = self.process.stdout.readline() if ready else ""
        if "listening on" not in line:
            self.process.kill()
            raise AssertionError(f"cluster did not start: {line!r} {self.process.stderr.read()}")
        self.target = "127.0.0.1:" + line.strip().rsplit(":", 1)[1]

    def sql(self, *statements, check=True):
        args = [TESSERA, "--connect", self.target, "--csv"]
        for statement in statements:
            args += ["-c", statement]
        result = subprocess.run(args, capture_output=True, text=True, timeout=300)
        if check:
            assert result.returncode == 0, result.stderr
        return result

    def stop(self):
        """SIGTERM to mpirun, which passes it to every rank; the master shuts down and stops the other ranks.
        Returns whether the master reported a clean stop (mpirun's own exit code after a signal is not 0)."""
        stop_by_pid(self.process, BOUND_S)
        return "tessera-server: stopped" in self.process.stderr.read()


def partitioned_schema(benchmark="tpch", keys=PARTITION_KEYS):
    """benchmarks/<benchmark>/schema.sql with PARTITION BY HASH on the tables of `keys` (table: column)."""
    statements = []
    for statement in open(os.path.join(ROOT, "benchmarks", benchmark, "schema.sql")).read().split(";"):
        match = re.search(r"CREATE TABLE (\w+)", statement)
        if match and match.group(1) in keys:
            statement = statement.rstrip() + f" PARTITION BY HASH ({keys[match.group(1)]})"
        statements.append(statement)
    return ";".join(statements)


@contextlib.contextmanager
def loaded_cluster(ranks):
    """A cluster of `ranks` ranks with the TPC-H tables at scale factor 0.01 loaded."""
    tbl_dir = tpch_tbl_dir()
    base_dir = tempfile.mkdtemp(prefix="tessera-cluster-")
    running = Cluster(base_dir, ranks, "--allowed-directories", tbl_dir)
    try:
        running.sql(partitioned_schema())
        for table in TABLES:
            running.sql(f"COPY {table} FROM '{tbl_dir}/{table}.tbl' (DELIMITER '|')")
        yield running
    finally:
        assert running.stop()
        shutil.rmtree(base_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster():
    with loaded_cluster(2) as running:
        yield running


def check_tpch_query(cluster, query):
    result = cluster.sql(open(os.path.join(QUERIES, f"q{query:02d}.sql")).read())
    actual = [row if row else [""] for row in list(csv.reader(io.StringIO(result.stdout)))[1:]]
    assert_matches_reference(query, actual)


@pytest.mark.parametrize("query", range(1, 23))
def test_tpch_query_matches_reference(cluster, query):
    check_tpch_query(cluster, query)


def test_copy_spreads_partitioned_rows_and_scans_gather_them(cluster):
    plan = cluster.sql("EXPLAIN ANALYZE SELECT l_orderkey FROM lineitem").stdout
    assert "exchange: gather lineitem (1 columns) from ranks 1..1" in plan, plan
    received = re.search(r"received (\d+) blocks, (\d+) bytes from 1 ranks", plan)
    assert received and int(received.group(1)) > 0, plan
    # Rank 1 holds about half of the rows (hash of the order key): the gather brings them, the master has the rest.
    gathered = re.search(r"#0 gather.*\n.*actual: work orders 1, rows in 0, rows out (\d+)", plan)
    assert gathered, plan
    assert 0.4 * 60175 < int(gathered.group(1)) < 0.6 * 60175
    assert cluster.sql("SELECT count(*) FROM lineitem").stdout.splitlines()[1] == "60175"
    # Each rank filters and projects its part before the gather: only the passing rows' needed column travels.
    plan = cluster.sql("EXPLAIN ANALYZE SELECT l_quantity FROM lineitem WHERE l_quantity < 5").stdout
    assert "exchange: gather lineitem (1 columns, filter) from ranks 1..1" in plan, plan
    gathered = re.search(r"#0 gather.*\n.*rows out (\d+)", plan)
    assert gathered and 0 < int(gathered.group(1)) < 0.1 * 60175, plan
    # A replicated table is read from the master's full copy: no exchange.
    assert "exchange" not in cluster.sql("EXPLAIN SELECT count(*) FROM nation").stdout


def rows(result):
    """The result's rows, sorted, with DOUBLE values rounded (partial sums add in another order)."""
    def field(value):
        return f"{float(value):.9g}" if re.fullmatch(r"-?\d+\.\d{10,}(e-?\d+)?", value) else value
    return sorted([field(value) for value in row] for row in list(csv.reader(io.StringIO(result.stdout)))[1:])


def on_master(query):
    """`query` with lineitem, orders and customer read through a LIMIT, which keeps everything above them on the
    master (plan_distribution.h): the single-server answer, computed from gathered rows."""
    for table in ("lineitem", "orders", "customer"):
        query = re.sub(rf"\b{table}\b(?!\.)", f"(SELECT * FROM {table} LIMIT 100000000) AS {table}", query, count=1)
    return query


# (query, what EXPLAIN shows about where it runs)
SHAPES = [
    # Partial aggregation on every rank, merged on the master (AVG as SUM and COUNT; MIN / MAX of strings).
    ("SELECT l_returnflag, count(*), sum(l_quantity), avg(l_discount), min(l_shipmode), max(l_comment) "
     "FROM lineitem WHERE l_shipdate <= DATE '1998-09-01' GROUP BY l_returnflag",
     ["gather aggregate(1 keys, 6 calls) of lineitem (6 columns, filter)", "merges the ranks' partial aggregates"]),
    # A global aggregate over no rows: COUNT 0, SUM NULL.
    ("SELECT count(*), count(l_tax), sum(l_tax), avg(l_tax), min(l_tax) FROM lineitem WHERE l_quantity < 0",
     ["merges the ranks' partial aggregates"]),
    # COUNT(DISTINCT) does not decompose into partials.
    ("SELECT l_linestatus, count(DISTINCT l_suppkey) FROM lineitem GROUP BY l_linestatus", ["exchange: gather"]),
    # Grouped by the partition key: the whole aggregation on the ranks, nothing to merge.
    ("SELECT l_orderkey, sum(l_quantity) FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 300",
     ["gather aggregate(1 keys, 1 calls) of lineitem"]),
    # Co-located join (both on the order key), then partial aggregation.
    ("SELECT o_orderpriority, count(*) FROM orders JOIN lineitem ON l_orderkey = o_orderkey "
     "WHERE l_commitdate < l_receiptdate GROUP BY o_orderpriority",
     ["join(", "merges the ranks' partial aggregates"]),
    # Join with a replicated table on the ranks (the eager aggregation rule puts the partial counts below it).
    ("SELECT n_name, count(*) FROM customer JOIN nation ON c_nationkey = n_nationkey GROUP BY n_name",
     ["gather aggregate(1 keys, 1 calls) of customer"]),
    ("SELECT c_name, n_name FROM customer JOIN nation ON c_nationkey = n_nationkey WHERE c_acctbal > 9000",
     ["gather inner join(customer (3 columns, filter), nation (2 columns))"]),
    # Not co-located (orders on the order key, customer on the customer key): both sides gathered, orders as
    # partial aggregates per customer.
    ("SELECT c_mktsegment, count(*), sum(o_totalprice) FROM customer JOIN orders ON c_custkey = o_custkey "
     "GROUP BY c_mktsegment",
     ["gather aggregate(1 keys, 2 calls) of orders", "gather customer"]),
    # Not co-located, but the build side is small: the master computes it (from its own gather) and broadcasts it
    # to the ranks with the fragment, which then joins and aggregates on every rank.
    ("SELECT o_orderpriority, count(*), sum(o_totalprice) FROM orders JOIN customer ON o_custkey = c_custkey "
     "WHERE c_mktsegment = 'BUILDING' AND c_acctbal > 9000 GROUP BY o_orderpriority",
     ["broadcast)", "gather customer (3 columns, filter)", "merges the ranks' partial aggregates"]),
    # Hash splits (repartitioning exchanges): a join whose build side is too large to broadcast and is not placed
    # by the join key: orders is split by the customer key and meets customer (placed by it) on every rank.
    ("SELECT c_name, o_orderdate, o_totalprice FROM customer LEFT JOIN orders ON c_custkey = o_custkey "
     "WHERE c_acctbal > 9000",
     ["hash split orders (3 columns) by o_custkey across ranks 0..1", "left outer join(customer (3 columns, filter), "
      "hash split)"]),
    # Neither side placed by its key: both split.
    ("SELECT o_orderkey, l_linenumber, l_partkey FROM orders JOIN lineitem ON o_custkey = l_partkey "
     "WHERE l_quantity > 45",
     ["hash split orders (2 columns) by o_custkey", "hash split lineitem (3 columns, filter) by l_partkey",
      "inner join(hash split, hash split)"]),
    # A nested split: orders is split by o_custkey to meet customer, then the joined rows are split again by
    # o_orderkey to meet lineitem (placed by it) on every rank, instead of being gathered and broadcast.
    ("SELECT l_returnflag, count(*), sum(l_extendedprice), max(c_name) FROM customer JOIN orders ON c_custkey = o_custkey "
     "JOIN lineitem ON l_orderkey = o_orderkey WHERE c_acctbal > 0 AND o_orderdate < DATE '1995-01-01' "
     "GROUP BY l_returnflag",
     ["by o_orderkey across ranks 0..1", "by o_custkey across ranks 0..1"]),
    # An anti join on a key the probe side is placed by.
    ("SELECT c_nationkey, count(*) FROM customer WHERE NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey) "
     "GROUP BY c_nationkey",
     ["anti join(customer (2 columns), hash split)"]),
    # Aggregates that do not decompose into partials, grouped by an integer and by a string column: the input is
    # split by the group key and every group is whole on one rank.
    ("SELECT o_custkey, count(DISTINCT o_orderpriority), count(DISTINCT o_clerk), median(o_totalprice) FROM orders "
     "GROUP BY o_custkey",
     ["hash split orders (4 columns) by o_custkey", "gather aggregate(1 keys, 3 calls) of hash split"]),
    ("SELECT o_clerk, median(o_totalprice), string_agg(o_orderpriority, ',' ORDER BY o_orderpriority) FROM orders "
     "WHERE o_orderkey < 20000 GROUP BY o_clerk",
     ["hash split orders (4 columns, filter) by o_clerk"]),
    # Many groups (above PlanDistribution::kMinSplitGroups by the estimates): the partial aggregates are split by
    # a group key and every rank merges its own groups; the aggregation above them runs on the ranks too, so only
    # its partial groups are gathered.
    ("SELECT l_partkey, l_suppkey, count(*), sum(l_extendedprice), avg(l_discount), min(l_shipdate), "
     "max(l_comment) FROM lineitem GROUP BY l_partkey, l_suppkey",
     ["hash split aggregate(2 keys, 6 calls) of lineitem (6 columns) by l_partkey",
      "gather aggregate(2 keys, 6 calls) of hash split"]),
    ("SELECT cnt, count(*), sum(total) FROM (SELECT l_partkey, l_suppkey, count(*) AS cnt, sum(l_quantity) AS total "
     "FROM lineitem GROUP BY l_partkey, l_suppkey) AS pairs GROUP BY cnt",
     ["gather aggregate(1 keys, 2 calls) of aggregate(2 keys, 2 calls) of hash split",
      "merges the ranks' partial aggregates"]),
    # A left outer join with the partitioned side preserved stays on the ranks.
    ("SELECT count(*), count(n_name) FROM customer LEFT JOIN nation ON c_nationkey = n_nationkey AND n_nationkey < 5",
     ["left outer join("]),
]


@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_query_shapes_on_the_ranks_match_the_master(cluster, shape):
    query, explained = SHAPES[shape]
    plan = cluster.sql("EXPLAIN " + query).stdout
    for text in explained:
        assert text in plan, (text, plan)
    assert "LIMIT" not in query
    expected = rows(cluster.sql(on_master(query)))
    assert "merges the ranks" not in cluster.sql("EXPLAIN " + on_master(query)).stdout
    assert rows(cluster.sql(query)) == expected and expected


# ORDER BY ... LIMIT over a partitioned input: each rank keeps its own top `limit + offset` rows (plan_distribution.h,
# TopNOnRanks) and the master's top-N over the gathered union gives the single server's answer, in its order. The
# selected columns are determined by the sort keys, so ties at the limit cannot pick different rows.
TOP_N = [
    # Groups whole on every rank (grouped by the partition key), as TPC-H Q3.
    ("SELECT l_orderkey, sum(l_quantity) AS q FROM lineitem GROUP BY l_orderkey ORDER BY q DESC, l_orderkey LIMIT 10",
     "gather top 10 of aggregate(1 keys, 1 calls) of lineitem"),
    # Rows without aggregation; ties at the limit (many rows share each quantity) and an OFFSET.
    ("SELECT l_quantity FROM lineitem ORDER BY l_quantity DESC LIMIT 25 OFFSET 7", "gather top 32 of lineitem"),
    ("SELECT o_orderdate, o_orderpriority FROM orders WHERE o_orderdate < DATE '1992-01-05' "
     "ORDER BY o_orderdate, o_orderpriority LIMIT 30 OFFSET 3", "gather top 33 of orders"),
    # NULLs in the key, first and last, ascending and descending.
    ("SELECT CASE WHEN c_acctbal > 0 THEN c_nationkey END AS k, c_custkey FROM customer "
     "ORDER BY k NULLS FIRST, c_custkey DESC LIMIT 15 OFFSET 5", "gather top 20 of customer"),
    ("SELECT CASE WHEN c_acctbal > 0 THEN c_nationkey END AS k, c_custkey FROM customer "
     "ORDER BY k DESC NULLS LAST, c_custkey LIMIT 12", "gather top 12 of customer"),
    ("SELECT CASE WHEN c_acctbal > 0 THEN c_nationkey END AS k, c_custkey FROM customer "
     "ORDER BY k DESC, c_custkey LIMIT 8 OFFSET 2", "gather top 10 of customer"),
    # A LIMIT larger than the rows.
    ("SELECT c_custkey, c_name FROM customer WHERE c_acctbal > 9000 ORDER BY c_name LIMIT 100000",
     "gather top 100000 of customer"),
    # Groups merged on the ranks after a split of the partials (many groups).
    ("SELECT l_partkey, l_suppkey, count(*) AS c FROM lineitem GROUP BY l_partkey, l_suppkey "
     "ORDER BY c DESC, l_partkey, l_suppkey LIMIT 5", "gather top 5 of aggregate(2 keys, 1 calls) of hash split"),
]


def ordered_rows(result):
    return list(csv.reader(io.StringIO(result.stdout)))[1:]


@pytest.mark.parametrize("shape", range(len(TOP_N)))
def test_top_n_on_the_ranks_matches_the_master(cluster, shape):
    query, explained = TOP_N[shape]
    plan = cluster.sql("EXPLAIN " + query).stdout
    assert explained in plan, plan
    assert "gather top" not in cluster.sql("EXPLAIN " + on_master(query)).stdout
    expected = ordered_rows(cluster.sql(on_master(query)))
    assert expected and ordered_rows(cluster.sql(query)) == expected


# A CTE read twice is one shared aggregate (optimizer/rules/aggregate_sharing.h): its partials are gathered once
# and merged once on the master, for both readers (PlanDistribution::SplitAggregates), as TPC-H Q15's revenue.
SHARED = [
    ("WITH revenue AS (SELECT l_suppkey AS supplier_no, sum(l_extendedprice * (1 - l_discount)) AS total "
     "FROM lineitem WHERE l_shipdate >= DATE '1996-01-01' AND l_shipdate < DATE '1996-04-01' GROUP BY l_suppkey) "
     "SELECT s_suppkey, s_name, total FROM supplier, revenue "
     "WHERE s_suppkey = supplier_no AND total = (SELECT max(total) FROM revenue)",
     "gather aggregate(1 keys, 1 calls) of lineitem (4 columns, filter)"),
    # AVG (merged from SUM and COUNT), read by a filter and by an aggregate in the filter's subquery.
    ("WITH parts AS (SELECT l_partkey, avg(l_quantity) AS q FROM lineitem GROUP BY l_partkey) "
     "SELECT l_partkey, q FROM parts WHERE q > (SELECT avg(q) FROM parts) + 3",
     "gather aggregate(1 keys, 2 calls) of lineitem (2 columns)"),
]


@pytest.mark.parametrize("shape", range(len(SHARED)))
def test_shared_aggregate_is_gathered_once_and_matches_the_master(cluster, shape):
    query, gathered = SHARED[shape]
    plan = cluster.sql("EXPLAIN " + query).stdout
    assert plan.count("exchange: gather") == 1 and gathered in plan, plan
    assert plan.count("merges the ranks' partial aggregates") == 1, plan
    expected = rows(cluster.sql(on_master(query)))
    assert rows(cluster.sql(query)) == expected and expected


def test_hash_split_reports_the_bytes_it_exchanged(cluster):
    query = "SELECT o_orderkey, l_linenumber FROM orders JOIN lineitem ON o_custkey = l_partkey WHERE l_tax = 0"
    plan = cluster.sql("EXPLAIN ANALYZE " + query).stdout
    split = re.findall(r"split (\d+) rows; sent (\d+) bytes, received (\d+) bytes", plan)
    assert len(split) == 2, plan
    # Each rank keeps the rows its key places there and sends the others: about half of them each way.
    assert all(int(rows) > 0 and int(sent) > 0 and int(received) > 0 for rows, sent, received in split), plan
    expected = rows(cluster.sql(on_master(query)))
    assert rows(cluster.sql(query)) == expected and expected


def test_statements_a_cluster_cannot_run_yet_are_refused(cluster):
    # DDL and INSERT ... VALUES into a replicated table run on every rank.
    result = cluster.sql("CREATE TABLE replicated (a INTEGER)", "INSERT INTO replicated VALUES (1), (2)",
                         "SELECT count(*) FROM replicated", "DROP TABLE replicated")
    assert "2" in result.stdout.splitlines()
    refused = cluster.sql("INSERT INTO orders SELECT * FROM orders", check=False)
    assert refused.returncode != 0 and "INSERT ... SELECT is not supported in a distributed cluster" in refused.stderr
    refused = cluster.sql("INSERT INTO lineitem (l_orderkey) VALUES (1)", check=False)
    assert refused.returncode != 0 and "partitioned table 'lineitem'" in refused.stderr
    for statement, name in (("DELETE FROM orders WHERE o_orderkey = 1", "DELETE"),
                            ("UPDATE nation SET n_comment = 'x'", "UPDATE"), ("VACUUM", "VACUUM")):
        refused = cluster.sql(statement, check=False)
        assert refused.returncode != 0 and f"{name} is not supported in a distributed cluster" in refused.stderr
    refused = cluster.sql("CREATE TABLE bad (a INTEGER) PARTITION BY HASH (b)", check=False)
    assert refused.returncode != 0 and "PARTITION BY HASH column 'b' does not exist" in refused.stderr


def test_tpch_queries_match_reference_on_three_ranks():
    with loaded_cluster(3) as running:
        assert "from ranks 1..2" in running.sql("EXPLAIN SELECT sum(l_quantity) FROM lineitem").stdout
        # Q5 and Q10: orders split by o_custkey to meet customer, the joined rows split again by o_orderkey to meet
        # lineitem (nested splits), nothing gathered to be broadcast.
        for query in (5, 10):
            plan = running.sql("EXPLAIN " + open(os.path.join(QUERIES, f"q{query:02d}.sql")).read()).stdout
            assert "by o_custkey across ranks 0..2" in plan and "by o_orderkey across ranks 0..2" in plan, plan
            assert "broadcast" not in plan, plan
        for query in range(1, 23):
            check_tpch_query(running, query)


def rank_pids(base_dir):
    """{rank: pid} of the tessera-server processes serving `base_dir` (Open MPI puts the rank in the environment)."""
    pids = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            command = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
            if not command[0].endswith(b"tessera-server") or base_dir.encode() not in command:
                continue
            environment = open(f"/proc/{entry}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        for variable in environment:
            if variable.startswith(b"OMPI_COMM_WORLD_RANK="):
                pids[int(variable.split(b"=")[1])] = int(entry)
    return pids


def kill_cluster(running, pids, base_dir):
    """Ends a failure test's cluster whatever state it is in: SIGKILL to every rank it found (one may be dead
    already), then the mpirun process, then its directory."""
    for pid in pids.values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    running.process.kill()
    running.process.communicate()
    shutil.rmtree(base_dir, ignore_errors=True)


def rank_of_integer_key(value, ranks):
    """distributed/partitioning.h RankOfIntegerKey: common/hash.h HashInt64 of the value, modulo the ranks."""
    mask = (1 << 64) - 1
    key = value & mask
    key ^= key >> 33
    key = (key * 0xFF51AFD7ED558CCD) & mask
    key ^= key >> 33
    key = (key * 0xC4CEB9FE1A85EC53) & mask
    key ^= key >> 33
    return key % ranks


# The heartbeat timeout of the failure tests (--distributed-peer-timeout-ms): well above what a thread of this
# loaded machine waits to be scheduled, short enough that the failure comes soon.
PEER_TIMEOUT_S = 3


def test_rank_killed_mid_query_fails_the_query_and_the_master_stays_up():
    """SIGKILL to rank 1 while it computes its part of a query: the master notices the missing heartbeats
    (distributed/cluster.h) and fails that query with an error naming the rank, instead of waiting forever; it
    still answers what it can compute alone. Open MPI is told not to end the job when a process dies.

    Every row of the partitioned table is on rank 1, so the master has no work of its own: the query fails as
    soon as the master gives up on rank 1, PEER_TIMEOUT_S after its last heartbeat, whatever the load (with rows
    of its own, the master's worker would finish its part first, which took a minute under a load average of 22).
    The bound is that timeout and a slack for scheduling; a master that hangs exceeds it."""
    base_dir = tempfile.mkdtemp(prefix="tessera-failure-")
    data = os.path.join(base_dir, "rows.csv")
    keys = [i for i in range(60000) if rank_of_integer_key(i, 2) == 1][:20000]
    assert len(keys) == 20000
    with open(data, "w") as f:
        f.writelines(f"{i},{i * 7 % 1000}\n" for i in keys)
    running = Cluster(base_dir, 2, "--allowed-directories", base_dir, "--distributed-peer-timeout-ms",
                      str(PEER_TIMEOUT_S * 1000), env=dict(MPI_ENV, OMPI_MCA_orte_enable_recovery="1"))
    pids = {}
    try:
        running.sql("CREATE TABLE big (a BIGINT, b BIGINT) PARTITION BY HASH (a)", "CREATE TABLE small (c BIGINT, d BIGINT)",
                    f"COPY big FROM '{data}' (FORMAT csv)", f"COPY small FROM '{data}' (FORMAT csv)")
        plan = running.sql("EXPLAIN ANALYZE SELECT a FROM big").stdout
        gathered = re.search(r"#0 gather.*\n.*rows out (\d+)", plan)
        assert gathered and int(gathered.group(1)) == len(keys), ("every row on rank 1", plan)
        pids = rank_pids(base_dir)
        assert sorted(pids) == [0, 1], pids
        # A nested-loop join of rank 1's part of `big` (all of it) with all of `small` (replicated): seconds of
        # work there.
        slow = subprocess.Popen(
            [TESSERA, "--connect", running.target, "--csv", "-c",
             "SELECT count(*) FROM big, small WHERE (big.a * small.c + big.b) % 1000003 = 17"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2)
        assert slow.poll() is None, slow.communicate()
        os.kill(pids[1], signal.SIGKILL)
        began = time.monotonic()
        _, stderr = slow.communicate(timeout=BOUND_S)
        assert slow.returncode != 0
        assert "rank 1 stopped answering" in stderr and "the cluster is unhealthy" in stderr, stderr
        assert time.monotonic() - began < PEER_TIMEOUT_S + 30
        # The master is up: a replicated table is read from its own copy; a query that needs rank 1 fails at once.
        assert running.sql("SELECT count(*) FROM small").stdout.splitlines()[1] == "20000"
        refused = running.sql("SELECT count(*) FROM big", check=False)
        assert refused.returncode != 0 and "rank 1 stopped answering" in refused.stderr, refused.stderr
    finally:
        kill_cluster(running, pids, base_dir)


def test_peers_of_a_killed_rank_stop_waiting_for_it():
    """SIGKILL to rank 2 of 3 just before a query whose hash split streams between every pair of ranks: rank 1
    (not the master) waits for rank 2's part too, and must give up on it like the master does (heartbeats between
    all ranks, distributed/cluster.h) instead of blocking its service for good: it logs the same error, and it
    stops when the cluster is stopped."""
    base_dir = tempfile.mkdtemp(prefix="tessera-peer-failure-")
    data = os.path.join(base_dir, "rows.csv")
    with open(data, "w") as f:
        f.writelines(f"{i},{i * 7 % 1000}\n" for i in range(20000))
    running = Cluster(base_dir, 3, "--allowed-directories", base_dir, "--distributed-peer-timeout-ms",
                      str(PEER_TIMEOUT_S * 1000), env=dict(MPI_ENV, OMPI_MCA_orte_enable_recovery="1"))
    pids = {}
    try:
        running.sql("CREATE TABLE big (a BIGINT, b BIGINT) PARTITION BY HASH (a)",
                    "CREATE TABLE other (e BIGINT, f BIGINT) PARTITION BY HASH (e)",
                    f"COPY big FROM '{data}' (FORMAT csv)", f"COPY other FROM '{data}' (FORMAT csv)")
        query = "SELECT max(big.a + other.e) FROM big JOIN other ON big.b = other.f"
        plan = running.sql("EXPLAIN " + query).stdout
        assert "hash split big (2 columns) by b across ranks 0..2" in plan, plan
        pids = rank_pids(base_dir)
        assert sorted(pids) == [0, 1, 2], pids
        os.kill(pids[2], signal.SIGKILL)
        began = time.monotonic()
        failed = running.sql(query, check=False)
        assert failed.returncode != 0 and "rank 2 stopped answering" in failed.stderr, failed.stderr
        assert time.monotonic() - began < PEER_TIMEOUT_S + 30
        # Rank 1 gave up on rank 2 too: its service stops with the master.
        stop_by_pid(running.process, BOUND_S)
        stderr = running.process.stderr.read()
        assert re.search(r"rank 1: a hash split failed: .*rank 2 stopped answering", stderr), stderr
        deadline = time.monotonic() + BOUND_S
        while pids[1] in rank_pids(base_dir).values() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert pids[1] not in rank_pids(base_dir).values()
    finally:
        kill_cluster(running, pids, base_dir)


def test_split_threshold_is_the_servers_setting():
    """--distributed-split-groups: partial aggregates are split by their group key and merged on the ranks from
    that many estimated groups on, below it the master merges them. With 50,000: 100,000 groups split, 20,000
    groups (which the default of 10,000 would split) merge on the master."""
    base_dir = tempfile.mkdtemp(prefix="tessera-split-groups-")
    data = os.path.join(base_dir, "rows.csv")
    with open(data, "w") as f:
        f.writelines(f"{i},{i},{i % 20000}\n" for i in range(100000))
    running = Cluster(base_dir, 2, "--allowed-directories", base_dir, "--distributed-split-groups", "50000")
    try:
        running.sql("CREATE TABLE t (a BIGINT, b BIGINT, c BIGINT) PARTITION BY HASH (a)",
                    f"COPY t FROM '{data}' (FORMAT csv)")
        many = "SELECT b, count(*) FROM t GROUP BY b"
        plan = running.sql("EXPLAIN " + many).stdout
        assert "hash split aggregate(1 keys, 1 calls) of t (1 columns) by b" in plan, plan
        assert "merges the ranks' partial aggregates" not in plan, plan
        fewer = "SELECT c, count(*), sum(b) FROM t GROUP BY c"
        plan = running.sql("EXPLAIN " + fewer).stdout
        assert "merges the ranks' partial aggregates" in plan and "hash split" not in plan, plan
        counts = rows(running.sql(fewer))
        assert len(counts) == 20000 and counts[0] == ["0", "5", str(sum(range(0, 100000, 20000)))], counts[0]
    finally:
        assert running.stop()
        shutil.rmtree(base_dir, ignore_errors=True)


def test_streams_and_broadcasts_of_many_blocks_arrive_whole_and_in_order():
    """A gather of more blocks than a stream's credits (kInitialCredits), and a broadcast of what it gathered,
    whose sends are on their way several at once (block_stream.cc, SendRelation): every block arrives, once, and
    the answer is exact. Each COPY adds blocks of its own on every rank, so 24 of them make 24 small blocks a
    rank."""
    base_dir = tempfile.mkdtemp(prefix="tessera-many-blocks-")
    copies, rows_per_copy = 24, 5000
    running = Cluster(base_dir, 2, "--allowed-directories", base_dir)
    try:
        running.sql("CREATE TABLE t (a BIGINT, b BIGINT) PARTITION BY HASH (a)")
        for c in range(copies):
            data = os.path.join(base_dir, f"rows-{c}.csv")
            with open(data, "w") as f:
                f.writelines(f"{i},{i * 3}\n" for i in range(c * rows_per_copy, (c + 1) * rows_per_copy))
            running.sql(f"COPY t FROM '{data}' (FORMAT csv)")
        # The LIMIT keeps the even keys on the master (gathered from rank 1), which sends them whole to rank 1 for
        # the join with its part of t.
        query = ("SELECT count(*), sum(t.b), min(t.a), max(t.a) FROM t JOIN "
                 "(SELECT a FROM t WHERE a % 2 = 0 LIMIT 100000000) AS s ON t.a = s.a")
        plan = running.sql("EXPLAIN ANALYZE " + query).stdout
        gathered = [int(b) for b in re.findall(r"received (\d+) blocks", plan)]
        broadcast = re.findall(r"broadcast (\d+) bytes", plan)
        assert max(gathered) > 8 and broadcast, plan
        evens = range(0, copies * rows_per_copy, 2)
        assert rows(running.sql(query)) == [[str(len(evens)), str(sum(3 * i for i in evens)), "0",
                                             str(copies * rows_per_copy - 2)]]
    finally:
        assert running.stop()
        shutil.rmtree(base_dir, ignore_errors=True)


def test_directory_of_another_layout_is_refused():
    base_dir = tempfile.mkdtemp(prefix="tessera-layout-")
    try:
        two = Cluster(base_dir, 2)
        two.sql("CREATE TABLE t (a INTEGER) PARTITION BY HASH (a)")
        assert two.stop()
        three = subprocess.run(
            [MPIEXEC, "--oversubscribe", "-np", "3", SERVER, "--distributed", "--data", base_dir, "--listen",
             "127.0.0.1:0", "--threads", "1"], capture_output=True, text=True, env=MPI_ENV, timeout=BOUND_S)
        assert three.returncode != 0
        assert "belongs to rank 0 of a 2-rank cluster, but this is rank 0 of 3" in three.stderr, three.stderr
        single = subprocess.run([SERVER, "--data", os.path.join(base_dir, "rank-1"), "--listen", "127.0.0.1:0"],
                                capture_output=True, text=True, timeout=BOUND_S)
        assert single.returncode != 0 and "is one rank's part of a distributed cluster" in single.stderr
    finally:
        shutil.rmtree(base_dir, ignore_errors=True)
