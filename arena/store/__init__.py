"""The arena's database: :class:`Store` opens the file, its repositories read and
write it (``store.games``, ``store.tournaments``, ``store.bots``,
``store.submissions``, ``store.analyses``, ``store.accounts``, ``store.leagues``,
``store.gates``, ``store.results``), and the rows come back typed. No other room writes SQL.

The names load on first use (PEP 562): ``arena.store.location`` (where the database
is) is read by commands and configurations that never open one, and must not load
sqlite-utils with it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.store.database import Store, check_database
    from arena.store.rows import (
        UNNAMED,
        BotIdentity,
        CountedSummary,
        EntrantGame,
        EntrantRecord,
        Entry,
        FinishedGame,
        GateTest,
        League,
        OpeningCounts,
        StoreBusy,
        StoredBot,
        StoredGame,
        StoredLog,
        StoredMove,
        StoredTournament,
        StoreError,
        StoreFull,
        StoreReadOnly,
        StoreWriteFailed,
        Submission,
        User,
        VoidGame,
        code_description,
        rules_of,
    )

# Each public name and the module that defines it.
# (The migrations are reached as arena.store.migrations: a package attribute of that
# name would be shadowed by the submodule once it is imported.)
_HOMES = {"Store": "database", "check_database": "database"}

__all__ = [
    "UNNAMED",
    "BotIdentity",
    "CountedSummary",
    "EntrantGame",
    "EntrantRecord",
    "Entry",
    "FinishedGame",
    "GateTest",
    "League",
    "OpeningCounts",
    "Store",
    "StoreBusy",
    "StoreError",
    "StoreFull",
    "StoreReadOnly",
    "StoreWriteFailed",
    "StoredBot",
    "StoredGame",
    "StoredLog",
    "StoredMove",
    "StoredTournament",
    "Submission",
    "User",
    "VoidGame",
    "check_database",
    "code_description",
    "rules_of",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'arena.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"arena.store.{_HOMES.get(name, 'rows')}"), name)
    globals()[name] = value
    return value
