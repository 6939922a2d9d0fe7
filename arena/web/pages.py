"""What every page of the site shares: the templates, the database of a request,
the cached tables of a selection, and the query values the pages take.

Each request opens the database read-only (:func:`open_store`): the site never
blocks a tournament that writes to it, and SQLite connections stay on the
thread that made them. Everything a bot wrote (its name, a crash reason, move
info) reaches a page through Jinja2's autoescaping, and control characters are
made visible (:func:`arena.text.printable`) as in the terminal.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

import jinja2
from fastapi import Depends, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from arena.ratings.crosstable import by_colour, crosstable
from arena.ratings.selection import select
from arena.ratings.sequence import FollowedElo
from arena.ratings.standings import Standings, rated
from arena.store import Store
from arena.store.removal import Removals
from arena.text import printable
from arena.web.cache import TableCache

HERE = Path(__file__).parent
T = TypeVar("T")

environment = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True, undefined=jinja2.StrictUndefined)
environment.filters["shown"] = lambda text: printable(str(text))
# Text of several lines (what a bot printed): each line made printable, the newlines kept.
environment.filters["shown_lines"] = lambda text: "\n".join(printable(line) for line in str(text).split("\n"))
environment.filters["signed"] = lambda value: f"{value:+.0f}"


def utc_text(stamp: str, seconds: bool = False) -> str:
    """A stored time as a page shows it without JavaScript: ``2026-11-26 21:26 UTC``
    (``static/time.js`` writes the same in the visitor's own zone). A stamp without a
    zone is UTC, as the arena writes them; one that is no time is shown as it is."""
    try:
        when = dt.datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC")


environment.filters["utc"] = utc_text
#: What a bound says, beside the tables and the plots that show it.
BOUND_NOTES = {">": "all games won: Elo is only bounded below", "<": "all games lost: Elo is only bounded above"}
environment.globals["bound_words"] = BOUND_NOTES
#: SVG units across of the plots drawn for a phone (CSS shows them below 700 px), in
#: place of the 640 of a wide screen: their text stays as large as there (>= 11 px).
NARROW = 360
templates = Jinja2Templates(env=environment)


def open_store(request: Request) -> Iterator[Store]:
    """The league database, read-only, for one request."""
    with Store(request.app.state.db, read_only=True) as store:
        yield store


StoreDep = Annotated[Store, Depends(open_store)]
Tournament = Annotated[str | None, Query(
    description="A tournament's name (default: the latest that is not casual).", max_length=200)]
League = Annotated[bool, Query(alias="all", description="Every game in the database: one league.")]


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A page from its template."""
    return templates.TemplateResponse(request, template, context, status_code=status)


@dataclass(frozen=True)
class Tables:
    """What the standings, crosstable and colours of one selection show."""

    heading: str
    selection: dict[str, Any]
    standings: Standings
    crosstable: dict[str, dict[str, list[float]]]
    colours: dict[str, dict[str, list[int]]]
    #: Parts of pages made from these tables once, kept with them while they are cached.
    rendered: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def tables(request: Request, store: Store, tournament: str | None, league: bool) -> Tables:
    """The tables of a selection, from the site's cache while its tournament's games are unchanged."""
    cache: TableCache = request.app.state.cache
    key = ("tables", tournament, league)
    followed = cache.kept(key, FollowedElo)

    def compute(store: Store) -> Tables:
        with store.snapshot():  # its queries count the same games while a league or tournament writes
            chosen = select(store, tournament, league)
            results = chosen.results()
            rows = rated(results, followed.update(chosen, Removals(store).count()).ratings())
            order = [row.bot for row in rows]
            return Tables(chosen.heading(), chosen.as_dict(), rows, crosstable(results.pairs, order),
                          by_colour(results.pairs, order))

    scope = store.results.scope(tournament, league)
    return cache.get(key, data_version(store, scope), apart(request, compute))


def apart(request: Request, compute: Callable[[Store], T]) -> Callable[[], T]:
    """``compute`` as the cache runs it, on a thread of its own: with a connection of
    its own to the database (a request's closes when its page is sent)."""
    def run() -> T:
        with Store(request.app.state.db, read_only=True) as store:
            return compute(store)
    return run


def data_version(store: Store, tournament_id: int | None) -> tuple[Any, ...]:
    """What dates a cached table of one tournament (of the whole league with None):
    :meth:`arena.store.results.Results.version`, and the count of removed accounts (a
    removal renames bots, though no game or entrant changes)."""
    return (*store.results.version(tournament_id), Removals(store).count())


def query_of(tournament: str | None, league: bool) -> dict[str, str]:
    """The query string that selects the same games on another page."""
    if league:
        return {"all": "true"}
    return {} if tournament is None else {"tournament": tournament}
