"""The README's examples work: the tournament file loads, the commands exist,
and the two set-up commands are the ones CI runs."""

from __future__ import annotations

import io
import json
import re
import shlex
import shutil
import sqlite3
from pathlib import Path

import click
from click.testing import CliRunner

from arena.bot import Choice
from arena.cli.main import main
from arena.engine.game import Board, Rules
from arena.players.plugins import installed_bots
from arena.records import RESULTS, UNFINISHED_RESULT, Termination
from arena.store import Store
from arena.terminal.replay import ReplaySession
from arena.tournament import config
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


# --- every shell example runs --------------------------------------------------------------

def readme_examples(readme: str = README) -> list[str]:
    """Every `arena` command in the README's ```sh blocks, in order: lines (or the parts
    of a line between `&&`) that start with `arena` or `.venv/bin/arena`, comments cut."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", readme, re.S):
        for line in block.splitlines():
            for part in line.split(" #")[0].split("&&"):
                words = shlex.split(part)
                if words and words[0] in ("arena", ".venv/bin/arena"):
                    commands.append(shlex.join(["arena", *words[1:]]))
    return commands


def _set_flag(words: list[str], flags: tuple[str, ...], value: str) -> list[str]:
    """``words`` with the value of the first of ``flags`` set to ``value`` (added if absent)."""
    for i, word in enumerate(words[:-1]):
        if word in flags:
            return [*words[: i + 1], value, *words[i + 2 :]]
    return [*words, flags[0], value]


def scaled(words: list[str]) -> list[str]:
    """The same command and flags, made quick: fewer games, smaller time budgets."""
    if "--server" in words:  # needs a league site: check that it parses (tests/test_web_league.py submits)
        return [*words, "--help"]
    if words[:3] == ["arena", "league", "run"]:  # plays until stopped: until its pairings are played
        return [*words, "--until-complete"]
    command = words[:3] if words[:2] == ["arena", "tournament"] else words[:2]
    if command == ["arena", "tournament", "run"]:
        return _set_flag(words, ("--games",), "2")
    if command == ["arena", "match"]:
        return _set_flag(words, ("-n", "--games"), "2")
    if command == ["arena", "analyse"]:
        return _set_flag(words, ("--budget",), "0.01")
    if command == ["arena", "serve"]:  # a server runs until stopped: check that it parses (tests/test_web.py serves)
        return [*words, "--help"]
    if command == ["arena", "solve"]:  # no default budget yet: the empty-ish board takes a minute
        return _set_flag(words, ("--budget",), "1")
    return words


def _bot_block() -> str:
    return re.search(r"```python\n(from arena.bot import .*?)```", README, re.S).group(1)


def test_the_readme_has_shell_examples_and_the_reader_finds_them():
    examples = readme_examples()
    assert any(e.startswith("arena tournament run config/") for e in examples)  # the quick start, after `&&`
    assert "arena tournament run --bots mybot,minimax,greedy --games 20" in examples
    assert readme_examples("```sh\nsqlite3 x.db 'select 1'\narena games  # all\n```\n") == ["arena games"]


def test_scaling_keeps_the_command_and_its_flags():
    assert scaled(["arena", "tournament", "run", "--bots", "a,b", "--games", "20"]) == [
        "arena", "tournament", "run", "--bots", "a,b", "--games", "2"]
    assert scaled(["arena", "tournament", "run", "x.toml"]) == ["arena", "tournament", "run", "x.toml", "--games", "2"]
    assert scaled(["arena", "match", "a", "b", "-n", "10"]) == ["arena", "match", "a", "b", "-n", "2"]
    assert scaled(["arena", "analyse", "17", "--budget", "2"]) == ["arena", "analyse", "17", "--budget", "0.01"]
    assert scaled(["arena", "bots"]) == ["arena", "bots"]


def test_every_shell_example_in_the_readme_runs(tmp_path, monkeypatch):
    """Run in order in one folder (the quick start's tournament is what the analysis
    examples read); bot files named in an example are the README's own example bot."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    shutil.copytree(ROOT / "config", tmp_path / "config")
    runner = CliRunner()
    for example in readme_examples():
        words = scaled(shlex.split(example))
        for word in words[1:]:
            file = word.split(":")[0]
            if file.endswith(".py") and not (tmp_path / file).exists():
                (tmp_path / file).write_text(_bot_block())
        result = runner.invoke(main, words[1:], catch_exceptions=False)
        assert result.exit_code == 0, f"README example {example!r} (run as {shlex.join(words)}):\n{result.output}"


def test_a_tournament_of_bots_alone_is_named_by_its_settings_and_resumes(cli):
    first = cli("tournament", "run", "--bots", "random,greedy", "--games", "2")
    assert first.exit_code == 0, first.output
    name = re.search(r"Tournament '(tournament-[0-9a-f]{8})': 2 games played", first.output).group(1)
    again = cli("tournament", "run", "--bots", "random,greedy", "--games", "2")
    assert again.exit_code == 0, again.output
    assert f"Tournament '{name}': 0 games played" in again.output and "2 were already stored" in again.output
    other = cli("tournament", "run", "--bots", "random,greedy", "--games", "4")
    assert other.exit_code == 0, other.output
    assert name not in other.output and "4 games played" in other.output
    named = cli("tournament", "run", "--bots", "random,greedy", "--games", "2", "--name", "mine")
    assert named.exit_code == 0 and "Tournament 'mine': 2 games played" in named.output


def test_the_default_name_pins_submitted_versions(cli, tmp_path):
    (tmp_path / "my_bot.py").write_text(_bot_block())
    assert cli("submit", "my_bot.py", "--name", "mybot").exit_code == 0
    first = cli("tournament", "run", "--bots", "mybot,random", "--games", "2")
    assert first.exit_code == 0, first.output
    (tmp_path / "my_bot.py").write_text(_bot_block() + "# changed\n")  # new code: mybot@v2
    assert "mybot@v2" in cli("submit", "my_bot.py", "--name", "mybot").output
    second = cli("tournament", "run", "--bots", "mybot,random", "--games", "2")
    assert second.exit_code == 0, second.output  # a new tournament, not "run with different settings"
    names = [re.search(r"Tournament '(\S+)'", r.output).group(1) for r in (first, second)]
    assert names[0] != names[1] and "2 games played" in second.output


def test_the_command_submit_suggests_runs(cli, tmp_path):
    (tmp_path / "my_bot.py").write_text(_bot_block())
    submitted = cli("submit", "my_bot.py", "--name", "mybot")
    assert submitted.exit_code == 0, submitted.output
    hint = re.search(r"play it with: arena (.*)$", submitted.output, re.M).group(1)
    ran = cli(*scaled(["arena", *shlex.split(hint)])[1:])
    assert ran.exit_code == 0, ran.output
    assert "mybot@v1" in ran.output


# --- what the README claims is true ------------------------------------------------------

def _row(start: str) -> str:
    """The README table row that starts with ``| start``."""
    return re.search(rf"^\| {re.escape(start)}.*$", README, re.M).group(0)


def test_the_database_tables_are_the_ones_the_readme_lists(tmp_path):
    Store(tmp_path / "arena.db").close()
    with sqlite3.connect(tmp_path / "arena.db") as db:
        tables = {name for (name,) in db.execute("select name from sqlite_master where type = 'table'")
                  if not name.startswith("sqlite_")}
    section = README.split("## The database")[1].split("```")[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    assert listed == tables
    games = _row("`games`")
    for termination in Termination:
        assert f"`{termination.value}`" in games, termination
    for result in (*RESULTS.values(), UNFINISHED_RESULT):
        assert f"`{result}`" in games, result


#: Every key of a tournament file and the flag of `arena tournament run` that overrides it.
KEY_FLAGS = {
    "name": "--name", "format": "--format", "bots": "--bots", "challengers": "--challengers",
    "games": "--games", "seed": "--seed", "workers": "--workers", "db": "--db", "isolate": "--isolate",
    "rules.width": "--width", "rules.height": "--height", "rules.connect": "--connect",
    "rules.gravity": "--no-gravity", "rules.scoring": "--scoring", "openings.plies": "--openings",
    "openings.file": "--openings-file", "time.move_seconds": "--move-seconds",
    "time.bank_seconds": "--bank-seconds", "limits.memory_mb": "--memory-mb", "limits.output_kb": "--output-kb",
    "limits.processes": "--processes", "cluster": "--cluster",
}


def test_every_key_of_a_tournament_file_can_be_overridden_on_the_command_line():
    assert "every key can be overridden on the command line" in " ".join(README.split())
    sections = {"rules": config._RULES_KEYS, "openings": config._OPENINGS_KEYS, "time": config._TIME_KEYS,
                "limits": config._LIMITS_KEYS}
    keys = {key for key, kind in config._TOP_KEYS.items() if kind is not dict}
    keys |= {f"{section}.{key}" for section, table in sections.items() for key in table}
    assert keys == set(KEY_FLAGS)
    run = main.get_command(click.Context(main), "tournament").get_command(click.Context(main), "run")
    flags = {opt for param in run.params for opt in param.opts}
    assert set(KEY_FLAGS.values()) <= flags, set(KEY_FLAGS.values()) - flags


def test_the_limits_flags_reach_the_tournament(cli, tmp_path):
    bad = cli("tournament", "run", "--bots", "random,greedy", "--memory-mb", "10")
    assert bad.exit_code == 2
    assert bad.output.count("\n") == 1 and "limits.memory_mb must be at least 64" in bad.output
    assert "got 10" in bad.output and "Traceback" not in bad.output
    assert not (tmp_path / "arena.db").exists()
    bad = cli("tournament", "run", "--bots", "random,greedy", "--output-kb", "0")
    assert bad.exit_code == 2 and "limits.output_kb must be at least 1, got 0" in bad.output
    ran = cli("tournament", "run", "--bots", "random,greedy", "--games", "2", "--memory-mb", "256",
              "--output-kb", "8", "--name", "small")
    assert ran.exit_code == 0, ran.output
    with sqlite3.connect(tmp_path / "arena.db") as db:
        (identity,) = db.execute("select identity from tournaments where name = 'small'").fetchone()
    assert json.loads(identity)["limits"] == {"memory_mb": 256, "output_kb": 8}


def test_mcts_and_the_solver_play_count_rules_as_the_readme_says():
    scoring = " ".join(README.split("`scoring = \"count\"`")[1].split("\n\n")[0].split())
    assert "refuses" not in scoring and "MCTS at depth 2" in scoring and "`fallback_depth`" in scoring
    from bots.mcts import MctsBot
    from bots.solver import SolverBot

    board = Board(Rules(5, 4, 3, scoring="count"))
    for bot in (MctsBot(seconds=0.05), SolverBot(seconds=0.05)):
        bot.new_game(board.rules, 0, 1)
        choice = bot.choose_move(board.copy())
        assert isinstance(choice, Choice) and choice.move in board.legal_moves()
        assert "minimax" in str(choice.info.get("fallback")), choice.info


def test_the_replay_keys_the_readme_names_work():
    row = _row("`arena replay")
    assert all(f"`{key}`" in row for key in ("n", "p", "j N", "N", "q")), row
    moves = [3, 3, 4, 4, 2]
    answers = io.StringIO("j 3\nn\np\n5\nj 1\nq\n")
    out = io.StringIO()
    session = ReplaySession(Rules(), moves, input=answers, output=out)
    assert session.run() == 1
    shown = re.findall(r"^ply (\d)/5:", out.getvalue(), re.M)
    assert shown == ["0", "3", "4", "3", "5", "1"], out.getvalue()


def _options(*path: str) -> set[str]:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.get_command(click.Context(main), name)
    return {opt for param in command.params if isinstance(param, click.Option) for opt in param.opts
            if opt.startswith("--") and opt != "--help"}


def test_the_options_of_these_commands_are_all_in_the_readme():
    for path in (("games",), ("standings",), ("tournament", "run"), ("check",), ("submit",)):
        missing = {opt for opt in _options(*path) if opt not in README}
        assert not missing, (path, missing)


def test_every_option_of_every_built_in_bot_is_in_its_row_of_the_bots_table():
    bots = README.split("## Bots")[1].split("\n\n")[1]
    for name, entry in installed_bots().items():
        if entry.source.startswith("connectk-arena"):
            row = re.search(rf"^\| `{name}` \|.*$", bots, re.M).group(0)
            missing = {key for key in entry.options if f"`{key}" not in row and f":{key}=" not in row}
            assert not missing, (name, missing)
