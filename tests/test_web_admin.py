"""The admins' pages (what ``arena users`` and ``arena league`` do, on the site), removing
an account's data (``arena users delete`` and its page), and ``GET /healthz``.

Each admin action is checked to go through the library function its command calls:
the same refusals, the same audit row (with the admin's name), and a refusal that
changes nothing and is one line with status 400."""

from __future__ import annotations

import html
import re
import shutil
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.entry.submissions import resolve_bot
from arena.league.accounts import sign_in, user_of_token
from arena.league.policy import Refusal, Refused, submit_to_league
from arena.league.removal import remove_user
from arena.league.scheduler import removed_meanwhile, run_league
from arena.players.plugins import BotSpecError
from arena.records import BotCode
from arena.store import Store
from arena.web.app import create_app
from tests import test_web_league as league_site
from tests.test_cli import dump
from tests.test_web_league import Site, attempt, bot, form_token

# The league site's fixtures: a league with four accounts and alice's bot, copied for each test.
template = league_site.template
site = league_site.site


def admin_form(client, path: str, **fields: str):
    """Post an admin form with the session's token."""
    return client.post(path, data={"csrf": form_token(client), **fields})


def one_line_error(text: str) -> str:
    """The error line of an admin page (one line, no traceback)."""
    found = re.findall(r'<p class="error" role="alert">([^<]*)</p>', text)
    assert len(found) == 1, text[-1500:]
    assert "\n" not in found[0] and "Traceback" not in text
    return html.unescape(found[0])


def last_audit(db) -> tuple:
    with Store(db, read_only=True) as store:
        row = store.accounts.audit_log()[-1]
    return row["user"], row["action"], row["subject"], row["detail"]


# --- who may ---------------------------------------------------------------------------------

PAGES = ["/admin", "/admin/leagues/class", "/admin/users/bob/delete"]
FORMS = {
    "add": ("/admin/users", {"name": "dave"}),
    "disable": ("/admin/users/bob/disable", {}),
    "password": ("/admin/users/bob/password", {}),
    "token": ("/admin/users/bob/token", {}),
    "unlock": ("/admin/users/bob/unlock", {}),
    "delete": ("/admin/users/bob/delete", {"confirm": "bob"}),
    "settings": ("/admin/leagues/class/settings", {"submissions_per_hour": "9", "upload_kb": "4"}),
    "member": ("/admin/leagues/class/members", {"user": "bob"}),
    "retire": ("/admin/leagues/class/entries/{entry}/retire", {"confirmed": "yes"}),
}


@pytest.mark.parametrize("path", PAGES)
def test_admin_pages_are_for_admins_only(site, path):
    anonymous = site.client().get(path)
    assert anonymous.status_code == 303 and anonymous.headers["location"] == f"/signin?next={path}"
    assert site.signed_in("alice").get(path).status_code == 403
    page = site.signed_in("admin").get(path)
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("form", list(FORMS))
def test_admin_forms_are_refused_to_others_and_without_the_token(site, form):
    path, fields = FORMS[form]
    path = path.format(entry=site.secrets.entry)
    alice, admin = site.signed_in("alice"), site.signed_in("admin")  # signing in notes the address: before the dump
    before = dump(site.db)
    assert site.client().post(path, data={"csrf": form_token(site.client()), **fields}).status_code == 401
    assert admin_form(alice, path, **fields).status_code == 403
    assert admin.post(path, data={"csrf": "stale", **fields}).status_code == 403
    assert admin.post(path, data=fields).status_code == 403  # no token at all
    assert dump(site.db) == before
    done = admin_form(admin, path, **fields)
    assert done.status_code in (200, 303), done.text[-800:]
    assert "error" not in done.text
    assert dump(site.db) != before


def test_the_menu_shows_the_admin_page_to_admins_only(site):
    assert 'href="/admin"' in site.signed_in("admin").get("/leagues").text
    assert 'href="/admin"' not in site.signed_in("alice").get("/leagues").text
    assert 'href="/admin"' not in site.client().get("/leagues").text


# --- what each action does -------------------------------------------------------------------


def test_an_added_account_gets_a_password_and_a_token_shown_once(site):
    admin = site.signed_in("admin")
    page = admin_form(admin, "/admin/users", name="dave", admin="yes")
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    password = re.search(r'id="issued-password">([^<]+)<', page.text).group(1)
    token = re.search(r'id="issued-token">([^<]+)<', page.text).group(1)
    with Store(site.db, read_only=True) as store:
        dave = sign_in(store, "dave", password)
        assert dave is not None and dave.admin and user_of_token(store, token).name == "dave"
    assert password not in admin.get("/admin").text  # shown once only
    assert last_audit(site.db) == ("admin", "add user", "dave", "admin")


def test_a_taken_or_bad_name_is_one_line_and_changes_nothing(site):
    admin = site.signed_in("admin")
    before = dump(site.db)
    for name, message in (("bob", "already a user named 'bob'"), ("Bad Name", "bad user name 'Bad Name'")):
        page = admin_form(admin, "/admin/users", name=name)
        assert page.status_code == 400
        assert message in one_line_error(page.text)
    assert dump(site.db) == before


def test_disable_and_enable_from_the_admin_page(site):
    admin = site.signed_in("admin")
    assert admin_form(admin, "/admin/users/bob/disable").status_code == 303
    with Store(site.db, read_only=True) as store:
        assert store.accounts.user("bob").disabled
    assert last_audit(site.db) == ("admin", "disable user", "bob", "")
    assert admin_form(admin, "/admin/users/bob/enable").status_code == 303
    with Store(site.db, read_only=True) as store:
        assert not store.accounts.user("bob").disabled
    own = admin_form(admin, "/admin/users/admin/disable")
    assert own.status_code == 400 and "their own account" in one_line_error(own.text)


def test_a_new_password_and_a_new_token_replace_the_old_ones(site):
    admin = site.signed_in("admin")
    page = admin_form(admin, "/admin/users/bob/password")
    password = re.search(r'id="issued-password">([^<]+)<', page.text).group(1)
    with Store(site.db, read_only=True) as store:
        assert sign_in(store, "bob", password) is not None
        assert sign_in(store, "bob", site.secrets.passwords["bob"]) is None
    assert last_audit(site.db) == ("admin", "new password", "bob", "")
    page = admin_form(admin, "/admin/users/bob/token")
    token = re.search(r'id="issued-token">([^<]+)<', page.text).group(1)
    with Store(site.db, read_only=True) as store:
        assert user_of_token(store, token).name == "bob"
        assert user_of_token(store, site.secrets.tokens["bob"]) is None
    missing = admin_form(admin, "/admin/users/nobody/password")
    assert missing.status_code == 400 and "no user named 'nobody'" in one_line_error(missing.text)


@pytest.mark.parametrize(("web", "cli"), [
    (("/admin/users/bob/password", {}), ["users", "password", "bob"]),
    (("/admin/users/bob/token", {}), ["users", "token", "bob"]),
    (("/admin/users/bob/disable", {}), ["users", "disable", "bob"]),
    (("/admin/users", {"name": "dave"}), ["users", "add", "dave"]),
    (("/admin/leagues/class/members", {"user": "bob"}), ["league", "add-member", "class", "bob"]),
    (("/admin/leagues/class/settings", {"closed": "yes", "submissions_per_hour": "5", "upload_kb": "4"}),
     ["league", "settings", "class", "--closed"]),
    (("/admin/users/bob/delete", {"confirm": "bob"}), ["users", "delete", "bob", "--yes"]),
])
def test_each_action_is_audited_as_its_command_audits_it(site, tmp_path, web, cli):
    copy = tmp_path / "cli.db"
    shutil.copy(site.db, copy)
    result = CliRunner().invoke(main, [*cli, "--db", str(copy)])
    assert result.exit_code == 0, result.output
    assert admin_form(site.signed_in("admin"), web[0], **web[1]).status_code in (200, 303)
    by_cli, by_site = last_audit(copy), last_audit(site.db)
    assert by_cli[0] is None and by_site[0] == "admin"
    assert by_cli[1:] == by_site[1:]


def test_league_settings_change_at_once_and_are_checked(site):
    admin = site.signed_in("admin")
    page = admin_form(admin, "/admin/leagues/class/settings", closed="yes", public_code="yes",
                      submissions_per_hour="7", upload_kb="8")
    assert page.status_code == 200 and "Settings saved." in page.text
    with Store(site.db, read_only=True) as store:
        league = store.leagues.check("class")
        assert league.closed and league.public_code
        assert league.config["league"] == {"closed": True, "public_code": True, "submissions_per_hour": 7,
                                           "upload_kb": 8}
        # the library's own check of a closed league now refuses a non-member
        with pytest.raises(Refused) as refused:
            submit_to_league(store, league, store.accounts.user("bob"), "newbot", bot("Newbot"))
        assert refused.value.kind == Refusal.NOT_ALLOWED
    assert last_audit(site.db) == ("admin", "league settings", "class",
                                   "closed=True, public_code=True, submissions_per_hour=7, upload_kb=8")
    before = dump(site.db)
    for fields, message in (({"submissions_per_hour": "0", "upload_kb": "4"}, "must be at least 1"),
                            ({"submissions_per_hour": "many", "upload_kb": "4"}, "must be a whole number")):
        bad = admin_form(admin, "/admin/leagues/class/settings", **fields)
        assert bad.status_code == 400 and message in one_line_error(bad.text)
    assert dump(site.db) == before
    result = CliRunner().invoke(main, ["league", "settings", "class", "--db", str(site.db)])
    assert result.exit_code == 0 and "closed = true, public_code = true, submissions_per_hour = 7" in result.output


def test_retiring_an_entrant_from_the_league_page(site):
    admin = site.signed_in("admin")
    path = f"/admin/leagues/class/entries/{site.secrets.entry}/retire"
    before = dump(site.db)
    asked = admin_form(admin, path)  # not confirmed: a page that asks, nothing done
    assert asked.status_code == 200 and "Retire lefty@v1 from league class?" in asked.text
    assert '<input type="hidden" name="confirmed" value="yes">' in asked.text
    assert f'action="{path}"' in asked.text and 'href="/admin/leagues/class">Cancel' in asked.text
    assert dump(site.db) == before
    page = admin_form(admin, path, confirmed="yes")
    assert page.status_code == 200 and "lefty@v1 retired" in page.text
    with Store(site.db, read_only=True) as store:
        assert store.leagues.entry(site.secrets.entry).status == "retired"
    assert last_audit(site.db)[:3] == ("admin", "retire", "lefty@v1")
    again = admin_form(admin, path)  # what would be refused is refused before anything is asked
    assert again.status_code == 400 and "retired already" in one_line_error(again.text)
    unknown = admin_form(admin, "/admin/leagues/class/entries/999/retire", confirmed="yes")
    assert unknown.status_code == 400 and "no entrant 999" in one_line_error(unknown.text)


# --- removing an account ---------------------------------------------------------------------

SECRET_WORDS = ("alice", "lefty", "Plays the first legal move")


def every_page(client, store: Store) -> dict[str, str]:
    """Every page and API answer of the site, each game's and bot's and version's included."""
    paths = ["/", "/standings?all=true", "/crosstable?all=true", "/colours?all=true", "/games", "/games?all=true",
             "/leagues", "/leagues/class", "/leagues/class?all_versions=true", "/tournaments/class", "/my",
             "/account", "/users", "/admin", "/admin/leagues/class", "/upload", "/api/tournaments",
             "/api/tournaments/class", "/api/standings?all=true", "/api/crosstable?all=true",
             "/api/colours?all=true", "/api/bots", "/api/games?all=true&limit=500", "/api/leagues",
             "/api/leagues/class", "/api/leagues/class?all_versions=true", "/healthz", "/openapi.json"]
    for (game_id,) in store.db.execute("select id from games"):
        paths += [f"/games/{game_id}", f"/games/{game_id}/export", f"/api/games/{game_id}"]
    for bot_row in store.bots.stored():
        paths += [f"/bots/{bot_row.spec}", f"/api/bots/{bot_row.spec}"]
    for submission in store.submissions.all():
        paths.append(f"/submissions/{submission.id}/code")
    answers = {}
    for path in paths:
        response = client.get(path)
        assert response.status_code < 500, path
        answers[path] = response.text
    return answers


#: What a removal may shift: the incremental Elo takes the games in the order of their keys,
#: which hold the bots' names, and bots tied exactly are ranked by name (and each row's
#: likelihood of superiority is to the bot ranked next).
ORDER_OF_NAMES = {"bot", "incremental_elo", "rank", "los_next"}


def league_rows(client) -> dict[str, dict]:
    rows = client.get("/api/leagues/class?all_versions=true").json()["standings"]
    return {row["bot"]: {k: v for k, v in row.items() if k not in ORDER_OF_NAMES} for row in rows}


@pytest.fixture
def played(site) -> Site:
    """The league with a bot of bob's too, every pairing played."""
    with Store(site.db) as store:
        league = store.leagues.check("class")
        submit_to_league(store, league, store.accounts.user("bob"), "righty", bot("Righty", index=-1))
        run_league(store, league, workers=1, until_complete=True)
    return site


def test_a_removed_account_leaves_no_name_or_code_and_the_standings_as_they_were(played):
    site = played
    admin = site.signed_in("admin")
    before = league_rows(admin)
    assert "lefty@v1" in before and "righty@v1" in before
    with Store(site.db, read_only=True) as store:
        pages = every_page(admin, store)
    assert any("alice" in text for text in pages.values()) and any("lefty" in text for text in pages.values())
    confirm = admin.get("/admin/users/alice/delete")
    assert confirm.status_code == 200 and "lefty" in confirm.text
    wrong = admin_form(admin, "/admin/users/alice/delete", confirm="alic")
    assert wrong.status_code == 400 and "to confirm" in one_line_error(wrong.text)
    done = admin_form(admin, "/admin/users/alice/delete", confirm="alice")
    assert done.status_code == 200 and "it is now removed-" in done.text
    with Store(site.db, read_only=True) as store:
        removed = store.accounts.users()
        new_name = next(u.name for u in removed if u.name.startswith("removed-"))
        assert store.accounts.user("alice") is None and store.accounts.user(new_name).disabled
        assert store.leagues.entry(site.secrets.entry).status == "retired"
        submission = store.submissions.by_id(site.secrets.submission)
        assert submission.source == "" and submission.name == new_name
        pages = every_page(admin, store)
    for path, text in pages.items():
        for word in SECRET_WORDS:
            assert word.lower() not in text.lower(), (path, word)
    after = league_rows(admin)
    assert after.pop(f"{new_name}@v1") == before.pop("lefty@v1")  # its games stay, under the new name
    assert after == before  # and everyone else's standings with them
    # its name is free again, and the removed account signs in no more
    assert admin_form(admin, "/admin/users", name="alice").status_code == 200
    with Store(site.db, read_only=True) as store:
        assert sign_in(store, new_name, site.secrets.passwords["alice"]) is None
        assert user_of_token(store, site.secrets.tokens["alice"]) is None


def test_a_removed_version_is_refused_where_a_tournament_names_it(site):
    with Store(site.db) as store:
        removed = remove_user(store, "alice")
        with pytest.raises(BotSpecError, match=r"the code of removed-\d+@v1 was removed with its author's account"):
            resolve_bot(f"{removed.bots['lefty']}@v1", store)


def test_users_delete_asks_first_and_refuses_what_it_cannot_do(played):
    db = str(played.db)
    before = dump(db)
    result = CliRunner().invoke(main, ["users", "delete", "alice", "--db", db], input="n\n")
    assert result.exit_code == 1 and dump(db) == before
    result = CliRunner().invoke(main, ["users", "delete", "nobody", "--db", db, "--yes"])
    assert result.exit_code == 2 and "no user named 'nobody'" in result.output and dump(db) == before
    result = CliRunner().invoke(main, ["users", "delete", "alice", "--db", db], input="y\n")
    assert result.exit_code == 0, result.output
    assert "bots renamed: lefty -> removed-" in result.output
    new_name = re.search(r"it is now (removed-\S+) ", result.output).group(1)
    again = CliRunner().invoke(main, ["users", "delete", new_name, "--db", db, "--yes"])
    assert again.exit_code == 2 and "was removed already" in again.output


def test_a_game_of_a_version_removed_while_it_was_played_is_not_stored(site):
    """The league runner drops such a game: stored, it would bring the old name back."""
    code = BotCode(label="lefty@v1", text="")
    record = SimpleNamespace(spec=SimpleNamespace(submitted=(("lefty@v1", code),)))
    with Store(site.db) as store:
        assert not removed_meanwhile(store, record)
        remove_user(store, "alice")
        assert removed_meanwhile(store, record)


def test_a_new_bot_may_not_take_a_removed_accounts_name(site):
    with Store(site.db) as store, pytest.raises(Refused, match="kept for the bots of removed accounts"):
        submit_to_league(store, store.leagues.check("class"), store.accounts.user("bob"), "removed-1", bot())


# --- /healthz --------------------------------------------------------------------------------


def test_healthz_says_the_database_is_readable_and_when_each_league_last_played(played):
    client = played.client()
    answer = client.get("/healthz")
    assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
    body = answer.json()
    assert body["status"] == "ok" and body["database"] == "readable"
    (league,) = body["leagues"]
    assert league["name"] == "class" and league["runner"] == "finished" and league["latest_game_at"]
    assert str(played.db) not in answer.text and "alice" not in answer.text


def test_healthz_is_503_when_the_database_cannot_be_read(site):
    app = create_app(str(site.db))
    site.db.write_bytes(b"not a database at all" * 100)
    answer = Site(site.db, app, site.secrets).client().get("/healthz")
    assert answer.status_code == 503
    assert answer.json() == {"status": "unavailable", "database": "unreadable"}
    site.db.unlink()
    assert Site(site.db, app, site.secrets).client().get("/healthz").status_code == 503


def test_tables_cached_before_a_removal_are_computed_again(played):
    """A removal at the server's terminal changes no game and, for a retired bot, no
    entrant: the site's cached tables must still see that the names changed."""
    admin = played.signed_in("admin")
    assert admin_form(admin, f"/admin/leagues/class/entries/{played.secrets.entry}/retire").status_code == 200
    assert "lefty@v1" in admin.get("/api/leagues/class?all_versions=true").text  # now cached
    assert "lefty@v1" in admin.get("/standings?all=true").text
    result = CliRunner().invoke(main, ["users", "delete", "alice", "--yes", "--db", str(played.db)])
    assert result.exit_code == 0, result.output
    assert "lefty" not in admin.get("/api/leagues/class?all_versions=true").text
    assert "lefty" not in admin.get("/standings?all=true").text


def test_an_admin_unlocks_an_account_held_back_by_wrong_passwords(site):
    clock = [1_000_000.0]
    site.app.state.clock = lambda: clock[0]
    admin = site.signed_in("admin")
    right = site.secrets.passwords["bob"]
    for i in range(3):
        clock[0] += 2 ** i
        assert attempt(site, "bob", f"guess {i}", "10.6.6.6").status_code == 401
    assert attempt(site, "bob", right, "10.8.8.8").status_code == 429
    done = admin_form(admin, "/admin/users/bob/unlock")
    assert done.status_code == 200 and "bob unlocked" in done.text
    assert last_audit(site.db)[:3] == ("admin", "unlock user", "bob")
    assert attempt(site, "bob", right, "10.8.8.8").status_code == 303
    again = admin_form(admin, "/admin/users/bob/unlock")
    assert again.status_code == 200 and "no wrong passwords to forget" in again.text
    assert "Unlock bob" in admin.get("/admin").text


def test_a_removed_account_keeps_no_address_nor_wrong_password(site):
    clock = [1_000_000.0]
    site.app.state.clock = lambda: clock[0]
    assert attempt(site, "bob", site.secrets.passwords["bob"], "10.0.0.1").status_code == 303
    assert attempt(site, "bob", "guess", "10.6.6.6").status_code == 401
    with Store(site.db) as store:
        bob = store.accounts.user("bob")
        remove_user(store, "bob")
        assert not store.db.execute("select 1 from known_addresses where user_id = ?", [bob.id]).fetchall()
        assert not store.db.execute("select 1 from sign_in_failures where name = 'bob'").fetchall()


def test_healthz_says_running_only_while_a_runner_holds_the_league(played):
    """A runner killed outright (kill -9) leaves 'running' in its row: a monitor must
    see it as interrupted, and a live runner (a holder of the league's lock) as running."""
    with Store(played.db) as store:
        league = store.leagues.check("class")
        store.tournaments.set_status(league.tournament_id, "running")  # as a killed runner leaves it
    client = played.client()
    assert client.get("/healthz").json()["leagues"][0]["runner"] == "interrupted"
    with Store(played.db) as store, store.tournaments.running("class"):
        assert client.get("/healthz").json()["leagues"][0]["runner"] == "running"
