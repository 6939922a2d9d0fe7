"""Whose control groups are they: an arena removes another's bot groups only once
that arena's spawner is gone, whichever PID namespace either runs in.

A spawner makes its groups below a base folder, which it keeps locked (flock) for
as long as it lives. Another arena's clean-up once decided by the processes a
group lists, and from another PID namespace a group lists none of them: it
removed a live spawner's idle groups, and every later bot start failed (ENODEV).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.sandbox import cgroups

REPO = Path(__file__).resolve().parent.parent

# A spawner's part, in a process of its own: it makes its pool below the given folder,
# takes a bot group and gives it back (idle, as between games), says where its base
# is, and waits; told to go on, it uses the group again.
OWNER = """
import os, sys
from arena.sandbox import cgroups
pool = cgroups.GroupPool({"pids": cgroups.Hierarchy("pids", int(sys.argv[1]), sys.argv[2])})
pool.give_back(pool.take())
print(pool.bases[0].folder, flush=True)
sys.stdin.readline()
group = pool.take()
try:
    os.write(cgroups._opened_file(os.path.join(group.folder("pids"), "pids.max"), os.O_WRONLY), b"10")
    print("used again", flush=True)
except OSError as exc:
    print(f"gone: {exc}", flush=True)
pool.shut_down()
"""

# Another arena's clean-up, told that every base is old enough to be looked at.
CLEANER = """
import sys
from arena.sandbox import cgroups
cgroups.STALE_AFTER = 0
cgroups._remove_stale_bases(sys.argv[1])
"""

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="control groups are Linux's"),
    pytest.mark.skipif("pids" not in cgroups.find_hierarchies(), reason="no pids controller this user may write"),
]


@pytest.fixture
def parent() -> Iterator[cgroups.Hierarchy]:
    """A group of the test's own, below this process's pids group, for the spawners' bases."""
    hierarchy = cgroups.find_hierarchies()["pids"]
    folder = os.path.join(hierarchy.folder, f"owners-{os.urandom(4).hex()}")
    os.mkdir(folder)
    yield hierarchy._replace(folder=folder)
    for path, _, _ in sorted(os.walk(folder), key=lambda entry: -len(entry[0])):
        try:
            os.rmdir(path)
        except OSError:
            pass


def start_owner(parent: cgroups.Hierarchy) -> tuple[subprocess.Popen[str], str]:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(parent.version), parent.folder], cwd=REPO,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    base = owner.stdout.readline().strip()
    assert base and os.path.isdir(base), f"the owner did not start (exit {owner.poll()})"
    return owner, base


def clean(parent: cgroups.Hierarchy, *namespace: str) -> None:
    subprocess.run([*namespace, sys.executable, "-c", CLEANER, parent.folder], cwd=REPO, check=True, timeout=60)


@pytest.mark.skipif(os.geteuid() != 0, reason="a PID namespace of its own needs root")
def test_a_clean_up_in_another_pid_namespace_leaves_a_live_spawners_groups(parent: cgroups.Hierarchy) -> None:
    """Promise: an arena never removes the groups of a spawner that lives, even
    from a PID namespace in which that spawner's processes cannot be seen."""
    owner, base = start_owner(parent)
    try:
        before = sorted(os.listdir(base))
        assert "bot-1" in before and "spawner" in before
        clean(parent, "unshare", "--pid", "--fork", "--mount-proc")
        clean(parent)  # and from this one
        assert sorted(os.listdir(base)) == before
        assert owner.stdin is not None and owner.stdout is not None
        owner.stdin.write("go on\n")
        owner.stdin.flush()
        assert owner.stdout.readline().strip() == "used again"
    finally:
        owner.kill()
        owner.wait()


def test_the_groups_of_a_spawner_that_is_gone_are_removed(parent: cgroups.Hierarchy) -> None:
    """Promise: what a spawner killed outright left behind is removed by the next
    arena's clean-up (its lock died with it)."""
    owner, base = start_owner(parent)
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    assert os.path.isdir(base)
    clean(parent)
    assert not os.path.exists(base)
