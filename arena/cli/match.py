"""`arena match`: two bots, N games or a sequential test, the Elo difference."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter

import click
from tabulate import tabulate

from arena.cli.main import ArenaUsageError, main, make_rules, rules_options
from arena.errors import ArenaFault
from arena.players.plugins import check_spec, spec_text
from arena.text import plural, printable


@main.command("match")
@click.argument("bot_a")
@click.argument("bot_b")
@click.option("--games", "-n", type=click.IntRange(min=1), default=None,
              help="Games to play [default: 10; with --sprt, until the test decides, at most 100000].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed: the same seed gives the same games.")
@click.option("--private-seeds", is_flag=True,
              help="Key the seeds by a secret made for this match, so no bot can work out its opponent's "
                   "seed (the games cannot be played again).")
@click.option("--openings", "opening_plies", type=click.IntRange(min=0), default=2, show_default=True,
              help="Random plies before the bots take over (each opening is played with both colours).")
@click.option("--sprt", "sprt_text",
              help="Stop when a sequential test decides: elo0=0,elo1=20[,alpha=0.05,beta=0.05,model=normalized].")
@click.option("--move-seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Time limit per move; a bot that overruns it (and its bank) forfeits the game.")
@click.option("--bank-seconds", type=click.FloatRange(min=0), default=0.0,
              help="Extra time a bot may draw on over the game (with --move-seconds).")
@rules_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
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
    Elo advantage over BOT_B with its 95% interval, and each bot's forfeits (games
    lost by crashing, overrunning its clock or playing an illegal move) with why.

    With --sprt the match stops as soon as a sequential probability ratio test
    decides between elo0 and elo1 (scored per pair of games on one opening).
    """
    from arena.engine.openings import new_seed_secret
    from arena.ratings.sprt import Sprt, elo_with_interval, normalized_elo
    from arena.records import TimeControl
    from arena.terminal import progress as progress_bar
    from arena.tournament.match import SPRT_MAX_GAMES, match_specs, play_match, play_sprt

    rules = make_rules(width, height, connect, no_gravity, scoring)
    a = spec_text(check_spec(bot_a, rules=rules))
    b = spec_text(check_spec(bot_b, rules=rules))
    if bank_seconds and move_seconds is None:
        raise ArenaUsageError(f"--bank-seconds {bank_seconds:g} needs --move-seconds: a bank adds to a move limit")
    test = Sprt.parse(sprt_text) if sprt_text else None
    clock = TimeControl(move_seconds, bank_seconds)
    if games is None:
        games = 10 if test is None else SPRT_MAX_GAMES
    # A match stores nothing, so its secret is kept nowhere: its games are not played again.
    secret = new_seed_secret() if private_seeds else None
    specs = match_specs(a, b, games, seed, rules, time_control=clock, opening_plies=opening_plies, secret=secret)
    bar = progress_bar.ProgressBar.for_stderr()  # on a terminal only
    progress = bar.update if bar else None
    try:
        if test is None:
            result, decision = play_match(specs, (a, b), progress=progress), None
        else:
            result, decision = play_sprt(specs, (a, b), test, progress=progress)
    except ArenaFault as fault:  # the machine's, not the user's nor a bot's: one line, exit 1
        click.echo(f"Stopped: {printable(str(fault))}", err=True)
        sys.exit(1)
    finally:
        if bar:
            bar.close()
    label_a, label_b = result.labels  # a bot playing itself: two instances, 'random' and 'random#2'
    tally = result.tally()[label_a]
    elo, low, high = elo_with_interval(tally.wins, tally.draws, tally.losses)
    if as_json:
        data = result.as_json()
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
            "continue": f"undecided after {plural(len(result.records), 'game')}: raise --games to go on",
        }[decision]
        click.echo(
            f"SPRT ({outcomes.label()}, {test.model} Elo) {test.describe()}: "
            f"LLR {llr:.2f} (bounds {lower:.2f}, {upper:.2f}); {verdict}"
        )


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


