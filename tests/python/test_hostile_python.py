"""Hostile arguments to the Python package (issue 22): each is refused before the C library or
the CLI sees it, with tiletune.TiletuneError naming the argument, and leaves every file it was
given as it was; paths as bytes, os.PathLike and undecodable names work."""
import hashlib
import os
import shutil
import stat

import pytest

import tiletune
from tiletune import _errors, _lib
from conftest import one_config_space

SOURCE = os.environ.get("TILETUNE_SOURCE_DIR", "")
H200 = "GPU-dc2af457-36c6-6b6a-4522-234063d451fe"


def digest(path):
    """Every entry under a folder (or one file): name, kind, mode and content hashed."""
    h = hashlib.sha256()
    paths = [path] if os.path.isfile(path) else sorted(
        os.path.join(d, n) for d, dirs, files in os.walk(path) for n in dirs + files)
    for p in paths:
        st = os.lstat(p)
        h.update(os.fsencode(os.path.relpath(p, path)) + b"\0" + oct(st.st_mode).encode())
        if stat.S_ISREG(st.st_mode):
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


@pytest.fixture()
def db_copy(fixture_db, tmp_path):
    """A private copy of the fixture cache, and its digest (the file's: a reader of a WAL cache may
    leave a -shm beside it)."""
    folder = tmp_path / "cache"
    folder.mkdir()
    copy = folder / "fixture.db"
    shutil.copyfile(fixture_db, copy)
    return copy, digest(str(copy))


def refused(call, *words):
    """call() raises TiletuneError, one line of at most 400 characters, naming each of words."""
    with pytest.raises(tiletune.TiletuneError) as e:
        call()
    message = str(e.value)
    assert "\n" not in message and len(message) < 400, message
    for w in words:
        assert w in message, message
    return message


# --- Cache: paths ---------------------------------------------------------------------------------

@pytest.mark.parametrize("path, words", [
    ("with\0nul.db", ["cache path", "NUL"]),
    (b"with\0nul.db", ["cache path", "NUL"]),
    ("", ["cache path", "empty"]),
    (42, ["cache path", "not a path"]),
    (["a.db"], ["cache path", "not a path"]),
])
def test_cache_path_refused(path, words, db_copy):
    before = digest(str(db_copy[0].parent))  # the whole folder: the library is never called
    refused(lambda: tiletune.Cache(path), *words)
    assert digest(str(db_copy[0].parent)) == before


@pytest.mark.parametrize("kind", ["str", "bytes", "pathlike", "undecodable"])
def test_cache_path_kinds_work(kind, db_copy):
    copy, _ = db_copy
    if kind == "undecodable":  # a file name that is not UTF-8: bytes, and the str os.fsdecode makes of them
        odd = os.path.join(os.fsencode(copy.parent), b"caf\xe9.db")
        shutil.copyfile(copy, odd)
        path = os.fsdecode(odd)
    else:
        path = {"str": str(copy), "bytes": os.fsencode(copy), "pathlike": copy}[kind]
    before = digest(str(copy))
    with tiletune.Cache(path) as cache:
        assert cache.best("transpose", {"N": 8192}, device=H200).match == "exact"
    assert digest(str(copy)) == before  # the cache itself (a reader of a WAL cache may leave -shm beside it)


def test_missing_cache_names_the_path_briefly(tmp_path):
    long = "x" * 100_000 + "\x1b[31m.db"
    message = refused(lambda: tiletune.Cache(tmp_path / long), "opening")
    assert "\x1b" not in message


# --- Cache: names, sizes, devices -----------------------------------------------------------------

@pytest.mark.parametrize("kernel", ["trans\0pose", "a;b", "N=1", "-x", "", "9lives", b"transpose",
                                    "caf\udce9", "k" * 300, None, 7])
def test_best_kernel_refused(kernel, db_copy):
    copy, before = db_copy
    with tiletune.Cache(copy) as cache:
        refused(lambda: cache.best(kernel, {"N": 8192}, device=H200), "kernel")
    assert digest(str(copy)) == before


@pytest.mark.parametrize("sizes, words", [
    ({"N;M": 1}, ["size name", "N;M"]),
    ({"N=1;M": 2}, ["size name"]),
    ({"N\0": 1}, ["size name"]),
    ({"N": True}, ["size N", "bool"]),
    ({"N": 1.5}, ["size N", "not a whole number"]),
    ({"N": "8192"}, ["size N", "not a whole number"]),
    ({"N": 2**64 - 1}, ["size N", "out of range"]),
    ({"N": -1}, ["size N", "out of range"]),
    ({"N": 0}, ["size N", "out of range"]),
    ({"N": [1, 2]}, ["one problem"]),
    ("N=1", ["sizes", "not a mapping"]),
])
def test_best_sizes_refused(sizes, words, db_copy):
    copy, before = db_copy
    with tiletune.Cache(copy) as cache:
        refused(lambda: cache.best("transpose", sizes, device=H200), *words)
    assert digest(str(copy)) == before


@pytest.mark.parametrize("device", ["GPU\0x", "\x1b[31m", "d" * 1000, b"sm_90", "caf\udce9"])
def test_best_device_refused(device, db_copy):
    copy, before = db_copy
    with tiletune.Cache(copy) as cache:
        refused(lambda: cache.best("transpose", {"N": 8192}, device=device), "device")
    assert digest(str(copy)) == before


def test_bad_objective_is_both_errors(db_copy):
    copy, _ = db_copy
    with tiletune.Cache(copy) as cache:
        with pytest.raises(ValueError):
            cache.best("transpose", {"N": 8192}, device=H200, objective="power")
        refused(lambda: cache.best("transpose", {"N": 8192}, device=H200, objective="x" * 10_000), "objective")


@pytest.mark.parametrize("filters, word", [
    ({"kernel": "transpose\0"}, "kernel"),
    ({"kernel": "transpose' OR 1=1"}, "kernel"),
    ({"status": "ok;drop"}, "status"),
    ({"device": "GPU\0"}, "device"),
])
def test_trials_filters_refused(filters, word, db_copy):
    copy, before = db_copy
    with tiletune.Cache(copy) as cache:
        refused(lambda: cache.trials(**filters), word)
    assert digest(str(copy)) == before


def test_closed_cache_refused(db_copy):
    copy, _ = db_copy
    cache = tiletune.Cache(copy)
    cache.close()
    refused(lambda: cache.trials(), "closed")


# --- the CLI: plan and tune -----------------------------------------------------------------------



@pytest.mark.parametrize("how", ["argument", "environment"])
def test_missing_cli_is_the_packages_error(how, tmp_path, monkeypatch):
    missing = str(tmp_path / "no" / "tiletune")
    space = one_config_space(str(tmp_path))
    before = digest(str(tmp_path))
    if how == "argument":
        refused(lambda: tiletune.plan(space, cli=missing), "cli", "no/tiletune")
    else:
        monkeypatch.setenv("TILETUNE_CLI", missing)
        refused(lambda: tiletune.plan(space), "TILETUNE_CLI", "no/tiletune")
    assert digest(str(tmp_path)) == before


def test_cli_that_is_not_executable(tmp_path):
    text = tmp_path / "tiletune"
    text.write_text("not a program\n")
    space = one_config_space(str(tmp_path))
    refused(lambda: tiletune.plan(space, cli=str(text)), "cli", "not executable")


def test_cli_name_not_on_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    space = one_config_space(str(tmp_path))
    refused(lambda: tiletune.plan(space, cli="tiletune-nowhere"), "tiletune-nowhere")


@pytest.mark.parametrize("kwargs, words", [
    ({"space": "sp\0ace.yaml"}, ["space", "NUL"]),
    ({"space": b"sp\0ace.yaml"}, ["space", "NUL"]),
    ({"sizes": {"N;M": 1}}, ["size name"]),
    ({"sizes": {"N": "1;M=2"}}, ["size N"]),
    ({"sizes": {"N": 2**63}}, ["size N", "out of range"]),
    ({"arch": "--help"}, ["arch"]),
    ({"arch": "sm_90\0"}, ["arch"]),
    ({"sample": -1}, ["sample"]),
    ({"sample": 0.5}, ["sample"]),
    ({"extra": "--strict"}, ["extra"]),
    ({"extra": ["--arch", "sm_90\0"]}, ["extra"]),
])
def test_plan_arguments_refused(kwargs, words, tmp_path):
    space = one_config_space(str(tmp_path))
    kwargs.setdefault("space", space)
    before = digest(str(tmp_path))
    refused(lambda: tiletune.plan(**kwargs), *words)
    assert digest(str(tmp_path)) == before


@pytest.mark.parametrize("kwargs, words", [
    ({"strategy": "-x"}, ["strategy"]),
    ({"strategy": "random;rm"}, ["strategy"]),
    ({"budget": "1;2"}, ["budget"]),
    ({"budget": -5}, ["budget"]),
    ({"objective": "--help"}, ["objective"]),
    ({"db": "d\0b"}, ["db", "NUL"]),
    ({"replay": b"r\0.csv"}, ["replay", "NUL"]),
])
def test_tune_arguments_refused(kwargs, words, tmp_path):
    space = one_config_space(str(tmp_path))
    before = digest(str(tmp_path))
    refused(lambda: tiletune.tune(space, **kwargs), *words)
    assert digest(str(tmp_path)) == before


def test_paths_that_start_with_a_dash_are_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_config_space(str(tmp_path), "-space.yaml")
    for given in ("-space.yaml", b"-space.yaml"):
        plan = tiletune.plan(given, arch="sm_90")
        assert isinstance(plan, dict) and "TILE" in repr(plan)


def test_plan_error_from_the_cli_is_one_message(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"kernel: \xff\xfe\n")
    before = digest(str(tmp_path))
    refused(lambda: tiletune.plan(bad), "bad.yaml")
    assert digest(str(tmp_path)) == before


# --- the library and decoding -------------------------------------------------------------------

@pytest.mark.parametrize("where", ["missing", "nul"])
def test_library_that_does_not_load(where, tmp_path, monkeypatch):
    monkeypatch.setattr(_lib, "_LIBRARY", None)
    path = str(tmp_path / "none.so") if where == "missing" else "lib\0x.so"
    monkeypatch.setenv("TILETUNE_QUERY_LIBRARY", path) if where == "missing" else None
    if where == "nul":
        monkeypatch.setattr(_lib, "_candidates", lambda: iter([path]))
    with pytest.raises(tiletune.TiletuneError) as e:
        _lib.library()
    assert isinstance(e.value, OSError) and "libtiletune-query" in str(e.value)


def test_undecodable_text_from_the_library_is_replaced():
    assert _errors.decoded(b"caf\xe9 \xff") == "caf\ufffd \ufffd"
    assert _errors.decoded(None, "none") == "none"
