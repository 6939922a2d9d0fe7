"""Shared fixtures: a fresh database path, bot files written on the fly, the CLI."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import settings

from arena.cli.main import main

# In CI every property test draws the same examples each run, so a failure there
# reproduces on any machine; elsewhere examples vary from run to run (and a
# failure prints the blob that replays it). HYPOTHESIS_PROFILE overrides either.
# No per-example deadline: on a busy 2-core machine a slow example is the machine,
# not the code (speed is measured by the benchmarks, never asserted by a test).
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile("dev", print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))

HERE = Path(__file__).parent
TEST_BOTS = HERE / "bots"


class FakeClock:
    """A clock that moves ``step`` seconds each time it is read: a bot's use of its
    time is checked on the bot's own clock, never on how fast this machine is."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.now += self.step
        self.reads += 1
        return self.now


def process_alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def processes_named(name: str) -> list[int]:
    """Live processes whose name (``comm``, 15 characters at most) is ``name``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == name[:15] and process_alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture
def db_path(tmp_path: Path) -> str:
    return str(tmp_path / "arena.db")


@pytest.fixture
def write_bot(tmp_path: Path):
    """write_bot("name", "class body source") -> path of a bot file."""

    def write(name: str, source: str) -> str:
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        return str(path)

    return write


@pytest.fixture(autouse=True)
def _no_outside_cluster_or_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's ARENA_CLUSTER or ARENA_TOKEN never sends a test's games or bots
    elsewhere: tests that need one set it themselves."""
    for name in ("ARENA_CLUSTER", "ARENA_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Run the arena command in a temporary working directory; returns the result."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return run


@pytest.fixture(autouse=True)
def tables_wait_for_their_computation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The site shows a table's previous state after PATIENCE seconds of computing the
    next; the tests wait for every table, so that none depends on the machine's speed
    (tests/test_web_cache.py gives the patience where it is what it tests)."""
    monkeypatch.setattr("arena.web.cache.PATIENCE", None)
