"""Program bots: any executable speaking protocol v1 on stdin/stdout plays in the
arena, sandboxed, named ``cmd:PATH`` or by a folder with ``bot.toml``.

The programs here are Python scripts run by the system's ``python3`` (what the
sandbox shows of ``/usr``), written as a program in another language would be:
they know nothing of the arena but the protocol."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from arena.engine.game import Rules
from arena.players.plugins import BotChecker, BotSpecError, make_bot, parse_spec, spec_text
from arena.records import GameSpec, TimeControl
from arena.referee.referee import play_game
from arena.store import Store

pytestmark = pytest.mark.skipif(shutil.which("python3", path="/usr/bin:/bin") is None,
                                reason="the system's python3 runs these programs")

# A program of the protocol: answers hello with what HELLO holds, then plays the
# leftmost legal column; BEFORE_HELLO and ON_MOVE are hooks for the flawed ones.
PROGRAM = '''\
#!/usr/bin/env python3
import json, sys, time
HELLO = {hello}
def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()
{before_hello}
options, rules = {{}}, None
for line in sys.stdin:
    request = json.loads(line)
    kind = request["type"]
    if kind == "hello":
        send(HELLO)
    elif kind == "new_game":
        options, rules = request.get("options", {{}}), request["rules"]
        print("options", json.dumps(options, sort_keys=True), file=sys.stderr, flush=True)
        send({{"ok": True}})
    elif kind == "move":
        heights = [0] * rules["width"]
        for move in request["moves"]:
            heights[move] += 1
        column = next(c for c in range(rules["width"]) if heights[c] < rules["height"])
        print("ply", len(request["moves"]), "plays", column, file=sys.stderr, flush=True)
{on_move}
        send({{"move": column, "info": {{"depth": options.get("depth", 0), "pv": [column]}}}})
    elif kind == "quit":
        print("quit", file=sys.stderr, flush=True)
        sys.exit(0)
'''

HELLO = {"type": "hello", "protocol": 1, "name": "lefty", "author": "A. Student",
         "options": {"depth": {"type": "int", "default": 2, "help": "plies", "min": 1, "max": 9},
                     "greedy": {"type": "bool", "default": False, "help": "take wins"}},
         "variants": [{"width": [4, 9], "height": [4, 9], "connect": [3, 5], "gravity": [True]}]}


def write_program(folder: Path, name: str = "lefty", hello: dict | None = None, before_hello: str = "",
                  on_move: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(PROGRAM.format(hello=repr(hello or HELLO), before_hello=textwrap.dedent(before_hello),
                                   on_move=textwrap.indent(textwrap.dedent(on_move), " " * 8)))
    path.chmod(0o755)
    return path


def game(first: str, second: str = "random", rules: Rules | None = None, clock: TimeControl | None = None,
         seed: int = 3):
    spec = GameSpec("k", rules or Rules(), first, second, "p", seed=seed, time_control=clock or TimeControl(5.0))
    return play_game(spec)


def test_an_executable_plays_a_whole_game_sandboxed_with_its_stderr_as_its_log(tmp_path: Path) -> None:
    write_program(tmp_path)
    record = game(f"cmd:{tmp_path}/lefty:depth=4", "random")
    assert record.termination != "forfeit", record.reason
    assert {move.info["depth"] for move in record.moves[::2]} == {4}  # the option, typed as it declared it
    assert record.moves[0].info["pv"] == [0]


def test_a_program_logs_what_it_wrote_on_stderr_by_ply(tmp_path: Path) -> None:
    write_program(tmp_path)
    record = game(f"cmd:{tmp_path}/lefty", seed=1)
    assert record.termination != "forfeit", record.reason
    by_ply = dict(record.logs[0].by_ply())
    assert 'options {}' in by_ply["start"]
    assert by_ply[0] == "ply 0 plays 0\n" and by_ply[2] == "ply 2 plays 0\n"


def test_a_folder_with_bot_toml_is_a_bot_named_by_its_manifest_and_built_once(tmp_path: Path) -> None:
    folder = tmp_path / "lefty-bot"
    write_program(folder, "play.py")
    (folder / "bot.toml").write_text('name = "lefty"\nlanguage = "python"\n'
                                     'build = ["sh", "-c", "echo built >> built.txt"]\nrun = "./play.py"\n')
    spec = parse_spec(f"{folder}:depth=3")
    assert (spec.program, spec.name, spec.options) == (True, "lefty", {"depth": "3"})
    assert parse_spec(spec_text(spec)) == spec
    checker = BotChecker()
    checker.check(f"{folder}:depth=3")
    checker.check(f"{folder}:depth=3")
    assert (folder / "built.txt").read_text() == "built\n"  # once a checker
    record = game(f"{folder}:depth=3")
    assert record.termination != "forfeit", record.reason


@pytest.mark.parametrize(("manifest", "message"), [
    (None, "has no bot.toml"),
    ('name = "x"\n', "no run command"),
    ('run = "./x"\nlanguge = "c"\n', "unknown key 'languge'"),
    ('run = "./x"\nlanguage = "cobol"\n', "language 'cobol' is not one of"),
    ('run = "./x"\nname = "a b"\n', "name must be a word"),
    ('run = [1]\n', "run must be a command"),
    ("run = \n", "not valid TOML"),
    ('run = "true"\nbuild = ["false"]\n', r"its build failed \(exit 1\)"),
    ('run = "true"\nbuild = ["no-such-compiler-here"]\n', "is not installed here"),
])
def test_a_bad_program_is_refused_in_one_line_before_any_game(tmp_path: Path, manifest: str | None,
                                                              message: str) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    if manifest is not None:
        (folder / "bot.toml").write_text(manifest)
    with pytest.raises(BotSpecError, match=message) as caught:
        BotChecker().check(str(folder))
    assert "\n" not in str(caught.value)


def test_a_file_that_is_not_executable_or_not_there_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("#!/bin/sh\n")
    with pytest.raises(BotSpecError, match=r"is not executable; make it so \(chmod \+x"):
        BotChecker().check(f"cmd:{tmp_path}/plain")
    with pytest.raises(BotSpecError, match="does not exist"):
        BotChecker().check(f"cmd:{tmp_path}/missing")


@pytest.mark.parametrize(("options", "message"), [
    ("dept=3", r"the bot has no option .dept. \(did you mean .depth.\?\)"),
    ("depth=deep", "option depth='deep': not a int"),
    ("depth=12", "option depth=12: at most 9"),
    ("greedy=maybe", "option greedy='maybe': not a bool"),
])
def test_options_are_checked_against_what_the_program_declares(tmp_path: Path, options: str, message: str) -> None:
    write_program(tmp_path)
    with pytest.raises(BotSpecError, match=message):
        BotChecker().check(f"cmd:{tmp_path}/lefty:{options}")


def test_typed_options_reach_the_program_in_new_game(tmp_path: Path) -> None:
    write_program(tmp_path, on_move='print("got", json.dumps(options, sort_keys=True), file=sys.stderr)')
    bot = make_bot(f"cmd:{tmp_path}/lefty:depth=5,greedy=yes", {})
    assert bot.program_options == {"depth": "5", "greedy": "yes"}
    bot.close()
    record = game(f"cmd:{tmp_path}/lefty:depth=5,greedy=yes")
    assert 'got {"depth": 5, "greedy": true}' in record.logs[0].text


def test_a_game_outside_the_declared_variants_is_refused_before_it_starts(tmp_path: Path) -> None:
    write_program(tmp_path)
    checker = BotChecker()
    with pytest.raises(BotSpecError, match=r"bot .*lefty. does not play 10x10 connect 4: it declares "
                                           r"4-9x4-9 connect 3-5 with gravity"):
        checker.check(f"cmd:{tmp_path}/lefty", rules=Rules(width=10, height=10))
    checker.check(f"cmd:{tmp_path}/lefty", rules=Rules(width=6, height=5, connect=3))
    # In a game all the same (a bot never checked): its forfeit, with the reason.
    record = game(f"cmd:{tmp_path}/lefty", rules=Rules(width=5, height=5, gravity=False))
    assert record.termination == "forfeit" and "does not play 5x5 connect 4, no gravity" in record.reason


def test_no_variants_declared_means_connect_four_only(tmp_path: Path) -> None:
    write_program(tmp_path, hello={"type": "hello", "protocol": 1, "name": "four"})
    assert game(f"cmd:{tmp_path}/lefty").termination != "forfeit"
    record = game(f"cmd:{tmp_path}/lefty", rules=Rules(width=6, height=5))
    assert "does not play 6x5 connect 4: it declares 7x6 connect 4 with gravity" in record.reason


def test_start_up_has_its_own_clock_outside_the_move_clock(tmp_path: Path) -> None:
    """A program that takes a while to start (a JVM, the BEAM) plays under a move time
    far shorter than its start; one slower than the start limit forfeits on time."""
    write_program(tmp_path, before_hello="time.sleep(1.5)")
    record = game(f"cmd:{tmp_path}/lefty", clock=TimeControl(0.5))
    assert record.termination != "forfeit", record.reason
    from arena.records import Limits

    spec = GameSpec("k", Rules(), f"cmd:{tmp_path}/lefty", "random", "p", seed=3, time_control=TimeControl(0.5),
                    limits=Limits(start_seconds=0.5))
    slow = play_game(spec)
    assert slow.termination == "forfeit" and slow.reason == "time: no answer within 0.5 s"


def test_a_program_that_ignores_quit_is_ended_and_its_result_stands(tmp_path: Path) -> None:
    write_program(tmp_path, hello={**HELLO, "variants": [{"gravity": [True]}]})
    stubborn = (PROGRAM.replace('        sys.exit(0)', '        time.sleep(60)'))
    (tmp_path / "stubborn").write_text(stubborn.format(hello=repr(HELLO), before_hello="", on_move=""))
    (tmp_path / "stubborn").chmod(0o755)
    record = game(f"cmd:{tmp_path}/stubborn", f"cmd:{tmp_path}/lefty")
    assert record.termination != "forfeit", record.reason
    assert record.winner == 0  # both play the leftmost column: the first to move wins it


def test_a_program_that_crashes_forfeits_with_its_exit_code_and_last_words(tmp_path: Path) -> None:
    write_program(tmp_path, on_move='print("out of ideas", file=sys.stderr, flush=True); sys.exit(3)')
    record = game(f"cmd:{tmp_path}/lefty")
    assert (record.termination, record.reason, record.winner) == ("forfeit", "exited with code 3", 1)
    assert record.logs[0].by_ply()[-1] == (0, "ply 0 plays 0\nout of ideas\n")


def test_a_tournament_file_names_program_bots_relative_to_itself(tmp_path: Path, cli) -> None:
    folder = tmp_path / "conf" / "bots" / "lefty"
    write_program(folder, "play.py")
    (folder / "bot.toml").write_text('name = "lefty"\nrun = "./play.py"\n')
    write_program(tmp_path / "conf" / "bots", "solo")
    (tmp_path / "conf" / "t.toml").write_text(
        'name = "langs"\nbots = ["bots/lefty:depth=2", "cmd:bots/solo", "random"]\ngames = 1\n'
        '[time]\nmove_seconds = 5\n')
    os.chdir(tmp_path)
    result = cli("tournament", "run", "conf/t.toml", "--db", str(tmp_path / "a.db"))
    assert result.exit_code == 0, result.output
    with Store(tmp_path / "a.db") as store:
        games = store.games.all()
        assert games and all(g.reason is None or "forfeit" not in g.reason for g in games)
    assert "lefty" in result.output and "solo" in result.output


def test_a_stored_game_of_a_program_carries_its_info_as_json(tmp_path: Path) -> None:
    write_program(tmp_path)
    record = game(f"cmd:{tmp_path}/lefty:depth=3")
    json.dumps([move.info for move in record.moves])  # what the store writes


def test_an_installed_plug_in_can_be_a_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plug-in's entry point may name an arena.bot.Program: the bot is then that
    program, played sandboxed under the plug-in's name."""
    from importlib import metadata

    from arena.players.plugins import _load_entry_point, load_entry

    write_program(tmp_path / "lefty_plugin" / "engine")
    (tmp_path / "lefty_plugin" / "__init__.py").write_text(
        "from pathlib import Path\nfrom arena.bot import Program\n"
        "LEFTY = Program(str(Path(__file__).parent / 'engine' / 'lefty'), 'plays the leftmost column')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = _load_entry_point(metadata.EntryPoint("lefty", "lefty_plugin:LEFTY", "arena.bots"))
    assert entry.error is None and entry.description == "plays the leftmost column"
    installed = {"lefty": entry}
    assert load_entry(parse_spec("lefty"), installed) is entry
    BotChecker(installed).check("lefty:depth=2")
    with pytest.raises(BotSpecError, match="the bot has no option 'width'"):
        BotChecker(installed).check("lefty:width=2")
    bot = make_bot("lefty:depth=2", installed)
    record = play_game(GameSpec("k", Rules(), "lefty", "random", "p", seed=2, time_control=TimeControl(5.0)),
                       bots=(bot, None))
    assert record.termination != "forfeit", record.reason
    assert {move.info["depth"] for move in record.moves[::2]} == {2}
    broken = _load_entry_point(metadata.EntryPoint("x", "lefty_plugin:Path", "arena.bots"))
    assert broken.error == "lefty_plugin:Path is not a subclass of arena.bot.Bot nor an arena.bot.Program"
