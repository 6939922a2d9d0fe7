"""The ``arena`` command: a thin layer from flags to library calls.

Library errors (all ``ValueError`` subclasses) become one line on stderr and exit
code 2; nothing here knows how games are played or stored.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from typing import Any

import click

from arena.terminal.casual import UNFINISHED
from arena.engine.game import Rules
from arena.league.standings import OUTPUT_FORMATS
from arena.league.store import Store


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
    click.get_current_context().call_on_close(_close_spawner)


def _close_spawner() -> None:
    # The command is done: let this process's spawner (if a sandboxed game
    # started one) go now, with its bot processes, not whenever the process exits.
    from arena.sandbox.spawner import PROCESS_SPAWNER

    PROCESS_SPAWNER.close()


def db_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--db", envvar="ARENA_DB", default="arena.db", show_default=True,
        help="League database (or set ARENA_DB).",
    )(func)


def open_store(db: str) -> Store:
    """An existing database; reading commands never create one by accident."""
    return Store(db, create=False)


def league_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--db, --tournament/--all and --format, shared by the commands that print tables."""
    func = click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True,
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


def _latest_tournament(store: Store) -> str:
    tournaments = store.tournaments()
    if not tournaments:
        raise ArenaUsageError(f"no tournaments in {store.path} yet: run 'arena tournament run' first")
    return str(tournaments[-1]["name"])


# The commands live in arena/cli/, one module per subject; importing them
# registers them on `main` (they import the helpers above, hence at the end).
for _subject in ("bots", "games", "league", "tournament"):
    importlib.import_module(f"arena.cli.{_subject}")
