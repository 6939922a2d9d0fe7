"""`arena match`: two bots, N games or a sequential test, the Elo difference;
stored as a tournament of format "match", so it resumes and every table shows it."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter

import click
from tabulate import tabulate

from arena.cli.cluster import cluster_options
from arena.cli.main import ArenaUsageError, db_option, main, make_rules, open_store, rules_options
from arena.cli.tournament import report_stop, report_voided
from arena.entry.submissions import existing_store, resolve_bot
from arena.players.plugins import BotChecker, spec_text
from arena.text import plural, printable


@main.command("match")
@click.argument("bot_a")
@click.argument("bot_b")
@click.option("--games", "-n", type=click.IntRange(min=1), default=None,
              help="Games to play [default: 10; with --sprt, until the test decides, at most 100000].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed: the same seed gives the same games.")
@click.option("--private-seeds", is_flag=True,
              help="Key the seeds by a secret made for this match and kept in its database, so no bot can "
                   "work out its opponent's seed (the games replay only from this database).")
@click.option("--openings", "opening_plies", type=click.IntRange(min=0), default=2, show_default=True,
              help="Random plies before the bots take over (each opening is played with both colours).")
@click.option("--sprt", "sprt_text",
              help="Stop when a sequential test decides: elo0=0,elo1=20[,alpha=0.05,beta=0.05,model=normalized].")
@click.option("--move-seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Time limit per move; a bot that overruns it (and its bank) forfeits the game.")
@click.option("--bank-seconds", type=click.FloatRange(min=0), default=0.0,
              help="Extra time a bot may draw on over the game (with --move-seconds).")
@click.option("--workers", type=click.IntRange(min=0), default=None,
              help="Worker processes: 1 plays in this process, 0 one per core [default: 1].")
@cluster_options
@db_option
@click.option("--name", help="The match's name in the database (default: match-A-B-HASH from the bots and "
              "settings, so the same command resumes the same match).")
@rules_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--debug", is_flag=True, help="Print what the bots write (stdout, stderr) to stderr as they write it.")
def match_command(
    bot_a: str,
    bot_b: str,
    games: int | None,
    seed: int,
    private_seeds: bool,
    opening_plies: int,
    sprt_text: str | None,
    move_seconds: float | None,
    bank_seconds: float,
    workers: int | None,
    cluster: str | None,
    db: str,
    name: str | None,
    width: int | None,
    height: int | None,
    connect: int | None,
    no_gravity: bool,
    scoring: str | None,
    as_json: bool,
    debug: bool = False,
) -> None:
    """Play GAMES games between BOT_A and BOT_B, alternating who moves first.

    A bot is a name from `arena bots` with optional options (minimax:depth=6)
    or a path to a bot file (my_bot.py, my_bot.py:MyBot). The result gives BOT_A's
    Elo advantage over BOT_B with its 95% interval, and each bot's forfeits (games
    lost by crashing, overrunning its clock or playing an illegal move) with why.

    With --sprt the match stops as soon as a sequential probability ratio test
    decides between elo0 and elo1 (scored per pair of games on one opening;
    with several workers it is checked after each batch of one pair per worker).

    The games are stored in the database as a tournament of format "match"
    ('arena standings', 'arena games', the site show them). Running the same
    command again resumes it: only the games not yet stored are played.
    """
    from arena.ratings.sprt import Sprt, elo_with_interval, normalized_elo
    from arena.records import TimeControl
    from arena.terminal import progress as progress_bar
    from arena.terminal.bot_logs import LiveLog
    from arena.tournament.config import ConfigError, configured_cluster
    from arena.tournament.entrants import resolve_bots_in_database
    from arena.tournament.executors import SerialExecutor
    from arena.tournament.match import SPRT_MAX_GAMES, SprtStop, match_config, stored_result
    from arena.tournament.runner import run_tournament

    rules = make_rules(width, height, connect, no_gravity, scoring)
    checker = BotChecker()  # each untrusted bot started once: here, not again when the match resolves its bots
    with existing_store(db) as found_in:  # only read: a refused match leaves no database
        found = resolve_bot(bot_a, found_in), resolve_bot(bot_b, found_in)
    a, b = (spec_text(checker.check(bot.spec, submitted=bot.submitted, rules=rules)) for bot in found)
    if bank_seconds and move_seconds is None:
        raise ArenaUsageError(f"--bank-seconds {bank_seconds:g} needs --move-seconds: a bank adds to a move limit")
    test = Sprt.parse(sprt_text) if sprt_text else None
    clock = TimeControl(move_seconds, bank_seconds)
    if games is None:
        games = 10 if test is None else SPRT_MAX_GAMES
    where = configured_cluster(cluster, lambda message: ConfigError(f"--cluster: {message}"))
    workers = 1 if workers is None else workers
    if debug and (workers != 1 or where is not None):
        raise ArenaUsageError(f"--debug shows what the bots write as this process plays them: use it with "
                              f"--workers 1 and no cluster (got {'a cluster' if where else f'--workers {workers}'})")
    cfg = resolve_bots_in_database(match_config(
        a, b, games, seed, rules, clock, opening_plies, private_seeds, test, name or "", db, workers, where,
    ), checker)
    store = open_store(db, create=True)
    # One worker plays here, in this process, which is where what the bots write
    # can be shown as it comes (--debug).
    executor = SerialExecutor(LiveLog(sys.stderr) if debug else None) if workers == 1 and where is None else None
    early_stop = SprtStop((a, b), test, games) if test is not None else None
    bar = None if debug else progress_bar.ProgressBar.for_stderr()  # on a terminal only
    try:
        outcome = run_tournament(cfg, store, executor, progress=bar.update if bar else None, early_stop=early_stop)
    finally:
        if bar:
            bar.close()
    report_stop(outcome, cfg.db)
    report_voided(outcome)
    result = stored_result(store, cfg)
    decision = test.decision(result.outcomes()) if test is not None else None
    label_a, label_b = result.labels  # a bot playing itself: two instances, 'random' and 'random#2'
    tally = result.tally()[label_a]
    elo, low, high = elo_with_interval(tally.wins, tally.draws, tally.losses)
    if as_json:
        data = {"match": cfg.name, "db": cfg.db, **result.as_json()}
        data["elo_difference"] = {"elo": _finite(elo), "low": _finite(low), "high": _finite(high)}
        if test is not None:
            outcomes = result.outcomes()
            data["elo_difference"]["sequential"] = True  # stopped by the test: biased away from zero
            data["sprt"] = {
                "decision": decision, "model": test.model, "elo0": test.elo0, "elo1": test.elo1,
                "alpha": test.alpha, "beta": test.beta,
                "llr": round(test.llr(outcomes), 3), "bounds": [round(x, 3) for x in test.bounds],
                outcomes.label(): list(outcomes.counts),
            }
            if test.model == "normalized":
                data["sprt"]["normalized_elo"] = _finite(normalized_elo(outcomes))
        click.echo(json.dumps(data, indent=2))
        return
    tallies = result.tally()
    rows = [
        [printable(bot), t.games, t.wins, t.draws, t.losses, t.forfeits, f"{100 * t.score / t.games:.1f}"]
        for bot, t in tallies.items()
    ]
    clock_text = f", {clock.describe()}" if move_seconds is not None else ""
    seeds = "private seeds" if private_seeds else f"seed {seed}"
    click.echo(f"{plural(len(result.records), 'game')}, {rules.describe()}{clock_text}, {seeds}")
    click.echo(tabulate(rows, headers=["bot", "games", "wins", "draws", "losses", "forfeits", "score %"]))
    for bot, t in tallies.items():
        for line in _forfeit_lines(bot, t.forfeits, t.reasons):
            click.echo(line)
    # A sequential test stops when the games lean far enough one way, so the Elo at
    # the stop overstates that lean: said, not hidden.
    sequential = " (sequential test: biased)" if test is not None else ""
    click.echo(f"Elo difference ({printable(label_a)} - {printable(label_b)}): {elo:+.1f}, "
               f"95% interval {low:+.1f} .. {high:+.1f}{sequential}")
    if test is not None and decision is not None:
        outcomes = result.outcomes()
        llr = test.llr(outcomes)
        lower, upper = test.bounds
        if outcomes.paired:
            pairs = ", ".join(f"{points:g}: {n}" for points, n in zip((0, 0.5, 1, 1.5, 2), outcomes.counts))
            click.echo(f"Game pairs by {printable(label_a)}'s points: {pairs}")
        if test.model == "normalized":
            click.echo(f"Normalized Elo: {normalized_elo(outcomes):+.1f}{sequential}")
        unit = "normalized Elo" if test.model == "normalized" else "Elo"
        verdict = {
            "H1": f"H1 accepted: the games favour a difference of {test.elo1:g} {unit} over {test.elo0:g}",
            "H0": f"H0 accepted: the games favour a difference of {test.elo0:g} {unit} over {test.elo1:g}",
            "continue": f"undecided after {plural(len(result.records), 'game')}: raise --games to go on "
                        "(a new match, which plays these games again first)",
        }[decision]
        click.echo(
            f"SPRT ({outcomes.label()}, {test.model} Elo) {test.describe()}: "
            f"LLR {llr:.2f} (bounds {lower:.2f}, {upper:.2f}); {verdict}"
        )
    click.echo(_stored_line(cfg.name, cfg.db, outcome.already_stored))


def _stored_line(name: str, db: str, already: int) -> str:
    """Where the match is kept (its tables and games are shown by that name), and
    whether this run resumed it."""
    before = f", {already} of them before this run" if already else ""
    return f"Games stored in {printable(db)} as match {printable(repr(name))}{before}."


def _forfeit_lines(bot: str, forfeits: int, reasons: Counter[str], shown: int = 5) -> list[str]:
    """``BOT forfeited N games:`` and its reasons, most frequent first, each counted
    (escaped for the terminal: a reason may quote the bot)."""
    if not forfeits:
        return []
    lines = [f"{printable(bot)} forfeited {forfeits} game{'s' if forfeits != 1 else ''}:"]
    common = reasons.most_common()
    lines += [f"  {count} x {printable(reason)}" for reason, count in common[:shown]]
    if len(common) > shown:
        rest = sum(count for _, count in common[shown:])
        lines.append(f"  {rest} x {len(common) - shown} other reasons (--json lists them all)")
    return lines


def _finite(value: float) -> float | None:
    """JSON has no infinity: an unbounded Elo difference is null."""
    return round(value, 1) if math.isfinite(value) else None


