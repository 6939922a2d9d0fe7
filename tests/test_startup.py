"""``arena`` starts fast: commands load lazily and the light ones import nothing heavy.

These tests check what is imported, not how long it takes (bench/startup.py
measures that): the database library (sqlite-utils, which loads numpy), numba
and the sandbox must stay out of ``arena --help``, ``arena --version`` and
``arena bots`` without a database.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.main import COMMANDS, main

HEAVY = ("sqlite_utils", "numpy", "numba", "arena.sandbox")

# Runs the arena command as the installed script does, then prints every
# imported module as JSON on the last line of stderr (stdout is the command's).
WRAPPER = """
import json, sys
from arena.cli import main
try:
    main(sys.argv[1:], prog_name="arena")
except SystemExit:
    pass
sys.stderr.write("\\n" + json.dumps(sorted(sys.modules)) + "\\n")
"""


def run_arena(args: list[str], cwd: Path, preload_commands: bool = False) -> tuple[str, list[str]]:
    """(stdout, imported modules) of ``arena ARGS`` in a fresh process."""
    preload = "import importlib\nfrom arena.cli.main import COMMANDS\n"
    preload += "for module, _ in COMMANDS.values(): importlib.import_module(module)\n"
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("ARENA_DB", None)
    done = subprocess.run(
        [sys.executable, "-c", (preload if preload_commands else "") + WRAPPER, *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=True,
    )
    return done.stdout, json.loads(done.stderr.splitlines()[-1])


def heavy_modules(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["bots"], ["bots", "--json"]], ids=" ".join)
def test_light_commands_do_not_import_the_database_numba_or_the_sandbox(args: list[str], tmp_path: Path) -> None:
    output, modules = run_arena(args, tmp_path)  # an empty folder: no arena.db
    assert output.strip()
    assert "arena.cli.main" in modules  # the wrapper did see the command's imports
    assert heavy_modules(modules) == []


def test_help_imports_no_command_module(tmp_path: Path) -> None:
    _, modules = run_arena(["--help"], tmp_path)
    assert sorted({module for module, _ in COMMANDS.values()} & set(modules)) == []


def test_help_lists_the_same_commands_as_with_every_command_loaded(tmp_path: Path) -> None:
    lazy, _ = run_arena(["--help"], tmp_path)
    loaded, modules = run_arena(["--help"], tmp_path, preload_commands=True)
    assert "arena.cli.tournament" in modules  # the comparison did load the real commands
    assert lazy == loaded
    listed = lazy.split("Commands:\n", 1)[1].split()
    assert set(COMMANDS) <= set(listed)


def test_the_command_table_matches_the_registered_commands() -> None:
    for module in {module for module, _ in COMMANDS.values()}:
        importlib.import_module(module)
    assert set(main.commands) == set(COMMANDS)
    for name, command in main.commands.items():
        module, summary = COMMANDS[name]
        assert command.callback is not None and command.callback.__module__ == module, name
        assert command.help is not None and command.help.split("\n\n")[0] == summary, name


def test_a_lazy_command_runs(tmp_path: Path) -> None:
    output, modules = run_arena(["colours", "--help"], tmp_path)
    assert "arena.cli.standings" in modules
    assert "Print how each bot does moving first" in output


def test_arena_script_entry_point_is_the_lazy_group() -> None:
    text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert 'arena = "arena.cli:main"' in text
    from arena.cli import main as script_main

    assert script_main is main


def test_ctrl_c_while_the_command_loads_is_one_line_and_130(tmp_path: Path) -> None:
    # The interrupt is raised where the command's first import of click stands, as
    # a Ctrl-C there would be: the command's own handler is not in place yet.
    code = (
        "import builtins\n"
        "real = builtins.__import__\n"
        "def interrupted(name, *args, **kwargs):\n"
        "    if name == 'click':\n"
        "        raise KeyboardInterrupt\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = interrupted\n"
        "from arena.cli import main\n"
        "main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert (run.returncode, run.stderr, run.stdout) == (130, "Interrupted.\n", "")
