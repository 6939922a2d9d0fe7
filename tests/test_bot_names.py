"""A bot is its name everywhere; bot files in a tournament file are relative to it;
an edited bot file starts a new auto-named tournament; a system without the sandbox
plays an author's own file and refuses everyone else's code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.entry.checks import check_code
from arena.entry.submissions import resolve_bot
from arena.players.plugins import BotSpecError, file_code, make_bot, parse_spec
from arena.protocol.local import UnsandboxedBot
from arena.records import BotCode
from arena.sandbox.system import NoSandbox, sandbox_missing
from arena.store import Store
from arena.tournament.config import ConfigError, load_config

FIRST = """
from arena.bot import Bot

class First(Bot):
    def choose_move(self, board):
        return board.legal_moves()[0]
"""


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.fixture
def league(tmp_path, monkeypatch):
    """A folder holding arena.db with 'mybot' submitted twice (v1, v2)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    with Store(tmp_path / "arena.db") as store:
        store.submissions.submit("mybot", FIRST, "bot", "first.py")
        store.submissions.submit("mybot", FIRST + "\n# v2\n", "bot", "first.py")
    return tmp_path


# --- 1. a bot is its name everywhere --------------------------------------------------


def test_a_bare_name_is_the_newest_version_and_a_version_is_pinned(league):
    with Store(league / "arena.db", read_only=True) as store:
        assert resolve_bot("mybot", store).spec == "mybot@v2"
        assert resolve_bot("mybot@v1:x=1", store).spec == "mybot@v1:x=1"
        assert resolve_bot("mybot", store).code.text.endswith("# v2\n")  # type: ignore[union-attr]
        assert resolve_bot("random", store).code is None


def test_an_unknown_name_is_one_line_naming_the_closest(league):
    with Store(league / "arena.db", read_only=True) as store:
        with pytest.raises(BotSpecError) as info:
            resolve_bot("mybto", store)
        with pytest.raises(BotSpecError, match=r"no version 7 of submitted bot 'mybot'; versions: mybot@v1, mybot@v2"):
            resolve_bot("mybot@v7", store)
    message = str(info.value)
    assert "\n" not in message and message.startswith("unknown bot 'mybto' (did you mean 'mybot'?)")
    assert "submitted to" in message and "installed bots: " in message


def test_match_and_play_take_a_submitted_name(league):
    code, output = run("match", "mybot", "random", "-n", "2")
    assert code == 0 and "mybot@v2" in output, output
    code, output = run("match", "mybto", "random")
    assert code == 2 and "did you mean 'mybot'?" in output and output.count("\n") == 1
    result = CliRunner().invoke(main, ["play", "mybot@v1", "--second"], input="1\ns\nq\n")
    assert result.exit_code == 0, result.output
    with Store(league / "arena.db", read_only=True) as store:
        [bot] = [b for b in store.bots.stored() if b.spec == "mybot@v1"]
    assert bot.source == "submitted mybot@v1" and bot.content_hash  # stored as that version's code


def test_games_bot_takes_a_bare_name_for_every_version(league):
    assert run("tournament", "run", "--bots", "mybot@v1,mybot@v2,random", "--games", "2")[0] == 0
    code, output = run("games", "--bot", "mybot", "--json")
    assert code == 0
    games = json.loads(output)
    assert {g["first"] for g in games} | {g["second"] for g in games} >= {"mybot@v1", "mybot@v2"}
    assert len(games) == 6  # every game has a version of mybot in it
    assert len(json.loads(run("games", "--bot", "mybot@v1", "--json")[1])) == 4
    code, output = run("games", "--bot", "mybto")
    assert code == 2 and "did you mean 'mybot'" in output


# --- 2. bot files in a tournament file are relative to the file ------------------------


def test_a_bot_file_in_a_tournament_file_is_relative_to_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cups").mkdir()
    (tmp_path / "cups" / "mine.py").write_text(FIRST)
    (tmp_path / "cups" / "cup.toml").write_text('bots = ["mine.py:First", "random"]\n')
    assert load_config("cups/cup.toml").bots[0] == str(Path("cups") / "mine.py") + ":First"
    assert load_config("cups/cup.toml", {"bots": ["cups/mine.py", "random"]}).bots[0] == "cups/mine.py"  # flags: here


def test_a_bot_file_only_in_the_current_folder_is_refused_naming_both(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cups").mkdir()
    (tmp_path / "mine.py").write_text(FIRST)  # here, not beside the file
    (tmp_path / "cups" / "cup.toml").write_text('bots = ["mine.py", "random"]\n')
    with pytest.raises(ConfigError) as info:
        load_config("cups/cup.toml")
    message = str(info.value)
    assert message.startswith("cups/cup.toml: bots: bot file 'mine.py' is not next to the tournament file")
    assert str(Path("cups") / "mine.py") in message and "relative to the file" in message


# --- 3. an edited bot file starts a new auto-named tournament ----------------------------


def test_an_edited_bot_file_starts_a_new_auto_named_tournament(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    bot = tmp_path / "c2.py"
    bot.write_text(FIRST)
    command = ("tournament", "run", "--bots", "./c2.py,random", "--games", "2")
    code, first = run(*command)
    assert code == 0 and "New tournament" not in first
    bot.write_text(FIRST + "\n# edited\n")
    code, second = run(*command)
    assert code == 0, second
    [line] = [line for line in second.splitlines() if line.startswith("New tournament")]
    assert "the code of ./c2.py changed since" in line
    name = lambda output: output.split("Tournament '", 1)[1].split("'", 1)[0]  # noqa: E731
    assert name(first) != name(second)
    bot.write_text(FIRST)  # the old code again: the old tournament, resumed
    code, third = run(*command)
    assert code == 0 and name(third) == name(first) and "2 were already stored" in third
    # under a name of one's own, changed code is refused as before
    assert run(*command, "--name", "mine")[0] == 0
    bot.write_text(FIRST + "\n# edited again\n")
    code, output = run(*command, "--name", "mine")
    assert code == 2 and "was played with other code for bot './c2.py'" in output


# --- 4. a system without the sandbox -----------------------------------------------------


@pytest.fixture
def no_sandbox(monkeypatch):
    """This machine, as macOS would be: everything imported first (the standard
    library's own modules read sys.platform when imported)."""
    import arena.protocol.local
    import arena.sandbox.proxy  # noqa: F401

    monkeypatch.setattr(sys, "platform", "darwin")
    assert sandbox_missing() is not None


def test_linux_has_the_sandbox():
    assert sys.platform.startswith("linux") and sandbox_missing() is None


def test_without_a_sandbox_an_own_bot_file_plays_in_this_process_and_says_so(no_sandbox, tmp_path, capsys):
    path = tmp_path / "first.py"
    path.write_text(FIRST)
    bot = make_bot(str(path))
    assert isinstance(bot, UnsandboxedBot)
    report = check_code(file_code(parse_spec(str(path))), own=True)
    assert report.passed, report.text()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "runs without the sandbox" in lines[0] and "darwin" in lines[0]


def test_without_a_sandbox_a_crashing_bot_forfeits_as_in_the_sandbox(no_sandbox, tmp_path):
    report = check_code(BotCode(label="bad.py", text="raise ValueError('no')"), own=True)
    assert not report.passed and "failed to import: ValueError: no" in report.first_failure()


def test_without_a_sandbox_what_an_own_bot_prints_is_its_log(no_sandbox, tmp_path):
    path = tmp_path / "talker.py"
    path.write_text(
        "from arena.bot import Bot\n"
        "class Talker(Bot):\n"
        "    def choose_move(self, board):\n"
        "        print('looking at', board.ply)\n"
        "        return board.legal_moves()[0]\n"
    )
    db = tmp_path / "arena.db"
    code, output = run("match", str(path), "random", "-n", "2", "--openings", "0", "--db", str(db))
    assert code == 0, output
    with Store(db, read_only=True) as store:
        first = next(game for game in store.games.all() if game.first.endswith("talker.py"))
        texts = [stored.log.text for stored in store.games.logs(first.id)]
    assert texts and "looking at 0" in texts[0]


def test_without_a_sandbox_others_code_is_refused(no_sandbox, league, monkeypatch):
    monkeypatch.setenv("ARENA_WEAK_SANDBOX", "1")  # no weaker sandbox to fall back on either
    with pytest.raises(NoSandbox, match="needs the sandbox"):
        check_code(BotCode(label="up.py", text=FIRST))  # a league's upload
    with pytest.raises(NoSandbox):
        make_bot("mybot@v1", submitted={"mybot@v1": BotCode(label="mybot@v1", text=FIRST)})
    (league / "mine.py").write_text(FIRST)
    for args in (["submit", "mine.py", "--name", "other"], ["match", "mybot", "random"],
                 ["tournament", "run", "--bots", "mybot,random"]):
        code, output = run(*args)
        assert code == 2 and "needs the sandbox" in output and output.count("\n") == 1, (args, output)
    with Store(league / "arena.db", read_only=True) as store:
        assert [s.spec for s in store.submissions.all()] == ["mybot@v1", "mybot@v2"]  # nothing submitted
    code, output = run("match", "mine.py", "random", "-n", "2")
    assert code == 0 and "mine.py" in output


def test_without_a_sandbox_a_league_does_not_run(no_sandbox, tmp_path):
    from arena.league.scheduler import create_league, run_league

    with Store(tmp_path / "l.db") as store:
        league = create_league(store, "class", None)
        with pytest.raises(NoSandbox, match="league 'class'"):
            run_league(store, league, until_complete=True)

