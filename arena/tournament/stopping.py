"""How a run stops: Ctrl-C, SIGTERM and a hang-up, held back while whole games are
stored, then turned into KeyboardInterrupt. A tournament and a league stop alike."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol


class Stoppable(Protocol):
    """What a run reports: the signal that stopped it, if one did."""

    signal: int | None


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold the stop signals back during the block; one that came meanwhile is
    delivered when it ends."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def stop_signals(outcome: Stoppable) -> Iterator[Callable[[], None]]:
    """Ctrl-C, SIGTERM and a hang-up (the terminal closed) stop the run alike: each
    raises KeyboardInterrupt, noting its signal in ``outcome``. The block calls the
    function it is given once it is cleaning up; later signals are then ignored
    until the block ends, so the finished games are stored and the status is set.
    Only the main thread can take signals: elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return

    def stop(signum: int, _frame: object) -> None:
        outcome.signal = signum
        raise KeyboardInterrupt

    def hold() -> None:
        for sig in _STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)

    previous = {sig: signal.signal(sig, stop) for sig in _STOP_SIGNALS}
    try:
        yield hold
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
