"""The league site, in-process through the framework's test client: every page and
API route, their numbers against the CLI's JSON, bad ids and bad query values,
escaping of what bots wrote, and the cache that never serves a stale table."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from arena.cli.main import main
from arena.engine.game import Rules
from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.store import BotIdentity, Store
from arena.web.app import create_app

QUICK = str(Path(__file__).resolve().parent.parent / "config" / "quick.toml")
HOSTILE = '<script>alert("x")</script>\x1b[31m'
SMALL = Rules(width=5, height=4, connect=3)


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> str:
    """Two finished tournaments of the quick field, and a casual one with a bot whose
    name is markup and a terminal escape."""
    path = str(tmp_path_factory.mktemp("site") / "league.db")
    runner = CliRunner()
    for extra in ([], ["--name", "q2", "--seed", "2"]):
        result = runner.invoke(main, ["tournament", "run", QUICK, "--db", path, "--workers", "2", *extra],
                               catch_exceptions=False)
        assert result.exit_code == 0, result.output
    with Store(path) as store:
        identity = {"format": "casual", "rules": SMALL.as_dict(), "name": "hostile"}
        tid = store.tournaments.start("hostile", "casual", identity, identity, 1)
        # The games are played by random and greedy, stored under the hostile name for random.
        ids = {"random": store.bots.id_of(BotIdentity(HOSTILE, HOSTILE, {}, "test")),
               "greedy": store.bots.id_of(BotIdentity("greedy", "greedy", {}, "test"))}
        records = [play_game(GameSpec(key=f"k{i}", pairing="p", rules=SMALL, first="random", second="greedy", seed=i))
                   for i in range(2)]
        store.games.record(tid, records, ids)
        store.tournaments.set_status(tid, "finished")
    return path


@pytest.fixture(scope="module")
def client(league):
    return TestClient(create_app(league))


def cli_json(league: str, command: str, *args: str) -> dict:
    result = CliRunner().invoke(main, [command, "--db", league, "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("command", ["standings", "crosstable", "colours"])
@pytest.mark.parametrize("args", [[], ["--tournament", "quick"], ["--all"]])
def test_the_api_gives_the_cli_json(client, league, command, args):
    query = {"tournament": args[1]} if "--tournament" in args else {"all": "true"} if args else {}
    response = client.get(f"/api/{command}", params=query)
    assert response.status_code == 200
    assert response.json() == cli_json(league, command, *args)


def test_the_standings_page_shows_the_cli_numbers(client, league):
    text = client.get("/standings", params={"tournament": "quick"}).text
    data = cli_json(league, "standings", "--tournament", "quick")
    for row in data["standings"]:
        assert f'<tr data-bot="{row["bot"]}">' in text
        elo = {">": f"&gt; {row['elo'] - row['elo_minus']:.0f}", "<": f"&lt; {row['elo'] + row['elo_plus']:.0f}",
               None: f"{row['elo']:.0f}"}[row["bound"]]
        assert re.search(rf'<td class="num elo" data-value="{row["elo"]}"[^>]*>{elo}</td>', text), row
        assert f'<td class="num">{row["score_pct"]:.1f}</td>' in text
        # The plots (one for a wide screen, one for a phone) put its dot where the table does.
        at = elo.split()[-1] if row["bound"] else elo
        assert text.count(f'data-bot="{row["bot"]}" data-elo="{at}"') == 2, row
    model = data["model"]
    assert f"{model['first_move_elo']:+.0f} Elo" in text
    assert "<svg" in text and text.count("<circle") == 2 * len(data["standings"])


def test_a_bound_is_the_same_in_the_table_and_the_plot_and_says_why(client, league):
    """A bot that won every game has no finite Elo: the table, the plot and the note
    beside them all show the lower end of its interval (the fit's capped value nowhere)."""
    text = client.get("/standings", params={"tournament": "quick"}).text
    data = cli_json(league, "standings", "--tournament", "quick")
    bounded = [row for row in data["standings"] if row["bound"]]
    assert bounded, "the quick tournament has a bot that won every game"
    for row in bounded:
        bound = row["elo"] - row["elo_minus"] if row["bound"] == ">" else row["elo"] + row["elo_plus"]
        assert f'data-bot="{row["bot"]}" data-elo="{bound:.0f}"' in text
        assert f'data-bot="{row["bot"]}" data-elo="{row["elo"]:.0f}"' not in text  # the fit's capped value
        words = "all games won: Elo is only bounded below" if row["bound"] == ">" else \
            "all games lost: Elo is only bounded above"
        sign = "&gt;" if row["bound"] == ">" else "&lt;"
        assert f"<strong>{row['bot']}</strong> ({sign} {bound:.0f}): {words}" in text


def test_home_lists_every_tournament_with_links(client):
    text = client.get("/").text
    for name in ("quick", "q2", "hostile"):
        assert f'href="/standings?tournament={name}"' in text
    assert "finished" in text


def test_bot_text_is_escaped_on_every_page(client):
    for url in ("/standings?tournament=hostile", "/crosstable?tournament=hostile", "/colours?tournament=hostile",
                "/standings?all=true"):
        text = client.get(url).text
        assert "<script>alert" not in text and "\x1b" not in text, url
        assert "&lt;script&gt;alert" in text, url


def test_the_colours_page_shows_the_first_player_s_score_by_opening(client):
    openings = client.get("/api/colours", params={"tournament": "quick"}).json()["openings"]
    text = client.get("/colours", params={"tournament": "quick"}).text
    assert openings and "score by opening" in text
    for row in openings[:40]:
        assert f'<td class="num">{row["wins"]}-{row["draws"]}-{row["losses"]}</td>' in text
        assert f"<tr><td>{row['opening'] or '(none)'}</td>" in text
    colours = client.get("/api/colours", params={"tournament": "quick"}).json()["colours"]
    assert sum(row["games"] for row in openings) == sum(sum(sides["first"].values()) for sides in colours.values())


def test_the_crosstable_page_shows_every_cell_of_the_api_s_table(client):
    for tournament in ("quick", "hostile"):
        table = client.get("/api/crosstable", params={"tournament": tournament}).json()["crosstable"]
        text = client.get("/crosstable", params={"tournament": tournament}).text
        cells = {(unquote(a), unquote(b)): (float(points), int(games)) for a, b, points, games in
                 re.findall(r'<a href="/matchup\?a=([^&"]*)&amp;b=([^"]*)" title="[^"]*">([\d.]+)/(\d+)</a>', text)}
        expected = {(bot, opp): (cell["points"], cell["games"])
                    for bot, row in table.items() for opp, cell in row.items() if cell["games"]}
        assert cells == expected and expected, tournament
        for bot, row in table.items():  # each row's total
            total = f'{sum(c["points"] for c in row.values()):g}/{sum(c["games"] for c in row.values())}</td>'
            assert total in text, (tournament, bot)


@pytest.mark.parametrize("url", ["/standings?tournament=nope", "/crosstable?tournament=nope",
                                 "/colours?tournament=nope"])
def test_an_unknown_tournament_is_a_404_page_that_names_it(client, url):
    response = client.get(url)
    assert response.status_code == 404
    assert "no tournament named &#39;nope&#39;" in response.text and "Traceback" not in response.text


@pytest.mark.parametrize("url", ["/api/standings?tournament=nope", "/api/crosstable?tournament=nope"])
def test_the_api_answers_an_unknown_tournament_with_json(client, url):
    response = client.get(url)
    assert response.status_code == 404
    assert "no tournament named 'nope'" in response.json()["error"]


@pytest.mark.parametrize("url", ["/standings?all=maybe", "/api/standings?all=maybe",
                                 "/standings?tournament=" + "x" * 300])
def test_bad_query_values_are_422_not_a_traceback(client, url):
    response = client.get(url)
    assert response.status_code == 422
    assert "Traceback" not in response.text


def test_unknown_pages_are_404(client):
    assert client.get("/nothing-here").status_code == 404
    assert client.get("/api/nothing").json() == {"error": "Not Found"}


def test_the_api_is_described(client):
    schema = client.get("/openapi.json").json()
    assert {"/api/standings", "/api/crosstable", "/api/colours", "/api/tournaments"} <= set(schema["paths"])
    docs = client.get("/docs").text
    assert "/api/standings" in docs and "http" not in docs.split("<main>")[1].replace("/openapi.json", "")


def test_the_page_loads_nothing_from_the_internet(client):
    for url in ("/", "/standings", "/crosstable", "/colours", "/docs"):
        text = client.get(url).text
        assert "//" not in text.replace("http://testserver", "").split("<body>")[0].replace("<!doctype html>", ""), url


def test_a_table_is_computed_once_until_a_game_arrives(league, tmp_path):
    path = tmp_path / "copy.db"
    with Store(league, read_only=True) as source, Store(path) as target:
        source.db.conn.backup(target.db.conn)
    app = create_app(str(path))
    client = TestClient(app)
    first = client.get("/api/standings", params={"tournament": "quick"}).json()
    client.get("/standings", params={"tournament": "quick"})
    client.get("/crosstable", params={"tournament": "quick"})
    assert app.state.cache.computed == 1
    with Store(path) as store:
        tid = store.tournaments.check("quick").id
        ids = {spec: store.bots.id_of(BotIdentity(spec, spec, {}, "plugin:connectk-arena")) for spec in ("random",)}
        ids["greedy"] = store.bots.id_of(BotIdentity("greedy", "greedy", {}, "plugin:connectk-arena"))
        record = play_game(GameSpec(key="extra", pairing="extra", rules=Rules(), first="greedy", second="random",
                                    seed=5))
        store.games.record(tid, [record], ids)
    second = client.get("/api/standings", params={"tournament": "quick"}).json()
    assert app.state.cache.computed == 2
    assert second["selection"]["games"] == first["selection"]["games"] + 1


# --- arena serve -------------------------------------------------------------------------


def test_serve_refuses_a_missing_database(tmp_path):
    result = CliRunner().invoke(main, ["serve", "--db", str(tmp_path / "none.db")])
    assert result.exit_code == 2
    assert "does not exist" in result.output and "Traceback" not in result.output


def test_serve_refuses_a_port_in_use(league):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["serve", "--db", league, "--port", str(port)])
    assert result.exit_code == 2
    assert f"port {port} on 127.0.0.1 is in use" in result.output


def test_serve_refuses_a_bad_host(league):
    result = CliRunner().invoke(main, ["serve", "--db", league, "--host", "no such host.invalid"])
    assert result.exit_code == 2
    assert "bad --host 'no such host.invalid'" in result.output


# --- a tournament's page ------------------------------------------------------------------


def test_a_tournament_page_shows_its_settings_bots_and_links(client, league):
    from urllib.parse import quote

    text = client.get("/tournaments/q2").text
    listed = {t["name"]: t for t in cli_json(league, "tournaments")}
    assert "Tournament q2" in text and "finished" in text and f"{listed['q2']['games']} games stored" in text
    for bot in listed["q2"]["bots"]:
        assert f'href="/bots/{quote(bot)}"' in text
    assert "<th scope=\"row\">seed</th><td><code>2</code>" in text  # --seed 2, as given
    assert 'href="/standings?tournament=q2"' in text and 'href="/games?tournament=q2"' in text
    assert 'href="/tournaments/q2"' in client.get("/").text  # reached from the home page


def test_a_tournament_as_json_is_what_arena_tournaments_says(client, league):
    listed = {t["name"]: t for t in cli_json(league, "tournaments")}
    for name in ("quick", "q2", "hostile"):
        assert client.get(f"/api/tournaments/{name}").json() == listed[name]
    assert [t["name"] for t in client.get("/api/tournaments").json()] == list(listed)


def test_an_unknown_tournament_is_a_404_that_names_the_known_ones(client):
    page = client.get("/tournaments/nope")
    assert page.status_code == 404 and "no tournament named &#39;nope&#39;" in page.text and "q2" in page.text
    api = client.get("/api/tournaments/nope")
    assert api.status_code == 404 and "no tournament named 'nope'" in api.json()["error"]


def test_a_tournament_name_is_escaped_on_its_page(tmp_path):
    path = tmp_path / "named.db"
    with Store(path) as store:
        identity = {"format": "casual", "rules": SMALL.as_dict(), "bots": [HOSTILE]}
        store.tournaments.start(HOSTILE, "casual", identity, identity, 1)
    from urllib.parse import quote

    text = TestClient(create_app(str(path))).get(f"/tournaments/{quote(HOSTILE, safe='')}").text
    assert "<script>" not in text and "&lt;script&gt;" in text and "\x1b" not in text
