"""What holds here: the containment each mechanism gives untrusted bots on this machine.

Asked of a real spawner (it reports what it could set up for its bot
processes), not guessed from the kernel version. ``arena doctor`` prints it.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from arena.sandbox import spawner


class Mechanism(NamedTuple):
    name: str
    holds: bool
    what: str  # what it gives a bot, or what is missing and what then happens


def containment(spawners: spawner.ProcessSpawner | None = None) -> tuple[list[Mechanism], list[str]]:
    """(each mechanism and whether it holds here, the core isolation that is
    missing: untrusted bots do not run while this is not empty, unless the weak
    sandbox was accepted)."""
    source = spawners if spawners is not None else spawner.PROCESS_SPAWNER
    report: dict[str, Any] = source.get().containment()
    missing: list[str] = list(report.get("missing") or [])
    controllers: dict[str, int] = report.get("controllers") or {}

    def missing_about(word: str) -> str | None:
        return next((m for m in missing if word in m), None)

    def group(controller: str, gives: str, otherwise: str) -> Mechanism:
        version = controllers.get(controller)
        if version is None:
            return Mechanism(f"cgroup {controller}", False, f"no writable {controller} controller: {otherwise}")
        return Mechanism(f"cgroup {controller} (v{version})", True, gives)

    pid = missing_about("PID")
    network = missing_about("network")
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


def system() -> str:
    """The kernel and who runs the arena, for the report's heading."""
    release = os.uname().release
    who = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
    return f"Linux {release}, as {who}" if os.uname().sysname == "Linux" else f"{os.uname().sysname} {release}"
