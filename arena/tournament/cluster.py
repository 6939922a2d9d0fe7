"""Playing games on a Dask cluster: the scheduler and workers of ``distributed``
(``dask scheduler`` on one machine, ``dask worker ADDRESS`` on the others), or
``local:N``, a cluster of N worker processes started on this machine.

The coordinator stays the only writer. Workers play tasks of a few games each
and send back the records when the task is done, so a task whose worker dies
comes back once, from the worker that played it again (the scheduler moves it),
and no game is stored twice or lost. Tasks in flight are bounded (two per
worker), and so is the coordinator's memory, however long the tournament.

Every worker is checked before it plays: first with a call that needs nothing
but Python's standard library (is the arena there at all? a worker without it is
named, not brought down by a task it cannot unpickle), then the same arena
version, the plug-ins the games name with the same versions, and, where
untrusted bots play, a sandbox that isolates them (the fail-closed rule of
``arena doctor``; a worker whose owner accepted weaker containment plays them
only if this side accepts it too, ``arena --weak-sandbox``). A worker that passes
warms its bots up (numba compiles or loads their code) before its first game,
while the others play. Game tasks are restricted to the workers that passed; one
that did not is named in one line and gets no games, and is checked again now
and then. Workers that join later are checked and then get work.

``distributed`` is imported only here and only when a cluster is used.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import logging
import operator
import queue
import signal
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.engine.game import Rules
from arena.errors import ArenaError
from arena.players.plugins import INSTALLED_BOTS, BotSpecError, file_code, load_entry, make_bot, parse_spec
from arena.records import BotCode, GameSpec
from arena.text import plural
from arena.tournament.config import SCHEDULER_FILE, cluster_origin, local_cluster_workers
from arena.tournament.execution import DRAIN_SECONDS, HEARTBEAT_SECONDS, WorkerLost

if TYPE_CHECKING:
    from distributed import Client, Future

#: How long one task of games should take on a worker: long enough that the
#: scheduler's few milliseconds per task are lost in it, short enough that a
#: stop (Ctrl-C) or a lost worker costs little play, and that results come in
#: steadily. The first tasks hold one game each, to measure how long games take.
TASK_SECONDS = 0.5
MAX_TASK_GAMES = 512
#: Tasks in flight per worker: one playing, one waiting on the worker, so it
#: never waits for the coordinator between two tasks.
TASKS_PER_WORKER = 2
#: How often the coordinator asks the scheduler which workers there are.
POLL_SECONDS = 1.0
#: Waiting for the scheduler to answer at the start.
CONNECT_SECONDS = 10.0
#: Waiting at the start for a worker, while no check is under way.
WORKER_WAIT_SECONDS = 60.0
#: Waiting at the start for the checks under way (a fresh worker warms its bots up:
#: numba compiles their code, once per machine, which can take a minute).
CHECK_WAIT_SECONDS = 600.0
#: How often a refused worker is checked again (its owner may have fixed it).
RECHECK_SECONDS = 30.0
#: Closing the client of a cluster whose scheduler is gone: no longer than this.
CLOSE_SECONDS = 2.0
#: How long the records of a finished task are waited for before its status is
#: asked again (its worker may have died with them).
RESULT_WAIT_SECONDS = 5.0
#: Once a worker passed, how long the start still waits for the other workers' checks.
CHECK_GRACE_SECONDS = 5.0
#: A task whose workers all left is given to others; this many times, and the run stops.
TASK_LOSSES = 3
ARENA_DISTRIBUTION = "connectk-arena"
#: The clockwork of a local cluster, slowed down: its workers share this machine's
#: cores with the coordinator, and by default every server ticks each 20 ms and
#: every worker samples its threads' stacks each 10 ms (a profiler nobody reads
#: here), some 4% of a core per process even while idle; this leaves under 1%.
LOCAL_CLUSTER_CONFIG = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
}


class ClusterError(ArenaError):
    """A cluster that cannot play the tournament: no scheduler there, no worker fit to play."""


class ClusterLost(WorkerLost):
    """The cluster's scheduler went away (or the client was closed): the games in
    flight are lost, and a new executor (:meth:`ClusterExecutor.reconnect`, or
    ``make_executor`` again) plays on once a scheduler answers there again."""


@dataclass(frozen=True)
class WorkerNeeds:
    """What a worker must have to play a tournament's games as this machine would."""

    arena: str  # the arena's version here
    plugins: tuple[tuple[str, str], ...] = ()  # (installed bot, "distribution version") the games name
    sandbox: bool = False  # untrusted bots play: the worker must isolate them
    weak_sandbox: bool = False  # this side accepts a worker whose owner accepted weaker containment
    warm_up: tuple[str, ...] = ()  # installed bots (spec texts) that start a game on a worker before it plays
    rules: Rules = Rules()  # the rules they warm up for


@dataclass(frozen=True)
class WorkerCheck:
    """What a worker's check found: why it may not play, and what it has to say if it may."""

    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def arena_version() -> str:
    try:
        return metadata.version(ARENA_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "not installed"  # run from a source folder: only a worker run the same way matches


def worker_needs(bots: Iterable[str], submitted: Iterable[tuple[str, BotCode]] = (), isolate: bool = False,
                 rules: Rules | None = None) -> WorkerNeeds:
    """The needs of games between ``bots`` (resolved spec texts) under ``rules``: each
    installed bot's distribution and version (and a warm-up), and a sandbox for bot
    files and submitted bots (or for every bot, with ``isolate``); a worker with
    weaker containment is accepted where this side accepts it (``arena --weak-sandbox``)."""
    from arena.sandbox.proxy import weak_sandbox_accepted

    names = {name for name, _ in submitted}
    plugins: dict[str, str] = {}
    warm: dict[str, str] = {}  # one spec per installed bot
    sandbox = isolate
    for text in bots:
        spec = parse_spec(text)
        if spec.is_file or spec.name in names:
            sandbox = True
        else:
            plugins[spec.name] = load_entry(spec).source
            warm.setdefault(spec.name, text)
    return WorkerNeeds(arena_version(), tuple(sorted(plugins.items())), sandbox, weak_sandbox_accepted(),
                       tuple(warm.values()), rules or Rules())


def check_worker(needs: WorkerNeeds) -> list[str]:
    """On a worker: what keeps it from playing games with ``needs`` (nothing: it may play)."""
    return list(examine_worker(needs, warm=False).problems)


def examine_worker(needs: WorkerNeeds, warm: bool = True) -> WorkerCheck:
    """On a worker: its check (see :func:`check_worker`), what it says of its
    sandbox, and, when it may play and ``warm``, its bots warmed up."""
    problems = []
    notes: list[str] = []
    here = arena_version()
    if here != needs.arena:
        problems.append(f"it has {ARENA_DISTRIBUTION} {here}, the tournament {needs.arena} (install that version)")
    installed = INSTALLED_BOTS.refresh()  # what the games will find: plug-ins installed since it started too
    for name, source in needs.plugins:
        entry = installed.get(name)
        if entry is None:
            problems.append(f"bot {name!r} is not installed there (install {source})")
        elif entry.error:
            problems.append(f"bot {name!r} cannot be used there: {entry.error}")
        elif entry.source != source:
            problems.append(f"bot {name!r} is {entry.source} there, the tournament's is {source}")
    if needs.sandbox:
        problems.extend(_sandbox_problems(needs, notes))
    if warm and not problems:
        problems.extend(_warm_up(needs))
    return WorkerCheck(tuple(problems), tuple(notes))


def _sandbox_problems(needs: WorkerNeeds, notes: list[str]) -> list[str]:
    from arena.sandbox.doctor import containment
    from arena.sandbox.proxy import weak_sandbox_accepted
    from arena.sandbox.spawner import SpawnerError

    try:
        _, missing = containment()
    except SpawnerError as exc:
        return [f"its sandbox does not start: {exc}"]
    if not missing:
        return []
    if not weak_sandbox_accepted():
        return [f"it cannot isolate untrusted bots: {'; '.join(missing)} (see 'arena doctor' there; a worker "
                "started with ARENA_WEAK_SANDBOX=1 runs them with weaker containment)"]
    if not needs.weak_sandbox:
        return [f"it runs untrusted bots with weaker containment ({'; '.join(missing)}; it was started with "
                "ARENA_WEAK_SANDBOX=1): accept that here with 'arena --weak-sandbox ...', or give it a sandbox "
                "that isolates them (see 'arena doctor' there)"]
    notes.append(f"plays untrusted bots with weaker containment ({'; '.join(missing)}), as it and this side "
                 "accept (ARENA_WEAK_SANDBOX=1 there, --weak-sandbox here)")
    return []


def _warm_up(needs: WorkerNeeds) -> list[str]:
    """Start a game with each installed bot, as a game would: what a bot compiles
    or loads before its clock runs (numba's code, a book) is done before the
    worker's first game, and kept in numba's cache for the worker processes after it."""
    for text in needs.warm_up:
        try:
            bot = make_bot(text)
            try:
                bot.new_game(needs.rules, 1, 1)
            finally:
                bot.close()
        except Exception as exc:  # a bot that cannot start here: its games would fail the same way
            return [f"bot {text!r} does not start there ({type(exc).__name__}: {_first_line(exc)})"]
    return []


def _play_task(fn: Callable[[list[GameSpec]], Iterable[Any]], specs: list[GameSpec]
               ) -> tuple[list[Any], float, str]:
    """On a worker: play ``specs``; their records, the seconds it took, and who played."""
    from distributed import get_worker

    started = time.perf_counter()
    records = list(fn(specs))
    return records, time.perf_counter() - started, get_worker().address


@dataclass
class _Task:
    specs: list[GameSpec]
    workers: frozenset[str]  # where it may run: the workers that had passed when it was given out
    losses: int = 0  # times it was given out again because all those workers had left


class ClusterExecutor:
    """Plays games on the workers of a Dask cluster (see the module's docstring).

    ``cluster`` is a scheduler's address or ``local:N``; ``needs`` is what every
    worker is checked for; ``notify`` receives one line per worker refused (and
    when none is left to play). Connecting and the first checks happen here, so a
    cluster that cannot play is a :class:`ClusterError` before any game.
    """

    def __init__(self, cluster: str, needs: WorkerNeeds, notify: Callable[[str], None] | None = None) -> None:
        self.cluster = cluster  # as given: a scheduler file is read again on reconnect
        self.address = cluster  # the scheduler's address, once known
        self.needs = needs
        self.played: Counter[str] = Counter()  # games played, by worker
        self.refused: dict[str, str] = {}  # worker -> the line that said why
        self.left: dict[str, str] = {}  # worker that left during its check -> a line saying so
        self._notify = notify or (lambda line: None)
        self._quiet = contextlib.ExitStack()  # distributed's log lines, while we run: the arena says what matters
        self._local: Any = None  # the LocalCluster of local:N
        self._good: set[str] = set()  # workers that passed their check
        self._names: dict[str, str] = {}  # worker -> how a line names it (its address, and its name if it has one)
        self._threads: dict[str, int] = {}  # worker -> its threads
        self._checks: dict[Future, str] = {}  # check in flight -> its worker
        self._probes: set[Future] = set()  # those of the checks that only ask whether the arena is there
        self._present: set[str] = set()  # the workers the scheduler knew at the last look
        self._refused_at: dict[str, float] = {}  # worker -> when it was last refused
        self._tasks: dict[Future, _Task] = {}  # games in flight
        self._finished: queue.SimpleQueue[Future] = queue.SimpleQueue()  # filled by the futures' callbacks
        self._carried: dict[str, BotCode] = {}  # bot files' code, read once, by path
        self._seconds_per_game: float | None = None
        self._play: Callable[[list[GameSpec]], Iterable[Any]] | None = None  # what the tasks run
        self._polled = 0.0
        self._waiting_said = False
        self._client = self._connect()
        try:
            self._admit_first_workers()
        except BaseException:
            self.close(cancel=True)
            raise
        line = self._describe()
        if line:
            self._notify(line)

    @property
    def workers(self) -> int:
        """The workers that may play now (at least 1), for the runner's chunk sizes:
        between two maps it looks at the cluster again, so a league's rounds grow
        with the workers that joined."""
        if not self._tasks and time.monotonic() - self._polled >= POLL_SECONDS:
            self._poll_workers()
            self._take_finished(block=False)
        return max(1, len(self._good))

    def reconnect(self) -> None:
        """Connect again (to the scheduler a scheduler file names now), and check
        the workers again, as a new executor would; what was in flight is lost."""
        self.close(cancel=True)
        self.__init__(self.cluster, self.needs, self._notify)  # type: ignore[misc]

    @property
    def client(self) -> Client:
        """The Dask client, to look at the cluster (``client.run``, ``scheduler_info``)."""
        return self._client

    @property
    def admitted(self) -> frozenset[str]:
        """The workers there now that passed their check: those games may go to."""
        return frozenset(self._good)

    # --- connecting and checking workers ------------------------------------------------------

    def _connect(self) -> Client:
        # Imported before the configuration is changed: distributed sets the defaults
        # that LOCAL_CLUSTER_CONFIG changes, and the change would undo them.
        import dask
        from distributed import Client, LocalCluster
        from distributed.utils import silence_logging_cmgr

        self._quiet.enter_context(silence_logging_cmgr(logging.CRITICAL))
        local = local_cluster_workers(self.cluster)
        try:
            if local is not None:
                # One thread per worker process: a game holds the interpreter, so
                # more threads would only share one core. The dashboard needs bokeh.
                dashboard = "127.0.0.1:0" if importlib.util.find_spec("bokeh") else None
                with _terminal_signals_blocked(), dask.config.set(LOCAL_CLUSTER_CONFIG):
                    self._local = LocalCluster(n_workers=local, threads_per_worker=1, processes=True,
                                               host="127.0.0.1", dashboard_address=dashboard,
                                               silence_logs=logging.CRITICAL)
                return Client(self._local)
            if self.cluster.startswith(SCHEDULER_FILE):
                self.address = _read_scheduler_file(self.cluster[len(SCHEDULER_FILE):])
            return Client(self.address, timeout=CONNECT_SECONDS, security=_security(self.address))
        except ClusterError:
            self._quiet.close()
            raise
        except TypeError as exc:  # distributed's own words for a tls:// address without TLS settings
            self._quiet.close()
            raise ClusterError(_tls_missing(self.address, exc)) from None
        except (OSError, TimeoutError, ValueError) as exc:
            self._quiet.close()
            if local is not None:
                raise ClusterError(f"cannot start a local cluster of {local} worker processes: {exc}") from None
            raise ClusterError(
                f"no Dask scheduler answers at {self.address} ({_first_line(exc)}): start one there with "
                "'dask scheduler', or check --cluster (or the file's cluster, or ARENA_CLUSTER)"
            ) from None

    def _admit_first_workers(self) -> None:
        started = time.monotonic()
        first_good = None
        while True:
            self._poll_workers()
            self._take_finished(block=True)
            now = time.monotonic()
            if self._good and first_good is None:
                first_good = now
            if self._good and (not self._checks or now - first_good >= CHECK_GRACE_SECONDS):  # type: ignore[operator]
                return
            if not self._good and not self._checks and self._present and self._present <= self.refused.keys():
                break  # every worker there was refused: said at once, not after a wait
            waited = now - started
            if waited >= (CHECK_WAIT_SECONDS if self._checks else WORKER_WAIT_SECONDS):
                break
        if self.refused or self.left:
            said = {**self.left, **self.refused}
            lines = "; ".join(said[worker] for worker in sorted(said))
            raise ClusterError(f"no worker of the cluster at {self.address} can play these games: {lines}")
        if self._checks:
            raise ClusterError(f"no worker of the cluster at {self.address} passed its check within "
                               f"{CHECK_WAIT_SECONDS:.0f} s ({len(self._checks)} still under way)")
        raise ClusterError(
            f"the cluster at {self.address} has no worker after {WORKER_WAIT_SECONDS:.0f} s: start some with "
            f"'dask worker {self.address} --nworkers N --nthreads 1' (see docs/cluster.md)"
        )

    def _poll_workers(self) -> None:
        """Check the workers that joined, and again those refused a while ago; forget those that left."""
        self._polled = now = time.monotonic()
        try:
            workers = self._client.scheduler_info(n_workers=-1).get("workers")
        except _connection_errors() as exc:
            raise self._lost(exc) from None
        if workers is None or self._client.status != "running":  # the scheduler is gone: nothing known
            raise self._lost(None)
        self._present = set(workers)
        self._good &= workers.keys()
        for address in list(self._refused_at):
            if address not in workers or now - self._refused_at[address] >= RECHECK_SECONDS:
                del self._refused_at[address]  # its line stays until a check says otherwise
        for address in list(self.refused):
            if address not in workers:
                del self.refused[address]
        for future, address in list(self._checks.items()):
            if address not in workers:  # left before its check ran, or while it ran
                del self._checks[future]
                if future not in self._probes:  # it had the arena, and left with the check proper
                    self.left[address] = (f"worker {self._names.get(address, address)} left during its check "
                                          f"(does its arena differ from this one, {self.needs.arena}?)")
                self._probes.discard(future)
                future.cancel()
        known = self._good | set(self._refused_at) | set(self._checks.values())
        for address, info in workers.items():
            if address not in known:
                self._names[address] = _worker_name(address, info)
                self._threads[address] = int(info.get("nthreads") or 1)
                self._probe(address)

    def _submit_check(self, address: str, fn: Callable[..., Any], *args: Any) -> Future:
        try:
            future = self._client.submit(fn, *args, workers=[address], allow_other_workers=False, pure=False,
                                         key=f"arena-check-{uuid.uuid4().hex}")
        except _connection_errors() as exc:
            raise self._lost(exc) from None
        return future

    def _probe(self, address: str) -> None:
        """First ask whether the arena is there, with functions of the standard library
        alone: a worker without it can run them, where the check proper would fail
        to unpickle (and Dask would give up on the worker)."""
        spec = self._submit_check(address, importlib.util.find_spec, "arena")
        future = self._submit_check(address, operator.is_not, spec, None)
        self._checks[future] = address
        self._probes.add(future)
        future.add_done_callback(self._finished.put)

    def _checked(self, future: Future, address: str) -> None:
        probe = future in self._probes
        self._probes.discard(future)
        if future.status == "finished":
            try:
                result = future.result()
            except _connection_errors() as exc:
                raise self._lost(exc) from None
            if probe:
                if result:  # the arena is there: its check proper, and the warm-up
                    checked = self._submit_check(address, examine_worker, self.needs)
                    self._checks[checked] = address
                    checked.add_done_callback(self._finished.put)
                    return
                self._refuse_without_arena(address)
                return
            name = self._names.get(address, address)
            for note in result.notes:
                self._notify(f"worker {name} {note}")
            if not result.problems:
                if address in self.refused:
                    self._notify(f"worker {name} passes its check now and gets games")
                    del self.refused[address]
                self._good.add(address)
                self._waiting_said = False
                threads = self._threads.get(address, 1)
                if threads > 1:  # it plays, but its games share one core and their clocks run slow
                    self._notify(f"worker {self._names.get(address, address)} has {threads} threads, and a game "
                                 f"holds the interpreter: its games share one core (start workers with --nworkers "
                                 f"{threads} --nthreads 1)")
                return
            why = "; ".join(result.problems)
        elif future.status == "error":
            error = future.exception()
            if probe and isinstance(error, ImportError):  # no arena there, as find_spec says it
                self._refuse_without_arena(address)
                return
            why = f"the arena cannot run there ({type(error).__name__}: {_first_line(error)})"
        else:
            raise self._lost(None)  # a check we did not cancel: the scheduler is gone
        self._refuse(address, f"worker {self._names.get(address, address)} gets no games: {why}")

    def _refuse_without_arena(self, address: str) -> None:
        self._refuse(address, f"worker {self._names.get(address, address)} has no arena installed: "
                     f"{_install_arena(self.needs.arena)} there")

    def _refuse(self, address: str, line: str) -> None:
        """``address`` gets no games, for the reason ``line`` says (once: a check
        again that finds the same says nothing)."""
        self._refused_at[address] = time.monotonic()
        if self.refused.get(address) != line:
            self.refused[address] = line
            self._notify(line)

    def _describe(self) -> str:
        """The line that says where the games are played, and the dashboard's link if there is one."""
        if self._local is not None:
            where = f"a local Dask cluster of {len(self._good)} worker processes"
        else:
            origin = cluster_origin(self.cluster)
            where = f"the Dask cluster at {self.address}" + (f" (from {origin})" if origin else "")
        refused = f", {len(self.refused)} refused" if self.refused else ""
        line = f"playing on {where}: {plural(len(self._good), 'worker')} checked{refused}"
        try:
            services = self._client.scheduler_info().get("services", {})
            # The dashboard's pages need bokeh where the scheduler runs (the arena's
            # "dashboard" extra): without it, its address serves none.
            with_bokeh = self._client.run_on_scheduler(importlib.util.find_spec, "bokeh") is not None
            link = self._client.dashboard_link if "dashboard" in services and with_bokeh else None
        except Exception:  # the link is a nicety: whatever the cluster says of it
            link = None
        if link:
            return f"{line}; dashboard {link}"
        return "" if self._local is not None else line  # local:N said where already

    # --- playing ---------------------------------------------------------------------------------

    def map_unordered(
        self, fn: Callable[[list[GameSpec]], Iterable[Any]], chunks: Iterable[list[GameSpec]]
    ) -> Iterator[list[Any]]:
        self._play = fn
        source = iter(chunks)
        waiting: deque[GameSpec] = deque()  # taken from the chunks, not given out yet
        exhausted = False
        while True:
            while self._good and len(self._tasks) < TASKS_PER_WORKER * len(self._good):
                size = self._task_size()
                while len(waiting) < size and not exhausted:
                    chunk = next(source, None)
                    if chunk is None:
                        exhausted = True
                    else:
                        waiting.extend(chunk)
                if not waiting:
                    break
                self._give_out([waiting.popleft() for _ in range(min(size, len(waiting)))])
            if exhausted and not waiting and not self._tasks:
                return
            records = self._take_finished(block=True)
            if time.monotonic() - self._polled >= POLL_SECONDS:
                self._poll_workers()
                self._give_out_stranded()
            yield records

    def drain(self) -> list[Any]:
        """The records of the tasks that finished, and of those that finish within
        ``DRAIN_SECONDS``; no game in play is waited for."""
        records: list[Any] = []
        deadline = time.monotonic() + DRAIN_SECONDS
        while self._tasks:
            try:
                future = self._finished.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            task = self._tasks.pop(future, None)
            if task is not None and future.status == "finished":
                with contextlib.suppress(Exception):  # the scheduler or the worker may be gone by now
                    records.extend(self._records(future) or [])
        return records

    def close(self, cancel: bool = False) -> None:
        """Let the cluster go: a local one stops, a scheduler elsewhere stays. Tasks
        still in flight are cancelled, ``cancel`` or not (a run that finished has none).
        Quick and quiet when the scheduler is gone."""
        alive = self._client.status == "running"
        with contextlib.suppress(Exception):  # closing must not fail, whatever is left of the cluster
            if alive and (self._tasks or self._checks):
                self._client.cancel([*self._tasks, *self._checks])
        self._tasks.clear()
        self._checks.clear()
        self._probes.clear()
        with contextlib.suppress(Exception):
            self._client.close(timeout=CLOSE_SECONDS)
        if self._local is not None:
            with contextlib.suppress(Exception):
                self._local.close()
        self._quiet.close()

    def _task_size(self) -> int:
        if self._seconds_per_game is None:
            return 1
        return max(1, min(MAX_TASK_GAMES, int(TASK_SECONDS / max(self._seconds_per_game, 1e-6))))

    def _give_out(self, specs: list[GameSpec], losses: int = 0) -> None:
        workers = frozenset(self._good)
        carried = [self._carry(spec) for spec in specs]
        try:
            future = self._client.submit(_play_task, self._play, carried, workers=sorted(workers),
                                         allow_other_workers=False, pure=False,
                                         key=f"arena-games-{uuid.uuid4().hex}")
        except _connection_errors() as exc:
            raise self._lost(exc) from None
        self._tasks[future] = _Task(specs, workers, losses)
        future.add_done_callback(self._finished.put)

    def _give_out_stranded(self) -> None:
        """Tasks restricted to workers that all left would wait for them forever:
        they go to the workers there are now (never the same task twice at once:
        the old one is cancelled first, and was not running anywhere)."""
        if not self._good:
            if self._tasks and not self._waiting_said:
                self._waiting_said = True
                self._notify(f"no worker of the cluster at {self.address} can play now: waiting for one "
                             "(Ctrl-C stops; the games stored stay)")
            return
        for future, task in list(self._tasks.items()):
            if task.workers & self._good:
                continue
            self._give_out_again(future)

    def _give_out_again(self, future: Future) -> None:
        """``future``'s games, which no worker can play or give back now, as a new
        task (the old one is cancelled: its records can never come)."""
        task = self._tasks.pop(future)
        if task.losses + 1 >= TASK_LOSSES:
            raise WorkerLost(f"the games {_keys(task.specs)} were in play on workers that left "
                             f"{TASK_LOSSES} times in turn (does a bot bring its worker down?)")
        future.cancel()
        self._give_out(task.specs, task.losses + 1)

    def _carry(self, spec: GameSpec) -> GameSpec:
        """``spec`` with the code of its bot files, which a worker elsewhere does not have."""
        carried = []
        for text in spec.bots:
            bot = parse_spec(text)
            if bot.path is not None:
                if bot.path not in self._carried:
                    try:
                        self._carried[bot.path] = file_code(bot)
                    except BotSpecError:
                        continue  # the game says so, as it would here: the file went away
                carried.append((bot.path, self._carried[bot.path]))
        return dataclasses.replace(spec, submitted=(*spec.submitted, *carried)) if carried else spec

    def _take_finished(self, block: bool) -> list[Any]:
        """The records of the tasks that finished (waiting up to a heartbeat for
        one if ``block``); checks that finished admit or refuse their worker."""
        records: list[Any] = []
        try:
            futures = [self._finished.get(timeout=HEARTBEAT_SECONDS) if block else self._finished.get_nowait()]
        except queue.Empty:
            return records
        with contextlib.suppress(queue.Empty):
            while True:
                futures.append(self._finished.get_nowait())
        for future in futures:
            if future in self._checks:
                self._checked(future, self._checks.pop(future))
            elif future in self._tasks:
                records.extend(self._task_done(future))
        return records

    def _task_done(self, future: Future) -> list[Any]:
        from distributed import KilledWorker

        task = self._tasks[future]
        if future.status == "finished":
            records = self._records(future)
            if records is None:  # its worker died before the records were fetched
                self._give_out_again(future)
                return []
            del self._tasks[future]
            return records
        if future.status == "lost":  # finished, but its worker died before the records were fetched
            self._give_out_again(future)
            return []
        if future.status == "error":
            error = future.exception()
            if isinstance(error, KilledWorker):
                raise WorkerLost(f"the games {_keys(task.specs)} were in play on workers that died, one after "
                                 "another (does a bot bring its worker down?)")
            raise WorkerLost(f"a worker failed: {type(error).__name__}: {_first_line(error)}")
        raise self._lost(None)  # cancelled, and not by us: the scheduler is gone

    def _records(self, future: Future) -> list[Any] | None:
        """The records of a finished task; None if they were lost with its worker
        before they could be fetched. Its result is never awaited without a limit: Dask
        would compute it again, but only on the workers it was given to, which may all
        be gone (and then it waits forever)."""
        while True:
            try:
                records, seconds, worker = future.result(timeout=RESULT_WAIT_SECONDS)
                break
            except TimeoutError:
                if future.status != "finished":
                    return None
            except _connection_errors() as exc:
                raise self._lost(exc) from None
        self.played[worker] += len(records)
        if records:
            per_game = seconds / len(records)
            old = self._seconds_per_game
            self._seconds_per_game = per_game if old is None else 0.7 * old + 0.3 * per_game
        return list(records)

    def _lost(self, exc: BaseException | None) -> ClusterLost:
        why = f" ({_first_line(exc)})" if exc is not None else ""
        return ClusterLost(f"lost the connection to the cluster's scheduler at {self.address}{why}")


def _connection_errors() -> tuple[type[BaseException], ...]:
    """What the client raises once its scheduler is gone, or it was closed."""
    from distributed.client import ClosedClientError

    return OSError, TimeoutError, CancelledError, ClosedClientError


def _read_scheduler_file(path: str) -> str:
    """The address a scheduler wrote to ``path`` (waiting a little for it to be written)."""
    deadline = time.monotonic() + CONNECT_SECONDS
    while True:
        try:
            address = json.loads(Path(path).read_text(encoding="utf-8"))["address"]
            if isinstance(address, str) and address:
                return address
            problem = "it names no address"
        except FileNotFoundError:
            problem = "it does not exist"
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problem = f"it is not a scheduler file ({type(exc).__name__}: {_first_line(exc)})"
        if time.monotonic() >= deadline:
            raise ClusterError(f"cannot read the Dask scheduler file {path}: {problem} (start the scheduler with "
                               f"'dask scheduler --scheduler-file {path}', or check --scheduler-file)")
        time.sleep(0.2)


#: The Dask settings a tls:// scheduler needs on this side (see docs/cluster.md).
TLS_SETTINGS = ("DASK_DISTRIBUTED__COMM__TLS__CA_FILE, DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT and "
                "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY (or distributed.comm.tls.ca-file, .client.cert and "
                ".client.key in Dask's configuration file)")


def _security(address: str) -> Any:
    """Dask's TLS settings for ``address`` (its configuration, as ``dask worker`` reads
    it); a tls:// address without them is one line saying what to set."""
    from distributed.security import Security

    if not address.startswith("tls://"):
        return None
    try:
        security = Security()
        has_context = security.get_connection_args("client").get("ssl_context") is not None
    except (OSError, ValueError) as exc:
        raise ClusterError(f"Dask's TLS settings for {address} cannot be used: {_first_line(exc)}: check "
                           f"{TLS_SETTINGS}") from None
    if not has_context:
        raise ClusterError(_tls_missing(address, None))
    return security


def _tls_missing(address: str, exc: BaseException | None) -> str:
    said = f" ({_first_line(exc)})" if exc is not None else ""
    return (f"the cluster at {address} speaks TLS, and Dask has no TLS settings here{said}: set {TLS_SETTINGS}, "
            "the certificate authority and a certificate and key it signed (see docs/cluster.md)")


def _install_arena(version: str) -> str:
    if version == "not installed":  # this side runs from a source folder
        return "install the arena (the same source folder on its PYTHONPATH, or pip install ./arena)"
    return f"pip install {ARENA_DISTRIBUTION}=={version}"


@contextlib.contextmanager
def _terminal_signals_blocked() -> Iterator[None]:
    """Ctrl-C and a hang-up are for the coordinator, which stores what finished and
    then stops the cluster; a local cluster's worker processes, in the terminal's
    process group too, would die of them with a traceback each. Blocked while the
    cluster starts, they stay blocked in its thread, so in every worker process it
    starts, then or later (a worker killed is started again); one that comes
    meanwhile reaches the coordinator once the block ends. The resource tracker of
    multiprocessing unblocks Ctrl-C in the thread that starts it: it is started
    first, outside the block."""
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGHUP})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _worker_name(address: str, info: dict[str, Any]) -> str:
    name = str(info.get("name", ""))
    return address if not name or name == address else f"{address} ({name})"


def _keys(specs: list[GameSpec]) -> str:
    keys = [spec.key for spec in specs]
    return ", ".join(keys) if len(keys) <= 3 else f"{keys[0]} .. {keys[-1]} ({len(keys)} games)"


def _first_line(exc: BaseException | None) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__

