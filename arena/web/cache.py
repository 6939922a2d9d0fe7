"""Tables computed once per state of the database.

A standings table of a million games takes seconds to count; a page must take
milliseconds. Each table is kept under its key (what it shows) together with
the store's :meth:`~arena.store.Store.version` when it was computed: a
request whose version differs (a game arrived, a tournament finished) computes
it again, so a cached table is never stale, only reused while nothing changed.

While a league plays, the version changes with every batch of games, and each
request would compute the table anew, one after another, each waiting for all the
others: a crowd of viewers would queue for minutes. So a request that finds the
table being computed waits for it and then takes, not its own version, but any
table whose computation began after the request arrived: that table saw every game
the request could have seen, so it is as fresh as one the request computed itself.
A burst of requests costs at most two computations, not one each.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

CACHED_TABLES = 64  # tables kept, least recently used dropped first


class TableCache:
    """Tables by (key, version), the least recently used dropped beyond ``size``."""

    def __init__(self, size: int = CACHED_TABLES) -> None:
        self._size = size
        # key -> (version, table, tick its computation began at)
        self._tables: OrderedDict[Hashable, tuple[Hashable, Any, int]] = OrderedDict()
        self._ticks = itertools.count(1)  # orders arrivals and computations' beginnings
        self._lock = threading.Lock()
        # One lock per key while it is computed: two requests for the same new
        # table wait for one computation instead of making two.
        self._computing: dict[Hashable, threading.Lock] = {}
        self.computed = 0  # how many tables were computed (not found): for tests and the bench
        self.waited = 0  # how many requests found their table missing or out of date (the same)

    def get(self, key: Hashable, version: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            found = self._tables.get(key)
            if found is not None and found[0] == version:
                self._tables.move_to_end(key)
                return found[1]  # type: ignore[no-any-return]
            arrived = next(self._ticks)
            self.waited += 1
            gate = self._computing.setdefault(key, threading.Lock())
        with gate:
            with self._lock:  # another request may have computed it meanwhile
                found = self._tables.get(key)
                if found is not None and (found[0] == version or found[2] > arrived):
                    return found[1]  # type: ignore[no-any-return]
                began = next(self._ticks)
            value = compute()
            with self._lock:
                self.computed += 1
                self._tables[key] = (version, value, began)
                self._tables.move_to_end(key)
                while len(self._tables) > self._size:
                    self._tables.popitem(last=False)
        return value
