"""Small things a new user trips over: each one line, or the right words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.bot import BotOptionError
from arena.errors import ArenaError
from arena.players.plugins import make_bot
from arena.store import Store, code_description
from arena.text import plural
from arena.tournament.config import load_config
from arena.tournament.executors import ProcessExecutor, make_executor
from arena.tournament.match import match_labels, match_specs, play_match
from arena.tournament.runner import run_tournament
from bots.minimax import MinimaxBot


def assert_one_line_error(result, fragment: str) -> None:
    assert "Traceback" not in result.output
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("depth", ["0", "-3"])
def test_minimax_refuses_a_depth_below_one_as_its_help_says(cli, depth: str) -> None:
    with pytest.raises(BotOptionError, match=f"depth={depth} must be at least 1"):
        MinimaxBot(depth=int(depth))
    with pytest.raises(ArenaError, match=f"depth={depth} must be at least 1"):
        make_bot(f"minimax:depth={depth}")
    assert_one_line_error(cli("match", f"minimax:depth={depth}", "random", "--games", "2"),
                          f"depth={depth} must be at least 1")


def test_minimax_depth_one_still_plays(cli) -> None:
    result = cli("match", "minimax:depth=1", "random", "--games", "2")
    assert result.exit_code == 0, result.output


def test_a_bot_can_play_itself_as_two_labelled_instances(cli) -> None:
    result = cli("match", "random", "random", "--games", "4", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["games"] == 4
    assert set(data["results"]) == {"random", "random#2"}
    for tally in data["results"].values():
        assert tally["wins"] + tally["draws"] + tally["losses"] == 4  # each instance played every game
    a, b = data["results"]["random"], data["results"]["random#2"]
    assert (a["wins"], a["draws"], a["losses"]) == (b["losses"], b["draws"], b["wins"])
    table = cli("match", "random", "random", "--games", "4")
    assert table.exit_code == 0, table.output
    assert "Elo difference (random - random#2)" in table.output


def test_a_self_match_tallies_each_instance_by_its_seat() -> None:
    assert match_labels("random", "greedy") == ("random", "greedy")
    assert match_labels("random", "random") == ("random", "random#2")
    result = play_match(match_specs("greedy", "greedy", 6, seed=3), ("greedy", "greedy"))
    tally = result.tally()
    assert tally["greedy"].games == tally["greedy#2"].games == 6
    assert tally["greedy"].wins == tally["greedy#2"].losses
    # A moves first in the even games: its wins there are the first player's wins.
    first_wins = sum(1 for r in result.records if int(r.spec.key[-1]) % 2 == 0 and r.winner == 0)
    first_wins += sum(1 for r in result.records if int(r.spec.key[-1]) % 2 == 1 and r.winner == 1)
    assert tally["greedy"].wins == first_wins


def test_did_you_mean_is_a_sentence_of_its_own(cli) -> None:
    result = cli("tournament", "rn")
    assert result.exit_code == 2
    assert "?;" not in result.output
    assert "Did you mean 'run'? See '" in result.output  # the program name is the runner's here


def test_an_unknown_command_without_a_suggestion_keeps_its_pointer_to_help(cli) -> None:
    result = cli("nonsense")
    assert result.exit_code == 2
    assert result.output.startswith("Error: No such command 'nonsense'; see '")


@pytest.mark.parametrize(
    "content", [b"\x00\x01\x02", b"7x6c4 44\x0053", b"\x7fELF\x02\x01\x01\x00", b"\x89PNG\r\n\x1a\n"]
)
def test_importing_a_binary_file_says_it_is_not_a_game_file(cli, tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "game.bin"
    path.write_bytes(content)
    result = cli("import", path, "--db", tmp_path / "arena.db")
    if content.startswith(b"\x89"):  # not UTF-8 at all
        assert_one_line_error(result, "is not a text file")
    else:
        assert_one_line_error(result, "not a game file")
    assert not (tmp_path / "arena.db").exists()


def test_plural() -> None:
    assert [plural(n, "game") for n in (0, 1, 2)] == ["0 games", "1 game", "2 games"]
    assert plural(1, "ply", "plies") == "1 ply"
    assert plural(3, "ply", "plies") == "3 plies"


def test_one_game_is_one_game_not_one_games(cli, tmp_path: Path) -> None:
    result = cli("match", "random", "greedy", "--games", "1", "--db", tmp_path / "match.db")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].startswith("1 game, ")
    game = tmp_path / "one.txt"
    game.write_text("7x6c4 4\n")
    imported = cli("import", game, "--db", tmp_path / "arena.db")
    assert imported.exit_code == 0, imported.output
    assert imported.output.rstrip().endswith(", 1 ply")
    shown = cli("show", "1", "--db", tmp_path / "arena.db")
    assert "1 ply;" in shown.output and "1 plies" not in shown.output


# --- workers, submitted bots, replay, the lock file ------------------------------------


def test_no_more_worker_processes_than_games_to_play(db_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []
    original = ProcessExecutor.__init__

    def counting(self: ProcessExecutor, workers: int) -> None:
        original(self, workers)
        started.append(len(self.worker_pids()))

    monkeypatch.setattr(ProcessExecutor, "__init__", counting)
    config = load_config(None, {"name": "few", "bots": ["random", "greedy"], "games": 2, "db": db_path,
                                "workers": 8})
    with Store(db_path) as store:
        outcome = run_tournament(config, store)
    assert (outcome.played, outcome.interrupted) == (2, False)
    assert started == [2]


def test_make_executor_caps_workers_at_the_games() -> None:
    for workers, games, expected in ((8, 3, 3), (2, 10, 2), (4, 0, 1)):
        executor = make_executor(workers, games)
        try:
            assert len(executor.worker_pids()) == expected  # type: ignore[attr-defined]
        finally:
            executor.close()


BOT_SOURCE = '''
import module_that_does_not_exist  # proves the listing never runs the code

from arena.bot import Bot


class Helper:
    """Not a bot."""


class Base(Bot):
    """A base class."""


class Leftmost(Base):
    """Plays the leftmost legal column.

    Nothing more.
    """

    def choose_move(self, board):
        return board.legal_moves()[0]
'''

AGENT_SOURCE = '''"""An agent file's own docstring."""

def helper(x):
    return x


def agent(observation, configuration):
    """Plays the first empty column."""
    return 0
'''


def test_arena_bots_shows_submitted_bots_descriptions_without_running_them(cli, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    with Store(db) as store:
        store.submissions.submit("leftmost", BOT_SOURCE, "bot", "leftmost.py", "Leftmost")
        store.submissions.submit("agent", AGENT_SOURCE, "connectx", "agent.py")
        store.submissions.submit("bare", "def agent(o, c):\n    return 0\n", "connectx", "bare.py")
    table = cli("bots", "--db", db)
    assert table.exit_code == 0, table.output
    rows = {line.split()[0]: line for line in table.output.splitlines() if "@v1" in line}
    assert "Plays the leftmost legal column. (a bot, sha256" in rows["leftmost@v1"]
    assert "Plays the first empty column. (a connectx" in rows["agent@v1"]
    assert "(a connectx" not in rows["bare@v1"] and "a connectx, sha256" in rows["bare@v1"]
    listed = {entry["name"]: entry["description"] for entry in json.loads(cli("bots", "--db", db, "--json").output)}
    assert listed["leftmost@v1"] == "Plays the leftmost legal column."
    assert listed["agent@v1"] == "Plays the first empty column."
    assert listed["bare@v1"] == ""


@pytest.mark.parametrize(
    "source,kind,class_name,expected",
    [
        (BOT_SOURCE, "bot", None, ""),  # two Bot subclasses (Base, Leftmost), none named: the sandbox refuses too
        (BOT_SOURCE, "bot", "Leftmost", "Plays the leftmost legal column."),
        (BOT_SOURCE, "bot", "Base", "A base class."),
        (AGENT_SOURCE, "connectx", None, "Plays the first empty column."),
        ('"""Module."""\ndef first(o, c):\n    """First."""\n\ndef last(o, c):\n    return 0\n',
         "connectx", None, "Module."),
        ("class Nope(:\n", "bot", None, ""),
        ("from arena.bot import Bot\nclass A(Bot):\n    pass\n", "bot", None, ""),
    ],
    ids=["two-bots-unnamed", "leaf", "named", "agent", "agent-without-docstring", "syntax-error", "no-docstring"],
)
def test_code_description(source: str, kind: str, class_name: str | None, expected: str) -> None:
    assert code_description(source, kind, class_name) == expected


def test_a_failed_submit_shows_the_check_lines_as_check_does(cli, write_bot, tmp_path: Path) -> None:
    path = write_bot("illegal", """
        from arena.bot import Bot


        class Illegal(Bot):
            def choose_move(self, board):
                return 99
    """)
    checked = cli("check", path)
    submitted = cli("submit", path, "--db", tmp_path / "arena.db")
    assert checked.exit_code == 1 and submitted.exit_code == 2, submitted.output
    check_lines = [line for line in checked.output.splitlines() if line.startswith("  ")]
    assert any(line.startswith("  FAIL  ") for line in check_lines)
    assert [line for line in submitted.output.splitlines() if line.startswith("  ")] == check_lines
    errors = [line for line in submitted.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and "was not submitted" in errors[0]
    assert "Traceback" not in submitted.output
    with Store(tmp_path / "arena.db") as store:
        assert store.submissions.all() == []


def test_a_submit_refused_before_the_checks_shows_no_check_lines(cli, tmp_path: Path) -> None:
    result = cli("submit", tmp_path / "missing.py", "--db", tmp_path / "arena.db")
    assert result.exit_code == 2
    assert result.output.splitlines() == [line for line in result.output.splitlines() if line.startswith("Error: ")]


def test_replay_labels_opening_plies_as_show_does(cli, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    ran = cli("tournament", "run", "--bots", "random,greedy", "--games", "2", "--name", "q", "--workers", "1",
              "--db", db)
    assert ran.exit_code == 0, ran.output
    with Store(db) as store:
        game = store.games.all()[0]
    plies = game.opening_plies or 0
    assert plies >= 1
    shown = cli("show", str(game.id), "--db", db).output
    assert sum(1 for line in shown.splitlines() if " opening " in line) == plies
    replayed = [line for line in cli("replay", str(game.id), "--db", db, "--delay", "0").output.splitlines()
                if line.startswith("ply ")]
    for ply in range(1, plies + 1):
        assert replayed[ply].startswith(f"ply {ply}/") and ": opening " in replayed[ply], replayed[ply]
        assert "played" not in replayed[ply]
    assert " played " in replayed[plies + 1] and "opening" not in replayed[plies + 1]


def test_the_lock_file_holds_nothing_and_the_docs_say_what_it_is(cli, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    ran = cli("tournament", "run", "--bots", "random,greedy", "--games", "2", "--name", "q", "--workers", "1",
              "--db", db)
    assert ran.exit_code == 0, ran.output
    lock = tmp_path / "arena.db.lock"
    assert lock.read_bytes() == b""  # only byte locks, released when the run ends
    docs = (Path(__file__).parent.parent / "docs" / "tournaments.md").read_text()
    database = docs.split("## The database", 1)[1].split("\n## ", 1)[0]
    assert "`arena.db.lock`" in database and "harmless" in database


def test_a_resumed_run_counts_one_game_as_one(cli, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    args = ("tournament", "run", "--bots", "random,greedy", "--games", "2", "--name", "q", "--workers", "1",
            "--db", db)
    assert cli(*args).exit_code == 0
    with Store(db) as store:
        store.games.delete(store.games.all()[-1].id)
    again = cli(*args)
    assert again.exit_code == 0, again.output
    first = again.output.splitlines()[0]
    assert first.startswith("Tournament 'q': 1 game played in ") and ", 1 was already stored;" in first, first


@pytest.mark.parametrize(("args", "says"), [
    (("play", "random", "--first", "--second"), "--first and --second each say who moves first"),
    (("tournament", "run", "--bots", "random,greedy", "--openings", "2", "--openings-file", "lines.txt"),
     "--openings 2 draws random openings and --openings-file 'lines.txt' reads them from a file"),
    (("tournament", "run", "--bots", "random,greedy", "--bank-seconds", "5"),
     "time.bank_seconds 5 needs time.move_seconds"),
])
def test_flags_that_contradict_each_other_are_refused_not_one_silently_dropped(cli, tmp_path: Path, args,
                                                                                 says: str) -> None:
    db = tmp_path / "arena.db"
    assert_one_line_error(cli(*args, "--db", str(db)), says)
    assert not db.exists()


def test_a_bank_without_a_move_limit_is_refused_in_a_tournament_file_too(tmp_path: Path) -> None:
    file = tmp_path / "t.toml"
    file.write_text('bots = ["random", "greedy"]\n[time]\nbank_seconds = 5\n')
    with pytest.raises(ArenaError, match="time.bank_seconds 5 needs time.move_seconds"):
        load_config(str(file), {})
    file.write_text('bots = ["random", "greedy"]\n[time]\nmove_seconds = 1\nbank_seconds = 5\n')
    assert load_config(str(file), {}).time_control.bank_seconds == 5.0


@pytest.mark.parametrize(("flags", "first"), [((), "X (you) to move"), (("--first",), "X (you) to move"),
                                             (("--second",), "X (random) to move")])
def test_play_first_or_second_each_alone(tmp_path: Path, flags: tuple[str, ...], first: str) -> None:
    from click.testing import CliRunner

    from arena.cli.main import main

    result = CliRunner().invoke(main, ["play", "random", *flags, "--db", str(tmp_path / "a.db")], input="q\n")
    assert result.exit_code == 0 and first in result.output, result.output
