"""The games of the league site, in-process through the framework's test client: the
list with its filters and pages against the store and the CLI's JSON, the game page
drawn without JavaScript (board, move list, analysis marks, exports), bad ids and
values, escaping of what bots wrote, and what the live pages poll."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from arena.cli.main import main
from arena.engine.game import Board, Rules, parse_moves
from arena.records import GameSpec, Termination
from arena.referee.referee import play_game
from arena.store import BotIdentity, Store, rules_of
from arena.web.app import create_app
from arena.web.games import GAME_FIELDS

QUICK = str(Path(__file__).resolve().parent.parent / "config" / "quick.toml")
HOSTILE = '<script>alert("x")</script>\x1b[31m\u202eevil'
SMALL = Rules(width=5, height=4, connect=3)
STONE = re.compile(r'<circle class="stone" data-ply="(\d+)" data-col="(\d+)" data-row="(\d+)" data-player="(\d)"')


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> str:
    """The quick tournament; two games between two specs of one bot name; a game
    imported with a hostile player name, move info and forfeit reason; boards of
    other sizes; and stored analysis of one game that marks a lost win."""
    folder = tmp_path_factory.mktemp("games")
    path = str(folder / "league.db")
    cli("tournament", "run", QUICK, "--db", path, "--workers", "2")
    with Store(path) as store:
        identity = {"format": "round-robin", "rules": SMALL.as_dict(), "name": "specs"}
        tid = store.tournaments.start("specs", "round-robin", identity, identity, 1)
        ids = {spec: store.bots.id_of(BotIdentity(spec, "minimax", {}, "test")) for spec in ("minimax:depth=1",
                                                                                         "minimax:depth=3")}
        records = [play_game(GameSpec(key=f"s{i}", pairing="s", rules=SMALL, first=first, second=second, seed=i))
                   for i, (first, second) in enumerate([("minimax:depth=1", "minimax:depth=3"),
                                                        ("minimax:depth=3", "minimax:depth=1")])]
        store.games.record(tid, records, ids)
        store.tournaments.set_status(tid, "finished")
    hostile = {"rules": SMALL.as_dict(), "moves": "3344",
               "plies": [{"ply": i, "move": m, "ms": 1.5, "info": {"score": HOSTILE, "depth": 3, "nodes": 123456,
                                                                 "note": HOSTILE}} for i, m in enumerate("3344")],
               "players": {"first": HOSTILE, "second": "greedy"}, "result": "0-1", "termination": "forfeit",
               "reason": HOSTILE}
    (folder / "hostile.json").write_text(json.dumps(hostile))
    cli("import", str(folder / "hostile.json"), "--db", path)
    for line in ("40x40c5 1,40,2,39,3,38,4,37,20", "15x15c5n h8i9g7", "3x3c3n b2a1c3a3"):
        (folder / "game.txt").write_text(line)
        cli("import", str(folder / "game.txt"), "--db", path)
    with Store(path) as store:
        # Analysis stored for one game: the first player let a won position (5) go
        # at ply 2 (then the second wins, 3 for them); the first positions unknown.
        store.analyses.save(analysed_game(store), {0: None, 2: 5, 3: 3}, 1.0)
    return path


def analysed_game(store: Store) -> int:
    """The first game of the quick tournament that minimax (which reports score, depth
    and nodes) played first."""
    return game_id(store, tournament="quick", first="minimax:depth=2")


@pytest.fixture(scope="module")
def client(league):
    return TestClient(create_app(league))


@pytest.fixture(scope="module")
def store(league):
    with Store(league, read_only=True) as opened:
        yield opened


def game_id(store: Store, **where: str) -> int:
    return next(g.id for g in store.games.all() if all(getattr(g, k) == v for k, v in where.items()))


# --- the list --------------------------------------------------------------------------------


def test_the_games_api_has_the_fields_of_the_cli_newest_first(client, league):
    listed = json.loads(cli("games", "--db", league, "--json", "--limit", "10"))
    page = client.get("/api/games", params={"per_page": 10}).json()
    assert page["games"] == listed[::-1]
    assert list(page["games"][0]) == list(GAME_FIELDS)
    assert page["page"] == 1 and page["previous"] is None and page["next"] == "/api/games?per_page=10&page=2"


FILTERS = {
    "tournament": [None, "quick", "specs"],
    "bot": [None, "minimax", "minimax:depth=2", "greedy"],
    "result": [None, "1-0", "1/2-1/2"],
    "termination": [None, "win", "forfeit"],
}


@pytest.mark.parametrize("chosen", [dict(zip(FILTERS, values)) for values in itertools.product(*FILTERS.values())],
                         ids=lambda chosen: ",".join(str(v) for v in chosen.values()))
def test_every_page_of_a_filter_holds_the_games_the_store_has(client, store, chosen):
    """Walking the pages (7 games each) by their next links gives each matching game
    once, newest first: the games the store lists for the same filters."""
    def matches(game) -> bool:
        bot = chosen["bot"]
        players = {game.first, game.second} | {spec.split(":")[0] for spec in (game.first, game.second)}
        return ((chosen["tournament"] in (None, game.tournament)) and (bot is None or bot in players)
                and chosen["result"] in (None, game.result) and chosen["termination"] in (None, game.termination))

    expected = [g.id for g in reversed(store.games.all()) if matches(g)]
    query = {key: value for key, value in chosen.items() if value is not None} | {"per_page": "7"}
    seen: list[int] = []
    url: str | None = "/api/games"
    while url is not None:
        page = client.get(url, params=query if url == "/api/games" else None).json()
        assert len(page["games"]) <= 7
        seen += [g["id"] for g in page["games"]]
        url = page["next"]
    assert seen == expected
    html = client.get("/games", params=query)
    assert html.status_code == 200
    assert re.findall(r'<th scope="row" class="num"><a href="/games/(\d+)">', html.text) == [str(i) for i in
                                                                                             expected[:7]]


def test_a_bot_name_lists_a_game_between_two_of_its_specs_once(client, store):
    """Such a game is found through both specs: one game a page shows each once."""
    both = [g.id for g in store.games.all(tournament="specs")]
    seen = [client.get("/api/games", params={"bot": "minimax", "tournament": "specs", "per_page": 1, "page": page})
            .json()["games"] for page in (1, 2, 3)]
    assert [[g["id"] for g in games] for games in seen] == [[both[1]], [both[0]], []]


@pytest.mark.parametrize("versions", [3, 300])
def test_a_bot_whose_code_changed_hundreds_of_times_has_all_its_games_listed(tmp_path, versions):
    """Each version of a bot file's code is a bot of its own under one spec: a page
    finds the games of all of them, past the most a compound select can merge."""
    with Store(tmp_path / "versions.db") as store:
        identity = {"format": "round-robin", "rules": SMALL.as_dict(), "name": "edits"}
        tid = store.tournaments.start("edits", "round-robin", identity, identity, 1)
        ids = [store.bots.id_of(BotIdentity("mybot.py", "mybot.py", {}, "file", f"{i:064x}")) for i in range(versions)]
        greedy = store.bots.id_of(BotIdentity("greedy", "greedy", {}, "test"))
        for i, version in enumerate([ids[0], ids[-1], ids[versions // 2]]):
            record = play_game(GameSpec(key=f"k{i}", pairing="p", rules=SMALL, first="random", second="greedy",
                                        seed=i))
            store.games.record(tid, [record], {"random": version, "greedy": greedy})
        expected = [g.id for g in reversed(store.games.all())]
        assert [g.id for g in store.games.page(bot="mybot.py")] == expected
        assert [g.id for g in store.games.page(bot="mybot.py", offset=1, limit=1)] == expected[1:2]


def test_the_filter_form_keeps_what_was_chosen_and_empty_fields_mean_any(client):
    text = client.get("/games", params={"tournament": "quick", "result": "1-0", "termination": "win"}).text
    assert '<option value="quick" selected>quick</option>' in text
    assert "<option selected>1-0</option>" in text and "<option selected>win</option>" in text
    blank = client.get("/api/games", params={"tournament": "", "bot": "", "result": "", "termination": ""})
    assert blank.status_code == 200 and blank.json()["games"] == client.get("/api/games").json()["games"]


def test_the_pages_link_each_other_with_the_filters(client):
    first = client.get("/games", params={"tournament": "quick", "per_page": 5}).text
    older = re.search(r'<a rel="next" href="/games\?([^"]+)">', first).group(1)
    assert parse_qs(older.replace("&amp;", "&")) == {"tournament": ["quick"], "per_page": ["5"], "page": ["2"]}
    second = client.get("/games?" + older.replace("&amp;", "&")).text
    assert '<a rel="prev" href="/games?tournament=quick&amp;per_page=5">' in second


def test_a_page_past_the_games_is_empty_not_an_error(client):
    response = client.get("/games", params={"page": 999})
    assert response.status_code == 200 and "No games on page 999" in response.text
    assert client.get("/api/games", params={"page": 999}).json()["games"] == []


@pytest.mark.parametrize(("query", "status", "message"), [
    ({"tournament": "nope"}, 404, "no tournament named 'nope'"),
    ({"bot": "nobody"}, 404, "no bot 'nobody'"),
    ({"result": "2-0"}, 422, "result"),
    ({"termination": "resigned"}, 422, "termination"),
    ({"page": "0"}, 422, "page"),
    ({"page": "10000000"}, 422, "page"),
    ({"page": "x"}, 422, "page"),
    ({"per_page": "0"}, 422, "per_page"),
    ({"per_page": "100000"}, 422, "per_page"),
    ({"bot": "x" * 201}, 422, "bot"),
])
def test_bad_filters_are_404_or_422_pages_and_json(client, query, status, message):
    page = client.get("/games", params=query)
    assert page.status_code == status and "Traceback" not in page.text
    assert message.replace("'", "&#39;") in page.text
    api = client.get("/api/games", params=query)
    assert api.status_code == status and message in api.json()["error"]


def test_a_page_of_games_is_read_in_index_order_never_sorted(league, monkeypatch):
    """Every filter, alone or together, reads its page from an index already in id
    order (the bot indexes merged, or the table itself): SQLite's plan has no sort
    of the matches, which on a million games would read them all for one page."""
    with Store(league, read_only=True) as store:
        plans = []
        query = store.db.query

        def explained(sql, params):
            plans.append([row[3] for row in store.db.execute("explain query plan " + sql, params).fetchall()])
            return query(sql, params)

        monkeypatch.setattr(store.db, "query", explained)
        for tournament, bot, result, termination in itertools.product(*FILTERS.values()):
            store.games.page(tournament, bot, result, termination, offset=5, limit=10)
    assert len(plans) == 3 * 4 * 3 * 3
    for plan in plans:
        assert not any("TEMP B-TREE" in step or "idx_games_tournament_id_key" in step for step in plan), plan


# --- one game --------------------------------------------------------------------------------


def stones(text: str) -> set[tuple[int, int, int]]:
    return {(int(c), int(r), int(p)) for _, c, r, p in STONE.findall(text)}


def expected_stones(store: Store, game_id: int, plies: int | None = None) -> set[tuple[int, int, int]]:
    game = store.games.get(game_id)
    rules = rules_of(game)
    moves = parse_moves(game.moves or "", rules)[:plies]
    board = Board.from_moves(moves, rules)
    return {(c, r, owner) for c in range(rules.width) for r in range(rules.height)
            if (owner := board.cell(c, r)) is not None}


def test_the_game_page_draws_the_final_board_without_javascript(client, store):
    for game in store.games.all():
        text = client.get(f"/games/{game.id}").text
        assert stones(text) == expected_stones(store, game.id), game.id
        assert f'<figcaption id="board-caption">After {game.plies} of {game.plies} plies' in text
        assert text.count('aria-current="step"') == 1


@pytest.mark.parametrize("ply", [0, 1, 2, 5])
def test_ply_draws_the_board_after_that_many_plies(client, store, ply):
    game = game_id(store, tournament="quick")
    text = client.get(f"/games/{game}", params={"ply": ply}).text
    assert stones(text) == expected_stones(store, game, ply)
    current = re.findall(r'<tr data-ply="(\d+)" data-move="[^"]+" aria-current="step">', text)
    assert current == ([str(ply)] if ply else [])
    assert f'<input type="range" id="replay-ply" min="0" max="{store.games.get(game).plies}" value="{ply}">' in text


def test_the_move_list_shows_each_move_with_its_time_info_and_marks(client, store):
    game = store.games.get(analysed_game(store))
    text = client.get(f"/games/{game.id}").text
    moves = store.games.moves(game.id)
    rows = re.findall(r'<tr data-ply="(\d+)" data-move="([^"]+)"', text)
    assert rows == [(str(m.ply + 1), m.move) for m in moves]
    timed = next(m for m in moves if m.ms is not None and m.info)
    info = json.loads(timed.info)
    assert f'<td class="num">{timed.ms:.1f}</td>' in text
    assert f'<td class="num">{info["depth"]:,}</td>' in text and f'<td class="num">{info["nodes"]:,}</td>' in text
    # The stored analysis: a lost win on ply 3 (the position before was won), unknown before ply 1.
    assert "<th scope=\"col\">Mark</th>" in text
    marked = re.search(r'<tr data-ply="3" .*?</tr>', text, re.S).group(0)
    assert '<span class="mark">lost win</span>' in marked and "win in" in marked
    assert "unknown" in re.search(r'<tr data-ply="1" .*?</tr>', text, re.S).group(0)
    assert text.count('<span class="mark">') == 1
    assert game.opening_plies == 2 and text.count("<td>opening</td>") == 2


def test_a_game_without_analysis_has_no_analysis_columns(client, store):
    text = client.get(f"/games/{game_id(store, tournament='specs')}").text
    assert "Before the move" not in text and ">Mark<" not in text


@pytest.mark.parametrize(("url", "status"), [
    ("/games/999999", 404), ("/games/0", 422), ("/games/-3", 422), ("/games/abc", 422),
    ("/games/99999999999999999999", 422), ("/games/1?ply=999", 422), ("/games/1?ply=-1", 422),
    ("/games/1?ply=x", 422), ("/games/1/export?format=pdf", 422), ("/games/999999/export", 404),
    ("/api/games/999999", 404), ("/api/games/abc", 422),
])
def test_bad_game_ids_and_plies_are_404_or_422_never_a_traceback(client, url, status):
    response = client.get(url)
    assert response.status_code == status, response.text
    assert "Traceback" not in response.text
    if url.startswith("/api/"):
        assert response.json()["error"]


def test_a_ply_past_the_end_says_how_many_there_are(client, store):
    plies = store.games.get(1).plies
    text = client.get("/games/1", params={"ply": plies + 1}).text
    assert f"ply {plies + 1} is past the end: game 1 has {plies} plies" in text


@pytest.mark.parametrize(("size", "gravity", "view", "labels"), [
    ((40, 40), True, (1600, 1630), ["1", "5", "10", "15", "20", "25", "30", "35", "40"]),
    ((15, 15), False, (640, 630), ["a", "e", "j", "o", "1", "5", "10", "15"]),
    ((3, 3), False, (160, 150), ["a", "b", "c", "1", "2", "3"]),
    ((7, 6), True, (280, 270), ["1", "2", "3", "4", "5", "6", "7"]),
])
def test_boards_of_every_size_scale_in_one_picture(client, store, size, gravity, view, labels):
    """Any board is one SVG whose viewBox the page scales to the viewport: 40 units a
    cell, room for row numbers without gravity, labels on every fifth line of a large one."""
    game = next(g for g in store.games.all() if (rules_of(g).width, rules_of(g).height) == size)
    text = client.get(f"/games/{game.id}").text
    assert f'viewBox="0 0 {view[0]} {view[1]}"' in text
    assert re.findall(r'<text x="[\d.]+" y="[\d.]+">(\w+)</text>', text) == labels
    assert stones(text) == expected_stones(store, game.id)
    assert f'<svg id="board" class="board {"gravity" if gravity else "cells"}"' in text
    assert ('<div class="game large">' in text) == (max(size) > 12)


def test_bot_text_is_escaped_on_the_list_and_the_game_page(client, store):
    hostile = game_id(store, first=HOSTILE)
    pages = [client.get(f"/games/{hostile}").text, client.get("/games").text,
             client.get("/games", params={"bot": HOSTILE}).text]
    for text in pages:
        assert "<script>alert" not in text and "\x1b" not in text and "\u202e" not in text
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;\\x1b[31m\\u202eevil" in text
    # The JSON shown on the page is still the exported document, escapes and all.
    shown = re.search(r'<pre id="document" class="document">(.*?)</pre>', pages[0], re.S).group(1)
    unescaped = shown.replace("&lt;", "<").replace("&gt;", ">").replace("&#34;", '"').replace("&#39;", "'")
    assert json.loads(unescaped.replace("&amp;", "&")) == json.loads(cli("export", str(hostile), "--db",
                                                                         store.path, "--format", "json"))
    # The replay's data is JSON in a script element: nothing in it can close the element.
    data = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', pages[0], re.S).group(1)
    assert "<" not in data


@pytest.mark.parametrize("fmt", ["moves", "json"])
def test_the_files_to_download_are_what_arena_export_writes(client, store, fmt):
    for game in store.games.all():
        response = client.get(f"/games/{game.id}/export", params={"format": fmt})
        assert response.text == cli("export", str(game.id), "--db", store.path, "--format", fmt)
        suffix = "txt" if fmt == "moves" else "json"
        assert response.headers["content-disposition"] == f'attachment; filename="game-{game.id}.{suffix}"'
        assert response.headers["x-content-type-options"] == "nosniff"


def test_the_game_api_is_the_export_with_id_tournament_and_key(client, store):
    for game in store.games.all():
        document = client.get(f"/api/games/{game.id}").json()
        assert document == {"id": game.id, "tournament": game.tournament, "key": game.key,
                            **json.loads(cli("export", str(game.id), "--db", store.path, "--format", "json"))}


def test_the_one_line_notation_is_on_the_page_to_copy(client, store):
    text = client.get("/games/1").text
    assert f'<code id="notation">{cli("export", "1", "--db", store.path).strip()}</code>' in text
    assert 'data-copy="notation"' in text and 'href="/games/1/export?format=json" download' in text
    assert f'&#34;moves&#34;: &#34;{store.games.get(1).moves}&#34;' in text


def test_the_game_pages_load_nothing_from_the_internet(client):
    for url in ("/games", "/games/1"):
        head = client.get(url).text.split("<body>")[0]
        assert "//" not in head.replace("<!doctype html>", ""), url
    for script in ("replay.js", "live.js"):
        source = client.get(f"/static/{script}").text
        assert re.findall(r"https?://[^\"' ]+", source) in ([], ["http://www.w3.org/2000/svg"]), script


# --- live pages ------------------------------------------------------------------------------


def test_the_version_changes_when_a_game_arrives_or_a_tournament_ends(league, tmp_path):
    path = tmp_path / "copy.db"
    with Store(league, read_only=True) as source, Store(path) as target:
        source.db.conn.backup(target.db.conn)
    client = TestClient(create_app(str(path)))
    before = client.get("/api/version").json()["version"]
    assert client.get("/api/version").json()["version"] == before
    with Store(path) as store:
        identity = {"format": "round-robin", "rules": SMALL.as_dict(), "name": "later"}
        tid = store.tournaments.start("later", "round-robin", identity, identity, 1)
        started = client.get("/api/version").json()["version"]
        ids = {spec: store.bots.id_of(BotIdentity(spec, spec, {}, "test")) for spec in ("random", "greedy")}
        store.games.record(tid, [play_game(GameSpec(key="k", pairing="p", rules=SMALL, first="random",
                                                    second="greedy", seed=1))], ids)
        played = client.get("/api/version").json()["version"]
        store.tournaments.set_status(tid, "finished")
    finished = client.get("/api/version").json()["version"]
    assert len({json.dumps(v) for v in (before, started, played, finished)}) == 4


def test_the_live_pages_poll_and_say_what_to_swap(league, tmp_path):
    """Home and standings load the poller and wrap what changes in a region it swaps;
    a page drawn while its tournament runs says so (the poller then catches up once)."""
    client = TestClient(create_app(league))
    for url in ("/", "/standings?tournament=quick", "/standings?all=true"):
        text = client.get(url).text
        assert '<script src="/static/live.js" defer></script>' in text, url
        assert re.search(r'<div id="live-[a-z]+" data-live>', text), url
    assert '<script src="/static/sort.js" defer data-enhance></script>' in client.get("/standings").text
    path = tmp_path / "running.db"
    with Store(league, read_only=True) as source, Store(path) as target:
        source.db.conn.backup(target.db.conn)
        target.db.table("tournaments").update(target.tournaments.check("quick").id, {"status": "running"})
    running = TestClient(create_app(str(path)))
    with Store(path) as runner, runner.tournaments.running("quick"):  # a run holds it, as the runner does
        assert '<div id="live-league" data-live data-running>' in running.get("/").text
        assert '<div id="live-standings" data-live data-running>' in running.get("/standings?tournament=quick").text
        assert '<div id="live-standings" data-live>' in running.get("/standings?tournament=specs").text
    # Nobody holds it (its runner was killed outright): not shown as running.
    assert '<div id="live-league" data-live>' in running.get("/").text


def test_results_and_terminations_offered_are_the_stored_ones(client):
    """The filter's choices are every result and termination the store writes."""
    from arena.records import RESULTS
    text = client.get("/games").text
    for value in [*RESULTS.values(), *(str(t) for t in Termination)]:
        assert f"<option>{value}</option>" in text


# --- who won, and when --------------------------------------------------------------------------

WIN_LINE = re.compile(r'<g class="win-line" data-lines="(\d+)"( visibility="hidden")?>(.*?)</g>', re.S)


def test_the_game_page_rings_the_line_that_won_at_the_end_only(client, store):
    """Each game won on the board has its line(s) drawn over the final position (the
    engine's Board.winning_lines), hidden before the end; a draw or a forfeit has none."""
    won = drawn_or_forfeit = 0
    for game in store.games.all():
        rules = rules_of(game)
        board = Board.from_moves(parse_moves(game.moves or "", rules), rules)
        lines = board.winning_lines()
        text = client.get(f"/games/{game.id}").text
        found = WIN_LINE.search(text)
        if game.termination != "win" or game.winner is None:
            assert found is None, game.id
            drawn_or_forfeit += 1
            continue
        won += 1
        assert lines and found is not None and found.group(2) is None, game.id  # shown at the last ply
        rings = {(float(x), float(y)) for x, y in re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', found.group(3))}
        left = 40 if not rules.gravity else 0
        assert rings == {(left + c * 40 + 20, (rules.height - 1 - r) * 40 + 20) for line in lines for c, r in line}
        assert all(board.cell(c, r) == game.winner for line in lines for c, r in line)
        before = WIN_LINE.search(client.get(f"/games/{game.id}", params={"ply": game.plies - 1}).text)
        assert before is not None and before.group(2) is not None, game.id  # drawn, hidden before the end
    assert won and drawn_or_forfeit


def test_the_list_names_the_winner_and_the_whole_reason(client, store):
    text = client.get("/games", params={"per_page": 500}).text
    for game in store.games.all():
        row = re.search(rf'<tr>\s*<th scope="row" class="num"><a href="/games/{game.id}">.*?</tr>', text, re.S).group(0)
        if game.winner is None:
            assert "a draw" in row or "unfinished" in row
        else:
            winner = game.first if game.winner == 0 else game.second
            if "<" not in winner:  # the hostile name is checked escaped elsewhere
                assert f'<strong class="winner">{winner}</strong> won' in row, row
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;\\x1b[31m\\u202eevil</span></td>" in text


def test_a_long_reason_is_listed_whole(league, tmp_path):
    """A reason as long as the arena keeps (MAX_TEXT) is listed whole, to wrap in its
    cell (it was cut at 60 characters)."""
    from arena.protocol.messages import MAX_TEXT

    path = tmp_path / "copy.db"
    with Store(league, read_only=True) as source, Store(path) as target:
        source.db.conn.backup(target.db.conn)
        reason = "crashed: " + "a long story " * 40
        target.db.conn.execute("update games set reason = ? where id = 1", [reason[:MAX_TEXT]])
        target.db.conn.commit()
    text = TestClient(create_app(str(path))).get("/games", params={"per_page": 500}).text
    assert f'<span class="reason">{reason[:MAX_TEXT]}</span>' in text


def test_a_moves_other_info_is_shown_a_field_a_line_never_cut_inside_one(client, store):
    from arena.web.games import INFO_SHOWN, other_info

    text = client.get(f"/games/{game_id(store, first=HOSTILE)}").text
    cell = re.search(r'<td class="info">(.*?)</td>', text, re.S).group(1)
    assert cell.startswith("<span>note: &#34;&lt;script&gt;")  # the field's name, then its value as JSON
    many = {f"field{i}": "x" * 50 for i in range(40)}
    lines = other_info(many)
    assert lines[-1] == f"… and {40 - len(lines) + 1} fields more in the JSON below"
    assert all(line == f'field{i}: "{"x" * 50}"' for i, line in enumerate(lines[:-1]))
    assert sum(map(len, lines[:-1])) <= INFO_SHOWN
    assert other_info({"pv": "y" * 2000}) == [f'pv: "{"y" * (INFO_SHOWN - 5)}…']
    assert other_info(None) == [] and other_info([1, 2]) == ["[1, 2]"]


def test_every_time_is_one_time_element_in_utc_with_its_iso_stamp(client, store):
    from arena.web.pages import utc_text

    game = store.games.all()[0]
    for text in (client.get("/games").text, client.get(f"/games/{game.id}").text, client.get("/").text):
        stamps = re.findall(r'<time datetime="([^"]+)" title="([^"]+)">([^<]+)</time>', text)
        assert stamps and all(shown == utc_text(iso) and title == utc_text(iso, seconds=True)
                              for iso, title, shown in stamps)
        # (the game's JSON document, to copy, keeps the ISO stamp machines read)
        prose = re.sub(r'<pre id="document"[^>]*>.*?</pre>', "", text, flags=re.S)
        assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", re.sub(r'<time datetime="[^"]+"', "", prose))
    assert utc_text("2026-11-26T21:26:45.041+00:00") == "2026-11-26 21:26 UTC"
    assert utc_text("2026-11-26T23:26:45+02:00", seconds=True) == "2026-11-26 21:26:45 UTC"
    assert utc_text("2026-11-26T21:26:45") == "2026-11-26 21:26 UTC" and utc_text("soon") == "soon"
