"""The package's error, and the checks every entry point makes of what it is given before it
calls the C library or starts the CLI: paths, names, sizes. Each refusal is a TiletuneError that
names the argument and quotes its value briefly (repr, cut)."""
import operator
import os
import re

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT64_MAX = 2**63 - 1


class TiletuneError(Exception):
    """A failed call of the query library or the CLI, or an argument refused before either was
    called; `status` names the C status when there is one."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def shown(value, limit=60):
    """A value in a message: its repr, cut to `limit` characters (a path of megabytes stays short)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def path_text(path, what="path"):
    """A path (str, bytes or os.PathLike) as the str the OS means (os.fsdecode: undecodable bytes as
    surrogates, given back exactly by os.fsencode); a NUL byte or an empty path is refused."""
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        raise TiletuneError(f"{what} {shown(path)} is not a path (str, bytes or os.PathLike)") from None
    if not text:
        raise TiletuneError(f"{what} is empty")
    if "\0" in text:
        raise TiletuneError(f"{what} {shown(text)} holds a NUL byte, which no file name has")
    return text


def path_bytes(path, what="path"):
    """The path as the bytes the C library opens."""
    return os.fsencode(path_text(path, what))


def cli_path(path, what="path"):
    """A path for the CLI's command line: one that starts with '-' is given as ./-x, so that it is
    never read as an option."""
    text = path_text(path, what)
    return os.path.join(".", text) if text.startswith("-") else text


def identifier(name, what="name"):
    """A kernel, param or size name: letters, digits and '_', not starting with a digit (what
    tiletune's spaces accept); anything else (';', '=', a NUL, a '-') is refused, never spliced."""
    if isinstance(name, bytes):
        raise TiletuneError(f"{what} {shown(name)} is bytes: pass a str")
    if not isinstance(name, str) or not _IDENTIFIER.match(name) or len(name) > 256:
        raise TiletuneError(f"{what} {shown(name)} is not a name (letters, digits and _, at most 256, not "
                            "starting with a digit)")
    return name


def text(value, what, limit=4096):
    """Free text for the library or the CLI (a device name, a status): a str without NUL or other
    control characters, not starting with '-', at most `limit` characters, valid UTF-8."""
    if not isinstance(value, str):
        raise TiletuneError(f"{what} {shown(value)} is not a str")
    if len(value) > limit or value.startswith("-") or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise TiletuneError(f"{what} {shown(value)} is not text of at most {limit} characters without control "
                            "characters, not starting with '-'")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise TiletuneError(f"{what} {shown(value)} is not valid text (it holds an undecodable byte)") from None
    return value


def whole(value, what, low=0, high=_INT64_MAX):
    """A whole number in [low, high]: an int (not a bool, not a float cut to one)."""
    if isinstance(value, bool):
        raise TiletuneError(f"{what} {shown(value)} is a bool, not a whole number")
    try:
        number = operator.index(value)
    except TypeError:
        raise TiletuneError(f"{what} {shown(value)} is not a whole number") from None
    if not low <= number <= high:
        raise TiletuneError(f"{what} {number} is out of range ({low} to {high})")
    return number


def sizes(mapping, low=0):
    """{"N": 8192} checked: identifier names, whole values of 64 bits; as (name, [values])."""
    if mapping is None:
        return []
    if not hasattr(mapping, "items"):
        raise TiletuneError(f"sizes {shown(mapping)} is not a mapping such as {{'N': 8192}}")
    out = []
    for name, values in mapping.items():
        identifier(name, "size name")
        listed = values if isinstance(values, (list, tuple)) else [values]
        out.append((name, [whole(v, f"size {name}", low) for v in listed]))
    return out


def one_line(text, limit=300):
    """A message from elsewhere (the C library quoting a path, the CLI's stderr) as one line: control
    characters escaped as repr escapes them, cut to `limit` characters."""
    out = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:limit])
    return out if len(text) <= limit else out + f"... ({len(text)} characters)"


def decoded(raw, default=""):
    """Text from the C library or the CLI: UTF-8, with a byte that is not replaced, never raised over."""
    if raw is None:
        return default
    return raw.decode("utf-8", errors="replace")
