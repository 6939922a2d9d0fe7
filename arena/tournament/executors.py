"""Where a tournament's games are played: executors map a top-level function over
chunks of game specs and yield each chunk's records as it completes.

Workers only play; the coordinator that consumes the results is the only writer
to the database. Anything with ``map_unordered`` and ``close`` serves: the
processes of this machine here, a cluster's workers elsewhere, without touching
the schedule or the store.
"""

from __future__ import annotations

import os
import pickle
import signal
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from arena.records import GameRecord, GameSpec
from arena.sandbox import process_control
from arena.sandbox.spawner import PROCESS_SPAWNER


class Executor(Protocol):
    """Maps ``fn`` over ``chunks`` in any order, yielding each result as it completes.

    ``chunks`` may be a lazy iterator: an executor takes only a few more than it
    has workers at a time, so memory stays flat however long the tournament.
    """

    def map_unordered(
        self, fn: Callable[[list[GameSpec]], list[GameRecord]], chunks: Iterable[list[GameSpec]]
    ) -> Iterator[list[GameRecord]]: ...

    def close(self, cancel: bool = False) -> None: ...


class WorkerLost(RuntimeError):
    """A worker process died with games in flight."""


class SerialExecutor:
    """Plays everything in this process: simplest, and easiest to debug."""

    def map_unordered(self, fn, chunks):  # type: ignore[no-untyped-def]
        for chunk in chunks:
            yield fn(chunk)

    def close(self, cancel: bool = False) -> None:
        pass


class ProcessExecutor:
    """Worker processes on this machine (``multiprocess``), one pipe each.

    Each worker has one chunk at a time: it is sent a chunk, returns its games, and
    is sent the next. Work crosses the pipes as bytes from the C pickler (dill,
    multiprocess's own pickler, left workers idle half the time). A worker that
    dies shows as the end of its pipe, so the run stops at once with WorkerLost
    instead of waiting for games that will never come (a shared pool's locks can
    even hang when a worker is killed mid-read).
    """

    def __init__(self, workers: int) -> None:
        import multiprocess  # imported here: serial runs and tests need no processes

        self.workers = workers
        self._processes = []
        self._pipes = []
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
        for pipe in self._pipes:
            if self._send_next(pipe, fn, source):
                busy.add(pipe)
        while busy:
            for pipe in wait(list(busy)):
                try:
                    data = pipe.recv_bytes()
                except (EOFError, OSError):
                    raise WorkerLost(
                        "a worker process died (killed from outside?); games in flight were "
                        "lost: run the same command again to resume"
                    ) from None
                if not self._send_next(pipe, fn, source):
                    busy.discard(pipe)
                result = pickle.loads(data)
                if isinstance(result, _WorkerError):
                    raise RuntimeError(f"a worker failed: {result.text}")
                yield result

    @staticmethod
    def _send_next(pipe: Any, fn: Callable[..., Any], source: Iterator[Any]) -> bool:
        chunk = next(source, None)
        if chunk is None:
            return False
        pipe.send_bytes(pickle.dumps((fn, chunk), protocol=pickle.HIGHEST_PROTOCOL))
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


class _WorkerError:
    """An exception in a worker (not a bot's: the referee catches those), as text."""

    def __init__(self, text: str) -> None:
        self.text = text


def _worker_loop(pipe: Any) -> None:
    """A worker: play the chunks it is sent until the stop sign or the pipe closes."""
    _init_worker()
    try:
        while True:
            try:
                data = pipe.recv_bytes()
            except (EOFError, OSError):
                return
            if not data:
                return
            fn, chunk = pickle.loads(data)
            try:
                result: Any = fn(chunk)
            except Exception:
                result = _WorkerError(traceback.format_exc(limit=5))
            pipe.send_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    finally:
        PROCESS_SPAWNER.close()  # the worker is done: its bot processes go with its spawner


def make_executor(workers: int, games: int | None = None) -> Executor:
    """``workers`` processes (0 means one per core), never more than the ``games``
    to play: a process without a game would only start and stop."""
    count = workers or os.cpu_count() or 1
    if games is not None:
        count = max(1, min(count, games))
    return ProcessExecutor(count)


def _init_worker() -> None:
    # Ctrl-C is the coordinator's to handle: it stops the pool and keeps what is stored.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    process_control.die_with_parent()  # not Linux: workers still exit when their task pipe closes
