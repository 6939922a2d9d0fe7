"""Program bots in tests: toolchains that may be missing, building a bot in a
temporary folder, and playing it sandboxed against the arena's random bot."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from arena.engine.game import Rules
from arena.records import GameRecord, GameSpec, Limits, TimeControl
from arena.referee.referee import play_game
from arena.sandbox.spawner import PROCESS_SPAWNER

PROGRAMS = Path(__file__).parent / "bots" / "programs"
#: Set to 1 where every toolchain must be present (CI's image): a missing one fails.
REQUIRED_VARIABLE = "ARENA_EXAMPLES_REQUIRED"


def require(*tools: str) -> None:
    """Skip the test where one of ``tools`` is not installed, or fail where
    ``ARENA_EXAMPLES_REQUIRED=1`` says they all must be."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        message = f"{', '.join(missing)} not installed"
        if os.environ.get(REQUIRED_VARIABLE) == "1":
            pytest.fail(f"{message} ({REQUIRED_VARIABLE}=1)")
        pytest.skip(message)


def require_sandbox() -> None:
    """Skip where bots cannot be isolated here (their containment is the point)."""
    missing = PROCESS_SPAWNER.get().containment()["missing"]
    if missing:
        pytest.skip(f"bots cannot be isolated here: {missing}")


def program_folder(folder: Path, sources: list[Path], run: str, build: list[str] | None = None) -> Path:
    """A program bot's folder: ``sources`` copied in, built with ``build`` (here, as
    an author would), and a bot.toml that runs ``run``."""
    folder.mkdir(parents=True, exist_ok=True)
    for source in sources:
        shutil.copy(source, folder / source.name)
    if build is not None:
        done = subprocess.run(build, cwd=folder, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    (folder / "bot.toml").write_text(f"name = {folder.name!r}\nrun = {run!r}\n")
    return folder


def compile_c(source: Path, folder: Path) -> Path:
    """``source`` (a C file) built into a program bot's folder of its own."""
    require("gcc")
    return program_folder(folder / source.stem, [source], "./bot", ["gcc", "-O1", "-o", "bot", source.name])


def play(bot: Path | str, limits: Limits | None = None, move_seconds: float = 2.0, seed: int = 1,
         second: str = "random") -> GameRecord:
    """One sandboxed game of ``bot`` (moving first) against ``second``."""
    spec = GameSpec(key=str(seed), rules=Rules(), first=str(bot), second=second, pairing="p", seed=seed,
                    isolate=True, limits=limits or Limits(), time_control=TimeControl(move_seconds, 0.0))
    return play_game(spec)


def infos(record: GameRecord, side: int = 0) -> list[dict]:
    """What one side reported beside its moves."""
    return [move.info for move in record.moves if move.info and move.ply % 2 == side]


def log(record: GameRecord, side: int = 0) -> str:
    """What one side wrote to its log (stderr)."""
    kept = record.logs[side]
    return kept.text if kept is not None else ""
