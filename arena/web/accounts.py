"""Who is visiting: sessions, sign-in and out, one's own account, and the admins' users page.

A session is a cookie signed with the site's key (Starlette's ``SessionMiddleware``
over itsdangerous): HttpOnly, SameSite=lax, expiring :data:`SESSION_SECONDS` after
sign-in. It holds the account's id, a fingerprint of its password hash (a changed
password ends every other session) and a random token that every form which
changes something must send back (CSRF: another site can make a browser post a
form, but cannot read the token). The account is read again on each request, so a
disabled account is refused at once, whatever its cookie says. Signing out is
remembered in the database until the cookie would have expired, so a copy of a
signed-out session's cookie signs no one in.

A password the organiser issued serves only to choose one's own: signed in with it, the visitor is sent
to choose their own (``/account/new-password``) and every other page that needs an
account, and every form, refuses until they have. Wrong passwords delay further
tries on their account from addresses it has not signed in from before
(:func:`arena.league.accounts.attempt_sign_in`, kept in the database): such a try is
answered 429 with ``Retry-After``. The time comes from ``app.state.clock`` (seconds
since the epoch), which tests replace. Passwords are never logged, stored or echoed:
only their Argon2 hash is kept (``arena/league/accounts.py``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from arena.league.accounts import AccountError, attempt_sign_in, disable_user, renew_token, set_password
from arena.store import Store, StoreError, User
from arena.web.pages import StoreDep, page

router = APIRouter(include_in_schema=False)

SESSION_SECONDS = 8 * 3600  # a session ends this long after sign-in, used or not
PASSWORD_CHARS = 1000  # longer is no password anyone types: refused before it is hashed

#: A form's security token: absent is refused as stale (403), not as a malformed form (422).
Csrf = Annotated[str, Form(max_length=200)]
#: Where a form returns to: a path of this site only (see :func:`local_path`).
Next = Annotated[str, Form(alias="next", max_length=200)]
_LOCAL_PATH = re.compile(r"/(?![/\\])[A-Za-z0-9/_.@%-]*")


NEW_PASSWORD_PAGE = "/account/new-password"
MUST_CHANGE = ("the password you were given serves only to choose your own: do that first, at "
               f"{NEW_PASSWORD_PAGE}")


def session_settings(db: str) -> dict[str, Any]:
    """The keyword arguments of the site's ``SessionMiddleware`` (see :class:`arena.web.http.Sessions`)."""
    return {"secret_key": session_key(db), "max_age": SESSION_SECONDS, "same_site": "lax",
            "session_cookie": "arena_session"}


def session_key(db: str) -> str:
    """The key that signs the site's cookies: made once and kept in the database, so a
    restarted server keeps its visitors signed in. Where the database cannot be
    written (a file this user may only read), a key for this server's life."""
    with Store(db, read_only=True) as store:
        found = store.accounts.stored_setting("session_key")
    if found is not None:
        return found
    try:
        with Store(db, create=False) as store:
            return store.accounts.setting("session_key", lambda: secrets.token_hex(32))
    except StoreError:
        return secrets.token_hex(32)


def now(request: Request) -> float:
    """The site's time, seconds since the epoch (``app.state.clock``: tests give their own)."""
    clock: Callable[[], float] = request.app.state.clock
    return clock()


# --- the visitor of a request ----------------------------------------------------------------


def fingerprint(user: User) -> str:
    """What a session keeps of the password hash: enough to see that it changed."""
    return hashlib.sha256(user.password_hash.encode()).hexdigest()[:16]


def start_session(request: Request, user: User) -> None:
    """Signed in: a new session (and a new form token) for ``user``."""
    request.session.clear()
    request.session.update({"user": user.id, "name": user.name, "key": fingerprint(user),
                            "csrf": secrets.token_urlsafe(32)})
    request.session["admin"] = user.admin  # shows the admin pages in the menu (the pages check again)


def signed_in(request: Request, store: Store) -> User | None:
    """The account of this request's session (disabled or not), or None; a session
    whose account is gone or whose password changed since is ended."""
    user_id = request.session.get("user")
    if not isinstance(user_id, int):
        return None
    user = store.accounts.user_by_id(user_id)
    if (user is None or request.session.get("key") != fingerprint(user)
            or store.accounts.session_ended(session_id(request))):
        request.session.clear()
        return None
    return user


def session_id(request: Request) -> str:
    """What names a session where the server remembers it: a digest of its form token,
    which is made afresh at each sign-in."""
    return hashlib.sha256(str(request.session.get("csrf")).encode()).hexdigest()


def require_user(request: Request, store: Store, form: bool = False, new_password: bool = False) -> User:
    """The signed-in account, enabled. Anonymous: a page sends the browser to sign in
    (303), a form is refused (401); a disabled account is refused (403) and signed out.
    An account signed in with an issued password is sent to choose its own (a page,
    303) or refused (a form, 403), unless ``new_password`` (the page that does it)."""
    user = signed_in(request, store)
    if user is None:
        if form:
            raise HTTPException(401, "sign in first")
        raise HTTPException(303, "sign in first", headers={"Location": f"/signin?next={request.url.path}"})
    if user.disabled:
        request.session.clear()
        raise HTTPException(403, f"account {user.name!r} is disabled: ask the organiser")
    if user.must_change_password and not new_password:
        if form:
            raise HTTPException(403, MUST_CHANGE)
        raise HTTPException(303, MUST_CHANGE, headers={"Location": f"{NEW_PASSWORD_PAGE}?next={request.url.path}"})
    return user


def may_act(user: User | None) -> User | None:
    """A visitor who may act on what a page shows: not a disabled account, nor one that
    has still to replace an issued password (they see what everyone sees)."""
    return None if user is None or user.disabled or user.must_change_password else user


def require_admin(request: Request, store: Store, form: bool = False) -> User:
    user = require_user(request, store, form)
    if not user.admin:
        raise HTTPException(403, "only an admin may do this")
    return user


def csrf_token(request: Request) -> str:
    """This session's form token, made on first use."""
    token = request.session.get("csrf")
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        request.session["csrf"] = token
    return token


def check_csrf(request: Request, given: str) -> None:
    """Refuse (403) a form that does not carry this session's token."""
    expected = request.session.get("csrf")
    if not isinstance(expected, str) or not secrets.compare_digest(expected.encode(), given.encode()):
        raise HTTPException(403, "this form's security token is missing or stale: reload the page and try again")


#: A form's "yes, do it" (``confirmed=yes``), sent by the page that asks (:func:`confirm_page`)
#: or by ``static/confirm.js`` once the visitor has said OK.
Confirmed = Annotated[str, Form(max_length=10)]


def confirm_page(request: Request, title: str, question: str, action: str, button: str, back: str,
                 fields: dict[str, str] | None = None) -> Response:
    """The page that asks before a form that cannot be undone is done: the same form
    again, with ``confirmed=yes`` and the session's token, or a way back to ``back``."""
    return private(page(request, "confirm.html", title=title, question=question, action=action, button=button,
                        back=local_path(back), fields=fields or {}, csrf=csrf_token(request)))


def local_path(path: str, default: str = "/my") -> str:
    """``path`` if it is a path of this site, else ``default``: a form's ``next`` never
    sends anyone to another site."""
    return path if _LOCAL_PATH.fullmatch(path) else default


def private(response: Response) -> Response:
    """A page for one visitor: kept by no shared cache, shown in no other site's frame
    (whose clicks could land on its buttons)."""
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Content-Security-Policy"] = "frame-ancestors 'none'"
    return response


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


@contextmanager
def writing(request: Request) -> Iterator[Store]:
    """The league database, writable, for a route that changes it."""
    with Store(request.app.state.db, create=False) as store:
        yield store


# --- signing in and out --------------------------------------------------------------------


@router.get("/signin", response_class=HTMLResponse)
def signin_page(request: Request, next_page: Annotated[str, Query(alias="next", max_length=200)] = "/my") -> Response:
    return private(page(request, "signin.html", title="Sign in", csrf=csrf_token(request), next=local_path(next_page),
                        message=""))


@router.post("/signin", response_class=HTMLResponse)
def signin_submit(request: Request, name: Annotated[str, Form(max_length=100)] = "",
                  password: Annotated[str, Form(max_length=PASSWORD_CHARS)] = "", csrf: Csrf = "",
                  next_page: Next = "/my") -> Response:
    check_csrf(request, csrf)

    def again(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
        response = private(page(request, "signin.html", status, title="Sign in", csrf=csrf_token(request),
                                next=local_path(next_page), message=message, name=name))
        response.headers.update(headers or {})
        return response

    with writing(request) as store:
        attempt = attempt_sign_in(store, name, password, client_address(request), now(request))
    if attempt.retry_after:
        return again(429, f"Too many wrong passwords for this account: try again in {wait_text(attempt.retry_after)} "
                          "(from where you signed in before, you need not wait).",
                     {"Retry-After": str(attempt.retry_after)})
    if attempt.user is None:
        return again(401, "Wrong name or password, or a disabled account.")
    start_session(request, attempt.user)
    if attempt.user.must_change_password:
        return RedirectResponse(f"{NEW_PASSWORD_PAGE}?next={local_path(next_page)}", 303)
    return RedirectResponse(local_path(next_page), 303)


def wait_text(seconds: int) -> str:
    """A wait in words: "5 seconds", "3 minutes"."""
    if seconds < 120:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    return f"{-(-seconds // 60)} minutes"


@router.post("/signout")
def signout(request: Request, csrf: Csrf = "") -> Response:
    check_csrf(request, csrf)
    if "user" in request.session:
        # The cookie is signed, not stored: a copy of it would sign in again until it
        # expires, unless the server remembers that this session ended.
        until = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=SESSION_SECONDS)
        with writing(request) as store:
            store.accounts.end_session(session_id(request), until.isoformat(timespec="seconds"))
    request.session.clear()
    return RedirectResponse("/", 303)


# --- one's own account ---------------------------------------------------------------------


@router.get("/account", response_class=HTMLResponse)
def account_page(request: Request, store: StoreDep) -> Response:
    user = require_user(request, store)
    return private(page(request, "account.html", title="Account", user=user, csrf=csrf_token(request), message="",
                        token=None))


@router.post("/account/password", response_class=HTMLResponse)
def change_password(request: Request, current: Annotated[str, Form(max_length=PASSWORD_CHARS)] = "",
                    new: Annotated[str, Form(max_length=PASSWORD_CHARS)] = "",
                    again: Annotated[str, Form(max_length=PASSWORD_CHARS)] = "", csrf: Csrf = "") -> Response:
    with writing(request) as store:
        user = require_user(request, store, form=True)
        check_csrf(request, csrf)

        def refused(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
            response = private(page(request, "account.html", status, title="Account", user=user,
                                    csrf=csrf_token(request), message=message, token=None))
            response.headers.update(headers or {})
            return response

        attempt = attempt_sign_in(store, user.name, current, client_address(request), now(request))
        if attempt.retry_after:
            return refused(429, f"Too many wrong passwords: try again in {wait_text(attempt.retry_after)}.",
                           {"Retry-After": str(attempt.retry_after)})
        if attempt.user is None:
            return refused(401, "The current password is wrong.")
        if new != again:
            return refused(422, "The two new passwords differ.")
        try:
            set_password(store, user, new)
        except AccountError as exc:
            return refused(422, f"{exc}.")
        changed = store.accounts.user_by_id(user.id)
        assert changed is not None  # it was just written
        start_session(request, changed)  # this session goes on; every other one ends
        return private(page(request, "account.html", title="Account", user=changed, csrf=csrf_token(request),
                            message="Password changed: other sessions of this account are signed out.", token=None))


@router.get(NEW_PASSWORD_PAGE, response_class=HTMLResponse)
def new_password_page(request: Request, store: StoreDep,
                      next_page: Annotated[str, Query(alias="next", max_length=200)] = "/my") -> Response:
    """Where an account signed in with an issued password chooses its own."""
    user = require_user(request, store, new_password=True)
    if not user.must_change_password:
        return RedirectResponse("/account", 303)
    return private(page(request, "new_password.html", title="Choose your password", user=user,
                        csrf=csrf_token(request), next=local_path(next_page), message=""))


@router.post(NEW_PASSWORD_PAGE, response_class=HTMLResponse)
def choose_password(request: Request, new: Annotated[str, Form(max_length=PASSWORD_CHARS)] = "",
                    again: Annotated[str, Form(max_length=PASSWORD_CHARS)] = "", csrf: Csrf = "",
                    next_page: Next = "/my") -> Response:
    with writing(request) as store:
        user = require_user(request, store, form=True, new_password=True)
        check_csrf(request, csrf)
        if not user.must_change_password:
            return RedirectResponse("/account", 303)

        def refused(message: str) -> Response:
            return private(page(request, "new_password.html", 422, title="Choose your password", user=user,
                                csrf=csrf_token(request), next=local_path(next_page), message=message))

        if new != again:
            return refused("The two passwords differ.")
        try:
            set_password(store, user, new)
        except AccountError as exc:
            return refused(f"{str(exc)[0].upper()}{str(exc)[1:]}.")
        changed = store.accounts.user_by_id(user.id)
        assert changed is not None  # it was just written
        start_session(request, changed)  # the issued password's sessions end; this one goes on
    return RedirectResponse(local_path(next_page), 303)


@router.post("/account/token", response_class=HTMLResponse)
def renew_own_token(request: Request, csrf: Csrf = "") -> Response:
    """A new API token for oneself, shown once (the old one stops working)."""
    with writing(request) as store:
        user = require_user(request, store, form=True)
        check_csrf(request, csrf)
        token = renew_token(store, user.name)
    return private(page(request, "account.html", title="Account", user=user, csrf=csrf_token(request),
                        message="", token=token))


# --- the admins' users page ----------------------------------------------------------------


@router.get("/users", response_class=HTMLResponse)
def users_page(request: Request, store: StoreDep) -> Response:
    admin = require_admin(request, store)
    return private(page(request, "users.html", title="Users", users=store.accounts.users(), me=admin,
                        csrf=csrf_token(request)))


@router.post("/users/{name}/{action}")
def change_user(request: Request, name: Annotated[str, Path(max_length=40)],
                action: Annotated[str, Path(pattern="^(disable|enable)$")], csrf: Csrf = "") -> Response:
    with writing(request) as store:
        admin = require_admin(request, store, form=True)
        check_csrf(request, csrf)
        if name == admin.name:
            raise HTTPException(422, "an admin does not disable or enable their own account here: "
                                     "use 'arena users' at the server")
        disable_user(store, name, action == "disable", by=admin)
    return RedirectResponse("/users", 303)
