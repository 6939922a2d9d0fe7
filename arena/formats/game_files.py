"""Games in and out of the arena as text: one shareable line, or a JSON document.

**One line** (:func:`export_moves`): a rules prefix, a space, then the move string
in the notation of :mod:`arena.engine.game`::

    7x6c4 4453
    12x6c4 10,3,12,6
    15x15c5n h8i9g7

The prefix is the rules' code (:attr:`arena.engine.game.Rules.code`):
``{width}x{height}c{connect}``, with an ``n`` suffix when stones do not fall and a
``w`` suffix when windows are counted on the full board. A game with no moves is
the prefix alone. On import the
prefix may be left out: a bare move string (``4453``) means 7x6 connect 4 (or the
``rules`` passed to :func:`import_game`).

**JSON** (:func:`export_json`), one object with these fields (stable)::

    {
      "format": "connectk-game", "version": 1,
      "rules": {"width": 7, "height": 6, "connect": 4, "gravity": true},
      "moves": "4453",                                  # as in the one-line format
      "plies": [{"ply": 0, "move": "4", "ms": 12.5, "info": {"score": 3}}, ...],
      "players": {"first": "minimax:depth=6", "second": "random"},
      "result": "1-0",          # "1-0", "0-1", "1/2-1/2" or null
      "termination": "win",     # "win", "draw", "forfeit", "adjudicated" or null
      "reason": null,           # why a forfeit happened, or the adjudication
      "tournament": "default",  # where it was played, and the game's key there
      "key": "p0000-o0000-a",
      "id": 17,                 # its id in the database it came from
      "site": "connectk-arena", # the program that played it
      "date": "2025-01-31T12:00:00.123+00:00",  # when it finished (UTC)
      "opening": "36",          # the opening's moves, the first plies of "moves"
      "time_control": {"move_seconds": 1.0, "bank_seconds": 0.0},  # or null: none
      "duration": 0.25,         # seconds the game took
      "seed": 1090465900309190024
    }

``ply`` counts from 0 (like the store); ``ms`` and ``info`` may be null. On
import only ``moves`` (or ``plies``) is required; ``rules`` defaults to 7x6
connect 4; every field after ``reason`` may be left out or null. Every move is
checked by playing it: any problem raises :class:`GameFileError` with one line
naming the offending value.

**JSON Lines** is that document on one line per game; **a listing** is what
``arena games --json`` prints, a JSON list of games with ``first``, ``second``,
``moves`` and ``rules`` each (:func:`read_games` reads every form, and the
PGN-like text of :mod:`arena.formats.pgn`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.engine.game import (
    PLAYER_MARKS,
    RULES_CODE,
    RULES_FIELDS,
    Board,
    NotationError,
    Rules,
    RulesError,
    format_move,
    format_moves,
    parse_moves,
)
from arena.errors import ArenaError
from arena.records import RESULTS, Termination, TimeControl
from arena.text import clip, nested_deeper_than

FORMAT_NAME = "connectk-game"
FORMAT_VERSION = 1
# A file tells how a finished game ended; an unfinished one has null for both.
FILE_RESULTS = tuple(RESULTS.values())
FILE_TERMINATIONS = tuple(t.value for t in Termination if t not in (Termination.UNFINISHED, Termination.VOID))
CLASSIC = Rules()

_PREFIX = RULES_CODE


class GameFileError(ArenaError):
    """Text that is not a valid exported game; the message names the bad value."""


@dataclass
class ImportedGame:
    """A game read by :func:`import_game`; optional fields are None when absent."""

    rules: Rules
    moves: list[int]
    players: tuple[str | None, str | None] | None = None
    result: str | None = None
    termination: Termination | None = None
    reason: str | None = None
    move_info: list[dict[str, Any] | None] = field(default_factory=list)
    move_ms: list[float | None] = field(default_factory=list)
    tournament: str | None = None  # where it was played (PGN's Event)
    key: str | None = None  # the game's key in that tournament (PGN's Round)
    game_id: int | None = None  # its id in the database it came from
    site: str | None = None  # the program that played it (PGN's Site)
    date: str | None = None  # when it finished: ISO 8601, UTC
    opening_plies: int = 0  # how many of the first moves were the opening
    time_control: TimeControl | None = None  # None: none, or not known
    duration: float | None = None
    seed: int | None = None

    def board(self) -> Board:
        """The final position (every move already checked on import)."""
        return Board.from_moves(self.moves, self.rules)

    @property
    def moves_string(self) -> str:
        return format_moves(self.moves, self.rules)


# --- rules prefix --------------------------------------------------------------------


def rules_prefix(rules: Rules) -> str:
    """``7x6c4``; ``15x15c5n`` where stones stay where placed; a ``w`` suffix when
    windows are counted: the rules' code."""
    return rules.code


def parse_rules_prefix(text: str) -> Rules:
    """The Rules of a prefix such as ``7x6c4`` or ``15x15c5n``; GameFileError otherwise."""
    try:
        return Rules.from_code(text.strip())
    except RulesError as exc:
        raise GameFileError(f"bad rules prefix {clip(text.strip())!r}: {exc}") from None


# --- export ---------------------------------------------------------------------------


def export_moves(rules: Rules, moves: Sequence[int]) -> str:
    """One line: the rules prefix, a space, the move string (the prefix alone if no moves)."""
    text = format_moves(list(moves), rules)
    return f"{rules_prefix(rules)} {text}" if text else rules_prefix(rules)


def export_json(
    rules: Rules,
    moves: Sequence[int],
    players: tuple[str | None, str | None] | Sequence[str | None] | None = None,
    result: str | None = None,
    termination: Termination | None = None,
    reason: str | None = None,
    move_info: Sequence[dict[str, Any] | None] | None = None,
    move_ms: Sequence[float | None] | None = None,
    indent: int | None = None,
) -> str:
    """The game as a JSON document (see the module docstring); one line unless ``indent``."""
    first, second = tuple(players) if players is not None else (None, None)
    game = ImportedGame(rules, list(moves), (first, second), result, termination, reason,
                        list(move_info or []), list(move_ms or []))
    return json.dumps(game_document(game), indent=indent, ensure_ascii=False)


#: Characters that end a line for some readers (Python's ``str.splitlines``) though
#: JSON may hold them unescaped, and DEL, which no text file holds: written escaped,
#: one game stays one line everywhere.
_LINE_BREAKS = str.maketrans({"\x7f": "\\u007f", "\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def json_line(value: Any) -> str:
    """``value`` as JSON on one line, whoever splits it into lines."""
    return json.dumps(value, ensure_ascii=False).translate(_LINE_BREAKS)


def game_document(game: ImportedGame) -> dict[str, Any]:
    """Every field of the JSON document (see the module docstring) for ``game``."""
    rules, moves, info, ms = game.rules, game.moves, game.move_info, game.move_ms
    first, second = game.players or (None, None)
    time_control = game.time_control
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "rules": rules.as_dict(),
        "moves": format_moves(moves, rules),
        "plies": [
            {
                "ply": ply,
                "move": format_move(move, rules),
                "ms": ms[ply] if ply < len(ms) else None,
                "info": info[ply] if ply < len(info) else None,
            }
            for ply, move in enumerate(moves)
        ],
        "players": {"first": first, "second": second},
        "result": game.result,
        "termination": game.termination,
        "reason": game.reason,
        "tournament": game.tournament,
        "key": game.key,
        "id": game.game_id,
        "site": game.site,
        "date": game.date,
        "opening": format_moves(moves[:game.opening_plies], rules),
        "time_control": None if time_control is None else {
            "move_seconds": time_control.move_seconds, "bank_seconds": time_control.bank_seconds},
        "duration": game.duration,
        "seed": game.seed,
    }


# --- import ---------------------------------------------------------------------------


#: Control characters no text game file holds (tabs and line ends are fine).
BINARY = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def import_game(text: str, rules: Rules | None = None) -> ImportedGame:
    """Read either format (JSON when the text starts with ``{``) and check every move.

    ``rules`` is used for a bare move string without prefix (default 7x6 connect 4).
    """
    if not isinstance(text, str):
        raise GameFileError(f"expected text, got {type(text).__name__}")
    binary = BINARY.search(text)
    if binary is not None:
        raise GameFileError(
            f"not a game file: it holds binary data ({binary.group()!r} at character {binary.start()}); "
            "expected a move line from 'arena export' (e.g. '7x6c4 4453') or its JSON"
        )
    stripped = text.strip()
    if not stripped:
        raise GameFileError("empty game text: expected e.g. '7x6c4 4453' or a JSON document")
    if stripped.startswith("{"):
        return _import_json(stripped)
    return _import_line(stripped, rules or CLASSIC)


def _import_line(text: str, default_rules: Rules) -> ImportedGame:
    if "\n" in text:
        raise GameFileError(f"expected one line, got {text.count(chr(10)) + 1} lines: {clip(text)!r}")
    head, *rest = text.split(None, 1)
    if _PREFIX.fullmatch(head) or _looks_like_prefix(head, default_rules):
        rules = parse_rules_prefix(head)
        moves_text = rest[0] if rest else ""
    else:
        rules, moves_text = default_rules, text
    moves = _parse(moves_text, rules)
    _check(moves, rules)
    return ImportedGame(rules=rules, moves=moves, move_info=[None] * len(moves), move_ms=[None] * len(moves))


def _looks_like_prefix(head: str, rules: Rules) -> bool:
    """A first word that cannot be part of a move string, so it was meant as rules."""
    if re.match(r"\d+x", head, re.IGNORECASE):
        return True
    # Where moves are column numbers (digits and commas) any letter means a prefix.
    return not rules.could_be_moves(head)


MAX_JSON_DEPTH = 32  # a game document nests 4 deep; more is not one (and would exhaust the parser's stack)


def _import_json(text: str) -> ImportedGame:
    data = load_json(text)
    if not isinstance(data, dict):
        raise GameFileError(f"a JSON game must be an object, got {clip(json.dumps(data))}")
    return game_of_document(data)


def load_json(text: str) -> Any:
    if nested_deeper_than(text.encode("utf-8", "surrogatepass"), MAX_JSON_DEPTH):
        raise GameFileError(f"bad JSON: nested more than {MAX_JSON_DEPTH} deep, which no game is")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        near = text[max(exc.pos - 10, 0): exc.pos + 10]
        raise GameFileError(f"bad JSON: {exc.msg} at character {exc.pos}, near {near!r}") from None


def game_of_document(data: dict[str, Any]) -> ImportedGame:
    """The game of one JSON document (an exported game, or one game of a listing
    from ``arena games --json``), every move checked."""
    if "players" not in data and ("first" in data or "second" in data):
        data = _listed_game(data)
    fmt = data.get("format", FORMAT_NAME)
    if fmt != FORMAT_NAME:
        raise GameFileError(f"unknown format {clip(json.dumps(fmt))}: expected {FORMAT_NAME!r}")
    version = data.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise GameFileError(f"unsupported version {clip(json.dumps(version))}: "
                            f"this arena reads version {FORMAT_VERSION}")
    rules = _json_rules(data.get("rules"))
    plies = data.get("plies") or []
    if not isinstance(plies, list):
        raise GameFileError(f"'plies' must be a list, got {clip(json.dumps(plies))}")
    ply_moves: list[int] = []
    move_info: list[dict[str, Any] | None] = []
    move_ms: list[float | None] = []
    for index, entry in enumerate(plies):
        move, ms, info = _json_ply(index, entry, rules)
        ply_moves.append(move)
        move_ms.append(ms)
        move_info.append(info)
    if "moves" in data and data["moves"] is not None:
        if not isinstance(data["moves"], str):
            raise GameFileError(f"'moves' must be a move string, got {clip(json.dumps(data['moves']))}")
        moves = _parse(data["moves"], rules)
        if plies and ply_moves != moves:
            raise GameFileError(
                f"'moves' {clip(data['moves'])!r} disagrees with the moves in 'plies' "
                f"({clip(format_moves(ply_moves, rules))!r})"
            )
    elif plies:
        moves = ply_moves
    else:
        raise GameFileError("a JSON game needs 'moves' (a move string) or 'plies'")
    termination_text = _choice(data, "termination", FILE_TERMINATIONS)
    return checked_game(
        rules,
        moves,
        players=_json_players(data.get("players")),
        result=_choice(data, "result", FILE_RESULTS),
        termination=None if termination_text is None else Termination(termination_text),
        reason=_text(data, "reason"),
        move_info=move_info if plies else None,
        move_ms=move_ms if plies else None,
        opening=_text(data, "opening") or "",
        tournament=_text(data, "tournament"),
        key=_text(data, "key"),
        game_id=_whole(data, "id"),
        site=_text(data, "site"),
        date=_date(data.get("date")),
        time_control=_json_time_control(data.get("time_control")),
        duration=_seconds(data, "duration"),
        seed=_whole(data, "seed"),
    )


def checked_game(
    rules: Rules,
    moves: list[int],
    *,
    result: str | None = None,
    termination: Termination | None = None,
    move_info: list[dict[str, Any] | None] | None = None,
    move_ms: list[float | None] | None = None,
    opening: str = "",
    **about: Any,
) -> ImportedGame:
    """A game read from a file, once its moves, its result and its opening (a move
    string, how the moves begin) are checked; ``about`` holds the other fields of
    :class:`ImportedGame` as read."""
    board = _check(moves, rules)
    _check_result(board, result, termination)
    opening_moves = _parse(opening, rules)
    if opening_moves != moves[:len(opening_moves)]:
        raise GameFileError(f"the opening {clip(opening)!r} is not how the game's moves begin")
    return ImportedGame(
        rules, moves, result=result, termination=termination,
        move_info=move_info or [None] * len(moves), move_ms=move_ms or [None] * len(moves),
        opening_plies=len(opening_moves), **about,
    )


def parse_single_move(text: str, rules: Rules, number: int) -> int:
    """Move ``number`` of a game, written alone: GameFileError unless it is one move."""
    moves = _parse(text, rules)
    if len(moves) != 1:
        raise GameFileError(f"move {number} must be one move, got {clip(text)!r}")
    return moves[0]


def _listed_game(entry: dict[str, Any]) -> dict[str, Any]:
    """A game of ``arena games --json``'s listing as an exported document."""
    for needed in ("moves", "rules"):
        if entry.get(needed) is None:
            raise GameFileError(
                f"a game listed by 'arena games --json' without {needed!r} (an older arena's listing): "
                "export the games with 'arena export --tournament NAME --format jsonl' and import that"
            )
    # Its "plies" is a count, where a document's is the list of moves.
    document = {k: v for k, v in entry.items() if k not in ("first", "second", "finished_at", "result",
                                                            "termination", "plies")}
    document["players"] = {"first": entry.get("first"), "second": entry.get("second")}
    document["date"] = entry.get("finished_at")
    if entry.get("termination") != Termination.UNFINISHED:  # an unfinished game has no result yet
        document["result"] = entry.get("result")
        document["termination"] = entry.get("termination")
    return document


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise GameFileError(f"{key!r} must be text or null, got {clip(json.dumps(value))}")
    return value


def _whole(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise GameFileError(f"{key!r} must be a whole number or null, got {clip(json.dumps(value))}")
    return value


def _seconds(data: dict[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise GameFileError(f"{key!r} must be a number of seconds, got {clip(json.dumps(value))}")
    return float(value)


def _date(value: Any) -> str | None:
    """An ISO 8601 time as the store writes them (UTC, milliseconds); GameFileError otherwise."""
    if value is None:
        return None
    try:
        when = dt.datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        when = None
    if when is None:
        raise GameFileError(f"'date' must be a time such as '2025-01-31T12:00:00+00:00', got {clip(repr(value))}")
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(dt.UTC).isoformat(timespec="milliseconds")


def _json_time_control(value: Any) -> TimeControl | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) - {"move_seconds", "bank_seconds"}:
        raise GameFileError(
            f"'time_control' must be {{\"move_seconds\": ..., \"bank_seconds\": ...}} or null, "
            f"got {clip(json.dumps(value))}")
    move = _seconds(value, "move_seconds")
    bank = _seconds(value, "bank_seconds") or 0.0
    return TimeControl(move, bank)


def _json_rules(value: Any) -> Rules:
    if value is None:
        return CLASSIC
    if not isinstance(value, dict):
        raise GameFileError(f"'rules' must be an object, got {clip(json.dumps(value))}")
    unknown = sorted(set(value) - set(RULES_FIELDS))
    if unknown:
        raise GameFileError(f"unknown field {unknown[0]!r} in 'rules'")
    try:
        return Rules(**value)
    except RulesError as exc:
        raise GameFileError(f"bad rules {clip(json.dumps(value))}: {exc}") from None


def _json_ply(index: int, entry: Any, rules: Rules) -> tuple[int, float | None, dict[str, Any] | None]:
    where = f"plies[{index}]"
    if not isinstance(entry, dict):
        raise GameFileError(f"{where} must be an object, got {clip(json.dumps(entry))}")
    if entry.get("ply", index) != index:
        raise GameFileError(f"{where} has ply {entry.get('ply')!r}, expected {index}")
    move_text = entry.get("move")
    if not isinstance(move_text, str):
        raise GameFileError(f"{where} 'move' must be a move in notation, got {clip(json.dumps(move_text))}")
    try:
        move = parse_single_move(move_text, rules, index + 1)
    except GameFileError:
        raise GameFileError(f"{where} 'move' must be one move, got {clip(move_text)!r}") from None
    ms = entry.get("ms")
    if ms is not None and (
        isinstance(ms, bool) or not isinstance(ms, (int, float)) or not math.isfinite(ms) or ms < 0
    ):
        raise GameFileError(f"{where} 'ms' must be a number of milliseconds or null, got {ms!r}")
    info = entry.get("info")
    if info is not None and not isinstance(info, dict):
        raise GameFileError(f"{where} 'info' must be an object or null, got {clip(json.dumps(info))}")
    return move, None if ms is None else float(ms), info


def _json_players(value: Any) -> tuple[str | None, str | None] | None:
    if value is None:
        return None
    if isinstance(value, dict):
        pair = (value.get("first"), value.get("second"))
    elif isinstance(value, list) and len(value) == 2:
        pair = (value[0], value[1])
    else:
        raise GameFileError(
            f"'players' must be {{\"first\": ..., \"second\": ...}}, got {clip(json.dumps(value))}"
        )
    for name in pair:
        if name is not None and not isinstance(name, str):
            raise GameFileError(f"a player must be a name (text), got {clip(json.dumps(name))}")
    return pair


def _choice(data: dict[str, Any], key: str, allowed: tuple[str, ...]) -> str | None:
    value = data.get(key)
    if value is not None and value not in allowed:
        raise GameFileError(f"bad {key} {clip(json.dumps(value))}: expected one of {', '.join(allowed)} or null")
    return value


def _check_result(board: Board, result: str | None, termination: Termination | None) -> None:
    """A result that the moves contradict (e.g. "0-1" after X completed a line) is an error."""
    if termination == Termination.FORFEIT:
        return
    if termination == Termination.ADJUDICATED:  # the solver's result, before the board decided
        if board.is_over():
            raise GameFileError("termination 'adjudicated' but the game was over on the board")
        return
    if board.winner is not None:
        expected = RESULTS[board.winner]
        if result is not None and result != expected:
            raise GameFileError(
                f"result {result!r} contradicts the moves: {PLAYER_MARKS[board.winner]} won, "
                f"which is {expected!r}"
            )
        if termination not in (None, Termination.WIN):
            raise GameFileError(f"termination '{termination}' contradicts the moves: the game was won")
    elif termination == Termination.WIN:
        raise GameFileError("termination 'win' but no player has a line on the board")
    elif termination == Termination.DRAW and not board.is_draw():
        raise GameFileError("termination 'draw' but the board is not full")


def _parse(text: str, rules: Rules) -> list[int]:
    try:
        return parse_moves(text, rules)
    except NotationError as exc:
        raise GameFileError(f"bad move string for {rules_prefix(rules)}: {exc}") from None


def _check(moves: list[int], rules: Rules) -> Board:
    """Play every move with play_checked; GameFileError naming the first bad one."""
    board = Board(rules)
    for number, move in enumerate(moves, 1):
        name = format_move(move, rules)
        if board.winner is not None:
            raise GameFileError(
                f"move {number} ({name!r}) comes after the game was won by "
                f"{PLAYER_MARKS[board.winner]} at move {number - 1}"
            )
        if not board.is_legal(move):
            raise GameFileError(f"move {number} ({name!r}) is illegal: {board.illegal_cause(move)}")
        board.play(move)
    return board
