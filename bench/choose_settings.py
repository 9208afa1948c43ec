#!/usr/bin/env python3
"""Leave one kernel out: the forest's settings chosen on some landscapes, reported on the rest.

Reads the strategies_summary.csv that bench_strategies wrote for a grid of settings
("forest:local=0.3:kappa=0.5", ...) on the same landscapes, and for each kernel (the landscape's
space: every GPU of one kernel is held out together, so that a setting is never judged on a
kernel it was chosen on) picks the setting with the best mean score of Willemsen et al. on the
other kernels, then prints what that setting did on the kernel held out. Also prints the setting
chosen on every kernel (the candidate default) and, when given, a reference strategy's rows.

usage: bench/choose_settings.py SUMMARY.csv [SUMMARY.csv ...] [--reference NAME] [--within 400]
Nothing is measured here: every number is one bench_strategies already wrote.
"""
import argparse
import csv
import re
import statistics
import sys
from collections import defaultdict


# A landscape's space is its recording's name: KERNEL_DEVICE for the published ones.
DEVICE_SUFFIX = re.compile(r"^(.+?)_((A|H|L|V)\d+\w*|RTX_\w+|GTX_\w+|TITAN\w*|MI\d+\w*)$")


def kernel(space):
    m = DEVICE_SUFFIX.match(space)
    return m.group(1) if m else space


def load(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows.extend(csv.DictReader(f))
    return rows


def cell(r):
    """'median (seeds within) score' of one row."""
    m = r["median_evals_99"] or "-"
    return f"{m} ({r['seeds_99_within']}/{r['seeds']}) {float(r['score']):.3f}"


def meets_goal(r, goal_median=100.0):
    """Issue 36's goal on one landscape: median to 99 % within 100, every seed within the cap."""
    return r["median_evals_99"] != "" and float(r["median_evals_99"]) <= goal_median and r["seeds_99_within"] == r["seeds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("summaries", nargs="+")
    ap.add_argument("--reference", action="append", default=[], help="a strategy's rows to show beside (e.g. auto)")
    a = ap.parse_args()
    rows = load(a.summaries)
    by = {}  # (strategy, landscape) -> row
    kernel_of = {}
    for r in rows:
        key = r["space"] if r["problem"] == "" else f"{r['space']} {r['problem']}"
        by[(r["strategy"], key)] = r
        kernel_of[key] = kernel(r["space"])
    landscapes = sorted(kernel_of)
    candidates = sorted({s for s, _ in by if s.startswith("forest:")})
    if not candidates:
        sys.exit("choose_settings: no forest:... strategy in the summaries")
    complete = [c for c in candidates if all((c, l) in by for l in landscapes)]
    missing = sorted(set(candidates) - set(complete))
    if missing:
        print(f"left out (not run on every landscape): {', '.join(missing)}\n")
    kernels = sorted(set(kernel_of.values()))

    def mean_score(c, keep):
        return statistics.mean(float(by[(c, l)]["score"]) for l in landscapes if keep(l))

    print("## Leave one kernel out\n")
    print("| held-out kernel | chosen on the others | landscape | to 99 % (within 400) score | goal met |")
    print("|---|---|---|---|---|")
    held_rows = []
    for k in kernels:
        best = max(complete, key=lambda c: mean_score(c, lambda l: kernel_of[l] != k))
        for l in landscapes:
            if kernel_of[l] != k:
                continue
            r = by[(best, l)]
            held_rows.append(r)
            print(f"| {k} | `{best}` | {l} | {cell(r)} | {'yes' if meets_goal(r) else 'no'} |")
    print(f"\nHeld out, over all landscapes: mean score {statistics.mean(float(r['score']) for r in held_rows):.3f}, "
          f"goal met on {sum(meets_goal(r) for r in held_rows)} of {len(held_rows)}\n")

    print("## Every setting on every landscape (to 99 % (within 400) score)\n")
    overall = max(complete, key=lambda c: mean_score(c, lambda l: True))
    names = complete + [s for s in a.reference if all((s, l) in by for l in landscapes)]
    print("| setting | mean score | goal met | " + " | ".join(landscapes) + " |")
    print("|---|---:|---:|" + "---|" * len(landscapes))
    for c in names:
        rs = [by[(c, l)] for l in landscapes]
        mark = " (best on all)" if c == overall else ""
        print(f"| `{c}`{mark} | {statistics.mean(float(r['score']) for r in rs):.3f} | "
              f"{sum(meets_goal(r) for r in rs)}/{len(rs)} | " + " | ".join(cell(r) for r in rs) + " |")


if __name__ == "__main__":
    main()
