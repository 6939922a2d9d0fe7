"""Stored games: `arena games`, `arena show`, `arena export` and `arena import`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click
from tabulate import tabulate

from arena.cli.main import ArenaUsageError, db_option, main, open_store
from arena.engine.game import Board, parse_moves
from arena.formats.game_files import ImportedGame, export_moves, game_document, json_line, parse_rules_prefix
from arena.formats.kaggle_episodes import episode_of_game
from arena.formats.many_games import SINGLE_GAME_FORMS, read_games
from arena.formats.pgn import write_pgn
from arena.ratings.analysis import analyse_stored, describe
from arena.store import StoredLog, rules_of
from arena.terminal.casual import import_into
from arena.terminal.transfer import document_line, import_games, stored_games
from arena.text import plural, printable

GAMES_SHOWN = 50  # what 'arena games' lists without --limit
EXPORT_FORMATS = ("moves", "json", "jsonl", "pgn", "kaggle")
SINGLE_GAME_FORMATS = ("moves", "json")  # hold one game: 'arena import' reads one of them as one game
DEFAULT_IMPORT = "imported"  # the tournament a file of many games goes into


@main.command("games")
@db_option
@click.option("--tournament", "-t", help="Only this tournament.")
@click.option("--bot", help="Only games of this bot: a spec (minimax:depth=4, guard@v2) or a name (all its specs).")
@click.option("--limit", type=click.IntRange(min=1), default=GAMES_SHOWN, show_default=True,
              help="Show the latest this many games.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def games_command(db: str, tournament: str | None, bot: str | None, limit: int, as_json: bool) -> None:
    """List stored games.

    The latest 50 (oldest first) unless --limit says how many; a note on stderr
    says when there are more.
    """
    store = open_store(db)
    games = store.games.all(tournament=tournament, bot=bot, limit=limit)
    total = store.games.count(tournament=tournament, bot=bot)
    if as_json:
        keep = ("id", "tournament", "key", "first", "second", "result", "termination", "reason",
                "plies", "opening", "moves", "duration", "seed", "finished_at")
        # With its rules, each listed game is one 'arena import' reads back.
        click.echo(json.dumps([{**{k: getattr(g, k) for k in keep}, "rules": json.loads(g.rules)} for g in games],
                              indent=2))
    else:
        # Names and reasons may be a bot's own words (a crash message): escaped for the terminal.
        rows = [
            [g.id, printable(g.tournament), printable(g.key), printable(g.first), printable(g.second), g.result,
             printable(g.termination + (f" ({g.reason})" if g.reason else "")), g.plies]
            for g in games
        ]
        click.echo(tabulate(rows, headers=["id", "tournament", "key", "first", "second", "result", "termination",
                                           "plies"]))
    if total > len(games):  # on stderr: the listing itself stays the same shape
        click.echo(f"Showing the latest {len(games)} of {total} games: --limit {total} shows them all.", err=True)


@main.command("show")
@click.argument("game_id", type=int)
@click.option("--logs", is_flag=True,
              help="Also print what each bot wrote (stdout and stderr) by ply, and a crash's traceback.")
@db_option
def show_command(game_id: int, logs: bool, db: str) -> None:
    """Print a stored game: players, result, every move with its time and info, final board.

    With --logs, what each bot printed during each move, and where in its own
    code a bot crashed (whoever has the database file may read them)."""
    store = open_store(db)
    game = store.games.get(game_id)
    rules = rules_of(game)
    moves = store.games.moves(game_id)
    # What a bot wrote (its name, a crash message it caused, its info) is escaped for the terminal.
    click.echo(f"Game {game_id} ({printable(game.tournament)} {printable(game.key)}), {rules.describe()}")
    click.echo(f"X (first): {printable(game.first)}\nO (second): {printable(game.second)}")
    how = printable(game.termination + (f": {game.reason}" if game.reason else ""))
    click.echo(f"Result {game.result} ({how}), {plural(game.plies or 0, 'ply', 'plies')}; moves {game.moves}")
    analysed = {p.ply: p for p in analyse_stored(store, game_id, None)}
    rows = []
    for m in moves:
        who = "opening" if m.ply < (game.opening_plies or 0) else ("X" if m.ply % 2 == 0 else "O")
        ms = "" if m.ms is None else f"{m.ms:.2f}"
        row = [m.ply + 1, who, m.move, ms, printable(m.info or "")]
        if analysed:
            ply = analysed.get(m.ply)
            row += [describe(rules, m.ply, ply.before if ply else None), (ply.mark or "") if ply else ""]
        rows.append(row)
    headers = ["ply", "by", "move", "ms", "info"] + (["before the move", "mark"] if analysed else [])
    click.echo(tabulate(rows, headers=headers))
    board = Board.from_moves(parse_moves(game.moves or "", rules), rules)
    click.echo(board.render())
    score = board.score_text()  # None where the first line decides
    if score is not None:
        click.echo(score)
    if logs:
        _echo_logs(store.games.logs(game_id), (game.first, game.second))


def _echo_logs(logs: list[StoredLog], bots: tuple[str, str]) -> None:
    """Each side's log, its lines prefixed with the side and the ply (as the moves are numbered)."""
    from arena.terminal.bot_logs import log_lines

    if not logs:
        click.echo("No bot wrote anything in this game.")
        return
    for stored in logs:
        mark = "XO"[stored.side]
        click.echo(f"\nLog of {mark} ({printable(bots[stored.side])}), {plural(stored.log.lines(), 'line')}:")
        for line in log_lines(mark, stored.log):
            click.echo(line)


#: ``arena solve``'s default budget in seconds: an answer or "unknown" soon, never minutes of silence.
@main.command("export")
@click.argument("game_id", type=int, required=False)
@click.option("--tournament", "-t", help="Every game of this tournament.")
@click.option("--bot", help="Every game of this bot: a spec (minimax:depth=4, guard@v2) or a name (all its specs).")
@click.option("--all", "every", is_flag=True, help="Every stored game.")
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS),
              help="moves: one line (rules and move string); json: everything, per move; jsonl: JSON Lines, "
                   "one game a line; pgn: PGN-like headers and moves; kaggle: a Kaggle ConnectX episode a line "
                   "(the replay JSON Kaggle's viewer reads). Default: moves for one GAME_ID, jsonl for many games.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True),
              help="Write to this file (whole, or not at all) instead of printing.")
@db_option
def export_command(game_id: int | None, tournament: str | None, bot: str | None, every: bool, fmt: str | None,
                   output: str | None, db: str) -> None:
    """Print stored games: one as a shareable line or JSON, many as JSON Lines or PGN-like text.

    GAME_ID exports one game; --tournament and --bot (either or both) or --all
    export many, oldest first, read a few hundred at a time however many there are.
    """
    many = bool(tournament or bot or every)
    if game_id is not None and many:
        raise ArenaUsageError("give GAME_ID or --tournament/--bot/--all, not both")
    if every and (tournament or bot):
        raise ArenaUsageError("--all exports every game: leave out --tournament and --bot, or --all")
    if game_id is None and not many:
        raise ArenaUsageError("say which games: a GAME_ID, --tournament NAME, --bot NAME or --all")
    fmt = fmt or ("jsonl" if many else "moves")
    if many and fmt in SINGLE_GAME_FORMATS:
        raise ArenaUsageError(f"--format {fmt} holds one game: export many games with --format jsonl or pgn")
    store = open_store(db)
    games = stored_games(store, tournament=tournament, bot=bot, game_id=game_id)
    with output_file(output) as write:
        for game in games:
            write(_exported(game, fmt) + "\n")


@contextmanager
def output_file(path: str | None) -> Iterator[Callable[[str], None]]:
    """Where an export writes: stdout, or a file that holds the whole export or,
    if it stops on the way, is left as it was (written beside it, then renamed)."""
    if path is None:
        yield lambda text: click.echo(text, nl=False)
        return
    part = f"{path}.part"
    try:
        with open(part, "w", encoding="utf-8") as out:

            def write(text: str) -> None:
                out.write(text)

            yield write
        os.replace(part, path)
    except OSError as exc:
        raise ArenaUsageError(f"cannot write {printable(path)} ({exc.strerror}): give another --output") from None
    finally:
        if os.path.exists(part):
            os.remove(part)


def _exported(game: ImportedGame, fmt: str) -> str:
    if fmt == "moves":
        return export_moves(game.rules, game.moves)
    if fmt == "json":
        return json.dumps(game_document(game), indent=2, ensure_ascii=False)
    if fmt == "pgn":
        return write_pgn(game)[:-1]  # the blank line between games: the echo adds its line end
    if fmt == "kaggle":
        return json_line(episode_of_game(game))
    return document_line(game)


@main.command("import")
@click.argument("file", type=click.File("r"))
@click.option("--rules", "rules_text", help="Rules of a bare move string, e.g. 9x7c5 or 15x15c5n (default 7x6c4).")
@click.option("--tournament", "-t",
              help=f"Store the games in this tournament (default {DEFAULT_IMPORT!r} for a file of many games).")
@db_option
def import_command(file: Any, rules_text: str | None, tournament: str | None, db: str) -> None:
    """Store games from FILE ('-' for stdin), as 'arena export' or 'arena games --json' writes them.

    FILE holds a move line or JSON from 'arena export', JSON Lines or PGN-like
    text from 'arena export --format jsonl|pgn', or a listing from 'arena games --json';
    or Kaggle ConnectX episodes (a replay's JSON, or JSON Lines of them from
    'arena export --format kaggle'), the players named by the episode's TeamNames.

    One game without --tournament is stored as a casual game, as 'arena play' stores
    one. Many games go into one tournament, each once: importing a file again stores
    nothing twice. Every move is checked; a bad game anywhere stores nothing.
    """
    rules = parse_rules_prefix(rules_text) if rules_text else None
    try:
        stream = read_games(file, rules=rules)
        if stream.form in SINGLE_GAME_FORMS and tournament is None:
            ((_, _, game),) = stream.games
            store = open_store(db, create=True)
            game_id = import_into(store, game)  # refuses a game stored already
            plies = plural(len(game.moves), "ply", "plies")
            click.echo(f"Imported as game {game_id} in {db}: {game.rules.describe()}, {plies}")
            return
        store = open_store(db, create=True)
        report = import_games(store, stream.games, tournament or DEFAULT_IMPORT)
    except UnicodeDecodeError as exc:  # a ValueError, but not the library's: say what is wrong here
        raise ArenaUsageError(
            f"{file.name} is not a text file ({exc.reason}): give games from 'arena export'"
        ) from None
    click.echo(f"{plural(report.imported, 'game')} imported, {report.already} already there "
               f"(tournament {printable(tournament or DEFAULT_IMPORT)!r} in {db})")
