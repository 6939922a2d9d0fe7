"""Where the arena database is when nobody says: one name, one variable."""

from __future__ import annotations

import os

DEFAULT_DB = "arena.db"
DB_VARIABLE = "ARENA_DB"  # the database every command uses when given none


def default_db() -> str:
    """``ARENA_DB`` if set, else ``arena.db`` (in the current folder)."""
    return os.environ.get(DB_VARIABLE) or DEFAULT_DB
