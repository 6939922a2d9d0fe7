"""Games as a PGN-like text: chess's Portable Game Notation, in the arena's moves.

Each game is a block of headers, one ``[Key "value"]`` a line, then its move text;
a blank line separates games::

    [Event "default"]
    [Site "connectk-arena"]
    [Date "2025.01.31"]
    [Time "12:00:00.123"]
    [Round "p0000-o0000-a"]
    [Game "17"]
    [First "minimax:depth=6"]
    [Second "random"]
    [Result "1-0"]
    [Termination "win"]
    [Rules "7x6c4"]
    [TimeControl "1+5"]
    [Opening "36"]

    1. 3 6 2. 4 {[%ms 0.52]} 6 {[%ms 0.03]} 3. 5 {[%ms 0.61]} 6 {[%ms 0.02]} 4. 2
    {[%ms 0.4]} 1-0

A header's value is a JSON string: PGN's own quoting (``\\"`` and ``\\\\``) and, for
text no PGN holds, ``\\n``, ``\\t`` and ``\\uXXXX``. Unknown headers are ignored on
import; every header may be left out (the rules default to 7x6 connect 4). A move
is written as in the arena's notation, one token each: the 1-based column where
stones fall (``4``, ``12``), the cell (a letter column and a 1-based row from the
bottom, ``h8``) where they stay where placed. ``N.`` numbers every second ply,
``{...}`` is a comment (``{[%ms T]}`` after a move: the milliseconds it took) and
the last token is the result (``1-0``, ``0-1``, ``1/2-1/2``, or ``*`` for a game
not finished). The full specification is in docs/tournaments.md.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator

from arena.engine.game import Rules, format_move, format_moves
from arena.formats.game_files import (
    FILE_RESULTS,
    FILE_TERMINATIONS,
    GameFileError,
    ImportedGame,
    checked_game,
    json_line,
    parse_rules_prefix,
    parse_single_move,
)
from arena.records import UNFINISHED_RESULT, Termination, TimeControl
from arena.text import clip

#: A header line: ``[Key "value"]``, the value a JSON string.
HEADER = re.compile(r'\s*\[([A-Za-z][A-Za-z0-9_]*)\s+("(?:[^"\\]|\\.)*")\s*\]\s*')
_TOKENS = re.compile(r"\{[^}]*\}|;[^\n]*|\d+\.(?:\.\.)?|(?:1-0|0-1|1/2-1/2|\*)(?=\s|$)|[^\s{;]+")
_MS = re.compile(r"\{\s*\[%ms\s+([0-9.eE+-]+)\]\s*\}")
_NONE = "-"  # a header's value where there is none (no time control, no opening)
_LINE_WIDTH = 79


def write_pgn(game: ImportedGame) -> str:
    """One game's block: its headers, a blank line, its move text, a blank line."""
    rules = game.rules
    first, second = game.players or (None, None)
    date, time = _date_and_time(game.date)
    result = game.result or UNFINISHED_RESULT
    headers = [
        ("Event", game.tournament or "?"),
        ("Site", game.site or "?"),
        ("Date", date),
        ("Time", time),
        ("Round", game.key or "?"),
        ("Game", "?" if game.game_id is None else str(game.game_id)),
        ("First", first or "?"),
        ("Second", second or "?"),
        ("Result", result),
        ("Termination", str(game.termination) if game.termination else "unfinished"),
        *([("Reason", game.reason)] if game.reason else []),
        ("Rules", rules.code),
        ("TimeControl", time_control_code(game.time_control)),
        ("Opening", format_moves(game.moves[:game.opening_plies], rules) or _NONE),
    ]
    lines = [f"[{key} {json_line(value)}]" for key, value in headers]
    tokens: list[str] = []
    for ply, move in enumerate(game.moves):
        if ply % 2 == 0:
            tokens.append(f"{ply // 2 + 1}.")
        tokens.append(format_move(move, rules))
        ms = game.move_ms[ply] if ply < len(game.move_ms) else None
        if ms is not None:
            tokens.append(f"{{[%ms {ms!r}]}}")
    tokens.append(result)
    return "\n".join([*lines, "", *_wrapped(tokens), "", ""])


def time_control_code(time_control: TimeControl | None) -> str:
    """``-`` for none; the seconds per move (``1``), with ``+`` the bank's seconds (``1+5``)."""
    if time_control is None or time_control.move_seconds is None:
        return _NONE
    bank = f"+{time_control.bank_seconds:g}" if time_control.bank_seconds else ""
    return f"{time_control.move_seconds:g}{bank}"


def _parse_time_control(text: str) -> TimeControl | None:
    if text in (_NONE, "?", ""):
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?))?", text)
    if match is None:
        raise GameFileError(f"bad TimeControl {clip(text)!r}: expected '-', seconds a move ('1') "
                            "or seconds a move and a bank ('1+5')")
    return TimeControl(float(match.group(1)), float(match.group(2) or 0))


def _date_and_time(date: str | None) -> tuple[str, str]:
    if date is None:
        return "????.??.??", "??:??:??"
    when = dt.datetime.fromisoformat(date).astimezone(dt.UTC)
    return when.strftime("%Y.%m.%d"), when.isoformat(timespec="milliseconds")[11:23]


def _wrapped(tokens: list[str]) -> list[str]:
    lines: list[str] = []
    line = ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > _LINE_WIDTH:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    return [*lines, line]


# --- reading ----------------------------------------------------------------------


def read_pgn(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, ImportedGame]]:
    """Each game of the text (given as numbered lines) with the number of the line
    its block starts on; GameFileError, saying which line, at the first bad one."""
    headers: dict[str, str] = {}
    movetext: list[str] = []
    start = 0
    for number, line in lines:
        header = HEADER.fullmatch(line)
        if header is not None and movetext:  # the next game's first header
            yield start, _game(headers, movetext, start)
            headers, movetext = {}, []
        if header is not None:
            start = start if headers else number
            key = header.group(1)
            if key in headers:
                raise GameFileError(f"line {number}: header {key!r} twice in one game")
            headers[key] = _value(header.group(2), number)
        elif line.strip():
            if not headers and not movetext:
                start = number
            movetext.append(line)
    if headers or movetext:
        yield start, _game(headers, movetext, start)


def _value(quoted: str, number: int) -> str:
    try:
        value = json.loads(quoted)
    except ValueError:
        raise GameFileError(f"line {number}: bad header value {clip(quoted)}: write it as a JSON string") from None
    return str(value)


def _game(headers: dict[str, str], movetext: list[str], start: int) -> ImportedGame:
    try:
        return _checked(headers, " ".join(movetext))
    except GameFileError as exc:
        where = headers.get("Round")
        raise GameFileError(f"game at line {start}{f' (Round {where!r})' if where else ''}: {exc}") from None


def _checked(headers: dict[str, str], text: str) -> ImportedGame:
    rules = parse_rules_prefix(headers["Rules"]) if "Rules" in headers else Rules()
    moves: list[int] = []
    move_ms: list[float | None] = []
    result_token: str | None = None
    for token in _TOKENS.findall(text):
        if result_token is not None:
            raise GameFileError(f"{clip(token)!r} after the result {result_token!r}: the result ends the move text")
        ms = _MS.fullmatch(token)
        if ms is not None and moves:
            move_ms[-1] = _milliseconds(ms.group(1))
        elif token[0] in "{;" or re.fullmatch(r"\d+\.(\.\.)?", token):
            continue  # a comment, a move number
        elif token in (*FILE_RESULTS, UNFINISHED_RESULT):
            result_token = token
        else:
            moves.append(parse_single_move(token, rules, len(moves) + 1))
            move_ms.append(None)
    result = headers.get("Result", result_token or UNFINISHED_RESULT)
    if result_token is not None and result_token != result:
        raise GameFileError(f"the move text ends in {result_token!r} but the Result header says {result!r}")
    termination = headers.get("Termination")
    if termination not in (None, *FILE_TERMINATIONS, Termination.UNFINISHED):
        raise GameFileError(f"bad Termination {clip(termination or '')!r}: expected one of "
                            f"{', '.join(FILE_TERMINATIONS)} or unfinished")
    if result not in (*FILE_RESULTS, UNFINISHED_RESULT):
        raise GameFileError(f"bad Result {clip(result)!r}: expected one of {', '.join(FILE_RESULTS)} or *")
    opening = headers.get("Opening", _NONE)
    return checked_game(
        rules, moves,
        players=(_known(headers.get("First")), _known(headers.get("Second"))),
        result=None if result == UNFINISHED_RESULT else result,
        termination=None if termination in (None, Termination.UNFINISHED) else Termination(termination),
        reason=headers.get("Reason"),
        move_ms=move_ms,
        tournament=_known(headers.get("Event")),
        key=_known(headers.get("Round")),
        game_id=_game_id(headers.get("Game")),
        site=_known(headers.get("Site")),
        date=_iso_date(headers.get("Date"), headers.get("Time")),
        opening="" if opening == _NONE else opening,
        time_control=_parse_time_control(headers.get("TimeControl", _NONE)),
    )


def _known(value: str | None) -> str | None:
    """PGN writes ``?`` for a value not known."""
    return None if value in (None, "?", "") else value


def _game_id(value: str | None) -> int | None:
    if _known(value) is None:
        return None
    if not re.fullmatch(r"\d{1,18}", value or ""):
        raise GameFileError(f"bad Game {clip(value or '')!r}: expected a game id (a whole number) or '?'")
    return int(value or 0)


def _milliseconds(text: str) -> float:
    try:
        ms = float(text)
    except ValueError:
        ms = -1.0
    if not 0 <= ms < float("inf"):
        raise GameFileError(f"bad time {{[%ms {clip(text)}]}}: expected milliseconds, e.g. {{[%ms 12.5]}}")
    return ms


def _iso_date(date: str | None, time: str | None) -> str | None:
    if _known(date) is None or (date or "").startswith("?"):
        return None
    clock = time if time and "?" not in time else "00:00:00"
    try:
        when = dt.datetime.strptime(f"{date} {clock}", "%Y.%m.%d %H:%M:%S.%f" if "." in clock
                                    else "%Y.%m.%d %H:%M:%S")
    except ValueError:
        raise GameFileError(f"bad Date/Time {clip(f'{date} {time}')!r}: expected e.g. "
                            "[Date \"2025.01.31\"] and [Time \"12:00:00\"] (UTC)") from None
    return when.replace(tzinfo=dt.UTC).isoformat(timespec="milliseconds")
