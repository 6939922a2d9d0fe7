"""The progress line: games done, rate and time left; nothing when not a terminal."""

from __future__ import annotations

import io

from arena.terminal.progress import ProgressBar


def test_the_line_shows_done_rate_and_time_left():
    bar = ProgressBar(io.StringIO(), width=10)
    assert bar.line(50, 100, 10.0) == "[#####-----] 50/100 games  5.0 games/s  0:10 left "
    assert bar.line(0, 100, 0.0).startswith("[----------] 0/100 games  0.0 games/s")
    assert "1:00:00 left" in bar.line(1, 3601, 1.0)


def test_updates_redraw_in_place_and_close_ends_the_line():
    stream = io.StringIO()
    bar = ProgressBar(stream)
    bar.update(1, 2, 1.0)
    bar.update(2, 2, 2.0)  # the last update always draws
    bar.close()
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and "2/2 games" in text


def test_silent_when_stderr_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert ProgressBar.for_stderr() is None
