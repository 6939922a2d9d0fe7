"""Program bots in each language's runtime play sandboxed games, seccomp filter,
Landlock and process limit included: a trivial bot of each (tests/bots/programs/runtimes)
starts, plays, and is not forfeited. docs/seccomp.md, "Program bots and their
runtimes", says what each runtime needs. A runtime that is not installed is
skipped, unless ARENA_EXAMPLES_REQUIRED=1."""

from __future__ import annotations

import pytest

from arena.sandbox import bot_process
from tests.program_bots import PROGRAMS, infos, log, play, program_folder, require, require_sandbox

RUNTIMES = PROGRAMS / "runtimes"
# language: (tools, sources, build, run)
LANGUAGES = {
    "c": (("gcc",), ["bot.c"], ["gcc", "-O2", "-o", "bot", "bot.c"], "./bot"),
    "java": (("javac", "java"), ["Bot.java"], ["javac", "Bot.java"], "java -XX:+UseSerialGC -cp . Bot"),
    "javascript": (("node",), ["bot.js"], None, "node bot.js"),
    "csharp": (("mcs", "mono"), ["Bot.cs"], ["mcs", "-out:bot.exe", "Bot.cs"], "mono bot.exe"),
    "elixir": (("elixir",), ["bot.exs"], None, "elixir bot.exs"),
}


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_a_trivial_bot_plays_a_sandboxed_game(language, tmp_path):
    tools, sources, build, run = LANGUAGES[language]
    require(*tools)
    require_sandbox()
    folder = program_folder(tmp_path / language, [RUNTIMES / name for name in sources], run, build)
    record = play(folder, move_seconds=5.0)
    assert record.termination in ("win", "draw"), (record.reason, log(record))
    assert len(record.moves) >= 7
    if language == "elixir":  # the BEAM's schedulers were bounded, so that it fits the process limit
        assert all(1 <= info["schedulers"] <= bot_process.BEAM_SCHEDULERS for info in infos(record))


def test_the_beams_schedulers_are_bounded_on_a_large_machine(monkeypatch):
    monkeypatch.setattr(bot_process.os, "sched_getaffinity", lambda pid: set(range(96)))
    flags = bot_process._runtime_environment()["ERL_AFLAGS"].split()
    assert flags[:2] == ["+S", f"{bot_process.BEAM_SCHEDULERS}:{bot_process.BEAM_SCHEDULERS}"]
