"""Fixtures of the Python tests: a result cache made of a recorded H200 landscape (transpose,
with synthetic energy) by the report_fixture tool, and the paths ctest hands over."""
import os
import subprocess
import sys

import pytest

SOURCE = os.environ.get("TILETUNE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "python"))


def one_config_space(folder, name="space.yaml"):
    """A space of the transpose kernel with one config (quick to plan), written to folder/name."""
    path = os.path.join(str(folder), name)
    with open(path, "w") as f:
        f.write(f"""kernel: transpose
source: {os.path.join(SOURCE, "kernels", "transpose.cu")}
entry: transpose
params:
  TILE: [32]
launch:
  grid: 1
  block: TILE
args: [TILE]
verify: {{reference: none}}
""")
    return path


@pytest.fixture(scope="session")
def fixture_db(tmp_path_factory):
    tool = os.environ.get("REPORT_FIXTURE")
    if not tool:
        pytest.fail("REPORT_FIXTURE is not set: run these tests through ctest (test_python)")
    db = tmp_path_factory.mktemp("cache") / "fixture.db"
    landscape = os.path.join(SOURCE, "tests", "data", "landscapes", "transpose.csv")
    subprocess.run([tool, str(db), landscape, "--energy"], check=True, capture_output=True)
    return db


@pytest.fixture(scope="session")
def landscape_rows():
    """The recording itself, read with the csv module: what the cache must give back."""
    import csv
    path = os.path.join(SOURCE, "tests", "data", "landscapes", "transpose.csv")
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines))
