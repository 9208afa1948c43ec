#!/usr/bin/env python3
"""Per-config medians of sweeps against a base sweep: `compare_medians.py BASE.csv OTHER.csv...`.

Each file is `tiletune show --status ok --format csv` of one sweep. For every other file it prints
how many configs both have, the median and 90th percentile of |other/base - 1| over them, the
median of other/base (a bias: < 1 is faster than the base), and each file's winner per problem.
"""
import csv
import statistics
import sys


def read(path):
    times = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                times[(row["problem"], row["params"])] = float(row["time_ms"])
            except (KeyError, ValueError):
                continue
    return times


def winners(times):
    best = {}
    for (problem, params), t in times.items():
        if problem not in best or t < best[problem][1]:
            best[problem] = (params, t)
    return best


def main(paths):
    if len(paths) < 2:
        sys.exit("usage: compare_medians.py BASE.csv OTHER.csv...")
    base = read(paths[0])
    print(f"base {paths[0]}: {len(base)} configs; winners {winners(base)}")
    for path in paths[1:]:
        other = read(path)
        ratios = [other[k] / base[k] for k in base.keys() & other.keys() if base[k] > 0]
        if not ratios:
            print(f"{path}: no config in common with the base")
            continue
        deviation = sorted(abs(r - 1) for r in ratios)
        p90 = deviation[min(len(deviation) - 1, int(0.9 * len(deviation)))]
        print(f"{path}: {len(ratios)} configs in common; |ratio - 1| median {100 * statistics.median(deviation):.2f} %, "
              f"p90 {100 * p90:.2f} %; ratio median {statistics.median(ratios):.4f}; winners {winners(other)}")


if __name__ == "__main__":
    main(sys.argv[1:])
