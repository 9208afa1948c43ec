"""A PEP 517 build backend for the tiletune package that needs nothing but the standard library.

pip builds a package in an isolated environment and first installs the backend's requirements
from an index; with `requires = []` and this backend in the tree (`backend-path`), nothing is
fetched, so `pip install ./python` works without a network. It writes a pure-Python wheel of
the `tiletune` folder (PEP 427: the files, METADATA, WHEEL and RECORD) and a plain sdist.
"""
import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = "tiletune"
VERSION = "0.1.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIST_INFO = f"{NAME}-{VERSION}.dist-info"
WHEEL_NAME = f"{NAME}-{VERSION}-py3-none-any.whl"

METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: Python bindings of tiletune: tuned-config lookups, trials as records or pandas frames, plan and tune, Kernel Tuner scripts
Requires-Python: >=3.9
License: MIT
Provides-Extra: pandas
Requires-Dist: pandas; extra == "pandas"
Provides-Extra: kernel-tuner
Requires-Dist: numpy; extra == "kernel-tuner"
"""

WHEEL = """Wheel-Version: 1.0
Generator: tiletune_build
Root-Is-Purelib: true
Tag: py3-none-any
"""


def _package_files():
    package = os.path.join(ROOT, NAME)
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py") or f == "py.typed":
                full = os.path.join(folder, f)
                yield full, os.path.relpath(full, ROOT).replace(os.sep, "/")


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def _write_dist_info(directory):
    path = os.path.join(directory, DIST_INFO)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "METADATA"), "w") as f:
        f.write(METADATA)
    with open(os.path.join(path, "WHEEL"), "w") as f:
        f.write(WHEEL)
    return DIST_INFO


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory)


def _build(wheel_directory, entries):
    path = os.path.join(wheel_directory, WHEEL_NAME)
    records = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as whl:
        for arcname, data in entries + [(f"{DIST_INFO}/METADATA", METADATA.encode()),
                                        (f"{DIST_INFO}/WHEEL", WHEEL.encode())]:
            whl.writestr(arcname, data)
            records.append(_record_line(arcname, data))
        records.append(f"{DIST_INFO}/RECORD,,")
        whl.writestr(f"{DIST_INFO}/RECORD", "\n".join(records) + "\n")
    return WHEEL_NAME


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    entries = []
    for full, arcname in _package_files():
        with open(full, "rb") as f:
            entries.append((arcname, f.read()))
    return _build(wheel_directory, entries)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # PEP 660: a .pth file that puts this folder on sys.path.
    return _build(wheel_directory, [(f"{NAME}.pth", (ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{VERSION}"
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        for rel in ["pyproject.toml", "_build/tiletune_build.py"] + [a for _, a in _package_files()]:
            tar.add(os.path.join(ROOT, rel), arcname=f"{base}/{rel}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = METADATA.encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return base + ".tar.gz"
