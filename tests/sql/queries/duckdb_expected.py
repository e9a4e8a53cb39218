#!/usr/bin/env python3
"""Recompute the expected rows of sqllogictest files with DuckDB (python3 -m pip install duckdb).

    python3 tests/sql/queries/duckdb_expected.py [--check] FILE.test...

Every file runs top to bottom in a fresh in-memory DuckDB. For each `query` record the rows after `----` are
replaced by DuckDB's answer (rendered as the runner expects: NULL, (empty), true/false, DECIMAL with its scale,
DOUBLE in shortest form, I columns truncated; rowsort rows sorted). Comment lines in front of a record steer it:
  `# duckdb: SQL`  DuckDB runs this SQL instead of the record's (where the dialects differ; one line per comment,
                   joined with spaces);
  `# duckdb-ok`    a `statement error` record that DuckDB accepts (otherwise that is reported as a problem).
Records under `onlyif tessera` are not run in DuckDB and are kept as written; `restart` is a no-op.
--check writes nothing and exits 1 when a file would change or DuckDB disagrees with a statement record.
"""
import datetime
import decimal
import re
import sys

import duckdb


def render(value, column_type):
    if value is None:
        return 'NULL'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if column_type == 'I' and isinstance(value, (int, float, decimal.Decimal)):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return format(value, 'f')
    if isinstance(value, float):
        return str(int(value)) if value == int(value) and abs(value) < 1e15 else repr(value)
    if isinstance(value, datetime.datetime):
        return value.strftime('%Y-%m-%d %H:%M:%S')
    if isinstance(value, datetime.date):
        return value.isoformat()
    text = str(value)
    return '(empty)' if text == '' else text


def process(path):
    """Returns (new text, number of problems)."""
    text = open(path, encoding='utf-8').read()
    blocks = re.split(r'\n[ \t]*\n', text.strip('\n'))
    con = duckdb.connect()
    out, problems = [], 0

    def problem(message):
        nonlocal problems
        problems += 1
        print(f'{path}: {message}', file=sys.stderr)

    for block in blocks:
        lines = block.split('\n')
        head, duck_sql = [], []
        i = 0
        while i < len(lines) and lines[i].startswith(('#', 'skipif', 'onlyif')):
            if lines[i].startswith('# duckdb:'):
                duck_sql.append(lines[i][len('# duckdb:'):].strip())
            head.append(lines[i])
            i += 1
        body = lines[i:]
        if not body or body[0].split()[0] in ('restart', 'halt') or 'onlyif tessera' in (l.strip() for l in head):
            out.append(block)
            continue
        words = body[0].split()
        if '----' in body:
            sql_lines = body[1:body.index('----')]
        else:
            sql_lines = body[1:]
        sql = '\n'.join(l for l in sql_lines if not l.startswith('#'))
        run_sql = ' '.join(duck_sql) if duck_sql else sql
        short = ' '.join(sql.split())[:100]
        if words[0] == 'statement':
            try:
                con.execute(run_sql)
                error = None
            except Exception as e:  # duckdb raises several exception types
                error = str(e).split('\n')[0]
            if words[1] == 'ok' and error is not None:
                problem(f'DuckDB rejects a "statement ok": {short}: {error}')
            if words[1] == 'error' and error is None and '# duckdb-ok' not in head:
                problem(f'DuckDB accepts a "statement error" (add "# duckdb-ok" if intended): {short}')
            out.append(block)
            continue
        if words[0] != 'query':
            problem(f'unknown record {words[0]!r}')
            out.append(block)
            continue
        types = words[1]
        sort_mode = words[2] if len(words) > 2 else 'nosort'
        try:
            result = con.execute(run_sql)
            rows = result.fetchall()
        except Exception as e:
            problem(f'DuckDB fails on a query: {short}: {str(e).splitlines()[0]}')
            out.append(block)
            continue
        if len(result.description) != len(types):
            problem(f'DuckDB returns {len(result.description)} columns, the record declares {types}: {short}')
        rendered = ['\t'.join(render(v, types[j] if j < len(types) else 'T') for j, v in enumerate(row))
                    for row in rows]
        if sort_mode == 'rowsort':
            rendered.sort()
        elif sort_mode == 'valuesort':
            problem('valuesort is not supported by this script')
        new_block = head + body[:1] + sql_lines
        if rendered:
            new_block += ['----'] + rendered
        out.append('\n'.join(new_block))
    return '\n\n'.join(out) + '\n', problems


def main(argv):
    check = '--check' in argv
    files = [a for a in argv if a != '--check']
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    failed = False
    for path in files:
        new_text, problems = process(path)
        old_text = open(path, encoding='utf-8').read()
        failed |= problems > 0
        if new_text != old_text:
            if check:
                print(f'{path}: expected rows differ from DuckDB', file=sys.stderr)
                failed = True
            else:
                open(path, 'w', encoding='utf-8').write(new_text)
                print(f'{path}: updated')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
