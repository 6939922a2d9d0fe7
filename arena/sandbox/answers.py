"""Reading what a bot process answers: one line of JSON, parsed within bounds.

The bot process is the arena's code until the bot's code runs in it; from then on
anything may come up the socket (a bot can write to it directly). So every answer
is data to check, never to trust: it is refused, as a protocol forfeit, if it is
too long, nested too deep for the parser to descend without exhausting the
interpreter's stack, not JSON, or not an object; its ``error`` and ``not_a_move``
texts are clipped, its ``kind`` must be one the arena knows, and numbers that are
not finite (``NaN``, ``Infinity``, ``1e999``) are read as null. Nothing a bot sends
can raise anything here but :class:`BotFailure`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from arena.bot import BotFailure
from arena.text import clip, nested_deeper_than

MAX_MESSAGE = 64 * 1024  # bytes of one answer from the bot process
#: How deep arrays and objects may nest in an answer: far more than any real info
#: needs, far less than the thousand levels at which the parser's recursion fails.
MAX_DEPTH = 32
#: What a bot process may say it runs: a Bot subclass, or a ConnectX agent.
KINDS = ("bot", "connectx")
#: Characters of a bot's error or non-move description kept for the record.
MAX_TEXT = 300

def parse_answer(line: bytes) -> dict[str, Any]:
    """The answer in ``line`` (one line from the bot process, without its newline)
    as a dict, or :class:`BotFailure` ("protocol: ...") saying what is wrong with it."""
    if len(line) > MAX_MESSAGE:
        raise BotFailure("protocol: answer too long")
    if nested_deeper_than(line, MAX_DEPTH):
        raise BotFailure(f"protocol: answer nested more than {MAX_DEPTH} deep")
    try:
        reply = _DECODER.decode(line.decode("utf-8"))
    except Exception:  # whatever the parser raises, the answer is unreadable
        raise BotFailure(f"protocol: unreadable answer {line[:40]!r}") from None
    if not isinstance(reply, dict):
        raise BotFailure(f"protocol: unreadable answer {line[:40]!r}")
    for key in ("error", "not_a_move"):  # texts for the record, kept short
        if key in reply:
            reply[key] = clip(str(reply[key]), MAX_TEXT)
    if "kind" in reply and reply["kind"] not in KINDS:
        raise BotFailure(f"protocol: unknown kind {clip(repr(reply['kind']), 60)}")
    return reply


def _no_constant(name: str) -> None:
    """``NaN``, ``Infinity`` and ``-Infinity``, which JSON does not have: null."""
    return None


def _finite_float(text: str) -> float | None:
    """A JSON number with a fraction or exponent; null if it overflows (``1e999``)."""
    value = float(text)
    return value if math.isfinite(value) else None


# Made once: json.loads with these arguments would make a decoder for every answer.
_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)
