# Composes bench/results/2026-12-07-devvm-strategies-lag-local.{csv,md tables} (issue 36: the lag and
# the local steps over one param) from the
# strategies_summary.csv that bench_strategies wrote for each set of landscapes and in-flight
# width (build/score/{kt,repo}-{1,4,8}/): one CSV with an in_flight column, and the headline
# table of `auto` per landscape at 1 / 4 / 8 in flight, beside `auto` before this change (the
# CSV of 2026-12-07-devvm-strategies-score, same landscapes and seeds). No number is computed here
# but medians already in the CSVs, put side by side.
import csv
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else "build/score")
rows = []
for group in ("kt", "repo"):
    for k in (1, 4, 8):
        with open(root / f"{group}-{k}" / "strategies_summary.csv") as f:
            for r in csv.DictReader(f):
                r["in_flight"] = str(k)
                r["set"] = "published" if group == "kt" else "repo"
                rows.append(r)

out = Path(__file__).with_suffix(".csv")
fields = ["set", "in_flight"] + [k for k in rows[0] if k not in ("set", "in_flight")]
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    w.writerows(rows)


def cell(v):
    return v if v != "" else "-"


before = {}
with open(Path(__file__).with_name("2026-12-07-devvm-strategies-score.csv")) as f:
    for r in csv.DictReader(f):
        before[(r["set"], r["space"], r["problem"], r["strategy"], r["in_flight"])] = r
by = {}
for r in rows:
    by[(r["set"], r["space"], r["problem"], r["strategy"], r["in_flight"])] = r
keys = []
for r in rows:
    key = (r["set"], r["space"], r["problem"])
    if key not in keys:
        keys.append(key)
print("| landscape | problem | configs | T | auto runs as | to 99 % | within 400 | to 99 % + conf. | score | score, conf. counted | conf. trials | before: to 99 % | before: within 400 | before: score |")
print("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for s, space, problem in keys:
    a = [by.get((s, space, problem, "auto", k)) for k in ("1", "4", "8")]
    if not all(a):
        continue
    seeds = a[0]["seeds"]

    def three(field, fmt=cell):
        return " / ".join(fmt(x[field]) for x in a)

    def within(runs):  # seeds within 400 of the seeds run
        return " / ".join(x["seeds_99_within"] + "/" + x["seeds"] for x in runs)

    def reach(x):  # the median, with the seeds that reached 99 % when not all
        m = x["median_evals_99"]
        n = x["seeds_reaching_99"]
        return (m if m else "-") + ("" if n == seeds else f" ({n}/{seeds})")

    b = [before.get((s, space, problem, "auto", k)) for k in ("1", "4", "8")]
    old_reach = " / ".join(reach(x) for x in b) if all(b) else "-"
    old_within = within(b) if all(b) else "-"
    old_score = " / ".join(x["score"] for x in b) if all(b) else "-"
    print(f"| {space} | {problem} | {a[0]['configs']} | {a[0]['score_range'] or '-'} | {a[0]['runs_as']} | "
          f"{' / '.join(reach(x) for x in a)} | {within(a)} | "
          f"{three('median_evals_99_with_confirmation')} | {three('score')} | {three('score_with_confirmation')} | "
          f"{three('median_confirmation_trials')} | {old_reach} | {old_within} | {old_score} |")
