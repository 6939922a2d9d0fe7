"""The ``arena`` command: a thin layer from flags to library calls.

Library errors (all ``ValueError`` subclasses) become one line on stderr and exit
code 2; nothing here knows how games are played or stored.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any

import click
from tabulate import tabulate

from arena.game import Rules, RulesError
from arena.match import match_specs, play_match
from arena.plugins import BotSpecError, check_spec, discover, spec_text


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
    func = click.option("--no-gravity", is_flag=True, help="Stones stay where placed (any empty cell).")(func)
    func = click.option("--connect", type=int, default=None, help="How many in a row win (default 4).")(func)
    func = click.option("--height", type=int, default=None, help="Rows (default 6).")(func)
    func = click.option("--width", type=int, default=None, help="Columns (default 7).")(func)
    return func


def make_rules(width: int | None, height: int | None, connect: int | None, no_gravity: bool) -> Rules:
    defaults = Rules()
    return Rules(
        width=defaults.width if width is None else width,
        height=defaults.height if height is None else height,
        connect=defaults.connect if connect is None else connect,
        gravity=not no_gravity,
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="connectk-arena")
def main() -> None:
    """A bot arena for Connect Four and its relatives."""


@main.command("bots")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def bots_command(as_json: bool) -> None:
    """List every installed bot: source, description and options."""
    entries = sorted(discover().values(), key=lambda e: e.name)
    if as_json:
        click.echo(json.dumps([e.as_dict() for e in entries], indent=2))
        return
    rows = []
    for entry in entries:
        options = ", ".join(f"{k}={o.default!r}" for k, o in entry.options.items())
        about = f"BROKEN: {entry.error}" if entry.error else entry.description
        rows.append([entry.name, entry.source, about, options or "-"])
    click.echo(tabulate(rows, headers=["bot", "source", "description", "options"]))


@main.command("match")
@click.argument("bot_a")
@click.argument("bot_b")
@click.option("--games", "-n", type=click.IntRange(min=1), default=10, show_default=True, help="Games to play.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed: the same seed gives the same games.")
@rules_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@user_errors
def match_command(
    bot_a: str,
    bot_b: str,
    games: int,
    seed: int,
    width: int | None,
    height: int | None,
    connect: int | None,
    no_gravity: bool,
    as_json: bool,
) -> None:
    """Play GAMES games between BOT_A and BOT_B, alternating who moves first.

    A bot is a name from `arena bots` with optional options (minimax:depth=6)
    or a path to a bot file (my_bot.py, my_bot.py:MyBot).
    """
    rules = make_rules(width, height, connect, no_gravity)
    a = spec_text(check_spec(bot_a))
    b = spec_text(check_spec(bot_b))
    if a == b:
        raise ArenaUsageError(f"both bots are {a!r}: a match needs two different bot specs")
    result = play_match(match_specs(a, b, games, seed, rules), (a, b))
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=2))
        return
    rows = [
        [bot, t.games, t.wins, t.draws, t.losses, f"{100 * t.score / t.games:.1f}"]
        for bot, t in result.tally().items()
    ]
    click.echo(f"{games} games, {rules.describe()}, seed {seed}")
    click.echo(tabulate(rows, headers=["bot", "games", "wins", "draws", "losses", "score %"]))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
