"""The referee side's handling of bot processes: their working directories, the
users and paths they get, and making sure nothing they start outlives them.

Everything here is per process (a worker): the directories and Landlock rulesets
are made once and reused, killed processes are collected later, off the game's
path, and orphans are swept up because the worker is their subreaper.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path

from arena import landlock


@lru_cache(maxsize=1)
def readable_paths() -> list[str]:
    """What a bot may read: the Python installation, the arena's packages, system
    libraries and the devices Python needs. Not the working tree or the database."""
    import arena
    import bots

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths |= {str(Path(arena.__file__).parent), str(Path(bots.__file__).parent)}
    for entry in sys.path:
        if entry and "site-packages" in entry or "dist-packages" in entry:
            paths.add(entry)
    paths |= {"/usr", "/lib", "/lib64", "/etc", "/dev/null", "/dev/urandom", "/proc/self", "/sys/devices/system/cpu"}
    return sorted(p for p in paths if p and os.path.exists(p))


# --- working directories ---------------------------------------------------------------
#
# Each side of a game (player 0 and 1) has a working directory of its own, kept by
# this process and emptied between bots, with a Landlock ruleset prepared for it
# once: building a ruleset per bot costs a millisecond. Two sides never share one,
# so a bot cannot see files its opponent writes.

_slots: dict[tuple[int, int], tuple[str, int | None]] = {}
_busy: set[str] = set()


def claim_workdir(slot: int, user: tuple[int, int] | None) -> tuple[str, int | None]:
    """(empty working directory, prepared ruleset or None) for a new bot process."""
    key = (os.getpid(), slot)
    if key not in _slots:
        if not any(pid == os.getpid() for pid, _ in _slots):
            _clean_up_at_exit()
        folder = tempfile.mkdtemp(prefix=f"arena-bot-{slot}-")
        if user is not None:
            os.chown(folder, *user)
        _slots[key] = (folder, landlock.prepare([folder], readable_paths()))
    folder, ruleset = _slots[key]
    if folder in _busy:  # the same side twice at once (not in a normal game): a fresh one
        fresh = tempfile.mkdtemp(prefix="arena-bot-")
        if user is not None:
            os.chown(fresh, *user)
        _busy.add(fresh)
        return fresh, None
    _empty(folder)
    _busy.add(folder)
    return folder, ruleset


def release_workdir(folder: str) -> None:
    _busy.discard(folder)
    if folder not in {f for f, _ in _slots.values()}:
        shutil.rmtree(folder, ignore_errors=True)


def _empty(folder: str) -> None:
    """Remove what a previous bot left, keeping the directory (the ruleset names it)."""
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def _clean_up_at_exit() -> None:
    """Remove this process's working directories when it exits, worker processes
    included (they leave through multiprocess's own exit path, not atexit)."""
    atexit.register(_remove_workdirs)
    try:
        from multiprocess import util

        util.Finalize(None, _remove_workdirs, exitpriority=0)
    except Exception:
        pass


def _remove_workdirs() -> None:
    kill_orphans(force=True)  # the last sweep: nothing a bot started outlives the worker
    for (pid, _), (folder, _) in list(_slots.items()):
        if pid == os.getpid():
            shutil.rmtree(folder, ignore_errors=True)


# --- process helpers (referee side) -----------------------------------------------------


@lru_cache(maxsize=1)
def unprivileged_user() -> tuple[int, int] | None:
    """(uid, gid) of ``nobody`` when running as root and Python is readable by it."""
    if os.geteuid() != 0:
        return None
    try:
        import pwd

        nobody = pwd.getpwnam("nobody")
    except (KeyError, ImportError):
        return None
    if not _world_readable(Path(sys.base_prefix)) or not _world_readable(Path(sys.prefix)):
        return None
    return nobody.pw_uid, nobody.pw_gid


def _world_readable(path: Path) -> bool:
    """Every folder from / down to ``path`` can be entered by others, and ``path`` read."""
    try:
        for folder in [*reversed(path.resolve().parents), path.resolve()]:
            mode = folder.stat().st_mode
            if not mode & 0o001:
                return False
        return bool(path.resolve().stat().st_mode & 0o004)
    except OSError:
        return False


def die_with_parent() -> None:
    c = landlock.libc()
    if c is not None:
        pr_set_pdeathsig = 1
        c.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)


ORPHAN_SCAN_SECONDS = 0.25
_last_orphan_scan = 0.0
live_bots: set[int] = set()  # bot processes of this process still in a game: not orphans
_subreaper_pid = 0  # the attribute is per process and not inherited across fork


def become_subreaper() -> None:
    """Orphans of bot processes get this process as parent, so they can be killed."""
    global _subreaper_pid
    if _subreaper_pid == os.getpid():
        return
    c = landlock.libc()
    if c is not None:
        pr_set_child_subreaper = 36
        c.prctl(pr_set_child_subreaper, 1, 0, 0, 0)
    _subreaper_pid = os.getpid()


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


dying: set[int] = set()  # killed bot processes not yet collected


def reap_dying() -> None:
    for pid in list(dying):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            dying.discard(pid)


def wait(pid: int, seconds: float) -> int | None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        if done:
            return status
        if time.monotonic() > deadline:
            return None
        time.sleep(0.0002)


def kill_orphans(force: bool = False) -> None:
    """Kill and reap children of this process that were adopted (forked by bots
    that then died, or that left the bot's process group)."""
    global _last_orphan_scan
    try:  # the usual case costs one system call: no children at all
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return
    # Children exist (often just the other side's bot): scanning /proc costs
    # milliseconds, so do it at most a few times a second; an orphan lives that long.
    now = time.monotonic()
    if now - _last_orphan_scan < ORPHAN_SCAN_SECONDS and not force:
        return
    _last_orphan_scan = now
    me = os.getpid()
    pool_children = _pool_children()
    for entry in Path("/proc").iterdir() if Path("/proc").exists() else []:
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid in pool_children or pid in live_bots:
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
            wait(pid, 1.0)


def _pool_children() -> set[int]:
    """Children this process started on purpose (a coordinator's worker pool)."""
    try:
        import multiprocess

        return {p.pid for p in multiprocess.active_children() if p.pid}
    except Exception:
        return set()
