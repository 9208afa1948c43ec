#!/usr/bin/env python3
"""Draws bench_strategies' curves as one SVG (Python standard library only).

    bench/plot_strategies.py strategies_curves.csv strategies.svg

One panel per (space, problem): the median fraction of the optimum's speed reached after k
evaluations (x: evaluations, log scale), one line per strategy, the 25-75 % band of the seeds
shaded, and dashed lines at 95 % and at 10 % of the space's configs.
"""
import csv
import math
import sys
from collections import OrderedDict

COLORS = {"exhaustive": "#7f7f7f", "random": "#d62728", "local": "#2ca02c", "genetic": "#9467bd",
          "forest": "#1f77b4"}
W, H = 330, 230          # one panel
ML, MR, MT, MB = 46, 10, 30, 34
COLS = 4


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    panels = OrderedDict()
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            key = (row["space"], row["problem"], int(row["configs"]))
            panels.setdefault(key, OrderedDict()).setdefault(row["strategy"], []).append(
                (int(row["evaluations"]), float(row["median"]), float(row["p25"]), float(row["p75"])))
    rows = math.ceil(len(panels) / COLS)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{COLS * W}" height="{rows * H + 40}" '
           f'font-family="sans-serif" font-size="10">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="8" y="18" font-size="13">Fraction of the optimum reached vs evaluations '
           f'(median over seeds, 25-75 % shaded; recorded H200 landscapes)</text>']
    legend_x = COLS * W - 420
    for i, (name, color) in enumerate(COLORS.items()):
        out.append(f'<line x1="{legend_x + i * 84}" y1="14" x2="{legend_x + i * 84 + 16}" y2="14" '
                   f'stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{legend_x + i * 84 + 20}" y="18">{name}</text>')
    for index, ((space, problem, configs), strategies) in enumerate(panels.items()):
        ox = (index % COLS) * W
        oy = 40 + (index // COLS) * H
        pw, ph = W - ML - MR, H - MT - MB
        xmax = math.log10(max(configs, 2))

        def sx(k):
            return ox + ML + pw * math.log10(max(k, 1)) / xmax

        def sy(v):
            v = min(max(v, 0.5), 1.0)   # the interesting part: 50 % to 100 %
            return oy + MT + ph * (1.0 - (v - 0.5) / 0.5)

        out.append(f'<text x="{ox + ML}" y="{oy + 18}" font-size="11">{space} {problem} '
                   f'({configs} configs)</text>')
        out.append(f'<rect x="{ox + ML}" y="{oy + MT}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
        for v in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
            out.append(f'<text x="{ox + ML - 4}" y="{sy(v) + 3}" text-anchor="end">{int(v * 100)}%</text>')
        k = 1
        while k <= configs:
            out.append(f'<line x1="{sx(k)}" y1="{oy + MT + ph}" x2="{sx(k)}" y2="{oy + MT + ph + 3}" stroke="#999"/>')
            out.append(f'<text x="{sx(k)}" y="{oy + MT + ph + 13}" text-anchor="middle">{k}</text>')
            k *= 10
        out.append(f'<text x="{ox + ML + pw / 2}" y="{oy + H - 6}" text-anchor="middle">evaluations</text>')
        out.append(f'<line x1="{ox + ML}" y1="{sy(0.95)}" x2="{ox + ML + pw}" y2="{sy(0.95)}" '
                   f'stroke="#bbb" stroke-dasharray="3,3"/>')
        tenth = max(1, configs / 10)
        out.append(f'<line x1="{sx(tenth)}" y1="{oy + MT}" x2="{sx(tenth)}" y2="{oy + MT + ph}" '
                   f'stroke="#bbb" stroke-dasharray="3,3"/>')
        for name, points in strategies.items():
            color = COLORS.get(name, "#000")
            # About 120 points per curve, log-spaced like the axis (the file stays small).
            keep = sorted({min(len(points), round(len(points) ** (i / 120))) for i in range(121)})
            points = [points[k - 1] for k in keep]
            band = [(sx(k), sy(hi)) for k, _, _, hi in points] + [(sx(k), sy(lo)) for k, _, lo, _ in reversed(points)]
            out.append('<polygon points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in band) +
                       f'" fill="{color}" fill-opacity="0.12" stroke="none"/>')
            line = " ".join(f"{sx(k):.1f},{sy(m):.1f}" for k, m, _, _ in points)
            out.append(f'<polyline points="{line}" fill="none" stroke="{color}" stroke-width="1.5"/>')
    out.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
