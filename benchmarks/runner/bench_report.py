"""Reports: the text table, CSV, JSON, and a hand-written SVG bar chart."""
from __future__ import annotations

import csv
import json
import math
from xml.sax.saxutils import escape

import bench_results

TESSERA_COLOR = "#2f6db5"
DUCKDB_COLOR = "#e0a526"
FAILED_COLOR = "#c62828"
MISMATCH_COLOR = "#e65100"


def fmt_ms(value) -> str:
    if value is None:
        return "-"
    return f"{value:,.1f}" if value < 10_000 else f"{value:,.0f}"


def fmt_ratio(value) -> str:
    return "-" if value is None else f"{value:.2f}x"


def summarize(rows: list[dict]) -> dict:
    """Totals over the queries both engines ran, and the geometric mean of the per-query ratios."""
    both = [r for r in rows if r.get("tessera_ms") is not None and r.get("duckdb_ms") is not None]
    tessera_total = sum(r["tessera_ms"] for r in both)
    duckdb_total = sum(r["duckdb_ms"] for r in both)
    statuses = [r["verified"] for r in rows]
    return {
        "queries": len(rows),
        "ran_on_tessera": sum(1 for r in rows if r.get("tessera_ms") is not None),
        "ran_on_both": len(both),
        "tessera_total_ms": tessera_total if both else None,
        "duckdb_total_ms": duckdb_total if both else None,
        "total_ratio": tessera_total / duckdb_total if both and duckdb_total > 0 else None,
        "geomean_ratio": bench_results.geomean([r["ratio"] for r in both]),
        "tessera_total_all_ms": sum(r["tessera_ms"] for r in rows if r.get("tessera_ms") is not None),
        "ok": statuses.count("ok"),
        "mismatch": statuses.count("MISMATCH"),
        "failed": statuses.count("FAILED"),
        "unverified": statuses.count("unverified"),
    }


def status_text(row: dict, width: int | None = None, labels: dict | None = None) -> str:
    """The verification status and its detail; `labels` renames the statuses (TPC-DS: ok -> correct, ...)."""
    text = (labels or {}).get(row["verified"], row["verified"])
    if row.get("detail"):
        text += ": " + row["detail"]
    if width and len(text) > width:
        text = text[: width - 3] + "..."
    return text


def format_table(title: str, rows: list[dict], summary: dict, compare: bool, detail_width: int = 110,
                 labels: dict | None = None) -> str:
    if compare:
        header = ["query", "tessera ms", "duckdb ms", "ratio", "verified"]
        body = [[r["query"], fmt_ms(r.get("tessera_ms")), fmt_ms(r.get("duckdb_ms")), fmt_ratio(r.get("ratio")),
                 status_text(r, detail_width, labels)] for r in rows]
    else:
        header = ["query", "tessera ms", "verified"]
        body = [[r["query"], fmt_ms(r.get("tessera_ms")), status_text(r, detail_width, labels)] for r in rows]
    footer = []
    if compare:
        footer.append([f"total ({summary['ran_on_both']} on both)", fmt_ms(summary["tessera_total_ms"]),
                       fmt_ms(summary["duckdb_total_ms"]), fmt_ratio(summary["total_ratio"]), ""])
        footer.append(["geomean of ratios", "", "", fmt_ratio(summary["geomean_ratio"]), ""])
    else:
        footer.append([f"total ({summary['ran_on_tessera']} ran)", fmt_ms(summary["tessera_total_all_ms"]), ""])
    widths = [max(len(line[i]) for line in [header] + body + footer) for i in range(len(header) - 1)]

    def render(cells):
        parts = [cells[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(cells[1:-1], widths[1:])]
        return ("  ".join(parts) + "  " + cells[-1]).rstrip()

    rule = "-" * (sum(widths) + 2 * len(widths) + len(header[-1]))
    lines = [title, render(header), rule] + [render(r) for r in body] + [rule] + [render(f) for f in footer]
    label = labels or {}
    counts = (f"verified: {summary['ok']} {label.get('ok', 'ok')}, {summary['mismatch']} "
              f"{label.get('MISMATCH', 'MISMATCH')}, {summary['failed']} {label.get('FAILED', 'FAILED')}"
              + (f", {summary['unverified']} without a reference" if summary["unverified"] else ""))
    lines.append(counts)
    return "\n".join(lines)


CSV_FIELDS = ["benchmark", "sf", "query", "tessera_median_ms", "duckdb_median_ms", "ratio", "verified", "detail",
              "tessera_runs_ms", "duckdb_runs_ms", "tessera_warmup_ms", "duckdb_warmup_ms", "rows", "threads", "runs"]


def write_csv(path: str, report: dict) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_FIELDS)
        for r in report["queries"]:
            writer.writerow([
                report["benchmark"], report["sf"], r["query"], _num(r.get("tessera_ms")), _num(r.get("duckdb_ms")),
                _num(r.get("ratio"), 4), r["verified"], r.get("detail") or "",
                ";".join(_num(v) for v in r.get("tessera_runs_ms") or []),
                ";".join(_num(v) for v in r.get("duckdb_runs_ms") or []),
                _num(r.get("tessera_warmup_ms")), _num(r.get("duckdb_warmup_ms")),
                "" if r.get("rows") is None else r["rows"], report["threads"], report["runs"],
            ])


def _num(value, digits=3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def write_json(path: str, report: dict) -> None:
    with open(path, "w") as f:
        json.dump(report, f, indent=2, default=str)
        f.write("\n")


# --------------------------------------------------------------------------------------------------------------
# SVG


def _nice_step(span: float, target: int = 6) -> float:
    raw = span / max(1, target)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * magnitude:
            return m * magnitude
    return 10 * magnitude


def _fmt_tick(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:g}k" if value < 1e6 else f"{value / 1e6:g}M"
    return f"{value:g}"


def bar_chart_svg(title: str, categories: list[str], series: list[tuple[str, str, list]], y_label: str,
                  subtitle: str = "", markers: dict | None = None, log_scale: bool | None = None,
                  notes: list[str] | None = None) -> str:
    """A grouped bar chart as a standalone SVG document.

    series: (name, color, values) with one value per category, None where there is none.
    markers: {(series index, category index): (label, color)}, drawn in place of (or above) the bar, e.g. FAILED.
    log_scale: None picks a log axis when the values span more than 30x.
    notes: a second, smaller label under each category (e.g. the tessera/duckdb ratio).
    """
    markers = markers or {}
    values = [v for _, _, vs in series for v in vs if v is not None and v > 0]
    lo, hi = (min(values), max(values)) if values else (1.0, 10.0)
    if log_scale is None:
        log_scale = hi / lo > 30
    n_series = max(1, len(series))
    bar_w = 14 if n_series > 1 else 22
    group_w = n_series * bar_w + 14
    left, right, top, plot_h, bottom = 78, 24, 74, 300, 64
    text_width = max(len(subtitle) * 5.9, len(title) * 9.5)  # about the width of the title lines, in px
    width = max(480, left + right + group_w * max(1, len(categories)), left + right + text_width)
    plot_w = width - left - right
    group_w = plot_w / max(1, len(categories))
    height = top + plot_h + bottom

    if log_scale:
        y_min_exp, y_max_exp = math.floor(math.log10(lo)), math.ceil(math.log10(hi * 1.0001))
        if y_max_exp == y_min_exp:
            y_max_exp += 1
        ticks = [10 ** e for e in range(y_min_exp, y_max_exp + 1)]

        def y_of(v):
            v = max(v, 10 ** y_min_exp)
            return top + plot_h - (math.log10(v) - y_min_exp) / (y_max_exp - y_min_exp) * plot_h
    else:
        step = _nice_step(hi)
        y_max = step * math.ceil(hi * 1.08 / step)
        ticks = [step * i for i in range(int(round(y_max / step)) + 1)]

        def y_of(v):
            return top + plot_h - max(0.0, v) / y_max * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
           f'viewBox="0 0 {width:.0f} {height}" font-family="Helvetica, Arial, sans-serif">',
           f'<rect x="0" y="0" width="{width:.0f}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="24" font-size="16" font-weight="bold">{escape(title)}</text>']
    if subtitle:
        out.append(f'<text x="{left}" y="42" font-size="11" fill="#555">{escape(subtitle)}</text>')
    legend_x = left
    for name, color, _ in series:
        out.append(f'<rect x="{legend_x}" y="52" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{legend_x + 16}" y="62" font-size="11">{escape(name)}</text>')
        legend_x += 24 + 7 * len(name)
    # Axis, grid and ticks.
    for tick in ticks:
        y = y_of(tick)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{_fmt_tick(tick)}</text>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#333"/>')
    out.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w:.1f}" y2="{top + plot_h}" stroke="#333"/>')
    label = y_label + (" (log scale)" if log_scale else "")
    out.append(f'<text transform="translate(18,{top + plot_h / 2:.0f}) rotate(-90)" font-size="11" '
               f'text-anchor="middle">{escape(label)}</text>')
    # Bars.
    baseline = top + plot_h
    for c, category in enumerate(categories):
        x0 = left + c * group_w + (group_w - n_series * bar_w) / 2
        for s, (name, color, vals) in enumerate(series):
            x = x0 + s * bar_w
            value = vals[c] if c < len(vals) else None
            marker = markers.get((s, c))
            if value is not None and value > 0:
                y = y_of(value)
                out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 2}" height="{baseline - y:.1f}" '
                           f'fill="{color}"><title>{escape(f"{category} {name}: {value:,.2f} {y_label}")}</title>'
                           f'</rect>')
                label_y = y - 3
                if marker:
                    text, mcolor = marker
                    out.append(f'<text x="{x + bar_w / 2 - 1:.1f}" y="{label_y:.1f}" font-size="12" '
                               f'font-weight="bold" fill="{mcolor}" text-anchor="middle">'
                               f'<title>{escape(text)}</title>!</text>')
            elif marker:
                text, mcolor = marker
                cx = x + bar_w / 2 - 1
                out.append(f'<text x="{cx:.1f}" y="{baseline - 4:.1f}" font-size="10" fill="{mcolor}" '
                           f'transform="rotate(-90 {cx + 3:.1f} {baseline - 4:.1f})">'
                           f'<title>{escape(text)}</title>{escape(text.split(":")[0][:12])}</text>')
        center = left + c * group_w + group_w / 2
        out.append(f'<text x="{center:.1f}" y="{baseline + 16}" font-size="11" '
                   f'text-anchor="middle">{escape(category)}</text>')
        if notes and c < len(notes) and notes[c]:
            out.append(f'<text x="{center:.1f}" y="{baseline + 30}" font-size="9" fill="#555" '
                       f'text-anchor="middle">{escape(notes[c])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def query_chart(report: dict) -> str:
    rows = report["queries"]
    categories = [r["query"] for r in rows]
    series = [("tessera", TESSERA_COLOR, [r.get("tessera_ms") for r in rows])]
    if report.get("compare") == "duckdb":
        series.append((f"DuckDB {report.get('duckdb_version', '')}".strip(), DUCKDB_COLOR,
                       [r.get("duckdb_ms") for r in rows]))
    markers = {}
    for c, r in enumerate(rows):
        if r["verified"] == "FAILED":
            markers[(0, c)] = (f"FAILED: {r.get('detail', '')}", FAILED_COLOR)
        elif r["verified"] == "MISMATCH":
            markers[(0, c)] = (f"MISMATCH: {r.get('detail', '')}", MISMATCH_COLOR)
    summary = report["summary"]
    subtitle = (f"median of {report['runs']} hot runs after 1 warm-up, {report['threads']} threads, "
                f"{report.get('date', '')}")
    if summary.get("geomean_ratio"):
        subtitle += f"; tessera/duckdb geomean {summary['geomean_ratio']:.2f}x over {summary['ran_on_both']} queries"
    notes = [fmt_ratio(r.get("ratio")) if r.get("ratio") else "" for r in rows]
    return bar_chart_svg(f"{report['title']} SF{report['sf']}: query times", categories, series, "ms",
                         subtitle=subtitle, markers=markers, notes=notes if any(notes) else None)


def throughput_chart(report: dict) -> str:
    results = report["throughput"]
    categories = [f"{r['streams']} stream{'s' if r['streams'] != 1 else ''}" for r in results]
    series = [("queries per hour", TESSERA_COLOR, [r.get("queries_per_hour") for r in results])]
    markers = {(0, c): (f"FAILED: {r['error']}", FAILED_COLOR) for c, r in enumerate(results) if r.get("error")}
    subtitle = (f"{report['title']} SF{report['sf']}, {len(report['stream_queries'])} queries per stream, "
                f"{report['threads']} threads per stream process, {report.get('date', '')}")
    notes = [f"Ts {r['elapsed_s']:.1f} s, {fmt_ratio(r.get('scaling'))}" if r.get("elapsed_s") else ""
             for r in results]
    return bar_chart_svg("tessera throughput by stream count", categories, series, "queries per hour",
                         subtitle=subtitle, markers=markers, log_scale=False, notes=notes)
