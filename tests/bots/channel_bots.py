"""Bots that try to talk to bots of other games, or to slow other processes down,
through state the kernel shares between processes: locks and leases on files
every bot can read, the page cache, the mount table. Each plays the first legal
move and reports, in its move's info, what each attempt gave: "done" (or the
call's result) where the kernel let it through, else the error's name and errno.

tests/test_bot_channels.py plays them in the real sandbox. The files they act on
are passed as the option ``path``: files of the arena's own package in the
checkout under test, which no process outside these tests opens, so that where
the sandbox failed, the lock, lease or eviction would reach only the tests.
"""

import ctypes
import fcntl
import functools
import mmap
import os
import struct

from arena.bot import Bot, Choice, Option

# The kernel's numbers (x86_64, aarch64) for calls Python has no function for.
SYSCALLS = {
    "mincore": {"x86_64": 27, "aarch64": 232},
    "readahead": {"x86_64": 187, "aarch64": 213},
    "cachestat": {"x86_64": 451, "aarch64": 451},
}
F_OFD_GETLK, F_OFD_SETLK = 36, 37
F_SETLEASE, F_NOTIFY, F_SET_RW_HINT = 1024, 1026, 1036
F_GETPIPE_SZ, F_SETPIPE_SZ, F_ADD_SEALS, F_GET_SEALS = 1032, 1031, 1033, 1034
F_SEAL_GROW = 0x0004
DN_ACCESS, DN_MODIFY, DN_MULTISHOT = 0x1, 0x2, 0x80000000
MADV_DONTNEED, MADV_FREE, MADV_COLD, MADV_PAGEOUT = 4, 8, 20, 21
POSIX_FADV_DONTNEED = 4
PAGE = mmap.PAGESIZE

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
LIBC.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def outcome(attempt):
    """What ``attempt()`` gave: its result ("done" for None), or the error's name and errno."""
    try:
        result = attempt()
    except OSError as exc:
        return f"{type(exc).__name__} {exc.errno}"
    return "done" if result is None else result


def raw(name, *args):
    """A system call by number; raises OSError as Python's own functions do."""
    number = SYSCALLS[name][os.uname().machine]
    result = LIBC.syscall(ctypes.c_long(number), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if result == -1:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return None


def first_legal(board):
    return board.legal_moves()[0]


class LocksFile(Bot):
    """Locks a file it may only read, every way the kernel has, keeps the locks,
    and reports: another bot that finds them held (LooksForLocks) has had a bit."""

    path = Option("", "a file every bot can read")

    def choose_move(self, board):
        self.kept = []  # held for as long as this process lives
        report = {}
        for way in ("flock", "posix", "ofd"):
            fd = os.open(self.path, os.O_RDONLY)
            self.kept.append(fd)
            if way == "flock":
                report[way] = outcome(functools.partial(fcntl.flock, fd, fcntl.LOCK_SH | fcntl.LOCK_NB))
            else:  # a read lock on a read-only descriptor: all it needs
                command = fcntl.F_SETLK if way == "posix" else F_OFD_SETLK
                report[way] = outcome(functools.partial(_read_lock, fd, command))
        return Choice(first_legal(board), report)


class LooksForLocks(Bot):
    """The receiving end: asks, without taking anything, whether another process
    holds a lock on the file (a write lock would conflict with any)."""

    path = Option("", "a file every bot can read")

    def choose_move(self, board):
        fd = os.open(self.path, os.O_RDONLY)
        report = {"flock_exclusive": outcome(lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB))}
        for way, command in (("posix_query", fcntl.F_GETLK), ("ofd_query", F_OFD_GETLK)):
            question = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)

            def ask(command=command, question=question):
                answer = fcntl.fcntl(fd, command, question)
                return "held" if struct.unpack("hhqqi", answer)[0] != fcntl.F_UNLCK else "free"

            report[way] = outcome(ask)
        os.close(fd)
        return Choice(first_legal(board), report)


class TakesLease(Bot):
    """Takes a write lease on a file it may only read and keeps it: every other
    process that opens the file then waits for it (up to the kernel's
    lease-break-time, 45 s by default). Also sets a write hint on it, which
    stays on the file for others to read."""

    path = Option("", "a file every bot can read")

    def choose_move(self, board):
        self.fd = os.open(self.path, os.O_RDONLY)  # held for as long as this process lives
        hint = ctypes.c_uint64(2)  # RWH_WRITE_LIFE_SHORT
        return Choice(first_legal(board), {
            "lease": outcome(lambda: fcntl.fcntl(self.fd, F_SETLEASE, fcntl.F_WRLCK) and None),
            "write_hint": outcome(lambda: LIBC.fcntl(self.fd, F_SET_RW_HINT, ctypes.byref(hint)) == 0
                                  or ctypes.get_errno()),
        })


class WatchesFolder(Bot):
    """Asks the kernel (F_NOTIFY) to signal it whenever anything in a folder it
    may read is read or changed: a side channel on the other bots and the arena."""

    path = Option("", "a folder every bot can read")

    def choose_move(self, board):
        self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        notice = DN_ACCESS | DN_MODIFY | DN_MULTISHOT
        return Choice(first_legal(board), {"notify": outcome(lambda: fcntl.fcntl(self.fd, F_NOTIFY, notice) and None)})


class ProbesPageCache(Bot):
    """Every way it knows to evict a shared file's pages from the page cache, to
    load them, or to ask whether they are there: a counter carried across games."""

    path = Option("", "a file every bot can read, a page long at least")

    def choose_move(self, board):
        fd = os.open(self.path, os.O_RDONLY)
        size = os.fstat(fd).st_size
        # Private and writable, so that ctypes gives its address; pages never
        # written to are the page cache's own.
        mapping = mmap.mmap(fd, size, access=mmap.ACCESS_COPY)
        address = _address_of(mapping)
        pages = (size + PAGE - 1) // PAGE
        present = ctypes.create_string_buffer(pages)
        range_ = (ctypes.c_uint64 * 2)(0, size)
        stats = (ctypes.c_uint64 * 8)()

        report = {
            "fadvise_dontneed": outcome(lambda: os.posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)),
            "fadvise_willneed": outcome(lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)),
            "mincore": outcome(lambda: raw("mincore", address, size, present)),
            "readahead": outcome(lambda: raw("readahead", fd, 0, size)),
            "preadv2_nowait": outcome(lambda: os.preadv(fd, [bytearray(16)], 0, os.RWF_NOWAIT)),
            "cachestat": outcome(lambda: raw("cachestat", fd, range_, stats, 0)),
            "madvise_cold": outcome(lambda: _advise(address, size, MADV_COLD)),
            "madvise_pageout": outcome(lambda: _advise(address, size, MADV_PAGEOUT)),
        }
        mapping.close()
        os.close(fd)
        return Choice(first_legal(board), report)


class UsesOrdinaryCalls(Bot):
    """What a bot may need of fcntl and madvise, done for real: its own
    descriptors' flags, duplicates, pipe sizes, a sealed memfd, memory handed back."""

    def choose_move(self, board):
        report = {}
        reader, writer = os.pipe()
        os.set_blocking(reader, False)  # F_GETFL, F_SETFL
        report["nonblocking"] = not os.get_blocking(reader)
        os.set_inheritable(writer, True)  # F_GETFD, F_SETFD
        report["inheritable"] = os.get_inheritable(writer)
        copy = os.dup(writer)  # F_DUPFD_CLOEXEC
        report["dup"] = os.write(copy, b"x") == 1 and os.read(reader, 1) == b"x"
        report["dupfd"] = fcntl.fcntl(writer, fcntl.F_DUPFD, 100) >= 100
        report["pipe_size"] = fcntl.fcntl(writer, F_SETPIPE_SZ, 2 * PAGE) == fcntl.fcntl(writer, F_GETPIPE_SZ)
        memory = os.memfd_create("sealed", os.MFD_ALLOW_SEALING)
        os.write(memory, b"arena")
        report["preadv"] = os.preadv(memory, [bytearray(2), bytearray(3)], 0) == 5  # no flags: allowed
        fcntl.fcntl(memory, F_ADD_SEALS, F_SEAL_GROW)
        report["seals"] = fcntl.fcntl(memory, F_GET_SEALS) & F_SEAL_GROW == F_SEAL_GROW
        # Private, as malloc's memory is: what MADV_DONTNEED drops reads back as zeros.
        anonymous = mmap.mmap(-1, 16 * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        anonymous[:5] = b"arena"
        address = _address_of(anonymous)
        report["madvise_dontneed"] = outcome(lambda: _advise(address, 16 * PAGE, MADV_DONTNEED)) == "done" and (
            anonymous[:5] == b"\0" * 5)
        report["madvise_free"] = outcome(lambda: _advise(address, 16 * PAGE, MADV_FREE))
        anonymous.close()
        try:  # numpy hands large arrays back with madvise and munmap
            import numpy
        except ImportError:
            report["numpy"] = "absent"
        else:
            total = 0
            for _ in range(5):
                total += int(numpy.ones(4 * 2**20, dtype=numpy.uint8).sum())
            report["numpy"] = total
        return Choice(first_legal(board), report)


class ReadsMountTable(Bot):
    """Reads the mount table the kernel shows it: where the machine's folders are
    bound from, the devices and file systems behind them."""

    def choose_move(self, board):
        report = {}
        for name in ("/proc/self/mountinfo", "/proc/self/mounts", "/proc/self/mountstats",
                     "/proc/thread-self/mountinfo", "/proc/mounts"):
            def read(name=name):
                with open(name) as lines:
                    return lines.read()

            report[name] = outcome(read)

        def status():
            with open("/proc/self/status") as lines:
                return "readable" if lines.read() else "empty"

        report["/proc/self/status"] = outcome(status)
        return Choice(first_legal(board), report)


def _advise(address, length, advice):
    if LIBC.madvise(address, length, advice) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


def _read_lock(fd, command):
    """A read lock on all of the file (struct flock: type, whence, start, length, pid)."""
    fcntl.fcntl(fd, command, struct.pack("hhqqi", fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0))


def _address_of(mapping):
    """The address of a writable mmap object's memory."""
    buffer = ctypes.c_char.from_buffer(mapping)
    address = ctypes.addressof(buffer)
    del buffer  # or the mapping could not be closed
    return address
