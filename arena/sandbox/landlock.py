"""Landlock (Linux 5.13+): let a process confine itself, no privileges needed.

``prepare(writable, readable)`` builds a ruleset and ``enforce`` applies it to
the calling process for good: it may read only under ``writable`` and
``readable``, write only files that already exist under ``writable`` (and
``/dev/null``, where writing is discarding: shell scripts redirect to it), and
create, remove or rename nothing anywhere (so it cannot fill a disk); on kernels
with Landlock ABI 4+ it may open no TCP connection and bind no port; with ABI 6+
it may not signal processes outside its own sandbox. Where Landlock is missing
(another OS, an old kernel, a container that blocks the syscalls) ``prepare``
returns None: the other limits still hold.
"""

from __future__ import annotations

import ctypes
import os
from functools import lru_cache

_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# Filesystem rights, by the ABI version that introduced them.
_FS_V1 = {
    "EXECUTE": 1 << 0, "WRITE_FILE": 1 << 1, "READ_FILE": 1 << 2, "READ_DIR": 1 << 3,
    "REMOVE_DIR": 1 << 4, "REMOVE_FILE": 1 << 5, "MAKE_CHAR": 1 << 6, "MAKE_DIR": 1 << 7,
    "MAKE_REG": 1 << 8, "MAKE_SOCK": 1 << 9, "MAKE_FIFO": 1 << 10, "MAKE_BLOCK": 1 << 11,
    "MAKE_SYM": 1 << 12,
}
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

# Writable wherever a ruleset is: what is written there is thrown away, and
# runtimes' start-up scripts (the elixir and erl commands' `cd ... > /dev/null`)
# stop where they cannot open it.
_NULL_DEVICE = "/dev/null"

_READ = _FS_V1["EXECUTE"] | _FS_V1["READ_FILE"] | _FS_V1["READ_DIR"]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@lru_cache(maxsize=1)
def libc() -> ctypes.CDLL | None:
    """The C library, loaded once (confined children must not pay for it again)."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def prctl(option: int, value: int) -> bool:
    """Linux's prctl(option, value); False where it fails or does not exist."""
    c = libc()
    call = getattr(c, "prctl", None) if c is not None else None
    return call is not None and call(option, value, 0, 0, 0) == 0


def abi_version() -> int:
    """The kernel's Landlock ABI version, or 0 where there is none."""
    system = os.uname()
    numbers = _SYSCALLS.get(system.machine)
    if numbers is None or system.sysname != "Linux":
        return 0
    c = libc()
    if c is None:
        return 0
    version = c.syscall(numbers[0], None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def prepare(writable: list[str], readable: list[str], owned: tuple[str, ...] = ()) -> int | None:
    """The ruleset described above, as a file descriptor, built ahead of time (a
    child that calls ``enforce`` pays only for that). None where Landlock is missing.
    ``owned``: folders a build may do anything in (make, remove and rename files and
    folders below them, fifos and sockets too: no devices, no links out of them)."""
    abi = abi_version()
    if abi < 1:
        return None
    create, add_rule, _ = _SYSCALLS[os.uname().machine]
    c = libc()
    if c is None:  # abi_version found Landlock through libc: not reached
        return None
    all_fs = sum(_FS_V1.values())
    if abi >= 2:
        all_fs |= _FS_REFER
    if abi >= 3:
        all_fs |= _FS_TRUNCATE
    if abi >= 5:
        all_fs |= _FS_IOCTL_DEV
    attr = _RulesetAttr(all_fs, 0, 0)
    size = ctypes.sizeof(_RulesetAttr)
    if abi < 4:
        size = 8  # only handled_access_fs is known to older kernels
    elif abi < 6:
        size = 16
    if abi >= 4:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL
    ruleset = c.syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return None
    for path in [*writable, _NULL_DEVICE]:
        _allow(c, add_rule, ruleset, path, _READ | _FS_V1["WRITE_FILE"] | (_FS_TRUNCATE if abi >= 3 else 0))
    for path in readable:
        _allow(c, add_rule, ruleset, path, _READ)
    for path in owned:
        _allow(c, add_rule, ruleset, path, all_fs & ~(_FS_V1["MAKE_CHAR"] | _FS_V1["MAKE_BLOCK"]))
    return int(ruleset)


def allow_reading_entries(ruleset: int, folder: str, files: tuple[str, ...], folders: tuple[str, ...]) -> None:
    """Add read access to some entries of ``folder`` only: the ``files`` named,
    and the ``folders`` named with all below them; not to ``folder`` itself nor
    to its other entries (Landlock grants by hierarchy: there is no refusing
    one file under a folder allowed). Entries that do not exist are skipped.
    One descriptor on ``folder`` and one rule structure for them all: a bot
    process calls this for its /proc entry, before every game."""
    c = libc()
    if c is None:
        return
    add_rule = ctypes.c_long(_SYSCALLS[os.uname().machine][1])
    try:
        parent = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    rule = _PathBeneathAttr(0, -1)
    try:
        for names, access in ((files, _READ & ~_FS_V1["READ_DIR"]), (folders, _READ)):  # no READ_DIR on a file
            rule.allowed_access = access
            for name in names:
                try:
                    rule.parent_fd = os.open(name, os.O_PATH | os.O_CLOEXEC, dir_fd=parent)
                except OSError:
                    continue
                try:
                    c.syscall(add_rule, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule),
                              ctypes.c_uint32(0))
                finally:
                    os.close(rule.parent_fd)
    finally:
        os.close(parent)


def enforce(ruleset: int) -> bool:
    """Apply a prepared ruleset to this process, for good."""
    _, _, restrict = _SYSCALLS[os.uname().machine]
    c = libc()
    if c is None or not prctl(_PR_SET_NO_NEW_PRIVS, 1):
        return False
    return bool(c.syscall(restrict, ctypes.c_int(ruleset), ctypes.c_uint32(0)) == 0)


def _allow(libc: ctypes.CDLL, add_rule: int, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            # Directory-only rights are refused on files.
            access &= _READ | _FS_V1["WRITE_FILE"] | _FS_TRUNCATE | _FS_IOCTL_DEV
            access &= ~_FS_V1["READ_DIR"]
        rule = _PathBeneathAttr(access, fd)
        libc.syscall(
            add_rule, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)
        )
    finally:
        os.close(fd)
