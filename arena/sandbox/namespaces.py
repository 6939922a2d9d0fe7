"""Linux namespaces for bot processes: what a bot can see and reach.

The spawner (:mod:`arena.sandbox.spawner_process`) calls :func:`enter_spawner_namespaces`
once when it starts: it moves into a network namespace of its own, with no
interface but a loopback that is down, so no bot process it forks can reach any
network, listen where anyone outside could connect, or find an abstract Unix
socket outside it. Where the arena does not run as root it first makes a user
namespace (mapping only its own user), which lets an unprivileged user make the
others, on kernels that allow it.

Each bot process then gets a PID namespace and an IPC namespace of its own
(:meth:`Namespaces.fork`): it is process 1 of its namespace, sees and signals
only its own descendants, and when it is killed the kernel kills every one of
them, whatever they did with ``setsid`` or death signals. Its System V objects
and POSIX message queues are private and vanish with it.

A game still costs one ``fork`` from the warm spawner: the spawner makes a
new PID namespace for its next child (``unshare``), forks, and goes back to its
own (``setns``); the child makes its IPC namespace itself, before it gives up
its privileges. Going back needs privileges over the spawner's own PID
namespace, which a spawner that is not root lacks (its namespace belongs to the
machine's user namespace, not to the one it made): there the child makes the
PID namespace and forks the bot process into it, and stays as its parent, a
process that only waits (one more fork a game).
"""

from __future__ import annotations

import ctypes
import os

from arena.sandbox import landlock

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000


class NamespaceError(OSError):
    """A namespace could not be made or entered."""


def unshare(flags: int) -> None:
    c = landlock.libc()
    if c is None or c.unshare(ctypes.c_int(flags)) != 0:
        errno = ctypes.get_errno() if c is not None else 38
        raise NamespaceError(errno, f"unshare: {os.strerror(errno)}")


def setns(fd: int, kind: int) -> None:
    c = landlock.libc()
    if c is None or c.setns(ctypes.c_int(fd), ctypes.c_int(kind)) != 0:
        errno = ctypes.get_errno() if c is not None else 38
        raise NamespaceError(errno, f"setns: {os.strerror(errno)}")


def enter_spawner_namespaces() -> str | None:
    """Move this process (the spawner) into a network namespace of its own, in a
    user namespace of its own first where it is not root. None when done, else
    why not (the kernel's refusal, for the report)."""
    try:
        if os.geteuid() == 0:
            unshare(CLONE_NEWNET)
            return None
        uid, gid = os.geteuid(), os.getegid()
        unshare(CLONE_NEWUSER | CLONE_NEWNET)
        # Map only this user onto itself: files the spawner makes stay its own.
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
        return None
    except OSError as exc:
        return f"no network namespace ({exc.strerror or exc})"


_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
_MNT_DETACH = 2
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}


def enter_spawner_filesystem(readable: list[str], writable: list[str]) -> str | None:
    """Move this process (the spawner) into a mount namespace of its own whose root
    holds only ``readable`` and ``writable`` (bound at the same paths) and ``/proc``:
    its bot processes cannot even learn which other files exist (Landlock decides
    what they may open, not what they may ``stat``). None when done, else why not;
    nothing outside this process changes either way."""
    c = landlock.libc()
    pivot = _PIVOT_ROOT.get(os.uname().machine)
    paths = sorted({"/proc", *writable, *readable}, key=lambda p: (p.count("/"), p))  # parents first
    # The new root is built on a folder nothing here needs: mounted over in this
    # namespace only, it leaves nothing behind on the machine.
    base = next((d for d in ("/mnt", "/srv", "/media", "/opt", "/tmp") if os.path.isdir(d) and not os.path.islink(d)
                 and not any(p == d or p.startswith(d + "/") for p in paths)), None)
    if c is None or pivot is None or base is None:
        return "no private file system (not on this machine)"
    try:
        unshare(CLONE_NEWNS)
        # Private first: no mount made below may reach the machine's own namespace.
        _mount(c, None, "/", None, _MS_REC | _MS_PRIVATE)
    except OSError as exc:
        return f"no private file system ({exc.strerror or exc})"
    try:
        _mount(c, "arena-root", base, "tmpfs", _MS_NOSUID | _MS_NODEV, b"mode=0755,size=1m")
        bound: set[str] = set()
        for path in paths:
            _bind(c, base, path, bound)
        os.mkdir(base + "/.old", 0o700)
        if c.syscall(ctypes.c_long(pivot), base.encode(), (base + "/.old").encode()) != 0:
            raise OSError(ctypes.get_errno(), f"pivot_root: {os.strerror(ctypes.get_errno())}")
        os.chdir("/")
        if c.umount2(b"/.old", _MNT_DETACH) != 0:
            raise OSError(ctypes.get_errno(), f"umount: {os.strerror(ctypes.get_errno())}")
        os.rmdir("/.old")
    except OSError as exc:
        return f"no private file system ({exc.strerror or exc})"
    return None


def _bind(c: ctypes.CDLL, base: str, path: str, bound: set[str]) -> None:
    """Make ``path`` in the new root what it is outside: a link as a link, else bound."""
    if not os.path.lexists(path) or any(path == b or path.startswith(b.rstrip("/") + "/") for b in bound):
        return  # gone, or within something bound already
    target = base + path
    parent = os.path.dirname(path)
    if parent != "/" and not os.path.lexists(base + parent):
        if os.path.islink(parent):
            _bind(c, base, parent, bound)
        os.makedirs(base + parent, 0o755, exist_ok=True)
    if os.path.islink(path):
        link = os.readlink(path)
        if not os.path.lexists(target):
            os.symlink(link, target)
        _bind(c, base, os.path.normpath(os.path.join(parent, link)), bound)  # and what it leads to
        return
    if not os.path.lexists(target):
        if os.path.isdir(path):
            os.mkdir(target, 0o755)
        else:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    _mount(c, path, target, None, _MS_BIND | _MS_REC)
    bound.add(path)


def _mount(c: ctypes.CDLL, source: str | None, target: str, fstype: str | None, flags: int,
           data: bytes | None = None) -> None:
    encoded = [None if x is None else x.encode() for x in (source, target, fstype)]
    if c.mount(*encoded, ctypes.c_ulong(flags), data) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


class Namespaces:
    """Forks processes into a PID namespace of their own, each its own."""

    def __init__(self, nested: bool) -> None:
        """``nested``: the child makes the namespace and forks again (for a spawner
        that is not root, which could not go back to its own namespace)."""
        self._home = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        self.missing: str | None = None
        self.nested = nested

    def probe(self) -> str | None:
        """Try it once; None if it works, else why not. Afterwards :meth:`fork`
        falls back to a plain fork when it does not."""
        try:
            pid = self.fork()
        except OSError as exc:
            self.missing = f"no PID namespace ({exc.strerror or exc})"
            return self.missing
        if pid == 0:
            os._exit(0 if os.getpid() == 1 else 1)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            self.missing = "no PID namespace (the child was not its namespace's first process)"
        return self.missing

    def fork(self) -> int:
        """``os.fork``, the child the first process of a new PID namespace."""
        if self.missing is not None:
            return os.fork()
        if self.nested:
            return _fork_nested()
        unshare(CLONE_NEWPID)  # applies to this process's next child only
        try:
            pid = os.fork()
        except BaseException:
            setns(self._home, CLONE_NEWPID)
            raise
        if pid:
            setns(self._home, CLONE_NEWPID)  # later children: their own, not this one
        return pid


def _fork_nested() -> int:
    """Fork a child that makes a PID namespace, forks the bot process into it, and
    only waits for it; its exit status is the bot process's. Returns 0 in the bot
    process, the child's id in the spawner."""
    pid = os.fork()
    if pid:
        return pid
    try:
        unshare(CLONE_NEWPID)
        bot = os.fork()
    except BaseException:
        os._exit(70)
    if bot == 0:
        landlock.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL: the bot dies if this one is killed
        return 0
    # The waiting parent: holds nothing of the bot's (its channel, the lifeline),
    # so the bot's end of them closes when the bot does.
    os.closerange(3, max(os.sysconf("SC_OPEN_MAX"), 1024))
    while True:
        try:
            _, status = os.waitpid(bot, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(70)
    if os.WIFSIGNALED(status):  # end the same way, for the forfeit reason
        import signal

        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


def make_private_ipc() -> None:
    """Give the calling process an IPC namespace of its own (called by each bot
    process before it drops its privileges)."""
    unshare(CLONE_NEWIPC)
