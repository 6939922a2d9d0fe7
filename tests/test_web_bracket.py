"""A knockout's bracket on the site: the page (a table per round, winners marked,
how each match was decided), its JSON as the CLI's, a bot's hostile name escaped,
and a clear 404 for an unknown tournament or one that is not a knockout."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from arena.cli.main import main
from arena.engine.game import Rules
from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.store import BotIdentity, Store
from arena.web.app import create_app

HOSTILE = '<script>alert("x")</script>\x1b[31m'
SMALL = Rules(width=5, height=4, connect=3)
FIVE = "random,random:stream=2,random:stream=3,random:stream=4,random:stream=5"


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> str:
    """A knockout of five random bots, a round robin, and a knockout stored by hand
    whose upper entrant's name is markup and a terminal escape."""
    path = str(tmp_path_factory.mktemp("site") / "league.db")
    for args in (["--format", "knockout", "--bots", FIVE, "--decider", "coin", "--name", "cup"],
                 ["--bots", "random,greedy", "--games", "2", "--name", "rr"]):
        result = CliRunner().invoke(main, ["tournament", "run", "--db", path, "--workers", "1", *args],
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.output
    with Store(path) as store:
        identity = {"format": "knockout", "bots": [HOSTILE, "greedy"], "challengers": [], "games": 2, "seed": 1,
                    "rules": SMALL.as_dict(), "knockout": {"extra_pairs": 0, "seeding": "listed", "decider": "coin"}}
        tid = store.tournaments.start("hostile", "knockout", identity, identity, 1)
        ids = {"random": store.bots.id_of(BotIdentity(HOSTILE, HOSTILE, {}, "test")),
               "greedy": store.bots.id_of(BotIdentity("greedy", "greedy", {}, "test"))}
        records = [play_game(GameSpec(key=f"r1-m01-o00-{half}", pairing="r1-m01", rules=SMALL, first=first,
                                      second=second, seed=7))
                   for half, first, second in (("a", "random", "greedy"), ("b", "greedy", "random"))]
        store.games.record(tid, records, ids)
        store.tournaments.set_status(tid, "finished")
    return path


@pytest.fixture(scope="module")
def client(league):
    return TestClient(create_app(league))


def test_the_bracket_page_shows_every_round_and_marks_the_winners(client, league):
    response = client.get("/bracket", params={"tournament": "cup"})
    assert response.status_code == 200
    text = response.text
    for title in ("Quarter-finals", "Semi-finals", "Final"):
        assert f"<caption>{title}</caption>" in text
    data = client.get("/api/bracket", params={"tournament": "cup"}).json()
    champion = data["champion"]["name"]
    assert 'Champion: <strong class="winner"><a href="/bots/' in text and f">{champion}</a></strong>" in text
    assert text.count("(bye)") == 3 and text.count("✓") == 7  # every match's winner, byes included
    for matches in data["rounds"]:
        for match in matches:
            assert f'<tbody data-match="{match["key"]}">' in text
    assert '<td rowspan="2">score</td>' in text or '<td rowspan="2">coin (' in text


def test_the_bracket_json_is_the_cli_s(client, league):
    result = CliRunner().invoke(main, ["standings", "--db", league, "--tournament", "cup", "--format", "json"])
    assert result.exit_code == 0
    assert client.get("/api/bracket", params={"tournament": "cup"}).json() == json.loads(result.output)["bracket"]


def test_the_tournament_page_links_to_its_bracket_only_for_a_knockout(client):
    assert 'href="/bracket?tournament=cup"' in client.get("/tournaments/cup").text
    assert "/bracket?" not in client.get("/tournaments/rr").text


def test_a_hostile_name_is_escaped_in_the_bracket(client):
    response = client.get("/bracket", params={"tournament": "hostile"})
    assert response.status_code == 200
    assert "<script>alert" not in response.text and "\x1b" not in response.text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in response.text
    data = client.get("/api/bracket", params={"tournament": "hostile"}).json()
    assert data["entrants"][0]["name"] == HOSTILE and data["champion"] is not None  # JSON: names as they are


@pytest.mark.parametrize("path", ["/bracket", "/api/bracket"])
def test_an_unknown_tournament_is_a_404_naming_those_there_are(client, path):
    response = client.get(path, params={"tournament": "nope"})
    assert response.status_code == 404
    said = response.json()["error"] if path.startswith("/api") else response.text
    assert "no tournament named &#39;nope&#39;" in said or "no tournament named 'nope'" in said
    assert "cup" in said


@pytest.mark.parametrize("path", ["/bracket", "/api/bracket"])
def test_a_tournament_that_is_not_a_knockout_has_no_bracket(client, path):
    response = client.get(path, params={"tournament": "rr"})
    assert response.status_code == 404
    said = response.json()["error"] if path.startswith("/api") else response.text
    assert "is a round-robin tournament, not a knockout: it has no bracket" in said


def test_the_bracket_is_worked_out_once_per_state_of_its_games(league):
    app = create_app(league)
    client = TestClient(app)
    for _ in range(3):
        assert client.get("/api/bracket", params={"tournament": "cup"}).status_code == 200
    app.state.cache.settle()
    assert app.state.cache.computed == 1
