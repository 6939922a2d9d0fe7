"""Tables computed once per state of the database.

A standings table of a million games takes seconds to count; a page must take
milliseconds. Each table is kept under its key (what it shows) together with
the store's :meth:`~arena.store.Store.version` when it was computed: a
request whose version differs (a game arrived, a tournament finished) computes
it again, so a cached table is never stale, only reused while nothing changed.
"""

from __future__ import annotations

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
        self._tables: OrderedDict[Hashable, tuple[Hashable, Any]] = OrderedDict()
        self._lock = threading.Lock()
        # One lock per key while it is computed: two requests for the same new
        # table wait for one computation instead of making two.
        self._computing: dict[Hashable, threading.Lock] = {}
        self.computed = 0  # how many tables were computed (not found): for tests and the bench

    def get(self, key: Hashable, version: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            found = self._tables.get(key)
            if found is not None and found[0] == version:
                self._tables.move_to_end(key)
                return found[1]  # type: ignore[no-any-return]
            gate = self._computing.setdefault(key, threading.Lock())
        with gate:
            with self._lock:  # another request may have computed it meanwhile
                found = self._tables.get(key)
                if found is not None and found[0] == version:
                    return found[1]  # type: ignore[no-any-return]
            value = compute()
            with self._lock:
                self.computed += 1
                self._tables[key] = (version, value)
                self._tables.move_to_end(key)
                while len(self._tables) > self._size:
                    self._tables.popitem(last=False)
        return value
