"""Protocol v0: the messages round-trip, bad lines are refused with a reason, the
server answers a Python bot's side of a game, a sandboxed bot's job crosses as
JSON, and a bot gets its move's Limit (or reads the same time_allowed as ever)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from arena.bot import NO_LIMIT, Bot, BotFailure, Choice, Limit, Option
from arena.engine.game import Board, Rules
from arena.protocol import messages
from arena.protocol.messages import (
    MAX_DEPTH,
    MAX_MESSAGE,
    PROTOCOL_VERSION,
    Hello,
    Job,
    Move,
    NewGame,
    Quit,
    check_hello,
    decode,
    decode_request,
    encode,
    parse_answer,
)
from arena.protocol.player import InProcessPlayer, as_player
from arena.protocol.server import Channel, Server, serve
from arena.records import BotCode, GameSpec, Limits, TimeControl
from arena.referee.referee import play_game

# --- the messages ----------------------------------------------------------------------------

REQUESTS = [
    Hello(),
    NewGame(Rules(width=9, height=7, connect=5), 1, 2**40, TimeControl(0.5, 3.0)),
    NewGame(Rules(), 0, 0, TimeControl()),
    Move((3, 3, 4), Limit(0.5, 2.25)),
    Move((), Limit(None, None, 10_000)),
    Move((0,), NO_LIMIT),
    Quit(),
    Job(BotCode("bot.py", text="from arena.bot import Bot\n# [{ brackets in a string }]\n", class_name="Mine"),
        {"depth": "3"}, Limits(memory_mb=256, start_seconds=2.5)),
    Job(BotCode("random", entry_point="bots.random_bot:RandomBot"), {}, Limits()),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).TYPE)
def test_every_request_round_trips_as_one_line_of_json(request_):
    line = encode(request_)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line)["type"] == type(request_).TYPE
    assert decode_request(line[:-1], messages.MAX_JOB) == request_


ANSWERS = [
    messages.hello_answer("minimax", "bot", {"depth": {"type": "int", "default": 4, "help": "plies"}}),
    messages.ready(),
    messages.moved(3, {"score": 0.5, "pv": [3, 4]}),
    messages.failed("crashed: ValueError: 'no'"),
    messages.not_a_move("'4' (str)"),
]


@pytest.mark.parametrize("answer", ANSWERS, ids=lambda a: next(iter(a)))
def test_every_answer_round_trips(answer):
    line = encode(answer)
    assert line.count(b"\n") == 1
    assert parse_answer(line[:-1]) == answer


def test_the_hello_answer_names_the_version_and_another_version_is_refused():
    answer = messages.hello_answer("x", "bot", {})
    assert answer["protocol"] == PROTOCOL_VERSION == 1
    check_hello(answer)
    with pytest.raises(BotFailure, match="protocol: the bot speaks version 0, the arena version 1"):
        check_hello({**answer, "protocol": 0})
    with pytest.raises(BotFailure, match="^exited with code 3$"):
        check_hello({"error": "exited with code 3"})


@pytest.mark.parametrize(("line", "reason"), [
    (b"x" * (MAX_MESSAGE + 1), "protocol: answer too long"),
    (b'{"move": 3, "info": ' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"}",
     f"protocol: answer nested more than {MAX_DEPTH} deep"),
    (b"[3]", "protocol: unreadable answer"),
    (b'{"move": 3', "protocol: unreadable answer"),
    (b"\xff\xfe", "protocol: unreadable answer"),
    (b'{"ok": true, "kind": "rocket"}', "protocol: unknown kind 'rocket'"),
])
def test_a_bad_answer_is_refused_with_a_reason(line, reason):
    with pytest.raises(BotFailure) as refused:
        parse_answer(line)
    assert refused.value.reason.startswith(reason)


@pytest.mark.parametrize(("line", "reason"), [
    (b'{"type": "dance"}', "protocol: unknown request 'dance'"),
    (b'{"moves": []}', "protocol: unknown request None"),
    (b'{"type": "move", "moves": "3 3"}', "protocol: move without the moves so far"),
    (b'{"type": "move", "moves": [3], "limit": {"move_seconds": "1"}}', "protocol: move_seconds must be"),
    (b'{"type": "move", "moves": [3], "limit": {"nodes": 1.5}}', "protocol: a node limit that is not an integer"),
    (b'{"type": "new_game", "side": 0, "seed": 1}', "protocol: new_game without its rules"),
    (b'{"type": "new_game", "rules": {"width": 99}, "side": 0, "seed": 1}', "protocol: bad new_game request: "),
    (b'{"type": "new_game", "rules": {}, "side": "first", "seed": 1}', "protocol: new_game without an integer side"),
    (b'{"type": "hello"}', "protocol: hello without an integer protocol"),
    (b'{"type": "job", "code": {"label": "x", "colour": 1}, "options": {}, "limits": {}}', "protocol: bad job"),
    (b'{"type": "quit"' + b" " * messages.MAX_REQUEST + b"}", "protocol: request too long"),
    (b"[" * 40 + b"]" * 40, "protocol: request nested more than"),
])
def test_a_bad_request_is_refused_with_a_reason(line, reason):
    with pytest.raises(BotFailure) as refused:
        decode_request(line)
    assert refused.value.reason.startswith(reason), refused.value.reason


def test_numbers_json_has_not_are_read_as_null():
    assert decode(b'{"a": NaN, "b": -Infinity, "c": 1e999, "d": 0.5}') == {"a": None, "b": None, "c": None, "d": 0.5}


# --- the server ----------------------------------------------------------------------------------


class Scripted(Bot):
    """Plays the lowest legal column; logs what it was told; prints to its own stdout."""

    name = "scripted"
    depth = Option(4, "plies")

    def choose_move(self, board, limit):
        print("thinking out loud")  # the bot's log: never on the channel
        if board.ply == 3:
            raise ValueError("the OPPONENT crashed")
        if board.ply == 5:
            return (1,)
        return Choice(board.legal_moves()[0], {"ply": board.ply, "limit": [limit.move_seconds, limit.bank_seconds],
                                               "time_allowed": self.time_allowed, "depth": self.depth})


def exchange(requests, bot=None, job=None):
    """The server's answers to ``requests``, written all at once to its channel."""
    ours, theirs = socket.socketpair()
    try:
        ours.sendall(b"".join(encode(request) for request in requests))
        ours.shutdown(socket.SHUT_WR)
        channel = Channel(theirs.fileno())
        if job is not None:
            serve(channel, job)
        else:
            Server(bot, Limits()).run(channel)
        theirs.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := ours.recv(65536):
            received += chunk
    finally:
        ours.close()
        theirs.close()
    return [parse_answer(line) for line in received.splitlines()]


def test_the_server_answers_a_scripted_exchange_with_an_in_process_bot(capfd):
    rules = Rules()
    answers = exchange([
        Hello(),
        NewGame(rules, 0, 7, TimeControl(0.5, 2.0)),
        Move((), Limit(0.5, 2.0)),
        Move((0, 1), Limit(0.5, 1.25)),
        Move((0, 1, 0), Limit(0.5, None)),
        Move((0, 1, 0, 1, 0), Limit(60.0)),
        Hello(protocol=1),
        Quit(),
        Move((), NO_LIMIT),  # after quit: never answered
    ], Scripted(depth=6))
    assert answers == [
        {"type": "hello", "protocol": 1, "name": "scripted", "kind": "bot",
         "options": {"depth": {"type": "int", "default": 4, "help": "plies"}},
         "variants": [{"width": [3, 40], "height": [3, 40], "connect": [3, 40], "gravity": [True, False],
                       "scoring": ["line", "count"]}]},
        {"ok": True},
        {"move": 0, "info": {"ply": 0, "limit": [0.5, 2.0], "time_allowed": 2.5, "depth": 6}},
        {"move": 0, "info": {"ply": 2, "limit": [0.5, 1.25], "time_allowed": 1.75, "depth": 6}},
        {"error": 'crashed: ValueError: "the OPPONENT crashed" (test_protocol.py line 137, in choose_move)',
         "exception": 'ValueError: "the OPPONENT crashed"',
         "traceback": [["test_protocol.py", 137, "choose_move", 'raise ValueError("the OPPONENT crashed")']]},
        {"not_a_move": "(1,) (tuple)"},
        {"type": "hello", "protocol": 1, "name": "scripted", "kind": "bot",
         "options": {"depth": {"type": "int", "default": 4, "help": "plies"}},
         "variants": [{"width": [3, 40], "height": [3, 40], "connect": [3, 40], "gravity": [True, False],
                       "scoring": ["line", "count"]}]},
    ]
    assert capfd.readouterr().out == "thinking out loud\n" * 4


def test_the_server_loads_a_job_and_says_why_one_cannot_be_loaded():
    code = BotCode("agent.py", text="def agent(observation, configuration):\n    return 2\n")
    answers = exchange([Hello(), NewGame(Rules(), 1, 0), Move((3,), Limit(1.0)), Quit()], job=Job(code, {}))
    assert [answers[0]["kind"], answers[0]["name"], answers[1:]] == [
        "connectx", "kaggle-agent", [{"ok": True}, {"move": 2, "info": {}}]]
    broken = BotCode("broken.py", text="import no_such_module_here\n")
    assert exchange([Hello()], job=Job(broken, {})) == [  # with where its import failed, for its log
        {"error": "failed to import: ModuleNotFoundError: No module named 'no_such_module_here'",
         "exception": "ModuleNotFoundError: \"No module named 'no_such_module_here'\"",
         "traceback": [["broken.py", 1, "<module>", "import no_such_module_here"]]}]


def test_a_request_the_server_cannot_read_is_answered_with_why_and_ends_the_exchange():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        ours.sendall(b'{"type": "dance"}\n' + encode(Hello()))
        Server(Scripted(), Limits()).run(Channel(theirs.fileno()))
        assert parse_answer(ours.recv(65536).rstrip(b"\n")) == {"error": "protocol: unknown request 'dance'"}


# --- the limit of a move -------------------------------------------------------------------------


class ReadsTimeAllowed(Bot):
    def choose_move(self, board):
        return Choice(board.legal_moves()[0], {"time_allowed": self.time_allowed})


class DeclaresLimit(Bot):
    def choose_move(self, board, limit):
        return Choice(board.legal_moves()[0], {"limit": [limit.move_seconds, limit.bank_seconds, limit.nodes],
                                               "is_limit": isinstance(limit, Limit)})


def infos(record, player):
    return [move.info for move in record.moves[player::2]]


def spec(clock=None, first="a", second="b"):
    clock = clock if clock is not None else TimeControl()
    return GameSpec("k", Rules(width=4, height=4, connect=4), first, second, "a-b", time_control=clock)


def test_a_bot_reading_time_allowed_sees_the_number_it_always_did_and_one_declaring_limit_gets_the_limit():
    record = play_game(spec(TimeControl(0.5, 2.0)), bots=(ReadsTimeAllowed(), DeclaresLimit()))
    assert record.termination != "forfeit", record.reason
    # As before: the time per move plus what is left of the bank (nothing drawn on here).
    assert {info["time_allowed"] for info in infos(record, 0)} == {0.5 + max(2.0, 0.0)}
    assert {tuple(info["limit"]) for info in infos(record, 1)} == {(0.5, 2.0, None)}
    assert all(info["is_limit"] for info in infos(record, 1))
    no_bank = play_game(spec(TimeControl(0.25)), bots=(ReadsTimeAllowed(), DeclaresLimit()))
    assert {info["time_allowed"] for info in infos(no_bank, 0)} == {0.25}
    assert {tuple(info["limit"]) for info in infos(no_bank, 1)} == {(0.25, None, None)}
    unlimited = play_game(spec(), bots=(ReadsTimeAllowed(), DeclaresLimit()))
    assert {info["time_allowed"] for info in infos(unlimited, 0)} == {None}
    assert {tuple(info["limit"]) for info in infos(unlimited, 1)} == {(None, None, None)}


def test_the_limit_shrinks_as_an_overrun_draws_on_the_bank():
    import time

    class Slow(DeclaresLimit):
        def choose_move(self, board, limit):
            if board.ply == 1:
                time.sleep(0.15)
            return super().choose_move(board, limit)

    record = play_game(spec(TimeControl(0.05, 1.0)), bots=(ReadsTimeAllowed(), Slow()))
    banks = [info["limit"][1] for info in infos(record, 1)]
    assert banks[0] == 1.0 and 0.8 < banks[1] < 0.95 and banks[1] == banks[-1]
    allowed = [info["time_allowed"] for info in infos(record, 0)]
    assert set(allowed) == {0.05 + 1.0}


def test_a_python_bot_becomes_an_in_process_player_and_a_player_stays_itself():
    player = as_player(DeclaresLimit())
    assert isinstance(player, InProcessPlayer) and as_player(player) is player
    player.new_game(Rules(), 0, 1)
    move, info = player.play(Board(), Limit(1.0, None, 500))
    assert (move, info) == (0, {"limit": [1.0, None, 500], "is_limit": True})
    assert as_player(ReadsTimeAllowed()).play(Board(), NO_LIMIT) == (0, {"time_allowed": None})


# --- the sandbox speaks it -----------------------------------------------------------------------


LIMIT_BOT = """
from arena.bot import Bot, Choice

class Reads(Bot):
    def choose_move(self, board):
        return Choice(board.legal_moves()[0], {"time_allowed": self.time_allowed})

class Declares(Bot):
    def choose_move(self, board, limit):
        return Choice(board.legal_moves()[0], {"limit": [limit.move_seconds, limit.bank_seconds, limit.nodes]})
"""


def test_a_sandboxed_bot_is_spoken_to_in_json_lines_only(write_bot, monkeypatch):
    from arena.sandbox.proxy import SandboxedBot

    written: list[bytes] = []
    real_send = SandboxedBot._send

    def recorded(self, data, seconds):
        written.append(bytes(data))
        return real_send(self, data, seconds)

    monkeypatch.setattr(SandboxedBot, "_send", recorded)
    path = write_bot("limits", LIMIT_BOT)
    record = play_game(spec(TimeControl(5.0, 2.0), f"{path}:Reads", f"{path}:Declares"))
    assert record.termination != "forfeit", record.reason
    # What a bot read in the sandbox, as before: the time per move plus the bank.
    assert {info["time_allowed"] for info in infos(record, 0)} == {7.0}
    assert {tuple(info["limit"]) for info in infos(record, 1)} == {(5.0, 2.0, None)}
    data = b"".join(written)
    assert b"\x80" not in data  # no pickle (every pickle of protocol 2 and later starts so)
    lines = [json.loads(line) for line in data.splitlines()]
    # Each bot: its job, hello, and new_game only once its hello is answered.
    assert [line["type"] for line in lines[:2]] == ["job", "hello"]
    assert [line["type"] for line in lines if line["type"] != "move"] == ["job", "hello"] * 2 + ["new_game"] * 2
    assert lines[0]["code"]["text"] == LIMIT_BOT and lines[0]["code"]["class_name"] == "Reads"
    assert {line["type"] for line in lines} == {"job", "hello", "new_game", "move"}
    assert sum(line["type"] == "job" for line in lines) == 2


def test_a_sandboxed_bot_with_no_clock_is_given_the_sandboxs_own_limit(write_bot):
    path = write_bot("limits", LIMIT_BOT)
    record = play_game(spec(TimeControl(), f"{path}:Reads", f"{path}:Declares"))
    assert {info["time_allowed"] for info in infos(record, 0)} == {Limits().move_seconds}
    assert {tuple(info["limit"]) for info in infos(record, 1)} == {(Limits().move_seconds, None, None)}


def test_the_bot_process_reads_its_job_without_pickle():
    from arena.sandbox import bot_process

    assert "pickle" not in Path(bot_process.__file__).read_text()
