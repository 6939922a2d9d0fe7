"""Small text helpers shared by every room (nothing here imports the arena)."""

from __future__ import annotations

import json
import math
import re
from typing import Any, TypeVar

T = TypeVar("T")


def clip(text: str, limit: int = 60) -> str:
    """``text``, cut to at most ``limit`` characters, ending in "..." if it was cut:
    what a message shows of something too long to quote whole."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def content_hash(content: str | bytes) -> str:
    """The identity of a bot's code: the sha256 (hex) of its text, as UTF-8, or
    of its bytes. Equal code, equal hash, wherever it came from."""
    # Imported here: the spawner loads this module for clip, and every module it
    # loads (hashlib brings libcrypto) is copied into every bot process it forks.
    import hashlib

    data = content.encode() if isinstance(content, str) else content
    return hashlib.sha256(data).hexdigest()


def source_text(data: bytes) -> str:
    """A bot's source file as text: UTF-8, without the byte-order mark some editors
    write first (Python skips it in a file it reads, but not in a string it compiles).
    UnicodeDecodeError if the file is not UTF-8."""
    return data.decode("utf-8").removeprefix("\ufeff")


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and the noun it counts, singular for one: "1 game", "2 games",
    "1 ply", "3 plies" (``nouns`` for a plural that is not ``noun`` + "s")."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


# What printable() escapes: every C0 control character, DEL and every C1 control
# character (a terminal acts on them: ESC starts the sequences that set the window
# title, write the clipboard (OSC 52) or clear the screen; 0x9b is a one-byte CSI
# to some terminals), and the characters that reorder what follows them on the
# line (bidi embeddings, overrides and isolates, the directional marks, and the
# line and paragraph separators, which some terminals break lines on), so that
# text cannot show other than it reads; and the surrogates, which no terminal's
# encoding can write (see storable).
_UNSAFE = [*range(0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, 0x2028, 0x2029,
           *range(0x202A, 0x202F), *range(0x2066, 0x206A), *range(0xD800, 0xE000)]
_ESCAPES = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" for code in _UNSAFE}


def printable(text: str) -> str:
    """``text`` safe to write to a terminal: each control character, DEL, bidi
    control and surrogate as a visible escape (``\\x1b``, ``\\u202e``, ``\\ud800``);
    all other Unicode as it is.

    For everything a bot (or a bot file, or an imported game) wrote that a
    command shows in a terminal. Exports (JSON, CSV) carry the text as it is.
    """
    if text.isprintable():  # nearly always: nothing to escape, nothing to copy
        return text
    return text.translate(_ESCAPES)


# A surrogate code point: half of a UTF-16 pair, which no UTF-8 text may hold.
_SURROGATE = re.compile("[\ud800-\udfff]")
# Two halves in the right order: together, the one character they encode.
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _joined(pair: re.Match[str]) -> str:
    return pair.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def _escaped(half: re.Match[str]) -> str:
    return f"\\u{ord(half.group()):04x}"


def storable(value: T) -> T:
    """``value`` with every string in it (in dict keys, lists and tuples too) made
    text that UTF-8, and so the database, a page or a terminal, can hold.

    A Python string may hold a lone surrogate (``"\\ud800"``: from a bot's
    exception message, or a JSON escape a bot sent), which no UTF-8 encoder
    writes: storing it fails, and with it the batch of games it came in. Here
    a pair of halves in order becomes the character it encodes (lossless), and
    a lone half the six characters ``\\ud800`` (readable; the only loss: it
    then reads as a bot that wrote those six characters). Anything that is not
    a string, dict, list or tuple is returned as it is; so is a value with
    nothing to change (the same object: nearly always).

    For everything a bot supplies on its way into a record: the referee and
    the protocol player apply it where bot text enters, the store once more
    before it writes.
    """
    if isinstance(value, str):
        if value.isascii() or not _SURROGATE.search(value):
            return value
        return _SURROGATE.sub(_escaped, _PAIR.sub(_joined, value))  # type: ignore[return-value]
    if isinstance(value, dict):
        items = [(storable(key), storable(item)) for key, item in value.items()]
        if all(a is key and b is item for (a, b), (key, item) in zip(items, value.items())):
            return value
        return dict(items)  # type: ignore[return-value]
    if isinstance(value, (list, tuple)):
        made = [storable(item) for item in value]
        if all(a is b for a, b in zip(made, value)):
            return value
        return type(value)(made) if type(value) in (list, tuple) else made  # type: ignore[return-value]
    return value


_QUOTED = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def info_value(value: Any) -> str:
    """A value a bot reported in its move's info, as a table cell shows it: nothing
    for None, an integer with thousands separators, text as it is, the rest as JSON
    (escaping is the caller's: the page's or the terminal's)."""
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def quote(text: str, limit: int = 200) -> str:
    """``text`` as a quoted string, clipped to ``limit`` characters and escaped
    (backslashes, quotes and what :func:`printable` escapes): how a message of
    the arena quotes a bot's own words, which can then never read as the arena's."""
    return f'"{printable(clip(text, limit).translate(_QUOTED))}"'


def json_text(value: Any) -> str:
    """``value`` as JSON that every JSON parser reads.

    ``json.dumps`` writes a float that is not finite as ``NaN`` or ``Infinity``,
    which strict parsers (and the JSON standard) refuse: such a number is written
    as ``null`` instead. Raises TypeError for what is not JSON at all.
    """
    import json  # here: loaded on first use, never by a command that does not need it

    try:
        return json.dumps(value, allow_nan=False)
    except ValueError:  # a non-finite float (or a circular structure, which fails again below)
        return json.dumps(_finite(value), allow_nan=False)


def _finite(value: Any) -> Any:
    """``value`` with every float that is not finite (in keys too) as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {_finite(key): _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


# A JSON string, whose brackets nest nothing. One left open runs to the end of
# the line (the parser refuses it anyway): every match then ends where the next
# may begin, so the scan is linear whatever the bot sent (a pattern that needed
# the closing quote would search on from every quote in a long open string).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def nested_deeper_than(data: bytes, limit: int) -> bool:
    """Whether the arrays and objects in the JSON text ``data`` nest deeper than
    ``limit`` (brackets in strings do not count), found without parsing: cheap,
    and it cannot recurse."""
    if data.count(b"[") + data.count(b"{") <= limit:  # too few brackets to nest deeper
        return False
    depth = 0
    for byte in _STRING.sub(b"", data).translate(None, _NOT_BRACKETS):
        depth += 1 if byte in b"[{" else -1
        if depth > limit:
            return True
    return False
