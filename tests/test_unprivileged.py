"""The arena run as an unprivileged user (``nobody``), attacked by the red team.

With control groups delegated to that user (made by root and handed over with
chown, as an operator or systemd's ``Delegate=yes`` does, see ``play`` in
tests/test_red_team.py), a bot is held as a whole, as it is under root: its
memory and its processes together, and frozen while not on move. Without them,
untrusted bots are refused, in one line saying what is missing and what to do,
unless ``--weak-sandbox`` accepts the weaker containment.

The runs use tests/test_red_team.py's harness (a PID namespace of their own) and
need a Python nobody can run (``ARENA_TEST_NOBODY_PYTHON``; .ci/run makes one):
without it they are skipped, with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox import cgroups
from tests.test_red_team import (
    NOBODY,
    RED,
    SLACK_MB,
    Played,
    as_nobody,
    assert_complete,
    folder_for,
    games_of,
    nobody_python,
    play,
    reports,
    spec,
    tournament,
)

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the sandbox under attack is Linux's"),
    pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0,
                       reason="root makes the delegated groups and runs the arena as nobody"),
    pytest.mark.skipif(shutil.which("unshare") is None or shutil.which("mount") is None,
                       reason="no unshare(1) or mount(8) to contain the attacks in namespaces of their own"),
]

MEMORY_MB = 192
PROCESSES = 24
THINKER = "minimax:depth=8"


@pytest.fixture(scope="module")
def delegated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Played:
    """As nobody, with the harness's groups delegated: a bot whose forked children
    hoard memory, a fork bomb and a bot whose children spin, each against a bot
    of the arena's (one tournament: one arena, one delegated group)."""
    user = as_nobody()
    config = tournament(
        "delegated", [spec("ForkHoarder", False), spec("ForkBomb", False), spec("StealsClock", False)], (THINKER,),
        limits={"memory_mb": MEMORY_MB, "processes": PROCESSES}, time={"move_seconds": 3.0})
    return play(folder_for(request, tmp_path_factory, "delegated", user), [], [config], user=user, timeout=240)


def test_as_nobody_with_a_delegated_group_a_bots_children_share_its_memory_limit(delegated: Played) -> None:
    """Promise: the memory limit holds for the bot as a whole, all its processes
    together, in an arena run as an unprivileged user with a delegated group
    (three children of 300 MB each got 2.1 GB under a 1 GB limit without one)."""
    assert_complete(delegated, "delegated", games=2 * 3)
    for game, side in games_of(delegated, "ForkHoarder"):
        if game.termination == "forfeit" and game.winner != side:
            continue  # stopped by its limit: fine
        for report in reports(delegated, game, side):
            assert report["held_mb"] <= MEMORY_MB + SLACK_MB, f"its children held {report['held_mb']} MB at once"


def test_as_nobody_with_a_delegated_group_a_fork_bomb_stays_under_the_process_limit(delegated: Played) -> None:
    """Promise: the bot's processes and threads together stay under its process
    limit (a fork bomb reached 300 processes without a pids group)."""
    for game, side in games_of(delegated, "ForkBomb"):
        counted = [report["children"] for report in reports(delegated, game, side)]
        assert counted, game.reason
        assert max(counted) < PROCESSES, f"it had {max(counted)} children under a limit of {PROCESSES} processes"


def test_as_nobody_with_a_delegated_group_a_bot_is_frozen_off_move(delegated: Played) -> None:
    """Promise: a bot does not run while its opponent thinks: its spinning
    children are frozen from the end of its move to the start of the next."""
    for game, side in games_of(delegated, "StealsClock"):
        last = reports(delegated, game, side)[-1]
        assert last["recorded"] > 0, "the spinners never ran"
        assert last["stolen_ms"] <= 25, f"its children ran {last['stolen_ms']} ms while the opponent thought"


@pytest.fixture(scope="module")
def undelegated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Played:
    """As nobody, with no group of its own: the harness's groups stay root's."""
    user = as_nobody()
    config = tournament("undelegated", [spec("ForkBomb", False)], games=2)
    return play(folder_for(request, tmp_path_factory, "undelegated", user), [], [config], user=user,
                delegate=False)


def test_as_nobody_without_a_delegated_group_untrusted_bots_are_refused(undelegated: Played) -> None:
    """Promise: an arena that cannot hold a bot as a whole (no memory, pids or
    freezer group it may use) fails closed: the command stops before any game,
    with one line saying what is missing and how to delegate a group, or to pass
    --weak-sandbox."""
    step = undelegated.steps[0]
    assert step["rc"] == 2
    lines = Path(step["log"]).read_text().strip().splitlines()
    assert len(lines) == 1, lines
    assert "cannot isolate bots here" in lines[0] and "no cgroup memory, pids or freezer controller" in lines[0]
    assert "--cgroup" in lines[0] and "--weak-sandbox" in lines[0], lines[0]
    if undelegated.db.exists():  # refused before the tournament was even stored, as it is now
        with undelegated.store() as store:
            assert store.games.all(tournament="undelegated") == []


def nobody_runs(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The arena as nobody, outside the harness: in the groups this test runs in, root's."""
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "HOME": str(folder)}  # its own arena
    return subprocess.run([nobody_python(), "-m", "arena", *args], user=NOBODY[0], group=NOBODY[1],
                          extra_groups=[], cwd=folder, env=env, capture_output=True, text=True, timeout=120)


def test_as_nobody_without_a_delegated_group_weak_sandbox_runs_them_and_doctor_says_how(
        request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Promise: --weak-sandbox is the one way to run untrusted bots without the
    groups, and ``arena doctor`` says they are refused and how to delegate them."""
    user = as_nobody()
    folder = folder_for(request, tmp_path_factory, "weak", user)
    bot = folder / RED.name
    shutil.copy(RED, bot)
    bot.chmod(0o644)
    db = str(folder / "arena.db")
    weak = nobody_runs(folder, "--weak-sandbox", "tournament", "run", "--bots", f"{bot}:PredictsRandom,random",
                       "--games", "2", "--db", db)
    assert weak.returncode == 0, weak.stderr
    doctor = nobody_runs(folder, "doctor")
    assert doctor.returncode == 0, doctor.stderr
    assert "Untrusted bots are refused here" in doctor.stdout
    assert "Delegate=yes" in doctor.stdout and "chown nobody" in doctor.stdout, doctor.stdout


def test_a_cgroup_that_is_not_there_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A mistaken --cgroup stops the command at once, in one line."""
    ran = subprocess.run([sys.executable, "-m", "arena", "--cgroup", "/no-such-arena-group", "doctor"],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert ran.returncode == 2
    assert ran.stderr.strip().splitlines() == [
        "Error: --cgroup /no-such-arena-group: no such control group in the memory, pids or freezer hierarchy "
        "(nor in cgroup v2); make it as root first (see 'arena doctor')"]
    assert cgroups.check_delegated("/no-such-arena-group") is not None


def test_an_arena_cgroup_that_is_not_there_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """The same mistake given in ARENA_CGROUP stops the command at once, in one line,
    naming the variable (not later, as a refusal to run the bots)."""
    ran = subprocess.run([sys.executable, "-m", "arena", "bots"], capture_output=True, text=True, timeout=60,
                         cwd=tmp_path, env={**os.environ, "ARENA_CGROUP": "/no-such-arena-group"})
    assert ran.returncode == 2
    assert ran.stderr.strip().splitlines() == [
        "Error: ARENA_CGROUP /no-such-arena-group: no such control group in the memory, pids or freezer hierarchy "
        "(nor in cgroup v2); make it as root first (see 'arena doctor')"]
