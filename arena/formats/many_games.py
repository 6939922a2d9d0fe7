"""Files of many games: which form a file is in, and its games one at a time.

:func:`read_games` tells the form from the file's first line that is not blank:

- ``[Event "..."]`` (any ``[Key "value"]``): the PGN-like text of :mod:`arena.formats.pgn`;
- ``[`` otherwise: a JSON list, the listing ``arena games --json`` prints;
- ``{`` with a whole JSON object on that line, and more lines after it: JSON Lines,
  one game a line;
- ``{`` otherwise: one JSON document (``arena export --format json``);
- wherever a JSON object is a game, a Kaggle ConnectX episode may be instead
  (:mod:`arena.formats.kaggle_episodes`; ``arena export --format kaggle``);
- anything else: one move line (``7x6c4 4453``).

Games are read as they are needed, never the whole file at once (but for a listing,
one JSON value, which ``arena games`` printed whole). A bad game stops the reading
with a :class:`~arena.formats.game_files.GameFileError` naming it and its line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any

from arena.engine.game import Rules
from arena.formats.game_files import (
    BINARY,
    GameFileError,
    ImportedGame,
    game_of_document,
    import_game,
    load_json,
)
from arena.formats.kaggle_episodes import game_of_episode, is_episode
from arena.formats.pgn import HEADER, read_pgn
from arena.text import clip

#: The forms that hold one game only; a file in one of them is imported as today's single game.
SINGLE_GAME_FORMS = ("line", "json")


@dataclass(frozen=True)
class GameStream:
    """A file's form (``line``, ``json``, ``jsonl``, ``listing`` or ``pgn``) and its
    games, each with its number in the file (from 1) and the line it starts on."""

    form: str
    games: Iterator[tuple[int, int, ImportedGame]]


def read_games(lines: Iterable[str], rules: Rules | None = None) -> GameStream:
    """The games of a file given as its lines (``rules``: of a bare move string)."""
    numbered = enumerate(lines, 1)
    for number, line in numbered:
        _text_only(number, line)
        if line.strip():
            break
    else:
        raise GameFileError("empty game file: expected games from 'arena export' (a move line, JSON, "
                            "JSON Lines or PGN-like text) or from 'arena games --json'")
    head = line.lstrip()
    rest = _checked(numbered)
    if HEADER.fullmatch(line):
        return GameStream("pgn", _counted(read_pgn(chain([(number, line)], rest))))
    if head.startswith("["):
        return GameStream("listing", _listing(line + "".join(text for _, text in rest), number))
    if head.startswith("{") and _is_object(line):
        following = next(((n, text) for n, text in rest if text.strip()), None)
        if following is None:  # one object, one line: a JSON document like any other
            return GameStream("json", iter([(1, number, _document_game(line))]))
        return GameStream("jsonl", _json_lines(chain([(number, line), following], rest)))
    text = line + "".join(text for _, text in rest)
    if head.startswith("{"):
        return GameStream("json", iter([(1, number, _document_game(text))]))
    return GameStream("line", iter([(1, number, import_game(text, rules=rules))]))


def _document_game(text: str) -> ImportedGame:
    """The game of one JSON document: the arena's own, or a Kaggle episode."""
    data = load_json(text)
    if not isinstance(data, dict):
        raise GameFileError(f"a JSON game must be an object, got {clip(json.dumps(data))}")
    return game_of(data)


def game_of(data: dict[str, Any]) -> ImportedGame:
    """The game of a JSON object: a game document, a listed game or a Kaggle episode."""
    return game_of_episode(data) if is_episode(data) else game_of_document(data)


def _text_only(number: int, line: str) -> None:
    binary = BINARY.search(line)
    if binary is not None:
        raise GameFileError(f"not a game file: line {number} holds binary data ({binary.group()!r}); "
                            "expected games from 'arena export'")


def _checked(numbered: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    for number, line in numbered:
        _text_only(number, line)
        yield number, line


def _is_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):  # not one, or nested too deep: the one-document reader says which
        return False


def _counted(games: Iterator[tuple[int, ImportedGame]]) -> Iterator[tuple[int, int, ImportedGame]]:
    for count, (line, game) in enumerate(games, 1):
        yield count, line, game


def _json_lines(lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, int, ImportedGame]]:
    count = 0
    for number, line in lines:
        if not line.strip():
            continue
        count += 1
        try:
            data = load_json(line)
            if not isinstance(data, dict):
                raise GameFileError(f"each line must be a game's JSON object, got {clip(line.strip())}")
            yield count, number, game_of(data)
        except GameFileError as exc:
            raise GameFileError(f"game {count} (line {number}): {exc}") from None


def _listing(text: str, first_line: int) -> Iterator[tuple[int, int, ImportedGame]]:
    data: Any = load_json(text)
    if not isinstance(data, list):
        raise GameFileError(f"expected a list of games (as 'arena games --json' prints), got {clip(text)}")
    for count, entry in enumerate(data, 1):
        try:
            if not isinstance(entry, dict):
                raise GameFileError(f"a listed game must be an object, got {clip(json.dumps(entry))}")
            yield count, first_line, game_of_document(entry)
        except GameFileError as exc:
            listed = entry.get("id") if isinstance(entry, dict) else None
            raise GameFileError(f"game {count} of the list{f' (id {listed})' if listed is not None else ''}: "
                                f"{exc}") from None
