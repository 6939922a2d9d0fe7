"""A league's gate on the site: the page of each version's sequential test against
its author's previous version (as fishtest's test pages), and the same as JSON.

The page follows the test as the league plays it (its region is live: see
``static/live.js``): the log-likelihood ratio against its bounds, the pairs of
games by the new version's points, the Elo difference with its interval, and the
test's status with the reason it ended. Everything is computed from the test's
stored games, as the league decides it (:mod:`arena.league.gate`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import HTMLResponse

from arena.league.gate import stored_tally
from arena.store import League, Store
from arena.web.leagues import LeagueName
from arena.web.pages import StoreDep, page

router = APIRouter()

Version = Annotated[str, Path(max_length=200, description="The tested version, as 'guard@v2'.")]
PAIR_POINTS = ("0", "½", "1", "1½", "2")  # the new version's points in a pair, lowest first
MODEL_NAMES = {"logistic": "Elo", "normalized": "normalized Elo"}


def gate_data(store: Store, league: League, version: str) -> dict[str, Any]:
    """Where the test of ``version`` in ``league`` stands; 404 for a version the gate never tested."""
    entry = next((e for e in store.leagues.entries(league.id) if e.spec == version), None)
    test = store.gates.get(entry.id) if entry is not None else None
    if entry is None or test is None:
        tested = [store.leagues.entry(t.entry_id) for t in store.gates.of_league(league.id)]
        known = ", ".join(e.spec for e in tested if e is not None)
        raise HTTPException(404, f"no gate test of version {version!r} in league {league.name!r}: "
                                 + (f"its tested versions are {known}" if known else
                                    "no version has been tested at its gate yet"))
    previous = store.leagues.entry(test.previous_entry_id)
    tally = stored_tally(store, test, entry.spec)
    verdict = tally.verdict()
    lower, upper = tally.test.bounds
    elo = verdict.elo()
    tournament = next((t.name for t in store.tournaments.all() if t.id == test.tournament_id), "")
    return {
        "league": league.name, "version": entry.spec, "previous": previous.spec if previous else "",
        "status": test.status, "reason": test.reason, "started_at": test.started_at, "decided_at": test.decided_at,
        "sprt": {"elo0": tally.test.elo0, "elo1": tally.test.elo1, "alpha": tally.test.alpha,
                 "beta": tally.test.beta, "model": tally.test.model},
        "llr": round(verdict.llr, 3), "bounds": [round(lower, 3), round(upper, 3)],
        "pairs": verdict.pairs, "max_pairs": test.max_pairs, "pentanomial": list(verdict.outcomes.counts),
        "games": {"counted": verdict.games, "wins": verdict.wins, "draws": verdict.draws, "losses": verdict.losses,
                  "stored": store.games.tournament_count(test.tournament_id)},
        "elo": None if elo is None else {"elo": round(elo[0], 1), "low": round(elo[1], 1), "high": round(elo[2], 1)},
        "tournament": tournament,
    }


@router.get("/leagues/{name}/gate/{version}", response_class=HTMLResponse, include_in_schema=False)
def gate_page(request: Request, store: StoreDep, name: LeagueName, version: Version) -> HTMLResponse:
    league = store.leagues.check(name)
    data = gate_data(store, league, version)
    lower, upper = data["bounds"]
    # Where the LLR stands between its bounds, for the bar: 0 at the lower, 100 at the upper.
    position = min(100.0, max(0.0, 100 * (data["llr"] - lower) / (upper - lower)))
    return page(request, "gate.html", title=f"Gate test of {version}", t=data, position=position,
                pair_points=PAIR_POINTS, unit=MODEL_NAMES[data["sprt"]["model"]])


@router.get("/api/leagues/{name}/gate/{version}",
            summary="A version's gate test in a league: its LLR, bounds, pairs by points, Elo and status")
def api_gate(store: StoreDep, name: LeagueName, version: Version) -> dict[str, Any]:
    return gate_data(store, store.leagues.check(name), version)

