"""The ``arena`` command: a thin layer from flags to library calls.

The library's errors for a user's mistake (:class:`arena.errors.ArenaError`) become
one line on stderr and exit code 2, for every command (see :class:`ArenaGroup`);
any other exception is a bug and shows its traceback. Nothing here knows how
games are played or stored.

The commands live in arena/cli/, one module per subject, and are imported only
when they run (see :data:`COMMANDS`): ``arena --help`` and ``arena bots`` must
start without loading the database (sqlite-utils, which loads numpy), numba or
the sandbox. For the same reason this module imports the library only inside
the helpers that use it.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, overload

import click

from arena.errors import ArenaError, ArenaFault
from arena.text import printable

if TYPE_CHECKING:
    from arena.engine.game import Rules
    from arena.store import Store

#: Every command of ``arena``: the module that defines it (imported only when
#: the command runs) and its summary for ``arena --help``, the first paragraph of
#: its docstring (tests/test_startup.py checks both against the real commands).
COMMANDS: dict[str, tuple[str, str]] = {
    "bots": ("arena.cli.bots", "List every bot: installed plug-ins, then bots submitted to the database."),
    "match": ("arena.cli.match", "Play GAMES games between BOT_A and BOT_B, alternating who moves first."),
    "submit": ("arena.cli.submit", "Check a bot file in the sandbox and store it in the league database."),
    "check": ("arena.cli.submit",
              "Run the submission checks on a bot file or a program, in the sandbox, without storing it."),
    "games": ("arena.cli.games", "List stored games."),
    "show": ("arena.cli.games",
             "Print a stored game: players, result, every move with its time and info, final board."),
    "solve": ("arena.cli.solve", "Exact value of the position after MOVES, and of each legal move."),
    "openings": ("arena.cli.openings",
                 "Write balanced openings to a file: random openings the solver proves drawn (or within --margin)."),
    "analyse": ("arena.cli.solve", "Mark the moves that threw away a win or a draw, using the solver."),
    "play": ("arena.cli.play", "Play in the terminal against BOT, or two people at one keyboard without one."),
    "replay": ("arena.cli.play", "Step through a stored game: Enter/n next, p previous, a number to jump, q quit."),
    "export-bot": ("arena.cli.export_bot",
                   "Write SPEC (a bot name with options, or a Bot file) as a Kaggle ConnectX submission."),
    "export": ("arena.cli.games",
               "Print stored games: one as a shareable line or JSON, many as JSON Lines or PGN-like text."),
    "import": ("arena.cli.games",
               "Store games from FILE ('-' for stdin), as 'arena export' or 'arena games --json' writes them."),
    "standings": ("arena.cli.standings",
                  "Print the standings: results, Elo with 95% interval, incremental Elo, forfeits."),
    "crosstable": ("arena.cli.standings",
                   "Print every pair's head-to-head score (points/games), bots in standings order."),
    "colours": ("arena.cli.standings", "Print how each bot does moving first and moving second."),
    "ratings": ("arena.cli.standings",
                "Print the standings of games played elsewhere, from a CSV FILE ('-' for stdin)."),
    "tournament": ("arena.cli.tournament",
                   "Run tournaments (round robin, gauntlet, Swiss or knockout) and store every move."),
    "tournaments": ("arena.cli.tournaments",
                    "List the tournaments in the database, newest first: status, games stored, bots."),
    "league": ("arena.cli.league", "Leagues that play every new bot against the field by themselves."),
    "users": ("arena.cli.users",
              "Accounts of the open league: add, list, disable, new token or password, unlock, delete."),
    "serve": ("arena.cli.serve",
              "Serve the league site: standings, crosstables, bots, matchups, games with replays, a JSON API."),
    "backup": ("arena.cli.backup", "Copy the database to FILE while tournaments and leagues go on writing it."),
    "doctor": ("arena.cli.doctor",
               "Show which sandbox mechanisms hold on this machine, and whether untrusted bots can run."),
}


#: The exit code of a command stopped by Ctrl-C (128 + SIGINT), as the shell gives.
INTERRUPTED = 130


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C, or was caused by it (click's Abort, numba's SystemError)."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False


class ArenaUsageError(click.ClickException):
    """A user's mistake: one line, exit code 2."""

    exit_code = 2


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
    """The rules the flags give, each unset flag at its default."""
    from arena.engine.game import Rules  # imported when a command plays, not for --help

    defaults = Rules()
    return Rules(
        width=defaults.width if width is None else width,
        height=defaults.height if height is None else height,
        connect=defaults.connect if connect is None else connect,
        gravity=not no_gravity,
        scoring=scoring or defaults.scoring,
    )


class HelpGroup(click.Group):
    """A group that, given no command, prints its help on stdout and exits 0.

    Click's own ``no_args_is_help`` raises a usage error (stderr, exit code 2),
    which the boundary would show as "Error: <the whole help>".
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(0)
        return super().parse_args(ctx, args)


class ArenaGroup(HelpGroup):
    """The ``arena`` group: commands loaded lazily, inside one error boundary.

    A command's module is imported when that command runs (:data:`COMMANDS`), so
    ``arena --help`` loads none of them. A library's :class:`ArenaError` raised
    anywhere below becomes one line and exit code 2, and so do click's own usage
    errors (a bad flag value, an unknown option). Any other exception is a bug
    and keeps its traceback.
    """

    group_class = HelpGroup  # its subgroups (``arena tournament``) too

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command, loaded or not, by name."""
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command of that name, importing its module first if need be."""
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(COMMANDS[cmd_name][0])  # its decorators register it on `main`
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Click's command list, taking a command not loaded yet from :data:`COMMANDS`
        instead of importing it (click's own would import every command module)."""
        listed: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            # A stand-in carrying the summary shortens it exactly as the real command would.
            command = self.commands.get(name) or click.Command(name, help=COMMANDS[name][1])
            if not command.hidden:
                listed.append((name, command))
        if not listed:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in listed)  # as click computes it
        with formatter.section("Commands"):
            formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in listed])

    def invoke(self, ctx: click.Context) -> Any:
        """Run the chosen command (and its subcommands) inside the boundary."""
        try:
            return super().invoke(ctx)
        except ArenaError as exc:
            _remove_made(ctx)
            raise ArenaUsageError(str(exc)) from None
        except ArenaFault as exc:  # the machine failed, not the user: one line, and 1
            raise click.ClickException(f"the arena failed: {exc}") from None

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            message = printable(exc.format_message()).rstrip(".")
            # "Did you mean 'run'?" ends a sentence of its own: no "?;" before the pointer to --help.
            joint = " See" if message.endswith("?") else "; see"
            where = f"{joint} '{exc.ctx.command_path} --help'" if exc.ctx is not None else ""
            click.echo(f"Error: {message}{where}", err=True)
            sys.exit(2)
        except click.ClickException as exc:
            # One line, whatever it quotes: a mistake's message may carry a bot's words
            # (why its check failed), which must not act on the terminal.
            click.echo(f"Error: {printable(exc.format_message())}", err=True)
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt, SystemError) as exc:
            if not _interrupted(exc):
                if isinstance(exc, click.Abort):  # end of input at a prompt
                    click.echo("Aborted!", err=True)
                    sys.exit(1)
                raise
            # Ctrl-C, which click turns into Abort and compiled (numba) code into a
            # SystemError caused by it: one line and 130, as a tournament stops. Each
            # command stores a whole unit (a game, a game's analysis) in one
            # transaction: what was stored before stays, nothing is half-written.
            click.echo("Interrupted.", err=True)
            sys.exit(INTERRUPTED)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="connectk-arena")
@click.option("--weak-sandbox", is_flag=True,
              help="Run untrusted bots even where they cannot be isolated (no PID or network namespace, no "
                   "memory, pids or freezer control group): with per-process rlimits, Landlock and seccomp only.")
@click.option("--cgroup", "cgroups", multiple=True, metavar="PATH",
              help="A control group delegated to the arena's user, to make the bots' groups in: a folder "
                   "(/sys/fs/cgroup/memory/arena) or a group's path in every hierarchy (/arena); may be repeated. "
                   "Also ARENA_CGROUP (paths separated by ':'). See 'arena doctor'.")
def main(weak_sandbox: bool, cgroups: tuple[str, ...]) -> None:
    """A bot arena for Connect Four and its relatives."""
    if cgroups or os.environ.get("ARENA_CGROUP"):  # checked at once, however it is given
        from arena.sandbox.cgroups import DELEGATED_VARIABLE, check_delegated

        value = ":".join(cgroups) if cgroups else os.environ[DELEGATED_VARIABLE]
        problem = check_delegated(value)
        if problem is not None:
            raise ArenaUsageError(f"{'--cgroup' if cgroups else DELEGATED_VARIABLE} {problem}")
        # An environment variable, so that worker processes and their spawners see it too.
        os.environ[DELEGATED_VARIABLE] = value
    if weak_sandbox:
        # Only now: the sandbox is loaded by the commands that start bots, never by every command.
        from arena.sandbox.proxy import WEAK_SANDBOX_VARIABLE

        # An environment variable, so that worker processes and their spawners see it too.
        os.environ[WEAK_SANDBOX_VARIABLE] = "1"
    click.get_current_context().call_on_close(_close_spawner)


def _close_spawner() -> None:
    # The command is done: let this process's spawner (if a sandboxed game
    # started one) go now, with its bot processes, not whenever the process exits.
    # A command that started no sandboxed bot never loaded the module: importing
    # it here would only slow that command's exit.
    spawner = sys.modules.get("arena.sandbox.spawner")
    if spawner is not None:
        spawner.PROCESS_SPAWNER.close()


@overload
def db_option(func: Callable[..., Any]) -> Callable[..., Any]: ...
@overload
def db_option(*, from_config: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...
def db_option(func: Callable[..., Any] | None = None, *, from_config: bool = True) -> Any:
    """--db PATH, and --config FILE; the command gets ``db``, chosen by :func:`database_path`.

    ``@db_option(from_config=False)``: --db alone, passed on as given (None when not
    given), for a command whose tournament file decides the default (``tournament run``).
    """
    if func is None:
        return functools.partial(db_option, from_config=from_config)
    if not from_config:
        return click.option("--db", metavar="PATH", help=DB_HELP + " Default: the tournament file's db, relative "
                            "to the file; else ARENA_DB; else arena.db.")(func)

    @functools.wraps(func)
    def command(*args: Any, db: str | None, config: str | None, **kwargs: Any) -> Any:
        return func(*args, db=database_path(db, config), **kwargs)

    command = click.option(
        "--config", metavar="FILE",
        help="Use the database this tournament file stores its games in (its db, relative to the file).",
    )(command)
    return click.option("--db", metavar="PATH", help=DB_HELP + " Default: ARENA_DB, else arena.db.")(command)


DB_HELP = "The arena database (SQLite)."


def database_path(db: str | None, config: str | None) -> str:
    """The database a command uses: ``--db`` as given (relative to the current
    folder), else the one the tournament file ``--config`` names (its ``db``,
    relative to that file, as 'arena tournament run FILE' stores its games),
    else ``ARENA_DB``, else ``arena.db``."""
    if db is not None:
        return db
    if config is not None:
        from arena.tournament.config import config_db  # reads the file only when asked to

        return config_db(config)
    from arena.store.location import default_db

    return default_db()


def open_store(db: str, create: bool = False, write: bool = False) -> Store:
    """The league database for the running command, closed when the command ends.

    Reading commands pass neither flag: the file is opened read-only and never
    changed (not even migrated). ``write``: the command stores something in an
    existing database; ``create``: it may also start a new one. Click's
    ``with_resource`` is the command-long ``with``.
    """
    from arena.store import Store  # the database library is slow to import: only when used

    # The files a new database brings, and which of them are not there yet: a command
    # that refuses after making them takes away what it made (:func:`_remove_made`).
    beside = [db, *(db + end for end in _DATABASE_FILES)] if create and db != ":memory:" else []
    absent = [path for path in beside if not os.path.lexists(path)] if beside and not os.path.lexists(db) else []
    store = Store(db, create=create, read_only=not (create or write))
    ctx = click.get_current_context()
    if absent:
        ctx.meta.setdefault(_MADE, []).append((store, absent))
    return ctx.with_resource(store)


#: What SQLite and the arena keep beside a database file.
_DATABASE_FILES = ("-wal", "-shm", "-journal", ".lock")
_MADE = "arena.databases_made"  # in click's shared meta: (store, files it made) per database this command made


def _remove_made(ctx: click.Context) -> None:
    """Remove the databases this command made, when it refuses: a mistake leaves no empty
    database behind. Only those still without a row of anyone's: what was stored stays."""
    for store, files in ctx.meta.pop(_MADE, []):
        if not store.holds_nothing():
            continue
        store.close()
        for path in files:
            try:
                os.remove(path)
            except FileNotFoundError:
                pass


def league_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--db, --tournament/--all and --format, shared by the commands that print tables."""
    from arena.ratings.standings import OUTPUT_FORMATS  # only the table commands need it

    func = click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True,
                        help="table, github (markdown), csv or json.")(func)
    func = click.option("--all", "league", is_flag=True,
                        help="Every game in the database: one league across tournaments.")(func)
    func = click.option("--tournament", "-t", help="One tournament (default: the latest that is not casual).")(func)
    return db_option(func)
