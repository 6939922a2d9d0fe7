"""Where a tournament's games are played: executors map a top-level function over
chunks of game specs and yield the records as the games finish, a few at a time.

Workers only play; the coordinator that consumes the results is the only writer
to the database. Anything with ``map_unordered`` and ``close`` serves: the
processes of this machine here, a cluster's workers elsewhere, without touching
the schedule or the store.
"""

from __future__ import annotations

import math
import os
import pickle
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from arena.sandbox import process_control
from arena.sandbox.spawner import PROCESS_SPAWNER
from arena.tournament.execution import DRAIN_SECONDS, HEARTBEAT_SECONDS, Executor, WorkerLost

if TYPE_CHECKING:
    from arena.tournament.cluster import WorkerNeeds

#: Seconds a ProcessExecutor gathers finished games before it hands them over (one
#: transaction for many short games), and the longest it waits without yielding (an
#: empty list: nothing finished, but the caller may update its progress).
GATHER_SECONDS = 0.05
#: Chunks each worker has at a time, at the least: the one it plays and the next,
#: already in its pipe, so that it never waits for the coordinator between two chunks.
CHUNKS_AHEAD = 2
#: Seconds of play a worker has queued beyond the chunk it plays, judged by how long
#: its last chunk took: the coordinator reads no pipe while it stores a batch of
#: games (tens of milliseconds), and a worker that finishes its queue meanwhile
#: waits. One chunk of 64 random games is gone in about 13 ms, so short chunks get
#: more of them queued (up to MOST_CHUNKS_AHEAD); chunks that take longer keep
#: CHUNKS_AHEAD, so that the last of a tournament's chunks are still shared evenly.
AHEAD_SECONDS = 0.1
MOST_CHUNKS_AHEAD = 8


class SerialExecutor:
    """Plays everything in this process: simplest, and easiest to debug. With
    ``log_sink``, what the bots write is told to it as they write it (``fn`` takes
    it as ``log_sink``: see :func:`~arena.tournament.runner.play_for_store`)."""

    workers = 1
    log_sink: Any = None

    def __init__(self, log_sink: Any = None) -> None:
        self.log_sink = log_sink

    def map_unordered(self, fn, chunks):  # type: ignore[no-untyped-def]
        for chunk in chunks:
            for record in fn(chunk) if self.log_sink is None else fn(chunk, log_sink=self.log_sink):
                yield [record]

    def drain(self) -> list[Any]:
        return []  # every finished game was yielded at once

    def close(self, cancel: bool = False) -> None:
        pass


class ProcessExecutor:
    """Worker processes on this machine (``multiprocess``), one pipe each.

    Each worker has ``CHUNKS_AHEAD`` chunks at a time, or more when its chunks are
    short (see :func:`chunks_ahead`): it plays one, sends back each game's record
    as the game finishes, then says the chunk is done and how long it took, goes
    on with the next one waiting in its pipe, and is sent more.
    Records that arrive close together are yielded together (within
    ``GATHER_SECONDS``), so short games do not cost a transaction each; while
    nothing arrives an empty list is yielded every ``HEARTBEAT_SECONDS``. Work
    crosses the pipes as bytes from the C pickler (dill, multiprocess's own
    pickler, left workers idle half the time). A worker that dies shows as the end
    of its pipe, so the run stops at once with WorkerLost instead of waiting for
    games that will never come (a shared pool's locks can even hang when a worker
    is killed mid-read).
    """

    def __init__(self, workers: int) -> None:
        import multiprocess  # imported here: serial runs and tests need no processes

        self.workers = workers
        self._processes = []
        self._pipes = []
        self._received: list[Any] = []  # finished games not yielded yet
        self._queued: dict[Any, int] = {}  # chunks sent to each worker's pipe and not done yet
        for _ in range(workers):
            ours, theirs = multiprocess.Pipe()
            process = multiprocess.Process(target=_worker_loop, args=(theirs,), daemon=True)
            process.start()
            theirs.close()
            self._processes.append(process)
            self._pipes.append(ours)

    def worker_pids(self) -> list[int]:
        return [p.pid for p in self._processes]

    def map_unordered(self, fn, chunks):  # type: ignore[no-untyped-def]
        from multiprocess.connection import wait

        source = iter(chunks)
        busy = set()
        self._queued = {}
        for _ in range(CHUNKS_AHEAD):
            for pipe in self._pipes:
                if self._send_next(pipe, fn, source):
                    busy.add(pipe)
        first_at = 0.0  # when the oldest record not yielded yet arrived
        while busy:
            waited = time.monotonic() - first_at
            timeout = max(0.0, GATHER_SECONDS - waited) if self._received else HEARTBEAT_SECONDS
            ready = wait(list(busy), timeout)
            had = bool(self._received)
            for pipe in ready:
                if not self._read(pipe, fn, source, block=True):
                    busy.discard(pipe)
            if self._received and not had:
                first_at = time.monotonic()
            if not ready or not busy or (self._received and time.monotonic() - first_at >= GATHER_SECONDS):
                batch, self._received = self._received, []
                yield batch

    def drain(self) -> list[Any]:
        """The games that finished but were not yielded: those received, and those
        the workers send within ``DRAIN_SECONDS`` (a finished game is sent within
        milliseconds); no game in play is waited for, a worker that died is skipped."""
        from multiprocess.connection import wait

        deadline = time.monotonic() + DRAIN_SECONDS
        live = list(self._pipes)
        while live:
            ready = wait(live, max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            for pipe in ready:
                try:
                    self._read(pipe, None, iter(()), block=False)
                except (WorkerLost, EOFError, OSError, RuntimeError):
                    live.remove(pipe)
        batch, self._received = self._received, []
        return batch

    def _read(self, pipe: Any, fn: Any, source: Iterator[Any], block: bool) -> bool:
        """Read the messages ``pipe`` has (at least one if ``block``) into
        ``_received``; False when its worker finished its chunk and there is no
        other chunk to send."""
        more = True
        while block or pipe.poll(0):
            block = False
            try:
                data = pipe.recv_bytes()
            except (EOFError, OSError):
                raise WorkerLost(
                    "a worker process died (killed from outside?); games in flight were "
                    "lost: run the same command again to resume"
                ) from None
            message = pickle.loads(data)
            if type(message) is float:  # a chunk is done, in that many seconds: the worker goes on
                self._queued[pipe] -= 1
                if fn is not None:
                    wanted = chunks_ahead(message)
                    while self._queued[pipe] < wanted and self._send_next(pipe, fn, source):
                        pass
                more = self._queued[pipe] > 0
            elif isinstance(message, _WorkerError):
                raise RuntimeError(f"a worker failed: {message.text}")
            else:
                self._received.extend(message)  # the records that finished together
        return more

    def _send_next(self, pipe: Any, fn: Callable[..., Any], source: Iterator[Any]) -> bool:
        chunk = next(source, None)
        if chunk is None:
            return False
        pipe.send_bytes(pickle.dumps((fn, chunk), protocol=pickle.HIGHEST_PROTOCOL))
        self._queued[pipe] = self._queued.get(pipe, 0) + 1
        return True

    def close(self, cancel: bool = False) -> None:
        for process, pipe in zip(self._processes, self._pipes):
            if cancel:
                process.kill()
            else:
                try:
                    pipe.send_bytes(b"")  # the stop sign
                except OSError:
                    pass
            pipe.close()
        for process in self._processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
                process.join()


def chunks_ahead(chunk_seconds: float) -> int:
    """How many chunks a worker should have at a time, its last one having taken
    ``chunk_seconds``: the one it plays and enough for ``AHEAD_SECONDS`` more, at
    least ``CHUNKS_AHEAD`` and at most ``MOST_CHUNKS_AHEAD``."""
    if chunk_seconds <= 0:
        return MOST_CHUNKS_AHEAD
    return max(CHUNKS_AHEAD, min(MOST_CHUNKS_AHEAD, 1 + math.ceil(AHEAD_SECONDS / chunk_seconds)))


class _WorkerError:
    """An exception in a worker (not a bot's: the referee catches those), as text."""

    def __init__(self, text: str) -> None:
        self.text = text


def _worker_loop(pipe: Any) -> None:
    """A worker: play the chunks it is sent until the stop sign or the pipe closes,
    sending each game's record back through an :class:`_Outbox`."""
    _init_worker()
    outbox = _Outbox(pipe)
    stop = threading.Event()
    watch = threading.Thread(target=outbox.watch, args=(stop,), daemon=True)
    watch.start()
    try:
        while True:
            try:
                data = pipe.recv_bytes()
            except (EOFError, OSError):
                return
            if not data:
                return
            fn, chunk = pickle.loads(data)
            started = time.monotonic()
            try:
                for record in fn(chunk):  # each game as it finishes
                    outbox.add(record)
                outbox.send(time.monotonic() - started)  # the chunk is done, in that time
            except Exception:
                outbox.send(_WorkerError(traceback.format_exc(limit=5)))
    finally:
        stop.set()
        watch.join(timeout=10)
        PROCESS_SPAWNER.close()  # the worker is done: its bot processes go with its spawner


#: A worker sends the games that finish within this many seconds of its last
#: message as one message: short games cost one message per few dozen.
SEND_SECONDS = 0.005
#: The longest a finished game waits in a worker: one that finished just before a
#: long game started is sent by the outbox's watch meanwhile.
HOLD_SECONDS = 0.05


class _Outbox:
    """Finished games on their way from a worker to the coordinator, as lists.

    The worker's main thread, which plays, sends them itself, ``SEND_SECONDS``
    after its last message (a game that took longer goes at once): a thread
    that sent them instead had to take the interpreter from the player for every
    few games, and on a busy machine each such switch can leave both waiting for
    a core. A second thread only watches, every ``HOLD_SECONDS``, for a game held
    while the next one plays on; the lock keeps two messages from mixing in the pipe.
    """

    def __init__(self, pipe: Any) -> None:
        self.pipe = pipe
        self.held: list[Any] = []
        self.sent = 0.0  # when the last message went
        self.lock = threading.Lock()

    def add(self, record: Any) -> None:
        with self.lock:
            self.held.append(record)
            if time.monotonic() - self.sent >= SEND_SECONDS:
                self._flush()

    def send(self, message: Any) -> None:
        """The held games, then ``message`` (the end of a chunk: the seconds it took; an error)."""
        with self.lock:
            self._flush()
            _send(self.pipe, message)

    def watch(self, stop: threading.Event) -> None:
        while not stop.wait(HOLD_SECONDS):
            with self.lock:
                if self.held and time.monotonic() - self.sent >= HOLD_SECONDS:
                    self._flush()

    def _flush(self) -> None:
        if self.held:
            _send(self.pipe, self.held)
            self.held = []
            self.sent = time.monotonic()


def _send(pipe: Any, message: Any) -> None:
    try:
        pipe.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        pass  # the coordinator is gone: the main thread sees the pipe close


def make_executor(
    workers: int,
    games: int | None = None,
    cluster: str | None = None,
    needs: WorkerNeeds | None = None,
    notify: Callable[[str], None] | None = None,
) -> Executor:
    """``workers`` processes (0 means one per core), never more than the ``games``
    to play: a process without a game would only start and stop.

    With ``cluster`` (``local:N`` or a Dask scheduler's address) the cluster's
    workers play instead, each checked for ``needs`` first (see
    :func:`arena.tournament.cluster.worker_needs`); ``notify`` gets one line for
    each worker refused. A tournament and a league alike call this.
    """
    if cluster:
        from arena.tournament.cluster import ClusterExecutor, worker_needs

        return ClusterExecutor(cluster, needs or worker_needs(()), notify)
    count = workers or os.cpu_count() or 1
    if games is not None:
        count = max(1, min(count, games))
    return ProcessExecutor(count)


def _init_worker() -> None:
    # Ctrl-C and a hang-up are the coordinator's to handle: it stores the games that
    # finished, then stops the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the coordinator's handler, if forked under it
    process_control.die_with_parent()  # not Linux: workers still exit when their task pipe closes
