"""The arena's database: :class:`Store` opens the file, its repositories read and
write it (``store.games``, ``store.tournaments``, ``store.bots``,
``store.submissions``, ``store.analyses``, ``store.accounts``, ``store.leagues``,
``store.results``), and the rows come back typed. No other room writes SQL."""

from arena.store.database import Store, check_database
from arena.store.migrations import MIGRATION_NAMES, migrations
from arena.store.rows import (
    UNNAMED,
    BotIdentity,
    CountedSummary,
    EntrantGame,
    EntrantRecord,
    Entry,
    FinishedGame,
    League,
    OpeningCounts,
    StoredBot,
    StoredGame,
    StoredMove,
    StoredTournament,
    StoreError,
    Submission,
    User,
    code_description,
    rules_of,
)

__all__ = [
    "MIGRATION_NAMES",
    "UNNAMED",
    "BotIdentity",
    "CountedSummary",
    "EntrantGame",
    "EntrantRecord",
    "Entry",
    "FinishedGame",
    "League",
    "OpeningCounts",
    "Store",
    "StoreError",
    "StoredBot",
    "StoredGame",
    "StoredMove",
    "StoredTournament",
    "Submission",
    "User",
    "check_database",
    "code_description",
    "migrations",
    "rules_of",
]
