"""Leagues: ``arena league create|run|standings|add-member|settings|list``."""

from __future__ import annotations

import sys
import time

import click

from arena.cli.cluster import cluster_options
from arena.cli.main import db_option, main, open_store
from arena.text import plural, printable


@main.group("league")
def league_group() -> None:
    """Leagues that play every new bot against the field by themselves."""


@league_group.command("create")
@click.argument("name")
@click.argument("league_file", required=False, type=click.Path(dir_okay=False))
@db_option
def create_command(name: str, league_file: str | None, db: str) -> None:
    """Create league NAME with the settings of LEAGUE_FILE (a tournament file's keys and a [league] table)."""
    from arena.league.scheduler import create_league

    store = open_store(db, create=True)
    league = create_league(store, name, league_file)
    entrants = store.leagues.entries(league.id)
    click.echo(f"league {league.name!r} created in {db} with {plural(len(entrants), 'installed bot')}"
               + (f" ({', '.join(e.spec for e in entrants)})" if entrants else "")
               + f"; play it with: arena league run {name!r} --db {db}")


@league_group.command("list")
@db_option
def list_command(db: str) -> None:
    """Every league, with its active entrants."""
    store = open_store(db)
    leagues = store.leagues.all()
    if not leagues:
        click.echo(f"no leagues in {db} yet: arena league create NAME [CONFIG]")
    for league in leagues:
        active = store.leagues.entries(league.id, status="active")
        flags = ", ".join(f for f, on in (("closed", league.closed), ("public code", league.public_code)) if on)
        click.echo(f"{printable(league.name)}: {plural(len(active), 'active entrant')}"
                   + (f" ({flags})" if flags else "")
                   + (": " + ", ".join(printable(e.spec) for e in active) if active else ""))


@league_group.command("add-member")
@click.argument("name")
@click.argument("user")
@db_option
def add_member_command(name: str, user: str, db: str) -> None:
    """Let USER submit to the closed league NAME."""
    from arena.league.accounts import check_user
    from arena.league.policy import add_member

    store = open_store(db, write=True)
    add_member(store, store.leagues.check(name), check_user(store, user))
    click.echo(f"{user} may submit to league {name!r}")


@league_group.command("settings")
@click.argument("name")
@click.option("--closed/--open", default=None, help="Only its members may submit (--open: everyone).")
@click.option("--public-code/--private-code", default=None,
              help="Everyone may read every entrant's code (--private-code: its author and the admins).")
@click.option("--submissions-per-hour", type=int, help="Submissions allowed per author per hour.")
@click.option("--upload-kb", type=int, help="The largest bot file accepted, in KB.")
@click.option("--logs-days", type=int, help="Days what the bots wrote in a game is kept (the game stays).")
@db_option
def settings_command(name: str, closed: bool | None, public_code: bool | None, submissions_per_hour: int | None,
                     upload_kb: int | None, logs_days: int | None, db: str) -> None:
    """Show league NAME's settings, or change those given: the league follows them at once."""
    from arena.league.policy import change_settings, settings_of

    changes = {key: value for key, value in (("closed", closed), ("public_code", public_code),
                                             ("submissions_per_hour", submissions_per_hour),
                                             ("upload_kb", upload_kb), ("logs_days", logs_days))
               if value is not None}
    store = open_store(db, write=bool(changes))
    league = store.leagues.check(name)
    if changes:
        league = change_settings(store, league, changes)
    settings = settings_of(league.config)
    click.echo(f"league {printable(league.name)}: " + ", ".join(
        f"{key} = {str(getattr(settings, key)).lower()}" for key in ("closed", "public_code", "submissions_per_hour",
                                                                      "upload_kb", "logs_days")))


@league_group.command("run")
@click.argument("name")
@click.option("--workers", type=click.IntRange(min=0), default=0, help="Worker processes (default: one per core).")
@click.option("--until-complete", is_flag=True, help="Stop once every pairing is played, instead of waiting.")
@cluster_options
@click.option("--stop-on-failure", is_flag=True,
              help="Stop when workers, the cluster, the arena or the disk fail, instead of waiting and playing on.")
@db_option
def run_command(name: str, workers: int, until_complete: bool, cluster: str | None, stop_on_failure: bool,
                db: str) -> None:
    """Keep league NAME played: every active entrant against every other, newest first.

    It waits for new entrants when all is played; Ctrl-C stops it, and running it
    again resumes with nothing lost or played twice. It outlives a lost worker or
    scheduler, a failing sandbox and a full disk: each is one line on stderr, then
    it waits and plays on (--stop-on-failure stops instead).
    """
    from arena.league.scheduler import run_league

    store = open_store(db, write=True)
    league = store.leagues.check(name)
    tty = sys.stderr.isatty()

    def report(text: str) -> None:
        progress = "games played" in text
        if not tty and not progress:  # a log (a service's journal, a file): each event with its time
            text = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}"
        try:
            click.echo(("\r" + text + "\033[K") if tty and progress else text, err=True, nl=not (tty and progress))
        except OSError:
            pass

    outcome = run_league(store, league, workers=workers, report=report, until_complete=until_complete,
                         cluster=cluster, heal=not stop_on_failure)
    if tty:
        click.echo("", err=True)
    if outcome.interrupted:
        why = f"Stopped: {printable(outcome.problem)}" if outcome.problem else "Interrupted"
        click.echo(f"{why}: {plural(outcome.played, 'game')} stored by this run; run the same command again "
                   "to go on.", err=True)
        sys.exit(outcome.exit_code)
    click.echo(f"league {league.name!r}: {plural(outcome.played, 'game')} played; every pairing is complete")


@league_group.command("standings")
@click.argument("name")
@click.option("--all-versions", is_flag=True, help="Also the retired versions (default: active entrants only).")
@click.option("--format", "fmt", type=click.Choice(["table", "github", "csv", "json"]), default="table",
              show_default=True, help="table, github (markdown), csv or json.")
@db_option
def standings_command(name: str, all_versions: bool, fmt: str, db: str) -> None:
    """The standings of league NAME: its active entrants, rated on all the league's games."""
    from arena.ratings.selection import SelectionError, select
    from arena.ratings.standings import active_rows, league_standings, render_standings

    store = open_store(db)
    click.get_current_context().with_resource(store.snapshot())  # the same games in every query
    league = store.leagues.check(name)
    try:
        chosen = select(store, league.name)
    except SelectionError:
        click.echo(f"league {name!r} has no games yet: arena league run {name!r}")
        return
    rows = league_standings(chosen.results(), chosen.in_order())
    if not all_versions:
        rows = active_rows(rows, {e.spec for e in store.leagues.entries(league.id, status="active")})
    heading = chosen.heading().replace(f"Tournament {league.name!r}", f"League {league.name!r}", 1)
    if fmt == "csv":
        click.echo(heading, err=True)
    elif fmt != "json":
        click.echo(heading + ("" if all_versions else "; active entrants") + "\n")
    selection = {**chosen.as_dict(), "league": league.name, "all_versions": all_versions}
    click.echo(render_standings(rows, fmt, selection))
