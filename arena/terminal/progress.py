"""A one-line progress bar on stderr: games done, games per second, time left."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Redraws at most ten times a second; silent unless stderr is a terminal."""

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self._last_draw = 0.0

    @classmethod
    def for_stderr(cls) -> ProgressBar | None:
        return cls(sys.stderr) if sys.stderr.isatty() else None

    def update(self, done: int, total: int, seconds: float) -> None:
        now = time.monotonic()
        if done < total and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        self.stream.write("\r" + self.line(done, total, seconds))
        self.stream.flush()

    def line(self, done: int, total: int, seconds: float) -> str:
        filled = int(self.width * done / total) if total else self.width
        rate = done / seconds if seconds > 0 else 0.0
        left = (total - done) / rate if rate > 0 else 0.0
        bar = "#" * filled + "-" * (self.width - filled)
        return f"[{bar}] {done}/{total} games  {rate:,.1f} games/s  {_clock(left)} left "

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
