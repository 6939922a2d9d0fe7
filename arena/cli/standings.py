"""The league tables: standings, crosstable, results by colour; ratings of games from a file."""

from __future__ import annotations

import json
import math
from typing import BinaryIO

import click

from arena.cli.main import ArenaUsageError, league_options, main, open_store
from arena.ratings.crosstable import (
    by_colour,
    colours_data,
    crosstable,
    openings_data,
    render_colours,
    render_crosstable,
    render_openings,
)
from arena.ratings.knockout import bracket_data, bracket_rows
from arena.ratings.knockout_record import stored_bracket
from arena.ratings.results_file import file_standings
from arena.ratings.selection import Selection, select
from arena.ratings.standings import (
    OUTPUT_FORMATS,
    Standings,
    csv_text,
    league_standings,
    render_standings,
    render_swiss,
    standings_data,
    standings_order,
    swiss_csv_rows,
    swiss_data,
)
from arena.ratings.swiss import stored_swiss, swiss_table
from arena.terminal.bracket import knockout_heading, render_bracket
from arena.text import plural


@main.command("standings")
@league_options
@click.option("--anchor", help="Pin one bot's rating, e.g. random=0 (default: mean 1500).")
@click.option("--k", "k_factor", type=click.FloatRange(min=0, min_open=True), default=16.0, show_default=True,
              help="K-factor of the incremental Elo column.")
def standings_command(db: str, tournament: str | None, league: bool, fmt: str, anchor: str | None,
                      k_factor: float) -> None:
    """Print the standings: results, Elo with 95% interval, incremental Elo, forfeits.

    The first line says what they are of (in JSON the "selection" field; with
    --format csv it goes to stderr, so the CSV stays pure).
    """
    chosen = selected_games(db, tournament, league)
    rows = league_standings(chosen.results(), chosen.in_order(), anchor=_parse_anchor(anchor), k=k_factor)
    warn_unconnected(chosen, rows)
    show(chosen, standings_text(chosen, rows, fmt), fmt)


def standings_text(chosen: Selection, rows: Standings, fmt: str = "table") -> str:
    """The standings of ``chosen``; a Swiss tournament's with its Swiss table first
    (points and tie-breaks, the Elo fit beside), which is its CSV, and its JSON's
    ``swiss`` field; a knockout's with its bracket first, which is its CSV (a match
    a row) and its JSON's ``bracket`` field."""
    bracket = stored_bracket(chosen.store, chosen.tournament) if chosen.tournament is not None else None
    if bracket is not None:
        if fmt == "json":
            return json.dumps({**standings_data(rows, chosen.as_dict()), "bracket": bracket_data(bracket)}, indent=2)
        if fmt == "csv":
            return csv_text(*bracket_rows(bracket))
        drawn = render_bracket(bracket)
        if fmt == "github":  # Markdown: the drawing as it is, in a block of its own
            drawn = f"```text\n{drawn}\n```"
        return f"{knockout_heading(bracket)}\n{drawn}\n\n{render_standings(rows, fmt)}"
    swiss = stored_swiss(chosen.store, chosen.tournament) if chosen.tournament is not None else None
    if swiss is None:
        return render_standings(rows, fmt, chosen.as_dict())
    record, rounds = swiss
    table = swiss_table(record)
    elo = {row.bot: row for row in rows}
    if fmt == "json":
        data = standings_data(rows, chosen.as_dict())
        return json.dumps({**data, "swiss": swiss_data(table, rounds, record, elo)}, indent=2)
    if fmt == "csv":
        return csv_text(*swiss_csv_rows(table, elo))
    return f"{render_swiss(table, rounds, record, elo, fmt)}\n\n{render_standings(rows, fmt)}"


@main.command("crosstable")
@league_options
def crosstable_command(db: str, tournament: str | None, league: bool, fmt: str) -> None:
    """Print every pair's head-to-head score (points/games), bots in standings order."""
    chosen = selected_games(db, tournament, league)
    results = chosen.results()
    order = standings_order(results)
    show(chosen, render_crosstable(crosstable(results.pairs, order), fmt, chosen.as_dict()), fmt)


@main.command("colours")
@league_options
def colours_command(db: str, tournament: str | None, league: bool, fmt: str) -> None:
    """Print how each bot does moving first and moving second.

    Under it (for one tournament; in JSON the "openings" field) the first player's
    score from each opening, with the opening's solver value where known.
    """
    chosen = selected_games(db, tournament, league)
    results = chosen.results()
    order = standings_order(results)
    table = by_colour(results.pairs, order)
    openings = chosen.by_opening()
    if fmt == "json":
        document = colours_data(table, chosen.as_dict())
        click.echo(json.dumps({**document, "openings": openings_data(openings)}, indent=2))
        return
    text = render_colours(table, fmt, chosen.as_dict())
    if openings and fmt != "csv":  # CSV stays one table
        text += "\n\nThe first player's score by opening (value: the solver's, for the first player)\n\n"
        text += render_openings(openings, fmt)
    show(chosen, text, fmt)


def warn_unconnected(chosen: Selection, rows: Standings) -> None:
    """One line on stderr when the games fall into groups of bots that never met
    (with --all, tournaments that have no bot in common): their ratings do not compare."""
    if rows.model is not None and len(rows.model.groups) > 1:
        where = "the whole league (--all)" if chosen.tournament is None else f"tournament {chosen.tournament.name!r}"
        click.echo(f"warning: {where} has {len(rows.model.groups)} groups of bots that never met: "
                   "ratings compare only within a group (see the group column)", err=True)


def selected_games(db: str, tournament: str | None, league: bool) -> Selection:
    """The games a table is built from: --tournament NAME (by default the latest that
    is not casual) or --all."""
    store = open_store(db)
    if league and tournament:
        raise ArenaUsageError("give either --tournament NAME or --all, not both")
    # One read transaction for the whole command: a table counted in several queries
    # while a tournament writes counts the same games in each.
    click.get_current_context().with_resource(store.snapshot())
    return select(store, tournament, league)


def show(chosen: Selection, text: str, fmt: str) -> None:
    """A table under the line that says what it shows (JSON carries it as a field;
    CSV stays pure, the line goes to stderr)."""
    if fmt == "csv":
        click.echo(chosen.heading(), err=True)
    elif fmt != "json":
        click.echo(chosen.heading() + "\n")
    click.echo(text)


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


@main.command("ratings")
@click.argument("file", type=click.File("rb"))
@click.option("--anchor", help="Pin one bot's rating, e.g. random=0 (default: mean 1500).")
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True,
              help="table, github (markdown), csv or json.")
@click.option("--k", "k_factor", type=click.FloatRange(min=0, min_open=True), default=16.0, show_default=True,
              help="K-factor of the incremental Elo column (games in the file's order).")
def ratings_command(file: BinaryIO, anchor: str | None, fmt: str, k_factor: float) -> None:
    """Print the standings of games played elsewhere, from a CSV FILE ('-' for stdin).

    The header row names the columns first, second, result (1-0, 0-1, 1/2-1/2)
    and optionally opening; other columns are ignored. The table is the one
    'arena standings' prints, without forfeits.
    """
    # click names standard input "<stdin>" (and a test's stand-in for it has no name).
    name = getattr(file, "name", "<stdin>")
    name = "stdin" if name == "<stdin>" else str(name)
    rated = file_standings(file, name, anchor=_parse_anchor(anchor), k=k_factor)
    heading = f"Ratings from {name}: {plural(rated.games, 'game')}, {plural(len(rated.rows), 'bot')}"
    if fmt == "csv":
        click.echo(heading, err=True)
    elif fmt != "json":
        click.echo(heading + "\n")
    click.echo(render_standings(rated.rows, fmt, {"file": name, "games": rated.games}))
