"""`pip install ./python` works offline: in a fresh venv of Debian's python3, with no index."""
import os
import shutil
import subprocess
import sys

import pytest

SOURCE = os.environ.get("TILETUNE_SOURCE_DIR", "")


def test_pip_install_offline(tmp_path):
    venv = tmp_path / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.fail("python3 -m venv failed (Debian: apt install python3-venv): " + made.stderr)
    package = tmp_path / "python"
    shutil.copytree(os.path.join(SOURCE, "python"), package, ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", str(package)], capture_output=True,
                         text=True, env=env, timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    check = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import tiletune, os; print(tiletune.__version__, os.path.dirname(tiletune.__file__))"],
                           capture_output=True, text=True, cwd=tmp_path, env=env)
    assert check.returncode == 0, check.stderr
    version, where = check.stdout.split()
    assert version == "0.1.0"
    assert where.startswith(str(venv))  # the installed copy, not the source tree
