#!/usr/bin/env python3
"""Writes a recreation of SQLite's sqllogictest corpus files select1-select5 in Tessera's .test format.

    python3 benchmarks/sqllogic_corpus/generate_select_corpus.py OUT_DIR [--seed N] [--scale F]

SQLite's corpus is not in any package this project can install, so this script rebuilds files of the same
kinds from the same ingredients (see README.md): random queries over the corpus' table shapes, answered by
Python's built-in sqlite3 (the engine the corpus was made with). `rowsort` is used everywhere, so that NULL
ordering conventions (SQLite sorts NULLs first, Tessera last for ASC) do not count as failures.
"""
import argparse
import pathlib
import random
import sqlite3

# select1 / select2 / select3: one table t1(a..e) of 30 rows, expressions and predicates of the corpus.
EXPRESSIONS = [
    ('a', 'I'), ('b', 'I'), ('c', 'I'), ('d', 'I'), ('e', 'I'),
    ('a-b', 'I'), ('b-c', 'I'), ('c-d', 'I'), ('d-e', 'I'), ('abs(a)', 'I'), ('abs(b-c)', 'I'),
    ('a+b*2', 'I'), ('a+b*2+c*3', 'I'), ('a+b*2+c*3+d*4', 'I'), ('a+b*2+c*3+d*4+e*5', 'I'),
    ('(a+b+c+d+e)/5', 'R'),
    ('CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222\n        WHEN a<b+3 THEN 333 ELSE 444 END', 'I'),
    ('CASE a+1 WHEN b THEN 111 WHEN c THEN 222\n        WHEN d THEN 333  WHEN e THEN 444 ELSE 555 END', 'I'),
    ('CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END', 'I'),
    ('(SELECT count(*) FROM t1 AS x WHERE x.b<t1.b)', 'I'),
    ('(SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d)', 'I'),
]
# select2 / select3 add NULL-aware expressions.
NULL_EXPRESSIONS = [
    ('coalesce(a,b,c,d,e)', 'I'),
    ('CASE WHEN a IS NULL THEN 1 ELSE 0 END', 'I'),
    ('(SELECT max(x.a) FROM t1 AS x WHERE x.e>t1.e)', 'I'),
    ('(SELECT sum(x.d) FROM t1 AS x WHERE x.c<t1.c AND x.a IS NOT NULL)', 'I'),
]
PREDICATES = [
    '(e>c OR e<d)', 'd>e', 'EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b)', 'd NOT BETWEEN 110 AND 150',
    'c BETWEEN b-2 AND d+2', 'b>c', 'c>d', '(c<=d-2 OR c>=d+2)', '(a>b-2 AND a<b+2)', 'a>b',
    'e+d BETWEEN a+b-10 AND c+130', '(e>a AND e<b)',
]
NULL_PREDICATES = [
    'a IS NULL', 'b IS NOT NULL', 'c IS NULL', 'coalesce(a,b,c,d,e)<>0',
    'NOT EXISTS(SELECT 1 FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d)',
    'e IN (SELECT x.a FROM t1 AS x WHERE x.a IS NOT NULL)',
]


def t1_rows(rng, nulls):
    rows = []
    base = 100
    for _ in range(30):
        values = list(range(base, base + 5))
        rng.shuffle(values)
        if nulls:
            for i in range(5):
                if rng.random() < 0.12:
                    values[i] = None
        rows.append(values)
        base += 5
    return rows


def render(value, kind):
    if value is None:
        return 'NULL'
    if kind == 'I':
        return str(int(value))
    if kind == 'R':
        return repr(float(value))
    return '(empty)' if value == '' else str(value)


class Writer:
    def __init__(self, path, db):
        self.out = open(path, 'w')
        self.db = db
        self.records = 0

    def statement(self, sql):
        self.db.execute(sql)
        self.out.write(f'statement ok\n{sql}\n\n')
        self.records += 1

    def query(self, sql, kinds):
        rows = self.db.execute(sql).fetchall()
        self.out.write(f'query {kinds} rowsort\n{sql}\n----\n')
        for row in rows:
            self.out.write('\t'.join(render(v, k) for v, k in zip(row, kinds)) + '\n')
        self.out.write('\n')
        self.records += 1

    def close(self):
        self.out.close()


def single_table_file(path, rng, count, nulls):
    db = sqlite3.connect(':memory:')
    w = Writer(path, db)
    w.statement('CREATE TABLE t1(a INTEGER, b INTEGER, c INTEGER, d INTEGER, e INTEGER)')
    for row in t1_rows(rng, nulls):
        columns = ['a', 'b', 'c', 'd', 'e']
        order = columns[:]
        rng.shuffle(order)
        values = ','.join('NULL' if row[columns.index(c)] is None else str(row[columns.index(c)]) for c in order)
        w.statement(f'INSERT INTO t1({",".join(order)}) VALUES({values})')
    expressions = EXPRESSIONS + (NULL_EXPRESSIONS if nulls else [])
    predicates = PREDICATES + (NULL_PREDICATES if nulls else [])
    for _ in range(count):
        chosen = rng.sample(expressions, rng.randint(1, 7))
        sql = 'SELECT ' + ',\n       '.join(e for e, _ in chosen) + '\n  FROM t1'
        where = rng.sample(predicates, rng.randint(0, 3))
        if where:
            joiner = rng.choice(['\n   AND ', '\n    OR '])
            sql += '\n WHERE ' + joiner.join(where)
        order = list(range(1, len(chosen) + 1))
        rng.shuffle(order)
        sql += '\n ORDER BY ' + ','.join(map(str, order))
        w.query(sql, ''.join(k for _, k in chosen))
    w.close()
    return w.records


def compound_file(path, rng, count):
    """select4: compound SELECTs (UNION, UNION ALL, INTERSECT, EXCEPT) over one table with NULLs and text."""
    db = sqlite3.connect(':memory:')
    w = Writer(path, db)
    w.statement('CREATE TABLE t1(a1 INTEGER, b1 INTEGER, c1 INTEGER, d1 INTEGER, e1 INTEGER, x1 VARCHAR(30))')
    for i in range(40):
        values = [rng.choice([None] + list(range(0, 30))) if rng.random() < 0.1 else rng.randint(0, 29)
                  for _ in range(5)]
        text = f"'table t1 row {i + 1}'"
        w.statement('INSERT INTO t1 VALUES(' + ','.join('NULL' if v is None else str(v) for v in values) +
                    f',{text})')
    columns = ['a1', 'b1', 'c1', 'd1', 'e1']
    terms = ['{c} > {n}', '{c} < {n}', '{c} = {n}', '{c} IS NULL', '{c} IS NOT NULL', '{c} IN ({n},{m},{k})',
             '{c} BETWEEN {n} AND {m}', '({c} > {n} OR {d} < {m})']

    def block(items):
        parts = []
        for _ in range(rng.randint(1, 3)):
            template = rng.choice(terms)
            n, m, k = sorted(rng.sample(range(30), 3))
            parts.append(template.format(c=rng.choice(columns), d=rng.choice(columns), n=n, m=m, k=k))
        return f'SELECT {items} FROM t1 WHERE ' + ' AND '.join(parts)

    for _ in range(count):
        picked = rng.sample(columns + ['x1'], rng.randint(1, 3))
        kinds = ''.join('T' if c == 'x1' else 'I' for c in picked)
        items = ', '.join(picked)
        operator = rng.choice(['UNION', 'UNION ALL', 'INTERSECT', 'EXCEPT'])
        # One operator per chain: SQLite binds compound operators left to right, SQL gives INTERSECT precedence.
        blocks = [block(items) for _ in range(rng.randint(2, 4))]
        w.query(f'\n  {operator}\n'.join(blocks), kinds)
    w.close()
    return w.records


def join_file(path, rng, count):
    """select5: joins of 2 to 6 of 20 small tables with equality chains and filters, text results."""
    db = sqlite3.connect(':memory:')
    w = Writer(path, db)
    tables = 20
    for t in range(1, tables + 1):
        w.statement(f'CREATE TABLE t{t}(a{t} INTEGER PRIMARY KEY, b{t} INTEGER, x{t} VARCHAR(40))')
        for i in range(1, 11):
            w.statement(f"INSERT INTO t{t} VALUES({i},{rng.randint(1, 10)},'table t{t} row {i}')")
    for _ in range(count):
        picked = rng.sample(range(1, tables + 1), rng.randint(2, 6))
        conditions = []
        for left, right in zip(picked, picked[1:]):
            conditions.append(rng.choice([f'a{left}=b{right}', f'b{left}=a{right}', f'a{left}=a{right}']))
        for _ in range(rng.randint(0, 3)):
            t = rng.choice(picked)
            conditions.append(rng.choice([f'a{t} IN ({rng.randint(1, 10)},{rng.randint(1, 10)},'
                                          f'{rng.randint(1, 10)})', f'b{t}={rng.randint(1, 10)}',
                                          f'a{t}>{rng.randint(1, 9)}']))
        rng.shuffle(conditions)
        outputs = [f'x{t}' for t in rng.sample(picked, rng.randint(1, len(picked)))]
        from_list = ','.join(f't{t}' for t in rng.sample(picked, len(picked)))
        sql = f'SELECT {",".join(outputs)}\n  FROM {from_list}\n WHERE ' + '\n   AND '.join(conditions)
        w.query(sql, 'T' * len(outputs))
    w.close()
    return w.records


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('out_dir')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--scale', type=float, default=1.0, help='multiplies the number of queries per file')
    args = parser.parse_args()
    out = pathlib.Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    n = lambda base: max(1, int(base * args.scale))
    files = [
        ('select1.test', lambda p: single_table_file(p, rng, n(1000), nulls=False)),
        ('select2.test', lambda p: single_table_file(p, rng, n(1000), nulls=True)),
        ('select3.test', lambda p: single_table_file(p, rng, n(3300), nulls=True)),
        ('select4.test', lambda p: compound_file(p, rng, n(2000))),
        ('select5.test', lambda p: join_file(p, rng, n(2000))),
    ]
    for name, make in files:
        print(f'{out / name}: {make(out / name)} records')


if __name__ == '__main__':
    main()
