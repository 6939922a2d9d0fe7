"""What every executor offers the runner, and the names both kinds share.

An executor plays chunks of games somewhere (here: :mod:`arena.tournament.executors`,
worker processes of this machine; :mod:`arena.tournament.cluster`, a Dask cluster's
workers) and yields their records as they finish. Both kinds stand on this module,
and neither on the other, so the import graph has no circle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

from arena.records import GameSpec

HEARTBEAT_SECONDS = 0.25
#: How long a stopped run waits for the games that just finished in the workers.
DRAIN_SECONDS = 0.1

#: What a worker's function yields for each finished game: a GameRecord, or the
#: rows the store writes (a FinishedGame), whatever the caller asked for.
Played = TypeVar("Played")


class Executor(Protocol):
    """Maps ``fn`` over ``chunks`` in any order, yielding records as games finish.

    ``fn`` plays a chunk and yields each game's record (whatever form the caller
    chose) as it finishes; the executor yields lists of records (any grouping,
    possibly empty) as they come in. ``chunks`` may be a lazy iterator: an executor
    takes only a few more than it has workers at a time, so memory stays flat
    however long the tournament.
    """

    def map_unordered(
        self, fn: Callable[[list[GameSpec]], Iterable[Played]], chunks: Iterable[list[GameSpec]]
    ) -> Iterator[list[Played]]: ...

    def drain(self) -> list[Any]:
        """After the iteration stopped early (Ctrl-C, a lost worker), the records of
        games that finished but were not yielded yet, without waiting for any game."""
        ...

    def close(self, cancel: bool = False) -> None: ...


class WorkerLost(RuntimeError):
    """A worker process died with games in flight."""
