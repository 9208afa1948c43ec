#!/usr/bin/env python3
"""How often independent caches of one sweep give one answer, and why they differ.

    python3 bench/tie_agreement.py [--tiletune build/tuner/tiletune] NAME=CACHE[,CACHE...] ...

Each NAME is a set of caches swept independently with the same options (scripts/h200_run.sh
indep writes them). Per problem and set it prints, as Markdown:
  - the answers (`tiletune best --format json`: the tie set's pick) and how many pairs of
    caches agree;
  - how far a config's offset from its cache's fastest moves between two caches (the configs
    within 2 % of the fastest): what moves a tie set's edge;
  - the answers a few other pick rules would give on the same times (the 1.5 % floor only, no
    noise term, no standing answer): whether another rule would agree more, and at what offset.
Reads the caches only.
"""
import argparse
import csv
import itertools
import json
import sqlite3
import subprocess
import sys


def trials(path):
    """{problem: {params: (time_ms, occupancy, registers)}} of a cache's ok trials."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT problem, params, time_ms, coalesce(occupancy_driver, occupancy_offline), registers "
        "FROM trials WHERE status = 'ok' AND time_ms > 0").fetchall()
    out = {}
    for problem, params, ms, occ, regs in rows:
        out.setdefault(problem, {})[params] = (ms, occ, regs)
    return out


def answers(tiletune, path):
    """{problem: params} as `best` answers them."""
    text = subprocess.run([tiletune, "best", "--db", path, "--format", "json"], check=True,
                          capture_output=True, text=True).stdout
    return {e["problem"]: e["params"] for e in json.loads(text)}


def values(params):
    return [int(item.split("=", 1)[1]) for item in params.split(";")]


def rule_pick(configs, window=0.015, registers=True, larger_first=False):
    """The pick rule of answers.hpp on the floor alone, with variants."""
    fastest = min(t for t, _, _ in configs.values())
    members = [p for p, (t, _, _) in configs.items() if t <= fastest * (1 + window)]

    def key(p):
        _, occ, regs = configs[p]
        order = [-v for v in values(p)] if larger_first else values(p)
        return (-(occ if occ is not None else -1), (regs if regs is not None else 1 << 30) if registers else 0, order)

    return min(members, key=key)


def offset(configs, params):
    fastest = min(t for t, _, _ in configs.values())
    return 100.0 * (configs[params][0] / fastest - 1.0)


def agreeing_pairs(picks):
    pairs = list(itertools.combinations(picks, 2))
    return sum(a == b for a, b in pairs), len(pairs)


def offset_moves(caches, problem):
    moves = []
    for a, b in itertools.combinations(caches, 2):
        ca, cb = a[problem], b[problem]
        for p in ca:
            if p in cb and offset(ca, p) <= 2.0:
                moves.append(abs(offset(ca, p) - offset(cb, p)))
    moves.sort()
    return lambda q: moves[int(q * (len(moves) - 1))] if moves else float("nan")


VARIANTS = {
    "the rule (1.5 %)": {},
    "window 2 %": {"window": 0.02},
    "window 3 %": {"window": 0.03},
    "no registers": {"registers": False},
    "larger values first": {"larger_first": True},
}


def export(path, loaded, problems):
    width = max(len(caches) for caches in loaded.values())
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["set", "problem", "params", "occupancy", "registers"] + [f"time_ms_{i + 1}" for i in range(width)])
        for n, caches in loaded.items():
            for pr in problems:
                for p in sorted({p for c in caches for p in c.get(pr, {})}, key=values):
                    known = next(c[pr][p] for c in caches if p in c.get(pr, {}))
                    times = [f"{c[pr][p][0]:.6g}" if p in c.get(pr, {}) else "" for c in caches]
                    w.writerow([n, pr, p, known[1], known[2]] + times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiletune", default="build/tuner/tiletune")
    ap.add_argument("--export", metavar="CSV", help="also write every ok config's time in every cache: "
                    "set, problem, params, occupancy, registers, then one time_ms column per cache")
    ap.add_argument("sets", nargs="+", metavar="NAME=CACHE[,CACHE...]")
    args = ap.parse_args()
    sets = {}
    for s in args.sets:
        name, _, paths = s.partition("=")
        if not paths:
            sys.exit(f"tie_agreement: '{s}' is not NAME=CACHE[,CACHE...]")
        sets[name] = paths.split(",")
    loaded = {n: [trials(p) for p in paths] for n, paths in sets.items()}
    answered = {n: [answers(args.tiletune, p) for p in paths] for n, paths in sets.items()}
    problems = sorted({pr for caches in loaded.values() for c in caches for pr in c})
    if args.export:
        export(args.export, loaded, problems)
    print("| problem | set | caches | answers (count) | pairs agreeing | offset move p50 / p90 / max |")
    print("|---|---|---|---|---|---|")
    for pr in problems:
        for n in sets:
            picks = [a.get(pr) for a in answered[n]]
            counts = {p: picks.count(p) for p in picks}
            text = "; ".join(f"{p} ({k})" for p, k in sorted(counts.items(), key=lambda x: -x[1]))
            agree, pairs = agreeing_pairs(picks)
            q = offset_moves(loaded[n], pr)
            print(f"| {pr} | {n} | {len(picks)} | {text} | {agree} of {pairs} | "
                  f"{q(0.5):.2f} / {q(0.9):.2f} / {q(1.0):.2f} % |")
    print()
    print("| problem | set | pick rule (offline, floor only) | pairs agreeing | largest offset of its answer |")
    print("|---|---|---|---|---|")
    for pr in problems:
        for n in sets:
            for v, kw in VARIANTS.items():
                caches = [c[pr] for c in loaded[n] if pr in c]
                picks = [rule_pick(c, **kw) for c in caches]
                agree, pairs = agreeing_pairs(picks)
                worst = max(offset(c, p) for c, p in zip(caches, picks))
                print(f"| {pr} | {n} | {v} | {agree} of {pairs} | {worst:.2f} % |")


if __name__ == "__main__":
    main()
