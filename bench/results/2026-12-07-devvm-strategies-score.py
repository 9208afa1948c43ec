# Composes bench/results/2026-12-07-devvm-strategies-score.{csv,md tables} from the
# strategies_summary.csv that bench_strategies wrote for each set of landscapes and in-flight
# width (build/score/{kt,repo}-{1,4,8}/): one CSV with an in_flight column, and the headline
# table of `auto` per landscape at 1 / 4 / 8 in flight (bench/strategy_tables.py).
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from strategy_tables import compose  # noqa: E402

compose(sys.argv[1] if len(sys.argv) > 1 else "build/score", Path(__file__).with_suffix(".csv"))
