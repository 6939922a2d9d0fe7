"""How long the ``arena`` command takes to start, against a bare ``import click``.

Every figure is the best of N fresh processes, so that a busy machine only ever
makes a run slower, never faster. The ratio to ``python -c "import click"`` is
what matters: click's own import is the floor any click command pays.

Run: python bench/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def arena_command() -> list[str]:
    """The installed ``arena`` script next to this Python, else ``python -m arena``."""
    script = Path(sys.executable).with_name("arena")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "arena"]


def best_of(command: list[str], runs: int, cwd: str) -> float:
    """The fastest wall-clock time of ``runs`` fresh processes running ``command``."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    """Print each command's best time and its ratio to the click baseline."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="fresh processes per command (default 10)")
    args = parser.parse_args()
    arena = arena_command()
    commands = {
        'python -c "import click"': [sys.executable, "-c", "import click"],
        "arena --help": [*arena, "--help"],
        "arena bots": [*arena, "bots"],
        "arena --version": [*arena, "--version"],
    }
    # An empty folder and no ARENA_DB: `arena bots` then lists the plug-ins only,
    # the same work on every machine.
    os.environ.pop("ARENA_DB", None)
    with tempfile.TemporaryDirectory() as folder:
        baseline = None
        for label, command in commands.items():
            seconds = best_of(command, args.runs, folder)
            baseline = baseline or seconds
            print(f"{label:<28} {seconds:7.3f} s  {seconds / baseline:5.2f}x")


if __name__ == "__main__":
    main()
