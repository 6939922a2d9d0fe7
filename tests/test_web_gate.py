"""The league's gate on the site: each tested version's page (its LLR, bounds,
pairs by points, Elo with its interval, status and reason; live while it runs),
its JSON, the links to it (the bot's page, the league's page, the author's own
page), and what an unknown version or league answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from arena.league.accounts import add_user, set_password
from arena.league.policy import submit_to_league
from arena.league.scheduler import create_league, run_league
from arena.store import Store
from arena.web.app import create_app
from tests.test_league_gate import CENTRE, GATED, lefty

PASSWORD = "alice's own password"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> TestClient:
    """A gated league: alice's v2 accepted over v1, v3 rejected, v4 waiting for its test."""
    from arena.entry import checks
    from arena.league import policy

    timed = policy.check_code
    policy.check_code = lambda code, **kw: checks.check_code(code, **{"seconds": 30.0, **kw})  # type: ignore[assignment]
    try:
        folder = tmp_path_factory.mktemp("gate-site")
        (folder / "league.toml").write_text(GATED)
        path = folder / "league.db"
        with Store(path) as store:
            league = create_league(store, "g", str(folder / "league.toml"))
            user, _, _ = add_user(store, "alice")
            set_password(store, user, PASSWORD)
            alice = store.accounts.user("alice")
            for source in (lefty(), CENTRE.encode(), lefty(" again")):
                submit_to_league(store, league, alice, "bot", source)
                run_league(store, league, workers=1, until_complete=True)
            submit_to_league(store, league, alice, "bot", lefty(" once more"))
    finally:
        policy.check_code = timed  # type: ignore[assignment]
    return TestClient(create_app(str(path)), follow_redirects=False)


def test_an_accepted_test_shows_its_numbers_and_reason(site):
    page = site.get("/leagues/g/gate/bot@v2")
    assert page.status_code == 200
    text = page.text
    assert 'class="status status-accepted">accepted<' in text and "accepted after" in text
    assert "bounds -2.94, 2.94" in text and "95% interval" in text
    pentanomial = re.search(r'<table id="pentanomial">.*?</table>', text, re.S).group(0)
    counts = [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', pentanomial)]
    data = site.get("/api/leagues/g/gate/bot@v2").json()
    assert counts == data["pentanomial"] and counts[4] == data["pairs"] > 0  # a sweep: 2 points a pair
    assert data["status"] == "accepted" and data["previous"] == "bot@v1" and data["llr"] >= data["bounds"][1]
    assert data["elo"]["low"] > 0 and data["games"]["counted"] == 2 * data["pairs"] <= data["games"]["stored"]
    assert 'data-live' in text and "data-running" not in text  # decided: nothing more to follow


def test_a_rejected_test_says_why_to_everyone_and_to_its_author(site):
    data = site.get("/api/leagues/g/gate/bot@v3").json()
    assert data["status"] == "rejected" and data["previous"] == "bot@v2" and data["llr"] <= data["bounds"][0]
    assert "previous version plays on" in data["reason"]
    author = TestClient(site.app, follow_redirects=False)
    token = re.search(r'name="csrf" value="([^"]+)"', author.get("/signin").text).group(1)
    assert author.post("/signin", data={"name": "alice", "password": PASSWORD, "csrf": token}).status_code == 303
    mine = author.get("/my").text
    assert data["reason"] in mine and 'href="/leagues/g/gate/bot%40v3"' in mine


def test_a_running_test_is_live_before_its_first_pair(site):
    page = site.get("/leagues/g/gate/bot@v4")
    assert page.status_code == 200
    assert re.search(r'id="live-gate" data-live data-running', page.text)
    assert "none yet: no pair played" in page.text and "/static/live.js" in page.text
    data = site.get("/api/leagues/g/gate/bot@v4").json()
    assert (data["status"], data["pairs"], data["elo"], data["llr"]) == ("running", 0, None, 0)


def test_the_bot_and_league_pages_link_to_the_tests(site):
    assert 'href="/leagues/g/gate/bot%40v2"' in site.get("/bots/bot@v2").text
    league = site.get("/leagues/g").text
    for version in ("bot%40v2", "bot%40v3", "bot%40v4"):
        assert f'href="/leagues/g/gate/{version}"' in league


@pytest.mark.parametrize(("url", "message"), [
    ("/leagues/g/gate/bot@v9", "no gate test of version 'bot@v9' in league 'g': its tested versions are "
                               "bot@v2, bot@v3, bot@v4"),
    ("/leagues/g/gate/bot@v1", "no gate test of version 'bot@v1'"),  # a first version: it entered at once
    ("/leagues/g/gate/random", "no gate test of version 'random'"),
    ("/leagues/nowhere/gate/bot@v2", "no league named 'nowhere'"),
])
def test_an_unknown_version_or_league_is_a_404_that_says_so(site, url, message):
    page = site.get(url)
    assert page.status_code == 404 and message.replace("'", "&#39;") in page.text
    api = site.get("/api" + url)
    assert api.status_code == 404 and message in api.json()["error"]


def test_a_hostile_version_name_is_escaped(site):
    page = site.get("/leagues/g/gate/<img src=x onerror=alert(1)>")
    assert page.status_code == 404 and "no gate test of version" in page.text
    assert "<img src=x" not in page.text and "&lt;img src=x onerror=alert(1)&gt;" in page.text


def test_a_league_with_no_tests_says_so(tmp_path):
    (tmp_path / "l.toml").write_text('bots = ["random"]\n')
    with Store(tmp_path / "l.db") as store:
        create_league(store, "plain", str(tmp_path / "l.toml"))
    client = TestClient(create_app(str(Path(tmp_path / "l.db"))))
    page = client.get("/leagues/plain/gate/x@v2")
    assert page.status_code == 404 and "no version has been tested at its gate yet" in page.text
    assert "gate-tests" not in client.get("/leagues/plain").text
