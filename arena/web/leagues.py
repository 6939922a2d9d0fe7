"""The open league on the site: the leagues and their standings, one's own bots, uploads,
retiring a bot, reading code, and the API that ``arena submit --server`` posts to.

An upload is checked exactly as ``arena submit`` checks a file: in the sandbox, whose
processes this server's spawner forks (the bot's code never runs in the server), by
:func:`arena.league.policy.submit_to_league`, which also decides who may enter
what and changes nothing when it refuses. The body of an upload is read up to a
bound before anything parses it, so a huge upload costs the server no more than
that bound.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.datastructures import UploadFile
from starlette.types import Message

from arena.entry.uploads import ACCEPTED, BUILD_SECONDS
from arena.league.accounts import Throttle, hash_token
from arena.league.policy import (
    LeagueSettings,
    Refusal,
    Refused,
    Submitted,
    may_read_code,
    retirable,
    retire,
    settings_of,
    submit_to_league,
)
from arena.ratings.selection import SelectionError
from arena.ratings.standings import Standing, Standings, active_rows, standings_data
from arena.store import EntrantRecord, Entry, GateTest, League, Store, StoreError, Submission, User
from arena.text import printable
from arena.web.accounts import (
    Confirmed,
    Csrf,
    Next,
    check_csrf,
    confirm_page,
    csrf_token,
    local_path,
    may_act,
    private,
    require_user,
    signed_in,
    writing,
)
from arena.web.pages import StoreDep, page, tables

router = APIRouter()

#: The sandbox's spawner in this process answers one caller at a time: uploads are
#: checked one after another (a check takes well under a second for most bots).
CHECKS = threading.Lock()
FIELDS_KB = 64  # room in an upload's body, beside the file, for its other fields and the multipart framing
EntryId = Annotated[int, Path(ge=1, le=2**62, description="The entrant's id ('entry' in POST /api/bots's answer).")]
AllVersions = Annotated[bool, Query(description="Also the retired versions (default: active entrants only).")]
LeagueName = Annotated[str, Path(max_length=200, description="The league's name.")]


@dataclass(frozen=True)
class Upload:
    """What an upload form or API call sent."""

    source: bytes
    filename: str
    name: str
    about: str
    league: str
    class_name: str | None
    csrf: str


# --- the leagues, as everyone sees them ------------------------------------------------------


@router.get("/leagues", response_class=HTMLResponse, include_in_schema=False)
def leagues_page(request: Request, store: StoreDep) -> HTMLResponse:
    return page(request, "leagues.html", title="Leagues", leagues=league_rows(store))


@router.get("/api/leagues", summary="Every league: its settings, active entrants and games")
def api_leagues(store: StoreDep) -> list[dict[str, Any]]:
    return league_rows(store)


@router.get("/leagues/{name}", response_class=HTMLResponse, include_in_schema=False)
def league_page(request: Request, store: StoreDep, name: LeagueName, all_versions: AllVersions = False) -> Response:
    league = store.leagues.check(name)
    # A disabled account, or one still to replace an issued password, sees what everyone sees and may do nothing.
    viewer = may_act(signed_in(request, store))
    standings = league_standings(request, store, league, all_versions)
    authors = {user.id: user.name for user in store.accounts.users()}
    entries = store.leagues.entries(league.id, status=None if all_versions else "active")
    shown = [entrant_row(store, league, viewer, entry, authors) for entry in reversed(entries)]
    response = page(request, "league.html", title=f"League {league.name}", league=league,
                    settings=settings_of(league.config), standings=standings, entries=shown,
                    all_versions=all_versions, authors={e.spec: authors.get(e.user_id or 0, "") for e in entries},
                    csrf=csrf_token(request) if viewer else "", running=tournament_status(store, league),
                    gates=gate_tests(store, league))
    return private(response) if viewer else response


@router.get("/api/leagues/{name}",
            summary="A league's standings, as 'arena league standings NAME --format json' (active entrants by default)")
def api_league(request: Request, store: StoreDep, name: LeagueName,
               all_versions: AllVersions = False) -> dict[str, Any]:
    league = store.leagues.check(name)
    standings = league_standings(request, store, league, all_versions)
    if standings is None:
        return {"selection": {"league": league.name, "games": 0, "all_versions": all_versions}, "standings": []}
    rows, selection = standings
    return standings_data(rows, {**selection, "league": league.name, "all_versions": all_versions})


def league_standings(request: Request, store: Store, league: League,
                     all_versions: bool) -> tuple[Standings, dict[str, Any]] | None:
    """The league's standings (the site's cached table of its tournament row), of its
    active entrants unless ``all_versions``; None before its first game."""
    try:
        shown = tables(request, store, league.name, False)
    except SelectionError:
        return None
    rows = shown.standings
    if not all_versions:
        rows = active_rows(rows, {entry.spec for entry in store.leagues.entries(league.id, status="active")})
    return rows, shown.selection


def gate_tests(store: Store, league: League) -> list[dict[str, Any]]:
    """A league's tests, newest first, for its page."""
    rows = []
    for test in reversed(store.gates.of_league(league.id)):
        entry, previous = store.leagues.entry(test.entry_id), store.leagues.entry(test.previous_entry_id)
        if entry is not None:
            rows.append({"version": entry.spec, "previous": previous.spec if previous else "", "status": test.status,
                         "started_at": test.started_at, "decided_at": test.decided_at})
    return rows


def league_rows(store: Store) -> list[dict[str, Any]]:
    rows = []
    for league in store.leagues.all():
        settings = settings_of(league.config)
        rows.append({
            "name": league.name, "active": len(store.leagues.entries(league.id, status="active")),
            "games": store.games.tournament_count(league.tournament_id), "status": tournament_status(store, league),
            "closed": league.closed, "public_code": league.public_code, "upload_kb": settings.upload_kb,
            "submissions_per_hour": settings.submissions_per_hour, "created_at": league.created_at})
    return rows


def tournament_status(store: Store, league: League) -> str:
    """"running" while ``arena league run`` plays it, else "interrupted" or "finished"."""
    return next((t.status for t in store.tournaments.all() if t.id == league.tournament_id), "unknown")


def entrant_row(store: Store, league: League, viewer: User | None, entry: Entry,
                authors: dict[int, str]) -> dict[str, Any]:
    submission = store.submissions.by_id(entry.submission_id) if entry.submission_id is not None else None
    return {"entry": entry, "author": authors.get(entry.user_id or 0, ""), "submission": submission,
            "code": submission is not None and may_read_code(league, viewer, submission),
            "retire": viewer is not None and entry.status in ("active", "testing")
            and (viewer.admin or entry.user_id == viewer.id)}


# --- one's own bots --------------------------------------------------------------------------


@dataclass(frozen=True)
class OwnEntry:
    """An entrant of the visitor's, with what its page shows."""

    league: League
    entry: Entry
    submission: Submission | None
    record: EntrantRecord
    standing: Standing | None  # its row of the league's standings (None before its first game)
    ranked: int  # the bots its rank is among: the active ones, or for a retired version every version that played
    gate: GateTest | None = None  # its test at the league's gate, if it had one
    gate_previous: str = ""  # the version it was tested against


@router.get("/my", response_class=HTMLResponse, include_in_schema=False)
def my_page(request: Request, store: StoreDep) -> Response:
    user = require_user(request, store)
    own = []
    for league in store.leagues.all():
        entries = store.leagues.entries(league.id, user_id=user.id)
        if not entries:
            continue
        # Ranked as the league's page ranks them: an active bot among the active ones,
        # a retired version among every version that played.
        every, active = (league_standings(request, store, league, all_versions) for all_versions in (True, False))
        for entry in reversed(entries):
            submission = store.submissions.by_id(entry.submission_id) if entry.submission_id is not None else None
            record = store.leagues.entrant_record(league.tournament_id, entry.spec)
            rows = (active if entry.status == "active" else every) or (Standings(), {})
            row = next((r for r in rows[0] if r.bot == entry.spec), None)
            gate = store.gates.get(entry.id)
            previous = store.leagues.entry(gate.previous_entry_id) if gate is not None else None
            own.append(OwnEntry(league, entry, submission, record, row, len(rows[0]), gate,
                                previous.spec if previous else ""))
    return private(page(request, "my.html", title="My bots", user=user, own=own, csrf=csrf_token(request)))


@router.post("/entries/{entry_id}/retire", include_in_schema=False)
def retire_form(request: Request, entry_id: EntryId, csrf: Csrf = "", next_page: Next = "/my",
                confirmed: Confirmed = "") -> Response:
    """Retire an entrant, once confirmed: unconfirmed, a page that asks (what it
    would refuse is refused at once, before anything is asked)."""
    with writing(request) as store:
        user = require_user(request, store, form=True)
        check_csrf(request, csrf)
        if confirmed != "yes":
            entry, league = retire_entry(store, user, entry_id, dry_run=True)
            return confirm_page(request, f"Retire {printable(entry.spec)}?", retire_question(entry, league),
                                f"/entries/{entry.id}/retire", f"Retire {printable(entry.spec)}", next_page,
                                {"next": local_path(next_page)})
        retire_entry(store, user, entry_id)
    return RedirectResponse(local_path(next_page), 303)


def retire_question(entry: Entry, league: League) -> str:
    """What a page asks before retiring ``entry``."""
    return (f"Retire {printable(entry.spec)} from league {printable(league.name)}? It plays no more games; its games "
            "stay in the tables. This cannot be undone: to play again, upload the bot again.")


@router.get("/submissions/{submission_id}/code", response_class=HTMLResponse, include_in_schema=False)
def code_page(request: Request, store: StoreDep,
              submission_id: Annotated[int, Path(ge=1, le=2**62)]) -> Response:
    submission = store.submissions.by_id(submission_id)
    if submission is None:
        raise HTTPException(404, f"no submitted bot with id {submission_id}")
    viewer = signed_in(request, store)
    if viewer is not None and (viewer.disabled or viewer.must_change_password):
        require_user(request, store)  # which says why not
    leagues = store.leagues.of_submission(submission_id)
    # A version in no league (submitted at the server's terminal) is its author's and the admins' to read.
    entered_in: list[League | None] = [*leagues] or [None]
    if not any(may_read_code(league, viewer, submission) for league in entered_in):
        if viewer is None:
            raise HTTPException(401, "sign in to read the code of your own bots")
        raise HTTPException(403, f"the code of {submission.spec} is its author's: not shown to others")
    author = store.accounts.user_by_id(submission.user_id) if submission.user_id is not None else None
    # A build's log is its author's alone, even where the code is everyone's to read.
    own = viewer is not None and submission.user_id == viewer.id
    build_log = submission.build_log or "" if own and submission.is_program else None
    command = " ".join(json.loads(submission.program)) if submission.program else ""
    return private(page(request, "code.html", title=f"Code of {submission.spec}", submission=submission,
                        author=author.name if author else "", leagues=leagues, lines=code_lines(submission.source),
                        build_log=build_log, command=command))


def code_lines(source: str) -> list[str]:
    """The lines of a bot's code as Python reads them, each control character other
    than a tab made visible: a terminal escape or a bidi override (code that reads
    otherwise than it runs) shows as ``\\x1b`` or ``\\u202e``."""
    return ["\t".join(printable(part) for part in line.removesuffix("\r").split("\t"))
            for line in source.split("\n")]


# --- uploads ---------------------------------------------------------------------------------


#: The session's note of the last upload entered: shown once, by the page the upload
#: redirects to (post/redirect/get: reloading that page sends nothing again).
UPLOADED = "uploaded"


@router.get("/upload", response_class=HTMLResponse, include_in_schema=False)
def upload_page(request: Request, store: StoreDep) -> Response:
    user = require_user(request, store)
    note = request.session.pop(UPLOADED, None)
    entry = store.leagues.entry(note["entry"]) if isinstance(note, dict) else None
    if entry is None or entry.user_id != user.id:  # no note, or one of an entry since removed
        return private(upload_form(request, store, user))
    league = store.leagues.by_id(entry.league_id)
    submission = store.submissions.by_id(entry.submission_id) if entry.submission_id is not None else None
    return private(upload_form(request, store, user, submitted={"entry": entry, "submission": submission,
                                                                "retired": note.get("retired", []),
                                                                "testing_against": note.get("testing_against")},
                               report=note.get("report"), league=league.name if league else ""))


def upload_form(request: Request, store: Store, user: User, status: int = 200, **context: Any) -> Response:
    """The upload form (with the outcome of the last upload, if any)."""
    open_to = [(league, settings_of(league.config)) for league in store.leagues.all()
               if not league.closed or user.admin or store.leagues.is_member(league.id, user.id)]
    values = {"submitted": None, "refusal": None, "report": None, "form": {}, **context}
    return page(request, "upload.html", status, title="Upload a bot", leagues=open_to, csrf=csrf_token(request),
                accepted=ACCEPTED, build_seconds=BUILD_SECONDS, **values)


@router.post("/upload", response_class=HTMLResponse, include_in_schema=False)
async def upload_submit(request: Request) -> Response:
    db: str = request.app.state.db
    user = await run_in_threadpool(_session_user, request)
    upload = await read_upload(request, await run_in_threadpool(upload_cap, db))
    check_csrf(request, upload.csrf)
    form = {"name": upload.name, "about": upload.about, "league": upload.league, "class": upload.class_name or ""}
    try:
        _, submitted = await run_in_threadpool(enter, db, user, upload, failed_checks(request))
    except Refused as refused:
        return await run_in_threadpool(_upload_page, request, user, HTTP_STATUS[refused.kind],
                                       {"refusal": str(refused), "report": refused.report, "form": form,
                                        "build_log": refused.build_log})
    # Entered: the outcome goes to the page this redirects to (a reload of it sends nothing
    # again). A passed report is a few short lines: the session's cookie carries it.
    request.session[UPLOADED] = {"entry": submitted.entry.id, "retired": submitted.retired,
                                 "testing_against": submitted.testing_against, "report": submitted.report.as_dict()}
    return RedirectResponse("/upload", 303)


def _session_user(request: Request) -> User:
    with Store(request.app.state.db, read_only=True) as store:
        return require_user(request, store, form=True)


def _upload_page(request: Request, user: User, status: int, context: dict[str, Any]) -> Response:
    with Store(request.app.state.db, read_only=True) as store:
        return private(upload_form(request, store, user, status, **context))


_API_BODY = {
    "required": True,
    "content": {"multipart/form-data": {"schema": {
        "type": "object", "required": ["file"],
        "properties": {
            "file": {"type": "string", "format": "binary", "description": "The bot file (UTF-8 Python source)."},
            "name": {"type": "string", "description": "The bot's name (default: the file's name, in lower case)."},
            "description": {"type": "string", "description": "What the bot is, in its author's words."},
            "league": {"type": "string", "description": "The league (default: the only one, if there is one)."},
            "class": {"type": "string", "description": "The Bot subclass to enter, in a file that has several."},
        }}}},
}
#: The HTTP status the site answers each kind of refusal with (the API's and the upload page's).
HTTP_STATUS: dict[Refusal, int] = {
    Refusal.NOT_ALLOWED: 403,
    Refusal.NOT_FOUND: 404,
    Refusal.TOO_LARGE: 413,
    Refusal.INVALID: 422,
    Refusal.TOO_MANY: 429,
    Refusal.UNAVAILABLE: 503,
}
_API_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "No API token, or an unknown or revoked one"},
    403: {"description": "A disabled account, another author's bot name, or a closed league"},
    404: {"description": "No such league or entrant"},
    413: {"description": "The file is larger than the league takes"},
    422: {"description": "A bad file, name or description, or failed checks (with the report)"},
    429: {"description": "Too many submissions in the last hour"},
    503: {"description": "The arena failed while checking the bot (not the bot's fault): try again later"},
}
Bearer = Annotated[str | None, Header(description="Bearer TOKEN: the API token of 'arena users add' or 'token'.")]


@router.post("/api/bots", status_code=201, openapi_extra={"requestBody": _API_BODY}, responses=_API_ERRORS,
             summary="Submit a bot (multipart: file, name, description, league, class): checked in the sandbox, "
                     "then entered in the league, retiring your previous version of it; 201 with the checks")
async def api_submit(request: Request, authorization: Bearer = None) -> Response:
    db: str = request.app.state.db
    user = await run_in_threadpool(token_user, db, authorization)  # before the body is read
    upload = await read_upload(request, await run_in_threadpool(upload_cap, db))
    try:
        league, submitted = await run_in_threadpool(enter, db, user, upload, failed_checks(request))
    except Refused as refused:
        body: dict[str, Any] = {"error": str(refused)}
        if refused.report is not None:
            body["checks"] = refused.report.as_dict()
        if refused.build_log is not None:
            body["build_log"] = refused.build_log
        return JSONResponse(body, status_code=HTTP_STATUS[refused.kind])
    submission = submitted.submission
    return JSONResponse({
        "version": submission.version, "spec": submission.spec, "entry": submitted.entry.id, "league": league.name,
        "kind": submission.kind, "sha256": submission.content_hash, "checks": submitted.report.as_dict(),
        "retired": submitted.retired, "testing_against": submitted.testing_against,
        **({"language": submission.language, "build_log": submission.build_log or ""} if submission.is_program else {}),
    }, status_code=201)


@router.post("/api/entries/{entry_id}/retire", responses=_API_ERRORS,
             summary="Retire an entrant of yours (an admin: anyone's): its games stay, it plays no more")
def api_retire(request: Request, entry_id: EntryId, authorization: Bearer = None) -> dict[str, Any]:
    user = token_user(request.app.state.db, authorization)
    with writing(request) as store:
        entry, league = retire_entry(store, user, entry_id)
    return {"entry": entry.id, "spec": entry.spec, "league": league.name, "status": entry.status,
            "retired_at": entry.retired_at}


def token_user(db: str, authorization: str | None) -> User:
    """The account of an API call's ``Authorization: Bearer TOKEN``: 401 without a
    token or with an unknown or revoked one, 403 for a disabled account."""
    scheme, _, token = (authorization or "").partition(" ")
    challenge = {"WWW-Authenticate": "Bearer"}
    if scheme.lower() != "bearer" or not token.strip():
        raise HTTPException(401, "no API token: send the header 'Authorization: Bearer TOKEN'", headers=challenge)
    with Store(db, read_only=True) as store:
        user = store.accounts.user_by_token(hash_token(token.strip()))
    if user is None:
        raise HTTPException(401, "unknown or revoked API token: ask the organiser for a new one", headers=challenge)
    if user.disabled:
        raise HTTPException(403, f"account {user.name!r} is disabled: ask the organiser")
    return user


def retire_entry(store: Store, user: User, entry_id: int, dry_run: bool = False) -> tuple[Entry, League]:
    """Retire an entrant as ``user`` (see :func:`arena.league.policy.retire`), or
    the HTTP error that says why not; ``dry_run``: only check that it may be."""
    entry = store.leagues.entry(entry_id)
    league = store.leagues.by_id(entry.league_id) if entry is not None else None
    if entry is None or league is None:
        raise HTTPException(404, f"no entrant with id {entry_id}")
    try:
        return (retirable if dry_run else retire)(store, league, user, entry_id), league
    except Refused as refused:
        raise HTTPException(HTTP_STATUS[refused.kind], str(refused)) from None


def upload_cap(db: str) -> int:
    """The most bytes an upload's body may hold: the largest file a league takes, and room for the rest."""
    with Store(db, read_only=True) as store:
        largest = max((settings_of(league.config).upload_kb for league in store.leagues.all()),
                      default=LeagueSettings().upload_kb)
    return (largest + FIELDS_KB) * 1024


async def read_upload(request: Request, cap: int) -> Upload:
    """The fields of a multipart upload, its body read up to ``cap`` bytes (413 beyond)."""
    too_large = f"the upload is larger than {cap // 1024} KB: no league here takes a file that large"
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise HTTPException(413, too_large)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise HTTPException(413, too_large)
    delivered = False

    async def replay() -> Message:  # the body read above, to the form parser
        nonlocal delivered
        if delivered:
            return {"type": "http.disconnect"}
        delivered = True
        return {"type": "http.request", "body": bytes(body), "more_body": False}

    form = await Request(request.scope, replay).form(max_files=2, max_fields=10)
    try:
        files = [value for _, value in form.multi_items() if isinstance(value, UploadFile)]
        if len(files) != 1 or not isinstance(form.get("file"), UploadFile):
            raise HTTPException(422, "send exactly one file, as the multipart field 'file'"
                                     + (f" (this upload has {len(files)})" if files else ""))
        file = files[0]
        source = await file.read()

        def text(key: str) -> str:
            value = form.get(key)
            return value.strip() if isinstance(value, str) else ""

        filename = PurePosixPath((file.filename or "").replace("\\", "/")).name[:100] or "bot.py"
        return Upload(source=source, filename=filename,
                      name=text("name") or PurePosixPath(filename).stem.lower().replace(" ", "-"),
                      about=text("description"), league=text("league"), class_name=text("class") or None,
                      csrf=text("csrf"))
    finally:
        await form.close()


def enter(db: str, user: User, upload: Upload, failed: Throttle) -> tuple[League, Submitted]:
    """Check an upload in the sandbox and enter it as ``user``'s; :class:`Refused` (with
    the kind of refusal) changes nothing. ``failed``: the uploads whose checks failed, per
    author and league, limited per hour as the league limits submissions (a failure is
    not stored, so the database cannot count it, but its checks held every other upload)."""
    with Store(db, create=False) as store:
        league = chosen_league(store, upload.league)
        current = store.accounts.user_by_id(user.id) or user  # as it is now: disabled meanwhile is refused
        limit = settings_of(league.config).submissions_per_hour
        key = f"league {league.id} author {user.id}"
        with CHECKS:  # counted and recorded under the lock: parallel uploads cannot all pass the count
            if failed.blocked(key, limit=limit):
                raise Refused(f"{limit} uploads failed their checks in the last hour: league {league.name!r} "
                              f"checks at most {limit} per author per hour; try again later", Refusal.TOO_MANY)
            try:
                return league, submit_to_league(store, league, current, upload.name, upload.source,
                                                upload.filename, upload.about, upload.class_name)
            except Refused as refused:
                if refused.report is not None or refused.build_log is not None:  # the sandbox ran it
                    failed.record(key)
                raise


def failed_checks(request: Request) -> Throttle:
    """This server's count of uploads that failed their checks (see :func:`enter`)."""
    found: Throttle = request.app.state.failed_checks
    return found


def new_failed_checks() -> Throttle:
    return Throttle(LeagueSettings().submissions_per_hour, 3600)  # each league's own limit is given when counted


def chosen_league(store: Store, name: str) -> League:
    """The league an upload names, or the only league when it names none."""
    if not name:
        leagues = store.leagues.all()
        if len(leagues) == 1:
            return leagues[0]
        known = ", ".join(repr(league.name) for league in leagues) or "none yet"
        raise Refused(f"name the league to enter (the field 'league'): {known}",
                      Refusal.INVALID if leagues else Refusal.NOT_FOUND)
    try:
        return store.leagues.check(name)
    except StoreError as exc:
        raise Refused(str(exc), Refusal.NOT_FOUND) from None
