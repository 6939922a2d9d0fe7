"""Tournaments stopped part-way in the tests, as Ctrl-C stops one: after a given
number of games, between two of them."""

from __future__ import annotations

from collections.abc import Callable

from arena.store import Store
from arena.tournament.config import TournamentConfig
from arena.tournament.executors import SerialExecutor
from arena.tournament.runner import RunOutcome, run_tournament


class OneByOne(SerialExecutor):
    """Hands games over one at a time, so an interruption lands between games."""

    workers = 24


def stopper(after: int) -> Callable[[int, int, float], None]:
    """A progress callback that interrupts the run once ``after`` games are stored."""

    def stop(done: int, total: int, seconds: float) -> None:
        if done >= after:
            raise KeyboardInterrupt

    return stop


def interrupted_then_resumed(config: TournamentConfig, store: Store, after: int) -> tuple[RunOutcome, RunOutcome]:
    """Run ``config`` into ``store``, interrupted after ``after`` games, then run it
    again to its end: what each run said."""
    first = run_tournament(config, store, OneByOne(), progress=stopper(after))
    second = run_tournament(config, store, SerialExecutor())
    return first, second
