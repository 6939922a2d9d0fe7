"""Tables computed once per state of what they show.

A standings table of a million games takes seconds to compute from the games; a
page must take milliseconds. Each table is kept under its key (what it shows)
together with the version of the database it was computed at: a version of what
the table shows only (:func:`arena.web.pages.table_version`: a tournament's own
count of changed games, so a game stored in another tournament leaves it in place).
A request whose version differs computes it again, so a table is never stale for
long, only reused while nothing it shows changed.

The computation runs on a thread of its own, with its own connection to the
database. A request that finds its table out of date waits ``patience`` seconds
for the new one, and past that takes the table it replaces: while a league plays,
a table whose computation takes longer than a visitor should wait is shown as it
was a moment before, and the next request after it is computed shows the new one.
Where that wait would most likely be in vain, the request takes the table it
replaces at once, since the wait would only add to the page's time: where the key's
last two computations took several times ``patience``, or longer than it while a
computation with another version runs (the request needs the one after that). A
table quick to compute is always waited for. A request with no table to fall back
on waits for the computation.

While a league plays, the version changes with every batch of games, and each
request would compute the table anew, one after another: a crowd of viewers would
queue for minutes. So one computation per key runs at a time, and a request that
finds one running takes, not its own version, but any table whose computation began
after the request arrived: that table saw every game the request could have seen,
so it is as fresh as one the request computed itself. A request that arrived after
the running computation began asks for one more, which begins once it ends: a burst
of requests costs at most two computations, not one each.

A computation may also keep what it worked out between one version and the next
(:meth:`TableCache.kept`): the incremental Elo of a selection, carried on from the
games it read last (arena.ratings.sequence) rather than read again from the first.
Only the computation of its key uses it, and those run one at a time.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

CACHED_TABLES = 256  # tables kept (a matchup page is one), least recently used dropped first
KEPT_STATES = 16  # states kept between computations (one per selection whose Elo is followed)
#: Seconds a request waits for a table being computed again before it takes the one
#: it replaces (the site's; a cache made without one waits for every table).
PATIENCE = 0.05
#: A key whose last computations took this many times the patience is not waited for.
SLOW_COMPUTATIONS = 4
#: How many of a key's last computations tell how long its next one will take.
TIMED_COMPUTATIONS = 2
#: The clock the computations are timed by (a test may set its own).
clock = time.monotonic


@dataclass
class _Computation:
    """The computation of one key running now, and the one asked for after it."""

    version: Hashable
    compute: Callable[[], Any]
    began: int
    again: tuple[Hashable, Callable[[], Any]] | None = None


class TableCache:
    """Tables by (key, version), the least recently used dropped beyond ``size``;
    ``patience``: see the module's description (None: always wait for the new table)."""

    def __init__(self, size: int = CACHED_TABLES, patience: float | None = None) -> None:
        self._size = size
        self.patience = patience
        # key -> (version, table, tick its computation began at)
        self._tables: OrderedDict[Hashable, tuple[Hashable, Any, int]] = OrderedDict()
        # key -> (tick its computation began at, its version, what it raised)
        self._failed: dict[Hashable, tuple[int, Hashable, Exception]] = {}
        self._running: dict[Hashable, _Computation] = {}
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()
        self._took: dict[Hashable, deque[float]] = {}  # key -> seconds its last computations took
        self._ticks = itertools.count(1)  # orders arrivals and computations' beginnings
        self._changed = threading.Condition()
        self.computed = 0  # how many tables were computed (not found): for tests and the bench
        self.waited = 0  # how many requests found their table missing or out of date (the same)
        self.stale = 0  # how many requests took the table a computation was replacing

    def get(self, key: Hashable, version: Hashable, compute: Callable[[], T]) -> T:
        """The table under ``key`` at ``version``. ``compute`` runs on another thread:
        it opens what it reads itself (never a connection of the request's)."""
        with self._changed:
            found = self._tables.get(key)
            if found is not None and found[0] == version:
                self._tables.move_to_end(key)
                return found[1]  # type: ignore[no-any-return]
            arrived = next(self._ticks)
            self.waited += 1
            running = self._running.get(key)
            if running is None:
                self._start(key, _Computation(version, compute, next(self._ticks)))
            elif running.began < arrived and running.version != version:  # it may not see what this request saw
                running.again = (version, compute)

            def answered() -> bool:
                table = self._tables.get(key)
                failed = self._failed.get(key)
                return (table is not None and (table[0] == version or table[2] > arrived)) or (
                    failed is not None and (failed[1] == version or failed[0] > arrived))

            wait = None if found is None else self._patience_for(key, version, arrived)
            if not self._changed.wait_for(answered, wait):
                assert found is not None
                self.stale += 1
                return found[1]  # type: ignore[no-any-return]
            table = self._tables.get(key)
            if table is not None and (table[0] == version or table[2] > arrived):
                self._tables.move_to_end(key)
                return table[1]  # type: ignore[no-any-return]
            raise self._failed[key][2]

    def _patience_for(self, key: Hashable, version: Hashable, arrived: int) -> float | None:
        """How long a request with a table to fall back on waits for the new one: not
        at all where it would most likely wait in vain, going by how long the key's
        last computations took (the quicker of the last two: a key's first
        computation, which may load modules and read every game, or one slowed by a
        busy moment does not count alone). A table quick to compute (within ``patience``) is
        always waited for, so that a page read after a change (a league's run, a
        submission) shows it. One slower than that is not waited for while a
        computation with another version runs that began before the request arrived:
        only the one after it can answer. One that took several times ``patience``
        is not waited for at all."""
        if self.patience is None:
            return None
        times = self._took.get(key, ())
        took = min(times) if len(times) == TIMED_COMPUTATIONS else 0.0
        if took > SLOW_COMPUTATIONS * self.patience:
            return 0.0
        running = self._running.get(key)
        if took > self.patience and running is not None and running.began < arrived and running.version != version:
            return 0.0
        return self.patience

    def kept(self, key: Hashable, make: Callable[[], T]) -> T:
        """The state kept under ``key`` between computations (made by ``make`` the first
        time, the least recently used dropped beyond KEPT_STATES): only the computation
        of one table uses it, on its own thread, one computation at a time."""
        with self._changed:
            if key not in self._kept:
                self._kept[key] = make()
                while len(self._kept) > KEPT_STATES:
                    self._kept.popitem(last=False)
            self._kept.move_to_end(key)
            return self._kept[key]  # type: ignore[no-any-return]

    def settle(self) -> None:
        """Wait until no table is being computed (for tests and the bench)."""
        with self._changed:
            self._changed.wait_for(lambda: not self._running)

    def _start(self, key: Hashable, computation: _Computation) -> None:
        self._running[key] = computation
        threading.Thread(target=self._run, args=(key, computation), daemon=True,
                         name=f"table {key!r}"[:60]).start()

    def _run(self, key: Hashable, computation: _Computation) -> None:
        while True:
            error: Exception | None = None
            started = clock()
            try:
                value = computation.compute()
            except Exception as exc:  # the request that waits for it raises it (no games yet: a page says so)
                error = exc
            took = clock() - started
            with self._changed:
                self.computed += 1
                self._took.setdefault(key, deque(maxlen=TIMED_COMPUTATIONS)).append(took)
                if error is None:
                    self._tables[key] = (computation.version, value, computation.began)
                    self._tables.move_to_end(key)
                    self._failed.pop(key, None)
                    while len(self._tables) > self._size:
                        dropped, _ = self._tables.popitem(last=False)
                        self._took.pop(dropped, None)
                else:
                    self._failed[key] = (computation.began, computation.version, error)
                if computation.again is None:
                    del self._running[key]
                    self._changed.notify_all()
                    return
                (computation.version, computation.compute), computation.again = computation.again, None
                computation.began = next(self._ticks)
                self._changed.notify_all()
