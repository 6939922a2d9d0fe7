"""The ``arena`` command: a thin layer from flags to library calls.

Library errors (all ``ValueError`` subclasses) become one line on stderr and exit
code 2; nothing here knows how games are played or stored.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from tabulate import tabulate

from arena import progress as progress_bar
from arena.analysis import analyse_stored, describe, slips_by_bot
from arena.casual import HUMAN, UNFINISHED, save_game
from arena.exchange import export_json, export_moves, import_game, parse_rules_prefix
from arena.play import PlaySession
from arena.replay import ReplaySession
from arena.config import load_config
from arena.crosstable import by_colour, crosstable, render_colours, render_crosstable
from arena.game import Board, Rules, format_move, parse_moves
from arena.match import match_specs, play_match, play_sprt
from arena.plugins import check_spec, discover, file_code, parse_spec, spec_text
from arena.submissions import submit_file
from arena.testing import check_code
from arena.runner import run_tournament
from arena.sprt import Sprt, elo_with_interval
from arena.standings import FORMATS, render_standings, standings
from arena.store import Store, rules_of


class ArenaUsageError(click.ClickException):
    """A user's mistake: one line, exit code 2."""

    exit_code = 2


def user_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the library's ValueErrors into one-line messages with exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ValueError as exc:
            raise ArenaUsageError(str(exc)) from None

    return wrapper


def rules_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--width/--height/--connect/--no-gravity, shared by every command that plays."""
    func = click.option("--scoring", type=click.Choice(["line", "count"]), default=None,
                        help="line: first to connect wins (default); count: most windows on the full board.")(func)
    func = click.option("--no-gravity", is_flag=True, help="Stones stay where placed (any empty cell).")(func)
    func = click.option("--connect", type=int, default=None, help="How many in a row win (default 4).")(func)
    func = click.option("--height", type=int, default=None, help="Rows (default 6).")(func)
    func = click.option("--width", type=int, default=None, help="Columns (default 7).")(func)
    return func


def make_rules(width: int | None, height: int | None, connect: int | None, no_gravity: bool,
               scoring: str | None = None) -> Rules:
    defaults = Rules()
    return Rules(
        width=defaults.width if width is None else width,
        height=defaults.height if height is None else height,
        connect=defaults.connect if connect is None else connect,
        gravity=not no_gravity,
        scoring=scoring or defaults.scoring,
    )


class ArenaGroup(click.Group):
    """Click's own usage errors (a bad flag value, an unknown option) as one line too."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click.UsageError as exc:
            where = f"; see '{exc.ctx.command_path} --help'" if exc.ctx is not None else ""
            click.echo(f"Error: {exc.format_message().rstrip('.')}{where}", err=True)
            sys.exit(2)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="connectk-arena")
def main() -> None:
    """A bot arena for Connect Four and its relatives."""


def db_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--db", envvar="ARENA_DB", default="arena.db", show_default=True,
        help="League database (or set ARENA_DB).",
    )(func)


@main.command("bots")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@db_option
def bots_command(as_json: bool, db: str) -> None:
    """List every bot: installed plug-ins, then bots submitted to the database."""
    entries = sorted(discover().values(), key=lambda e: e.name)
    submitted = Store(db, create=False).submissions() if Path(db).is_file() else []
    if as_json:
        data = [e.as_dict() for e in entries] + [
            {"name": s.spec, "source": f"submitted {s.submitted_at} ({s.kind})", "description": "",
             "options": {}, "error": None, "sha256": s.content_hash}
            for s in submitted
        ]
        click.echo(json.dumps(data, indent=2))
        return
    rows = []
    for entry in entries:
        options = ", ".join(f"{k}={o.default!r}" for k, o in entry.options.items())
        about = f"BROKEN: {entry.error}" if entry.error else entry.description
        rows.append([entry.name, entry.source, about, options or "-"])
    for sub in submitted:
        rows.append([sub.spec, f"submitted to {db}", f"a {sub.kind}, sha256 {sub.content_hash[:12]}, {sub.submitted_at}", "-"])
    click.echo(tabulate(rows, headers=["bot", "source", "description", "options"]))


@main.command("match")
@click.argument("bot_a")
@click.argument("bot_b")
@click.option("--games", "-n", type=click.IntRange(min=1), default=10, show_default=True,
              help="Games to play (with --sprt: at most this many).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed: the same seed gives the same games.")
@click.option("--openings", "opening_plies", type=click.IntRange(min=0), default=2, show_default=True,
              help="Random plies before the bots take over (each opening is played with both colours).")
@click.option("--sprt", "sprt_text", help="Stop when a sequential test decides: elo0=0,elo1=20[,alpha=0.05,beta=0.05].")
@rules_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@user_errors
def match_command(
    bot_a: str,
    bot_b: str,
    games: int,
    seed: int,
    opening_plies: int,
    sprt_text: str | None,
    width: int | None,
    height: int | None,
    connect: int | None,
    no_gravity: bool,
    scoring: str | None,
    as_json: bool,
) -> None:
    """Play GAMES games between BOT_A and BOT_B, alternating who moves first.

    A bot is a name from `arena bots` with optional options (minimax:depth=6)
    or a path to a bot file (my_bot.py, my_bot.py:MyBot). The result gives BOT_A's
    Elo advantage over BOT_B with its 95% interval.
    """
    rules = make_rules(width, height, connect, no_gravity, scoring)
    a = spec_text(check_spec(bot_a))
    b = spec_text(check_spec(bot_b))
    if a == b:
        raise ArenaUsageError(f"both bots are {a!r}: a match needs two different bot specs")
    test = Sprt.parse(sprt_text) if sprt_text else None
    specs = match_specs(a, b, games, seed, rules, opening_plies=opening_plies)
    if test is None:
        result, decision = play_match(specs, (a, b)), None
    else:
        result, decision = play_sprt(specs, (a, b), test)
    tally = result.tally()[a]
    elo, low, high = elo_with_interval(tally.wins, tally.draws, tally.losses)
    if as_json:
        data = result.as_json()
        data["elo_difference"] = {"elo": _finite(elo), "low": _finite(low), "high": _finite(high)}
        if test is not None:
            data["sprt"] = {"decision": decision, "llr": round(test.llr(tally.wins, tally.draws, tally.losses), 3),
                            "bounds": [round(x, 3) for x in test.bounds]}
        click.echo(json.dumps(data, indent=2))
        return
    rows = [
        [bot, t.games, t.wins, t.draws, t.losses, f"{100 * t.score / t.games:.1f}"]
        for bot, t in result.tally().items()
    ]
    click.echo(f"{len(result.records)} games, {rules.describe()}, seed {seed}")
    click.echo(tabulate(rows, headers=["bot", "games", "wins", "draws", "losses", "score %"]))
    click.echo(f"Elo difference ({a} - {b}): {elo:+.1f}, 95% interval {low:+.1f} .. {high:+.1f}")
    if test is not None:
        llr = test.llr(tally.wins, tally.draws, tally.losses)
        lower, upper = test.bounds
        verdict = {
            "H1": f"H1 accepted: the games favour a difference of {test.elo1:g} Elo over {test.elo0:g}",
            "H0": f"H0 accepted: the games favour a difference of {test.elo0:g} Elo over {test.elo1:g}",
            "continue": f"undecided after {len(result.records)} games: raise --games to go on",
        }[decision]
        click.echo(f"SPRT elo0={test.elo0:g} elo1={test.elo1:g}: LLR {llr:.2f} (bounds {lower:.2f}, {upper:.2f}); {verdict}")


def _finite(value: float) -> float | None:
    """JSON has no infinity: an unbounded Elo difference is null."""
    return round(value, 1) if math.isfinite(value) else None


@main.command("submit")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--name", help="Name to enter the bot under (default: the file's name).")
@db_option
@user_errors
def submit_command(path: str, name: str | None, db: str) -> None:
    """Check a bot file in the sandbox and store it in the league database.

    It then plays in tournaments by name (NAME for the latest version, NAME@v2
    for an older one). Resubmitting changed code makes a new version.
    """
    store = Store(db)
    submission, new, report = submit_file(store, path, name)
    for check in report.checks:
        click.echo(f"  ok  {check.name}: {check.detail}")
    if new:
        click.echo(f"Submitted {submission.spec} ({submission.kind}, sha256 {submission.content_hash[:12]}) to {db}; "
                   f"play it with: arena tournament run --bots {submission.name},minimax --db {db}")
    else:
        click.echo(f"Unchanged: this code is already {submission.spec} in {db}")


@main.command("check")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--seconds", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Time allowed per move.")
@rules_options
@user_errors
def check_command(path: str, seconds: float, width: int | None, height: int | None, connect: int | None,
                  no_gravity: bool, scoring: str | None) -> None:
    """Run the submission checks on a bot file, in the sandbox, without storing it.

    Exit code 0 if every check passes, 1 if one fails.
    """
    rules = make_rules(width, height, connect, no_gravity, scoring)
    source = file_code(parse_spec(path)).source or ""
    report = check_code(source, path, rules_list=(rules,), seconds=seconds)
    for check in report.checks:
        click.echo(f"  {'ok' if check.passed else 'FAIL'}  {check.name}: {check.detail}")
    if not report.passed:
        click.echo(f"{path}: not ready to submit ({report.first_failure()})")
        sys.exit(1)
    click.echo(f"{path}: all checks passed (a {report.kind})")


def open_store(db: str) -> Store:
    """An existing database; reading commands never create one by accident."""
    return Store(db, create=False)


@main.group("tournament")
def tournament_group() -> None:
    """Run tournaments (round robin or gauntlet) and store every move."""


@tournament_group.command("run")
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--bots", help="Comma-separated bot specs (replaces the file's list).")
@click.option("--challengers", help="Gauntlet: comma-separated bots that face the field.")
@click.option("--format", "fmt", type=click.Choice(["round-robin", "gauntlet"]), help="Tournament format.")
@click.option("--games", type=int, help="Games per pairing (each opening twice, colours swapped).")
@click.option("--openings", "opening_plies", type=int, help="Random plies in each opening.")
@click.option("--openings-file", help="File of opening move strings, one per line.")
@click.option("--move-seconds", type=float, help="Time limit per move.")
@click.option("--bank-seconds", type=float, help="Extra time a bot may draw on over the game.")
@click.option("--workers", type=int, help="Worker processes (default: one per core).")
@click.option("--isolate", is_flag=True, default=None, help="Run installed bots sandboxed too (bot files always are).")
@click.option("--seed", type=int, help="Tournament seed: the same seed gives the same games.")
@click.option("--db", help="League database (default arena.db, or ARENA_DB).")
@click.option("--name", help="Tournament name (default: the config file's name).")
@rules_options
@user_errors
def tournament_run(config: str | None, bots: str | None, challengers: str | None, fmt: str | None,
                   games: int | None, opening_plies: int | None, openings_file: str | None,
                   move_seconds: float | None, bank_seconds: float | None, workers: int | None,
                   isolate: bool | None, seed: int | None, db: str | None, name: str | None, width: int | None,
                   height: int | None, connect: int | None, no_gravity: bool, scoring: str | None) -> None:
    """Play a tournament defined by CONFIG (a TOML file) and flags, then print standings.

    Running it again with the same name and database resumes it: only the games
    not yet stored are played.
    """
    overrides = {
        "bots": _split(bots), "challengers": _split(challengers), "format": fmt, "games": games,
        "openings.plies": opening_plies, "openings.file": openings_file,
        "time.move_seconds": move_seconds, "time.bank_seconds": bank_seconds, "workers": workers,
        "isolate": isolate,
        "seed": seed, "db": db, "name": name, "rules.width": width, "rules.height": height,
        "rules.connect": connect, "rules.gravity": False if no_gravity else None, "rules.scoring": scoring,
    }
    cfg = load_config(config, overrides)
    store = Store(cfg.db)
    bar = progress_bar.ProgressBar.for_stderr()
    outcome = run_tournament(cfg, store, progress=bar.update if bar else None)
    if bar:
        bar.close()
    stored = outcome.already_stored + outcome.played
    if outcome.interrupted:
        why = f"Stopped: {outcome.problem}" if outcome.problem else "Interrupted"
        click.echo(
            f"{why}: {stored} of {outcome.scheduled} games stored in {cfg.db}; "
            "run the same command again to resume.", err=True,
        )
        sys.exit(1 if outcome.problem else 130)
    resumed = f", {outcome.already_stored} were already stored" if outcome.already_stored else ""
    rate = outcome.played / outcome.seconds if outcome.seconds else 0.0
    click.echo(
        f"Tournament {cfg.name!r}: {outcome.played} games played in {outcome.seconds:.1f} s "
        f"({rate:.3g} games/s){resumed}; {cfg.rules.describe()}; database {cfg.db}"
    )
    rows = standings(store.games(tournament=cfg.name), bots=cfg.entrants)
    click.echo(render_standings(rows))


def league_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--db, --tournament/--all and --format, shared by the commands that print tables."""
    func = click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
                        help="table, github (markdown), csv or json.")(func)
    func = click.option("--all", "league", is_flag=True,
                        help="Every game in the database: one league across tournaments.")(func)
    func = click.option("--tournament", "-t", help="One tournament (default: the latest).")(func)
    return db_option(func)


def selected_games(db: str, tournament: str | None, league: bool) -> list[dict[str, Any]]:
    """The games a table is built from: one tournament (the latest by default) or all."""
    store = open_store(db)
    if league and tournament:
        raise ArenaUsageError("give either --tournament NAME or --all, not both")
    if not league:
        tournament = tournament or _latest_tournament(store)
    games = [g for g in store.games(tournament=None if league else tournament) if g["termination"] != UNFINISHED]
    if not games:
        raise ArenaUsageError(f"no games stored in {db} yet: run 'arena tournament run' first")
    return games


@main.command("standings")
@league_options
@click.option("--anchor", help="Pin one bot's rating, e.g. random=0 (default: mean 1500).")
@click.option("--k", "k_factor", type=click.FloatRange(min=0, min_open=True), default=16.0, show_default=True,
              help="K-factor of the incremental Elo column.")
@user_errors
def standings_command(db: str, tournament: str | None, league: bool, fmt: str, anchor: str | None,
                      k_factor: float) -> None:
    """Print the standings: results, Elo with 95% interval, incremental Elo, forfeits."""
    games = selected_games(db, tournament, league)
    click.echo(render_standings(standings(games, anchor=_parse_anchor(anchor), k=k_factor), fmt))


@main.command("crosstable")
@league_options
@user_errors
def crosstable_command(db: str, tournament: str | None, league: bool, fmt: str) -> None:
    """Print every pair's head-to-head score (points/games), bots in standings order."""
    games = selected_games(db, tournament, league)
    order = [row.bot for row in standings(games)]
    click.echo(render_crosstable(crosstable(games, order), fmt))


@main.command("colours")
@league_options
@user_errors
def colours_command(db: str, tournament: str | None, league: bool, fmt: str) -> None:
    """Print how each bot does moving first and moving second."""
    games = selected_games(db, tournament, league)
    order = [row.bot for row in standings(games)]
    click.echo(render_colours(by_colour(games, order), fmt))


@main.command("games")
@db_option
@click.option("--tournament", "-t", help="Only this tournament.")
@click.option("--bot", help="Only games of this bot spec.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many games.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@user_errors
def games_command(db: str, tournament: str | None, bot: str | None, limit: int | None, as_json: bool) -> None:
    """List stored games."""
    store = open_store(db)
    games = store.games(tournament=tournament, bot=bot, limit=limit)
    if as_json:
        keep = ("id", "tournament", "key", "first", "second", "result", "termination", "reason",
                "plies", "opening", "moves", "duration", "seed", "finished_at")
        click.echo(json.dumps([{k: g[k] for k in keep} for g in games], indent=2))
        return
    rows = [
        [g["id"], g["tournament"], g["key"], g["first"], g["second"], g["result"],
         g["termination"] + (f" ({g['reason']})" if g["reason"] else ""), g["plies"]]
        for g in games
    ]
    click.echo(tabulate(rows, headers=["id", "tournament", "key", "first", "second", "result", "termination", "plies"]))


@main.command("show")
@click.argument("game_id", type=int)
@db_option
@user_errors
def show_command(game_id: int, db: str) -> None:
    """Print a stored game: players, result, every move with its time and info, final board."""
    store = open_store(db)
    game = store.game(game_id)
    rules = rules_of(game)
    moves = store.moves(game_id)
    click.echo(f"Game {game_id} ({game['tournament']} {game['key']}), {rules.describe()}")
    click.echo(f"X (first): {game['first']}\nO (second): {game['second']}")
    how = game["termination"] + (f": {game['reason']}" if game["reason"] else "")
    click.echo(f"Result {game['result']} ({how}), {game['plies']} plies; moves {game['moves']}")
    analysed = {p.ply: p for p in analyse_stored(store, game_id, None)}
    rows = []
    for m in moves:
        who = "opening" if m["ply"] < (game["opening_plies"] or 0) else ("X" if m["ply"] % 2 == 0 else "O")
        ms = "" if m["ms"] is None else f"{m['ms']:.2f}"
        row = [m["ply"] + 1, who, m["move"], ms, m["info"] or ""]
        if analysed:
            ply = analysed.get(m["ply"])
            row += [describe(rules, m["ply"], ply.before if ply else None), (ply.mark or "") if ply else ""]
        rows.append(row)
    headers = ["ply", "by", "move", "ms", "info"] + (["before the move", "mark"] if analysed else [])
    click.echo(tabulate(rows, headers=headers))
    board = Board.from_moves(parse_moves(game["moves"] or "", rules), rules)
    click.echo(board.render())
    if rules.counts_windows:
        first, second = board.window_counts()
        click.echo(f"Windows of {rules.connect}: X {first}, O {second}")


@main.command("solve")
@click.argument("moves", default="")
@rules_options
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Give up after this many seconds per position (default: no limit).")
@click.option("--json", "as_json", is_flag=True, help="Print {\"score\": S, \"moves\": {\"1\": S1, ...}}.")
@user_errors
def solve_command(moves: str, width: int | None, height: int | None, connect: int | None, no_gravity: bool,
                  scoring: str | None, budget: float | None, as_json: bool) -> None:
    """Exact value of the position after MOVES, and of each legal move.

    Scores are for the side to move: positive wins, 0 draws, negative loses; the
    size is 22 minus the winner's stone count on 7x6 (a quicker win scores higher).
    """
    from bots.solver import solve, solve_moves  # a bot plug-in, loaded only when asked for

    rules = make_rules(width, height, connect, no_gravity, scoring)
    board = Board.from_moves(parse_moves(moves, rules), rules)
    if board.is_over():
        raise ArenaUsageError(f"the game is already over after {moves!r}: nothing to solve")
    deadline = None if budget is None else time.monotonic() + budget
    score = solve(board, deadline=deadline)
    per_move = solve_moves(board, deadline=None if budget is None else time.monotonic() + budget)
    if as_json:
        click.echo(json.dumps({"score": score, "moves": {format_move(m, rules): v for m, v in per_move.items()}}))
        return
    click.echo(board.render())
    click.echo(f"{'X' if board.to_move == 0 else 'O'} to move: {describe(rules, board.ply, score)} (score {score})")
    rows = [[format_move(m, rules), "?" if v is None else v, describe(rules, board.ply, v)] for m, v in per_move.items()]
    click.echo(tabulate(rows, headers=["move", "score", "for the side to move"]))


@main.command("analyse")
@click.argument("game_id", type=int, required=False)
@click.option("--tournament", "-t", help="Analyse every game of a tournament and summarise per bot.")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Seconds the solver may spend on each position.")
@db_option
@user_errors
def analyse_command(game_id: int | None, tournament: str | None, budget: float, db: str) -> None:
    """Mark the moves that threw away a win or a draw, using the solver.

    Each position gets its exact value (win / draw / loss, and in how many moves)
    or stays unknown if it cannot be proven within the budget. Results are stored:
    asking again is instant, and `arena show` shows the marks.
    """
    store = open_store(db)
    if (game_id is None) == (tournament is None):
        raise ArenaUsageError("give a GAME_ID or --tournament NAME (one of them)")
    if game_id is not None:
        game = store.game(game_id)
        rules = rules_of(game)
        plies = analyse_stored(store, game_id, budget)
        rows = [[p.ply + 1, "X" if p.ply % 2 == 0 else "O", format_move(p.move, rules),
                 describe(rules, p.ply, p.before), p.mark or ""] for p in plies]
        click.echo(f"Game {game_id}: {game['first']} (X) vs {game['second']} (O), {game['result']}")
        click.echo(tabulate(rows, headers=["ply", "by", "move", "before the move", "mark"]))
        return
    games = store.games(tournament=tournament)
    bar = progress_bar.ProgressBar.for_stderr()
    analyses = {}
    started = time.perf_counter()
    for done, game in enumerate(games, start=1):
        analyses[game["id"]] = analyse_stored(store, game["id"], budget)
        if bar:
            bar.update(done, len(games), time.perf_counter() - started)
    if bar:
        bar.close()
    rows = [[r.bot, r.moves, r.won_positions, r.lost_wins, r.lost_draws, r.unknown]
            for r in slips_by_bot(games, analyses)]
    click.echo(f"Tournament {tournament!r}: {len(games)} games analysed, {budget:g} s per position")
    click.echo(tabulate(rows, headers=["bot", "moves", "from won positions", "wins let slip", "draws lost", "unknown"]))


@main.command("play")
@click.argument("bot", required=False)
@click.option("--first/--second", "human_first", default=True, help="Move first (default) or second against the bot.")
@rules_options
@click.option("--hint-bot", default="minimax:depth=6", show_default=True, help="The bot that answers 'h'.")
@click.option("--seed", type=int, default=0, help="Seed for the bot.")
@db_option
@user_errors
def play_command(bot: str | None, human_first: bool, width: int | None, height: int | None, connect: int | None,
                 no_gravity: bool, scoring: str | None, hint_bot: str, seed: int, db: str) -> None:
    """Play in the terminal against BOT, or two people at one keyboard without one.

    Type a move (a column; a cell such as c3 without gravity), u to undo, r to
    redo, h for a hint, s to save, q to quit. Finished and saved games are stored
    in the database (a "casual" tournament) for replay and analysis.
    """
    rules = make_rules(width, height, connect, no_gravity, scoring)
    bot_spec = spec_text(check_spec(bot)) if bot else None
    human = 0 if human_first else 1
    players = (HUMAN, HUMAN) if bot_spec is None else ((HUMAN, bot_spec) if human == 0 else (bot_spec, HUMAN))
    saved: dict[str, int] = {}

    def on_save(board: Board, finished: bool) -> str:
        store = Store(db)
        plies = [(r.ms, r.info) for r in session.records]
        saved["id"] = save_game(store, rules, players, board, plies, replace=saved.get("id"))
        store.close()
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
@user_errors
def replay_command(game_id: int, delay: float | None, db: str) -> None:
    """Step through a stored game: Enter/n next, p previous, a number to jump, q quit."""
    store = open_store(db)
    game = store.game(game_id)
    rules = rules_of(game)
    rows = store.moves(game_id)
    marks = {p.ply: p.mark for p in analyse_stored(store, game_id, None)}
    ending = f"{game['result']} ({game['termination']}{': ' + game['reason'] if game['reason'] else ''})"
    session = ReplaySession(
        rules, parse_moves(game["moves"] or "", rules), players=(game["first"], game["second"]),
        move_info=[json.loads(m["info"]) if m["info"] else None for m in rows],
        move_ms=[m["ms"] for m in rows], marks=[marks.get(m["ply"]) for m in rows] if marks else None,
        color=_colour(), ending=ending,
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
@user_errors
def export_command(game_id: int, fmt: str, db: str) -> None:
    """Print a stored game as one shareable line, or as JSON."""
    store = open_store(db)
    game = store.game(game_id)
    rules = rules_of(game)
    moves = parse_moves(game["moves"] or "", rules)
    if fmt == "moves":
        click.echo(export_moves(rules, moves))
        return
    rows = store.moves(game_id)
    finished = game["termination"] != UNFINISHED  # an unfinished game has no result yet
    click.echo(export_json(
        rules, moves, players=(game["first"], game["second"]), result=game["result"] if finished else None,
        termination=game["termination"] if finished else None, reason=game["reason"],
        move_info=[json.loads(m["info"]) if m["info"] else None for m in rows], move_ms=[m["ms"] for m in rows],
        indent=2,
    ))


@main.command("import")
@click.argument("file", type=click.File("r"))
@click.option("--rules", "rules_text", help="Rules of a bare move string, e.g. 9x7c5 or 15x15c5n (default 7x6c4).")
@db_option
@user_errors
def import_command(file: Any, rules_text: str | None, db: str) -> None:
    """Store a game from FILE ('-' for stdin): a move line from 'arena export' or its JSON."""
    rules = parse_rules_prefix(rules_text) if rules_text else None
    game = import_game(file.read(), rules=rules)
    board = game.board()
    players = game.players or (HUMAN, HUMAN)
    result = None
    if game.termination == "forfeit" and game.result in ("1-0", "0-1"):
        result = (0 if game.result == "1-0" else 1, "forfeit", game.reason)
    plies = list(zip(game.move_ms or [], game.move_info or []))
    store = Store(db)
    game_id = save_game(store, game.rules, (players[0], players[1]), board, plies, result=result)
    click.echo(f"Imported as game {game_id} in {db}: {game.rules.describe()}, {board.ply} plies")


def _colour() -> bool:
    """Colours only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part.strip() for part in _split_specs(text) if part.strip()]


def _split_specs(text: str) -> list[str]:
    """Split "a,minimax:depth=3,seed=1,b" into bot specs: a comma followed by key=value
    continues the options of the previous spec."""
    specs: list[str] = []
    for part in text.split(","):
        if specs and "=" in part and ":" in specs[-1] and ":" not in part:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def _latest_tournament(store: Store) -> str:
    tournaments = store.tournaments()
    if not tournaments:
        raise ArenaUsageError(f"no tournaments in {store.path} yet: run 'arena tournament run' first")
    return str(tournaments[-1]["name"])


def _parse_anchor(text: str | None) -> tuple[str, float] | None:
    if text is None:
        return None
    bot, eq, value = text.rpartition("=")
    try:
        rating = float(value)
    except ValueError:
        rating = math.nan
    if not (eq and bot.strip() and math.isfinite(rating)):
        raise ArenaUsageError(f"bad --anchor {text!r}: write BOT=RATING with a finite number, e.g. random=0")
    return bot.strip(), rating


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
