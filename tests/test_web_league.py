"""The open league on the site and over the API: who may do what (a permission matrix),
sessions and their forms, the sign-in throttle, uploads and what they refuse, and the
whole flow from a submission to the league's standings, through the API and through
``arena submit --server``. Every refusal is checked to leave the database as it was."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from itsdangerous import TimestampSigner

from arena.cli.main import main
from arena.league import accounts
from arena.league.accounts import add_user, disable_user, renew_token, set_password
from arena.league.policy import submit_to_league
from arena.league.scheduler import create_league
from arena.store import Store
from arena.web.accounts import SESSION_SECONDS
from arena.web.app import create_app
from tests.site_process import ARENA, free_port, serving
from tests.test_cli import dump

BOT = '''from arena.bot import Bot


class {name}(Bot):
    """Plays the {which} legal move{suffix}."""

    def choose_move(self, board):
        return board.legal_moves()[{index}]
'''
LEAGUE = """bots = ["random", "greedy"]
games = 2
seed = 3
[openings]
plies = 2
[league]
submissions_per_hour = 5
upload_kb = 4
"""


def bot(name: str = "Lefty", suffix: str = "", index: int = 0) -> bytes:
    return BOT.format(name=name, suffix=suffix, index=index, which="first" if index == 0 else "last").encode()


def csrf_of(text: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', text).group(1)


@dataclass
class Secrets:
    passwords: dict[str, str]
    tokens: dict[str, str]
    revoked: str  # alice's first token, replaced by a new one
    entry: int  # alice's lefty@v1 in the league
    submission: int


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, Secrets]:
    """A league with its installed bots, four accounts (an admin among them, each with a
    password of its own in place of the one issued) and alice's bot lefty@v1: copied
    for each test that changes it."""
    folder = tmp_path_factory.mktemp("open-league")
    (folder / "league.toml").write_text(LEAGUE)
    path = folder / "league.db"
    passwords, tokens = {}, {}
    with Store(path) as store:
        league = create_league(store, "class", str(folder / "league.toml"))
        for name in ("alice", "bob", "admin", "carol"):
            user, _, tokens[name] = add_user(store, name, admin=name == "admin")
            passwords[name] = f"{name}'s own password"
            set_password(store, user, passwords[name])
        revoked, tokens["alice"] = tokens["alice"], renew_token(store, "alice")
        entered = submit_to_league(store, league, store.accounts.user("alice"), "lefty", bot())
    return path, Secrets(passwords, tokens, revoked, entered.entry.id, entered.submission.id)


@dataclass
class Site:
    db: Path
    app: object
    secrets: Secrets

    def client(self, address: str = "testclient") -> TestClient:
        return TestClient(self.app, follow_redirects=False, client=(address, 50000))

    def signed_in(self, name: str, address: str = "testclient") -> TestClient:
        client = self.client(address)
        token = csrf_of(client.get("/signin").text)
        response = client.post("/signin", data={"name": name, "password": self.secrets.passwords[name],
                                                "csrf": token})
        assert response.status_code == 303, response.text
        return client


@pytest.fixture
def site(template, tmp_path) -> Site:
    path, secrets = template
    copy = tmp_path / "league.db"
    shutil.copy(path, copy)
    return Site(copy, create_app(str(copy)), secrets)


# --- the permission matrix -------------------------------------------------------------------

ROLES = ["anonymous", "alice", "bob", "admin", "disabled"]


def visitor(site: Site, role: str) -> TestClient:
    """A browser of ``role``: alice is the author of lefty@v1, bob another author; the
    disabled account (carol) signed in before the organiser disabled it."""
    if role == "anonymous":
        return site.client()
    client = site.signed_in("carol" if role == "disabled" else role)
    if role == "disabled":
        with Store(site.db) as store:
            disable_user(store, "carol")
    return client


def form_token(client: TestClient) -> str:
    """The form token of the client's session (anonymous: none)."""
    page = client.get("/signin")
    return csrf_of(page.text)


def upload(client: TestClient, name: str, source: bytes, **fields: str) -> object:
    return client.post("/upload", data={"csrf": fields.pop("csrf", None) or form_token(client), "league": "class",
                                        "name": name, **fields}, files={"file": (f"{name}.py", source)})


WEB_ACTIONS = {
    "view the league": lambda c, s: c.get("/leagues/class"),
    "view my bots": lambda c, s: c.get("/my"),
    "view the upload form": lambda c, s: c.get("/upload"),
    "upload a new bot": lambda c, s: upload(c, "newbot", bot("Newbot")),
    "replace alice's bot": lambda c, s: upload(c, "lefty", bot(suffix=", again")),
    "retire alice's bot": lambda c, s: c.post(f"/entries/{s.secrets.entry}/retire",
                                              data={"csrf": form_token(c), "confirmed": "yes"}),
    "read alice's code": lambda c, s: c.get(f"/submissions/{s.secrets.submission}/code"),
    "view the users page": lambda c, s: c.get("/users"),
    "disable bob": lambda c, s: c.post("/users/bob/disable", data={"csrf": form_token(c)}),
}
#: The status of each action for each role; 303 is a page's redirect (a form done, or
#: "sign in first"), 401 a form sent by no one signed in.
WEB_EXPECTED = {
    "view the league":      {"anonymous": 200, "alice": 200, "bob": 200, "admin": 200, "disabled": 200},
    "view my bots":         {"anonymous": 303, "alice": 200, "bob": 200, "admin": 200, "disabled": 403},
    "view the upload form": {"anonymous": 303, "alice": 200, "bob": 200, "admin": 200, "disabled": 403},
    "upload a new bot":     {"anonymous": 401, "alice": 303, "bob": 303, "admin": 303, "disabled": 403},
    "replace alice's bot":  {"anonymous": 401, "alice": 303, "bob": 403, "admin": 403, "disabled": 403},
    "retire alice's bot":   {"anonymous": 401, "alice": 303, "bob": 403, "admin": 303, "disabled": 403},
    "read alice's code":    {"anonymous": 401, "alice": 200, "bob": 403, "admin": 200, "disabled": 403},
    "view the users page":  {"anonymous": 303, "alice": 403, "bob": 403, "admin": 200, "disabled": 403},
    "disable bob":          {"anonymous": 401, "alice": 403, "bob": 403, "admin": 303, "disabled": 403},
}
WRITES = {"upload a new bot", "replace alice's bot", "retire alice's bot", "disable bob"}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action", list(WEB_ACTIONS))
def test_the_site_lets_each_visitor_do_only_what_they_may(site, role, action):
    client = visitor(site, role)
    before = dump(site.db)
    response = WEB_ACTIONS[action](client, site)
    expected = WEB_EXPECTED[action][role]
    assert response.status_code == expected, (action, role, response.text[-600:])
    assert "Traceback" not in response.text
    if expected >= 400 or action not in WRITES:
        assert dump(site.db) == before, (action, role)  # a refusal, or a page: nothing changed
    else:
        assert dump(site.db) != before, (action, role)
    if expected == 303 and action.startswith("view"):
        assert response.headers["location"].startswith("/signin?next=/")


def test_what_each_allowed_action_did(site):
    alice = site.signed_in("alice")
    entered = upload(alice, "lefty", bot(suffix="."))
    assert entered.status_code == 303 and entered.headers["location"] == "/upload"
    assert "lefty@v2 entered in league class" in alice.get("/upload").text
    with Store(site.db, read_only=True) as store:
        league = store.leagues.check("class")
        assert [e.spec for e in store.leagues.entries(league.id, status="active")] == ["random", "greedy", "lefty@v2"]
        v2 = store.leagues.entries(league.id, status="active")[-1]
    admin = site.signed_in("admin")
    retired = admin.post(f"/entries/{v2.id}/retire", data={"csrf": form_token(admin), "confirmed": "yes"})
    assert retired.status_code == 303
    assert admin.post("/users/bob/disable", data={"csrf": form_token(admin)}).status_code == 303
    with Store(site.db, read_only=True) as store:
        assert store.leagues.entry(v2.id).status == "retired" and store.accounts.user("bob").disabled
        log = [(row["user"], row["action"], row["subject"]) for row in store.accounts.audit_log()]
    assert ("alice", "submit", "lefty@v2") in log
    assert ("admin", "retire", "lefty@v2") in log and ("admin", "disable user", "bob") in log


API_ACTIONS = {
    "upload a new bot": lambda c, s, h: c.post("/api/bots", headers=h, data={"name": "newbot"},
                                               files={"file": ("newbot.py", bot("Newbot"))}),
    "replace alice's bot": lambda c, s, h: c.post("/api/bots", headers=h, data={"name": "lefty"},
                                                  files={"file": ("lefty.py", bot(suffix=", again"))}),
    "retire alice's bot": lambda c, s, h: c.post(f"/api/entries/{s.secrets.entry}/retire", headers=h),
}
TOKENS = ["none", "bad", "revoked", "alice", "bob", "admin", "disabled"]
API_EXPECTED = {
    "upload a new bot":    {"none": 401, "bad": 401, "revoked": 401, "alice": 201, "bob": 201, "admin": 201,
                            "disabled": 403},
    "replace alice's bot": {"none": 401, "bad": 401, "revoked": 401, "alice": 201, "bob": 403, "admin": 403,
                            "disabled": 403},
    "retire alice's bot":  {"none": 401, "bad": 401, "revoked": 401, "alice": 200, "bob": 403, "admin": 200,
                            "disabled": 403},
}


@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize("action", list(API_ACTIONS))
def test_the_api_lets_each_token_do_only_what_its_account_may(site, token, action):
    secrets = site.secrets
    value = {"none": None, "bad": "arena_not-a-token", "revoked": secrets.revoked,
             "disabled": secrets.tokens["carol"]}.get(token, secrets.tokens.get(token))
    if token == "disabled":
        with Store(site.db) as store:
            disable_user(store, "carol")
    headers = {} if value is None else {"Authorization": f"Bearer {value}"}
    before = dump(site.db)
    response = API_ACTIONS[action](site.client(), site, headers)
    expected = API_EXPECTED[action][token]
    assert response.status_code == expected, (action, token, response.text)
    if expected >= 400:
        assert set(response.json()) <= {"error", "checks"} and response.json()["error"]
        assert dump(site.db) == before, (action, token)
    else:
        assert dump(site.db) != before
    if expected == 401:
        assert response.headers["www-authenticate"] == "Bearer"


def test_a_submission_through_the_api_answers_with_its_version_and_checks(site):
    response = site.client().post("/api/bots", headers={"Authorization": f"Bearer {site.secrets.tokens['alice']}"},
                                  data={"name": "lefty", "description": "the same, again"},
                                  files={"file": ("lefty.py", bot(suffix=" (v2)"))})
    assert response.status_code == 201
    answer = response.json()
    assert answer["version"] == 2 and answer["spec"] == "lefty@v2" and answer["league"] == "class"
    assert answer["retired"] == ["lefty@v1"] and answer["kind"] == "bot" and len(answer["sha256"]) == 64
    assert answer["checks"]["passed"] and len(answer["checks"]["checks"]) == 7
    retired = site.client().post(f"/api/entries/{answer['entry']}/retire",
                                 headers={"Authorization": f"Bearer {site.secrets.tokens['alice']}"})
    assert retired.status_code == 200 and retired.json()["status"] == "retired"
    again = site.client().post(f"/api/entries/{answer['entry']}/retire",
                               headers={"Authorization": f"Bearer {site.secrets.tokens['alice']}"})
    assert again.status_code == 422 and "retired already" in again.json()["error"]
    assert site.client().post("/api/entries/999/retire", headers={
        "Authorization": f"Bearer {site.secrets.tokens['alice']}"}).status_code == 404


# --- uploads: what they refuse -----------------------------------------------------------------

CRASHER = b'''from arena.bot import Bot


class Crasher(Bot):
    def choose_move(self, board):
        raise RuntimeError("<script>alert(1)</script>\\x1b[31m")
'''


@pytest.mark.parametrize(("files", "fields", "status", "message"), [
    ([("file", ("big.py", b"# " + b"x" * 5000))], {}, 413, "takes at most 4 KB"),
    ([("file", ("huge.py", b"#" * 400_000))], {}, 413, "the upload is larger than"),
    ([("file", ("a.py", bot())), ("file", ("b.py", bot("Other")))], {}, 422, "exactly one file"),
    ([], {}, 422, "exactly one file"),
    ([("file", ("latin.py", "# caf\xe9\n".encode("latin-1")))], {}, 422, "not UTF-8"),
    ([("file", ("crasher.py", CRASHER))], {}, 422, "did not pass the checks"),
    ([("file", ("x.py", bot()))], {"name": "Not A Name"}, 422, "bad bot name"),
    ([("file", ("x.py", bot()))], {"name": "greedy"}, 422, "installed bot"),
    ([("file", ("x.py", bot()))], {"description": "x" * 2001}, 422, "longer than 2000"),
    ([("file", ("x.py", bot()))], {"league": "nope"}, 404, "no league named 'nope'"),
])
def test_a_refused_upload_says_why_and_changes_nothing(site, files, fields, status, message):
    before = dump(site.db)
    response = site.client().post("/api/bots", headers={"Authorization": f"Bearer {site.secrets.tokens['bob']}"},
                                  data={"name": "mine", **fields}, files=files)
    assert response.status_code == status, response.text
    assert message in response.json()["error"]
    assert dump(site.db) == before


def test_failed_checks_come_back_with_the_report_and_bot_text_escaped(site):
    bob = site.signed_in("bob")
    page = upload(bob, "crasher", CRASHER, description='<img src=x onerror="alert(2)">')
    assert page.status_code == 422
    assert "<script>alert(1)" not in page.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "\x1b" not in page.text and "\\x1b[31m" in page.text
    assert "FAIL" in page.text and "Nothing was stored" in page.text
    assert "<img src=x" not in page.text and "&lt;img src=x onerror=" in page.text  # the form keeps it, escaped
    answer = site.client().post("/api/bots", headers={"Authorization": f"Bearer {site.secrets.tokens['bob']}"},
                                data={"name": "crasher"}, files={"file": ("crasher.py", CRASHER)}).json()
    failed = [check for check in answer["checks"]["checks"] if not check["passed"]]
    assert answer["checks"]["passed"] is False and len(failed) == 1
    # Data, as JSON carries it (quoted as the arena quotes a bot's words; a page escapes it).
    assert failed[0]["detail"] == ('crashed: RuntimeError: "<script>alert(1)</script>\\x1b[31m" '
                                   '(crasher.py line 6, in choose_move)')


def test_what_an_author_wrote_is_escaped_on_every_page(site):
    source = bot("Sly", suffix="</code><script>alert(3)</script>\u202e")
    bob = site.signed_in("bob")
    assert upload(bob, "sly", source, description="<b>bold</b> claims\x1b[2J").status_code == 303
    with Store(site.db, read_only=True) as store:
        submission = store.submissions.get("sly")
    for url in ("/upload", "/my", "/leagues/class", f"/submissions/{submission.id}/code"):
        text = bob.get(url).text
        assert "<script>alert(3)" not in text and "<b>bold" not in text and "\x1b" not in text, url
        assert "\u202e" not in text, url
    code = bob.get(f"/submissions/{submission.id}/code").text
    assert "&lt;/code&gt;&lt;script&gt;alert(3)&lt;/script&gt;\\u202e" in code


def test_submissions_per_hour_are_limited_and_the_limit_is_429(site):
    token = {"Authorization": f"Bearer {site.secrets.tokens['bob']}"}
    client = site.client()
    for i in range(5):
        response = client.post("/api/bots", headers=token, data={"name": "counter"},
                               files={"file": ("c.py", bot("Counter", suffix=f" #{i}"))})
        assert response.status_code == 201, response.text
    before = dump(site.db)
    response = client.post("/api/bots", headers=token, data={"name": "counter"},
                           files={"file": ("c.py", bot("Counter", suffix=" #6"))})
    assert response.status_code == 429 and "at most 5 per author per hour" in response.json()["error"]
    assert int(response.headers["retry-after"]) > 0
    assert dump(site.db) == before


def test_a_closed_league_takes_only_its_members_and_a_site_of_two_leagues_needs_a_name(site, tmp_path):
    (tmp_path / "cup.toml").write_text('bots = ["random"]\n[league]\nclosed = true\n')
    with Store(site.db) as store:
        create_league(store, "cup", str(tmp_path / "cup.toml"))
    token = {"Authorization": f"Bearer {site.secrets.tokens['bob']}"}
    client = site.client()

    def send(**fields: str):
        return client.post("/api/bots", headers=token, data={"name": "righty", **fields},
                           files={"file": ("r.py", bot("Righty", index=-1))})

    before = dump(site.db)
    unnamed = send()
    assert unnamed.status_code == 422 and "'class', 'cup'" in unnamed.json()["error"]
    closed = send(league="cup")
    assert closed.status_code == 403 and "closed" in closed.json()["error"]
    assert dump(site.db) == before
    bob = site.signed_in("bob")
    assert '<option value="cup"' not in bob.get("/upload").text  # the form offers only what bob may enter
    with Store(site.db) as store:
        store.leagues.add_member(store.leagues.check("cup").id, store.accounts.user("bob").id)
    assert send(league="cup").status_code == 201
    assert '<option value="cup"' in bob.get("/upload").text


def test_code_is_public_in_a_league_with_public_code(site, tmp_path):
    (tmp_path / "open.toml").write_text('bots = ["random"]\n[league]\npublic_code = true\n')
    with Store(site.db) as store:
        league = create_league(store, "open", str(tmp_path / "open.toml"))
        entered = submit_to_league(store, league, store.accounts.user("bob"), "righty", bot("Righty", index=-1))
    assert site.client().get(f"/submissions/{entered.submission.id}/code").status_code == 200
    assert site.client().get(f"/submissions/{site.secrets.submission}/code").status_code == 401  # class's is not
    assert site.client().get("/submissions/999/code").status_code == 404


# --- sessions and forms ----------------------------------------------------------------------


FORMS = [("/upload", "files"), ("/entries/{entry}/retire", None), ("/users/bob/disable", None),
         ("/account/password", None), ("/account/token", None), ("/signout", None)]


@pytest.mark.parametrize(("url", "kind"), FORMS)
@pytest.mark.parametrize("csrf", ["missing", "another session's"])
def test_a_form_without_its_session_token_is_refused(site, url, kind, csrf):
    client = site.signed_in("admin")
    other = site.signed_in("bob")
    data = {"current": site.secrets.passwords["admin"], "new": "a new password", "again": "a new password",
            "name": "newbot", "league": "class"}
    if csrf != "missing":
        data["csrf"] = form_token(other)
    before = dump(site.db)
    files = {"file": ("newbot.py", bot("Newbot"))} if kind == "files" else None
    response = client.post(url.format(entry=site.secrets.entry), data=data, files=files)
    assert response.status_code == 403, response.text
    assert "security token" in response.text
    assert dump(site.db) == before
    assert client.get("/my").status_code == 200  # still signed in: the refused sign-out did nothing


def test_signing_in_needs_the_form_token_too(site):
    client = site.client()
    response = client.post("/signin", data={"name": "alice", "password": site.secrets.passwords["alice"]})
    assert response.status_code == 403
    assert client.get("/my").status_code == 303


def test_the_session_cookie_is_signed_httponly_samesite_and_expires(site, monkeypatch):
    client = site.client()
    token = csrf_of(client.get("/signin").text)
    response = client.post("/signin", data={"name": "alice", "password": site.secrets.passwords["alice"],
                                             "csrf": token})
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and f"max-age={SESSION_SECONDS}" in cookie
    assert site.secrets.passwords["alice"].lower() not in cookie
    assert client.get("/my").status_code == 200
    # A cookie changed by hand is no session.
    value = client.cookies["arena_session"]
    forged = site.client()
    forged.cookies.set("arena_session", value[:-3] + ("AAA" if not value.endswith("AAA") else "BBB"))
    assert forged.get("/my").status_code == 303
    # Eight hours after signing in, the session is over.
    now = time.time()
    monkeypatch.setattr(TimestampSigner, "get_timestamp", lambda self: int(now + SESSION_SECONDS + 5))
    assert client.get("/my").status_code == 303


def test_signing_out_ends_the_session(site):
    alice = site.signed_in("alice")
    response = alice.post("/signout", data={"csrf": form_token(alice)})
    assert response.status_code == 303 and response.headers["location"] == "/"
    assert alice.get("/my").status_code == 303


def test_a_changed_password_ends_every_other_session(site):
    here, elsewhere = site.signed_in("alice"), site.signed_in("alice")
    wrong = here.post("/account/password", data={"csrf": form_token(here), "current": "not it",
                                                 "new": "brand new pass", "again": "brand new pass"})
    assert wrong.status_code == 401
    differ = here.post("/account/password", data={"csrf": form_token(here), "current": site.secrets.passwords["alice"],
                                                  "new": "brand new pass", "again": "other new pass"})
    assert differ.status_code == 422
    short = here.post("/account/password", data={"csrf": form_token(here), "current": site.secrets.passwords["alice"],
                                                  "new": "short", "again": "short"})
    assert short.status_code == 422 and "at least 8 characters" in short.text
    done = here.post("/account/password", data={"csrf": form_token(here), "current": site.secrets.passwords["alice"],
                                                 "new": "brand new pass", "again": "brand new pass"})
    assert done.status_code == 200 and "Password changed" in done.text
    assert here.get("/my").status_code == 200
    assert elsewhere.get("/my").status_code == 303
    with Store(site.db, read_only=True) as store:
        assert accounts.sign_in(store, "alice", "brand new pass") is not None
        assert accounts.sign_in(store, "alice", site.secrets.passwords["alice"]) is None


def test_an_author_makes_their_own_new_token_and_the_old_one_stops(site):
    alice = site.signed_in("alice")
    page = alice.post("/account/token", data={"csrf": form_token(alice)})
    new = re.search(r'<code class="token" id="token">(arena_[^<]+)</code>', page.text).group(1)
    api = site.client()
    old = api.post(f"/api/entries/{site.secrets.entry}/retire",
                   headers={"Authorization": f"Bearer {site.secrets.tokens['alice']}"})
    assert old.status_code == 401
    assert api.post(f"/api/entries/{site.secrets.entry}/retire",
                    headers={"Authorization": f"Bearer {new}"}).status_code == 200


def test_a_disabled_account_cannot_sign_in_and_an_admin_cannot_disable_themselves(site):
    with Store(site.db) as store:
        disable_user(store, "carol")
    client = site.client()
    response = client.post("/signin", data={"name": "carol", "password": site.secrets.passwords["carol"],
                                            "csrf": form_token(client)})
    assert response.status_code == 401
    admin = site.signed_in("admin")
    assert admin.post("/users/admin/disable", data={"csrf": form_token(admin)}).status_code == 422
    assert admin.post("/users/nobody/disable", data={"csrf": form_token(admin)}).status_code == 404


def attempt(site: Site, name: str, password: str, address: str):
    client = site.client(address)
    return client.post("/signin", data={"name": name, "password": password, "csrf": form_token(client)})


def test_wrong_passwords_delay_only_their_own_account_and_only_from_new_addresses(site):
    clock = [1_000_000.0]
    site.app.state.clock = lambda: clock[0]
    right = site.secrets.passwords["alice"]
    assert attempt(site, "alice", right, "10.0.0.1").status_code == 303  # alice's own address, from now on
    waits = []
    for i in range(10):
        assert attempt(site, "alice", f"guess {i}", "10.6.6.6").status_code == 401
        delayed = attempt(site, "alice", f"guess {i}", "10.6.6.6")
        assert delayed.status_code == 429 and "try again in" in delayed.text
        waits.append(int(delayed.headers["retry-after"]))
        clock[0] += waits[-1]
    assert waits == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300]  # doubling, up to five minutes
    attempt(site, "alice", "one more", "10.6.6.6")
    # The right password from an address alice never signed in from waits too, unchecked.
    refused = attempt(site, "alice", right, "10.7.7.7")
    assert refused.status_code == 429 and refused.headers["retry-after"] == "300"
    assert "5 minutes" in refused.text
    # Another account is never held up by alice's failures, not even from that address.
    assert attempt(site, "bob", site.secrets.passwords["bob"], "10.6.6.6").status_code == 303
    # The state is in the database: a restarted server (another process) agrees.
    again = create_app(str(site.db))
    again.state.clock = lambda: clock[0]
    assert attempt(Site(site.db, again, site.secrets), "alice", right, "10.7.7.7").status_code == 429
    # From where alice signed in before, the right password is never delayed, and ends the delay.
    assert attempt(site, "alice", right, "10.0.0.1").status_code == 303
    assert attempt(site, "alice", right, "10.7.7.7").status_code == 303
    # Addresses are stored only as keyed hashes.
    stored = str(dump(site.db))
    assert "10.0.0.1" not in stored and "10.6.6.6" not in stored and "10.7.7.7" not in stored


def test_a_delay_ends_in_its_time_or_when_the_organiser_unlocks_the_account(site):
    clock = [1_000_000.0]
    site.app.state.clock = lambda: clock[0]
    right = site.secrets.passwords["bob"]
    for i in range(4):
        clock[0] += 2 ** i  # the wait after the wrong password before
        assert attempt(site, "bob", f"guess {i}", "10.6.6.6").status_code == 401
    assert attempt(site, "bob", right, "10.7.7.7").status_code == 429
    clock[0] += 8
    assert attempt(site, "bob", right, "10.7.7.7").status_code == 303  # waited long enough
    for i in range(4):
        clock[0] += 2 ** i  # the wait after the wrong password before
        assert attempt(site, "bob", f"guess {i}", "10.6.6.6").status_code == 401
    assert attempt(site, "bob", right, "10.8.8.8").status_code == 429
    result = CliRunner().invoke(main, ["users", "unlock", "bob", "--db", str(site.db)])
    assert result.exit_code == 0 and "user bob unlocked" in result.output
    assert attempt(site, "bob", right, "10.8.8.8").status_code == 303
    with Store(site.db, read_only=True) as store:
        assert ("unlock user", "bob") in [(row["action"], row["subject"]) for row in store.accounts.audit_log()]
    nobody = CliRunner().invoke(main, ["users", "unlock", "nobody", "--db", str(site.db)])
    assert nobody.exit_code == 2 and "no user named 'nobody'" in nobody.output


def test_names_that_do_not_exist_are_delayed_alike(site):
    """Whether a name is delayed tells no one whether an account of that name exists."""
    clock = [1_000_000.0]
    site.app.state.clock = lambda: clock[0]
    for name in ("alice", "nosuchname"):
        assert attempt(site, name, "guess", "10.6.6.6").status_code == 401
        assert attempt(site, name, "guess", "10.6.6.6").status_code == 429


def test_changing_the_password_is_delayed_after_wrong_current_passwords(site):
    clock = [1_000_000.0]
    site.app.state.clock = lambda: clock[0]
    alice = site.signed_in("alice", "10.0.0.1")
    for i in range(3):
        attempt(site, "alice", f"guess {i}", "10.6.6.6")
    mine = alice.post("/account/password", data={"csrf": form_token(alice), "current": site.secrets.passwords["alice"],
                                                  "new": "brand new pass", "again": "brand new pass"})
    assert mine.status_code == 200  # from alice's own address
    thief = TestClient(site.app, follow_redirects=False, client=("10.6.6.6", 50000), cookies=alice.cookies)
    stolen = thief.post("/account/password", data={"csrf": form_token(thief), "current": "guess",
                                                   "new": "taken over!", "again": "taken over!"})
    assert stolen.status_code == 401
    delayed = thief.post("/account/password", data={"csrf": form_token(thief), "current": "brand new pass",
                                                    "new": "taken over!", "again": "taken over!"})
    assert delayed.status_code == 429 and delayed.headers["retry-after"] == "1"


def test_an_issued_password_works_once_and_must_be_replaced_before_anything_else(site):
    with Store(site.db) as store:
        issued = accounts.reset_password(store, "alice")
    client = site.client()
    token = csrf_of(client.get("/signin").text)
    signed = client.post("/signin", data={"name": "alice", "password": issued, "csrf": token, "next": "/upload"})
    assert signed.status_code == 303 and signed.headers["location"] == "/account/new-password?next=/upload"
    for path in ("/my", "/upload", "/account", f"/submissions/{site.secrets.submission}/code"):
        response = client.get(path)
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/account/new-password"), path
    before = dump(site.db)
    for refused in (upload(client, "newbot", bot("Newbot")),
                    client.post("/account/token", data={"csrf": form_token(client)}),
                    client.post(f"/entries/{site.secrets.entry}/retire", data={"csrf": form_token(client)})):
        assert refused.status_code == 403 and "serves only to choose your own" in refused.text
    assert dump(site.db) == before
    assert "/retire" not in client.get("/leagues/class").text  # the league page offers nothing to do
    page = client.get("/account/new-password")
    assert page.status_code == 200 and "Choose your password" in page.text
    form = {"csrf": form_token(client), "next": "/upload"}
    assert client.post("/account/new-password", data={**form, "new": "mine at last", "again": "other"}
                       ).status_code == 422
    same = client.post("/account/new-password", data={**form, "new": issued, "again": issued})
    assert same.status_code == 422 and "choose another" in same.text
    done = client.post("/account/new-password", data={**form, "new": "mine at last", "again": "mine at last"})
    assert done.status_code == 303 and done.headers["location"] == "/upload"
    assert client.get("/upload").status_code == 200
    assert client.get("/account/new-password").status_code == 303  # nothing left to choose
    assert attempt(site, "alice", issued, "testclient").status_code == 401  # the issued password is spent
    assert attempt(site, "alice", "mine at last", "testclient").status_code == 303


def test_an_api_token_works_while_the_issued_password_waits(site):
    with Store(site.db) as store:
        accounts.reset_password(store, "alice")
    retired = site.client().post(f"/api/entries/{site.secrets.entry}/retire",
                                 headers={"Authorization": f"Bearer {site.secrets.tokens['alice']}"})
    assert retired.status_code == 200


@pytest.mark.parametrize("command", [["users", "add", "dave"], ["users", "password", "alice"]])
def test_the_organiser_is_told_that_an_issued_password_works_once(site, command):
    result = CliRunner().invoke(main, [*command, "--db", str(site.db)])
    assert result.exit_code == 0 and "The password is for one thing only" in result.output
    with Store(site.db, read_only=True) as store:
        assert store.accounts.user(command[2]).must_change_password


def session_cookie(client: TestClient, **headers: str) -> str:
    """The Set-Cookie of the sign-in page (which starts a session for its form token), in lower case."""
    response = client.get("/signin", headers=headers)
    assert response.status_code == 200
    return response.headers["set-cookie"].lower()


def test_the_session_cookie_is_secure_when_asked_or_over_https(site):
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    assert "secure" not in session_cookie(site.client())  # plain HTTP, as on a laptop
    over_https = TestClient(site.app, follow_redirects=False, base_url="https://league.example")
    assert "; secure" in session_cookie(over_https)
    told = TestClient(create_app(str(site.db), secure_cookies=True), follow_redirects=False)
    assert "; secure" in session_cookie(told)  # arena serve --secure-cookies
    # arena serve --behind-proxy: uvicorn trusts the proxy on this machine for the request's scheme, no one else.
    proxied = ProxyHeadersMiddleware(site.app, trusted_hosts="127.0.0.1")
    proxy = TestClient(proxied, follow_redirects=False, client=("127.0.0.1", 40000))
    assert "; secure" in session_cookie(proxy, **{"X-Forwarded-Proto": "https"})
    assert "secure" not in session_cookie(proxy, **{"X-Forwarded-Proto": "http"})
    stranger = TestClient(proxied, follow_redirects=False, client=("10.1.1.1", 40000))
    assert "secure" not in session_cookie(stranger, **{"X-Forwarded-Proto": "https"})
    # Signed in over HTTPS, the session's cookie stays Secure.
    token = csrf_of(over_https.get("/signin").text)
    signed = over_https.post("/signin", data={"name": "alice", "password": site.secrets.passwords["alice"],
                                              "csrf": token})
    assert signed.status_code == 303 and "; secure" in signed.headers["set-cookie"].lower()
    assert "--secure-cookies" in CliRunner().invoke(main, ["serve", "--help"]).output


GET_ROUTES = ["/", "/standings?all=true", "/leagues", "/leagues/class", "/api/leagues", "/api/leagues/class",
              "/signin", "/docs", "/static/site.css", "/api/standings?all=true", "/games", "/api/games",
              "/my", "/games/99999", "/api/games/99999", "/no/such/page"]


@pytest.mark.parametrize("path", GET_ROUTES)
def test_every_get_route_answers_head_and_every_answer_says_nosniff(site, path):
    client = site.client()
    got, head = client.get(path), client.head(path)
    assert head.status_code == got.status_code != 405, path
    assert head.content == b""
    assert head.headers.get("content-type") == got.headers.get("content-type")
    for response in (got, head):
        assert response.headers["x-content-type-options"] == "nosniff", path


def test_head_is_refused_where_get_is_and_errors_of_every_kind_say_nosniff(site):
    client = site.client()
    assert client.head("/signout").status_code == 405  # a form's address only
    bad = client.post("/api/bots", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401 and bad.headers["x-content-type-options"] == "nosniff"
    assert client.get("/games?page=x").headers["x-content-type-options"] == "nosniff"  # 422

    def boom() -> None:
        raise RuntimeError("a bug")

    site.app.add_api_route("/boom", boom)
    crash = TestClient(site.app, raise_server_exceptions=False).get("/boom")
    assert crash.status_code == 500 and crash.headers["x-content-type-options"] == "nosniff"


def test_every_429_and_503_says_when_to_come_back():
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from arena.web.http import RETRY_SECONDS, HttpRules

    def status(code: int, own: str | None = None):
        return lambda request: PlainTextResponse("later", code, headers={"Retry-After": own} if own else None)

    app = HttpRules(Starlette(routes=[Route("/busy", status(503)), Route("/many", status(429)),
                                      Route("/own", status(429, "7")), Route("/fine", status(200))]))
    client = TestClient(app)
    assert client.get("/busy").headers["retry-after"] == str(RETRY_SECONDS)
    assert client.get("/many").headers["retry-after"] == str(RETRY_SECONDS)
    assert client.get("/own").headers["retry-after"] == "7"
    assert "retry-after" not in client.get("/fine").headers


@pytest.mark.parametrize("path", ["/games/99999", "/api/games/99999", "/leagues/nope", "/api/leagues/nope",
                                  "/standings?tournament=nope", "/api/standings?tournament=nope"])
def test_the_sites_errors_name_no_command_nor_the_servers_files(site, path):
    response = site.client().get(path)
    assert response.status_code == 404
    text = response.json()["error"] if path.startswith("/api/") else response.text
    assert "'arena " not in text and "arena games" not in text and str(site.db) not in text, text
    assert "no " in text


def test_an_empty_site_says_so_in_its_own_words(tmp_path):
    db = tmp_path / "empty.db"
    Store(db).close()
    client = TestClient(create_app(str(db)))
    for path in ("/standings", "/api/standings", "/crosstable"):
        response = client.get(path)
        text = response.text
        assert response.status_code == 404 and "no tournaments here yet" in text, path
        assert "arena tournament run" not in text and str(db) not in text, path
    with Store(db) as store, pytest.raises(Exception, match="run 'arena tournament run' first"):
        from arena.ratings.selection import select
        select(store, None, False)  # the command line keeps its advice


# --- the same code twice, and files with a byte-order mark --------------------------------------


def test_the_same_code_twice_in_one_league_is_refused_naming_the_entrant(site):
    bob = site.signed_in("bob")
    before = dump(site.db)
    for author, name in (("bob", "copycat"), ("alice", "lefty-again")):
        response = site.client().post("/api/bots", headers={"Authorization": f"Bearer {site.secrets.tokens[author]}"},
                                      data={"name": name}, files={"file": ("copy.py", bot())})
        assert response.status_code == 422, response.text
        assert "already in league 'class'" in response.json()["error"]
        assert "lefty@v1 by alice" in response.json()["error"]
    page = upload(bob, "copycat", bot())
    assert page.status_code == 422 and "lefty@v1 by alice" in page.text
    assert dump(site.db) == before
    # A retired entrant's code is still taken.
    site.client().post(f"/api/entries/{site.secrets.entry}/retire",
                       headers={"Authorization": f"Bearer {site.secrets.tokens['alice']}"})
    again = site.client().post("/api/bots", headers={"Authorization": f"Bearer {site.secrets.tokens['bob']}"},
                               data={"name": "copycat"}, files={"file": ("copy.py", bot())})
    assert again.status_code == 422 and "retired" in again.json()["error"]


def test_a_bot_file_with_a_byte_order_mark_is_taken_and_hashed_without_it(site, tmp_path):
    from arena.text import content_hash

    source = bot("Bommy", index=-1)
    response = site.client().post("/api/bots", headers={"Authorization": f"Bearer {site.secrets.tokens['bob']}"},
                                  data={"name": "bommy"}, files={"file": ("bommy.py", b"\xef\xbb\xbf" + source)})
    assert response.status_code == 201, response.text
    assert response.json()["sha256"] == content_hash(source.decode())
    with Store(site.db, read_only=True) as store:
        assert store.submissions.get("bommy").source == source.decode()
    # The same code without the mark is the same code.
    plain = site.client().post("/api/bots", headers={"Authorization": f"Bearer {site.secrets.tokens['bob']}"},
                               data={"name": "bommy2"}, files={"file": ("bommy.py", source)})
    assert plain.status_code == 422 and "bommy@v1 by bob" in plain.json()["error"]


def test_passwords_are_never_logged_nor_echoed(site, caplog):
    caplog.set_level("DEBUG")
    client = site.client()
    secret = "hunter2-not-the-password"
    page = client.post("/signin", data={"name": "alice", "password": secret, "csrf": form_token(client)})
    assert page.status_code == 401 and secret not in page.text
    assert secret not in caplog.text
    assert secret not in str(dump(site.db))


def test_next_never_leaves_the_site(site):
    client = site.client()
    for target, lands in (("//evil.example/x", "/my"), ("https://evil.example", "/my"), ("/upload", "/upload"),
                          ("/\\evil.example", "/my")):
        response = client.post("/signin", data={"name": "alice", "password": site.secrets.passwords["alice"],
                                                "csrf": form_token(client), "next": target})
        assert response.headers["location"] == lands, target


# --- the pages ---------------------------------------------------------------------------------


def test_my_bots_shows_versions_checks_games_and_forfeits(site):
    with Store(site.db) as store:
        league = store.leagues.check("class")
        # It passes the checks (they ask only the first player's moves) and forfeits every game as second.
        submit_to_league(store, league, store.accounts.user("bob"), "sleepy", b'''from arena.bot import Bot


class Sleepy(Bot):
    def new_game(self, rules, player, seed):
        self.player = player

    def choose_move(self, board):
        if self.player == 1:
            raise RuntimeError("tired")
        return board.legal_moves()[0]
''')
    result = CliRunner().invoke(main, ["league", "run", "class", "--until-complete", "--workers", "1",
                                       "--db", str(site.db)])
    assert result.exit_code == 0, result.output
    bob = site.signed_in("bob")
    page = bob.get("/my").text
    assert "sleepy@v1" in page and "ok   loads and starts a game" in page
    record = re.search(r"(\d+) games: (\d+) won, (\d+) drawn, (\d+) lost \([\d.]+%\); (\d+) lost by forfeit", page)
    games, won, drawn, lost, forfeited = map(int, record.groups())
    assert games == 6 and won + drawn + lost == 6  # 3 opponents x 2 games
    assert forfeited == 3  # every game as second
    assert ('<td class="num">3</td><td class="reason">crashed: RuntimeError: &#34;tired&#34; '
            '(sleepy@v1 line 10, in choose_move)</td>') in page
    assert page.count('href="/games/') == 6 and "<td>lefty@v1</td>" in page  # its games, alice's bot among them
    assert 'action="/entries/' in page and "/submissions/" in page  # retire, and its code
    assert 'data-spec="lefty@v1"' not in page  # alice's bot is not bob's
    # Its rank and Elo as the league's page has them, its W-D-L and forfeits, and a link to its games.
    rows = bob.get("/api/leagues/class").json()["standings"]
    row = next(r for r in rows if r["bot"] == "sleepy@v1")
    facts = re.search(r'<dl class="facts rating" data-spec="sleepy@v1">(.*?)</dl>', page, re.S).group(1)
    assert f'<dd class="rank">{row["rank"]} of {len(rows)}</dd>' in facts
    elo = {">": f"&gt; {row['elo'] - row['elo_minus']:.0f}", "<": f"&lt; {row['elo'] + row['elo_plus']:.0f}",
           None: f"{row['elo']:.0f}"}[row["bound"]]
    assert re.search(rf'<dd class="elo"[^>]*>{elo}', facts), facts
    assert f'<dd class="wdl">{won}-{drawn}-{lost}</dd>' in facts and f'<dd class="forfeited">{forfeited}</dd>' in facts
    assert 'href="/games?bot=sleepy%40v1"' in facts
    assert bob.get("/games?bot=sleepy%40v1").text.count('<th scope="row" class="num"><a href="/games/') == 6


def test_an_upload_redirects_and_its_outcome_is_shown_once(site):
    """Post/redirect/get: an upload that entered answers 303 to the upload page, which
    shows the outcome and the checks once; reloading it sends nothing and enters nothing."""
    alice = site.signed_in("alice")
    entered = upload(alice, "lefty", bot(suffix=", again"))
    assert entered.status_code == 303 and entered.headers["location"] == "/upload"
    after = dump(site.db)
    shown = alice.get("/upload")
    assert shown.status_code == 200 and "lefty@v2 entered in league class" in shown.text
    assert "it replaces lefty@v1, retired" in shown.text
    assert shown.text.count('<tr class="ok"><td>ok</td>') == 7  # the checks it passed
    reloaded = alice.get("/upload")
    assert "entered in league" not in reloaded.text and 'id="checks"' not in reloaded.text
    assert dump(site.db) == after  # the reloads entered nothing
    assert "entered in league" not in site.signed_in("bob").get("/upload").text  # the note is alice's session's
    refused = upload(alice, "lefty", bot(suffix=", again"))  # the same code again: refused, shown in place
    assert refused.status_code == 422 and "Not entered" in refused.text


def test_retiring_asks_first_and_the_form_token_still_holds(site):
    alice, bob = site.signed_in("alice"), site.signed_in("bob")
    path = f"/entries/{site.secrets.entry}/retire"
    before = dump(site.db)
    asked = alice.post(path, data={"csrf": form_token(alice), "next": "/leagues/class"})
    assert asked.status_code == 200 and "Retire lefty@v1 from league class?" in asked.text
    assert f'action="{path}"' in asked.text and '<input type="hidden" name="confirmed" value="yes">' in asked.text
    assert '<input type="hidden" name="next" value="/leagues/class">' in asked.text
    assert 'href="/leagues/class">Cancel' in asked.text and csrf_of(asked.text) == form_token(alice)
    assert asked.headers["Cache-Control"] == "no-store"
    assert dump(site.db) == before  # asked, nothing done
    # The confirmed form without this session's token, or from someone else's session, is refused.
    assert alice.post(path, data={"csrf": "forged", "confirmed": "yes"}).status_code == 403
    assert bob.post(path, data={"csrf": form_token(bob)}).status_code == 403  # refused before asking
    assert dump(site.db) == before
    done = alice.post(path, data={"csrf": form_token(alice), "confirmed": "yes", "next": "/leagues/class"})
    assert done.status_code == 303 and done.headers["location"] == "/leagues/class"
    with Store(site.db, read_only=True) as store:
        assert store.leagues.entry(site.secrets.entry).status == "retired"
    # The pages mark the form for the browser's own question (static/confirm.js).
    assert 'data-confirm="Retire' in site.signed_in("admin").get("/leagues/class").text


def test_the_league_page_shows_active_entrants_and_all_versions_on_request(site):
    with Store(site.db) as store:
        league = store.leagues.check("class")
    CliRunner().invoke(main, ["league", "run", "class", "--until-complete", "--workers", "1", "--db", str(site.db)])
    with Store(site.db) as store:
        submit_to_league(store, league, store.accounts.user("alice"), "lefty", bot(suffix=", v2"))
    CliRunner().invoke(main, ["league", "run", "class", "--until-complete", "--workers", "1", "--db", str(site.db)])
    client = site.client()
    active = client.get("/leagues/class").text
    assert '<tr data-bot="lefty@v2">' in active and '<tr data-bot="lefty@v1">' not in active
    assert "?tournament=class" in active  # the crosstable, colours and games of its tournament row
    every = client.get("/leagues/class?all_versions=true").text
    assert '<tr data-bot="lefty@v1">' in every and "retired" in every
    assert client.get("/leagues/nope").status_code == 404
    assert client.get("/leagues/class?all_versions=maybe").status_code == 422
    for flags in ([], ["--all-versions"]):
        result = CliRunner().invoke(main, ["league", "standings", "class", "--format", "json", "--db", str(site.db),
                                           *flags])
        query = "?all_versions=true" if flags else ""
        assert client.get(f"/api/leagues/class{query}").json() == json.loads(result.output)
    listing = client.get("/leagues").text
    assert 'href="/leagues/class"' in listing
    assert client.get("/api/leagues").json()[0]["active"] == 3


def test_a_league_without_games_says_so(site):
    text = site.client().get("/leagues/class").text
    assert "No games yet" in text and "lefty@v1" in text
    assert site.client().get("/api/leagues/class").json()["standings"] == []


def test_the_upload_form_and_api_are_described(site):
    schema = site.client().get("/openapi.json").json()
    body = schema["paths"]["/api/bots"]["post"]
    assert {"201", "401", "403", "413", "422", "429"} <= set(body["responses"])
    assert "file" in body["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
    assert "/api/entries/{entry_id}/retire" in schema["paths"]
    page = site.signed_in("alice").get("/upload").text
    for label in ('for="league"', 'for="name"', 'for="description"', 'for="file"'):
        assert label in page


# --- the whole flow, over HTTP, with the league run by another process ------------------------


def run_league(db: Path) -> None:
    subprocess.run([ARENA, "league", "run", "class", "--until-complete", "--workers", "2", "--db", str(db)],
                   check=True, capture_output=True, timeout=300)


def api_submit(base: str, token: str, name: str, source: bytes) -> dict:
    with httpx2.Client(base_url=base, timeout=60) as client:  # a real connection to the server's process
        response = client.post("/api/bots", headers={"Authorization": f"Bearer {token}"}, data={"name": name},
                               files={"file": (f"{name}.py", source)})
    assert response.status_code == 201, response.text
    return response.json()


def cli_submit(base: str, token: str, name: str, source: bytes, folder: Path) -> dict:
    path = folder / f"{name}.py"
    path.write_bytes(source)
    done = subprocess.run([ARENA, "submit", str(path), "--server", base], capture_output=True, text=True,
                          env={**os.environ, "ARENA_TOKEN": token}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("  ok    ") == 7  # the check lines, as a local submit prints them
    spec = re.search(r"^Submitted (\S+) \(bot, sha256 [0-9a-f]{12}\) to league 'class' at ", done.stdout, re.M)
    retired = re.search(r"; it replaces (\S+);", done.stdout)
    return {"spec": spec.group(1), "retired": [retired.group(1)] if retired else []}


def standings(base: str, all_versions: bool = False) -> dict[str, int]:
    query = "?all_versions=true" if all_versions else ""
    with urllib.request.urlopen(f"{base}/api/leagues/class{query}", timeout=10) as response:
        return {row["bot"]: row["games"] for row in json.load(response)["standings"]}


@pytest.mark.parametrize("way", ["api", "cli"])
def test_two_authors_submit_the_league_plays_them_and_a_new_version_replaces_the_old(template, tmp_path, way):
    db = tmp_path / "league.db"
    with Store(template[0], read_only=True) as source, Store(db) as target:
        source.db.conn.backup(target.db.conn)
    with Store(db) as store:  # from nothing: the template's own bot is retired first
        store.leagues.retire_entry(template[1].entry)
    tokens = template[1].tokens

    def submit(token: str, name: str, source: bytes) -> dict:
        return api_submit(base, token, name, source) if way == "api" else cli_submit(base, token, name, source,
                                                                                     tmp_path)

    with serving(db) as base:
        assert submit(tokens["alice"], "lefty", bot(suffix=" (alice)"))["spec"] == "lefty@v2"
        assert submit(tokens["bob"], "righty", bot("Righty", index=-1))["spec"] == "righty@v1"
        run_league(db)
        played = standings(base)
        assert set(played) == {"random", "greedy", "lefty@v2", "righty@v1"}
        assert played["lefty@v2"] == played["righty@v1"] == 6  # 3 opponents x 2 games
        again = submit(tokens["alice"], "lefty", bot(suffix=" (alice, better)"))
        assert again["spec"] == "lefty@v3" and again["retired"] == ["lefty@v2"]
        run_league(db)
        played = standings(base)
        assert set(played) == {"random", "greedy", "lefty@v3", "righty@v1"} and played["lefty@v3"] == 6
        assert standings(base, all_versions=True)["lefty@v2"] == 6  # its games stay
        with urllib.request.urlopen(f"{base}/leagues/class", timeout=10) as response:
            page = response.read().decode()
        assert '<tr data-bot="lefty@v3">' in page and '<tr data-bot="righty@v1">' in page


def test_submit_to_a_server_fails_in_one_line(template, tmp_path, monkeypatch):
    monkeypatch.delenv("ARENA_TOKEN", raising=False)
    path = tmp_path / "lefty.py"
    path.write_bytes(bot())
    broken = tmp_path / "broken.py"
    broken.write_text("x = (\n")
    runner = CliRunner()
    port = free_port()  # nothing listens there
    cases = [
        (["--server", "http://127.0.0.1:8000"], "needs your API token"),
        (["--server", "ftp://example", "--token", "t"], "bad --server 'ftp://example'"),
        (["--server", f"http://127.0.0.1:{port}", "--token", "t"], "cannot reach"),
        (["--token", "t"], "--token and --league go with --server"),
    ]
    for flags, message in cases:
        result = runner.invoke(main, ["submit", str(path), *flags])
        assert result.exit_code == 2, (flags, result.output)
        assert message in result.output and result.output.count("\n") == 1, result.output
    db = tmp_path / "league.db"
    shutil.copy(template[0], db)
    with serving(db) as base:
        bad = runner.invoke(main, ["submit", str(path), "--server", base, "--token", "arena_nothing"])
        assert bad.exit_code == 2 and "refused" in bad.output and "(401)" in bad.output
        assert bad.output.count("\n") == 1
        failing = runner.invoke(main, ["submit", str(broken), "--server", base],
                                env={"ARENA_TOKEN": template[1].tokens["bob"]})
        assert failing.exit_code == 2
        lines = failing.output.splitlines()
        assert lines[0].startswith("  FAIL  loads and starts a game") and "(422)" in lines[-1] and len(lines) == 2
        elsewhere = runner.invoke(main, ["submit", str(path), "--server", base + "/static", "--token", "t"])
        assert elsewhere.exit_code == 2 and "answered 405 without the arena's JSON" in elsewhere.output


WRITER = """
import sys
from arena.store import Store
store = Store(sys.argv[1])
store.accounts.audit("write", "from another process")
print("written", flush=True)
sys.stdin.readline()
for i in range(50):
    store.accounts.audit("write", f"more {i}")
store.close()
"""


def test_the_site_keeps_reading_while_another_process_writes_and_stops(template, tmp_path):
    """The site holds connections while `arena league run` writes and ends: opening a
    store in the site's process must not drop their locks, or the writer, ending,
    removes the -wal and -shm files under them ("disk I/O error")."""
    db = tmp_path / "league.db"
    shutil.copy(template[0], db)
    reader = Store(db, read_only=True)  # a request in flight, or the server's own
    reader.accounts.users()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "written"
        for _ in range(3):  # other requests come and go
            Store(db, read_only=True).close()
            with Store(db) as other:
                other.accounts.users()
        writer.stdin.write("go\n")
        writer.stdin.flush()
        assert writer.wait(30) == 0
        assert Path(str(db) + "-wal").exists() and Path(str(db) + "-shm").exists()  # the reader still holds them
        with Store(db, read_only=True) as later:
            assert len(later.accounts.audit_log()) == len(reader.accounts.audit_log())
            assert later.accounts.audit_log()[-1]["subject"] == "more 49"
    finally:
        reader.close()
        if writer.poll() is None:
            writer.kill()


def test_a_table_counts_one_state_of_the_database_while_games_arrive(template, tmp_path, monkeypatch):
    """The standings are counted in several queries; a game stored between two of them
    (by a new bot, here) must not reach the second only: one read transaction."""
    from arena.engine.game import Rules
    from arena.ratings.selection import Selection
    from arena.records import GameSpec
    from arena.referee.referee import play_game
    from arena.store import BotIdentity

    db = tmp_path / "league.db"
    shutil.copy(template[0], db)
    with Store(db) as store:
        league = store.leagues.check("class")
        ids = {spec: store.bots.id_of(BotIdentity(spec, spec, {}, "test")) for spec in ("random", "greedy")}
        game = play_game(GameSpec(key="g1", pairing="p", rules=Rules(), first="random", second="greedy", seed=1))
        store.games.record(league.tournament_id, [game], ids)
    counted = Selection.results

    def with_a_game_arriving(selection):
        with Store(db) as writer:  # another process's league run, storing a game of a bot not seen yet
            blocker = writer.bots.id_of(BotIdentity("blocker", "blocker", {}, "t"))
            newcomer = {"random": ids["random"], "blocker": blocker}
            late = play_game(GameSpec(key="g2", pairing="p", rules=Rules(), first="random", second="blocker", seed=2))
            writer.games.record(league.tournament_id, [late], newcomer)
        return counted(selection)

    monkeypatch.setattr(Selection, "results", with_a_game_arriving)
    client = TestClient(create_app(str(db)))
    response = client.get("/api/standings", params={"tournament": "class"})
    assert response.status_code == 200, response.text
    assert {row["bot"] for row in response.json()["standings"]} == {"random", "greedy"}
    monkeypatch.setattr(Selection, "results", counted)
    later = client.get("/api/standings", params={"tournament": "class"}).json()
    assert {row["bot"] for row in later["standings"]} == {"random", "greedy", "blocker"}
