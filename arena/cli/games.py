"""Single games: list, show, replay, export, import, play, solve and analyse."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import click
from tabulate import tabulate

from arena.cli.main import (
    ArenaUsageError,
    db_option,
    main,
    make_rules,
    open_store,
    rules_options,
)
from arena.engine.game import Board, Rules, format_move, parse_moves
from arena.engine.solvers import find_solver
from arena.errors import ArenaError
from arena.formats.game_files import export_json, export_moves, import_game, parse_rules_prefix
from arena.players.plugins import check_spec, spec_text
from arena.ratings.analysis import Solve, analyse_stored, describe, slips_by_bot, solver_solve
from arena.records import Termination
from arena.store import Store, check_database, rules_of
from arena.terminal import progress as progress_bar
from arena.terminal.casual import HUMAN, import_into, save_game
from arena.terminal.play import PlaySession
from arena.terminal.replay import ReplaySession
from arena.terminal.ticker import Ticker
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
@db_option
def show_command(game_id: int, db: str) -> None:
    """Print a stored game: players, result, every move with its time and info, final board."""
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


#: ``arena solve``'s default budget in seconds: an answer or "unknown" soon, never minutes of silence.
SOLVE_BUDGET = 10.0
#: With ``--budget 0`` the search still gets a deadline, this far off: the compiled
#: solver notices Ctrl-C only when it looks at the clock, which it does only with one.
_NO_BUDGET = 1e9


@main.command("solve")
@click.argument("moves", default="")
@rules_options
@click.option("--budget", type=click.FloatRange(min=0), default=SOLVE_BUDGET, show_default=True,
              help="Give up after this many seconds (unproven values are unknown); 0 searches to the end.")
@click.option("--json", "as_json", is_flag=True, help="Print {\"score\": S, \"moves\": {\"1\": S1, ...}}.")
def solve_command(moves: str, width: int | None, height: int | None, connect: int | None, no_gravity: bool,
                  scoring: str | None, budget: float, as_json: bool) -> None:
    """Exact value of the position after MOVES, and of each legal move.

    Scores are for the side to move: positive wins, 0 draws, negative loses; the
    size is 22 minus the winner's stone count on 7x6 (a quicker win scores higher).
    Values the solver cannot prove within --budget seconds are unknown (null in JSON).
    """
    rules = make_rules(width, height, connect, no_gravity, scoring)
    board = _play_numbered(moves, rules)
    if board.is_over():
        raise ArenaUsageError(f"the game is already over after {moves!r}: nothing to solve")
    solver = find_solver(rules)  # a plug-in (arena.solvers), loaded only when asked for
    deadline = time.monotonic() + (budget or _NO_BUDGET)  # one budget for the whole command
    with Ticker.for_stderr("solving", budget or None):
        score = solver.solve(board, deadline=deadline)
        per_move = solver.solve_moves(board, deadline=deadline)
    unknown = score is None or None in per_move.values()
    note = f"unknown within {budget:g} s; --budget 0 to search to the end"
    if as_json:
        click.echo(json.dumps({"score": score, "moves": {format_move(m, rules): v for m, v in per_move.items()}}))
        if unknown:
            click.echo(f"Note: {note}", err=True)
        return
    click.echo(board.render())
    value = note if score is None else f"{describe(rules, board.ply, score)} (score {score})"
    click.echo(f"{'X' if board.to_move == 0 else 'O'} to move: {value}")
    rows = [
        [format_move(m, rules), "?" if v is None else v, describe(rules, board.ply, v)] for m, v in per_move.items()
    ]
    click.echo(tabulate(rows, headers=["move", "score", "for the side to move"]))
    if unknown and score is not None:
        click.echo(f"?: {note}")


def _play_numbered(moves: str, rules: Rules) -> Board:
    """The board after ``moves``; a bad one is named by its 1-based number, as ``arena import`` does."""
    board = Board(rules)
    for number, move in enumerate(parse_moves(moves, rules), 1):
        name = format_move(move, rules)
        if board.winner is not None:
            raise ArenaUsageError(f"move {number} ({name!r}) comes after the game was won at move {number - 1}")
        if not board.is_legal(move):
            raise ArenaUsageError(f"move {number} ({name!r}) is illegal: {board.illegal_cause(move)}")
        board.play(move)
    return board


@main.command("analyse")
@click.argument("game_id", type=int, required=False)
@click.option("--tournament", "-t", help="Analyse every game of a tournament and summarise per bot.")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Seconds the solver may spend on each position.")
@db_option
def analyse_command(game_id: int | None, tournament: str | None, budget: float, db: str) -> None:
    """Mark the moves that threw away a win or a draw, using the solver.

    Each position gets its exact value (win / draw / loss, and in how many moves)
    or stays unknown if it cannot be proven within the budget. Results are stored:
    asking again is instant, and `arena show` shows the marks.
    """
    store = open_store(db, write=True)
    if (game_id is None) == (tournament is None):
        raise ArenaUsageError("give a GAME_ID or --tournament NAME (one of them)")
    if game_id is not None:
        game = store.games.get(game_id)
        rules = rules_of(game)
        plies = analyse_stored(store, game_id, budget)
        rows = [[p.ply + 1, "X" if p.ply % 2 == 0 else "O", format_move(p.move, rules),
                 describe(rules, p.ply, p.before), p.mark or ""] for p in plies]
        click.echo(f"Game {game_id}: {printable(game.first)} (X) vs {printable(game.second)} (O), {game.result}")
        click.echo(tabulate(rows, headers=["ply", "by", "move", "before the move", "mark"]))
        return
    games = store.games.all(tournament=tournament)
    bar = progress_bar.ProgressBar.for_stderr()
    analyses = {}
    started = time.perf_counter()
    solvers: dict[str, Solve] = {}  # one per set of rules: what it learns carries from game to game

    def shared_solver(rules_text: str) -> Solve:
        def solve(board: Board, deadline: float) -> int | None:
            if rules_text not in solvers:  # made when first needed: stored values need none
                solvers[rules_text] = solver_solve(board.rules)
            return solvers[rules_text](board, deadline)

        return solve

    for done, game in enumerate(games, start=1):
        analyses[game.id] = analyse_stored(store, game.id, budget, shared_solver(game.rules))
        if bar:
            bar.update(done, len(games), time.perf_counter() - started)
    if bar:
        bar.close()
    rows = [[printable(r.bot), r.moves, r.won_positions, r.lost_wins, r.lost_draws, r.unknown]
            for r in slips_by_bot(games, analyses)]
    click.echo(f"Tournament {tournament!r}: {plural(len(games), 'game')} analysed, {budget:g} s per position")
    click.echo(tabulate(rows, headers=["bot", "moves", "from won positions", "wins let slip", "draws lost", "unknown"]))


@main.command("play")
@click.argument("bot", required=False)
@click.option("--first/--second", "human_first", default=True, help="Move first (default) or second against the bot.")
@rules_options
@click.option("--hint-bot", default="minimax:depth=6", show_default=True, help="The bot that answers 'h'.")
@click.option("--seed", type=int, default=0, help="Seed for the bot.")
@db_option
def play_command(bot: str | None, human_first: bool, width: int | None, height: int | None, connect: int | None,
                 no_gravity: bool, scoring: str | None, hint_bot: str, seed: int, db: str) -> None:
    """Play in the terminal against BOT, or two people at one keyboard without one.

    Type a move (a column; a cell such as c3 without gravity), u to undo, r to
    redo, h for a hint, s to save, q to quit. Finished and saved games are stored
    in the database (a "casual" tournament) for replay and analysis.
    """
    rules = make_rules(width, height, connect, no_gravity, scoring)
    bot_spec = spec_text(check_spec(bot)) if bot else None
    try:  # both checked before the first move, not when 'h' is pressed or the game is saved
        check_spec(hint_bot)
    except ArenaError as exc:
        raise ArenaUsageError(f"--hint-bot {hint_bot!r}: {exc}") from None
    check_database(db)
    human = 0 if human_first else 1
    players = (HUMAN, HUMAN) if bot_spec is None else ((HUMAN, bot_spec) if human == 0 else (bot_spec, HUMAN))
    saved: dict[str, int] = {}

    def on_save(board: Board, finished: bool) -> str:
        plies = [(r.ms, r.info) for r in session.records]
        with Store(db) as store:
            saved["id"] = save_game(store, rules, players, board, plies, replace=saved.get("id"))
        return f"{'stored' if finished else 'saved'} as game {saved['id']} in {db}"

    session = PlaySession(rules, bot_spec, human_player=human, color=_colour(), hint_bot=hint_bot,
                          on_save=on_save, seed=seed)
    try:
        session.run()
    except KeyboardInterrupt:
        session.close()
        click.echo("\nStopped.", err=True)


@main.command("replay")
@click.argument("game_id", type=int)
@click.option("--delay", type=click.FloatRange(min=0), default=None,
              help="Play it through with this many seconds between moves instead of stepping.")
@db_option
def replay_command(game_id: int, delay: float | None, db: str) -> None:
    """Step through a stored game: Enter/n next, p previous, a number to jump, q quit."""
    store = open_store(db)
    game = store.games.get(game_id)
    rules = rules_of(game)
    rows = store.games.moves(game_id)
    marks = {p.ply: p.mark for p in analyse_stored(store, game_id, None)}
    ending = f"{game.result} ({game.termination}{': ' + game.reason if game.reason else ''})"
    session = ReplaySession(
        rules, parse_moves(game.moves or "", rules), players=(game.first, game.second),
        move_info=[json.loads(m.info) if m.info else None for m in rows],
        move_ms=[m.ms for m in rows], marks=[marks.get(m.ply) for m in rows] if marks else None,
        color=_colour(), ending=ending, opening_plies=game.opening_plies or 0,
    )
    if delay is None:
        session.run()
    else:
        session.play_through(delay)


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


def _colour() -> bool:
    """Colours only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")
