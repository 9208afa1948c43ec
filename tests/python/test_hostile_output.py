"""Issue 22, "Output": the package reads the trials of a cache whose text is hostile (bytes that
are not UTF-8, as NVRTC quoting a Latin-1 source line gives; ESC sequences; line breaks) without
an error: the query library's JSON is valid UTF-8, each bad byte written as U+FFFD and counted in
the trial's "invalid_utf8_bytes"."""
import codecs
import shutil
import sqlite3

import pytest

import tiletune

HOSTILE = [
    (b"k.cu(3): error: \"caf\xe9\" \xff", 2),
    (b"\x1b[31mred\x1b[0m\r\n\xc2\x9b" + b"31m\x7f", 0),
    (b"two\nlines, \"quoted\"", 0),
    (b"\xe2\x82", 2),
]


# The library replaces each byte that is not UTF-8 (Python's "replace" one per maximal subpart).
codecs.register_error("tiletune_per_byte", lambda e: ("\ufffd" * (e.end - e.start), e.end))


def shown(raw):
    return raw.decode("utf-8", errors="tiletune_per_byte")


def hostile_copy(fixture_db, tmp_path, detail, name):
    db = tmp_path / "hostile.db"
    shutil.copy(fixture_db, db)
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE trials SET detail = CAST(? AS TEXT) WHERE id = 1", (detail,))
        con.execute("UPDATE devices SET name = CAST(? AS TEXT)", (name,))
    con.close()
    return db


@pytest.mark.parametrize("detail,bad", HOSTILE)
def test_trials_of_a_hostile_cache(fixture_db, tmp_path, detail, bad):
    name = b"H200 \x1b]0;pwn\x07 caf\xe9"
    db = hostile_copy(fixture_db, tmp_path, detail, name)
    before = db.read_bytes()
    with tiletune.Cache(db) as cache:
        trials = cache.trials()
    assert len(trials) == 276
    first = next(t for t in trials if t["id"] == 1)
    assert first["detail"] == shown(detail)
    assert first["device"] == shown(name)
    # The device name's one bad byte and the detail's: counted per trial.
    assert first.get("invalid_utf8_bytes", 0) == bad + 1
    others = [t for t in trials if t["id"] != 1]
    assert all(t.get("invalid_utf8_bytes") == 1 for t in others)
    assert db.read_bytes() == before
