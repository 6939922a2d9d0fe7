"""The admins' pages: what ``arena users`` and ``arena league`` do, for a running league.

Every action calls the library function its command calls (:mod:`arena.league.accounts`,
:mod:`arena.league.policy`, :mod:`arena.league.removal`), so it is checked and audited
the same, with the admin who did it. Each is a form with the session's token (CSRF);
a visitor who is not an admin is refused (403), one signed out is sent to sign in (a
page) or refused (a form, 401). A refusal of the library (a taken name, a bad
setting) is one line on the page, with status 400. A password or token made here is
shown once, on the page that answers the form, which no cache keeps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from arena.errors import ArenaError
from arena.league.accounts import add_user, check_user, disable_user, renew_token, reset_password, unlock
from arena.league.policy import add_member, change_settings, retirable, retire, settings_of
from arena.league.removal import is_removed, remove_user
from arena.store import League, Store, User
from arena.text import printable
from arena.web.accounts import Confirmed, Csrf, check_csrf, confirm_page, csrf_token, private, require_admin, writing
from arena.web.leagues import EntryId, LeagueName, retire_question, tournament_status
from arena.web.pages import StoreDep, page

router = APIRouter(include_in_schema=False)

UserName = Annotated[str, Path(max_length=60)]
Field = Annotated[str, Form(max_length=100)]


class Mistake(ArenaError):
    """A form filled in wrongly (a number that is none, a confirmation that does not match)."""


# --- the accounts -----------------------------------------------------------------------------


@router.get("/admin", response_class=HTMLResponse)
def admin_page(request: Request, store: StoreDep) -> Response:
    return accounts_view(request, store, require_admin(request, store))


def accounts_view(request: Request, store: Store, admin: User, status: int = 200, **context: Any) -> Response:
    """The admin page: every account and what can be done to it, the leagues, and the
    outcome of the last form (``message``, ``error``, an ``issued`` password or token)."""
    values = {"message": "", "error": "", "issued": None, **context}
    users = [(user, is_removed(user)) for user in store.accounts.users()]
    leagues = [(league, tournament_status(store, league)) for league in store.leagues.all()]
    return private(page(request, "admin.html", status, title="Admin", users=users, leagues=leagues, me=admin,
                        csrf=csrf_token(request), **values))


def act(request: Request, csrf: str, do: Callable[[Store, User], Response],
        refused: Callable[[Request, Store, User, str], Response] | None = None) -> Response:
    """Do a form's action as the signed-in admin: the library's refusal is one line on
    ``refused``'s page (the accounts page by default), with status 400."""
    with writing(request) as store:
        admin = require_admin(request, store, form=True)
        check_csrf(request, csrf)
        try:
            return do(store, admin)
        except ArenaError as exc:
            if refused is not None:
                return refused(request, store, admin, str(exc))
            return accounts_view(request, store, admin, 400, error=str(exc))


def not_oneself(admin: User, name: str, what: str) -> None:
    if name == admin.name:
        raise Mistake(f"an admin does not {what} their own account here: use 'arena users' at the server")


@router.post("/admin/users", response_class=HTMLResponse)
def add_form(request: Request, name: Field = "", admin_flag: Annotated[str, Form(alias="admin", max_length=10)] = "",
             csrf: Csrf = "") -> Response:
    def do(store: Store, admin: User) -> Response:
        user, password, token = add_user(store, name.strip(), bool(admin_flag), by=admin)
        return accounts_view(request, store, admin, message=f"Account {user.name} added.",
                             issued={"user": user.name, "password": password, "token": token})

    return act(request, csrf, do)


@router.get("/admin/users/{name}/delete", response_class=HTMLResponse)
def delete_page(request: Request, store: StoreDep, name: UserName) -> Response:
    """The confirmation step before an account's data is removed: what will go."""
    admin = require_admin(request, store)
    return delete_view(request, store, admin, name)


def delete_view(request: Request, store: Store, admin: User, name: str, status: int = 200, error: str = "") -> Response:
    try:
        user = check_user(store, name)
    except ArenaError as exc:
        return accounts_view(request, store, admin, 400, error=str(exc))
    bots = sorted({s.name for s in store.submissions.all() if s.user_id == user.id})
    active = [entry.spec for league in store.leagues.all()
              for entry in store.leagues.entries(league.id, status="active", user_id=user.id)]
    return private(page(request, "admin_delete.html", status, title=f"Delete {user.name}", user=user, bots=bots,
                        active=active, removed=is_removed(user), csrf=csrf_token(request), error=error))


@router.post("/admin/users/{name}/delete", response_class=HTMLResponse)
def delete_form(request: Request, name: UserName, confirm: Field = "", csrf: Csrf = "") -> Response:
    def do(store: Store, admin: User) -> Response:
        not_oneself(admin, name, "delete")
        if confirm.strip() != name:
            raise Mistake(f"type the account's name, {name!r}, to confirm (got {confirm.strip()!r})")
        removed = remove_user(store, name, by=admin)
        return accounts_view(request, store, admin, message=(
            f"Account {name} removed: it is now {removed.name}; {len(removed.bots)} bot name(s) renamed, "
            f"{len(removed.retired)} entrant(s) retired, its games kept under the new names."))

    def refused(request: Request, store: Store, admin: User, error: str) -> Response:
        return delete_view(request, store, admin, name, 400, error)

    return act(request, csrf, do, refused)


# (After the delete routes: a path ending in /delete is theirs, not an {action}.)
@router.post("/admin/users/{name}/{action}", response_class=HTMLResponse)
def account_form(request: Request, name: UserName,
                 action: Annotated[str, Path(pattern="^(disable|enable|password|token|unlock)$")],
                 csrf: Csrf = "") -> Response:
    def do(store: Store, admin: User) -> Response:
        if action in ("disable", "enable"):
            not_oneself(admin, name, action)
            disable_user(store, name, action == "disable", by=admin)
            return RedirectResponse("/admin", 303)
        if action == "unlock":
            had = unlock(store, name, by=admin)
            return accounts_view(request, store, admin, message=f"{name} unlocked: signing in is not delayed."
                                 if had else f"{name} had no wrong passwords to forget.")
        if action == "password":
            issued = {"user": name, "password": reset_password(store, name, by=admin)}
            return accounts_view(request, store, admin, message=f"A new password for {name}.", issued=issued)
        issued = {"user": name, "token": renew_token(store, name, by=admin)}
        return accounts_view(request, store, admin, message=f"A new API token for {name}: the old one no longer "
                                                            "works.", issued=issued)

    return act(request, csrf, do)


# --- the leagues ------------------------------------------------------------------------------


@router.get("/admin/leagues/{name}", response_class=HTMLResponse)
def league_admin_page(request: Request, store: StoreDep, name: LeagueName) -> Response:
    admin = require_admin(request, store)
    return league_view(request, store, admin, store.leagues.check(name))


def league_view(request: Request, store: Store, admin: User, league: League, status: int = 200,
                message: str = "", error: str = "") -> Response:
    names = {user.id: user.name for user in store.accounts.users()}
    entries = [(entry, names.get(entry.user_id or 0, "")) for entry in reversed(store.leagues.entries(league.id))]
    members = [names.get(user_id, "") for user_id in store.leagues.members(league.id)]
    return private(page(request, "admin_league.html", status, title=f"Admin: league {league.name}", league=league,
                        settings=settings_of(league.config), entries=entries, members=members,
                        running=tournament_status(store, league), csrf=csrf_token(request), message=message,
                        error=error))


def league_act(request: Request, name: str, csrf: str, do: Callable[[Store, User, League], Response]) -> Response:
    """:func:`act` for a form of league ``name``'s admin page, whose refusals it shows."""

    def refused(request: Request, store: Store, admin: User, error: str) -> Response:
        league = store.leagues.get(name)
        if league is None:
            return accounts_view(request, store, admin, 400, error=error)
        return league_view(request, store, admin, league, 400, error=error)

    return act(request, csrf, lambda store, admin: do(store, admin, store.leagues.check(name)), refused)


@router.post("/admin/leagues/{name}/settings", response_class=HTMLResponse)
def settings_form(request: Request, name: LeagueName, closed: Field = "", public_code: Field = "",
                  submissions_per_hour: Field = "", upload_kb: Field = "", csrf: Csrf = "") -> Response:
    def do(store: Store, admin: User, league: League) -> Response:
        changes: dict[str, Any] = {"closed": bool(closed), "public_code": bool(public_code)}
        for key, text in (("submissions_per_hour", submissions_per_hour), ("upload_kb", upload_kb)):
            try:
                changes[key] = int(text.strip())
            except ValueError:
                raise Mistake(f"{key.replace('_', ' ')} must be a whole number, got {text!r}") from None
        changed = change_settings(store, league, changes, by=admin)
        return league_view(request, store, admin, changed, message="Settings saved." if changed != league
                           else "Nothing changed.")

    return league_act(request, name, csrf, do)


@router.post("/admin/leagues/{name}/members", response_class=HTMLResponse)
def member_form(request: Request, name: LeagueName, user: Field = "", csrf: Csrf = "") -> Response:
    def do(store: Store, admin: User, league: League) -> Response:
        member = check_user(store, user.strip())
        add_member(store, league, member, by=admin)
        return league_view(request, store, admin, league, message=f"{member.name} may submit to {league.name}.")

    return league_act(request, name, csrf, do)


@router.post("/admin/leagues/{name}/entries/{entry_id}/retire", response_class=HTMLResponse)
def retire_form(request: Request, name: LeagueName, entry_id: EntryId, csrf: Csrf = "",
                confirmed: Confirmed = "") -> Response:
    def do(store: Store, admin: User, league: League) -> Response:
        if confirmed != "yes":  # asked first, as on the league's page (what would be refused is, at once)
            asked = retirable(store, league, admin, entry_id)
            return confirm_page(request, f"Retire {printable(asked.spec)}?", retire_question(asked, league),
                                f"/admin/leagues/{quote(league.name)}/entries/{asked.id}/retire",
                                f"Retire {printable(asked.spec)}", f"/admin/leagues/{quote(league.name)}")
        entry = retire(store, league, admin, entry_id)
        return league_view(request, store, admin, league, message=f"{entry.spec} retired: its games stay.")

    return league_act(request, name, csrf, do)

