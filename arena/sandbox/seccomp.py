"""Seccomp: system calls a bot process is refused, whatever its code does.

Landlock decides which files a bot process may open; it does not govern changing
a file's mode, owner, times or extended attributes, nor sockets other than TCP,
nor other processes' resource limits, nor the kernel's less travelled corners
(namespaces, io_uring, BPF, keyrings), nor the state the kernel shares between
every process that reads a file (its locks and leases, the page cache), through
which bots of different games talked to each other. This filter refuses those
system calls, some only with certain arguments. Refused calls fail with EPERM, so the bot sees an ordinary
PermissionError and the game goes on; only a call made under another
architecture's numbers (the 32-bit ABIs) kills the process.

``prepare()`` builds the filter once, in the spawner; ``install(filter)`` applies
it in a bot process, for good, with two prctl calls and nothing else. The
program is classic BPF packed with ``struct`` and loaded through ctypes, not
libseccomp: there is no system library to install, the filter is a binary search
of some 160 instructions, and it is built once in the spawner, where every
module loaded is copied into every bot process. ``DENIED`` names the refused calls,
grouped by what each group stops; docs/seccomp.md has the same table.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from typing import TYPE_CHECKING

from arena.sandbox import landlock

if TYPE_CHECKING:
    from collections.abc import Callable

# Each row: name -> (x86_64 number, aarch64 number), the kernel's own. None where
# aarch64 has no such call: it never had the legacy forms (chmod, chown, alarm,
# ...), its C library makes the *at calls, which are refused there instead.
_Numbers = dict[str, tuple[int, int | None]]

# Keyrings are kernel state shared by every process of a user, across games:
# a place to leave notes for a later bot, and a regular source of kernel bugs.
_KEYRINGS: _Numbers = {"add_key": (248, 217), "request_key": (249, 218), "keyctl": (250, 219)}

# Reading or steering another process: the opponent's memory, its resource limits
# (another bot of the same user could be given no CPU time), its pages. The calls
# that name a process by pid are refused only for another one: pid 0 is the caller
# itself (resource.setrlimit asks prlimit64 about pid 0).
_OTHER_PROCESSES: _Numbers = {
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "kcmp": (312, 272), "pidfd_open": (434, 434), "pidfd_getfd": (438, 438), "process_madvise": (440, 440),
    "prlimit64": (302, 261), "migrate_pages": (256, 238), "move_pages": (279, 239),
}

# New sockets of any family: UDP, TCP where Landlock cannot stop connections,
# Unix sockets to local services, netlink to the kernel. Sockets the process
# already has (its channel to the referee) keep working. Program bots are
# allowed one kind (see PROGRAM_ALLOWANCES): a connected pair of Unix stream
# sockets, which reaches nothing outside the pair.
_SOCKETS: _Numbers = {"socket": (41, 198), "socketpair": (53, 199)}

# Names for sockets: a bot has only its channel to the referee and the pairs a
# program's runtime makes, and needs to name none of them. Bots of every game share
# the spawner's network namespace, where an abstract Unix name bound by one is
# seen taken (EADDRINUSE) by another: a channel between games, a bit a name.
_SOCKET_NAMES: _Numbers = {"bind": (49, 200), "listen": (50, 201), "connect": (42, 203)}

# Watching files: would tell a bot when other processes read or change files it
# can name (the opponent's folder, the arena's database), a side channel on them.
_FILE_WATCHES: _Numbers = {
    "inotify_init": (253, None), "inotify_init1": (294, 26), "inotify_add_watch": (254, 27),
    "fanotify_init": (300, 262), "fanotify_mark": (301, 263),
}

# Extended attributes: data and security labels stored beside a file, which
# Landlock's rights do not govern. A bot process that stays root (capabilities
# dropped) still owns every file root owns, the Python installation included.
_XATTR_WRITES: _Numbers = {
    "setxattr": (188, 5), "lsetxattr": (189, 6), "fsetxattr": (190, 7),
    "removexattr": (197, 14), "lremovexattr": (198, 15), "fremovexattr": (199, 16),
    "setxattrat": (463, 463), "removexattrat": (466, 466),
}

# Modes, owners, times and inode flags, also outside Landlock's rights: the same
# owner could make the installation writable, or hide what it touched.
_FILE_METADATA: _Numbers = {
    "chmod": (90, None), "fchmod": (91, 52), "fchmodat": (268, 53), "fchmodat2": (452, 452),
    "chown": (92, None), "fchown": (93, 55), "lchown": (94, None), "fchownat": (260, 54),
    "utime": (132, None), "utimes": (235, None), "utimensat": (280, 88), "futimesat": (261, None),
    "file_setattr": (469, 469),
}

# Mounts and namespaces: a new user namespace hands a process every capability
# inside it, and with them the kernel code (filesystems, netfilter) behind many
# privilege escalations; mounts change what the paths Landlock allows mean.
# clone is refused only with a CLONE_NEW* flag; clone3 passes its flags in memory,
# which a filter cannot read, so it answers ENOSYS and the C library falls back to
# clone (threads and fork keep working).
_NAMESPACES: _Numbers = {
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "move_mount": (429, 429), "open_tree": (428, 428), "open_tree_attr": (467, 467), "fsopen": (430, 430),
    "fsmount": (432, 432), "fsconfig": (431, 431), "fspick": (433, 433), "mount_setattr": (442, 442),
    "unshare": (272, 97), "setns": (308, 268), "clone": (56, 220), "clone3": (435, 435),
}

# Kernel interfaces no bot needs, each a large attack surface: BPF programs and
# performance counters (also timing side channels), userfaultfd (stalls the kernel
# at a chosen page fault: the usual way to win a race in a kernel exploit),
# io_uring (its operations open files and sockets without the system calls this
# filter sees), and lookup_dcookie (an old profiler's, gone from Linux 6.10).
_KERNEL_SURFACE: _Numbers = {
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "lookup_dcookie": (212, 18),
}

# The machine itself: modules, a new kernel, rebooting, swap, accounting, quotas,
# the kernel log (kernel addresses, other processes' messages), the host's names.
# All but syslog need capabilities a bot process has dropped; refused here too.
_MACHINE: _Numbers = {
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "reboot": (169, 142),
    "swapon": (167, 224), "swapoff": (168, 225), "acct": (163, 89), "quotactl": (179, 60),
    "quotactl_fd": (443, 443), "syslog": (103, 116), "sethostname": (170, 161), "setdomainname": (171, 162),
}

# The clock the referee times every move with.
_CLOCK: _Numbers = {
    "settimeofday": (164, 170), "clock_settime": (227, 112), "clock_adjtime": (305, 266), "adjtimex": (159, 171),
}

# Files by handle: open_by_handle_at opens a file with no path lookup at all
# (the classic container escape); name_to_handle_at makes the handles.
_HANDLES: _Numbers = {"open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264)}

# Execution domains: flags that change how the kernel treats the process and what
# it runs (ADDR_NO_RANDOMIZE turns off address randomisation, READ_IMPLIES_EXEC
# makes every readable mapping executable). Only 0 (Linux) and the query pass.
_PERSONALITY: _Numbers = {"personality": (135, 92)}

# Timers that deliver a signal: a handler would run the bot's code on a schedule
# of its own, while its process should be waiting for the referee (during the
# opponent's turn, taking its CPU on a shared machine), and in the middle of the
# arena's own code in the bot process.
_TIMERS: _Numbers = {
    "setitimer": (38, 103), "alarm": (37, None), "timer_create": (222, 107), "timerfd_create": (283, 85),
}

# File locks, leases and directory notices: state the kernel keeps on a file for
# every process that opens it, including two bots of concurrent games that read
# the same arena .py file. A lock taken or not, tried by the other, carries a bit
# each time (flock carried 32 bits between two games); a lease on a file of the
# shared Python installation made every other process that opened it wait 27 s;
# F_NOTIFY on a folder told a bot when others touched it. fcntl is refused all
# commands but those that act on the descriptor alone (see _FCNTL_ALLOWED).
_FILE_LOCKS: _Numbers = {"flock": (73, 32), "fcntl": (72, 25)}

# The page cache: which pages of which files are in memory is shared by every
# process on the machine. Evicting a page of a shared library (fadvise64's
# DONTNEED, madvise's COLD or PAGEOUT) and asking whether it is back (mincore,
# cachestat, a read with RWF_NOWAIT, which fails rather than wait for the disk,
# or a read's timing) carried a counter across games; readahead and fadvise64's
# WILLNEED load pages on request. madvise keeps every other advice: DONTNEED
# and FREE release the process's own memory, which malloc, Python and numpy
# rely on; preadv2 keeps its other flags.
_PAGE_CACHE: _Numbers = {
    "mincore": (27, 232), "fadvise64": (221, 223), "readahead": (187, 213), "cachestat": (451, 451),
    "madvise": (28, 233), "preadv2": (327, 286),
}

# SIGKILL sent by the bot itself, to its own process or to any of its processes: a
# bot's process dead of SIGKILL that the arena did not kill, that was not over its
# memory or processor time, was killed from outside the arena (an operator, the
# machine's out-of-memory killer), and its game is void, charged to no bot. So no
# bot may kill its own process that way, by a signal to a process or a thread, by
# a queued signal or through a pidfd; nor have it sent when its parent dies
# (prctl's PR_SET_PDEATHSIG), when a child ends (clone's exit signal, refused
# there) or when a message queue gets a message (mq_notify, refused outright:
# its signal is in memory, which a filter cannot read). Every other signal, and
# every prctl option but PR_SET_PDEATHSIG with SIGKILL, goes through; a bot ends
# its children with SIGTERM.
_SIGKILL: _Numbers = {
    "kill": (62, 129), "tkill": (200, 130), "tgkill": (234, 131), "rt_sigqueueinfo": (129, 138),
    "rt_tgsigqueueinfo": (297, 240), "pidfd_send_signal": (424, 424), "prctl": (157, 167), "mq_notify": (244, 184),
}

_GROUPS: dict[str, _Numbers] = {
    "kernel keyrings": _KEYRINGS,
    "other processes": _OTHER_PROCESSES,
    "new sockets": _SOCKETS,
    "naming sockets": _SOCKET_NAMES,
    "watching files": _FILE_WATCHES,
    "extended attributes": _XATTR_WRITES,
    "file modes, owners and times": _FILE_METADATA,
    "mounts and namespaces": _NAMESPACES,
    "kernel attack surface": _KERNEL_SURFACE,
    "the machine": _MACHINE,
    "the clock": _CLOCK,
    "files by handle": _HANDLES,
    "execution domain": _PERSONALITY,
    "signal timers": _TIMERS,
    "file locks and leases": _FILE_LOCKS,
    "the page cache": _PAGE_CACHE,
    "killing itself": _SIGKILL,
}

DENIED: dict[str, tuple[str, ...]] = {reason: tuple(calls) for reason, calls in _GROUPS.items()}
"""The refused system calls, by what refusing them stops. Some only in part:
``ONLY_WHEN`` says when, and clone3 answers ENOSYS, so that the C library
falls back to clone."""

PROGRAM_ALLOWANCES: dict[str, str] = {
    "socketpair": "of AF_UNIX and SOCK_STREAM: the BEAM (Erlang, Elixir) talks to its erl_child_setup over one, "
                  "and stops at start-up without it",
    "timerfd_create": "a timer read from a descriptor, no signal: the BEAM's poll sets wait on one, and fail "
                      "(erts_poll_wait: ebadf, written to stdout) without it",
}
"""What the filter of program bots (``Filter.programs``) allows that the filter of
Python bots refuses, and why: runtimes that do not start without it, with no
flag to do without."""

ONLY_WHEN: dict[str, str] = {
    "prlimit64": "naming another process (pid 0 is the caller)",
    "migrate_pages": "naming another process (pid 0 is the caller)",
    "move_pages": "naming another process (pid 0 is the caller)",
    "clone": "with a CLONE_NEW* flag or SIGKILL as the child's exit signal",
    "personality": "with anything but 0 (Linux) or 0xffffffff (the query)",
    "fcntl": "with any command but F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD_CLOEXEC, "
             "F_SETPIPE_SZ, F_GETPIPE_SZ, F_ADD_SEALS and F_GET_SEALS",
    "madvise": "with MADV_COLD, MADV_PAGEOUT or MADV_COLLAPSE",
    "preadv2": "with RWF_NOWAIT",
    "kill": "with SIGKILL",
    "tkill": "with SIGKILL",
    "tgkill": "with SIGKILL",
    "rt_sigqueueinfo": "with SIGKILL",
    "rt_tgsigqueueinfo": "with SIGKILL",
    "pidfd_send_signal": "with SIGKILL",
    "prctl": "with PR_SET_PDEATHSIG and SIGKILL",
}

# Architecture: AUDIT_ARCH_* (what seccomp_data.arch holds), the column of the
# table above, and the seccomp system call (for asking the kernel what it supports).
_ARCHES = {"x86_64": (0xC000003E, 0, 317), "aarch64": (0xC00000B7, 1, 277)}
_X32_SYSCALL_BIT = 0x40000000  # x86_64's x32 ABI: the same calls under other numbers

# Classic BPF over struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6]}.
_LOAD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K (unsigned, as are all comparisons)
_JGT = 0x25  # BPF_JMP | BPF_JGT | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
# Offsets in seccomp_data of the call's number, its architecture and the low
# half of some of its arguments (args[i] at 16 + 8 * i); both architectures are
# little-endian.
_NR, _ARCH, _ARG0_LOW, _ARG1_LOW, _ARG2_LOW, _ARG2_HIGH, _ARG5_LOW = 0, 4, 16, 24, 32, 36, 56
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000
_EPERM, _ENOSYS = 1, 38
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (NEWTIME is
# clone3's and unshare's only: in clone's flags its bit is the exit signal's).
_CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_GET_ACTION_AVAIL = 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class Filter:
    """A filter for this machine's architecture, ready to install: the program,
    the structure that points at it and the prctl function, all kept alive here.
    ``programs``: the filter of program bots, where it differs (see
    ``PROGRAM_ALLOWANCES``); a bot process installs one or the other once it
    knows which its job is."""

    __slots__ = ("_address", "_code", "_fprog", "_prctl", "instructions", "machine", "programs")

    def __init__(self, machine: str, code: bytes, prctl: Callable[..., int]) -> None:
        self.machine = machine
        self.programs: Filter | None = None
        self.instructions = len(code) // 8
        self._code = ctypes.create_string_buffer(code, len(code))
        self._fprog = _SockFprog(self.instructions, ctypes.addressof(self._code))
        self._address = ctypes.addressof(self._fprog)
        self._prctl = prctl


def prepare() -> Filter | None:
    """The filter for this machine, built once (in the spawner: a bot process
    only installs it). None where it cannot work: not Linux, an architecture
    with no table here, a 32-bit Python, a kernel without seccomp filters."""
    if _unsupported() is not None:
        return None
    machine = os.uname().machine
    built = _build(machine, _program)
    if built is not None:
        built.programs = _build(machine, _programs_program)
    return built


def prepare_lock() -> Filter | None:
    """A second, small filter, built with the first: a bot process installs it
    once the arena has set its resource limits from its job, after the first
    filter and before any of the bot's code runs. It refuses setting RLIMIT_CPU
    and RLIMIT_RTTIME (reading them goes through): their hard limits end a process
    with the kernel's SIGKILL, and a bot that lowered its own would die of a
    SIGKILL under its processor time limit, which looks like a kill from outside
    the arena. (Calls of other architectures need no check here: the first
    filter kills the process for them, and the strictest answer of all a
    process's filters is the one that holds.)"""
    if _unsupported() is not None:
        return None
    return _build(os.uname().machine, _lock_program)


# What a build may do that a playing bot may not (docs/seccomp.md, "The build
# filter"): compilers and linkers set their output's mode (ld makes it
# executable), copy files' times (make, tar, go), and lock files of their own
# (go's build cache, javac's and mcs's runtimes); the JVM's file channels (javac
# reads and writes through them) open a socketpair, an unnamed pair of connected
# Unix sockets that reaches nothing but itself. The file calls act on files the
# build's Landlock rules let it write (its own folder) or on files it could only
# read; no build runs beside a game's bot on the same files. Owners, extended
# attributes, leases and F_NOTIFY stay refused.
BUILD_ALLOWED: tuple[str, ...] = (
    "chmod", "fchmod", "fchmodat", "fchmodat2", "utime", "utimes", "utimensat", "futimesat", "flock", "socketpair",
)
#: fcntl's record locks (F_GETLK, F_SETLK, F_SETLKW and their F_OFD_ forms), allowed to a build.
BUILD_FCNTL_LOCKS = ((5, 7), (36, 38))


def prepare_build() -> Filter | None:
    """The filter of a build (``arena.sandbox.build``): the play filter without
    the refusals in :data:`BUILD_ALLOWED`, and fcntl's record locks allowed.
    None where there is no filter here."""
    if _unsupported() is not None:
        return None
    return _build(os.uname().machine, _build_program)


def install(program: Filter) -> bool:
    """Apply ``program`` to the calling thread and everything it starts later, for
    good (call it before any thread starts). Sets no_new_privs first, as the
    kernel requires of a process without CAP_SYS_ADMIN (a no-op where Landlock
    set it already). False where the kernel refused."""
    prctl = program._prctl
    if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return bool(prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, program._address, 0, 0) == 0)


def supported() -> bool:
    """Whether bot processes here can have the filter."""
    return _unsupported() is None


def describe() -> str:
    """One line for a report on the sandbox."""
    reason = _unsupported()
    if reason is not None:
        return f"seccomp: not used ({reason})"
    machine = os.uname().machine
    column = _ARCHES[machine][1]
    refused = sum(numbers[column] is not None for calls in _GROUPS.values() for numbers in calls.values())
    return f"seccomp: {refused} system calls refused to bot processes ({machine})"


def _unsupported() -> str | None:
    """Why the filter cannot be used here, or None."""
    if sys.platform != "linux":
        return "not Linux"
    machine = os.uname().machine
    if machine not in _ARCHES:
        return f"no system call table for {machine}"
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return "a 32-bit Python: its calls are another architecture's"
    c = landlock.libc()
    if c is None:
        return "no C library"
    # Asks whether the kernel knows SECCOMP_RET_KILL_PROCESS (Linux 4.14): the
    # newest action this filter uses, and a question only a kernel with seccomp
    # filters answers.
    action = ctypes.c_uint32(_KILL_PROCESS)
    if c.syscall(_ARCHES[machine][2], _SECCOMP_GET_ACTION_AVAIL, 0, ctypes.byref(action)) != 0:
        return f"the kernel refuses seccomp filters: {os.strerror(ctypes.get_errno())}"
    return None


def _build(machine: str, program: Callable[[str], bytes] | None = None) -> Filter | None:
    """The filter ``program`` (the main one unless given) makes for ``machine``,
    or None where there is no table."""
    if machine not in _ARCHES:
        return None
    c = landlock.libc()
    if c is None:
        return None
    # A function object of its own (indexing makes a new one), typed so that the
    # filter's address goes through whole: landlock.prctl passes C ints.
    prctl = c["prctl"]
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return Filter(machine, (program or _program)(machine), prctl)


# An instruction before assembly: (code, k, if true, if false). A jump's target
# is the number of instructions to skip, or the name of a return at the end.
_Op = tuple[int, int, int | str, int | str]
_RETURNS = {"allow": _ALLOW, "refuse": _ERRNO | _EPERM, "kill": _KILL_PROCESS}


def _program(machine: str, rules: dict[str, Callable[[], list[_Op]]] | None = None, build: bool = False) -> bytes:
    audit_arch, column, _ = _ARCHES[machine]
    # Another architecture's numbers mean other calls (i386's 5 is open, not
    # x86_64's fstat): a process that makes them is killed.
    ops: list[_Op] = [(_LOAD, _ARCH, 0, 0), (_JEQ, audit_arch, 0, "kill"), (_LOAD, _NR, 0, 0)]
    if machine == "x86_64":
        ops.append((_JSET, _X32_SYSCALL_BIT, "kill", 0))
    return _assemble(ops + _search(_segments(column, rules or _RULES, build), lower_bound_known=False))


def _programs_program(machine: str) -> bytes:
    """The filter of program bots: the same, with ``PROGRAM_ALLOWANCES``."""
    return _program(machine, {**_RULES, **_PROGRAM_RULES})


def _build_program(machine: str) -> bytes:
    return _program(machine, build=True)


# The resource limits whose hard limit is a SIGKILL: RLIMIT_CPU and RLIMIT_RTTIME.
_LOCKED_LIMITS = (0, 15)
_LIMIT_CALLS = {"setrlimit": (160, 164), "prlimit64": (302, 261)}


def _lock_program(machine: str) -> bytes:
    """setrlimit with a locked resource (its first argument) is refused; so is
    prlimit64 with one (its second) and a new limit (a pointer, its third, not
    NULL: both halves 0)."""
    column = _ARCHES[machine][1]
    cpu, realtime = _LOCKED_LIMITS
    setrlimit, prlimit64 = (_LIMIT_CALLS[name][column] for name in ("setrlimit", "prlimit64"))
    ops: list[_Op] = [
        (_LOAD, _NR, 0, 0),
        (_JEQ, setrlimit, 0, 3),
        _ARGUMENT, (_JEQ, cpu, "refuse", 0), (_JEQ, realtime, "refuse", "allow"),
        (_JEQ, prlimit64, 0, "allow"),
        _SECOND_ARGUMENT, (_JEQ, cpu, 1, 0), (_JEQ, realtime, 0, "allow"),
        (_LOAD, _ARG2_LOW, 0, 0), (_JEQ, 0, 0, "refuse"),
        (_LOAD, _ARG2_HIGH, 0, 0), (_JEQ, 0, "allow", "refuse"),
    ]
    return _assemble(ops)


def _segments(
    column: int, rules: dict[str, Callable[[], list[_Op]]], build: bool = False
) -> list[tuple[int, int, list[_Op] | None]]:
    """The refused numbers in order, as (first, last, the instructions that decide,
    or None where all are refused): consecutive numbers refused outright are one.
    ``build``: a build's (:func:`prepare_build`)."""
    rows = []
    for calls in _GROUPS.values():
        for name, numbers in calls.items():
            number = numbers[column]
            if number is not None and not (build and name in BUILD_ALLOWED):
                rows.append((number, name))
    if build:
        rules = {**rules, "fcntl": _build_fcntl}
    segments: list[tuple[int, int, list[_Op] | None]] = []
    for number, name in sorted(rows):
        rule = rules.get(name)
        if rule is None and segments and segments[-1][2] is None and segments[-1][1] == number - 1:
            segments[-1] = (segments[-1][0], number, None)
        else:
            segments.append((number, number, rule() if rule is not None else None))
    return segments


def _search(segments: list[tuple[int, int, list[_Op] | None]], lower_bound_known: bool) -> list[_Op]:
    """A binary search for the call's number (in the accumulator) among
    ``segments``, allowing what falls between them. A search, not a list of
    comparisons: when the filter is installed the kernel runs it for every
    system call number, to find those it may let through without running it,
    and the time that takes (in every bot process) grows with both the steps
    to an answer and the instructions."""
    if len(segments) == 1:
        first, last, decide = segments[0]
        ops: list[_Op] = [] if lower_bound_known else [(_JGE, first, 0, "allow")]
        if decide is None:
            return [*ops, (_JGT, last, "allow", "refuse")]
        return [*ops, (_JGT, last, "allow", 0), *decide]
    middle = len(segments) // 2
    below = _search(segments[:middle], lower_bound_known)
    return [(_JGE, segments[middle][0], len(below), 0), *below, *_search(segments[middle:], True)]


def _assemble(ops: list[_Op]) -> bytes:
    """The program: ``ops`` and the shared returns after them. A jump goes at
    most 255 instructions forward: struct.pack refuses more."""
    ends = list(_RETURNS)
    code = []
    for at, (op, k, if_true, if_false) in enumerate(ops):
        jumps = [to if isinstance(to, int) else len(ops) + ends.index(to) - at - 1 for to in (if_true, if_false)]
        code.append(struct.pack("=HBBI", op, *jumps, k))
    code += [struct.pack("=HBBI", _RET, 0, 0, action) for action in _RETURNS.values()]
    return b"".join(code)


# How the calls refused only in part decide, one argument loaded: its low half,
# all the kernel reads of a pid, a personality, clone's flags or prctl's option
# (the first argument), fcntl's command or the signal of kill, tkill,
# rt_sigqueueinfo and pidfd_send_signal (the second), madvise's advice or the
# signal of tgkill and rt_tgsigqueueinfo (the third) or preadv2's flags (the
# sixth: the offset takes two): each an int in the kernel's own prototype.
_ARGUMENT: _Op = (_LOAD, _ARG0_LOW, 0, 0)
_SECOND_ARGUMENT: _Op = (_LOAD, _ARG1_LOW, 0, 0)
_THIRD_ARGUMENT: _Op = (_LOAD, _ARG2_LOW, 0, 0)
_FCNTL_COMMAND = _SECOND_ARGUMENT
_MADVISE_ADVICE = _THIRD_ARGUMENT
_PREADV2_FLAGS: _Op = (_LOAD, _ARG5_LOW, 0, 0)

# fcntl commands that act on the descriptor or on a pipe or memfd of the
# process's own, and that Python and the C library use: F_DUPFD, F_GETFD,
# F_SETFD, F_GETFL, F_SETFL (0 to 4: os.dup, os.set_inheritable,
# os.set_blocking) and F_DUPFD_CLOEXEC, F_SETPIPE_SZ, F_GETPIPE_SZ, F_ADD_SEALS,
# F_GET_SEALS (1030 to 1034: os.dup, subprocess's pipesize, sealing a memfd).
# Everything else is refused, known or not: record locks and their queries
# (F_GETLK, F_SETLK, F_SETLKW, F_OFD_*), leases (F_SETLEASE, F_GETLEASE),
# F_NOTIFY, signal delivery (F_SETOWN, F_SETSIG and their queries), and write
# hints (F_SET_RW_HINT), which an owner may set on a shared file's inode for
# others to read back. A list of what is allowed, so that commands added to
# later kernels are refused until someone looks at them.
_FCNTL_ALLOWED = ((0, 4), (1030, 1034))
# madvise advice that acts on pages shared with other processes: MADV_COLD (20)
# and MADV_PAGEOUT (21) deactivate or evict a file's pages from the page cache;
# MADV_COLLAPSE (25) replaces them with a huge page. All other advice acts on
# the process's own mappings only.
_MADVISE_REFUSED = (20, 21, 25)
# preadv2's RWF_NOWAIT: fail at once where the data is not in the page cache,
# which tells, with no timing, whether a page was read since it was evicted.
_RWF_NOWAIT = 0x00000008
_SIGKILL_NUMBER = 9
_PR_SET_PDEATHSIG = 1
_CSIGNAL = 0xFF  # the low byte of clone's flags: the signal the parent gets when the child ends


def _refuse_sigkill(signal_argument: _Op) -> list[_Op]:
    return [signal_argument, (_JEQ, _SIGKILL_NUMBER, "refuse", "allow")]

_RULES: dict[str, Callable[[], list[_Op]]] = {
    # pid 0 is the caller.
    "prlimit64": lambda: [_ARGUMENT, (_JEQ, 0, "allow", "refuse")],
    "migrate_pages": lambda: [_ARGUMENT, (_JEQ, 0, "allow", "refuse")],
    "move_pages": lambda: [_ARGUMENT, (_JEQ, 0, "allow", "refuse")],
    "clone": lambda: [
        _ARGUMENT, (_JSET, _CLONE_NEW, "refuse", 0), (_AND, _CSIGNAL, 0, 0), (_JEQ, _SIGKILL_NUMBER, "refuse", "allow"),
    ],
    # 0 is Linux; 0xffffffff asks, changing nothing.
    "personality": lambda: [_ARGUMENT, (_JEQ, 0, "allow", 0), (_JEQ, 0xFFFFFFFF, "allow", "refuse")],
    "clone3": lambda: [(_RET, _ERRNO | _ENOSYS, 0, 0)],
    "fcntl": lambda: [
        _FCNTL_COMMAND,
        (_JGT, _FCNTL_ALLOWED[0][1], 0, "allow"),
        (_JGE, _FCNTL_ALLOWED[1][0], 0, "refuse"),
        (_JGT, _FCNTL_ALLOWED[1][1], "refuse", "allow"),
    ],
    "madvise": lambda: [
        _MADVISE_ADVICE,
        *[(_JEQ, advice, "refuse", 0) for advice in _MADVISE_REFUSED[:-1]],
        (_JEQ, _MADVISE_REFUSED[-1], "refuse", "allow"),
    ],
    "preadv2": lambda: [_PREADV2_FLAGS, (_JSET, _RWF_NOWAIT, "refuse", "allow")],
    "kill": lambda: _refuse_sigkill(_SECOND_ARGUMENT),
    "tkill": lambda: _refuse_sigkill(_SECOND_ARGUMENT),
    "rt_sigqueueinfo": lambda: _refuse_sigkill(_SECOND_ARGUMENT),
    "pidfd_send_signal": lambda: _refuse_sigkill(_SECOND_ARGUMENT),
    "tgkill": lambda: _refuse_sigkill(_THIRD_ARGUMENT),
    "rt_tgsigqueueinfo": lambda: _refuse_sigkill(_THIRD_ARGUMENT),
    "prctl": lambda: [_ARGUMENT, (_JEQ, _PR_SET_PDEATHSIG, 0, "allow"), *_refuse_sigkill(_SECOND_ARGUMENT)],
}

# socketpair's domain (the first argument) and type (the second, less the flags
# SOCK_NONBLOCK and SOCK_CLOEXEC): a pair of Unix stream sockets is connected to
# nothing but itself, and a stream socket cannot listen once connected, nor be
# sent to by address, so it opens no way to another process.
_AF_UNIX, _SOCK_STREAM, _SOCK_FLAGS = 1, 1, 0o4000 | 0o2000000
_PROGRAM_RULES: dict[str, Callable[[], list[_Op]]] = {
    "socketpair": lambda: [
        _ARGUMENT, (_JEQ, _AF_UNIX, 0, "refuse"),
        _SECOND_ARGUMENT, (_AND, 0xFFFFFFFF & ~_SOCK_FLAGS, 0, 0), (_JEQ, _SOCK_STREAM, "allow", "refuse"),
    ],
    # It only makes a descriptor readable when due: no handler runs, so nothing of
    # the bot runs on a schedule of its own (and a frozen bot reads nothing).
    "timerfd_create": lambda: [(_RET, _ALLOW, 0, 0)],
}

def _build_fcntl() -> list[_Op]:
    """fcntl in a build: the commands a bot may use, and the record locks."""
    # The record locks follow the descriptor's own commands: 0 to 7 is one range.
    locks_end = BUILD_FCNTL_LOCKS[0][1]
    ofd, ofd_end = BUILD_FCNTL_LOCKS[1]
    return [
        _FCNTL_COMMAND,
        (_JGT, locks_end, 0, "allow"),  # 0 to 7: the descriptor's own commands, then F_GETLK to F_SETLKW
        (_JGE, ofd, 0, "refuse"),
        (_JGT, ofd_end, 0, "allow"),  # 36 to 38: the F_OFD_ locks
        (_JGE, _FCNTL_ALLOWED[1][0], 0, "refuse"),
        (_JGT, _FCNTL_ALLOWED[1][1], "refuse", "allow"),
    ]
