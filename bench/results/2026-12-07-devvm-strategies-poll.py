# Composes bench/results/2026-12-07-devvm-strategies-poll.{csv,md table} (issue 36: the forest's
# poll of its fastest config) from the strategies_summary.csv that bench_strategies wrote for each
# set of landscapes and in-flight width (ROOT/{kt,repo}-{1,4,8}/, `auto` and `forest`): one CSV
# with an in_flight column, and the headline table of `auto` per landscape at 1 / 4 / 8 in flight,
# beside `auto` before the poll (the CSV of 2026-12-07-devvm-strategies-lag-local, same landscapes
# and seeds) (bench/strategy_tables.py).
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from strategy_tables import compose  # noqa: E402

here = Path(__file__)
compose(sys.argv[1] if len(sys.argv) > 1 else "build/score", here.with_suffix(".csv"),
        here.with_name("2026-12-07-devvm-strategies-lag-local.csv"))
