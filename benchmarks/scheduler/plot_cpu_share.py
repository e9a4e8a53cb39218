#!/usr/bin/env python3
"""Per-query CPU-share timeline from a Tessera work-order log (JSON lines), as an SVG.

Each log line is {"query":Q,"operator":O,"worker":W,"start_ns":S,"end_ns":E,"rows":R} (scheduler/work_order_log.h).
Time is cut into windows of length D; a query's CPU share in a window is the time its work orders overlapped the
window divided by D x workers (dissertation §3.8.3, Figures 3.3-3.10). The fairness metric printed to stdout is the
standard deviation of the active queries' relative shares per window (§3.8.3.1), averaged over windows.

Pure Python 3, no third-party packages.

    plot_cpu_share.py LOG [-o out.svg] [--window-ms 50] [--workers N] [--title TEXT]
"""

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from xml.sax.saxutils import escape

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#393b79", "#637939", "#8c6d31"]


def read_log(path):
    records = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
                records.append((int(r["query"]), int(r["worker"]), int(r["start_ns"]), int(r["end_ns"])))
            except (ValueError, KeyError) as e:
                sys.exit(f"{path}:{number}: not a work-order record ({e}): {line[:80]}")
    if not records:
        sys.exit(f"{path}: no work-order records")
    return records


def cpu_shares(records, window_ns, workers):
    """Returns (window start times in s, {query: [share per window]}, [std-dev of relative shares per window])."""
    t0 = min(r[2] for r in records)
    t1 = max(r[3] for r in records)
    count = max(1, math.ceil((t1 - t0) / window_ns))
    busy = defaultdict(lambda: [0.0] * count)
    for query, _, start, end in records:
        start -= t0
        end -= t0
        w = int(start // window_ns)
        while w < count and w * window_ns < end:
            lo = max(start, w * window_ns)
            hi = min(end, (w + 1) * window_ns)
            if hi > lo:
                busy[query][w] += hi - lo
            w += 1
    capacity = window_ns * workers
    shares = {q: [b / capacity for b in values] for q, values in busy.items()}
    fairness = []
    for w in range(count):
        active = [busy[q][w] for q in busy if busy[q][w] > 0]
        total = sum(active)
        if len(active) >= 2 and total > 0:
            fairness.append(statistics.pstdev(a / total for a in active))
    times = [w * window_ns / 1e9 for w in range(count)]
    return times, dict(sorted(shares.items())), fairness


def nice_step(span, target_ticks=8):
    raw = span / target_ticks
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def svg(times, shares, window_s, title):
    width, height = 960, 440
    left, right, top, bottom = 70, 150, 40, 50
    plot_w, plot_h = width - left - right, height - top - bottom
    t_max = (times[-1] + window_s) if times else 1.0
    y_max = max([max(v) for v in shares.values()] + [0.01])
    y_max = min(1.0, math.ceil(y_max * 10 + 0.5) / 10) if y_max <= 1 else math.ceil(y_max * 10) / 10

    def x(t):
        return left + plot_w * t / t_max

    def y(v):
        return top + plot_h * (1 - v / y_max)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="{top - 15}" font-size="15">{escape(title)}</text>']
    step = nice_step(t_max)
    t = 0.0
    while t <= t_max + 1e-12:
        out.append(f'<line x1="{x(t):.1f}" y1="{top}" x2="{x(t):.1f}" y2="{top + plot_h}" stroke="#eee"/>')
        out.append(f'<text x="{x(t):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{t:g}</text>')
        t += step
    y_step = nice_step(y_max, 5)
    v = 0.0
    while v <= y_max + 1e-12:
        out.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + plot_w}" y2="{y(v):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v * 100:.0f}%</text>')
        v += y_step
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 12}" text-anchor="middle">time (s)</text>')
    out.append(f'<text x="18" y="{top + plot_h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {top + plot_h / 2})">CPU utilisation</text>')
    for i, (query, values) in enumerate(shares.items()):
        color = PALETTE[i % len(PALETTE)]
        points = " ".join(f"{x(t + window_s / 2):.1f},{y(val):.1f}" for t, val in zip(times, values))
        out.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="1.8"/>')
        ly = top + 10 + 18 * i
        out.append(f'<line x1="{left + plot_w + 15}" y1="{ly}" x2="{left + plot_w + 40}" y2="{ly}" '
                   f'stroke="{color}" stroke-width="3"/>')
        out.append(f'<text x="{left + plot_w + 46}" y="{ly + 4}">query {query}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log")
    parser.add_argument("-o", "--output", help="SVG file (default: LOG with .svg)")
    parser.add_argument("--window-ms", type=float, help="window length (default: span / 100)")
    parser.add_argument("--workers", type=int, help="CPU capacity (default: distinct workers in the log)")
    parser.add_argument("--title", help="chart title")
    args = parser.parse_args()

    records = read_log(args.log)
    workers = args.workers or len({r[1] for r in records})
    span_ns = max(r[3] for r in records) - min(r[2] for r in records)
    window_ns = args.window_ms * 1e6 if args.window_ms else max(span_ns / 100, 1000)
    times, shares, fairness = cpu_shares(records, window_ns, workers)
    output = args.output or (args.log.rsplit(".", 1)[0] + ".svg")
    title = args.title or f"CPU share per query ({args.log.rsplit('/', 1)[-1]}, {window_ns / 1e6:.3g} ms windows)"
    with open(output, "w") as f:
        f.write(svg(times, shares, window_ns / 1e9, title))
    print(f"{len(records)} work orders, {len(shares)} queries, {workers} workers, "
          f"{span_ns / 1e9:.3f} s, window {window_ns / 1e6:.3g} ms -> {output}")
    for query, values in shares.items():
        active = [v for v in values if v > 0]
        print(f"  query {query}: mean CPU share while active {statistics.mean(active) * 100:.1f}%"
              if active else f"  query {query}: no CPU")
    if fairness:
        print(f"  fairness (std-dev of relative shares among active queries): mean {statistics.mean(fairness):.3f}, "
              f"max {max(fairness):.3f}")


if __name__ == "__main__":
    main()
