"""A one-line "still working" ticker on stderr for a single long computation (a solve)."""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TextIO


class Ticker:
    """Redraws ``what: 3.2 s of 10 s`` from a thread while the ``with`` block runs,
    then clears the line. Silent (draws nothing, starts no thread) unless its
    stream is a terminal."""

    def __init__(self, stream: TextIO, what: str, budget: float | None, every: float = 0.25) -> None:
        self.stream = stream
        self.what = what
        self.budget = budget
        self.every = every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    @classmethod
    def for_stderr(cls, what: str, budget: float | None) -> Ticker:
        return cls(sys.stderr, what, budget)

    def line(self, seconds: float) -> str:
        of = f" of {self.budget:g} s" if self.budget is not None else " (no budget: Ctrl-C stops)"
        return f"{self.what}: {seconds:.1f} s{of} "

    def __enter__(self) -> Ticker:
        self._started = time.monotonic()
        if self.stream.isatty():
            self._thread = threading.Thread(target=self._run, name="ticker", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.stream.write("\r" + self.line(time.monotonic() - self._started))
            self.stream.flush()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self.stream.write("\r\033[K")  # the line is gone: the answer starts on a clean line
            self.stream.flush()
