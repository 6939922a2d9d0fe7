"""The league site: the terminal's tables as web pages, and a JSON API.

FastAPI (on Starlette) serves server-rendered Jinja2 pages that work without
JavaScript, and the same numbers as JSON under /api with the field names of the
CLI's ``--format json``. Views call the library (selection, standings,
crosstable) and never write SQL. The pages live in one module per subject
(``tables``, ``swiss``, ``brackets``, ``bots``, ``games``, ``accounts``, ``leagues``, ``gates``, ``admin``,
``health``), each an APIRouter; this module puts them together.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp

from arena.errors import ArenaError
from arena.store import StoreBusy, StoreWriteFailed
from arena.web import accounts, admin, bots, brackets, cache, games, gates, health, leagues, swiss, tables
from arena.web.cache import TableCache
from arena.web.http import HttpRules, Sessions
from arena.web.pages import HERE, page

#: When a client whose write found the database busy is asked to try again.
RETRY_BUSY_SECONDS = 5
#: ... and one whose write failed otherwise (a full disk): the organiser must act first.
RETRY_STORE_SECONDS = 60


class Site(FastAPI):
    """FastAPI with the site's HTTP rules (:class:`arena.web.http.HttpRules`) around
    everything, the framework's own answer to an unexpected error included."""

    def build_middleware_stack(self) -> ASGIApp:
        return HttpRules(super().build_middleware_stack())


def create_app(db: str, secure_cookies: bool = False) -> FastAPI:
    """The site over the league database at ``db`` (which must exist); ``secure_cookies``:
    its session cookie goes over HTTPS only (it does anyway on a request that came over HTTPS)."""
    app = Site(title="arena league", docs_url=None, redoc_url=None,
               description="The league's tables as JSON, with the field names of the CLI's --format json.")
    app.state.db = db
    app.state.clock = time.time  # the time sign-in delays are counted in (tests give their own)
    app.state.cache = TableCache(patience=cache.PATIENCE)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.include_router(tables.router)
    app.include_router(swiss.router)
    app.include_router(brackets.router)
    app.include_router(bots.router)
    app.include_router(games.router)
    app.include_router(accounts.router)
    app.include_router(leagues.router)
    app.include_router(gates.router)
    app.include_router(admin.router)
    app.include_router(health.router)
    app.add_middleware(Sessions, secure=secure_cookies, **accounts.session_settings(db))
    app.state.failed_checks = leagues.new_failed_checks()

    def is_api(request: Request) -> bool:
        return request.url.path.startswith("/api/")

    @app.exception_handler(ArenaError)
    async def not_found(request: Request, exc: Exception) -> Response:
        """A tournament, bot or game the database does not hold, in the library's words
        for the site (no command to type, no path of the database on the server)."""
        message = site_message(exc, db)
        if is_api(request):
            return JSONResponse({"error": message}, status_code=404)
        return page(request, "error.html", 404, title="Not found", message=message)

    @app.exception_handler(StoreWriteFailed)
    async def not_stored(request: Request, exc: Exception) -> Response:
        """The database could not take a write (busy past the wait, its disk full): 503,
        nothing of the request stored; a busy one says when to try again."""
        busy = isinstance(exc, StoreBusy)
        headers = {"Retry-After": str(RETRY_BUSY_SECONDS if busy else RETRY_STORE_SECONDS)}
        # The whole story (the file, the disk, what to run) is the organiser's: in the
        # server's log. The visitor learns that nothing was stored, and when to try again.
        print(f"arena serve: {request.method} {request.url.path}: {exc}", file=sys.stderr, flush=True)
        message = ("the league is busy storing other results: nothing of this was stored; try again in a few seconds"
                   if busy else "the league cannot store anything right now (its server's disk or database needs "
                   "its organiser): nothing of this was stored; try again later")
        if is_api(request):
            return JSONResponse({"error": message}, status_code=503, headers=headers)
        response = page(request, "error.html", 503, title="Try again later", message=message)
        response.headers.update(headers)
        return response

    @app.exception_handler(RequestValidationError)
    async def bad_query(request: Request, exc: RequestValidationError) -> Response:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'][1:])}: {error['msg']}" for error in exc.errors())
        if is_api(request):
            return JSONResponse({"error": problems}, status_code=422)
        return page(request, "error.html", 422, title="Bad request", message=problems)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # Its headers too: a redirect's Location, a 401's WWW-Authenticate.
        if is_api(request):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)
        response = page(request, "error.html", exc.status_code, title=str(exc.detail), message=str(exc.detail))
        response.headers.update(exc.headers or {})
        return response

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def api_docs(request: Request) -> HTMLResponse:
        """The API described from the framework's own OpenAPI schema, served from here
        (the stock documentation pages load their scripts from the internet)."""
        return page(request, "docs.html", title="API", schema=app.openapi())

    return app


def site_message(error: Exception, db: str) -> str:
    """What the site says of a library error: its words for the site where it has them
    (:attr:`arena.errors.ArenaError.site`), else its message; either way without the
    database's path, which is the server's business."""
    message = getattr(error, "site", None) or str(error)
    for path in dict.fromkeys((db, str(Path(db).resolve()))):
        message = message.replace(f" in {path}", "").replace(path, "the league")
    return message
