"""The spawner: a small process that forks bot processes ahead of need.

Started by :class:`arena.sandbox.spawner.Spawner` with one end of a socket (see there for
why it exists). It serves, in order:

- ``spare``: make a private working directory and fork a bot process for it,
  which confines itself at once and then waits for its job
  (:mod:`arena.sandbox.bot_process`); the requester gets the process id and its end of
  a new socket to it. Forks wait until no request has come for a moment, so
  they do not slow the start of the game that asked for them;
- ``status``: how a bot process ended (its wait status, the processor time it
  used, whether its memory group's limit killed it), for a forfeit reason;
- ``preload``: load the installed bots, so bot processes forked later have them;
- ``build``: fork a build process (:mod:`arena.sandbox.build`) at once: a bot process
  under the build profile (its folder its own to change, the build filter), which
  runs one command and says how it ended.

The requester kills bot processes itself, at once, when their game ends; the
spawner collects them afterwards and removes their directories. It is the
subreaper of everything they start, so a child that left its bot's process group
comes back to it when its parent dies, and is killed. When its requester goes
away (the socket closes, or the requester dies) it kills all that is left,
removes the directories and exits.
"""

from __future__ import annotations

import fcntl
import gc
import os
import select
import shutil
import signal
import socket
import stat
import sys
import time
from collections import OrderedDict
from typing import Any, NamedTuple

from arena.protocol.server import load_installed
from arena.sandbox import cgroups, landlock, namespaces, process_control, seccomp
from arena.sandbox.bot_process import Confinement, run_bot_process
from arena.sandbox.wire import Ending, encode, read_message

SWEEP_SECONDS = 0.25  # how long an orphan of a bot process may live, at most
BASE_PREFIX = "arena-bots-"
IDLE_SECONDS = 0.001  # no request for this long: time to fork the spares asked for
KEPT_STATUSES = 256  # wait statuses of ended bot processes not yet asked about
LOCK_NAME = "spawner.lock"  # in a spawner's folder: locked while the spawner lives
STALE_AFTER = 10.0  # seconds: an unlocked folder younger than this may be a spawner's just made


class _Leave(Exception):
    pass


class _Prepared(NamedTuple):
    folder: str
    ruleset: int | None  # Landlock
    theirs: socket.socket  # the bot process's end of its channel
    ours: socket.socket  # the requester's
    group: cgroups.BotGroup | None
    memory: tuple[int, int] | None  # its group's memory events before the bot process (groups are used again)


def main() -> None:
    control_fd, requester = int(sys.argv[1]), int(sys.argv[2])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the requester's to handle
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # so is a hang-up (the terminal closed)
    signal.signal(signal.SIGTERM, _leave)
    process_control.die_with_parent(signal.SIGTERM)  # and then clean up
    if os.getppid() != requester:
        return  # it died before we could ask to be told
    process_control.become_subreaper()
    landlock.libc()  # loaded here, once, not in every bot process
    readable = process_control.readable_paths(tuple(sys.argv[3:]))  # plug-ins, from the requester
    control = socket.socket(fileno=control_fd)
    spawner = _Spawner(control, readable)
    control.sendall(encode(("hello", spawner.report)))
    # Everything loaded so far goes to the permanent generation: the collector
    # never walks it, so bot processes do not copy the pages it sits on.
    gc.freeze()
    serving = True
    while True:
        try:
            if serving:
                spawner.serve()
            serving = False
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # leaving already
            spawner.shut_down()
            return
        except (_Leave, OSError):  # told to leave, or the requester went away mid-answer
            serving = False


def _leave(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once is enough
    raise _Leave()


class _Spawner:
    def __init__(self, control: socket.socket, readable: list[str]) -> None:
        self.control = control
        self.readable = readable  # what its bot processes may read
        _remove_stale_folders()
        # The bots' folders live in one of this spawner's own, named after it, so
        # whatever a spawner killed outright leaves behind, the next one removes.
        self.base = _new_folder(_root(), f"{BASE_PREFIX}{os.getpid()}-", 0o711)
        self._lock = _hold_lock(self.base)
        # bot process -> folder, groups, their memory events before it
        self.running: dict[int, tuple[str, cgroups.BotGroup | None, tuple[int, int] | None]] = {}
        self.ended: OrderedDict[int, Ending] = OrderedDict()  # bot process -> how it ended
        self.user = process_control.unprivileged_user()
        self.landlock = landlock.abi_version() >= 1
        # Closed by the kernel when this process dies, however it dies: a bot
        # process that finds it closed knows it has no spawner (it cannot ask
        # for its parent's id: that lies outside its PID namespace).
        self.lifeline, self._lifeline_kept = os.pipe()
        missing = []
        network = namespaces.enter_spawner_namespaces()
        if network is not None:
            missing.append(network)
        self.namespaces = namespaces.Namespaces(nested=os.geteuid() != 0)
        pid_namespace = self.namespaces.probe()
        if pid_namespace is not None:
            missing.append(pid_namespace)
        self.groups = cgroups.GroupPool()
        # Last, once nothing outside is needed: from here on the file system holds only
        # what bot processes may read, and the folders that hold this spawner's folder
        # and its control groups (not those themselves: a mount point cannot be
        # removed, and the spawner removes them when it leaves).
        self.file_system = namespaces.enter_spawner_filesystem(
            readable, [os.path.dirname(self.base), *(os.path.dirname(h.folder) for h in self.groups.bases)])
        self.filter = seccomp.prepare()  # built once here; each bot process only installs it
        self.lock = seccomp.prepare_lock() if self.filter is not None else None  # and this, once limited
        self.build_filter = seccomp.prepare_build() if self.filter is not None else None  # a build's, not a game's
        # What holds here, for the requester (and ``arena doctor``).
        self.report = {
            "missing": missing,
            "controllers": {h.controller: h.version for h in self.groups.bases},
            "delegated": os.environ.get(cgroups.DELEGATED_VARIABLE) or None,  # where they were made, if given
            "bases": [h.folder for h in self.groups.bases],  # for the requester to remove, should we not
            "landlock": landlock.abi_version(),
            "seccomp": self.filter is not None,
            "file_system": self.file_system,  # None: private
            "user": "nobody" if self.user is not None else ("root, without capabilities" if os.geteuid() == 0
                                                             else "the arena's own user"),
        }
        self.spares_asked = 0
        self.generation = 0  # goes up when more code is loaded here (installed bots)
        self.orphans = 0  # killed in the last sweep: while there are some, keep sweeping

    def serve(self) -> None:
        while True:
            if self.spares_asked:
                timeout: float | None = IDLE_SECONDS
            else:
                timeout = SWEEP_SECONDS if self.running or self.orphans or self.groups.draining else None
            if select.select([self.control], [], [], timeout)[0]:
                request = read_message(self.control.fileno())
                if request is None:
                    return
                self.answer(request)
            else:
                self.fork_spares()
                self.collect()
                self.kill_orphans()
                self.groups.sweep()

    def answer(self, request: tuple[Any, ...]) -> None:
        if request[0] == "spare":
            self.spares_asked += 1
        elif request[0] == "status":
            self.fork_spares()  # answers go in the order of the requests
            self.control.sendall(encode(("status", request[1], self.ending(request[1], request[2]))))
        elif request[0] == "build":
            self.fork_spares()  # answers go in the order of the requests
            self.fork_builder()
        elif request[0] == "preload":
            self.fork_spares()
            try:
                load_installed(request[1])  # trusted code: loaded once here, not in every bot process
            except Exception:
                pass  # each bot process will try, and report why it failed
            gc.freeze()
            self.generation += 1

    def fork_spares(self) -> None:
        """Fork the spares asked for, back to back. After a fork, every page this
        process writes is copied first (fault and copy, on this side or the
        child's): so everything is prepared before the first fork and answered
        after the last, leaving next to nothing to write in between."""
        wanted, self.spares_asked = self.spares_asked, 0
        ready = []
        for _ in range(wanted):
            try:
                ready.append(self.prepare_bot_process())
            except OSError as exc:
                self.control.sendall(encode(("no spare", f"could not start a bot process: {exc}")))
        forked = []
        for prepared in ready:
            try:
                forked.append((self.fork_bot_process(prepared), prepared))
            except OSError as exc:  # out of processes or memory
                self.abandon(prepared)
                self.control.sendall(encode(("no spare", f"could not start a bot process: {exc}")))
        for pid, prepared in forked:
            freezer = prepared.group.freezer() if prepared.group is not None else None
            try:
                data = encode(("spare", pid, self.generation, freezer, prepared.folder))
                sent = socket.send_fds(self.control, [data], [prepared.ours.fileno()])
                self.control.sendall(data[sent:])
            finally:
                prepared.ours.close()

    def fork_builder(self) -> None:
        """Fork a build process now and hand it to the requester, or say why not."""
        try:
            prepared = self.prepare_bot_process(build=True)
        except OSError as exc:
            self.control.sendall(encode(("no builder", f"could not start a build process: {exc}")))
            return
        try:
            pid = self.fork_bot_process(prepared, build=True)
        except OSError as exc:
            self.abandon(prepared)
            self.control.sendall(encode(("no builder", f"could not start a build process: {exc}")))
            return
        freezer = prepared.group.freezer() if prepared.group is not None else None
        try:
            data = encode(("builder", pid, freezer, prepared.folder))
            sent = socket.send_fds(self.control, [data], [prepared.ours.fileno()])
            self.control.sendall(data[sent:])
        finally:
            prepared.ours.close()

    def prepare_bot_process(self, build: bool = False) -> _Prepared:
        """What a bot process needs before the fork: its folder, Landlock ruleset,
        groups, and the two ends of its channel. A build's folder is its own to
        change, and it may write to /dev/null (compilers throw output there)."""
        folder = _new_folder(self.base, "build-" if build else "bot-", 0o700)
        if self.user is not None:
            os.chown(folder, *self.user)
        # Built here, where ctypes is warm: in the new process it would cost more.
        if build:
            ruleset = landlock.prepare([os.devnull], self.readable, owned=(folder,))
        else:
            ruleset = landlock.prepare([folder], self.readable)
        if ruleset is None and self.landlock:
            _remove(folder)
            raise OSError("the Landlock ruleset could not be built")  # never run a bot unconfined
        ours, theirs = socket.socketpair()
        group = self.groups.take()
        return _Prepared(folder, ruleset, theirs, ours, group,
                         cgroups.memory_events(group) if group is not None else None)

    def fork_bot_process(self, prepared: _Prepared, build: bool = False) -> int:
        pid = self.namespaces.fork()
        if pid == 0:  # the bot process: never returns
            run_bot_process(Confinement(
                prepared.folder, self.user, prepared.ruleset, prepared.theirs.fileno(), self.lifeline,
                prepared.group, private_ipc=self.namespaces.missing is None,
                filter=self.build_filter if build else self.filter, lock=self.lock, build=build,
            ))
        prepared.theirs.close()
        if prepared.ruleset is not None:
            os.close(prepared.ruleset)
        self.running[pid] = (prepared.folder, prepared.group, prepared.memory)
        return pid

    def abandon(self, prepared: _Prepared) -> None:
        """Undo :meth:`prepare_bot_process` for a fork that failed."""
        prepared.theirs.close()
        prepared.ours.close()
        if prepared.ruleset is not None:
            os.close(prepared.ruleset)
        _remove(prepared.folder)
        if prepared.group is not None:
            self.groups.give_back(prepared.group)

    # --- collecting bot processes and their orphans --------------------------------------

    def collect(self) -> None:
        """Reap every child that has ended; remember how bot processes ended."""
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self._ended(pid, status, usage)

    def _ended(self, pid: int, status: int, usage: Any) -> None:
        if pid not in self.running:
            return  # an orphan we killed
        folder, group, memory = self.running.pop(pid)
        _remove(folder)
        # Read before the group is given back: the next bot process may have it.
        over_memory = cgroups.over_memory(memory, cgroups.memory_events(group)) if group is not None else None
        if group is not None:
            self.groups.give_back(group)  # once all its processes are gone
        self.ended[pid] = Ending(status, usage.ru_utime + usage.ru_stime, over_memory)
        while len(self.ended) > KEPT_STATUSES:
            self.ended.popitem(last=False)

    def ending(self, pid: int, seconds: float) -> Ending | None:
        deadline = time.monotonic() + seconds
        while pid not in self.ended:
            try:
                done, status, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if done:
                self._ended(pid, status, usage)
                break
            if time.monotonic() > deadline:
                return None
            time.sleep(0.0002)
        return self.ended.pop(pid)

    def kill_orphans(self) -> None:
        """Kill children this process did not fork: they were adopted, having
        escaped a bot's process group before their parent died."""
        orphans = [pid for pid in _children() if pid not in self.running]
        for pid in orphans:
            process_control.kill_group(pid)
        self.orphans = len(orphans)
        self.collect()

    def shut_down(self) -> None:
        for pid, (_, group, _) in list(self.running.items()):
            if group is not None:
                cgroups.kill_all(group)  # thawed first: a frozen process would not die
            process_control.kill_group(pid)
        deadline = time.monotonic() + 2.0
        while self.running and time.monotonic() < deadline:
            self.kill_orphans()
            if self.running:
                time.sleep(0.001)
        self.kill_orphans()
        self.groups.shut_down()
        _remove(self.base)


def _root() -> str:
    """Where the bots' folders go: a memory file system where there is one (making
    and removing files there costs a fraction of what it costs on a disk; bots
    cannot fill it, as they may create no files), else the temporary folder."""
    for candidate in ("/dev/shm", os.environ.get("TMPDIR") or "/tmp"):
        if os.path.isdir(candidate) and os.access(candidate, os.W_OK | os.X_OK):
            return candidate
    return "/tmp"


def _new_folder(parent: str, prefix: str, mode: int) -> str:
    """A new, empty directory (``tempfile.mkdtemp``, without loading tempfile)."""
    while True:
        folder = os.path.join(parent, prefix + os.urandom(6).hex())
        try:
            os.mkdir(folder, mode)
            os.chmod(folder, mode)  # whatever the umask
            return folder
        except FileExistsError:
            continue


def _remove_stale_folders() -> None:
    """Remove the folders of spawners that are gone (killed outright): a spawner
    holds a lock on a file in its folder as long as it lives. Not by process id:
    another arena, in another PID namespace, may have a spawner of the same number."""
    parent = _root()
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        path = os.path.join(parent, name)
        if not name.startswith(BASE_PREFIX) or not _ours(path):
            continue
        try:
            lock = os.open(os.path.join(path, LOCK_NAME), os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:  # a spawner that has not locked it yet, or an old one's
            try:
                if time.time() - os.lstat(path).st_mtime > STALE_AFTER:
                    _remove(path)
            except OSError:
                pass
            continue
        except OSError:
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # held: its spawner lives
        finally:
            os.close(lock)
        _remove(path)


def _hold_lock(folder: str) -> int:
    """Lock a file in this spawner's folder for as long as it lives (released by
    the kernel when it dies, however it dies)."""
    fd = os.open(os.path.join(folder, LOCK_NAME), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _ours(path: str) -> bool:
    """A real directory (not a link to one) owned by this process's user."""
    return _real_directory(path) and os.lstat(path).st_uid == os.geteuid()


def _real_directory(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove(folder: str) -> None:
    """Remove a bot's working directory, whatever permissions it gave its files;
    never anything a link in it leads to."""
    if not _real_directory(folder):
        return
    try:
        shutil.rmtree(folder)  # does not follow links
        return
    except FileNotFoundError:
        return
    except OSError:
        pass
    _open_up(folder)
    for root, dirs, _ in os.walk(folder):  # top down: each folder opened before it is listed
        for name in dirs:
            _open_up(os.path.join(root, name))
    shutil.rmtree(folder, ignore_errors=True)


def _open_up(folder: str) -> None:
    """chmod 700, through a descriptor that refuses to follow a link (O_PATH
    needs no permission on the folder itself, so a mode of 000 is no obstacle)."""
    try:
        fd = os.open(folder, getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        os.chmod(f"/proc/self/fd/{fd}", 0o700)
    except OSError:
        pass
    finally:
        os.close(fd)


def _children() -> list[int]:
    """Process ids of this process's children."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as children:
            return [int(pid) for pid in children.read().split()]
    except OSError:
        pass
    found = []  # kernels without the children file: look at every process
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if parent == me:
                found.append(int(name))
    return found


if __name__ == "__main__":
    main()
