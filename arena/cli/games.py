"""Stored games: `arena games`, `arena show`, `arena export` and `arena import`."""

from __future__ import annotations

import json
from typing import Any

import click
from tabulate import tabulate

from arena.cli.main import ArenaUsageError, db_option, main, open_store
from arena.engine.game import Board, parse_moves
from arena.formats.game_files import export_json, export_moves, import_game, parse_rules_prefix
from arena.ratings.analysis import analyse_stored, describe
from arena.records import Termination
from arena.store import StoredLog, rules_of
from arena.terminal.casual import import_into
from arena.text import plural, printable

GAMES_SHOWN = 50  # what 'arena games' lists without --limit


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
        click.echo(json.dumps([{k: getattr(g, k) for k in keep} for g in games], indent=2))
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
@click.argument("game_id", type=int)
@click.option("--format", "fmt", type=click.Choice(["moves", "json"]), default="moves", show_default=True,
              help="moves: one line (rules and move string); json: everything, per move.")
@db_option
def export_command(game_id: int, fmt: str, db: str) -> None:
    """Print a stored game as one shareable line, or as JSON."""
    store = open_store(db)
    game = store.games.get(game_id)
    rules = rules_of(game)
    moves = parse_moves(game.moves or "", rules)
    if fmt == "moves":
        click.echo(export_moves(rules, moves))
        return
    rows = store.games.moves(game_id)
    finished = game.termination != Termination.UNFINISHED  # an unfinished game has no result yet
    click.echo(export_json(
        rules, moves, players=(game.first, game.second), result=game.result if finished else None,
        termination=Termination(game.termination) if finished else None, reason=game.reason,
        move_info=[json.loads(m.info) if m.info else None for m in rows], move_ms=[m.ms for m in rows],
        indent=2,
    ))


@main.command("import")
@click.argument("file", type=click.File("r"))
@click.option("--rules", "rules_text", help="Rules of a bare move string, e.g. 9x7c5 or 15x15c5n (default 7x6c4).")
@db_option
def import_command(file: Any, rules_text: str | None, db: str) -> None:
    """Store a game from FILE ('-' for stdin): a move line from 'arena export' or its JSON."""
    rules = parse_rules_prefix(rules_text) if rules_text else None
    try:
        text = file.read()
    except UnicodeDecodeError as exc:  # a ValueError, but not the library's: say what is wrong here
        raise ArenaUsageError(
            f"{file.name} is not a text file ({exc.reason}): give a game from 'arena export'"
        ) from None
    game = import_game(text, rules=rules)
    store = open_store(db, create=True)
    game_id = import_into(store, game)  # refuses a game stored already
    plies = plural(len(game.moves), "ply", "plies")
    click.echo(f"Imported as game {game_id} in {db}: {game.rules.describe()}, {plies}")
