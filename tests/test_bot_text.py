"""What a bot says is data: text no UTF-8 encoder can write, and a second answer
to one request, cannot stop the arena or rewrite a game.

The attacks are the bots of tests/bots/text_attacks.py: lone surrogates in a crash
message, in move info (keys and values), in an answer object's repr, and in an
answer line a sandboxed bot writes itself; a bot that answers each request more
than once. Each is played in this process (a Bot called by the referee), behind
the protocol in this process (a server in a thread), and in the sandbox, in a
real tournament run by the ``arena`` command, then read back through every
command and page that shows it.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from arena.bot import Bot, BotFailure
from arena.engine.game import Rules
from arena.protocol.player import ProtocolPlayer
from arena.protocol.server import Channel, Server
from arena.records import GameRecord, GameSpec, Limits, Outcome, Termination
from arena.referee.referee import play_game
from arena.store import BotIdentity, FinishedGame, Store
from arena.text import storable
from arena.web.app import create_app
from tests.bots import text_attacks
from tests.conftest import TEST_BOTS

ATTACKS = TEST_BOTS / "text_attacks.py"
ROOT = Path(__file__).resolve().parent.parent
# What each forfeiting attack's games record, the surrogates as six visible characters.
CRASH = r'crashed: ValueError: "bye \ud800" (text_attacks.py line 42, in choose_move)'
NON_MOVE = r"not a move: weird \udfff (Weird)"
FORGED = r"forged \ud800 and \udfff"
TWICE = "protocol: answered twice"
# SurrogateInfo's info, as stored: lone halves escaped, the pair one character.
INFO = {"key \\udc00": "value \\ud800", "nested": ["deep \\udfff", {"inner \\ud801": 1}], "pair": "smile \U0001F600"}


class FirstLegal(Bot):
    def choose_move(self, board):
        return board.legal_moves()[0]


def spec(first: str = "attack", second: str = "first-legal") -> GameSpec:
    return GameSpec("g", Rules(), first, second, pairing="p")


def new_store(path: Path) -> tuple[Store, int, dict[str, int]]:
    store = Store(path)
    tournament = store.tournaments.start("t", "round-robin", {"rules": Rules().as_dict()}, {}, 1)
    bots = ("attack", "first-legal")
    return store, tournament, {name: store.bots.id_of(BotIdentity(name, name, {}, "test")) for name in bots}


def stored_back(tmp_path: Path, record: GameRecord) -> tuple[str | None, list[object]]:
    """The game stored and read back: its reason, and each move's info."""
    store, tournament, ids = new_store(tmp_path / "arena.db")
    with store:
        game_id = store.games.record_one(tournament, record, ids)
        game = store.games.get(game_id)
        return game.reason, [json.loads(m.info) if m.info else None for m in store.games.moves(game_id)]


# --- in this process ------------------------------------------------------------------------


def test_a_lone_surrogate_in_a_crash_message_is_stored_escaped(tmp_path):
    """A bot that raises ValueError("bye \\ud800") forfeits with its message in the
    reason, the surrogate as the six characters \\ud800, and the game is stored."""
    record = play_game(spec(), (text_attacks.SurrogateCrash(), FirstLegal()))
    assert record.outcome.reason == CRASH
    assert stored_back(tmp_path, record)[0] == CRASH


def test_lone_surrogates_in_info_keys_and_values_are_stored_escaped(tmp_path):
    """Move info with lone surrogates in keys, values and nested values is stored,
    each lone half escaped and a pair of halves joined into its character, and
    reads back as text any page can show."""
    record = play_game(spec(), (text_attacks.SurrogateInfo(), FirstLegal()))
    assert record.moves[0].info == INFO
    _, infos = stored_back(tmp_path, record)
    assert infos[0::2] == [INFO] * len(infos[0::2])
    assert all(json.dumps(info, ensure_ascii=False).encode() for info in infos)  # UTF-8 writes them


def test_a_lone_surrogate_in_what_a_bot_answers_instead_of_a_move_is_stored_escaped(tmp_path):
    """An answer that is no move, whose repr holds a lone surrogate, is described
    in the forfeit reason escaped."""
    record = play_game(spec(), (text_attacks.SurrogateNonMove(), FirstLegal()))
    assert stored_back(tmp_path, record)[0] == NON_MOVE


def test_one_game_with_text_no_encoder_writes_loses_no_other_game_of_its_batch(tmp_path):
    """The store's own last line: a batch holding a game whose reason and info hold
    lone surrogates (made without the referee's care) stores every game, that one
    with its text escaped, and the next batch is stored too."""
    try:
        text_attacks.SurrogateCrash().choose_move(None)
    except ValueError as exc:
        raw = f"crashed: {exc}"  # the bot's words as they are
    played = play_game(spec("first-legal", "attack"), (FirstLegal(), text_attacks.SurrogateInfo()))
    raw_info = [move._replace(info={"key \udc00": "value \ud800"}) if move.info else move for move in played.moves]
    bad = GameRecord(spec(), Outcome(1, Termination.FORFEIT, raw), raw_info, 0.1, 1.7e9)
    good = [play_game(GameSpec(f"g{n}", Rules(), "first-legal", "attack", pairing="p", seed=n),
                      (FirstLegal(), FirstLegal())) for n in range(2)]
    store, tournament, ids = new_store(tmp_path / "arena.db")
    with store:
        batch = [FinishedGame.of(good[0]), FinishedGame.of(bad), FinishedGame.of(good[1])]
        assert store.games.record_finished(tournament, batch, ids) == 3
        games = store.games.all()
        assert [g.key for g in games] == ["g0", "g", "g1"]
        assert games[1].reason == r"crashed: bye \ud800"
        infos = [json.loads(m.info) for m in store.games.moves(games[1].id) if m.info]
        assert infos and all(info == {"key \\udc00": "value \\ud800"} for info in infos)
        assert store.games.record_finished(tournament, [FinishedGame.of(good[0])._replace(key="g2")], ids) == 1


def test_storable_escapes_lone_halves_joins_pairs_and_leaves_the_rest_as_it_is():
    """The one function every boundary uses: lone surrogates become \\udXXX text,
    pairs their character, everything else (and the same object when nothing
    changes) as it was."""
    plain = {"score": 3, "pv": ["a", "é"], "n": None}
    assert storable(plain) is plain
    assert storable("x\ud800y\udfff") == "x\\ud800y\\udfff"
    assert storable("\ud83d\ude00") == "\U0001F600"
    assert storable({"k\ud800": ("v\udc00", 1.5)}) == {"k\\ud800": ("v\\udc00", 1.5)}


# --- behind the protocol, in this process -----------------------------------------------------


class ServedInThread(ProtocolPlayer):
    """A Python bot behind protocol v0 without the sandbox: the protocol's server
    answers for it in a thread of this process, over a socket pair."""

    def __init__(self, bot: Bot) -> None:
        super().__init__(start_seconds=10.0, move_seconds=10.0)
        self.bot = bot
        self.sock: socket.socket | None = None
        self.theirs: socket.socket | None = None
        self.thread: threading.Thread | None = None
        self.buffer = b""

    def _connect(self) -> None:
        self.sock, self.theirs = socket.socketpair()
        server = Server(self.bot, Limits())
        channel = Channel(self.theirs.fileno())

        def serve() -> None:
            try:
                server.run(channel)
            except BrokenPipeError:
                pass  # the referee closed the channel first: the game is over, as in a bot process

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()

    def _send(self, data: bytes, seconds: float) -> None:
        assert self.sock is not None
        self.sock.sendall(data)

    def _receive(self, seconds: float, since: float) -> bytes:
        assert self.sock is not None
        while b"\n" not in self.buffer:
            self.sock.settimeout(max(since + seconds - time.monotonic(), 0.001))
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                raise BotFailure(f"time: no answer within {seconds:.3g} s") from None
            if not chunk:
                raise BotFailure("exited: closed its connection to the arena")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def _unasked(self) -> bytes:
        assert self.sock is not None
        if not self.buffer:
            self.sock.setblocking(False)
            try:
                self.buffer = self.sock.recv(65536)
            except BlockingIOError:
                pass
        return self.buffer

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()  # the server reads the end and stops
            assert self.thread is not None and self.theirs is not None
            self.thread.join(5)
            self.theirs.close()
            self.sock = self.theirs = None
        self.buffer = b""


def test_a_bot_that_answers_twice_forfeits_behind_the_protocol_in_this_process():
    """A second answer line to one request is a protocol forfeit that says so and
    shows the line, never the answer to the next request."""
    for side in (0, 1):
        bots = [ServedInThread(FirstLegal()), ServedInThread(FirstLegal())]
        bots[side] = ServedInThread(text_attacks.AnswersTwice())
        record = play_game(spec(), (bots[0], bots[1]))
        assert record.outcome.termination == Termination.FORFEIT and record.outcome.winner == 1 - side
        assert record.outcome.reason.startswith(TWICE + " (a line no request asked for: b'{\"move\": ")
        assert len(record.moves) <= 3  # at its second move, before that position was sent


def test_a_bot_that_answers_once_plays_to_the_end_behind_the_protocol_in_this_process():
    """hello and new_game are answered together, and answers come quickly: none of
    that reads as a second answer."""
    record = play_game(spec(), (ServedInThread(FirstLegal()), ServedInThread(text_attacks.SurrogateInfo())))
    assert record.outcome.termination in (Termination.WIN, Termination.DRAW), record.outcome.reason
    assert [move.info for move in record.moves[1::2]] == [INFO] * len(record.moves[1::2])


def test_a_lone_surrogate_in_a_crash_message_is_escaped_behind_the_protocol_in_this_process():
    """The server writes the message as a JSON escape, \\ud800, which reads back as
    a lone surrogate: the protocol player makes the reason storable."""
    record = play_game(spec(), (ServedInThread(text_attacks.SurrogateCrash()), FirstLegal()))
    assert record.outcome.reason == CRASH


# --- in the sandbox, in a tournament the arena command runs -----------------------------------

SANDBOXED = {"SurrogateCrash": CRASH, "SurrogateNonMove": NON_MOVE, "ForgedError": FORGED, "AnswersTwice": TWICE}


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ARENA_DB", None)
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    folder = tmp_path_factory.mktemp("text")
    db = str(folder / "arena.db")
    challengers = ",".join(f"{ATTACKS}:{name}" for name in [*SANDBOXED, "SurrogateInfo"])
    command = ("tournament", "run", "--format", "gauntlet", "--challengers", challengers, "--bots", "random",
               "--games", "2", "--seed", "3", "--workers", "2", "--db", db, "--name", "text")
    first = arena(*command, cwd=folder)
    again = arena(*command, cwd=folder)
    return first, again, db, folder


def games_of(db: str, name: str):
    with Store(db, read_only=True) as store:
        return [g for g in store.games.all(tournament="text") if f":{name}" in g.first + g.second]


def test_the_tournament_finishes_and_resumes(tournament):
    """A tournament with these bots finishes, every game stored in one run, and
    running it again resumes it: nothing left to play, no error."""
    first, again, db, _ = tournament
    assert first.returncode == 0, first.stderr
    assert "Traceback" not in first.stderr
    assert "10 games played" in first.stdout
    assert again.returncode == 0, again.stderr
    assert "0 games played" in again.stdout and "10 were already stored" in again.stdout
    with Store(db, read_only=True) as store:
        assert store.games.count(tournament="text") == 10
        assert store.tournaments.get("text").status == "finished"


@pytest.mark.parametrize("name", list(SANDBOXED))
def test_a_sandboxed_bot_forfeits_with_its_words_escaped(tournament, name):
    """In the sandbox, every message reaches the arena as a JSON line, whose \\ud800
    escapes decode to lone surrogates: the reasons are stored escaped."""
    games = games_of(tournament[2], name)
    assert len(games) == 2
    for game in games:
        assert game.termination == "forfeit"
        assert game.reason == SANDBOXED[name] or game.reason.startswith(SANDBOXED[name] + " ("), game.reason
        assert game.winner == (1 if f":{name}" in game.first else 0)


def test_a_sandboxed_bots_info_is_stored_escaped(tournament):
    """Info sent as JSON escapes of lone surrogates, in keys and values, is stored
    with them escaped."""
    games = games_of(tournament[2], "SurrogateInfo")
    assert len(games) == 2
    with Store(tournament[2], read_only=True) as store:
        for game in games:
            assert game.termination in ("win", "draw")
            side = 0 if ":SurrogateInfo" in game.first else 1
            infos = [json.loads(m.info) for m in store.games.moves(game.id) if m.ply % 2 == side and m.ms is not None]
            assert infos and all(info == INFO for info in infos)


def test_the_commands_show_the_text_escaped(tournament):
    """`arena games`, `arena show` and the standings show the games, the
    surrogates as visible escapes, and never fail to write them."""
    _, _, db, folder = tournament
    listed = arena("games", "--db", db, cwd=folder)
    assert listed.returncode == 0, listed.stderr
    assert "bye \\ud800" in listed.stdout and "forged \\ud800 and \\udfff" in listed.stdout
    for name, text in (("SurrogateCrash", "bye \\ud800"), ("SurrogateInfo", "inner \\\\ud801")):
        shown = arena("show", str(games_of(db, name)[0].id), "--db", db, cwd=folder)
        assert shown.returncode == 0, shown.stderr
        assert text in shown.stdout
    standings = arena("standings", "--db", db, "--tournament", "text", cwd=folder)
    assert standings.returncode == 0 and "SurrogateCrash" in standings.stdout, standings.stderr
    exported = arena("games", "--db", db, "--json", cwd=folder)
    assert exported.returncode == 0, exported.stderr
    reasons = {game["reason"] for game in json.loads(exported.stdout)}
    assert CRASH in reasons and FORGED in reasons


def test_the_pages_show_the_text_escaped(tournament):
    """The game page, its API and the games list render the reason and the info
    with the surrogates escaped."""
    db = tournament[2]
    client = TestClient(create_app(db))
    crash = games_of(db, "SurrogateCrash")[0].id
    page = client.get(f"/games/{crash}")
    assert page.status_code == 200 and "bye \\ud800" in page.text
    assert client.get(f"/api/games/{crash}").json()["reason"] == CRASH
    info = games_of(db, "SurrogateInfo")[0].id
    page = client.get(f"/games/{info}")
    assert page.status_code == 200 and "value \\\\ud800" in page.text  # JSON: the backslash written twice
    listing = client.get("/games", params={"tournament": "text"})
    assert listing.status_code == 200 and "forged \\ud800" in listing.text


def test_arena_match_writes_the_reasons_escaped_as_text_and_json(tmp_path):
    """`arena match` against a bot file whose crash message holds a lone surrogate
    prints its table and forfeit reasons, and its JSON, with the escape as text."""
    bot = f"{ATTACKS}:SurrogateCrash"
    table = arena("match", bot, "random", "--games", "2", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "bye \\ud800" in table.stdout
    as_json = arena("match", bot, "random", "--games", "2", "--json", cwd=tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    assert "bye \\\\ud800" in as_json.stdout  # a backslash in JSON: the text, not an escape of a surrogate


def test_a_surrogate_an_older_arena_stored_in_info_is_shown_escaped(tournament, tmp_path):
    """An arena before this one stored info with a surrogate as a JSON escape (it
    stored fine, and read back as a lone surrogate): the game page and its API
    still answer, with the escape as text."""
    db = str(tmp_path / "old.db")
    game = games_of(tournament[2], "SurrogateInfo")[0]
    with closing(sqlite3.connect(tournament[2])) as source, closing(sqlite3.connect(db)) as copy:
        source.backup(copy)
        copy.execute("update moves set info = ? where game_id = ? and info is not null",
                     ['{"k \\ud800": "v \\udfff"}', game.id])
        copy.commit()
    client = TestClient(create_app(db))
    page = client.get(f"/games/{game.id}")
    assert page.status_code == 200 and "k \\ud800" in page.text
    answer = client.get(f"/api/games/{game.id}")
    assert answer.status_code == 200
    assert {"k \\ud800": "v \\udfff"} in [ply["info"] for ply in answer.json()["plies"]]
