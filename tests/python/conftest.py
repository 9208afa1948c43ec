"""Fixtures of the Python tests: a result cache made of a recorded H200 landscape (transpose,
with synthetic energy) by the report_fixture tool, and the paths ctest hands over."""
import json
import os
import stat
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


# A small kernel and its problem for the tiletune.kernel_tuner tests that run on the fake CLI.
KT_KERNEL = """
__global__ void scale(float* out, const float* in, float alpha, int n) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) out[i] = alpha * in[i];
}
"""


def kt_problem(n=1000):
    """scale's arguments: out, in, alpha, n."""
    import numpy
    x = numpy.arange(n, dtype=numpy.float32)
    return [numpy.zeros(n, dtype=numpy.float32), x, numpy.float32(2.0), numpy.int32(n)]


class FakeCli:
    """What fake_tiletune.py was asked: argvs(), the argv of each command it ran; requests(), the
    buffer names of each check request."""

    def __init__(self, log, requests):
        self._log, self._requests = log, requests

    @staticmethod
    def _read(path):
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def argvs(self):
        return self._read(self._log)

    def requests(self):
        return self._read(self._requests)


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """TILETUNE_CLI pointing at fake_tiletune.py (no GPU, no engine); a FakeCli to read back."""
    here = os.path.dirname(os.path.abspath(__file__))
    wrapper = tmp_path / "tiletune"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {os.path.join(here, 'fake_tiletune.py')} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    log, requests = tmp_path / "argv.log", tmp_path / "requests.log"
    monkeypatch.setenv("TILETUNE_CLI", str(wrapper))
    monkeypatch.setenv("FAKE_TILETUNE_LOG", str(log))
    monkeypatch.setenv("FAKE_TILETUNE_REQUESTS", str(requests))
    for name in ("TILETUNE_KT_DRY_RUN", "TILETUNE_KT_WORKDIR"):
        monkeypatch.delenv(name, raising=False)
    return FakeCli(log, requests)
