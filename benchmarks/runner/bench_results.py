"""Parsing engine output and comparing query results.

Everything here is pure (no engine, no files) so that tests/benchmark_runner/ can cover it directly:

- parse_tessera_output(): the stdout of `tessera --csv --timing` (RFC 4180 records, a `Time: <ms> ms` line after
  every statement) into one StatementOutput per statement.
- split_statements(), order_by_keys(): the little SQL lexing the runner needs (statement count of a query file,
  whether the outermost SELECT has ORDER BY and on which output columns).
- compare_results(): a result against a reference: numbers within a relative 1e-9, or 0.01 absolute where the
  reference prints at most two decimals (TPC-H allows rounding money to cents); strings compared without trailing
  spaces (CHAR(n)); NULL and the empty string are the same (tessera's CSV cannot tell them apart); rows as a
  multiset unless the query orders them, and then in order, where ties of the ORDER BY keys may come in any order.
- median(), geomean().
"""
from __future__ import annotations

import csv
import datetime
import decimal
import io
import math
import re
import statistics
from dataclasses import dataclass, field
from decimal import Decimal

TIME_LINE = re.compile(r"^Time: ([0-9.]+(?:[eE][+-]?[0-9]+)?) ms$")
NUMBER = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
RELATIVE_TOLERANCE = Decimal("1e-9")
CENT_TOLERANCE = Decimal("0.01")


# --------------------------------------------------------------------------------------------------------------
# tessera output


@dataclass
class StatementOutput:
    """One statement's output: the CSV header (or the status line, e.g. ['COPY 5']), its rows, and its time."""

    header: list[str] | None = None
    rows: list[list[str]] = field(default_factory=list)
    time_ms: float | None = None  # None: the statement did not finish (the output ends inside it)


def parse_tessera_output(text: str) -> list[StatementOutput]:
    """Splits `tessera --csv --timing` output into statements.

    Every statement prints its header line (or a status line such as `CREATE TABLE`), its rows, then
    `Time: <ms> ms`. Quoted fields may span lines. A one-column row holding NULL or '' prints as an empty line,
    returned as ['']. Output that ends without a Time line (the process failed) gives a last StatementOutput with
    time_ms None. A result value that is literally `Time: <n> ms` would be misread; no benchmark query returns one.
    """
    statements: list[StatementOutput] = []
    current = StatementOutput()
    started = False
    for record in csv.reader(io.StringIO(text)):
        if len(record) == 1:
            match = TIME_LINE.match(record[0])
            if match:
                current.time_ms = float(match.group(1))
                statements.append(current)
                current = StatementOutput()
                started = False
                continue
        started = True
        if current.header is None:
            current.header = record
        else:
            current.rows.append(record if record else [""])
    if started:
        statements.append(current)
    return statements


# --------------------------------------------------------------------------------------------------------------
# SQL lexing


def _scan(sql: str):
    """Yields (index, char, depth) for characters outside comments and quoted strings/identifiers' insides.

    Quoted literals are yielded as a single placeholder char ("'" or '"') at their opening quote.
    """
    i, depth, n = 0, 0, len(sql)
    while i < n:
        c = sql[i]
        if c == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "/" and sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
            yield i - 1, " ", depth
            continue
        if c in ("'", '"'):
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:  # doubled quote inside
                        j += 2
                        continue
                    break
                j += 1
            yield i, c, depth
            i = j + 1
            continue
        if c == "(":
            depth += 1
            yield i, c, depth - 1
        elif c == ")":
            depth = max(0, depth - 1)
            yield i, c, depth
        else:
            yield i, c, depth
        i += 1


def split_statements(sql: str) -> list[str]:
    """The statements of a SQL script (split at ';' outside quotes and comments), without empty ones."""
    statements, start = [], 0
    for i, c, _ in _scan(sql):
        if c == ";":
            statements.append(sql[start:i])
            start = i + 1
    statements.append(sql[start:])
    return [s.strip() for s in statements if _has_code(s)]


def _has_code(sql: str) -> bool:
    return any(not c.isspace() for _, c, _ in _scan(sql))


def _masked(sql: str) -> str:
    """The statement with comments blanked and quoted literals reduced to a placeholder, depth-0 parts kept."""
    out = [" "] * len(sql)
    for i, c, depth in _scan(sql):
        out[i] = c if depth == 0 else ("(" if c == "(" else ")" if c == ")" else " ")
    return "".join(out)


def order_by_keys(sql: str) -> list[tuple[str, bool]] | None:
    """The ORDER BY items of the last statement's outermost query as (expression, descending), or None.

    Only ORDER BY at parenthesis depth 0 counts (not one inside a subquery or window).
    """
    statements = split_statements(sql)
    if not statements:
        return None
    statement = statements[-1]
    masked = _masked(statement)
    matches = list(re.finditer(r"\border\s+by\b", masked, re.IGNORECASE))
    if not matches:
        return None
    start = matches[-1].end()
    tail_masked = masked[start:]
    stop = re.search(r"\b(limit|offset|fetch)\b", tail_masked, re.IGNORECASE)
    end = start + (stop.start() if stop else len(tail_masked))
    aliases = _select_aliases(statement, masked)
    items, item_start = [], start
    depth_map = {i: d for i, _, d in _scan(statement)}
    for i in range(start, end):
        if statement[i] == "," and depth_map.get(i) == 0:
            items.append(statement[item_start:i])
            item_start = i + 1
    items.append(statement[item_start:end])
    keys = []
    for item in items:
        text = " ".join(item.split())
        text = re.sub(r"\s+nulls\s+(first|last)$", "", text, flags=re.IGNORECASE)
        descending = False
        m = re.search(r"\s+(asc|desc)$", text, re.IGNORECASE)
        if m:
            descending = m.group(1).lower() == "desc"
            text = text[: m.start()]
        if text:
            # An output name wins over an expression spelled the same (SQL resolves ORDER BY names first).
            outputs = {alias.lower() for alias in aliases.values()}
            keys.append((text if text.lower() in outputs else aliases.get(text.lower(), text), descending))
    return keys or None


def _select_aliases(statement: str, masked: str) -> dict[str, str]:
    """{expression (lowercase, spaces collapsed): alias} of the outermost SELECT list's `expression [AS] alias`
    items, so that an ORDER BY on the expression maps to its output column (TPC-DS Q71: `SELECT i_brand_id
    brand_id ... ORDER BY ext_price DESC, i_brand_id, t_hour`)."""
    select = re.search(r"\bselect\b", masked, re.IGNORECASE)
    if not select:
        return {}
    start = select.end()
    stop = re.search(r"\b(from|where|group|having|window|qualify|order|limit|union|intersect|except)\b",
                     masked[start:], re.IGNORECASE)
    end = start + (stop.start() if stop else len(masked) - start)
    depth_map = {i: d for i, _, d in _scan(statement)}
    items, item_start = [], start
    for i in range(start, end):
        if statement[i] == "," and depth_map.get(i) == 0:
            items.append(statement[item_start:i])
            item_start = i + 1
    items.append(statement[item_start:end])
    aliases = {}
    for item in items:
        m = re.fullmatch(r"\s*(.*?\S)\s+(?:as\s+)?([A-Za-z_][A-Za-z_0-9]*)\s*", item, re.IGNORECASE | re.DOTALL)
        if m and not re.search(r"\b(distinct|all)$", m.group(1), re.IGNORECASE):
            aliases[" ".join(m.group(1).split()).lower()] = m.group(2)
    return aliases


# --------------------------------------------------------------------------------------------------------------
# values


def to_text(value) -> str:
    """A Python value from DuckDB (or a string) as the text the comparison works on. NULL is ''."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)


def parse_number(text: str) -> Decimal | None:
    text = text.strip()
    if not NUMBER.match(text):
        return None
    try:
        return Decimal(text)
    except decimal.InvalidOperation:
        return None


def _decimals(text: str) -> int | None:
    """Digits after the point of a plain decimal literal; None when it has an exponent."""
    text = text.strip()
    if "e" in text or "E" in text:
        return None
    return len(text.split(".", 1)[1]) if "." in text else 0


def values_equal(actual: str, expected: str) -> bool:
    """Tessera's text against a reference text, with the benchmark's tolerances (see the module doc)."""
    a, e = actual.rstrip(" "), expected.rstrip(" ")
    if a == e:
        return True
    if a.lower() in ("true", "false", "t", "f") and e.lower() in ("true", "false", "t", "f"):
        return a[0].lower() == e[0].lower()
    na, ne = parse_number(a), parse_number(e)
    if na is None or ne is None:
        return False
    diff = abs(na - ne)
    if diff <= RELATIVE_TOLERANCE * max(abs(na), abs(ne)):
        return True
    decimals = _decimals(e)
    return decimals is not None and decimals <= 2 and diff <= CENT_TOLERANCE


def rows_equal(actual: list[str], expected: list[str]) -> bool:
    return len(actual) == len(expected) and all(values_equal(a, e) for a, e in zip(actual, expected))


def _sort_key(row: list[str]):
    key = []
    for value in row:
        number = parse_number(value)
        key.append((0, float(number), "") if number is not None else (1, 0.0, value.rstrip(" ")))
    return key


def _compare_cells(a: str, b: str) -> int:
    """-1, 0, 1 for ordering checks: numerically when both are numbers (equal within tolerance), else as text."""
    if values_equal(a, b):
        return 0
    na, nb = parse_number(a), parse_number(b)
    if na is not None and nb is not None:
        return -1 if na < nb else 1
    a, b = a.rstrip(" "), b.rstrip(" ")
    return -1 if a < b else 1


def _order_cells(a: str, b: str) -> int:
    """-1, 0, 1: how a result orders its own cells. Exact, unlike _compare_cells' tolerance: 8149.68 before
    8149.67 in a DESC key is an order, not a tie (TPC-DS Q71 at SF10)."""
    na, nb = parse_number(a), parse_number(b)
    if na is not None and nb is not None:
        return (na > nb) - (na < nb)
    a, b = a.rstrip(" "), b.rstrip(" ")
    return (a > b) - (a < b)


def _short(row, limit: int = 80) -> str:
    text = "|".join(row)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _cell_difference(actual: list[str], expected: list[str], header=None) -> str:
    """'column: got X, expected Y' for the first differing cell of two rows of the same width."""
    for c, (a, e) in enumerate(zip(actual, expected)):
        if not values_equal(a, e):
            name = header[c] if header and c < len(header) else f"column {c + 1}"
            return f"{name} {a.rstrip() or 'NULL'!s}, expected {e.rstrip() or 'NULL'!s}"
    return "rows differ"


def _multiset_difference(actual: list[list[str]], expected: list[list[str]], header=None) -> str | None:
    """None when the rows are the same multiset (within tolerance), else a description of one difference."""
    a_sorted = sorted(actual, key=_sort_key)
    e_sorted = sorted(expected, key=_sort_key)
    if all(rows_equal(a, e) for a, e in zip(a_sorted, e_sorted)):
        return None
    # Sorting by float may order near-equal numbers differently on the two sides: match greedily inside buckets
    # of rows that agree on their non-numeric cells.
    def bucket(row):
        return tuple(None if parse_number(v) is not None else v.rstrip(" ") for v in row)

    buckets: dict = {}
    for row in e_sorted:
        buckets.setdefault(bucket(row), []).append(row)
    for row in a_sorted:
        candidates = buckets.get(bucket(row))
        if not candidates:
            return f"unexpected row {_short(row)}"
        for i, candidate in enumerate(candidates):
            if rows_equal(row, candidate):
                del candidates[i]
                break
        else:
            return f"row ({_short(row)}): {_cell_difference(row, candidates[0], header)}"
    missing = next((rows[0] for rows in buckets.values() if rows), None)
    return f"missing row {_short(missing)}" if missing else None


def _key_columns(keys, header):
    """Maps ORDER BY items to result column indexes; None when one is not a plain output column."""
    if not keys or not header:
        return None
    names = [h.strip().lower() for h in header]
    columns = []
    for expression, descending in keys:
        text = expression.strip().strip('"').lower()
        if text.isdigit() and 1 <= int(text) <= len(names):
            columns.append((int(text) - 1, descending))
            continue
        if text not in names and "." in text:
            text = text.rsplit(".", 1)[1].strip('"')
        if text not in names:
            return None
        columns.append((names.index(text), descending))
    return columns


def is_sorted(rows: list[list[str]], key_columns) -> bool:
    """Whether `rows` are sorted by `key_columns`. A NULL ('') against a value is taken as in order: NULLS FIRST /
    LAST is not tracked (TPC-DS Q71 orders `ext_price DESC NULLS FIRST`), and the rows already matched as a
    multiset."""
    for previous, row in zip(rows, rows[1:]):
        for column, descending in key_columns:
            if (previous[column].strip() == "") != (row[column].strip() == ""):
                break
            c = _order_cells(previous[column], row[column])
            if descending:
                c = -c
            if c < 0:
                break
            if c > 0:
                return False
    return True


def compare_results(actual: list[list[str]], expected: list[list[str]], order_keys=None, header=None) -> str | None:
    """None when `actual` matches `expected`, else a one-line description of the first difference.

    Rows are texts (to_text() for DuckDB values). `order_keys` (from order_by_keys()) makes the comparison ordered;
    rows that differ only in the order of ORDER BY ties still match when `header` lets the keys be found.
    """
    if len(actual) != len(expected):
        return f"{len(actual)} rows, expected {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        if len(a) != len(e):
            return f"row {i + 1}: {len(a)} columns, expected {len(e)}"
    if not order_keys:
        return _multiset_difference(actual, expected, header)
    for i, (a, e) in enumerate(zip(actual, expected)):
        if not rows_equal(a, e):
            difference = f"row {i + 1} ({_short(e, 40)}): {_cell_difference(a, e, header)}"
            break
    else:
        return None
    # Out of order, or different values. Equal as multisets and sorted by the keys means ties came in another order.
    if _multiset_difference(actual, expected, header) is None:
        columns = _key_columns(order_keys, header)
        if columns is not None and is_sorted(actual, columns):
            return None
        return f"rows out of order: {difference}"
    return difference


def read_answer_file(path: str) -> tuple[list[str], list[list[str]]]:
    """A reference answer: '|'-separated, header line first (tests/… and answers-sf1 format)."""
    with open(path, newline="") as f:
        records = list(csv.reader(f, delimiter="|"))
    if not records:
        return [], []
    return records[0], [r if r else [""] for r in records[1:]]


# --------------------------------------------------------------------------------------------------------------
# statistics


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def geomean(values):
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))
