"""The site's bot and matchup pages and their API: every number against the CLI's
tables and against the games themselves, what each kind of bot is (plug-in,
submission, file), bad names and values, escaping, the cached league and the
store's queries behind the pages (each through an index)."""

from __future__ import annotations

import dataclasses
import json
from array import array
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from arena.cli.main import main
from arena.engine.game import Rules
from arena.players.plugins import installed_bots
from arena.records import GameSpec, Outcome, Termination
from arena.referee.referee import play_game
from arena.store import BotIdentity, Store, StoredGame
from arena.text import content_hash
from arena.web import bots as bot_pages
from arena.web.app import create_app

SMALL = Rules(width=5, height=4, connect=3)
HOSTILE = '<script>alert("x")</script>\x1b[31m'
GUARD = ('from arena.bot import Bot\n\n\nclass Guard(Bot):\n    """Guards the centre{}."""\n\n'
         '    def play(self, board):\n        return board.legal_moves()[0]\n')
V1, V2 = GUARD.format(", first try"), GUARD.format(" <b>bold</b>")
FILE_A, FILE_B = "a" * 64, "b" * 64
REASON = "crashed: <b>ValueError</b> \x1b[2J"
PLUGIN = "connectk-arena"


def installed_bot(name: str) -> dict | None:
    """What ``arena bots --json`` says of an installed plug-in."""
    entry = installed_bots().get(name)
    return None if entry is None else entry.as_dict()


def plugin_source() -> str:
    found = installed_bot("random")
    assert found is not None
    return str(found["source"])


def identities() -> dict[str, BotIdentity]:
    source = plugin_source()
    return {
        "random": BotIdentity("random", "random", {}, source),
        "random from an older release": BotIdentity("random", "random", {}, "connectk-arena 0.0.1"),
        "minimax:depth=2": BotIdentity("minimax:depth=2", "minimax", {"depth": "2"}, source),
        "guard@v1": BotIdentity("guard@v1", "guard@v1", {}, "submitted guard@v1", content_hash(V1)),
        "guard@v2": BotIdentity("guard@v2", "guard@v2", {}, "submitted guard@v2", content_hash(V2)),
        "mybot.py#aaaaaa": BotIdentity("mybot.py", "mybot", {}, "/home/x/mybot.py", FILE_A),
        "mybot.py#bbbbbb": BotIdentity("mybot.py", "mybot", {}, "/home/x/mybot.py", FILE_B),
        HOSTILE: BotIdentity(HOSTILE, HOSTILE, {}, "test"),
        "human": BotIdentity("human", "human", {}, "a person at the terminal"),
    }


def store_games(store: Store, tournament: str, pairs: list[tuple[str, str]], games: int,
                forfeits: dict[int, str] | None = None) -> None:
    """``games`` games per pair (first and second alternating, two openings), played by
    random and greedy and stored under the pair's identities; ``forfeits``: the game
    numbers (across the tournament) the first player loses by forfeit, with the reason."""
    known = identities()
    identity = {"format": "round-robin", "rules": SMALL.as_dict(), "name": tournament}
    tid = store.tournaments.start(tournament, "round-robin", identity, identity, 1)
    number = 0
    for a, b in pairs:
        for i in range(games):
            first, second = (a, b) if i % 2 == 0 else (b, a)
            spec = GameSpec(key=f"g{number:03d}", rules=SMALL, first="random", second="greedy",
                            pairing=f"{a}-{b}", opening=(i // 2 % 2,), seed=number)
            record = play_game(spec)
            if forfeits and number in forfeits:
                record = dataclasses.replace(record, outcome=Outcome(1, Termination.FORFEIT, forfeits[number]))
            ids = {"random": store.bots.id_of(known[first]), "greedy": store.bots.id_of(known[second])}
            store.games.record(tid, [record], ids)
            number += 1
    store.tournaments.set_status(tid, "finished")


T1 = ["random", "minimax:depth=2", "guard@v2", "mybot.py#aaaaaa", HOSTILE]


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> str:
    """Two tournaments: plug-ins (random from two releases), two versions of a
    submitted bot, one bot file under two codes, a bot whose name is markup and a terminal escape, and forfeits with
    reasons (minimax loses three games of t1); a casual game a person left
    unfinished against random."""
    path = str(tmp_path_factory.mktemp("bots") / "league.db")
    with Store(path) as store:
        store.submissions.submit("guard", V1, "bot", "guard.py")
        store.submissions.submit("guard", V2, "bot", "guard.py")
        pairs = [(a, b) for i, a in enumerate(T1) for b in T1[i + 1:]]
        # the first pair is random and minimax: its games are 0..5, minimax moves first in 1, 3 and 5
        store_games(store, "t1", pairs, 6, {1: REASON, 3: REASON, 5: "illegal move 9"})
        store_games(store, "t2", [("random from an older release", "guard@v1"), ("random", "mybot.py#bbbbbb")], 2)
        identity = {"format": "casual", "rules": SMALL.as_dict()}
        tid = store.tournaments.start("casual 5x4c3", "casual", identity, identity, 0)
        record = play_game(GameSpec(key="c1", rules=SMALL, first="random", second="greedy", pairing="c", seed=3))
        unfinished = dataclasses.replace(record, outcome=Outcome(None, Termination.UNFINISHED))
        known = identities()
        store.games.record(tid, [unfinished], {"random": store.bots.id_of(known["human"]),
                                               "greedy": store.bots.id_of(known["random"])})
    return path


@pytest.fixture(scope="module")
def client(league):
    return TestClient(create_app(league))


def cli_json(league: str, command: str) -> dict:
    result = CliRunner().invoke(main, [command, "--db", league, "--format", "json", "--all"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def every_game(league: str) -> list[StoredGame]:
    with Store(league, read_only=True) as store:
        return store.games.all()


def url(name: str) -> str:
    return "/bots/" + quote(name, safe="/")


# --- the bot list and each bot's numbers ------------------------------------------------


def test_the_bot_list_has_every_entrant_with_the_standings_numbers(client, league):
    listed = {bot["name"]: bot for bot in client.get("/api/bots").json()}
    rows = {row["bot"]: row for row in cli_json(league, "standings")["standings"]}
    assert set(listed) == set(rows) == set(T1) | {"guard@v1", "mybot.py#bbbbbb"}  # no person, no unfinished game
    for name, row in rows.items():
        for key in ("games", "wins", "draws", "losses", "forfeits", "score_pct", "incremental_elo"):
            assert listed[name][key] == row[key], (name, key)


def test_the_bot_list_says_what_arena_bots_says(client):
    listed = {bot["name"]: bot for bot in client.get("/api/bots").json()}
    installed = installed_bot("minimax")
    assert installed is not None
    minimax = listed["minimax:depth=2"]
    assert minimax["kind"] == "plug-in" and minimax["description"] == installed["description"]
    assert minimax["options"] == installed["options"] and minimax["given_options"] == {"depth": "2"}
    assert minimax["sha256"] is None and minimax["error"] is None
    guard = listed["guard@v2"]
    assert guard["kind"] == "submitted" and guard["sha256"] == content_hash(V2)
    assert guard["description"] == "Guards the centre <b>bold</b>."
    assert listed["mybot.py#aaaaaa"]["kind"] == "file" and listed["mybot.py#aaaaaa"]["sha256"] == FILE_A
    assert listed[HOSTILE]["kind"] == "other"


def test_a_bot_s_results_add_up_to_the_crosstable(client, league):
    crosstable = cli_json(league, "crosstable")["crosstable"]
    colours = cli_json(league, "colours")["colours"]
    for name in T1:
        data = client.get("/api/bots/" + quote(name, safe="")).json()
        opponents = {row["opponent"]: row for row in data["opponents"]}
        assert set(opponents) == set(crosstable[name])
        for opponent, cell in crosstable[name].items():
            row = opponents[opponent]
            assert row["games"] == cell["games"]
            assert row["wins"] + row["draws"] / 2 == cell["points"]
            assert row["wins"] == row["first"]["wins"] + row["second"]["wins"]
        for colour in ("first", "second"):
            assert {key: sum(row[colour][key] for row in opponents.values()) for key in ("wins", "draws", "losses")} \
                == colours[name][colour]


def test_the_rating_history_ends_at_the_standings_incremental_elo(client, league):
    rows = {row["bot"]: row for row in cli_json(league, "standings")["standings"]}
    for name, row in rows.items():
        history = client.get("/api/bots/" + quote(name, safe="")).json()["rating_history"]
        assert history["games"] == row["games"]
        assert history["points"][-1][0] == row["games"]
        assert history["points"][-1][1] == row["incremental_elo"]


def test_forfeits_are_listed_with_their_reasons(client):
    data = client.get("/api/bots/minimax:depth=2").json()
    assert data["forfeits"] == 3
    assert data["forfeit_reasons"] == [{"reason": REASON, "count": 2}, {"reason": "illegal move 9", "count": 1}]
    text = client.get("/bots/minimax:depth=2").text
    assert "3 games lost by forfeit" in text
    assert "crashed: &lt;b&gt;ValueError&lt;/b&gt; \\x1b[2J" in text and "\x1b" not in text


def test_recent_games_are_the_bot_s_newest_with_links(client, league):
    games = every_game(league)
    data = client.get("/api/bots/random").json()
    mine = [g for g in games if "random" in (g.first, g.second)]
    assert [g["id"] for g in data["recent_games"]] == [g.id for g in reversed(mine)][:bot_pages.RECENT_GAMES]
    newest = data["recent_games"][0]
    assert newest["opponent"] == "human" and newest["colour"] == "second" and newest["score"] is None
    text = client.get("/bots/random").text
    assert f'<a href="/games/{newest["id"]}">' in text
    assert '<a href="/bots/human">' not in text  # a person is no bot of the league: named, not linked


# --- what each kind of bot is ------------------------------------------------------------


def test_a_plug_in_shows_its_description_and_options(client):
    text = client.get("/bots/minimax:depth=2").text
    installed = installed_bot("minimax")
    assert installed is not None
    assert installed["description"].replace("'", "&#39;") in text and "installed plug-in" in text
    assert "<code>depth=2</code>" in text
    assert '<th scope="row"><code>depth</code></th>' in text  # the options table


def test_a_submission_shows_every_version(client):
    data = client.get("/api/bots/guard@v2").json()
    versions = data["submission"]["versions"]
    assert [(v["spec"], v["sha256"], v["played"]) for v in versions] == [
        ("guard@v1", content_hash(V1), True), ("guard@v2", content_hash(V2), True)]
    text = client.get("/bots/guard@v2").text
    assert 'href="/bots/guard%40v1"' in text and 'aria-current="true"' in text
    assert "Guards the centre &lt;b&gt;bold&lt;/b&gt;." in text


def test_one_plug_in_from_two_releases_is_one_bot(client):
    data = client.get("/api/bots/random").json()
    assert data["sources"] == [plugin_source(), "connectk-arena 0.0.1"]
    assert data["source"] == "connectk-arena 0.0.1" and data["installed"] == plugin_source()
    assert {row["opponent"] for row in data["opponents"]} >= {"guard@v1", "mybot.py#bbbbbb", "guard@v2"}
    assert "stored from 2 sources" in client.get("/bots/random").text


def test_one_spec_with_two_codes_is_two_bots(client):
    for name, code in (("mybot.py#aaaaaa", FILE_A), ("mybot.py#bbbbbb", FILE_B)):
        response = client.get(url(name))
        assert response.status_code == 200
        assert code in response.text
    response = client.get("/bots/mybot.py")  # as a tournament's own table names it
    assert response.status_code == 404
    assert "&#39;mybot.py&#39; is 2 bots with different code in the whole league: mybot.py#aaaaaa, mybot.py#bbbbbb" \
        in response.text


# --- the matchup -------------------------------------------------------------------------


def between(games: list[StoredGame], a: str, b: str) -> list[StoredGame]:
    return [g for g in games if {g.first, g.second} == {a, b}]


def test_the_matchup_counts_the_games_between_them(client, league):
    crosstable = cli_json(league, "crosstable")["crosstable"]
    data = client.get("/api/matchup", params={"a": "random", "b": "minimax:depth=2"}).json()
    cell = crosstable["random"]["minimax:depth=2"]
    assert data["games"] == cell["games"] and data["wins"] + data["draws"] / 2 == cell["points"]
    games = between(every_game(league), "random", "minimax:depth=2")
    first = [g for g in games if g.first == "random"]
    assert data["by_colour"]["a_first"] == {"wins": sum(g.winner == 0 for g in first),
                                            "draws": sum(g.winner is None for g in first),
                                            "losses": sum(g.winner == 1 for g in first)}
    openings = {row["opening"]: row for row in data["by_opening"]}
    assert set(openings) == {g.opening for g in games}
    for opening, row in openings.items():
        these = [g for g in games if g.opening == opening]
        assert row["games"] == len(these)
        assert row["wins"] == sum((g.winner == 0) == (g.first == "random") and g.winner is not None for g in these)
    assert sum(row["games"] for row in openings.values()) == data["games"]
    assert data["elo_difference"]["low"] < data["elo_difference"]["elo"] < data["elo_difference"]["high"]


def test_the_matchup_pages_through_every_game_newest_first(client, league, monkeypatch):
    monkeypatch.setattr(bot_pages, "PAGE_GAMES", 4)
    games = between(every_game(league), "random", "guard@v2")
    first = client.get("/api/matchup", params={"a": "random", "b": "guard@v2"}).json()
    assert first["pages"] == 2 and first["stored_games"] == len(games) == 6
    second = client.get("/api/matchup", params={"a": "random", "b": "guard@v2", "page": 2}).json()
    listed = [g["id"] for g in first["games_on_page"] + second["games_on_page"]]
    assert listed == sorted((g.id for g in games), reverse=True)
    text = client.get("/matchup", params={"a": "random", "b": "guard@v2"}).text
    assert 'href="/matchup?a=random&amp;b=guard%40v2&amp;page=2#games"' in text
    past = client.get("/matchup", params={"a": "random", "b": "guard@v2", "page": 3})
    assert past.status_code == 404 and "6 stored games on 2 pages, no page 3" in past.text


def test_the_crosstable_cells_and_names_link_to_pages_that_exist(client):
    text = client.get("/crosstable", params={"all": "true"}).text
    links = {part.split('"')[0].replace("&amp;", "&") for part in text.split('href="')[1:]}
    pages = [link for link in links if link.startswith(("/matchup?", "/bots/"))]
    assert len(pages) > 20
    for link in pages:
        response = client.get(link)
        assert response.status_code == 200, link


def test_the_matchup_of_bots_that_never_met(client):
    data = client.get("/api/matchup", params={"a": "guard@v1", "b": "guard@v2"}).json()
    assert data["games"] == 0 and data["elo_difference"] is None and data["games_on_page"] == []
    assert "They have no finished game against each other." in client.get(
        "/matchup", params={"a": "guard@v1", "b": "guard@v2"}).text


# --- bad names and values ------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/bots/nobody", "/matchup?a=nobody&b=random", "/matchup?a=random&b=nobody"])
def test_an_unknown_bot_is_a_404_page_naming_the_known_ones(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "no bot named &#39;nobody&#39;" in response.text and "guard@v1, guard@v2" in response.text
    assert "Traceback" not in response.text


@pytest.mark.parametrize("path", ["/api/bots/nobody", "/api/matchup?a=nobody&b=random"])
def test_the_api_answers_an_unknown_bot_with_json(client, path):
    response = client.get(path)
    assert response.status_code == 404 and "no bot named 'nobody'" in response.json()["error"]


@pytest.mark.parametrize("query", ["a=random", "a=random&b=random", "a=random&b=guard%40v2&page=0",
                                   "a=random&b=guard%40v2&page=x", "a=&b=random", "a=random&b=" + "x" * 600])
@pytest.mark.parametrize("route", ["/matchup", "/api/matchup"])
def test_bad_matchup_values_are_422(client, route, query):
    response = client.get(f"{route}?{query}")
    assert response.status_code == 422, response.text
    assert "Traceback" not in response.text


def test_a_hostile_name_is_escaped_on_its_pages(client):
    for path in (url(HOSTILE), "/matchup?a=" + quote(HOSTILE, safe="") + "&b=random", "/bots/random"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert "<script>alert" not in response.text and "\x1b" not in response.text, path
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;\\x1b[31m" in response.text, path
    assert 'href="/bots/%3Cscript%3Ealert%28%22x%22%29%3C/script%3E%1B%5B31m"' in client.get("/bots/random").text
    for path, status in (("/matchup?a=" + quote(HOSTILE, safe="") + "&b=random&page=9", 404),
                         ("/matchup?a=" + quote(HOSTILE, safe="") + "&b=" + quote(HOSTILE, safe=""), 422)):
        response = client.get(path)
        assert response.status_code == status and "\x1b" not in response.text and "<script>" not in response.text


def test_a_database_without_games_has_no_bots(tmp_path):
    path = tmp_path / "empty.db"
    Store(path).close()
    client = TestClient(create_app(str(path)))
    assert client.get("/api/bots").json() == []
    response = client.get("/bots/random")
    assert response.status_code == 404 and "bots: none yet" in response.text


# --- the cache and the database's version ----------------------------------------------------


def copy_of(league: str, path: Path) -> str:
    with Store(league, read_only=True) as source, Store(path) as target:
        source.db.conn.backup(target.db.conn)
    return str(path)


def test_the_league_is_computed_once_until_a_game_arrives(league, tmp_path):
    app = create_app(copy_of(league, tmp_path / "copy.db"))
    client = TestClient(app)
    before = client.get("/api/bots/random").json()
    for path in ("/bots/random", "/bots/guard@v2", "/api/bots", "/matchup?a=random&b=guard%40v2"):
        assert client.get(path).status_code == 200
    # the league's bots, its standings (the bot page's fitted Elo) and the matchup page
    assert app.state.cache.computed == 3
    with Store(tmp_path / "copy.db") as store:
        store_games(store, "t3", [("random", "guard@v2")], 2)
    after = client.get("/api/bots/random").json()
    assert app.state.cache.computed == 4
    assert after["games"] == before["games"] + 2 and after["rating_history"]["games"] == before["games"] + 2


def test_the_version_changes_when_a_casual_game_is_saved_again(league, tmp_path):
    """A casual game saved again replaces its earlier save: as the last game, the new
    save takes its id, and the count of games stays the same."""
    path = copy_of(league, tmp_path / "copy.db")
    with Store(path) as store:
        casual = store.tournaments.check("casual 5x4c3")
        last = store.games.all()[-1]
        assert last.tournament == casual.name
        version = store.version()
        record = play_game(GameSpec(key="c1", rules=SMALL, first="random", second="greedy", pairing="c", seed=3))
        ids = {"random": store.bots.id_of(identities()["human"]), "greedy": store.bots.id_of(identities()["random"])}
        new_id = store.games.record_one(casual.id, record, ids, replace=last.id)
        assert new_id == last.id  # the case a count of games and their last id would miss
        assert store.version() != version


def test_the_version_changes_when_a_casual_game_is_removed(league, tmp_path):
    path = copy_of(league, tmp_path / "copy.db")
    with Store(path) as store:
        casual = store.tournaments.check("casual 5x4c3")
        record = play_game(GameSpec(key="c2", rules=SMALL, first="random", second="greedy", pairing="c", seed=4))
        ids = {"random": store.bots.id_of(identities()["human"]), "greedy": store.bots.id_of(identities()["random"])}
        earlier = store.games.record_one(casual.id, record, ids)
        store.games.record(store.tournaments.check("t2").id, [dataclasses.replace(
            record, spec=dataclasses.replace(record.spec, key="later"))], ids)  # a later game: not the last
        version = store.version()
        store.games.delete(earlier)
        assert store.version() != version


# --- the rating history, drawn ------------------------------------------------------------------


def test_a_history_keeps_every_game_when_it_has_few():
    history = bot_pages.sampled(array("d", [1510.0, 1490.0, 1505.0]), 10)
    assert history.points == [(1, 1510.0, 1510.0, 1510.0), (2, 1490.0, 1490.0, 1490.0), (3, 1505.0, 1505.0, 1505.0)]
    assert history.low == (2, 1490.0) and history.high == (1, 1510.0) and history.final == 1505.0
    assert bot_pages.rating_plot(history)["band"] == ""


def test_a_long_history_is_drawn_in_steps_whose_band_holds_every_game():
    values = array("d", (1500 + (i * 37 % 101) - 50 for i in range(1000)))
    history = bot_pages.sampled(values, 64)
    assert len(history.points) <= 64 and history.points[-1][:2] == (1000, values[-1])
    start = 0
    for end, elo, low, high in history.points:
        assert elo == values[end - 1] and low == min(values[start:end]) and high == max(values[start:end])
        start = end
    assert start == 1000
    assert history.low[1] == min(values) and values[history.low[0] - 1] == min(values)
    plot = bot_pages.rating_plot(history)
    assert plot["band"] and len(plot["line"].split()) == len(history.points)


def test_the_rating_plot_is_an_svg_on_the_page(client):
    text = client.get("/bots/random").text
    assert '<svg class="plot wide"' in text and '<svg class="plot narrow"' in text  # a phone's plot beside
    assert text.count('<polyline class="rating"') == 2
    assert "from 1500 (dashed) to" in text


def test_the_bot_page_says_why_its_line_is_not_the_standings_elo(client):
    """The plotted incremental Elo ends elsewhere than the standings' fitted Elo: the
    page gives the fitted one (drawn as a level line) and says why they differ."""
    row = next(r for r in client.get("/api/standings", params={"all": "true"}).json()["standings"]
               if r["bot"] == "random")
    text = client.get("/bots/random").text
    assert f"Its Elo in the <a href=\"/standings?all=true\">league standings</a> is <strong>{row['elo']:.0f}</strong>" \
        in text
    assert "The two differ by design" in text and "in the order played" in text
    assert text.count('<line class="fitted"') == 2


# --- the store's queries: through indexes ---------------------------------------------------


def plans(store: Store, run) -> list[str]:
    """The query plan of every statement ``run`` makes the store execute."""
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        run()
    finally:
        store.db.conn.set_trace_callback(None)
    return [" | ".join(row[3] for row in store.db.execute("explain query plan " + sql).fetchall())
            for sql in statements if sql.lstrip().lower().startswith("select")]


def test_a_bot_s_and_a_pair_s_games_are_read_through_the_bot_indexes(league):
    with Store(league, read_only=True) as store:
        a, b = [1], [2]
        for plan in plans(store, lambda: (store.games.latest_of(a, 5), store.games.pair_ids(a, b),
                                          store.results.pair_openings(a, b), store.games.by_id([1, 2]))):
            # A SCAN reads a whole table unless it names an index; a subquery's rows are already few.
            tables = [step for step in plan.split(" | ")
                      if step.startswith("SCAN ") and not step.startswith("SCAN (subquery") and "INDEX" not in step]
            assert not tables, plan
            assert "idx_games_first_bot_id" in plan or "INTEGER PRIMARY KEY" in plan, plan


def test_the_pair_s_games_are_those_between_them(league):
    games = every_game(league)
    with Store(league, read_only=True) as store:
        ids: dict[str, list[int]] = {}
        for bot in store.bots.stored():
            ids.setdefault(bot.spec + "#" + bot.content_hash, []).append(bot.id)
        a, b = ids["random#"], ids["guard@v2#" + content_hash(V2)]  # random: stored from two releases
        assert len(a) == 2
        assert store.games.pair_ids(a, b) == sorted((g.id for g in between(games, "random", "guard@v2")),
                                                       reverse=True)
        assert [g.id for g in store.games.by_id([5, 3, 999999])] == [5, 3]
        older = [g.id for g in games if g.tournament == "t2" and "guard@v1" in (g.first, g.second)]
        assert store.games.pair_ids(a, ids["guard@v1#" + content_hash(V1)]) == older[::-1]
        of_random = [g for g in games if "random" in (g.first, g.second)]
        assert store.games.latest_of(a, 3) == of_random[::-1][:3]


def test_the_games_of_each_tournament_are_counted_once_per_state(league, tmp_path):
    path = copy_of(league, tmp_path / "copy.db")
    app = create_app(path)
    client = TestClient(app)
    with Store(path, read_only=True) as store:
        expected = {t.name: store.games.count(tournament=t.name) for t in store.tournaments.all()}
    assert {t["name"]: t["games"] for t in client.get("/api/tournaments").json()} == expected
    assert f"{sum(expected.values())} games stored in 3 tournaments" in client.get("/").text
    assert app.state.cache.computed == 1
    with Store(path) as store:
        store_games(store, "t3", [("random", "guard@v2")], 2)
    assert {t["name"]: t["games"] for t in client.get("/api/tournaments").json()}["t3"] == 2
    assert app.state.cache.computed == 2


def test_the_bots_pages_see_one_state_of_the_database_while_games_arrive(league, tmp_path, monkeypatch):
    """A game by a new bot stored (by another process) between the passes over the
    games must not reach the later passes: their bot ids come from the first."""
    from arena.web import bots as bots_page

    db = copy_of(league, tmp_path / "copy.db")
    real_select = bots_page.select

    def select_then_a_game_arrives(*args, **kwargs):
        chosen = real_select(*args, **kwargs)
        with Store(db) as writer:  # another connection, as the league runner's
            store_games(writer, "t9", [("human", "random")], 2)  # a bot with no counted game before
        return chosen

    monkeypatch.setattr(bots_page, "select", select_then_a_game_arrives)
    client = TestClient(create_app(db))
    answer = client.get("/api/bots")
    assert answer.status_code == 200, answer.text[-500:]
    assert '"human"' not in answer.text  # the state the first pass saw
    monkeypatch.setattr(bots_page, "select", real_select)
    assert '"human"' in client.get("/api/bots").text  # and the next request sees the games


def test_a_crowd_asking_for_a_table_while_games_arrive_costs_two_computations():
    """Requests that arrive while a table is computed wait for it, then take the first
    table computed after they arrived, whatever version each of them read: never
    one computed from before its arrival."""
    import threading
    import time

    from arena.web.cache import TableCache

    cache = TableCache(patience=None)
    first_started, release = threading.Event(), threading.Event()
    computations: list[int] = []

    def compute(n: int):
        def run() -> int:
            computations.append(n)
            if n == 0:
                first_started.set()
                release.wait(30)
            return n
        return run

    got: dict[int, int] = {}
    first = threading.Thread(target=lambda: got.__setitem__(0, cache.get("bots", 0, compute(0))))
    first.start()
    assert first_started.wait(30)
    crowd = [threading.Thread(target=lambda n=n: got.__setitem__(n, cache.get("bots", n, compute(n))))
             for n in range(1, 11)]  # each read a newer version: a game arrived before each
    for thread in crowd:
        thread.start()
    deadline = time.monotonic() + 60
    while cache.waited < 11 and time.monotonic() < deadline:  # the first request, and the crowd arrived
        time.sleep(0.01)
    release.set()
    for thread in (first, *crowd):
        thread.join(30)
    assert len(computations) == 2 and cache.computed == 2
    second = computations[1]
    # computed after each arrived (the first request may wake to the second table already: newer still)
    assert got[0] in (0, second) and all(got[n] == second for n in range(1, 11))
    assert cache.get("bots", 99, compute(99)) == 99  # a later arrival is never given an older table
