"""A knockout's bracket: ``/bracket?tournament=NAME`` (a table per round, the
winners marked, how each match was decided) and ``/api/bracket?tournament=NAME``
(the bracket as ``arena standings --format json`` gives it in its ``bracket``
field).

The bracket is worked out from the tournament's stored settings and games by the
library (:func:`arena.ratings.knockout_record.stored_bracket`, as the terminal
does), once per state of the tournament's games: kept in the site's cache like the
tables. A tournament of another format has no bracket: a 404 that says so.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from arena.ratings.knockout import COIN, Bracket, bracket_data
from arena.ratings.knockout_record import KNOCKOUT_FORMAT, stored_bracket
from arena.store import Store
from arena.web.cache import TableCache
from arena.web.pages import StoreDep, apart, data_version, page

router = APIRouter()

KnockoutName = Annotated[str, Query(description="The knockout tournament's name.", max_length=200)]
#: Round names from the last round back, as the terminal draws them.
ROUND_NAMES = {1: "Final", 2: "Semi-finals", 3: "Quarter-finals"}


@router.get("/bracket", response_class=HTMLResponse, include_in_schema=False)
def bracket_page(request: Request, store: StoreDep, tournament: KnockoutName) -> HTMLResponse:
    bracket = knockout_bracket(request, store, tournament)
    count = len(bracket.rounds)
    rounds = [(ROUND_NAMES.get(count - number, f"Round {number + 1}"), matches)
              for number, matches in enumerate(bracket.rounds)]
    return page(request, "bracket.html", title=f"Bracket of {tournament}", name=tournament, bracket=bracket,
                rounds=rounds, coin=COIN)


@router.get("/api/bracket", summary="A knockout's bracket, as the 'bracket' field of 'arena standings --format json'")
def api_bracket(request: Request, store: StoreDep, tournament: KnockoutName) -> dict[str, Any]:
    return bracket_data(knockout_bracket(request, store, tournament))


def knockout_bracket(request: Request, store: Store, name: str) -> Bracket:
    """The bracket of knockout ``name``, from the site's cache while its games are
    unchanged; a 404 for an unknown tournament (naming those there are) or another format."""
    tournament = store.tournaments.check(name)
    if tournament.format != KNOCKOUT_FORMAT:
        raise HTTPException(404, f"tournament {name!r} is a {tournament.format} tournament, not a knockout: "
                                 "it has no bracket (its standings are on its page)")
    cache: TableCache = request.app.state.cache

    def compute(store: Store) -> Bracket:
        with store.snapshot():
            bracket = stored_bracket(store, store.tournaments.check(name))
        assert bracket is not None  # a knockout, as checked above
        return bracket

    return cache.get(("bracket", name), data_version(store, tournament.id), apart(request, compute))
