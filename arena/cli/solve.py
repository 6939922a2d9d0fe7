"""`arena solve` and `arena analyse`: exact values from the solver plug-in."""

from __future__ import annotations

import json
import time

import click
from tabulate import tabulate

from arena.cli.main import ArenaUsageError, db_option, main, make_rules, open_store, rules_options
from arena.engine.game import Board, Rules, format_move, parse_moves
from arena.engine.solvers import find_solver
from arena.ratings.analysis import Solve, analyse_stored, describe, slips_by_bot, solver_solve
from arena.store import rules_of
from arena.terminal import progress as progress_bar
from arena.terminal.ticker import Ticker
from arena.text import plural, printable

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
