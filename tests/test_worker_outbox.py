"""How a worker sends finished games: short games together, a game after a pause at
once, and a game held while the next one plays within HOLD_SECONDS, never mixed; and
how many chunks the coordinator keeps queued for it."""

from __future__ import annotations

import pickle
import threading
import time

import pytest

from arena.tournament import executors
from arena.tournament.executors import (
    CHUNKS_AHEAD,
    HOLD_SECONDS,
    MOST_CHUNKS_AHEAD,
    SEND_SECONDS,
    ProcessExecutor,
    _Outbox,
    chunks_ahead,
)


class Pipe:
    def __init__(self) -> None:
        self.messages: list[object] = []

    def send_bytes(self, data: bytes) -> None:
        self.messages.append(pickle.loads(data))


def test_games_that_finish_close_together_go_as_one_message_then_the_end_of_the_chunk():
    pipe = Pipe()
    outbox = _Outbox(pipe)
    outbox.add("g1")  # the first message of the worker: at once
    for game in ("g2", "g3", "g4"):
        outbox.add(game)
    outbox.send(0.25)  # the chunk is done, in a quarter of a second
    assert pipe.messages == [["g1"], ["g2", "g3", "g4"], 0.25]


def test_a_game_that_finishes_after_a_pause_goes_at_once():
    pipe = Pipe()
    outbox = _Outbox(pipe)
    outbox.add("g1")
    time.sleep(SEND_SECONDS * 2)  # a game that took longer than SEND_SECONDS
    outbox.add("g2")
    assert pipe.messages == [["g1"], ["g2"]]


def test_a_game_held_while_a_long_one_plays_is_sent_by_the_watch():
    pipe = Pipe()
    outbox = _Outbox(pipe)
    outbox.add("g1")
    outbox.add("g2")  # held: it came within SEND_SECONDS of g1
    assert pipe.messages == [["g1"]]
    stop = threading.Event()
    watch = threading.Thread(target=outbox.watch, args=(stop,))
    watch.start()
    try:
        deadline = time.monotonic() + 3 * HOLD_SECONDS + 1
        while len(pipe.messages) < 2 and time.monotonic() < deadline:
            time.sleep(0.005)  # the main thread is busy with a long game
    finally:
        stop.set()
        watch.join()
    assert pipe.messages == [["g1"], ["g2"]]


def test_the_watch_and_the_player_never_send_at_once(monkeypatch):
    pipe = Pipe()
    inside = threading.Lock()
    clashes: list[object] = []  # messages begun while another was being written

    def send(to: Pipe, message: object) -> None:
        if not inside.acquire(blocking=False):
            clashes.append(message)
            inside.acquire()
        time.sleep(0.001)
        to.send_bytes(pickle.dumps(message))
        inside.release()

    monkeypatch.setattr(executors, "_send", send)
    monkeypatch.setattr(executors, "HOLD_SECONDS", 0.001)
    monkeypatch.setattr(executors, "SEND_SECONDS", 0.001)
    outbox = _Outbox(pipe)
    stop = threading.Event()
    watch = threading.Thread(target=outbox.watch, args=(stop,))
    watch.start()
    try:
        for number in range(300):
            outbox.add(number)
            time.sleep(0.0002)  # a short game
        outbox.send(None)
    finally:
        stop.set()
        watch.join()
    sent = [game for message in pipe.messages[:-1] for game in message]  # type: ignore[union-attr]
    assert not clashes
    assert sent == list(range(300)) and pipe.messages[-1] is None


@pytest.mark.parametrize(("seconds", "chunks"), [
    (0.0, MOST_CHUNKS_AHEAD), (0.013, MOST_CHUNKS_AHEAD), (0.05, 3), (0.1, CHUNKS_AHEAD), (30.0, CHUNKS_AHEAD),
])
def test_a_worker_whose_chunks_go_fast_has_more_of_them_queued(seconds, chunks):
    assert chunks_ahead(seconds) == chunks


class CoordinatorEnd:
    """The coordinator's end of a worker's pipe: what the worker sent, and what it is sent."""

    def __init__(self, messages: list[object]) -> None:
        self.waiting = [pickle.dumps(message) for message in messages]
        self.sent: list[object] = []

    def poll(self, timeout: float = 0) -> bool:
        return bool(self.waiting)

    def recv_bytes(self) -> bytes:
        return self.waiting.pop(0)

    def send_bytes(self, data: bytes) -> None:
        self.sent.append(pickle.loads(data))


@pytest.mark.parametrize(("took", "queued"), [(0.01, MOST_CHUNKS_AHEAD), (2.0, CHUNKS_AHEAD)])
def test_a_chunk_done_tops_the_worker_s_queue_up_to_what_its_time_asks(took, queued):
    """The worker had CHUNKS_AHEAD chunks, said one was done (in ``took`` seconds): it
    is sent chunks until it has as many as chunks_ahead asks, while there are any."""
    executor = ProcessExecutor.__new__(ProcessExecutor)  # no processes: only the bookkeeping
    executor._received = []
    pipe = CoordinatorEnd([["game"], took])
    executor._queued = {pipe: CHUNKS_AHEAD}
    source = iter([[n] for n in range(20)])
    assert executor._read(pipe, len, source, block=True)
    assert executor._received == ["game"]
    assert executor._queued[pipe] == queued
    assert pipe.sent == [(len, [n]) for n in range(queued - CHUNKS_AHEAD + 1)]
    pipe.waiting.append(pickle.dumps(took))  # the last chunks: fewer left than asked for
    source = iter([[20]])
    assert executor._read(pipe, len, source, block=True)
    assert executor._queued[pipe] == queued
