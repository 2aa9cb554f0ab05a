#!/usr/bin/env python3
"""Chart and tabulate the engine benchmarks against ERTS.

Reads criterion's results for `cargo bench -p msc-benches --bench engines`
(every `new/benchmark.json` under the criterion directory, with the
`new/estimates.json` beside it: the median time per iteration, divided by the
iteration's throughput in elements, is the time per event) and an ERTS numbers
file (JSON lines as `workloads:erts/1` prints them, one per workload, with
`ns_per_event`), then

* writes a grouped bar chart of ns/event per engine per workload (log scale)
  as SVG (default `benches/engines.svg`),
* prints a markdown table of ns/event with the JIT's speed against the
  interpreter, ERTS and native Rust,
* prints a markdown table of the JIT's compile time, the time it saves per
  event against the interpreter, and the break-even: how many runs pay for
  the compile.

Python 3 standard library only.

    python3 benches/chart.py benches/results/erts-otp27.jsonl
    python3 benches/chart.py /tmp/erts.json --criterion target/criterion --out benches/engines.svg
"""

import argparse
import json
import math
import os
import sys
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES = ["erts", "interp", "jit", "auto", "native"]
COLORS = {
    "erts": "#8c8c8c",
    "interp": "#4e79a7",
    "jit": "#e15759",
    "auto": "#f28e2b",
    "native": "#59a14f",
}
LABELS = {
    "erts": "ERTS (OTP 27, ets:match_spec_run)",
    "interp": "msc interpreter",
    "jit": "msc JIT",
    "auto": "msc auto (tiered)",
    "native": "hand-written Rust",
}


def read_criterion(root):
    """{group: {parameter: (median ns per iteration, elements or None)}}."""
    results = {}
    for dirpath, _dirs, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench = json.load(f)
        try:
            with open(os.path.join(dirpath, "estimates.json")) as f:
                median = json.load(f)["median"]["point_estimate"]
        except (OSError, KeyError, ValueError):
            continue
        group = bench.get("group_id") or ""
        param = bench.get("value_str") or bench.get("function_id") or ""
        elements = (bench.get("throughput") or {}).get("Elements")
        results.setdefault(group, {})[param] = (median, elements)
    return results


def read_erts(path):
    """{workload: ns per event} from JSON lines."""
    erts = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            erts[record["workload"]] = float(record["ns_per_event"])
    return erts


def per_event(criterion, erts):
    """{workload: {engine: ns per event}}, workloads in a stable order."""
    table = {}
    for group, params in criterion.items():
        if not group.startswith("run/"):
            continue
        workload = group[len("run/"):]
        for engine, (median, elements) in params.items():
            if elements:
                table.setdefault(workload, {})[engine] = median / elements
    for workload, ns in erts.items():
        if workload in table:
            table[workload]["erts"] = ns
    order = ["tuple_filter", "guard_heavy", "multi_clause", "body_build", "deep_head", "arith"]
    names = [w for w in order if w in table] + sorted(w for w in table if w not in order)
    return {w: table[w] for w in names}


def compile_times(criterion):
    """{workload: {"spec"|"jit": ns}}."""
    times = {}
    for group, params in criterion.items():
        if group.startswith("compile/"):
            workload = group[len("compile/"):]
            for kind, (median, _) in params.items():
                times.setdefault(workload, {})[kind] = median
    return times


def fmt_ns(ns):
    if ns is None:
        return "–"
    if ns >= 100:
        return f"{ns:.0f}"
    if ns >= 10:
        return f"{ns:.1f}"
    return f"{ns:.2f}"


def fmt_ratio(other, jit):
    if other is None or jit is None or jit <= 0:
        return "–"
    return f"{other / jit:.2f}×"


def markdown_tables(table, compiles):
    lines = [
        "ns per event (criterion median; ERTS: `workloads:erts/1`). "
        "*jit vs X* is X's time ÷ the JIT's: above 1, the JIT is faster.",
        "",
        "| workload | erts | interp | jit | auto | native "
        "| jit vs interp | jit vs erts | jit vs native |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for workload, ns in table.items():
        cells = [fmt_ns(ns.get(e)) for e in ENGINES]
        jit = ns.get("jit")
        ratios = [fmt_ratio(ns.get(e), jit) for e in ("interp", "erts", "native")]
        lines.append(f"| {workload} | " + " | ".join(cells + ratios) + " |")
    lines += [
        "",
        "JIT compile time (`compile/WORKLOAD/jit`, warm) against the time it saves "
        "per event (interp − jit); break-even = compile ÷ saving, in runs.",
        "",
        "| workload | spec compile µs | jit compile µs | interp ns | jit ns "
        "| saving ns/event | break-even runs |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for workload, ns in table.items():
        spec_ns = compiles.get(workload, {}).get("spec")
        jit_ns = compiles.get(workload, {}).get("jit")
        interp, jit = ns.get("interp"), ns.get("jit")
        saving = interp - jit if interp is not None and jit is not None else None
        if jit_ns is None or saving is None:
            even = "–"
        elif saving <= 0:
            even = "never"
        else:
            even = f"{math.ceil(jit_ns / saving):,}"
        lines.append(
            f"| {workload} | "
            + " | ".join(
                [
                    f"{spec_ns / 1e3:.1f}" if spec_ns is not None else "–",
                    f"{jit_ns / 1e3:.0f}" if jit_ns is not None else "–",
                    fmt_ns(interp),
                    fmt_ns(jit),
                    fmt_ns(saving) if saving is not None else "–",
                    even,
                ]
            )
            + " |"
        )
    return "\n".join(lines)


def svg_chart(table, title, subtitle):
    engines = [e for e in ENGINES if any(e in ns for ns in table.values())]
    values = [v for ns in table.values() for v in ns.values() if v and v > 0]
    if not values:
        raise SystemExit("no results to chart")
    lo = 10 ** math.floor(math.log10(min(values)))
    hi = 10 ** math.ceil(math.log10(max(values) * 1.5))

    width, height = 960, 540
    left, right, top, bottom = 70, 20, 70, 110
    plot_w, plot_h = width - left - right, height - top - bottom
    group_w = plot_w / len(table)
    bar_w = min(28, group_w * 0.8 / len(engines))

    def y(v):
        return top + plot_h * (1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="28" text-anchor="middle" font-size="18" font-weight="bold">'
        f"{escape(title)}</text>",
        f'<text x="{width / 2}" y="48" text-anchor="middle" font-size="12" fill="#555">'
        f"{escape(subtitle)}</text>",
    ]
    # Grid: every decade labelled, 2 and 5 faint.
    decade = lo
    while decade <= hi * 1.0001:
        for m in (1, 2, 5):
            v = decade * m
            if v > hi * 1.0001:
                break
            yy = y(v)
            shade = "#bbb" if m == 1 else "#e6e6e6"
            out.append(
                f'<line x1="{left}" x2="{left + plot_w}" y1="{yy:.1f}" y2="{yy:.1f}" '
                f'stroke="{shade}" stroke-width="1"/>'
            )
            if m == 1:
                label = f"{v:g}"
                out.append(
                    f'<text x="{left - 8}" y="{yy + 4:.1f}" text-anchor="end" font-size="12">'
                    f"{label}</text>"
                )
        decade *= 10
    out.append(
        f'<text x="18" y="{top + plot_h / 2}" font-size="13" text-anchor="middle" '
        f'transform="rotate(-90 18 {top + plot_h / 2})">ns per event (log scale, lower is better)</text>'
    )
    out.append(
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}" stroke="#333"/>'
        f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#333"/>'
    )
    for i, (workload, ns) in enumerate(table.items()):
        x0 = left + i * group_w + (group_w - bar_w * len(engines)) / 2
        for j, engine in enumerate(engines):
            v = ns.get(engine)
            if not v or v <= 0:
                continue
            x = x0 + j * bar_w
            yy = y(v)
            out.append(
                f'<rect x="{x + 1:.1f}" y="{yy:.1f}" width="{bar_w - 2:.1f}" '
                f'height="{top + plot_h - yy:.1f}" fill="{COLORS[engine]}">'
                f"<title>{escape(workload)} / {engine}: {fmt_ns(v)} ns</title></rect>"
            )
            cx = x + bar_w / 2
            out.append(
                f'<text x="{cx:.1f}" y="{yy - 4:.1f}" font-size="10" text-anchor="start" '
                f'transform="rotate(-60 {cx:.1f} {yy - 4:.1f})">{fmt_ns(v)}</text>'
            )
        out.append(
            f'<text x="{left + (i + 0.5) * group_w:.1f}" y="{top + plot_h + 20}" '
            f'text-anchor="middle" font-size="13">{escape(workload)}</text>'
        )
    # Legend, in one centred row under the axis labels (text widths estimated).
    widths = [20 + 6.6 * len(LABELS[e]) + 24 for e in engines]
    x, ly = left + (plot_w - sum(widths)) / 2, height - 40
    for engine, w in zip(engines, widths):
        out.append(f'<rect x="{x:.1f}" y="{ly}" width="14" height="14" fill="{COLORS[engine]}"/>')
        out.append(
            f'<text x="{x + 20:.1f}" y="{ly + 12}" font-size="12">{escape(LABELS[engine])}</text>'
        )
        x += w
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("erts", help="ERTS numbers: JSON lines from workloads:erts/1")
    parser.add_argument(
        "--criterion",
        default=os.path.join(HERE, "..", "target", "criterion"),
        help="criterion's output directory (default: target/criterion)",
    )
    parser.add_argument(
        "--out", default=os.path.join(HERE, "engines.svg"), help="the SVG to write"
    )
    parser.add_argument(
        "--subtitle",
        default="50,000 events per workload; criterion medians; "
        "ERTS: ets:match_spec_run/2 on a compiled spec",
        help="the chart's second line",
    )
    args = parser.parse_args()

    criterion = read_criterion(args.criterion)
    table = per_event(criterion, read_erts(args.erts))
    if not table:
        sys.exit(f"no run/WORKLOAD results under {args.criterion}: run "
                 "`cargo bench -p msc-benches --bench engines` first")
    svg = svg_chart(table, "Match-spec engines: time per event", args.subtitle)
    with open(args.out, "w") as f:
        f.write(svg)
    print(markdown_tables(table, compile_times(criterion)))
    print(f"\nwrote {os.path.relpath(args.out)}", file=sys.stderr)


if __name__ == "__main__":
    main()
