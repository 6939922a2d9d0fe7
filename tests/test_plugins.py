"""Finding bots: specs, installed entry points, broken and clashing plug-ins, files."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest

from arena.bot import split_answer
from arena.engine.game import Board, Rules
from arena.players import plugins
from arena.players.plugins import (
    BotChecker,
    BotSpecError,
    check_spec,
    discover,
    file_identity,
    make_bot,
    parse_spec,
    spec_text,
)
from arena.sandbox.proxy import SandboxedBot

BUILT_IN = {"random", "neighbour", "greedy", "blocker", "minimax"}
README = Path(__file__).parent.parent / "README.md"


@pytest.mark.parametrize(
    ("text", "name", "options", "path", "class_name"),
    [
        ("random", "random", {}, None, None),
        ("minimax:depth=6", "minimax", {"depth": "6"}, None, None),
        ("minimax: depth = 6 , seed=2", "minimax", {"depth": "6", "seed": "2"}, None, None),
        ("dir/my_bot.py", "my_bot", {}, "dir/my_bot.py", None),
        ("dir/my_bot.py:Mine", "Mine", {}, "dir/my_bot.py", "Mine"),
        ("dir/my_bot.py:Mine:depth=3", "Mine", {"depth": "3"}, "dir/my_bot.py", "Mine"),
        ("dir/my_bot.py:depth=3", "my_bot", {"depth": "3"}, "dir/my_bot.py", None),
    ],
)
def test_parse_spec(text, name, options, path, class_name):
    spec = parse_spec(text)
    assert (spec.name, spec.options, spec.path, spec.class_name) == (name, options, path, class_name)


@pytest.mark.parametrize("text", ["", "  ", "minimax:depth", "minimax:=3"])
def test_bad_specs_are_refused_with_the_spec_named(text):
    with pytest.raises(BotSpecError, match="spec|key=value"):
        parse_spec(text)


def test_spec_text_is_canonical():
    assert spec_text(parse_spec("minimax:seed=1,depth=3")) == "minimax:depth=3,seed=1"
    assert spec_text(parse_spec("random")) == "random"


def test_the_built_in_bots_are_installed_plug_ins():
    found = discover()
    assert set(found) >= BUILT_IN
    for name in BUILT_IN:
        entry = found[name]
        assert entry.error is None
        assert entry.source.startswith("connectk-arena ")
        assert entry.description
    assert "depth" in found["minimax"].options


def test_options_are_converted_and_checked():
    assert make_bot("minimax:depth=6").depth == 6
    with pytest.raises(BotSpecError, match=r"unknown option 'nope'.*valid options: depth"):
        make_bot("minimax:nope=1")
    with pytest.raises(BotSpecError, match=r"depth='x' must be int"):
        make_bot("minimax:depth=x")


def test_unknown_bot_lists_the_installed_ones():
    with pytest.raises(BotSpecError, match=r"unknown bot 'nobody'; installed bots: .*minimax"):
        make_bot("nobody")


class _FakeDist:
    def __init__(self, name: str) -> None:
        self.metadata = {"Name": name}
        self.version = "9.9"


def _entry_point(name: str, value: str, dist: str) -> metadata.EntryPoint:
    ep = metadata.EntryPoint(name=name, value=value, group=plugins.ENTRY_POINT_GROUP)
    return ep._for(_FakeDist(dist))  # type: ignore[attr-defined]


def test_a_broken_plug_in_is_listed_and_the_others_still_work(monkeypatch):
    real = list(metadata.entry_points(group=plugins.ENTRY_POINT_GROUP))
    broken = _entry_point("broken", "no_such_module_here:Bot", "broken-dist")
    not_a_bot = _entry_point("notabot", "os:path", "odd-dist")
    monkeypatch.setattr(plugins.metadata, "entry_points", lambda group: [*real, broken, not_a_bot])
    found = discover()
    assert "ModuleNotFoundError" in found["broken"].error
    assert found["broken"].source == "broken-dist 9.9"
    assert "not a subclass" in found["notabot"].error
    assert {n for n, e in found.items() if e.error is None} >= BUILT_IN
    with pytest.raises(BotSpecError, match="bot 'broken' cannot be used: failed to import"):
        make_bot("broken", installed=found)
    assert make_bot("random", installed=found).choose_move  # others unaffected


def test_two_plug_ins_with_one_name_are_both_refused(monkeypatch):
    real = list(metadata.entry_points(group=plugins.ENTRY_POINT_GROUP))
    clash = _entry_point("random", "bots.greedy:GreedyBot", "other-dist")
    monkeypatch.setattr(plugins.metadata, "entry_points", lambda group: [*real, clash])
    entry = discover()["random"]
    assert "two plug-ins are named 'random'" in entry.error
    assert "other-dist 9.9" in entry.error and "connectk-arena" in entry.error
    with pytest.raises(BotSpecError, match="two plug-ins"):
        make_bot("random", installed=discover())


ONE_BOT = """
from arena.bot import Bot, Option

class First(Bot):
    '''Always the first legal move.'''
    options = {"offset": Option(0, "ignored")}

    def choose_move(self, board):
        return board.legal_moves()[0]
"""

TWO_BOTS = ONE_BOT + """
class Last(Bot):
    '''Always the last legal move.'''

    def choose_move(self, board):
        return board.legal_moves()[-1]
"""


def first_move(spec: str, board: Board | None = None) -> int:
    """Start a game with a (sandboxed) file bot and return its first answer's move."""
    bot = make_bot(spec)
    try:
        bot.new_game(Rules(), 0, 1)
        return split_answer(bot.choose_move(board or Board()))[0]
    finally:
        bot.close()


def test_a_file_bot_runs_sandboxed(write_bot):
    path = write_bot("first", ONE_BOT)
    assert isinstance(make_bot(path), SandboxedBot)
    assert first_move(path) == 0
    assert check_spec(f"{path}:offset=3").options == {"offset": "3"}
    name, digest = file_identity(path)
    assert name.endswith("first.py") and len(digest) == 64


SHIFTED = """
from arena.bot import Bot, Option

class Shifted(Bot):
    '''The legal move ``offset`` places after the first.'''

    offset = Option(0, "how many legal moves to skip")

    def choose_move(self, board):
        return board.legal_moves()[self.offset]
"""


def test_a_file_bot_gets_its_option_attributes_in_the_sandbox(write_bot):
    path = write_bot("shifted", SHIFTED)
    assert first_move(path) == 0
    assert first_move(f"{path}:offset=2") == 2
    with pytest.raises(BotSpecError, match="unknown option 'ofset'.*valid options: offset"):
        check_spec(f"{path}:ofset=2")


def test_a_file_with_several_bots_needs_a_class_name(write_bot):
    path = write_bot("two", TWO_BOTS)
    with pytest.raises(BotSpecError, match=r"several bots \(First, Last\); pick one with .*:ClassName"):
        check_spec(path)
    assert first_move(f"{path}:Last") == 6
    with pytest.raises(BotSpecError, match="no Bot subclass 'Middle'; it has: First, Last"):
        check_spec(f"{path}:Middle")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("import no_such_module_anywhere\n", "failed to import: ModuleNotFoundError"),
        ("raise RuntimeError('at import')\n", "failed to import: RuntimeError: at import"),
        ("x = (\n", "failed to import: SyntaxError"),
        ("x = 1\n", "defines no Bot subclass and no agent(observation, configuration)"),
    ],
)
def test_bad_bot_files_are_refused_with_the_reason(write_bot, source, message):
    path = write_bot("bad", source)
    with pytest.raises(BotSpecError, match=re.escape(message)):
        check_spec(path)


def test_a_checker_starts_each_sandboxed_bot_once_and_nothing_is_remembered_beyond_it(write_bot, monkeypatch):
    path = write_bot("first", ONE_BOT)
    started: list[str] = []
    monkeypatch.setattr("arena.players.plugins._check_sandboxed", lambda text, bot: (started.append(text), bot.close()))
    checker = BotChecker()
    checker.check(path)
    checker.check(path)
    assert started == [path]
    BotChecker().check(path)  # another owner, another check
    check_spec(path)  # on its own: checks every time
    check_spec(path)
    assert started == [path] * 4


def test_a_bad_option_of_a_file_bot_is_refused(write_bot):
    path = write_bot("first", ONE_BOT)
    with pytest.raises(BotSpecError, match="bad option: .*option offset='x' must be int"):
        check_spec(f"{path}:offset=x")


def test_a_missing_file_is_refused():
    with pytest.raises(BotSpecError, match="does not exist"):
        make_bot("/no/such/bot.py")


def test_changing_a_bot_file_gives_a_new_version(write_bot):
    path = write_bot("first", ONE_BOT)
    before = file_identity(path)[1]
    Path(path).write_text(ONE_BOT.replace("[0]", "[-1]"))
    assert file_identity(path)[1] != before
    assert first_move(path) == 6


def test_the_readme_example_bot_works(tmp_path):
    text = README.read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    path = tmp_path / "centre.py"
    path.write_text(code)
    board = Board.from_moves("445566")
    bot = make_bot(str(path))
    try:
        bot.new_game(Rules(), 0, 1)
        answer = bot.choose_move(board)
    finally:
        bot.close()
    assert answer.move in (2, 6) and answer.info == {"score": 1}  # completes the bottom row
    assert first_move(f"{path}:Centre:greedy=false", Board.from_moves("445566")) == 3


def test_the_registry_keeps_what_it_found_until_refreshed(monkeypatch):
    real = list(metadata.entry_points(group=plugins.ENTRY_POINT_GROUP))
    registry = plugins.BotRegistry()
    assert "latecomer" not in registry.bots()
    late = _entry_point("latecomer", "bots.greedy:GreedyBot", "late-dist")
    monkeypatch.setattr(plugins.metadata, "entry_points", lambda group: [*real, late])
    assert "latecomer" not in registry.bots()  # plug-ins are looked up once...
    assert registry.refresh()["latecomer"].source == "late-dist 9.9"  # ...until asked again
    assert "latecomer" in registry.bots()
