#!/usr/bin/env python3
"""Composes one CSV and the headline table of `auto` from bench_strategies runs at 1, 4 and 8 in flight.

Reads ROOT/{kt,repo}-{1,4,8}/strategies_summary.csv (the published landscapes and the shipped
recordings, each at each width), writes them as one CSV with `set` and `in_flight` columns, and
prints a markdown table of `auto` per landscape at 1 / 4 / 8 in flight; with a `before` CSV (one
this wrote earlier), `auto`'s columns from it beside. No number is computed here but medians
already in the CSVs, put side by side. The results' scripts in bench/results call compose().
"""
import csv
from pathlib import Path

WIDTHS = ("1", "4", "8")


def key_of(r):
    return (r["set"], r["space"], r["problem"], r["strategy"], r["in_flight"])


def load_runs(root):
    rows = []
    for group in ("kt", "repo"):
        for k in WIDTHS:
            with open(Path(root) / f"{group}-{k}" / "strategies_summary.csv") as f:
                for r in csv.DictReader(f):
                    r["in_flight"] = k
                    r["set"] = "published" if group == "kt" else "repo"
                    rows.append(r)
    return rows


def write_csv(rows, out):
    fields = ["set", "in_flight"] + [k for k in rows[0] if k not in ("set", "in_flight")]
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def cell(v):
    return v if v != "" else "-"


def within(runs):  # seeds within 400 of the seeds run
    return " / ".join(x["seeds_99_within"] + "/" + x["seeds"] for x in runs)


def reach(x, seeds):  # the median, with the seeds that reached 99 % when not all
    m = x["median_evals_99"]
    n = x["seeds_reaching_99"]
    return (m if m else "-") + ("" if n == seeds else f" ({n}/{seeds})")


def compose(root, out_csv, before_csv=None):
    rows = load_runs(root)
    write_csv(rows, out_csv)
    by = {key_of(r): r for r in rows}
    before = {}
    if before_csv:
        with open(before_csv) as f:
            before = {key_of(r): r for r in csv.DictReader(f)}
    keys = []
    for r in rows:
        key = (r["set"], r["space"], r["problem"])
        if key not in keys:
            keys.append(key)
    extra = " before: to 99 % | before: within 400 | before: score |" if before_csv else ""
    print("| landscape | problem | configs | T | auto runs as | to 99 % | within 400 | to 99 % + conf. | score | "
          "score, conf. counted | conf. trials |" + extra)
    print("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if before_csv else ""))
    for s, space, problem in keys:
        a = [by.get((s, space, problem, "auto", k)) for k in WIDTHS]
        if not all(a):
            continue
        seeds = a[0]["seeds"]

        def three(field):
            return " / ".join(cell(x[field]) for x in a)

        line = (f"| {space} | {problem} | {a[0]['configs']} | {a[0]['score_range'] or '-'} | {a[0]['runs_as']} | "
                f"{' / '.join(reach(x, seeds) for x in a)} | {within(a)} | "
                f"{three('median_evals_99_with_confirmation')} | {three('score')} | {three('score_with_confirmation')} | "
                f"{three('median_confirmation_trials')} |")
        if before_csv:
            b = [before.get((s, space, problem, "auto", k)) for k in WIDTHS]
            line += (f" {' / '.join(reach(x, seeds) for x in b) if all(b) else '-'} | {within(b) if all(b) else '-'} | "
                     f"{' / '.join(x['score'] for x in b) if all(b) else '-'} |")
        print(line)
