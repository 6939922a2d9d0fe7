"""Hostile program bots: compiled C (tests/bots/programs/hostile, built with gcc at
test time) that speaks the protocol, answers hello and new_game like any bot,
then attacks on its first move. Each test checks that the sandbox held (what the
attack reached, from the bot's own report in its info or log, or from outside),
the game's record (the forfeit and its reason, or a game played on), and that
the opponent and the arena are unharmed. Skipped without gcc, unless
ARENA_EXAMPLES_REQUIRED=1; skipped where bots cannot be isolated."""

from __future__ import annotations

import os
import socket
import time
import uuid
from pathlib import Path

import pytest

from arena.records import GameRecord, Limits
from arena.sandbox import landlock
from arena.sandbox.spawner import PROCESS_SPAWNER
from tests.conftest import process_alive, processes_named
from tests.program_bots import PROGRAMS, infos, log, play, program_folder, require, require_sandbox

HOSTILE = PROGRAMS / "hostile"
pytestmark = pytest.mark.skipif(os.name != "posix", reason="the sandbox is Linux's")


@pytest.fixture
def hostile(tmp_path):
    """hostile("name", *arguments) -> the folder of the program bot built from
    name.c, run with ``arguments``."""
    require("gcc")
    require_sandbox()

    def build(name: str, *arguments: str) -> Path:
        run = " ".join(["./bot", *arguments])
        return program_folder(tmp_path / name, [HOSTILE / f"{name}.c", HOSTILE / "hostile.h"], run,
                              ["gcc", "-O1", "-o", "bot", f"{name}.c", "-lpthread"])

    return build


def forfeited(record: GameRecord, reason: str) -> None:
    """The hostile bot (first) lost by forfeit with ``reason``, before or at its
    first move, and its opponent won: the game ended and was charged to it."""
    assert record.termination == "forfeit", (record.termination, record.reason)
    assert record.winner == 1
    assert (record.reason or "").startswith(reason), record.reason


def played_on(record: GameRecord) -> dict:
    """The attack failed without harming the game: played to its end, both sides
    moving; the attacker's report from its first move."""
    assert record.termination in ("win", "draw"), record.reason
    assert {move.ply % 2 for move in record.moves} == {0, 1}
    reports = infos(record)
    assert reports, "the bot reported nothing"
    return reports[0]


def gone_within(tag: str, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while processes_named(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not processes_named(tag)


# --- processes and memory --------------------------------------------------------------


def test_a_fork_bomb_loses_on_time_and_leaves_no_process(hostile):
    tag = f"bomb{uuid.uuid4().hex[:8]}"
    record = play(hostile("fork_bomb", tag), move_seconds=1.0)
    forfeited(record, "time: no answer within 1 s")
    assert gone_within(tag), "processes of the fork bomb outlived its game"
    again = play(hostile("fork_bomb", tag + "x"), move_seconds=1.0)  # the arena plays on: the next game too
    forfeited(again, "time: no answer within 1 s")
    assert gone_within(tag + "x")


def test_a_memory_hog_is_killed_over_its_memory_limit_not_refused_an_address_space(hostile):
    record = play(hostile("memory_hog"), limits=Limits(memory_mb=256), move_seconds=10.0)
    forfeited(record, "exited: killed over its memory limit")
    assert record.reason == "exited: killed over its memory limit"
    # It had no address-space limit, so malloc never failed (that would be "exited with code 3").
    assert "RLIMIT_AS unlimited" in log(record) and "malloc failed" not in log(record)
    assert "held 2 GiB" not in log(record)


# --- the network ---------------------------------------------------------------------------


def test_no_connection_of_any_kind_is_made(hostile):
    listener = socket.socket()  # on this machine's loopback, outside the sandbox
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    try:
        report = played_on(play(hostile("network", str(listener.getsockname()[1]))))
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody came
    finally:
        listener.close()
    # Every new socket is refused, but a pair of Unix stream sockets (seccomp.PROGRAM_ALLOWANCES).
    assert report == dict.fromkeys(["loopback", "outside", "udp", "ipv6", "netlink", "unix", "dgram_pair",
                                    "seqpacket_pair", "inet_pair"], "EPERM")


# --- files -----------------------------------------------------------------------------------


@pytest.mark.skipif(landlock.abi_version() < 1, reason="no Landlock on this kernel")
def test_nothing_outside_its_folder_can_be_read(hostile, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the arena's secret")
    record = play(hostile("secrets", str(secret)))
    report = played_on(record)
    assert not [key for key, outcome in report.items() if outcome.startswith(("read", "listed"))]
    assert set(report.values()) <= {"EACCES", "ENOENT"}, report  # refused, or not even there
    assert "secret" not in log(record) and log(record) == ""


@pytest.mark.skipif(landlock.abi_version() < 1, reason="no Landlock on this kernel")
def test_no_file_is_created_removed_or_renamed_anywhere(hostile, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    record = play(hostile("files", str(outside)))
    report = played_on(record)
    made = [key for key in ("create_here", "create_parent", "create_tmp", "create_shm", "create_named", "mkdir",
                            "symlink", "fifo", "rename", "unlink") if report[key] == "ok"]
    assert made == [], report
    assert report["chmod"] == "EPERM" and report["write_usr"] == "EACCES"
    # It may write the files it came with (its folder's, gone with it), as docs/sandbox.md says.
    assert report["append_own_file"] == "ok"
    assert list(outside.iterdir()) == []
    assert not Path("/tmp/planted-by-a-bot").exists() and not Path("/dev/shm/planted-by-a-bot").exists()


# --- privileges, other processes ------------------------------------------------------------------


def test_a_shell_or_a_setuid_program_gains_nothing(hostile):
    report = played_on(play(hostile("escalate"), move_seconds=10.0))
    assert report["cap_eff"] == 0
    assert report["euid"] == report["uid"]
    assert report["shell_uid"] == f"0 {int(report['uid'])} "  # the shell runs as the bot, no one else
    assert report["curl"].startswith("0 curl exit") and report["curl"] != "0 curl exit 0 "
    # no_new_privs: a setuid-root program runs as the bot, and fails as it would.
    assert report["su"].startswith("0 su exit") and report["su"] != "0 su exit 0 "
    assert report["mount"].startswith("0 mount exit") and report["mount"] != "0 mount exit 0 "
    assert report["passwd"].startswith("0 passwd exit") and report["passwd"] != "0 passwd exit 0 "


def test_processes_outside_its_sandbox_cannot_be_traced_or_signalled(hostile):
    spawner = PROCESS_SPAWNER.get().pid
    report = played_on(play(hostile("signals", str(os.getpid()), str(spawner))))
    # Outside its PID namespace their numbers name nothing it can reach.
    assert {report["kill_1"], report["kill_2"]} <= {"ESRCH", "EPERM"}
    assert report["ptrace_1"] == report["ptrace_2"] == "EPERM"
    assert report["pid"] == 1 and report["parent"] == 0  # the first process of a namespace of its own
    assert report["kill_all_kill"] == "EPERM"  # SIGKILL by the bot: the filter
    assert process_alive(spawner) and PROCESS_SPAWNER.get().pid == spawner


# --- time --------------------------------------------------------------------------------------


SLOW_OPPONENT = """
    import time
    from arena.bot import Bot

    class Slow(Bot):
        def choose_move(self, board):
            time.sleep(0.3)
            return board.legal_moves()[0]
"""


def test_threads_spinning_in_the_opponents_time_are_frozen(hostile, write_bot):
    record = play(hostile("spinner"), second=write_bot("slow", SLOW_OPPONENT), move_seconds=5.0)
    reports = [report for report in infos(record) if "off_move_cpu" in report]
    assert record.termination in ("win", "draw"), record.reason
    assert len(reports) >= 2
    # Two threads spinning through 0.3 s of the opponent's move would use up to 0.6 s
    # of processor time (a fifth of it on a busy machine); frozen, next to none: what
    # they get between the thaw and the bot's reading its request.
    assert all(report["off_move_wall"] >= 0.25 for report in reports)
    cpu, wall = (sum(report[key] for report in reports) for key in ("off_move_cpu", "off_move_wall"))
    assert cpu < 0.1 * wall, reports


def test_a_bot_that_never_reads_its_requests_loses_on_time(hostile):
    forfeited(play(hostile("never_reads"), move_seconds=1.0), "time: no answer within 1 s")


# --- its output --------------------------------------------------------------------------------


def test_a_line_over_64_kib_on_stdout_is_a_protocol_forfeit(hostile):
    record = play(hostile("huge_line"))
    forfeited(record, "protocol: answer too long")
    assert record.reason == "protocol: answer too long"


def test_a_stderr_flood_is_cut_at_the_output_cap_and_forfeits(hostile):
    record = play(hostile("stderr_flood"), limits=Limits(output_kb=64))
    forfeited(record, "output: printed more than the 64 KB allowed")
    kept = record.logs[0]
    assert kept is not None and len(kept.text.encode()) <= 64 * 1024


def test_a_bot_that_closes_its_channel_loses(hostile):
    forfeited(play(hostile("closes_stdout"), move_seconds=1.0), "exited: closed its connection to the arena")
    forfeited(play(hostile("closes_stdout", "exit"), move_seconds=1.0), "exited with code 0")
