"""The README's examples work: the tournament file loads, the commands exist,
and the two set-up commands are the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

import click

from arena.cli.main import main
from arena.tournament.config import load_config
from arena.tournament.entrants import resolve_bots

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def test_the_example_tournament_file_loads(tmp_path):
    block = re.search(r"```toml\n(name = \"default\".*?)```", README, re.S).group(1)
    path = tmp_path / "example.toml"
    path.write_text(block)
    config = resolve_bots(load_config(str(path)), None)
    assert config.bots == ("random", "minimax:depth=3") and config.games == 10


def test_every_command_in_the_table_exists():
    named = set(re.findall(r"^\| `arena ([a-z]+)", README, re.M))
    named |= set(re.findall(r"/ `arena ([a-z]+)", README))
    commands = set(main.list_commands(click.Context(main)))  # loaded or not: they load lazily
    assert named and named <= commands, named - commands


def test_ci_runs_the_readme_test_command():
    test_command = re.findall(r"```sh\n(python3 -m venv .*pytest)\n```", README)[0]
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_the_example_bot_reads_its_option_as_an_attribute():
    block = re.search(r"```python\n(from arena.bot import .*?)```", README, re.S).group(1)
    namespace: dict[str, object] = {}
    exec(block, namespace)
    centre = namespace["Centre"]
    assert centre.greedy.default is True and list(centre.options) == ["greedy"]
    assert centre(greedy="false").greedy is False and centre().greedy is True
