"""``GET /healthz``: whether the site can serve, for a monitor. No sign-in, nothing private.

200 with ``{"status": "ok", "database": "readable", "leagues": [...]}`` when the league
database opens and answers a query; 503 with ``{"status": "unavailable", "database":
"unreadable"}`` when it does not (the file gone, unreadable, not an arena database).
Each league says whether its runner is ``running`` (a process holds the league's lock:
see :meth:`arena.store.tournaments.Tournaments.running`; a runner killed outright is
``interrupted`` at once), ``interrupted`` or ``finished``, and when its latest game was
stored: a running league whose latest game is old is stuck, or has nothing to play.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from arena.store import Store

router = APIRouter()


@router.get("/healthz", summary="For monitors: 200 when the database can be read (with each league's runner "
                                "status and latest game), 503 when it cannot")
def healthz(request: Request) -> JSONResponse:
    headers = {"Cache-Control": "no-store"}
    try:
        with Store(request.app.state.db, read_only=True) as store:
            status = {tournament.id: tournament.status for tournament in store.tournaments.all()}
            leagues = [{"name": league.name, "runner": status.get(league.tournament_id, "unknown"),
                        "latest_game_at": store.games.latest_finished_at(league.tournament_id)}
                       for league in store.leagues.all()]
    except Exception:  # whatever fails the read fails the check: StoreError, SQLite's own, OSError
        # Why, and where the file is, is for the server's own log and terminal, not for any visitor.
        return JSONResponse({"status": "unavailable", "database": "unreadable"}, status_code=503, headers=headers)
    return JSONResponse({"status": "ok", "database": "readable", "leagues": leagues}, headers=headers)

