"""What holds here: the containment each mechanism gives untrusted bots on this machine.

Asked of a real spawner (it reports what it could set up for its bot
processes), not guessed from the kernel version. ``arena doctor`` prints it.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from arena.sandbox import cgroups, spawner


class Mechanism(NamedTuple):
    name: str
    holds: bool
    what: str  # what it gives a bot, or what is missing and what then happens


def containment(spawners: spawner.ProcessSpawner | None = None) -> tuple[list[Mechanism], list[str]]:
    """(each mechanism and whether it holds here, the core isolation that is
    missing: untrusted bots do not run while this is not empty, unless the weak
    sandbox was accepted)."""
    report = spawner_report(spawners)
    missing = missing_isolation(report)
    controllers: dict[str, int] = report.get("controllers") or {}

    def missing_about(word: str) -> str | None:
        return next((m for m in missing if word in m), None)

    def group(controller: str, gives: str, otherwise: str) -> Mechanism:
        version = controllers.get(controller)
        if version is None:
            return Mechanism(f"cgroup {controller}", False,
                             f"no {controller} controller this user may write: refused, or with --weak-sandbox "
                             f"{otherwise}")
        return Mechanism(f"cgroup {controller} (v{version})", True, gives)

    pid = missing_about("no PID")
    network = missing_about("no network")
    landlock = int(report.get("landlock") or 0)
    mechanisms = [
        Mechanism("PID namespace", pid is None,
                  pid or "the bot is process 1 of its own namespace: it sees and signals only its own "
                         "processes, and they all die with it"),
        Mechanism("network namespace", network is None,
                  network or "no network: no interface but a loopback that is down"),
        Mechanism("IPC namespace", pid is None,
                  "System V objects and message queues private to the bot, gone with it" if pid is None
                  else "not set up without a PID namespace"),
        group("memory", "memory of all the bot's processes together, of every kind",
              "only RLIMIT_AS, per process (anonymous memory; not memfd or shared memory)"),
        group("pids", "a limit on the bot's processes and threads", "no limit on the number of processes"),
        group("freezer", "the bot not on move is frozen", "a bot's children may run during its opponent's time"),
        Mechanism("mount namespace", report.get("file_system") is None,
                  report.get("file_system") or "a file system of only Python, the arena and its own folder: "
                                               "nothing else can even be seen"),
        Mechanism("seccomp", bool(report.get("seccomp")),
                  "system calls a bot never needs are refused (see docs/seccomp.md)" if report.get("seccomp")
                  else "no filter on this architecture"),
        Mechanism(f"Landlock (ABI {landlock})" if landlock else "Landlock", landlock >= 1,
                  "files: read only Python and the arena, write only its output" if landlock >= 1
                  else "missing: the bot reads and writes what the arena's user can"),
        Mechanism("user", True, str(report.get("user", "?"))),
    ]
    return mechanisms, missing


def spawner_report(spawners: spawner.ProcessSpawner | None = None) -> dict[str, Any]:
    """What a real spawner could set up for its bot processes (see :meth:`spawner.Spawner.containment`)."""
    source = spawners if spawners is not None else spawner.PROCESS_SPAWNER
    return source.get().containment()


def system() -> str:
    """The kernel and who runs the arena, for the report's heading."""
    release = os.uname().release
    who = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
    return f"Linux {release}, as {who}" if os.uname().sysname == "Linux" else f"{os.uname().sysname} {release}"


def missing_isolation(report: dict[str, Any]) -> list[str]:
    """What untrusted bots need that a spawner's ``report`` lacks: its own PID and
    network namespaces, and a memory, pids and freezer controller (the bot as a
    whole held to its memory and process limits, frozen off move). While this is
    not empty they do not run, unless the weak sandbox was accepted."""
    missing = list(report.get("missing") or [])
    absent = [c for c in cgroups.CONTROLLERS if c not in (report.get("controllers") or {})]
    if absent:
        delegated = report.get("delegated")
        where = f"in the delegated group {delegated}" if delegated else f"this user (uid {os.geteuid()}) may write"
        named = absent[0] if len(absent) == 1 else f"{', '.join(absent[:-1])} or {absent[-1]}"
        missing.append(f"no cgroup {named} controller {where}")
    return missing


def refusal(report: dict[str, Any]) -> str | None:
    """The one line that refuses untrusted bots where isolation is missing (None
    where nothing is): what is missing, and what to do about it."""
    missing = missing_isolation(report)
    if not missing:
        return None
    remedies = []
    if report.get("missing"):
        remedies.append("run the arena as root or where unprivileged user namespaces are allowed")
    if len(missing) > len(report.get("missing") or []):
        remedies.append("run it as root, or delegate a control group to its user and give it with "
                        "--cgroup PATH (or ARENA_CGROUP; 'arena doctor' says how)")
    return (f"sandbox: cannot isolate bots here: {'; '.join(missing)}; {', or '.join(remedies)}; or pass "
            "--weak-sandbox to run them with what holds (per-process rlimits, Landlock, seccomp)")


class Promise(NamedTuple):
    what: str
    key: str  # the mechanism that keeps it: a controller, "pid", "user"...
    root: str
    delegated: str  # an unprivileged arena with a delegated group
    alone: str  # an unprivileged arena without one


REFUSED = "refused (--weak-sandbox: {})"

PROMISES = [
    Promise("its processes die with it (PID namespace)", "pid", "yes", "yes*", "yes*"),
    Promise("no network (network namespace)", "network", "yes", "yes*", "yes*"),
    Promise("memory limit for the bot as a whole", "memory", "yes", "yes",
            REFUSED.format("RLIMIT_AS per process")),
    Promise("process and thread limit", "pids", "yes", "yes", REFUSED.format("none")),
    Promise("frozen while not on move", "freezer", "yes", "yes", REFUSED.format("it runs off move")),
    Promise("files: reads only Python and the arena (Landlock)", "landlock", "yes", "yes", "yes"),
    Promise("system calls a bot never needs refused (seccomp)", "seccomp", "yes", "yes", "yes"),
    Promise("runs as nobody, no capabilities", "user", "yes**", "no: the arena's user", "no: the arena's user"),
]
PROMISE_NOTES = [
    "*  where unprivileged user namespaces are allowed (else refused, or --weak-sandbox)",
    "** where Python is readable by nobody; otherwise uid 0 without capabilities",
]


def promises(report: dict[str, Any]) -> list[list[str]]:
    """Rows of the promises table: each promise, whether it holds here, and where it holds."""
    controllers = report.get("controllers") or {}
    missing = " ".join(report.get("missing") or [])
    here = {
        "pid": "no PID" not in missing, "network": "no network" not in missing,
        "landlock": int(report.get("landlock") or 0) >= 1, "seccomp": bool(report.get("seccomp")),
        "user": report.get("user") == "nobody",
        **{c: c in controllers for c in cgroups.CONTROLLERS},
    }
    return [[p.what, "yes" if here[p.key] else "NO", p.root, p.delegated, p.alone] for p in PROMISES]


def delegation_howto(user: str) -> list[str]:
    """How an operator gives an unprivileged arena's user (``user``) control groups of its own, once, as root."""
    return [
        f"To give an arena run as {user} control groups of its own (once, as root), either:",
        "  systemd (254+), in the arena's service unit:",
        f"    [Service]  User={user}  Delegate=yes  DelegateSubgroup=main",
        "               Environment=ARENA_CGROUP=/system.slice/arena.service",
        "  or cgroup v1 (memory, pids, freezer mounted one by one), then 'arena --cgroup /arena ...':",
        "    for c in memory pids freezer; do mkdir /sys/fs/cgroup/$c/arena; "
        f"chown {user} /sys/fs/cgroup/$c/arena; done",
        "  or cgroup v2, then start the arena inside /sys/fs/cgroup/arena/main, with --cgroup /sys/fs/cgroup/arena:",
        "    echo +memory +pids > /sys/fs/cgroup/cgroup.subtree_control; mkdir -p /sys/fs/cgroup/arena/main",
        f"    cd /sys/fs/cgroup/arena; chown {user} . cgroup.procs cgroup.subtree_control cgroup.threads; "
        f"chown -R {user} main",
    ]
