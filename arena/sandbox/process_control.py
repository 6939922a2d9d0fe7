"""What bot processes get and how they end: the paths they may read, the user
they run as, and the process-control calls the spawner, the bot processes and
the referee share. (Kept light: the spawner imports it, see :mod:`arena.sandbox.wire`.)"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from functools import lru_cache

from arena.sandbox import landlock


@lru_cache(maxsize=4)
def readable_paths(plugins: tuple[str, ...] = ()) -> list[str]:
    """What a bot may read: the Python installation, the arena's package, the
    installed bot plug-ins (``plugins``, from :func:`plugin_paths`), system
    libraries and the devices Python needs. Not the working tree or the database."""
    import arena

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths |= {os.path.dirname(arena.__file__), *plugins}
    for entry in sys.path:
        if (entry and "site-packages" in entry) or "dist-packages" in entry:
            paths.add(entry)
    # /proc/self is not here: named in another process it means that one. A bot
    # process adds some of its own (landlock.allow_reading_entries) before it enforces its ruleset.
    # Of /etc only what loading libraries and telling the time need: a bot that
    # stays root could otherwise read root's files there (/etc/shadow, host keys).
    paths |= {"/usr", "/lib", "/lib64", "/etc/ld.so.cache", "/etc/localtime", "/dev/null", "/dev/urandom",
              "/sys/devices/system/cpu"}
    paths |= set(runtime_paths())
    return sorted(p for p in paths if p and os.path.exists(p))


def runtime_paths() -> list[str]:
    """What program bots' language runtimes read outside ``/usr`` (docs/sandbox.md,
    "Program bots"): ``/bin`` (scripts' ``#!/bin/sh``: ``elixir``, ``erl``), the
    links Debian's alternatives put commands behind (``java``), and the runtimes'
    own configuration (the JVM's security and logging files, Mono's assembly map).
    Configuration, not secrets: nothing of a user's, no keys."""
    import glob

    return ["/bin", "/etc/alternatives", "/etc/mono", *sorted(glob.glob("/etc/java-*"))]


def plugin_paths() -> tuple[str, ...]:
    """Where the modules of the installed bot plug-ins (entry-point group
    ``arena.bots``) live: the folder of each top-level package, or the file of a
    single-module plug-in. Found from the entry points without importing them.
    Run by whoever starts the spawner, not the spawner itself: the metadata
    machinery would cost every bot process its pages."""
    from importlib import metadata, util

    paths: set[str] = set()
    for ep in metadata.entry_points(group="arena.bots"):  # arena.players.plugins.ENTRY_POINT_GROUP (a room above)
        top = ep.module.partition(".")[0]
        try:
            spec = util.find_spec(top)  # a top-level name: finds it, imports nothing
        except (ImportError, ValueError):
            continue  # a broken plug-in: the arena reports it, a bot process cannot use it
        if spec is None:
            continue
        if spec.submodule_search_locations:
            paths.update(spec.submodule_search_locations)
        elif spec.origin and os.path.isfile(spec.origin):
            paths.add(spec.origin)
    return tuple(sorted(paths))


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
    if not _world_readable(sys.base_prefix) or not _world_readable(sys.prefix):
        return None
    return nobody.pw_uid, nobody.pw_gid


def _world_readable(path: str) -> bool:
    """Every folder from / down to ``path`` can be entered by others, and ``path`` read."""
    folder = os.path.realpath(path)
    try:
        readable = bool(os.stat(folder).st_mode & 0o004)
        while True:
            if not os.stat(folder).st_mode & 0o001:
                return False
            if folder == os.path.dirname(folder):
                return readable
            folder = os.path.dirname(folder)
    except OSError:
        return False


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Be sent ``sig`` when the parent process dies (Linux)."""
    pr_set_pdeathsig = 1
    landlock.prctl(pr_set_pdeathsig, sig)


# Made here, in the spawner: making a ctypes type in a bot process costs pages.
_CAP_HEADER = ctypes.c_uint32 * 2  # version, pid
_CAP_DATA = ctypes.c_uint32 * 6  # effective, permitted, inheritable; twice (64 capabilities)


def drop_capabilities() -> bool:
    """Give up every capability, for good: a bot process that stays uid 0 (root
    with Python under /root, where it cannot become ``nobody``) keeps none of
    root's powers (loading kernel modules, raising priority, overriding file
    permissions...). With no_new_privs set, running a program cannot bring them
    back either. True if done."""
    c = landlock.libc()
    pr_set_no_new_privs, version_3 = 38, 0x20080522
    if c is None or os.uname().sysname != "Linux" or not landlock.prctl(pr_set_no_new_privs, 1):
        return False
    return bool(c.capset(_CAP_HEADER(version_3, 0), _CAP_DATA()) == 0)


_subreaper_pid = 0  # the attribute is per process and not inherited across fork


def become_subreaper() -> None:
    """Orphans of this process's descendants get this process as parent, so they
    can be found and killed."""
    global _subreaper_pid
    if _subreaper_pid == os.getpid():
        return
    pr_set_child_subreaper = 36
    landlock.prctl(pr_set_child_subreaper, 1)
    _subreaper_pid = os.getpid()


def kill_group(pid: int, leader_gone: bool = False) -> None:
    """Kill a bot process and its process group. The process first, in case it
    has not made its group yet (then it has started nothing either); only the
    group once the process is known to be gone (its number may be reused, but
    not while the group lives on)."""
    for kill in (os.killpg,) if leader_gone else (os.kill, os.killpg):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
