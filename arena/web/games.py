"""The games: a list in pages with filters, each game's page with its replay, the
game as JSON and as files, and the version of the database the live pages poll.

The game page is whole without JavaScript: the server draws the board after any
ply (``?ply=``, the final position by default) and the move list links every
position. ``static/replay.js`` turns it into an animated replay; it reads the
cells of the moves, and how far each stone falls into its cell, from a JSON block
the server writes (the engine works them out), so the browser never needs the
rules of the game.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BeforeValidator, StringConstraints

from arena.engine.game import MAX_SIZE, Board, Rules, format_move, parse_moves
from arena.formats.game_files import export_moves, game_document
from arena.formats.stored_games import file_game
from arena.league.policy import may_read_log
from arena.ratings.analysis import analyse_stored, describe
from arena.records import RESULTS, START, Termination
from arena.store import Store, StoredGame, StoredMove, rules_of
from arena.text import info_value, plural, printable, storable
from arena.web.accounts import private, signed_in
from arena.web.pages import StoreDep, page

router = APIRouter()

GAMES_PER_PAGE = 50
MOST_PER_PAGE = 500
#: Far past the games of any database, and small enough that the skipped rows
#: (page times page size) stay an integer SQLite binds.
LAST_PAGE = 1_000_000
#: What ``arena games --json`` writes of each game, in its order.
GAME_FIELDS = ("id", "tournament", "key", "first", "second", "result", "termination", "reason",
               "plies", "opening", "moves", "duration", "seed", "finished_at", "rules")
#: The info fields most bots report, shown in columns of their own; others follow as JSON.
INFO_COLUMNS = ("score", "depth", "nodes")
#: Characters of a move's other info shown in its row (a bot may say 64 KB a move):
#: each field on a line of its own, the whole in the game's JSON below the list.
INFO_SHOWN = 600
CELL = 40  # the board's SVG units per cell: the picture scales to the viewport, the units never change
#: A board with a side longer than this gets the page's whole width, and its
#: labels (larger) only on every fifth line, where one on each would be too small to read.
LARGE_BOARD = 12
GAME_IDS = 2**63 - 1  # the largest id SQLite stores: a larger one is no game, not an overflow


def _blank_is_none(value: object) -> object:
    """A filter form sends the choices left empty as empty strings: they mean any."""
    return None if value == "" else value


Name = Annotated[str, StringConstraints(max_length=200)]  # of a tournament or a bot
TournamentFilter = Annotated[Name | None, BeforeValidator(_blank_is_none),
                             Query(description="Only this tournament's games.")]
BotFilter = Annotated[Name | None, BeforeValidator(_blank_is_none), Query(description=
    "Only this bot's games: a spec (minimax:depth=4, guard@v2) or a name (all its specs).")]
ResultFilter = Annotated[Literal["1-0", "0-1", "1/2-1/2"] | None, BeforeValidator(_blank_is_none),
                         Query(description="Only games with this result.")]
TerminationFilter = Annotated[Termination | None, BeforeValidator(_blank_is_none),
                              Query(description="Only games that ended this way.")]
PageNumber = Annotated[int, Query(alias="page", ge=1, le=LAST_PAGE, description="Which page, 1 the newest games.")]
PerPage = Annotated[int, Query(ge=1, le=MOST_PER_PAGE, description="Games per page.")]
ShownPly = Annotated[int | None, Query(ge=0, le=MAX_SIZE**2, description="Show the board after this many plies.")]
GameId = Annotated[int, Path(ge=1, le=GAME_IDS, description="The game's id, as 'arena games' lists it.")]


# --- the list ---------------------------------------------------------------------------


def listing(store: Store, tournament: str | None, bot: str | None, result: str | None,
               termination: Termination | None, page_number: int, per_page: int) -> dict[str, Any]:
    """One page of the games that match the filters, newest first, with the query
    strings of the pages either side (None where there is none)."""
    games = store.games.page(tournament, bot, result, None if termination is None else str(termination),
                            offset=(page_number - 1) * per_page, limit=per_page + 1)  # one more: is there a next?
    filters = {"tournament": tournament, "bot": bot, "result": result,
               "termination": None if termination is None else str(termination)}
    chosen = {key: value for key, value in filters.items() if value is not None}
    if per_page != GAMES_PER_PAGE:
        chosen["per_page"] = str(per_page)

    def query(number: int) -> str:
        return urlencode({**chosen, **({"page": str(number)} if number > 1 else {})})

    return {
        "games": games[:per_page], "filters": filters, "page": page_number, "per_page": per_page,
        "query": query(page_number),
        "next": query(page_number + 1) if len(games) > per_page else None,
        "previous": query(page_number - 1) if page_number > 1 else None,
    }


@router.get("/games", response_class=HTMLResponse, include_in_schema=False)
def games_list(request: Request, store: StoreDep, tournament: TournamentFilter = None, bot: BotFilter = None,
               result: ResultFilter = None, termination: TerminationFilter = None, page_number: PageNumber = 1,
               per_page: PerPage = GAMES_PER_PAGE) -> HTMLResponse:
    shown = listing(store, tournament, bot, result, termination, page_number, per_page)
    return page(request, "games.html", title="Games", **shown, default_per_page=GAMES_PER_PAGE,
                tournaments=[t.name for t in reversed(store.tournaments.all())], bots=store.bots.specs(),
                results=list(RESULTS.values()), terminations=[str(t) for t in Termination])


@router.get("/api/games", summary="A page of games, newest first, with the fields of 'arena games --json'")
def api_games(store: StoreDep, tournament: TournamentFilter = None, bot: BotFilter = None,
              result: ResultFilter = None, termination: TerminationFilter = None, page_number: PageNumber = 1,
              per_page: PerPage = GAMES_PER_PAGE) -> dict[str, Any]:
    shown = listing(store, tournament, bot, result, termination, page_number, per_page)
    return {
        # Its rules as an object, as in 'arena games --json': each listed game is one 'arena import' reads.
        "games": [{field: getattr(game, field) for field in GAME_FIELDS[:-1]} | {"rules": json.loads(game.rules)}
                  for game in shown["games"]],
        "filters": shown["filters"], "page": shown["page"], "per_page": shown["per_page"],
        "next": None if shown["next"] is None else f"/api/games?{shown['next']}",
        "previous": None if shown["previous"] is None else f"/api/games?{shown['previous']}",
    }


# --- one game ---------------------------------------------------------------------------


def move_cells(rules: Rules, moves: list[int]) -> list[tuple[int, int]]:
    """(column, row) of the stone each move put down, in order; row 0 is the bottom."""
    # Checked: a stored game's moves are legal; a damaged one is an error, not a picture.
    return rules.landings(moves)


def winning_lines(rules: Rules, moves: list[int]) -> list[list[tuple[int, int]]]:
    """The line(s) the game's last move completed, as (column, row) cells (none for a
    draw, a forfeit, or count scoring, where no single line decides)."""
    board = Board(rules)
    for move in moves:  # checked already: move_cells played them first
        board.play(move)
    return board.winning_lines()


def board_picture(rules: Rules, cells: list[tuple[int, int]], shown: int,
                  lines: list[list[tuple[int, int]]] | None = None) -> dict[str, Any]:
    """Where everything of the board's SVG goes, with the stones of the first
    ``shown`` moves: columns labelled below, rows on the left where the rules name
    them (where a move names a cell), and the winning ``lines`` (shown at the end only)."""
    drawing = rules.drawing
    left = CELL if drawing.row_labels else 0  # room for the row numbers
    width, height = rules.width * CELL, rules.height * CELL

    def centre(column: int, row: int) -> tuple[int, int]:
        return left + column * CELL + CELL // 2, (rules.height - 1 - row) * CELL + CELL // 2

    large = max(rules.width, rules.height) > LARGE_BOARD

    def labelled(index: int) -> bool:
        return not large or index == 0 or (index + 1) % 5 == 0

    stones = [{"ply": ply, "col": column, "row": row, "player": ply % 2, "centre": centre(column, row)}
              for ply, (column, row) in enumerate(cells[:shown])]
    return {
        "left": left, "width": width, "height": height, "cell": CELL, "radius": CELL * 0.42,
        "view": (left + width, height + CELL * 3 // 4), "style": drawing.style, "face": drawing.face,
        "stones": stones, "large": large, "label_size": 20 if large else 13,
        "columns": [{"x": centre(c, 0)[0], "label": label}
                    for c, label in enumerate(drawing.column_labels) if labelled(c)],
        "rows": [{"y": centre(0, r)[1], "label": label} for r, label in enumerate(drawing.row_labels) if labelled(r)],
        "last": stones[-1]["centre"] if stones else None,
        "lines": [{"cells": [centre(*cell) for cell in line], "from": centre(*line[0]), "to": centre(*line[-1])}
                  for line in lines or []],
        "at_end": shown == len(cells),
    }


def move_rows(game: StoredGame, stored: list[StoredMove], marks: dict[int, tuple[str, str]]) -> list[dict[str, Any]]:
    """The move list: who moved, where, how long it thought, what it said, and the
    analysis of the position before the move where it is stored."""
    rows = []
    for move in stored:
        info = json.loads(move.info) if move.info else None
        columns = {key: info.get(key) for key in INFO_COLUMNS} if isinstance(info, dict) else {}
        rest = {k: v for k, v in info.items() if k not in INFO_COLUMNS} if isinstance(info, dict) else info
        before, mark = marks.get(move.ply, ("", ""))
        rows.append({
            "ply": move.ply, "move": move.move, "ms": move.ms,
            "by": "opening" if move.ply < (game.opening_plies or 0) else ("X" if move.ply % 2 == 0 else "O"),
            "player": move.ply % 2, "info": {key: info_value(value) for key, value in columns.items()},
            "rest": other_info(rest), "before": before, "mark": mark,
        })
    return rows


def bot_logs(request: Request, store: Store, game: StoredGame) -> list[dict[str, Any]]:
    """What each side's bot wrote, for the game page: its text by ply, its crash, only
    for a viewer who may read that bot's code (as the code page decides); for any
    other viewer, how many lines it wrote and nothing of them."""
    stored = store.games.logs(game.id)
    if not stored:
        return []
    viewer = signed_in(request, store)
    shown = []
    for item in stored:
        spec = (game.first, game.second)[item.side]
        log = item.log
        visible = may_read_log(store, viewer, spec, game.tournament)
        parts = log.by_ply() if visible else []
        shown.append({
            "side": item.side, "mark": "XO"[item.side], "bot": spec, "visible": visible, "lines": log.lines(),
            "start": "".join(text for ply, text in parts if ply == START),
            "plies": {ply: text for ply, text in parts if ply != START},
            "cut": log.cut, "crash": log.crash if visible else None, "frames": log.frames if visible else (),
        })
    return shown


def other_info(rest: Any) -> list[str]:
    """A move's info beyond the columns, to read in its row: one ``key: value`` line
    per field (the value as JSON). Past :data:`INFO_SHOWN` characters it stops at a
    field's end and says how many fields the game's JSON holds besides (a first
    field longer than that alone is cut, with "…")."""
    if not rest:
        return []
    fields = list(rest.items()) if isinstance(rest, dict) else [(None, rest)]
    lines: list[str] = []
    length = 0
    for key, value in fields:
        text = json.dumps(value, ensure_ascii=False)
        line = text if key is None else f"{key}: {text}"
        if length + len(line) > INFO_SHOWN:
            if not lines:
                lines.append(line[:INFO_SHOWN] + "…")
            left = len(fields) - len(lines)
            if left:
                lines.append(f"… and {plural(left, 'field')} more in the JSON below")
            break
        lines.append(line)
        length += len(line)
    return lines


def export_text(store: Store, game: StoredGame, rows: list[StoredMove], indent: int | None = None) -> str:
    """``arena export --format json`` of the game, whose stored moves are ``rows``."""
    document = game_document(file_game(game, rows, store.tournaments.time_control(game.tournament)))
    return json.dumps(document, indent=indent, ensure_ascii=False)


@cache
def _json_escapes() -> dict[int, str]:
    """What :func:`printable` escapes but JSON may leave as it is inside a string
    (DEL, C1 controls, bidi controls), as the JSON escapes of the same characters:
    the JSON shown on a page is then both safe to show and the same document.
    (Above U+206F printable() escapes only the surrogates, which a database written
    before bots' text was made storable may still hold in a move's info.)"""
    return {code: f"\\u{code:04x}" for code in (*range(0x2070), *range(0xD800, 0xE000))
            if code != ord("\n") and printable(chr(code)) != chr(code)}


@router.get("/games/{game_id}", response_class=HTMLResponse, include_in_schema=False)
def game_page(request: Request, store: StoreDep, game_id: GameId,
              ply: ShownPly = None) -> HTMLResponse:
    game = store.games.get(game_id)
    rules = rules_of(game)
    moves = parse_moves(game.moves or "", rules)
    if ply is not None and ply > len(moves):
        raise HTTPException(422, f"ply {ply} is past the end: game {game_id} has {plural(len(moves), 'ply', 'plies')}")
    shown = len(moves) if ply is None else ply
    cells = move_cells(rules, moves)
    marks = {p.ply: (describe(rules, p.ply, p.before), p.mark or "")
             for p in analyse_stored(store, game_id, None)}  # budget None: only what is stored, never solved here
    lines = winning_lines(rules, moves) if game.finished else []
    board = board_picture(rules, cells, shown, lines)
    replay = {"width": rules.width, "height": rules.height, "cell": CELL, "left": board["left"], "cells": cells,
              "falls": [rules.drawing.fall(row) for _, row in cells],
              "moves": [format_move(m, rules) for m in moves], "ply": shown}
    rows = store.games.moves(game_id)
    document = export_text(store, game, rows, indent=2).translate(_json_escapes())
    logs = bot_logs(request, store, game)
    # Each move's lines, beside it, where its bot's log may be read by this viewer.
    move_logs = {ply: text for log in logs for ply, text in log["plies"].items()}
    response = page(request, "game.html", title=f"Game {game_id}", game=game, rules=rules.describe(),
                    board=board, shown=shown, plies=len(moves),
                    moves=move_rows(game, rows, marks), analysed=bool(marks),
                    notation=export_moves(rules, moves), document=document, replay=replay,
                    logs=logs, move_logs=move_logs)
    if logs:
        private(response)  # what it shows depends on who asks
    return response


@router.get("/games/{game_id}/export", include_in_schema=False)
def game_file(store: StoreDep, game_id: GameId,
              fmt: Annotated[Literal["moves", "json"], Query(alias="format")] = "moves") -> Response:
    """The game as a file to download: ``arena export``'s one line, or its JSON."""
    game = store.games.get(game_id)
    if fmt == "moves":
        rules = rules_of(game)
        body, kind, suffix = export_moves(rules, parse_moves(game.moves or "", rules)) + "\n", "text/plain", "txt"
    else:
        body = export_text(store, game, store.games.moves(game_id), indent=2) + "\n"
        kind, suffix = "application/json", "json"
    return Response(body, media_type=kind, headers={
        "Content-Disposition": f'attachment; filename="game-{game_id}.{suffix}"', "X-Content-Type-Options": "nosniff"})


@router.get("/api/games/{game_id}", summary="A game with its moves: 'arena export --format json' with id, "
            "tournament and key")
def api_game(store: StoreDep, game_id: GameId) -> dict[str, Any]:
    game = store.games.get(game_id)
    # storable: a database written before bots' text was made storable may hold a
    # surrogate escaped in an info's JSON, which the response could not encode.
    return {"id": game.id, "tournament": game.tournament, "key": game.key,
            **storable(json.loads(export_text(store, game, store.games.moves(game_id))))}


# --- live pages ------------------------------------------------------------------------


@router.get("/api/version", summary="A value that changes whenever a table could: what live pages poll")
def api_version(store: StoreDep) -> dict[str, Any]:
    return {"version": list(store.version())}
