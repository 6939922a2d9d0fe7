"""`arena tournaments`: the tournaments a database holds."""

from __future__ import annotations

import click

from arena.cli.main import db_option, main, open_store
from arena.ratings.standings import OUTPUT_FORMATS
from arena.ratings.tournaments import render_tournaments, tournament_summaries
from arena.text import printable


@main.command("tournaments")
@db_option
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True,
              help="table, github (markdown), csv or json (with each tournament's settings).")
def tournaments_command(db: str, fmt: str) -> None:
    """List the tournaments in the database, newest first: status, games stored, bots.

    Their names are what --tournament takes in every other command; the JSON gives
    each one's settings too (bots, games, openings, time, limits, seed).
    """
    summaries = tournament_summaries(open_store(db))
    if not summaries and fmt in ("table", "github"):
        click.echo(f"No tournaments in {printable(db)} yet: 'arena tournament run' plays one.")
        return
    click.echo(render_tournaments(summaries, fmt))
