"""A Swiss tournament's page on the league site, in-process: its table against the
CLI's JSON, every round's pairings with their byes, a round in play and rounds to
play, the cache dated by the tournament's games, escaping of a bot's name, and the
404s of an unknown tournament, another format, and a league without a Swiss."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from markupsafe import escape

from arena.cli.main import main
from arena.engine.game import Rules
from arena.ratings.swiss import round_pairing
from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.store import BotIdentity, Store
from arena.web.app import create_app

FIVE = ["random", "random:stream=2", "random:stream=3", "random:stream=4", "random:stream=5"]
HOSTILE = '<script>alert("x")</script>\x1b[31m'
#: A Swiss tournament stored game by game: its name and its first entrant are markup.
MARKED = "<i>marked</i>"
SMALL = Rules(width=5, height=4, connect=3)
#: The bots that play the stored games, and the entrants they are stored as.
PLAYERS = {"random": HOSTILE, "greedy": "greedy", "blocker": "blocker", "random:stream=2": "r2",
           "random:stream=3": "r3"}
#: The games of MARKED in the order they are stored: (round, board, lead, other), each
#: mini-match two games; round 1's bye is r3, round 2's is blocker.
BOARDS = [(1, 0, "random", "greedy"), (1, 1, "blocker", "random:stream=2"),
          (2, 0, "random:stream=3", "random"), (2, 1, "greedy", "random:stream=2")]


def run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def start_marked(db: str) -> int:
    """MARKED, with no game stored yet: 5 entrants, 3 rounds, 2 games a pairing."""
    with Store(db) as store:
        identity = {"format": "swiss", "bots": list(PLAYERS.values()), "challengers": [], "games": 2, "rounds": 3,
                    "rules": SMALL.as_dict(), "name": MARKED}
        tid = store.tournaments.start(MARKED, "swiss", identity, identity, 1)
        store.tournaments.set_status(tid, "running")
        return tid


def store_games(db: str, tid: int, games: list[tuple[int, int, str, str, str]]) -> None:
    """Play and store games (round, board, lead, other, half) of MARKED."""
    with Store(db) as store:
        ids = {spec: store.bots.id_of(BotIdentity(name, name, {}, "test")) for spec, name in PLAYERS.items()}
        records = []
        for round_number, board, lead, other, half in games:
            first, second = (lead, other) if half == "a" else (other, lead)
            key = f"{round_pairing(round_number, board)}-o0000-{half}"
            records.append(play_game(GameSpec(key=key, pairing=round_pairing(round_number, board), rules=SMALL,
                                              first=first, second=second, seed=len(key) + board)))
        store.games.record(tid, records, ids)


def marked_games(upto: int) -> list[tuple[int, int, str, str, str]]:
    """The first ``upto`` games of MARKED, both halves of a board one after the other."""
    return [(r, b, lead, other, half) for r, b, lead, other in BOARDS for half in "ab"][:upto]


@pytest.fixture(scope="module")
def league(tmp_path_factory) -> str:
    """A Swiss tournament of five random bots in three rounds played by the command
    (``cup``), a round robin (``rr``), and MARKED: round 1 played, round 2 half
    stored (one board whole, one game of the other), round 3 to play."""
    db = str(tmp_path_factory.mktemp("swiss") / "league.db")
    run("tournament", "run", "--format", "swiss", "--rounds", "3", "--games", "2", "--bots", ",".join(FIVE),
        "--workers", "1", "--db", db, "--name", "cup")
    run("tournament", "run", "--bots", "random,greedy", "--games", "2", "--workers", "1", "--db", db, "--name", "rr")
    store_games(db, start_marked(db), marked_games(7))
    return db


@pytest.fixture(scope="module")
def client(league):
    return TestClient(create_app(league))


def cli_swiss(league: str, tournament: str) -> dict:
    return json.loads(run("standings", "--db", league, "--tournament", tournament, "--format", "json"))["swiss"]


def cells(text: str, after: str) -> list[list[str]]:
    """The text of each cell of the body of the first table after ``after`` in a page, row by row."""
    body = text.split(after, 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
             for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


@pytest.mark.parametrize("tournament", ["cup", MARKED])
def test_the_swiss_table_is_the_cli_s(client, league, tournament):
    expected = cli_swiss(league, tournament)
    data = client.get("/api/swiss", params={"tournament": tournament}).json()
    assert data["swiss"] == expected
    standings = {row["bot"]: row for row in client.get("/api/standings", params={"tournament": tournament}).json()[
        "standings"]}
    shown = cells(client.get("/swiss", params={"tournament": tournament}).text, 'id="swiss"')
    assert len(shown) == len(expected["table"]) == 5
    for row, cell in zip(expected["table"], shown, strict=True):
        elo = standings[row["bot"]]
        elo_text = {">": f"> {elo['elo'] - elo['elo_minus']:.0f}", "<": f"< {elo['elo'] + elo['elo_plus']:.0f}",
                    None: f"{elo['elo']:.0f}"}[elo["bound"]]
        assert cell == [str(row["rank"]), row["bot"].replace("\x1b", "\\x1b"), f"{row['points']:g}",
                        *(str(row[k]) for k in ("played", "won", "drawn", "lost", "byes")),
                        *(f"{row[k]:g}" for k in ("buchholz", "sonneborn_berger", "direct")), elo_text], row


def test_every_round_shows_its_pairings_its_bye_and_its_games(client, league):
    data = client.get("/api/swiss", params={"tournament": "cup"}).json()
    text = client.get("/swiss", params={"tournament": "cup"}).text
    assert "3 of 3 rounds played" in text
    byes = cli_swiss(league, "cup")["byes"]
    with Store(league, read_only=True) as store:
        keys = {game.id: game.key for game in store.games.all(tournament="cup")}
    seen_pairs = set()
    for number, played in enumerate(data["rounds"], start=1):
        assert played["round"] == number and played["state"] == "played"
        assert played["bye"] == byes[str(number)]
        boards = played["boards"]
        # Every entrant once in each round: on a board or resting.
        assert sorted([b["lead"] for b in boards] + [b["other"] for b in boards] + [played["bye"]]) == sorted(FIVE)
        section = text.split(f'id="round-{number}"', 1)[1].split("</section>", 1)[0]
        assert f"Round {number}: played" in section
        assert f'Bye: <a href="/bots/{played["bye"].replace(":", "%3A").replace("=", "%3D")}">' in section
        for board, row in zip(boards, cells(section, "<table"), strict=True):
            assert row[:4] == [str(board["board"] + 1), board["lead"],
                               f"{board['lead_points']:g} – {board['other_points']:g}", board["other"]]
            assert board["complete"] and board["lead_points"] + board["other_points"] == 2
            # Its games are the two of its board in this round, each linked.
            assert sorted(keys[i] for i in board["games"]) == [
                f"{round_pairing(number, board['board'])}-o0000-{half}" for half in "ab"]
            for game_id in board["games"]:
                assert f'<a href="/games/{game_id}">' in section
            pair = frozenset((board["lead"], board["other"]))
            assert pair not in seen_pairs  # the pairing's rule, as the page shows it
            seen_pairs.add(pair)


def test_a_round_being_played_shows_what_is_stored_and_later_rounds_are_to_play(client):
    data = client.get("/api/swiss", params={"tournament": MARKED}).json()
    assert data["swiss"]["rounds_complete"] == 1 and data["swiss"]["byes"] == {"1": "r3"}
    first, second, third = data["rounds"]
    assert first["state"] == "played" and first["bye"] == "r3"
    assert [(b["lead"], b["other"], b["complete"]) for b in first["boards"]] == [
        (HOSTILE, "greedy", True), ("blocker", "r2", True)]
    assert second["state"] == "playing" and second["bye"] is None  # known once the round is whole
    assert [(b["lead"], b["other"], len(b["games"]), b["complete"]) for b in second["boards"]] == [
        ("r3", HOSTILE, 2, True), ("greedy", "r2", 1, False)]
    assert third == {"round": 3, "state": "to play", "bye": None, "boards": []}
    text = client.get("/swiss", params={"tournament": MARKED}).text
    assert "1 of 3 rounds played" in text
    assert "Round 2: being played" in text and "(1 of 2 stored)" in text
    assert "The bye shows once the round is played." in text
    assert "Round 3: to play" in text and "To play: paired from the results" in text
    # Only whole rounds count in the table: r2's half-played board adds nothing yet.
    r2 = next(row for row in data["swiss"]["table"] if row["bot"] == "r2")
    assert r2["played"] == 1


def test_bot_text_and_the_tournament_s_name_are_escaped(client):
    for url in ("/swiss", f"/tournaments/{MARKED}", "/"):
        text = client.get(url, params={"tournament": MARKED} if url == "/swiss" else None).text
        assert "<script>alert" not in text and "\x1b" not in text and "<i>marked" not in text, url
        assert "&lt;i&gt;marked&lt;/i&gt;" in text, url
    text = client.get("/swiss", params={"tournament": MARKED}).text
    assert text.count("&lt;script&gt;alert") >= 4  # the table, round 1, round 2 and its half-played board
    assert "\\x1b[31m" in text  # the terminal escape made visible, as everywhere


def test_without_a_name_the_page_shows_the_latest_swiss(client):
    assert client.get("/api/swiss").json()["tournament"] == MARKED


def test_the_tournament_page_and_home_link_a_swiss_to_its_page(client):
    link = 'href="/swiss?tournament=cup"'
    assert link in client.get("/tournaments/cup").text and link in client.get("/").text
    assert "/swiss?tournament=rr" not in client.get("/tournaments/rr").text + client.get("/").text


@pytest.mark.parametrize(("tournament", "message"), [
    ("nope", "no tournament named 'nope'; tournaments: cup, rr, <i>marked</i>"),
    ("rr", "tournament 'rr' is a round-robin tournament, not a Swiss one: it has no Swiss table"),
])
def test_an_unknown_or_other_tournament_is_a_404_that_says_why(client, tournament, message):
    response = client.get("/swiss", params={"tournament": tournament})
    assert response.status_code == 404
    assert escape(message) in response.text and "Traceback" not in response.text
    response = client.get("/api/swiss", params={"tournament": tournament})
    assert response.status_code == 404 and message in response.json()["error"]


def test_a_league_without_a_swiss_is_a_404(tmp_path):
    db = str(tmp_path / "empty.db")
    Store(db).close()
    response = TestClient(create_app(db)).get("/swiss")
    assert response.status_code == 404 and "no Swiss tournaments here yet" in response.text


def test_the_page_follows_the_games_as_they_are_stored_and_is_cached_between(tmp_path: Path):
    """A table is computed once per state of the tournament's games: asked again it is
    the cached one; a game stored shows on the next request (the page a live one)."""
    db = str(tmp_path / "live.db")
    tid = start_marked(db)
    app = create_app(db)
    client = TestClient(app)
    data = client.get("/api/swiss", params={"tournament": MARKED}).json()
    assert [r["state"] for r in data["rounds"]] == ["to play"] * 3 and data["games"] == 0
    assert all(row["points"] == 0 and row["elo"] is None for row in data["swiss"]["table"])
    assert "0 of 3 rounds played" in client.get("/swiss", params={"tournament": MARKED}).text
    computed = app.state.cache.computed
    client.get("/swiss", params={"tournament": MARKED})
    assert app.state.cache.computed == computed  # nothing changed: the cached table
    store_games(db, tid, marked_games(3))
    data = client.get("/api/swiss", params={"tournament": MARKED}).json()
    assert [r["state"] for r in data["rounds"]] == ["playing", "to play", "to play"]
    store_games(db, tid, marked_games(4)[3:])
    data = client.get("/api/swiss", params={"tournament": MARKED}).json()
    assert [r["state"] for r in data["rounds"]] == ["played", "to play", "to play"]
    assert data["swiss"]["byes"] == {"1": "r3"} and all(row["elo"] is not None for row in data["swiss"]["table"]
                                                        if row["played"])
