"""The README's and the docs pages' examples work: the tournament file loads, the
commands exist, the two set-up commands are the ones CI runs, every shell example
runs, and the README's links and the site's nav lead to pages that exist."""

from __future__ import annotations

import io
import json
import re
import shlex
import shutil
import sqlite3
import unicodedata
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
DOCS = ROOT / "docs"
MKDOCS = (ROOT / "mkdocs.yml").read_text()


def nav_pages(mkdocs: str = MKDOCS) -> list[str]:
    """The pages mkdocs.yml's nav lists, in order. Read without a YAML parser (the
    tests do not need mkdocs installed): each entry is ``- Title: page.md`` or
    ``- page.md``, nested or not."""
    nav = re.search(r"^nav:\n(.*?)(?=^\S|\Z)", mkdocs, re.M | re.S)
    assert nav, "mkdocs.yml has no nav"
    return re.findall(r"^\s*-\s+(?:[^:\n]*:\s*)?(\S+\.md)\s*$", nav.group(1), re.M)


def page(name: str) -> str:
    return (DOCS / name).read_text()


def sources() -> dict[str, str]:
    """The README, then every docs page in the order of the site's nav (the order a
    reader meets them), then any page the nav leaves out: every text whose examples run."""
    listed = [name for name in nav_pages() if (DOCS / name).is_file()]
    rest = sorted(path.name for path in DOCS.glob("*.md") if path.name not in listed)
    return {"README.md": README, **{f"docs/{name}": page(name) for name in [*listed, *rest]}}


def section(text: str, heading: str) -> str:
    """The part of ``text`` under the Markdown heading ``heading`` (say "## The database"),
    up to the next heading of the same level or above."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(f"\n{heading}\n") + 1
    end = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, start + len(heading))
    return text[start : end.start() if end else len(text)]


def test_the_example_tournament_file_loads(tmp_path):
    block = re.search(r"```toml\n(name = \"default\".*?)```", page("tournaments.md"), re.S).group(1)
    path = tmp_path / "example.toml"
    path.write_text(block)
    config = resolve_bots(load_config(str(path)), None)
    assert config.bots == ("random", "minimax:depth=3") and config.games == 10


def test_every_command_is_in_the_readme_table_and_has_an_entry_in_the_docs():
    named = set(re.findall(r"^\| `arena ([a-z][a-z-]*)", README, re.M))
    named |= set(re.findall(r"/ `arena ([a-z][a-z-]*)", README))
    commands = set(main.list_commands(click.Context(main)))  # loaded or not: they load lazily
    assert named == commands, (named - commands, commands - named)
    headings = " ".join(re.findall(r"^### (arena .*)$", "\n".join(sources().values()), re.M))
    described = set(re.findall(r"\barena ([a-z][a-z-]*)", headings))
    assert described == commands, commands - described


def test_the_readme_table_rows_are_short():
    rows = [line for line in README.splitlines() if line.startswith("|")]
    assert rows and max(map(len, rows)) < 120, max(rows, key=len)


def test_ci_runs_the_readme_test_command():
    test_command = re.findall(r"```sh\n(python3 -m venv .*pytest)\n```", README)[0]
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_the_example_bot_is_the_same_in_the_readme_and_on_the_bots_page():
    assert _bot_block() == _bot_block(page("bots.md"))


def test_the_example_bot_reads_its_option_as_an_attribute():
    block = _bot_block()
    namespace: dict[str, object] = {}
    exec(block, namespace)
    centre = namespace["Centre"]
    assert centre.greedy.default is True and list(centre.options) == ["greedy"]
    assert centre(greedy="false").greedy is False and centre().greedy is True


# --- every shell example runs --------------------------------------------------------------

def shell_examples() -> list[tuple[str, str]]:
    """(where, command) for every `arena` command of the README and the docs pages, in
    the order of :func:`sources`."""
    return [(where, command) for where, text in sources().items() for command in readme_examples(text)]


def readme_examples(readme: str = README) -> list[str]:
    """Every `arena` command in a page's ```sh blocks, in order: lines (or the parts
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


def _bot_block(text: str = README) -> str:
    return re.search(r"```python\n(from arena.bot import .*?)```", text, re.S).group(1)


#: Every shell example the README had before its reference moved to docs/: each still
#: runs, from the README or from the page it moved to.
EXAMPLES_BEFORE_THE_DOCS_SITE = [
    "arena tournament run config/default.toml",
    "arena match centre.py minimax -n 10",
    "arena match centre.py:Centre:greedy=false random",
    "arena check my_bot.py",
    "arena submit my_bot.py --name mybot",
    "arena tournament run --bots mybot,minimax,greedy --games 20",
    "arena league create class config/league.toml",
    "arena users add teacher --admin",
    "arena users add alice",
    "arena users add bob",
    "arena league run class --workers 2",
    "arena serve --host 0.0.0.0 --port 8000",
    "arena check my_bot.py",
    "arena submit my_bot.py --server http://192.168.1.20:8000 --token arena_XXXX",
    "arena tournament run config/quick.toml --cluster local:2",
    "arena serve",
    "arena solve 445535 --json",
    "arena analyse 17 --budget 2",
    "arena analyse --tournament default --budget 0.2",
]


def test_the_pages_have_shell_examples_and_the_reader_finds_them():
    examples = readme_examples()
    assert examples[0] == "arena tournament run config/default.toml"  # the quick start, after `&&`
    everywhere = [command for _, command in shell_examples()]
    assert "arena tournament run --bots mybot,minimax,greedy --games 20" in everywhere
    missing = list(EXAMPLES_BEFORE_THE_DOCS_SITE)
    for command in everywhere:
        if command in missing:
            missing.remove(command)
    assert not missing, missing
    assert readme_examples("```sh\nsqlite3 x.db 'select 1'\narena games  # all\n```\n") == ["arena games"]


def test_scaling_keeps_the_command_and_its_flags():
    assert scaled(["arena", "tournament", "run", "--bots", "a,b", "--games", "20"]) == [
        "arena", "tournament", "run", "--bots", "a,b", "--games", "2"]
    assert scaled(["arena", "tournament", "run", "x.toml"]) == ["arena", "tournament", "run", "x.toml", "--games", "2"]
    assert scaled(["arena", "match", "a", "b", "-n", "10"]) == ["arena", "match", "a", "b", "-n", "2"]
    assert scaled(["arena", "analyse", "17", "--budget", "2"]) == ["arena", "analyse", "17", "--budget", "0.01"]
    assert scaled(["arena", "bots"]) == ["arena", "bots"]


def test_every_shell_example_in_the_readme_and_the_docs_runs(tmp_path, monkeypatch):
    """Run in order in one folder (the README's quick start is the tournament the
    analysis examples read); bot files named in an example are the README's own
    example bot."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    shutil.copytree(ROOT / "config", tmp_path / "config")
    runner = CliRunner()
    examples = shell_examples()
    assert len(examples) >= len(EXAMPLES_BEFORE_THE_DOCS_SITE)
    for where, example in examples:
        words = scaled(shlex.split(example))
        for word in words[1:]:
            file = word.split(":")[0]
            if file.endswith(".py") and not (tmp_path / file).exists():
                (tmp_path / file).write_text(_bot_block())
        result = runner.invoke(main, words[1:], catch_exceptions=False)
        assert result.exit_code == 0, f"{where} example {example!r} (run as {shlex.join(words)}):\n{result.output}"


# --- the README's links and the site's nav ----------------------------------------------

def slug(heading: str) -> str:
    """The anchor MkDocs (Python-Markdown's toc) gives a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = unicodedata.normalize("NFKD", text.replace("`", "").replace("*", ""))
    text = re.sub(r"[^\w\s-]", "", text.encode("ascii", "ignore").decode("ascii")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(text: str) -> set[str]:
    without_code = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return {slug(heading) for heading in re.findall(r"^#{1,6} (.+?)\s*$", without_code, re.M)}


def test_slugs_are_the_ones_mkdocs_makes():
    assert slug("The sequential test of a match") == "the-sequential-test-of-a-match"
    assert slug("arena export and arena import") == "arena-export-and-arena-import"
    assert slug("1. Create the league and the accounts (once)") == "1-create-the-league-and-the-accounts-once"
    assert slug("arena --weak-sandbox") == "arena-weak-sandbox"
    assert slug("Files, connections and signals") == "files-connections-and-signals"


def test_every_link_from_the_readme_into_docs_leads_to_a_page_and_heading_that_exist():
    links = re.findall(r"\]\((docs/[^)#\s]*)(?:#([^)\s]+))?\)", README)
    assert links
    for target, anchor in links:
        path = ROOT / target
        assert path.is_file(), f"README links to {target}, which does not exist"
        if anchor:
            assert path.suffix == ".md" and anchor in anchors(path.read_text()), f"README links to {target}#{anchor}"
    linked = {Path(target).name for target, _ in links if target.endswith(".md")}
    assert set(nav_pages()) <= linked, set(nav_pages()) - linked  # the front door leads to every page


def test_the_nav_lists_every_docs_page_once_and_nothing_else():
    listed = nav_pages()
    assert len(listed) == len(set(listed)), listed
    assert set(listed) == {path.name for path in DOCS.glob("*.md")}
    assert listed[0] == "index.md"


def test_the_nav_reader_reads_nested_and_titled_entries():
    text = ("site_name: x\nnav:\n  - Home: index.md\n  - Part:\n      - a.md\n      - B: b.md\n"
            "theme:\n  name: material\n")
    assert nav_pages(text) == ["index.md", "a.md", "b.md"]


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

def _row(text: str, start: str) -> str:
    """The table row of ``text`` that starts with ``| start``."""
    return re.search(rf"^\| {re.escape(start)}.*$", text, re.M).group(0)


def test_the_database_tables_are_the_ones_the_docs_list(tmp_path):
    Store(tmp_path / "arena.db").close()
    with sqlite3.connect(tmp_path / "arena.db") as db:
        tables = {name for (name,) in db.execute("select name from sqlite_master where type = 'table'")
                  if not name.startswith("sqlite_")}
    database = section(page("tournaments.md"), "## The database")
    listed = set(re.findall(r"^\| `(\w+)` \|", database, re.M))
    assert listed == tables
    games = _row(database, "`games`")
    for termination in Termination:
        assert f"`{termination.value}`" in games, termination
    for result in (*RESULTS.values(), UNFINISHED_RESULT):
        assert f"`{result}`" in games, result


#: Every key of a tournament file and the flag of `arena tournament run` that overrides it.
KEY_FLAGS = {
    "name": "--name", "format": "--format", "bots": "--bots", "challengers": "--challengers",
    "games": "--games", "rounds": "--rounds", "seed": "--seed", "private_seeds": "--private-seeds",
    "workers": "--workers", "db": "--db", "isolate": "--isolate",
    "rules.width": "--width", "rules.height": "--height", "rules.connect": "--connect",
    "rules.gravity": "--no-gravity", "rules.scoring": "--scoring", "openings.plies": "--openings",
    "openings.file": "--openings-file", "openings.balanced": "--openings", "openings.margin": "--openings",
    "adjudicate": "--adjudicate", "time.move_seconds": "--move-seconds",
    "time.bank_seconds": "--bank-seconds", "limits.memory_mb": "--memory-mb", "limits.output_kb": "--output-kb",
    "limits.processes": "--processes", "cluster": "--cluster",
    "extra_pairs": "--extra-pairs", "seeding": "--seeding", "decider": "--decider",
}


def test_every_key_of_a_tournament_file_can_be_overridden_on_the_command_line():
    assert "every key can be overridden on the command line" in " ".join(page("tournaments.md").split())
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


def test_mcts_and_the_solver_play_count_rules_as_the_docs_say():
    scoring = " ".join(page("index.md").split("`scoring = \"count\"`")[1].split("\n\n")[0].split())
    assert "refuses" not in scoring and "MCTS at depth 2" in scoring and "`fallback_depth`" in scoring
    from bots.mcts import MctsBot
    from bots.solver import SolverBot

    board = Board(Rules(5, 4, 3, scoring="count"))
    for bot in (MctsBot(seconds=0.05), SolverBot(seconds=0.05)):
        bot.new_game(board.rules, 0, 1)
        choice = bot.choose_move(board.copy())
        assert isinstance(choice, Choice) and choice.move in board.legal_moves()
        assert "minimax" in str(choice.info.get("fallback")), choice.info


def test_the_replay_keys_the_docs_name_work():
    entry = section(page("tournaments.md"), "### arena replay")
    assert all(f"`{key}`" in entry for key in ("n", "p", "j N", "N", "q")), entry
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


def test_the_options_of_these_commands_are_all_on_their_page():
    for path, where in ((("games",), "tournaments.md"), (("standings",), "ratings.md"),
                        (("tournament", "run"), "tournaments.md"), (("check",), "bots.md"),
                        (("submit",), "bots.md")):
        missing = {opt for opt in _options(*path) if opt not in page(where)}
        assert not missing, (path, where, missing)


def test_every_option_of_every_built_in_bot_is_in_its_row_of_the_bots_table():
    bots = section(page("bots.md"), "## Built-in bots")
    for name, entry in installed_bots().items():
        if entry.source.startswith("connectk-arena"):
            row = re.search(rf"^\| `{name}` \|.*$", bots, re.M).group(0)
            missing = {key for key in entry.options if f"`{key}" not in row and f":{key}=" not in row}
            assert not missing, (name, missing)
