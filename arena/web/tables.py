"""The league's tables: home, standings (with the plot of the intervals),
crosstable and results by colour, as pages and as JSON."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from jinja2.utils import url_quote
from markupsafe import Markup, escape

from arena.ratings.crosstable import MAX_OPENING_ROWS, colours_data, crosstable_data, openings_data
from arena.ratings.selection import OpeningScore, select
from arena.ratings.standings import Standing, Standings, standings_data
from arena.ratings.tournaments import TournamentSummary, summarize
from arena.store import Store, StoredTournament
from arena.text import printable
from arena.web.cache import TableCache
from arena.web.pages import (
    BOUND_NOTES,
    NARROW,
    League,
    StoreDep,
    Tables,
    Tournament,
    apart,
    data_version,
    page,
    query_of,
    tables,
)

router = APIRouter()


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def home(request: Request, store: StoreDep) -> HTMLResponse:
    tournaments = store.tournaments.all()
    counts = game_counts(request, store)
    rows = [tournament_row(t, counts.get(t.id, 0)) for t in reversed(tournaments)]
    return page(request, "home.html", title="League", tournaments=rows, total=sum(counts.values()))


@router.get("/standings", response_class=HTMLResponse, include_in_schema=False)
def standings_page(request: Request, store: StoreDep, tournament: Tournament = None,
                   league: League = False) -> HTMLResponse:
    shown = tables(request, store, tournament, league)
    return page(request, "standings.html", title="Standings", tables=shown, query=query_of(tournament, league),
                plots=[interval_plot(shown.standings), interval_plot(shown.standings, NARROW)])


@router.get("/crosstable", response_class=HTMLResponse, include_in_schema=False)
def crosstable_page(request: Request, store: StoreDep, tournament: Tournament = None,
                    league: League = False) -> HTMLResponse:
    shown = tables(request, store, tournament, league)
    return page(request, "crosstable.html", title="Crosstable", tables=shown, rows=crosstable_rows(shown),
                query=query_of(tournament, league))


def crosstable_rows(shown: Tables) -> Markup:
    """The crosstable's rows, made once per table and kept with it. Through the
    template engine, a cell at a time, 50 bots' 2,500 cells took 65-200 ms on every
    request; here each bot's name is escaped and quoted once, not once per cell."""
    if "crosstable" not in shown.rendered:
        shown.rendered["crosstable"] = _crosstable_rows(shown.crosstable)
    rows: Markup = shown.rendered["crosstable"]
    return rows


def _crosstable_rows(table: dict[str, dict[str, list[float]]]) -> Markup:
    bots = list(table)
    names = {bot: str(escape(printable(str(bot)))) for bot in bots}
    links = {bot: str(escape(url_quote(bot))) for bot in bots}
    out: list[str] = []
    for number, bot in enumerate(bots, 1):
        row = table[bot]
        name, link = names[bot], links[bot]
        out.append(f'<tr>\n    <td class="num">{number}</td>\n'
                   f'    <th scope="row"><a href="/bots/{link}">{name}</a></th>\n')
        for opp in bots:
            if opp == bot:
                out.append('<td class="self"></td>')
            elif opp in row and row[opp][1]:
                points, games = row[opp]
                share = points / games
                out.append(f'<td class="num cell" style="--share: {share:.3f}"><a href="/matchup?a={link}&amp;'
                           f'b={links[opp]}" title="{name} against {names[opp]}: {100 * share:.0f}%">'
                           f'{points:g}/{games:g}</a></td>')
            else:
                out.append("<td></td>")
        points = sum(cell[0] for cell in row.values())
        games = sum(cell[1] for cell in row.values())
        out.append(f'\n    <td class="num">{points:g}/{games:g}</td>\n  </tr>\n')
    return Markup("".join(out))  # every bot's text in it escaped above


@router.get("/colours", response_class=HTMLResponse, include_in_schema=False)
def colours_page(request: Request, store: StoreDep, tournament: Tournament = None,
                 league: League = False) -> HTMLResponse:
    shown = tables(request, store, tournament, league)
    scores = opening_scores(request, store, tournament, league)
    return page(request, "colours.html", title="By colour", tables=shown, openings=scores[:MAX_OPENING_ROWS],
                more_openings=max(0, len(scores) - MAX_OPENING_ROWS), query=query_of(tournament, league))


def opening_scores(request: Request, store: StoreDep, tournament: str | None, league: bool) -> list[OpeningScore]:
    """The first player's score by opening, as ``arena colours`` shows it under its
    table: cached apart from the tables, which do not need it, while the
    tournament's games are unchanged."""
    cache: TableCache = request.app.state.cache

    def compute(store: Store) -> list[OpeningScore]:
        with store.snapshot():
            return select(store, tournament, league).by_opening()

    scope = store.results.scope(tournament, league)
    return cache.get(("openings", tournament, league), data_version(store, scope), apart(request, compute))


@router.get("/api/tournaments", summary="Every tournament, newest first, with its games and status")
def api_tournaments(request: Request, store: StoreDep) -> list[dict[str, Any]]:
    counts = game_counts(request, store)
    return [tournament_row(t, counts.get(t.id, 0)) for t in reversed(store.tournaments.all())]


@router.get("/tournaments/{name:path}", response_class=HTMLResponse, include_in_schema=False)
def tournament_page(request: Request, store: StoreDep, name: str) -> HTMLResponse:
    summary = tournament_summary(request, store, name)
    # Each setting as the tournament file would write it: text as it is, the rest as JSON.
    settings = [(key, value if isinstance(value, str) else json.dumps(value))
                for key, value in sorted(summary.settings.items())]
    return page(request, "tournament.html", title=printable(f"Tournament {name}"), t=summary, settings=settings)


@router.get("/api/tournaments/{name:path}", summary="One tournament: its settings, bots, status and games stored")
def api_tournament(request: Request, store: StoreDep, name: str) -> dict[str, Any]:
    return tournament_summary(request, store, name).as_dict()


def tournament_summary(request: Request, store: Store, name: str) -> TournamentSummary:
    """The tournament of that name (an unknown one is a 404 naming those there are)."""
    tournament = store.tournaments.check(name)
    return summarize(tournament, game_counts(request, store).get(tournament.id, 0))


def game_counts(request: Request, store: Store) -> dict[int, int]:
    """Tournament id -> its games, from the site's cache while the database is unchanged:
    counting a million games takes 40 ms, every request of the home page would pay it."""
    cache: TableCache = request.app.state.cache
    return cache.get(("games per tournament",), data_version(store, None),
                     apart(request, lambda store: store.games.tournament_counts()))


@router.get("/api/standings", summary="The standings, as 'arena standings --format json'")
def api_standings(request: Request, store: StoreDep, tournament: Tournament = None,
                  league: League = False) -> dict[str, Any]:
    shown = tables(request, store, tournament, league)
    return standings_data(shown.standings, shown.selection)


@router.get("/api/crosstable", summary="Every pair's head-to-head score, as 'arena crosstable --format json'")
def api_crosstable(request: Request, store: StoreDep, tournament: Tournament = None,
                   league: League = False) -> dict[str, Any]:
    shown = tables(request, store, tournament, league)
    return crosstable_data(shown.crosstable, shown.selection)


@router.get("/api/colours", summary="Results moving first and second, as 'arena colours --format json'")
def api_colours(request: Request, store: StoreDep, tournament: Tournament = None,
                league: League = False) -> dict[str, Any]:
    shown = tables(request, store, tournament, league)
    scores = opening_scores(request, store, tournament, league)
    return {**colours_data(shown.colours, shown.selection), "openings": openings_data(scores)}


def tournament_row(t: StoredTournament, games: int) -> dict[str, Any]:
    """A tournament as the home page and /api/tournaments show it: its summary, less
    the bots and settings its own page shows."""
    summary = summarize(t, games)
    return {"name": summary.name, "format": summary.format, "rules": summary.rules, "status": summary.status,
            "games": summary.games, "created_at": summary.created_at, "finished_at": summary.finished_at}




def known_elo(row: Standing) -> tuple[float, float]:
    """The Elo range the games tell of a bot: its 95% interval; for a perfect (or zero)
    score, whose fitted Elo is unbounded, only the bound the table shows."""
    if row.bound == ">":
        return row.elo - row.elo_minus, row.elo - row.elo_minus
    if row.bound == "<":
        return row.elo + row.elo_plus, row.elo + row.elo_plus
    return row.elo - row.elo_minus, row.elo + row.elo_plus


def interval_plot(rows: Standings, width: int = 640, row_height: int = 22) -> dict[str, Any]:
    """Where each bot's Elo and 95% interval fall on a horizontal axis, for the SVG
    under the standings: overlapping intervals are neighbours the games cannot yet
    tell apart. A bound (a perfect or zero score) is drawn where the table puts it,
    its bar an arrow to the edge on the side where its Elo is unknown. ``width``:
    the SVG's units across (:data:`NARROW` for a phone's plot, with shorter names)."""
    narrow = width <= NARROW
    if not rows:
        return {"width": width, "height": 0, "points": [], "ticks": [], "narrow": narrow}
    low = min(known_elo(r)[0] for r in rows)
    high = max(known_elo(r)[1] for r in rows)
    if high - low < 1:
        low, high = low - 50, high + 50
    left, right = (104 if narrow else 150), width - 20
    scale = (right - left) / (high - low)

    def x(elo: float) -> float:
        return round(left + (elo - low) * scale, 1)

    most_ticks = 4 if narrow else 8
    step = next(s for s in (10, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10**9)
                if (high - low) / s <= most_ticks)
    ticks = []
    tick = -(-low // step) * step
    while tick <= high:
        ticks.append({"x": x(tick), "label": f"{tick:.0f}"})
        tick += step
    points = []
    for i, r in enumerate(rows):
        start, end = known_elo(r)
        at = start if r.bound else r.elo
        points.append({
            "bot": r.bot, "y": 20 + i * row_height, "x": x(at), "elo": at, "bound": r.bound,
            "mark": f"{r.bound} {at:.0f}" if r.bound else "",
            "low": left if r.bound == "<" else x(start), "high": right if r.bound == ">" else x(end),
            "label": f"{r.bound} {at:.0f}: {BOUND_NOTES[r.bound]}" if r.bound else f"{at:.0f} ± {r.elo_minus:.0f}"})
    return {"width": width, "height": 30 + len(rows) * row_height, "points": points, "ticks": ticks,
            "axis_y": 20 + len(rows) * row_height - 8, "left": left, "right": right, "narrow": narrow,
            "name_chars": 13 if narrow else 20}
