"""Control groups for bot processes: limits on a bot as a whole, and a freezer.

Resource limits (rlimits) hold per process: a bot that forks three children
gets three memory allowances, and memory that is not mapped (a ``memfd``,
System V shared memory) escapes RLIMIT_AS altogether. A control group counts
every page charged to any of its processes, of every kind, and every task.
Each bot process gets a group of its own in each hierarchy that has the
controller (cgroup v1, as on machines that mount memory, pids and freezer
separately, or v2):

- ``memory``: everything the bot's processes use, together; over it, the
  kernel's out-of-memory killer kills one of them;
- ``pids``: how many processes and threads the bot may have at once;
- ``freezer``: the referee freezes the bot that is not on move, so it cannot
  think (or burn the processor) during its opponent's time.

Groups are made by the spawner, below the group it runs in (or below a group
delegated to the arena's user, see :func:`find_hierarchies`), and used again
game after game (making and removing a memory group costs more than a move).
A bot process moves itself into its groups first thing after the fork, while it
still may, and keeps the limit files open until its job says what the limits
are; then it closes them and never sees them again.

Kept light: the spawner imports it (see :mod:`arena.sandbox.wire`).
"""

from __future__ import annotations

import fcntl
import os
import signal
import time
from typing import NamedTuple

_MOUNTINFO = "/proc/self/mountinfo"
BASE_PREFIX = "arena-"
STALE_AFTER = 10.0  # seconds: a younger base may be a spawner's that has not locked it yet
CONTROLLERS = ("memory", "pids", "freezer")
DELEGATED_VARIABLE = "ARENA_CGROUP"  # set by ``arena --cgroup``: groups delegated to the arena's user
RECLAIM_FROM = 8 * 1024 * 1024  # bytes charged to an empty group that are worth reclaiming


class Hierarchy(NamedTuple):
    """Where one controller is: the folder of this process's own group in its hierarchy."""

    controller: str  # memory, pids or freezer
    version: int  # 1 or 2
    folder: str


def find_hierarchies(delegated: list[str] | None = None) -> dict[str, Hierarchy]:
    """The controllers this process could use for its children, by name.

    Below its own group in each hierarchy, where it may write there (as root); or,
    where groups were delegated to the arena's user (``delegated``, by default
    :data:`DELEGATED_VARIABLE`), below those and nowhere else. Each entry is a
    folder of a mounted hierarchy (``/sys/fs/cgroup/memory/arena``), which gives
    that hierarchy's controllers, or a group's path as ``/proc/self/cgroup`` shows
    it (``/system.slice/arena.service``), looked up in every hierarchy."""
    if delegated is None:
        delegated = delegated_entries()
    mounts = _mounts()
    try:
        with open("/proc/self/cgroup") as f:
            own = [line.rstrip("\n").split(":", 2) for line in f]
    except OSError:
        return {}
    paths = {}  # controllers ("" for v2) -> this process's group in that hierarchy
    for _, names, path in own:
        for name in names.split(",") if names else [""]:
            paths[name] = path
    found: dict[str, Hierarchy] = {}
    for fstype, options, root, mountpoint in mounts:
        if fstype == "cgroup":
            for controller in CONTROLLERS:
                if controller in options and controller in paths and controller not in found:
                    if delegated:
                        folder = _delegated_folder(delegated, mounts, mountpoint, root)
                    else:
                        folder = _inside(mountpoint, root, paths[controller])
                    if folder is not None and os.access(folder, os.W_OK):
                        found[controller] = Hierarchy(controller, 1, folder)
        elif fstype == "cgroup2" and "" in paths:
            own_folder = _inside(mountpoint, root, paths[""])
            folder = _delegated_folder(delegated, mounts, mountpoint, root) if delegated else own_folder
            if folder is None or not os.access(folder, os.W_OK):
                continue
            if delegated and os.geteuid() != 0 and not _within(own_folder, folder):
                # v2 moves a process only for whoever may write the cgroup.procs of the
                # group that holds both where it is and where it goes: a user may move
                # its processes within its delegated group, never into it from outside.
                continue
            for controller in _v2_controllers(folder):
                if controller == "freezer":
                    # v2's freezer over v1's: a process frozen in a v1 group cannot even be
                    # killed, so if its referee and spawner died it would stay frozen for good.
                    found[controller] = Hierarchy(controller, 2, folder)
                else:
                    found.setdefault(controller, Hierarchy(controller, 2, folder))
    return found


def delegated_entries(value: str | None = None) -> list[str]:
    """The delegated groups named by ``value`` (by default :data:`DELEGATED_VARIABLE`):
    paths separated by colons."""
    text = os.environ.get(DELEGATED_VARIABLE, "") if value is None else value
    return [entry.rstrip("/") or "/" for entry in text.split(":") if entry.strip()]


def check_delegated(value: str) -> str | None:
    """Why ``value`` (for :data:`DELEGATED_VARIABLE`) cannot be used by this user, or
    None: each entry must be a group of a hierarchy with memory, pids or freezer (or
    of cgroup v2) that this user may write."""
    entries = delegated_entries(value)
    if not entries:
        return "(empty): give a control group's folder or path"
    mounts = _mounts()
    for entry in entries:
        folders = [folder for fstype, options, root, mountpoint in mounts
                   if fstype == "cgroup2" or any(c in options for c in CONTROLLERS)
                   for folder in [_delegated_folder([entry], mounts, mountpoint, root)] if folder is not None]
        if not folders:
            return (f"{entry}: no such control group in the memory, pids or freezer hierarchy "
                    "(nor in cgroup v2); make it as root first (see 'arena doctor')")
        if not any(os.access(folder, os.W_OK) for folder in folders):
            return (f"{entry}: this user (uid {os.geteuid()}) may not write it; as root, "
                    "chown it to this user (see 'arena doctor')")
    return None


def _mounts() -> list[tuple[str, list[str], str, str]]:
    """(file system type, its options, its root, mount point) of each cgroup mount."""
    try:
        with open(_MOUNTINFO) as f:
            lines = [line.split() for line in f]
    except OSError:
        return []
    mounts = []
    for fields in lines:
        try:
            separator = fields.index("-")
        except ValueError:
            continue
        fstype = fields[separator + 1]
        if fstype in ("cgroup", "cgroup2"):
            mounts.append((fstype, fields[separator + 3].split(","), fields[3], _unescape(fields[4])))
    return mounts


def _delegated_folder(entries: list[str], mounts: list[tuple[str, list[str], str, str]], mountpoint: str,
                      root: str) -> str | None:
    """The folder, under ``mountpoint``, of the first entry that names one there."""
    for entry in entries:
        if any(_within(entry, m[3]) for m in mounts):  # a folder: of this mount, or of another
            if _within(entry, mountpoint) and os.path.isdir(entry):
                return entry
            continue
        folder = _inside(mountpoint, root, entry)  # a group's path, in every hierarchy
        if folder is not None:
            return folder
    return None


def _within(path: str | None, folder: str) -> bool:
    return path is not None and (path == folder or path.startswith(folder.rstrip("/") + "/"))


def _unescape(path: str) -> str:
    return path.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def _inside(mountpoint: str, root: str, path: str) -> str | None:
    """The folder of group ``path`` under a mount of the hierarchy's ``root``."""
    if root != "/" and not (path == root or path.startswith(root + "/")):
        return None  # our group is not visible through this mount
    relative = path[len(root):] if root != "/" else path
    folder = mountpoint + relative.rstrip("/") if relative != "/" else mountpoint
    return folder if os.path.isdir(folder) else None


def _v2_controllers(folder: str) -> list[str]:
    """Controllers a v2 group below ``folder`` can have. The freezer is built into
    every v2 group but the root; memory and pids must be enabled for children,
    which the kernel allows only where ``folder`` has no processes of its own
    (or is the root)."""
    usable = ["freezer"]
    try:
        with open(os.path.join(folder, "cgroup.controllers")) as f:
            available = f.read().split()
        with open(os.path.join(folder, "cgroup.subtree_control")) as f:
            enabled = set(f.read().split())
    except OSError:
        return usable
    for controller in ("memory", "pids"):
        if controller not in available:
            continue
        if controller not in enabled:
            try:
                _write(os.path.join(folder, "cgroup.subtree_control"), f"+{controller}")
            except OSError:
                continue
        usable.append(controller)
    return usable


# --- the spawner's side: a pool of groups ------------------------------------------------------


class BotGroup(NamedTuple):
    """One bot's groups: a folder per controller."""

    name: str
    folders: tuple[Hierarchy, ...]  # each with its own folder, not its parent's

    def folder(self, controller: str) -> str | None:
        for h in self.folders:
            if h.controller == controller:
                return h.folder
        return None

    def freezer(self) -> FreezerFiles | None:
        """The file the referee freezes the bot with."""
        for h in self.folders:
            if h.controller == "freezer":
                return FreezerFiles(os.path.join(h.folder, "cgroup.freeze" if h.version == 2 else "freezer.state"),
                                    h.version)
        return None


class FreezerFiles(NamedTuple):
    freeze: str  # cgroup.freeze (v2) or freezer.state (v1)
    version: int


class GroupPool:
    """The spawner's bot groups: made on demand below a folder of its own in each
    hierarchy, handed out one per bot process, used again once empty.

    Its folder (its *base*) stays locked (``flock``) for as long as the spawner
    lives: the kernel lets go of the lock however it dies, and any arena that can
    see the group sees the lock, whatever its PID or mount namespace. Another
    arena removes a base only once it can take that lock itself."""

    def __init__(self, hierarchies: dict[str, Hierarchy] | None = None) -> None:
        found = find_hierarchies() if hierarchies is None else hierarchies
        self.bases: list[Hierarchy] = []
        self._locks: list[int] = []
        name = f"{BASE_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"  # pids repeat across PID namespaces
        for hierarchy in found.values():
            _remove_stale_bases(hierarchy.folder)
            base = os.path.join(hierarchy.folder, name)
            lock = -1
            try:
                os.mkdir(base, 0o755)
                lock = _lock(base)  # at once: younger than STALE_AFTER, nobody takes it meanwhile
                if hierarchy.version == 2 and hierarchy.controller in ("memory", "pids"):
                    # v2 groups below ours need the controller enabled in ours
                    _write(os.path.join(base, "cgroup.subtree_control"), f"+{hierarchy.controller}")
                # The spawner lives in a group of its own below its base (in v2 a group
                # with controllers enabled for its children may hold no process itself).
                os.mkdir(os.path.join(base, "spawner"), 0o755)
                _write(os.path.join(base, "spawner", "cgroup.procs"), "0")
            except OSError:
                _rmdir(os.path.join(base, "spawner"))
                _rmdir(base)
                if lock >= 0:
                    os.close(lock)
                continue
            self.bases.append(hierarchy._replace(folder=base))
            self._locks.append(lock)
        self.free: list[BotGroup] = []
        self.draining: list[BotGroup] = []  # their bot process is gone; some of its processes may not be
        self.made = 0

    @property
    def controllers(self) -> list[str]:
        return sorted(h.controller for h in self.bases)

    def take(self) -> BotGroup | None:
        """A group for a new bot process (None without any controller)."""
        if not self.bases:
            return None
        while self.free:
            group = self.free.pop()
            if all(os.path.isdir(h.folder) for h in group.folders):
                return group
            # Removed under this spawner (an operator, another arena's clean-up): its
            # process could not join it. Forget it; a new one is made below.
            for h in group.folders:
                _close_files_under(h.folder)
        self.made += 1
        name = f"bot-{self.made}"
        folders = []
        for base in self.bases:
            folder = os.path.join(base.folder, name)
            try:
                os.mkdir(folder, 0o755)
            except FileExistsError:
                pass
            folders.append(base._replace(folder=folder))
        group = BotGroup(name, tuple(folders))
        open_files(group)
        return group

    def give_back(self, group: BotGroup) -> None:
        """The group's bot process has ended: once nothing is left in it, it can
        be used again. Until then it is killed on every :meth:`sweep`."""
        self.draining.append(group)
        self.sweep()

    def sweep(self) -> None:
        still = []
        for group in self.draining:
            if empty(group):
                _reclaim(group)
                self.free.append(group)
            else:
                kill_all(group)
                still.append(group)
        self.draining = still

    def shut_down(self, seconds: float = 2.0) -> None:
        """Kill whatever is left in any group and remove them all."""
        groups = [*self.free, *self.draining]
        deadline = time.monotonic() + seconds
        while True:
            busy = [g for g in groups if not empty(g)]
            if not busy or time.monotonic() > deadline:
                break
            for group in busy:
                kill_all(group)
            time.sleep(0.005)
        for group in groups:
            for h in group.folders:
                _close_files_under(h.folder)
                _rmdir(h.folder)
        for base in self.bases:
            try:  # back where it came from: a group with a process in it cannot be removed
                _write(os.path.join(os.path.dirname(base.folder), "cgroup.procs"), "0")
            except OSError:
                pass
            _rmdir(os.path.join(base.folder, "spawner"))
            _rmdir(base.folder)
        for lock in self._locks:  # after the folders: until they are gone, they are ours
            os.close(lock)
        self.bases, self._locks = [], []
        self.free, self.draining = [], []


def _reclaim(group: BotGroup) -> None:
    """Uncharge what the last bot left charged to an empty group (the page cache of
    files it read): the next bot's memory limit is set on top of what its group is
    charged, and must not count the last one's files."""
    for h in group.folders:
        if h.controller == "memory":
            try:
                charged = int(os.pread(_opened_file(os.path.join(h.folder, _memory_files(h.version)[1]),
                                                    os.O_RDONLY), 32, 0))
                if charged < RECLAIM_FROM:
                    continue  # not worth it: reclaiming costs a millisecond even with nothing to do
                if h.version == 1:
                    _write(os.path.join(h.folder, "memory.force_empty"), "0")
                else:
                    _write(os.path.join(h.folder, "memory.reclaim"), str(charged))
            except (OSError, ValueError):
                pass


def empty(group: BotGroup) -> bool:
    # A task leaves all its groups as it exits: one hierarchy tells. The pids
    # controller's count is the cheapest to read (a list of members costs more).
    pids = group.folder("pids")
    if pids is not None:
        try:
            return int(os.pread(_opened_file(os.path.join(pids, "pids.current"), os.O_RDONLY), 32, 0)) == 0
        except (OSError, ValueError):
            pass
    return not members(group.folders[0].folder)


def members(folder: str) -> list[int]:
    """Ids of the processes in a group. A process outside this one's PID namespace
    is listed as 0: it is left out (``kill(0)`` would be this process's own group)."""
    try:
        with open(os.path.join(folder, "cgroup.procs")) as f:
            return [pid for pid in map(int, f.read().split()) if pid > 0]
    except (OSError, ValueError):
        return []


def kill_all(group: BotGroup) -> None:
    """SIGKILL every process in the group, frozen or not."""
    thaw_file = group.freezer()
    if thaw_file is not None:
        try:
            _write(thaw_file[0], "0" if thaw_file[1] == 2 else "THAWED")  # v1 kills nothing frozen
        except OSError:
            pass
    for h in group.folders:
        if h.version == 2:
            try:
                _write(os.path.join(h.folder, "cgroup.kill"), "1")
                continue
            except OSError:
                pass
        for pid in members(h.folder):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _lock(base: str) -> int:
    """Lock a base for as long as this process lives (the kernel lets go when it dies)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        raise
    return fd


def _remove_stale_bases(parent: str) -> None:
    """Remove the groups of spawners that are gone (killed outright): bases whose
    lock this process can take. Never by process ids, or by which processes a group
    lists: another arena, in another PID namespace, may have a spawner of the same
    number, and its processes are listed as nothing, or as 0."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        if not name.startswith(BASE_PREFIX):
            continue
        base = os.path.join(parent, name)
        try:
            if time.time() - os.stat(base).st_mtime < STALE_AFTER:
                continue  # a spawner may not have locked it yet
            fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # held: its spawner lives (or another arena is removing it)
        try:
            # A group with a process in it cannot be removed: what is left of a dead
            # spawner's bots stays until a later clean-up finds it gone.
            for child in _subfolders(base):
                _rmdir(os.path.join(base, child))
            _rmdir(base)
        finally:
            os.close(fd)


def remove_base(base: str) -> None:
    """Remove what is left of a spawner's groups once it has exited: its own group
    and its base (its bots' groups it removes itself)."""
    _rmdir(os.path.join(base, "spawner"))
    _rmdir(base)


def _subfolders(folder: str) -> list[str]:
    try:
        return [e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


# Files of the groups, opened once by the spawner: opening a control file costs
# more than using it, and a bot process inherits them all (it keeps its own, see
# join, and closes the rest with everything else it inherits).
_opened: dict[str, int] = {}


def _opened_file(path: str, flags: int) -> int:
    fd = _opened.get(path)
    if fd is None:
        fd = _opened[path] = os.open(path, flags)
    return fd


def _close_files_under(folder: str) -> None:
    for path in [p for p in _opened if p.startswith(folder + "/")]:
        os.close(_opened.pop(path))


def _rmdir(folder: str) -> None:
    try:
        os.rmdir(folder)
    except OSError:
        pass


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


# --- the bot process's side -------------------------------------------------------------------


class Joined(NamedTuple):
    """The limit files a bot process holds open from joining until its job comes."""

    memory_limit: int | None
    memory_usage: int | None
    pids_limit: int | None


def open_files(group: BotGroup) -> None:
    """Open the files a bot process of ``group`` uses (in the spawner, before it forks)."""
    for h in group.folders:
        _opened_file(os.path.join(h.folder, "cgroup.procs"), os.O_WRONLY)
        if h.controller == "memory":
            limit_name, usage_name = _memory_files(h.version)
            _opened_file(os.path.join(h.folder, limit_name), os.O_WRONLY)
            _opened_file(os.path.join(h.folder, usage_name), os.O_RDONLY)
            for name in _memory_event_files(h.version):  # for the spawner, not the bot process
                _opened_file(os.path.join(h.folder, name), os.O_RDONLY)
        elif h.controller == "pids":
            _opened_file(os.path.join(h.folder, "pids.max"), os.O_WRONLY)
            _opened_file(os.path.join(h.folder, "pids.current"), os.O_RDONLY)


def _memory_event_files(version: int) -> tuple[str, ...]:
    """The files that count a memory group's events: v2's memory.events, v1's
    memory.failcnt and memory.oom_control."""
    return ("memory.events",) if version == 2 else ("memory.failcnt", "memory.oom_control")


def memory_events(group: BotGroup) -> tuple[int, int] | None:
    """(times the group's memory reached its limit, processes the out-of-memory
    killer killed in it) so far, both counted since the group was made; None where
    the group has no memory controller or its counters cannot be read. v2 counts
    both (``oom`` and ``oom_kill`` in memory.events); v1 the first as
    ``memory.failcnt`` and the second as ``oom_kill`` in memory.oom_control (since
    Linux 4.13; before, the first stands for both). Called by the spawner, with
    the files :func:`open_files` opened."""
    for h in group.folders:
        if h.controller != "memory":
            continue
        try:
            counts = [_counters(os.pread(_opened_file(os.path.join(h.folder, name), os.O_RDONLY), 4096, 0))
                      for name in _memory_event_files(h.version)]
            if h.version == 2:
                return counts[0]["oom"], counts[0]["oom_kill"]
            reached = counts[0][""]
            return reached, counts[1].get("oom_kill", reached)
        except (OSError, ValueError, KeyError):
            return None
    return None


def over_memory(before: tuple[int, int] | None, after: tuple[int, int] | None) -> bool | None:
    """Whether, between two readings of :func:`memory_events`, the group reached its
    limit and the out-of-memory killer killed in it: a kill by the group's own limit.
    The machine's own out-of-memory killer counts its kills in the victim's group
    too, but not a limit reached. None where either reading is missing."""
    if before is None or after is None:
        return None
    return after[0] > before[0] and after[1] > before[1]


def _counters(text: bytes) -> dict[str, int]:
    """A control file's "name value" lines by name; a file of one number under ""."""
    fields = text.split()
    if len(fields) == 1:
        return {"": int(fields[0])}
    return {name.decode(): int(value) for name, value in zip(fields[::2], fields[1::2], strict=False)}


def _memory_files(version: int) -> tuple[str, str]:
    """(its limit, its usage)."""
    return ("memory.max", "memory.current") if version == 2 else ("memory.limit_in_bytes", "memory.usage_in_bytes")


def join(group: BotGroup) -> Joined:
    """Move the calling process into its groups, and keep the files it sets its
    limits with (called in the bot process while it still has its privileges,
    with the files :func:`open_files` opened in the spawner)."""
    memory = pids = usage = None
    for h in group.folders:
        os.write(_opened_file(os.path.join(h.folder, "cgroup.procs"), os.O_WRONLY), b"0")  # 0: the writer itself
        if h.controller == "memory":
            limit_name, usage_name = _memory_files(h.version)
            memory = _opened_file(os.path.join(h.folder, limit_name), os.O_WRONLY)
            usage = _opened_file(os.path.join(h.folder, usage_name), os.O_RDONLY)
        elif h.controller == "pids":
            pids = _opened_file(os.path.join(h.folder, "pids.max"), os.O_WRONLY)
    return Joined(memory, usage, pids)


def apply_limits(joined: Joined, memory_bytes: int, processes: int) -> None:
    """Set the bot's limits through the files opened by :func:`join`, and close them.
    The memory limit comes on top of what the process already uses (its share of
    what it was forked with, and its rehearsal)."""
    if joined.memory_limit is not None and joined.memory_usage is not None:
        try:
            used = int(os.pread(joined.memory_usage, 64, 0))
        except (OSError, ValueError):
            used = 0
        os.write(joined.memory_limit, str(used + memory_bytes).encode())
    if joined.pids_limit is not None:
        os.write(joined.pids_limit, str(processes).encode())
    for fd in joined:
        if fd is not None:
            os.close(fd)


# --- the referee's side ---------------------------------------------------------------------


class Freezer:
    """Stops one bot while it is not on move: every process and thread in its
    group stops where it is, and goes on when thawed.

    Every bot is frozen from its answer to the referee's next request, whatever it
    runs: a bot of one process waiting for its next request cannot be trusted to be
    waiting (its own code can replace the loop that reads the requests, and spin),
    and one that forks helpers after answering and reaps them before its next
    answer never shows more than one task to anyone who counts.
    """

    def __init__(self, files: FreezerFiles) -> None:
        self.files = files
        self._fd = os.open(files.freeze, os.O_WRONLY | os.O_CLOEXEC)
        self._frozen, self._thawed = (b"1", b"0") if files.version == 2 else (b"FROZEN", b"THAWED")
        self.frozen = False

    def rest(self) -> None:
        """Its move is over (or it has started): freeze it."""
        if not self.frozen:
            os.write(self._fd, self._frozen)
            self.frozen = True

    def wake(self) -> None:
        if self.frozen:
            os.write(self._fd, self._thawed)
            self.frozen = False

    def close(self) -> None:
        if self._fd >= 0:
            try:
                self.wake()  # a v1-frozen process would not die of the kill that follows
            except OSError:
                pass
            os.close(self._fd)
            self._fd = -1
