"""Bots of different games talking to each other, or slowing other processes down,
through what the kernel shares: the attacks of tests/bots/channel_bots.py, each
played for real in the sandbox (a bot process from the spawner, as in any game),
each test checking what the sandbox promises. The files the bots act on are the
arena package's own, in this checkout: where the sandbox failed, a lock, a lease
or an eviction would reach only these tests, not the machine's other processes.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import arena
from arena.bot import split_answer
from arena.engine.game import Board, Rules
from arena.players.plugins import make_bot
from arena.sandbox import landlock, seccomp
from tests.conftest import TEST_BOTS

CHANNELS = TEST_BOTS / "channel_bots.py"
PACKAGE = Path(arena.__file__).resolve().parent
REFUSED = f"PermissionError {errno.EPERM}"  # what a call the seccomp filter refuses raises in the bot

pytestmark = [
    pytest.mark.skipif(not seccomp.supported(), reason=seccomp.describe()),
]


@contextmanager
def playing(name: str, **options: str) -> Iterator[dict[str, Any]]:
    """The report of bot ``name``'s first move, its process kept alive (with
    whatever it holds) until the block ends."""
    spec = ":".join([str(CHANNELS), name, *(f"{key}={value}" for key, value in options.items())])
    bot = make_bot(spec)
    try:
        bot.new_game(Rules(), 0, 1)
        move, info = split_answer(bot.choose_move(Board()))
        assert move == 0, info
        yield info
    finally:
        bot.close()


def report_of(name: str, **options: str) -> dict[str, Any]:
    with playing(name, **options) as info:
        return info


# --- file locks and leases -----------------------------------------------------------------


def test_a_bot_cannot_lock_an_arena_file_it_reads():
    """flock and both kinds of fcntl record lock (process and open file) on a
    file every bot can read are refused: a lock held by one bot and seen by a bot
    of another game carried a bit each time."""
    info = report_of("LocksFile", path=str(PACKAGE / "text.py"))
    assert info == {"flock": REFUSED, "posix": REFUSED, "ofd": REFUSED}


def test_a_bot_of_another_game_sees_no_lock_and_cannot_ask():
    """With one bot holding (or trying to hold) every lock on a file, a bot of a
    concurrent game finds no lock, and cannot even ask about one: the channel has
    no receiver either."""
    path = str(PACKAGE / "text.py")
    with playing("LocksFile", path=path), playing("LooksForLocks", path=path) as seen:
        assert seen == {"flock_exclusive": REFUSED, "posix_query": REFUSED, "ofd_query": REFUSED}


def test_a_lease_is_refused_and_nobody_waits_for_the_bot():
    """A write lease (F_SETLEASE) on a file the bot can read is refused, so
    another process opening the file while the bot lives is not delayed; nor may
    the bot leave a write hint (F_SET_RW_HINT) on the file for others to read."""
    path = PACKAGE / "sandbox" / "doctor.py"  # opened by `arena doctor` only
    with playing("TakesLease", path=str(path)) as info:
        # Where the bot held a lease, this open would fail at once (O_NONBLOCK)
        # rather than wait for the bot to give it up: the test never waits.
        try:
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        except BlockingIOError:
            pytest.fail(f"opening {path} would wait for the bot's lease ({info})")
        started = time.monotonic()
        with open(path, "rb") as file:
            assert file.read(1)
        assert time.monotonic() - started < 5
        assert info == {"lease": REFUSED, "write_hint": errno.EPERM}


def test_a_bot_cannot_watch_a_folder():
    """F_NOTIFY on a folder the bot can read (the arena's own package) is refused:
    it would be told whenever another process read or changed a file there."""
    assert report_of("WatchesFolder", path=str(PACKAGE)) == {"notify": REFUSED}


# --- the page cache ------------------------------------------------------------------------


def test_a_bot_can_neither_evict_load_nor_probe_shared_file_pages():
    """Every call that evicts a shared file's pages from the page cache, loads
    them on request, or asks which are there is refused: fadvise64 (DONTNEED,
    WILLNEED), mincore, readahead, cachestat, preadv2 with RWF_NOWAIT (fails
    where a page is not cached), madvise COLD and PAGEOUT. Evicting a page of a
    shared library and probing it later carried a counter across games."""
    info = report_of("ProbesPageCache", path=str(PACKAGE / "engine" / "game.py"))
    assert info == dict.fromkeys(["fadvise_dontneed", "fadvise_willneed", "mincore", "readahead", "preadv2_nowait",
                                  "cachestat", "madvise_cold", "madvise_pageout"], REFUSED)


def test_ordinary_fcntl_and_madvise_still_work():
    """What a bot needs of fcntl and madvise works in the sandbox: blocking and
    inheritable flags, duplicates, pipe sizes, memfd seals, memory handed back
    with MADV_DONTNEED and MADV_FREE, numpy's large arrays."""
    info = report_of("UsesOrdinaryCalls")
    numpy_total = info.pop("numpy")
    assert info == {"nonblocking": True, "inheritable": True, "dup": True, "dupfd": True, "preadv": True,
                    "pipe_size": True, "seals": True, "madvise_dontneed": True, "madvise_free": "done"}
    assert numpy_total in ("absent", 5 * 4 * 2**20)


# --- the mount table -----------------------------------------------------------------------


@pytest.mark.skipif(landlock.abi_version() < 1, reason="no Landlock on this kernel")
def test_a_bot_cannot_read_the_mount_table():
    """The mount table (/proc/self/mountinfo, mounts, mountstats, and each
    thread's copy) is not readable by a bot: it names the machine's folders the
    sandbox's are bound from, their devices and file systems. What a bot may
    read of its own /proc entry (its status) still is."""
    info = report_of("ReadsMountTable")
    assert info.pop("/proc/self/status") == "readable"
    assert info == dict.fromkeys(["/proc/self/mountinfo", "/proc/self/mounts", "/proc/self/mountstats",
                                  "/proc/thread-self/mountinfo", "/proc/mounts"], f"PermissionError {errno.EACCES}")
