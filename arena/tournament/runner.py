"""Runs a tournament: schedules games, farms them out, streams results into the store.

Workers only play: they receive picklable GameSpecs and return GameRecords. The
coordinator (this process) is the only writer to the database. Anything that can
map a top-level function over lists of specs and yield the results as they
complete can serve as the executor, so a cluster executor can replace the local
process pool without touching the schedule or the store.
"""

from __future__ import annotations

import os
import pickle
import signal
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from arena.sandbox import process_control
from arena.sandbox.spawner import PROCESS_SPAWNER
from arena.tournament.config import TournamentConfig
from arena.tournament.entrants import resolve_bots
from arena.plugins import installed_bots, load_entry, parse_spec
from arena.records import BotCode, GameRecord, GameSpec
from arena.referee.referee import play_game
from arena.text import content_hash
from arena.tournament.schedule import game_count, iter_schedule
from arena.league.store import BotIdentity, Store

Progress = Callable[[int, int, float], None]  # (games done, games to play, seconds)


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


def make_executor(workers: int) -> Executor:
    """``workers`` processes; 0 means one per core."""
    return ProcessExecutor(workers or os.cpu_count() or 1)


@dataclass
class RunOutcome:
    tournament_id: int
    scheduled: int  # games in the whole tournament
    already_stored: int  # found in the database at start (resume)
    played: int  # stored by this run
    interrupted: bool = False
    seconds: float = 0.0
    problem: str | None = None  # why it stopped early, when not by Ctrl-C


def run_tournament(
    config: TournamentConfig,
    store: Store,
    executor: Executor | None = None,
    progress: Progress | None = None,
) -> RunOutcome:
    """Play every scheduled game that is not stored yet; store each as it finishes.

    A config straight from :func:`~arena.tournament.config.load_config` is resolved
    first (:func:`~arena.tournament.entrants.resolve_bots`, submitted bots looked up
    in ``store``), so its bots are checked before the tournament is stored or any
    game is played; a resolved one is run as it is.
    """
    config = resolve_bots(config, store)
    with store.running(config.name):
        return _run(config, store, executor, progress)


def _run(
    config: TournamentConfig, store: Store, executor: Executor | None, progress: Progress | None
) -> RunOutcome:
    total = game_count(config)
    tournament_id = store.start_tournament(
        config.name, config.format, config.identity(), _as_given(config), config.seed
    )
    submitted = dict(config.submitted)
    bot_ids = {spec: store.bot_id(bot_identity(spec, submitted)) for spec in config.entrants}
    stored = store.stored_keys(tournament_id)
    todo_count = total - len(stored)
    todo = (spec for spec in iter_schedule(config) if spec.key not in stored)
    outcome = RunOutcome(tournament_id, total, len(stored), 0)
    started = time.perf_counter()
    own_executor = executor is None
    if todo_count and executor is None:
        executor = make_executor(config.workers)
    try:
        if todo_count:
            assert executor is not None
            for records in executor.map_unordered(play_games, chunked(todo, todo_count, executor)):
                outcome.played += store.record_games(tournament_id, records, bot_ids)
                if progress is not None:
                    progress(outcome.played, todo_count, time.perf_counter() - started)
    except KeyboardInterrupt:
        outcome.interrupted = True
    except WorkerLost as lost:
        outcome.interrupted = True
        outcome.problem = str(lost)
    finally:
        if own_executor and executor is not None:
            executor.close(cancel=outcome.interrupted)
        outcome.seconds = time.perf_counter() - started
        status = "interrupted" if outcome.interrupted else "finished"
        store.finish_tournament(tournament_id, status)
    return outcome


def play_games(specs: list[GameSpec]) -> list[GameRecord]:
    """Worker entry point: play a chunk of games (top-level, so it pickles)."""
    return [play_game(spec) for spec in specs]


def chunked(specs: Iterable[GameSpec], count: int, executor: Any) -> Iterator[list[GameSpec]]:
    """Small chunks keep workers busy and losses on interruption small; larger ones
    cut the per-message cost when games are short. Aim for ~8 chunks per worker,
    at most 64 games each."""
    workers = getattr(executor, "workers", 1)
    size = max(1, min(64, count // (workers * 8)))
    chunk: list[GameSpec] = []
    for spec in specs:
        chunk.append(spec)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def bot_identity(spec_text: str, submitted: dict[str, BotCode] | None = None) -> BotIdentity:
    """Where a bot's code comes from, for the bots table."""
    spec = parse_spec(spec_text)
    if submitted and spec.name in submitted:
        return BotIdentity(
            spec=spec_text, name=spec.name, options=dict(spec.options), source=f"submitted {spec.name}",
            content_hash=content_hash(submitted[spec.name].text or ""),
        )
    entry = load_entry(spec, installed_bots())
    return BotIdentity(
        spec=spec_text,
        name=entry.name if not spec.is_file else spec.name,
        options=dict(spec.options),
        source=entry.source,
        content_hash=entry.content_hash or "",
    )


def _as_given(config: TournamentConfig) -> dict[str, Any]:
    return {"source": config.origin, "workers": config.workers, "db": config.db, **config.identity()}


def _init_worker() -> None:
    # Ctrl-C is the coordinator's to handle: it stops the pool and keeps what is stored.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    process_control.die_with_parent()  # not Linux: workers still exit when their task pipe closes
