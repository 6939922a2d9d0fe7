"""Tournament definitions: TOML files, overrides, and an error naming file and key
for every mistake."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from arena.engine.game import Rules
from arena.records import TimeControl
from arena.store import Store
from arena.tournament.config import ConfigError, TournamentConfig, load_config
from arena.tournament.entrants import resolve_bots

GOOD = """
    name = "spring cup"
    format = "round-robin"
    bots = ["random", "minimax: depth = 3", "greedy"]
    games = 6
    seed = 42
    workers = 2

    [rules]
    width = 8
    height = 7
    connect = 4
    gravity = true

    [openings]
    plies = 3

    [time]
    move_seconds = 0.5
    bank_seconds = 2
"""

TWO_BOTS = 'bots = ["random", "greedy"]\n'


@pytest.fixture(autouse=True)
def _no_db_env(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("ARENA_DB", raising=False)


@pytest.fixture
def toml(tmp_path: Path):
    """toml("text", name="cup.toml") -> path (str) of a file in tmp_path."""

    def write(text: str, name: str = "cup.toml") -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return str(path)

    return write


def config_error(path: str | None, overrides: dict | None = None) -> str:
    """The message for a mistake in loading or in resolving the bots, as the CLI reports it."""
    with pytest.raises(ConfigError) as info:
        resolve_bots(load_config(path, overrides), None)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    if path is not None:
        assert path in message, message
    return message


# --- good files ------------------------------------------------------------------------


def test_a_valid_file_loads(toml):
    path = toml(GOOD)
    config = load_config(path)
    assert isinstance(config, TournamentConfig)
    assert config.name == "spring cup"
    assert config.format == "round-robin"
    assert config.bots == ("random", "minimax:depth=3", "greedy")  # canonical spec text
    assert config.challengers == ()
    assert config.entrants == ("random", "minimax:depth=3", "greedy")
    assert config.games == 6
    assert config.seed == 42
    assert config.workers == 2
    assert config.rules == Rules(8, 7, 4, gravity=True)
    assert config.openings.plies == 3
    assert config.openings.file is None
    assert config.opening_lines == ()
    assert config.time_control == TimeControl(0.5, 2.0)
    assert isinstance(config.time_control.bank_seconds, float)
    assert config.db == "arena.db"
    assert config.origin == path


def test_defaults_for_a_minimal_file(toml):
    config = load_config(toml(TWO_BOTS))
    assert config.bots == ("random", "greedy")
    assert config.format == "round-robin"
    assert config.games == 2
    assert config.seed == 1
    assert config.workers == 0
    assert config.rules == Rules()
    assert config.openings.plies == 2
    assert config.time_control == TimeControl()


def test_the_name_defaults_to_the_file_stem(toml):
    assert load_config(toml(TWO_BOTS, "autumn-league.toml")).name == "autumn-league"
    assert load_config(toml(TWO_BOTS + 'name = ""\n', "x.toml")).name == "x"


def test_a_command_line_config_is_named_by_its_resolved_settings():
    """No file and no name: ``tournament-`` and a hash of the identity, set once the
    bots are resolved, so the same flags name the same tournament and others another."""
    flags = {"bots": ["random", "greedy"]}
    assert load_config(None, flags).name == ""  # not yet: submitted versions are not pinned
    name = resolve_bots(load_config(None, flags), None).name
    assert re.fullmatch(r"tournament-[0-9a-f]{8}", name)
    assert resolve_bots(load_config(None, flags), None).name == name
    assert resolve_bots(load_config(None, {**flags, "seed": 2}), None).name != name
    assert resolve_bots(load_config(None, {**flags, "name": "cli"}), None).name == "cli"


def test_db_defaults_to_arena_db_or_the_environment(toml, monkeypatch):
    path = toml(TWO_BOTS)
    assert load_config(path).db == "arena.db"
    monkeypatch.setenv("ARENA_DB", "/elsewhere/results.db")
    assert load_config(path).db == "/elsewhere/results.db"
    own = toml(TWO_BOTS + 'db = "mine.db"\n', "own.toml")
    assert load_config(own).db == str(Path(own).parent / "mine.db")  # the file's db beats ARENA_DB
    assert load_config(path, {"db": "flag.db"}).db == "flag.db"


def test_db_in_a_file_is_relative_to_the_file_like_openings_file(toml, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    path = toml(TWO_BOTS + 'db = "league.db"\n', "sub/cup.toml")
    assert load_config(path).db == str(tmp_path / "sub" / "league.db")
    relative = str(Path("sub") / "cup.toml")
    assert load_config(relative).db == str(Path("sub") / "league.db")
    assert load_config(toml(TWO_BOTS + 'db = "/abs/league.db"\n', "abs.toml")).db == "/abs/league.db"
    # --db is the command line's: relative to the current folder
    assert load_config(relative, {"db": "flag.db"}).db == "flag.db"


def test_config_db_names_the_database_load_config_uses(toml, monkeypatch):
    from arena.tournament.config import config_db

    monkeypatch.delenv("ARENA_DB", raising=False)
    with_db = toml(TWO_BOTS + 'db = "league.db"\n', "sub/cup.toml")
    without = toml(TWO_BOTS, "plain.toml")
    assert config_db(with_db) == load_config(with_db).db
    assert config_db(without) == load_config(without).db == "arena.db"
    monkeypatch.setenv("ARENA_DB", "env.db")
    assert config_db(without) == load_config(without).db == "env.db"
    assert config_db(with_db) == load_config(with_db).db
    with pytest.raises(ConfigError, match="does not exist"):
        config_db(str(Path(with_db).parent / "missing.toml"))


def test_gauntlet_loads(toml):
    config = load_config(
        toml('format = "gauntlet"\nchallengers = ["minimax:depth=2"]\nbots = ["random", "greedy"]\n')
    )
    assert config.format == "gauntlet"
    assert config.challengers == ("minimax:depth=2",)
    assert config.bots == ("random", "greedy")
    assert config.entrants == ("minimax:depth=2", "random", "greedy")


def test_a_bot_file_spec_loads(toml, write_bot):
    bot = write_bot(
        "mine",
        """
        from arena.bot import Bot

        class Mine(Bot):
            def choose_move(self, board):
                return board.legal_moves()[0]
        """,
    )
    config = load_config(toml(f'bots = ["random", "{bot}"]\n'))
    assert config.bots == ("random", bot)
    assert resolve_bots(config, None).bots == ("random", bot)


# --- overrides ----------------------------------------------------------------------------


def test_overrides_replace_file_values(toml):
    path = toml(GOOD)
    config = load_config(path, {"bots": ["blocker", "neighbour"], "rules.width": 9, "seed": 5})
    assert config.bots == ("blocker", "neighbour")
    assert config.rules == Rules(9, 7, 4, gravity=True)  # other rules keep the file's values
    assert config.seed == 5
    assert config.games == 6
    assert config.name == "spring cup"


def test_none_overrides_are_ignored(toml):
    path = toml(GOOD)
    config = load_config(path, {"bots": None, "rules.width": None, "seed": None, "games": None})
    assert config == load_config(path)
    assert config == load_config(path, {})
    assert config == load_config(path, None)


def test_overrides_of_sections_absent_from_the_file(toml):
    config = load_config(
        toml(TWO_BOTS),
        {"rules.gravity": False, "rules.connect": 5, "openings.plies": 4, "time.move_seconds": 1, "games": 4},
    )
    assert config.rules == Rules(7, 6, 5, gravity=False)
    assert config.openings.plies == 4
    assert config.time_control == TimeControl(1.0, 0.0)
    assert config.games == 4


def test_overrides_alone_without_a_file():
    config = load_config(None, {"name": "n", "bots": ["random", "greedy"], "rules.width": 5})
    assert config.origin == "<command line>"
    assert config.rules == Rules(5, 6, 4)


# --- identity --------------------------------------------------------------------------------


def test_identity_changes_with_seed_and_bots_only_when_they_change(toml):
    path = toml(GOOD)
    base = load_config(path).identity()
    assert load_config(path).identity() == base
    assert load_config(path, {"seed": 43}).identity() != base
    assert load_config(path, {"bots": ["random", "greedy"]}).identity() != base
    assert load_config(path, {"bots": ["greedy", "random", "minimax:depth=3"]}).identity() != base
    assert load_config(path, {"games": 8}).identity() != base
    assert load_config(path, {"rules.width": 9}).identity() != base
    # Where the results go and how many workers play them is not the tournament.
    assert load_config(path, {"db": "other.db", "workers": 7}).identity() == base
    assert base["seed"] == 42
    assert base["bots"] == ["random", "minimax:depth=3", "greedy"]


# --- errors -----------------------------------------------------------------------------------


def test_missing_file(tmp_path):
    path = str(tmp_path / "nope.toml")
    config_error(path)


def test_invalid_toml(toml):
    message = config_error(toml('bots = ["random", "greedy"\nname = \n'))
    assert "TOML" in message


def test_unknown_top_level_key(toml):
    message = config_error(toml(TWO_BOTS + "rounds = 3\n"))
    assert "rounds" in message


def test_unknown_key_in_rules(toml):
    message = config_error(toml(TWO_BOTS + "[rules]\nwidth = 7\ndiagonals = false\n"))
    assert "rules.diagonals" in message


@pytest.mark.parametrize("section", ["openings", "time"])
def test_unknown_key_in_other_sections(toml, section):
    message = config_error(toml(TWO_BOTS + f"[{section}]\nbogus = 1\n"))
    assert f"{section}.bogus" in message


@pytest.mark.parametrize(
    "text,key",
    [
        ('games = "ten"', "games"),
        ("seed = 1.5", "seed"),
        ("workers = true", "workers"),
        ("rules = 3", "rules"),
        ("[rules]\ngravity = 1", "rules.gravity"),
        ("[rules]\nwidth = true", "rules.width"),
        ('[rules]\nheight = "6"', "rules.height"),
        ('[openings]\nplies = "2"', "openings.plies"),
        ('[time]\nmove_seconds = "fast"', "time.move_seconds"),
        ("[time]\nbank_seconds = true", "time.bank_seconds"),
    ],
)
def test_wrong_types(toml, text, key):
    message = config_error(toml(TWO_BOTS + text + "\n"))
    assert key in message


def test_bots_must_be_a_list(toml):
    message = config_error(toml('bots = "random"\n'))
    assert "bots" in message


def test_bots_must_be_strings(toml):
    message = config_error(toml('bots = ["random", 3]\n'))
    assert "bots" in message


def test_unknown_bot_lists_installed_bots(toml):
    message = config_error(toml('bots = ["random", "deep-blue"]\n'))
    assert "bots" in message
    assert "deep-blue" in message
    for installed in ("blocker", "greedy", "minimax", "neighbour", "random"):
        assert installed in message


@pytest.mark.parametrize("spec,words", [("minimax:depth=x", ["depth", "int"]), ("minimax:nope=1", ["nope", "depth"])])
def test_bad_bot_option(toml, spec, words):
    message = config_error(toml(f'bots = ["random", "{spec}"]\n'))
    assert "bots" in message
    for word in words:
        assert word in message


def test_bad_challenger_spec(toml):
    message = config_error(toml('format = "gauntlet"\nchallengers = ["nobody"]\nbots = ["random"]\n'))
    assert "challengers" in message and "nobody" in message


def test_bad_rules(toml):
    message = config_error(toml(TWO_BOTS + "[rules]\nwidth = 50\n"))
    assert "rules" in message and "width" in message and "50" in message


def test_connect_longer_than_the_board(toml):
    message = config_error(toml(TWO_BOTS + "[rules]\nwidth = 5\nheight = 5\nconnect = 6\n"))
    assert "rules" in message and "connect" in message


def test_fewer_than_two_bots(toml):
    for text in ('bots = ["random"]\n', "games = 2\n"):
        message = config_error(toml(text))
        assert "bots" in message


def test_a_bot_listed_twice(toml):
    message = config_error(toml('bots = ["random", "minimax:depth=3", "greedy", "minimax: depth=3"]\n'))
    assert "bots" in message and "minimax:depth=3" in message and "twice" in message


def test_gauntlet_without_challengers(toml):
    message = config_error(toml('format = "gauntlet"\nbots = ["random", "greedy"]\n'))
    assert "challengers" in message


def test_gauntlet_without_a_field(toml):
    message = config_error(toml('format = "gauntlet"\nchallengers = ["random"]\n'))
    assert "bots" in message


def test_challenger_also_in_the_field(toml):
    message = config_error(
        toml('format = "gauntlet"\nchallengers = ["greedy"]\nbots = ["random", "greedy"]\n')
    )
    assert "challenger" in message and "greedy" in message


def test_round_robin_with_challengers(toml):
    message = config_error(toml(TWO_BOTS + 'challengers = ["blocker"]\n'))
    assert "challengers" in message and "gauntlet" in message


def test_unknown_format(toml):
    message = config_error(toml(TWO_BOTS + 'format = "knockout-cup"\n'))
    assert "format" in message and "knockout-cup" in message and "swiss" in message


@pytest.mark.parametrize("games", [0, -2])
def test_games_must_be_positive(toml, games):
    message = config_error(toml(TWO_BOTS + f"games = {games}\n"))
    assert "games" in message


def test_negative_workers(toml):
    message = config_error(toml(TWO_BOTS + "workers = -1\n"))
    assert "workers" in message


def test_negative_bank(toml):
    message = config_error(toml(TWO_BOTS + "[time]\nbank_seconds = -1.5\n"))
    assert "time.bank_seconds" in message


@pytest.mark.parametrize("move", [0, -1])
def test_non_positive_move_time(toml, move):
    message = config_error(toml(TWO_BOTS + f"[time]\nmove_seconds = {move}\n"))
    assert "time.move_seconds" in message


@pytest.mark.parametrize("plies", [-1, 22])
def test_opening_plies_out_of_range(toml, plies):
    # 7x6 has 42 cells; at most half of them may be opening plies.
    message = config_error(toml(TWO_BOTS + f"[openings]\nplies = {plies}\n"))
    assert "openings.plies" in message


def test_override_errors_name_the_file_too(toml):
    path = toml(GOOD)
    message = config_error(path, {"bots": ["random", "nobody"]})
    assert "nobody" in message
    message = config_error(path, {"rules.width": 2})
    assert "width" in message


# --- opening files ---------------------------------------------------------------------------


def test_a_good_openings_file_relative_to_the_config_folder(toml, tmp_path, monkeypatch):
    (tmp_path / "league").mkdir()
    (tmp_path / "league" / "lines.txt").write_text(
        "# favourite openings\n44\n\n4 3 5  # with a comment\n1,7\n", encoding="utf-8"
    )
    toml(TWO_BOTS + '[openings]\nfile = "lines.txt"\n', "league/cup.toml")
    # The config is named relative to the working directory; the openings file is
    # found next to the config, not in the working directory.
    monkeypatch.chdir(tmp_path)
    config = load_config("league/cup.toml")
    assert config.opening_lines == ((3, 3), (3, 2, 4), (0, 6))
    assert config.openings.file == "lines.txt"
    assert config.identity()["openings"]["lines"] == [[3, 3], [3, 2, 4], [0, 6]]


def test_an_openings_file_without_gravity(toml, tmp_path):
    (tmp_path / "cells.txt").write_text("a1c3\nb2\n", encoding="utf-8")
    path = toml(TWO_BOTS + '[rules]\nwidth = 5\nheight = 5\ngravity = false\n[openings]\nfile = "cells.txt"\n')
    config = load_config(path)
    assert config.opening_lines == ((0, 12), (6,))


def test_an_absolute_openings_path(toml, tmp_path):
    lines = tmp_path / "elsewhere" / "o.txt"
    lines.parent.mkdir()
    lines.write_text("4\n", encoding="utf-8")
    config = load_config(toml(TWO_BOTS + f'[openings]\nfile = "{lines}"\n'))
    assert config.opening_lines == ((3,),)


def test_missing_openings_file(toml):
    message = config_error(toml(TWO_BOTS + '[openings]\nfile = "absent.txt"\n'))
    assert "openings.file" in message and "absent.txt" in message


@pytest.mark.parametrize(
    "content,number",
    [
        ("44\n1111111\n", 2),  # column 1 overflows on the seventh stone
        ("9\n", 1),  # no column 9 on a 7-wide board
        ("44\n\n4x\n", 3),
    ],
)
def test_openings_file_with_an_illegal_line(toml, tmp_path, content, number):
    (tmp_path / "bad.txt").write_text(content, encoding="utf-8")
    message = config_error(toml(TWO_BOTS + '[openings]\nfile = "bad.txt"\n'))
    assert "openings.file" in message and "bad.txt" in message
    assert f"line {number}" in message


def test_openings_file_with_a_finished_game(toml, tmp_path):
    (tmp_path / "won.txt").write_text("44\n1212121\n", encoding="utf-8")
    message = config_error(toml(TWO_BOTS + '[openings]\nfile = "won.txt"\n'))
    assert "openings.file" in message and "line 2" in message and "over" in message


@pytest.mark.parametrize("content", ["", "\n\n", "# only a comment\n   \n"])
def test_empty_openings_file(toml, tmp_path, content):
    (tmp_path / "empty.txt").write_text(content, encoding="utf-8")
    message = config_error(toml(TWO_BOTS + '[openings]\nfile = "empty.txt"\n'))
    assert "openings.file" in message and "empty.txt" in message


# --- loading is pure; resolving the bots is a step of its own --------------------------------

BROKEN_BOT = """
    import no_such_module_anywhere

    from arena.bot import Bot

    class Broken(Bot):
        def choose_move(self, board):
            return board.legal_moves()[0]
"""

GOOD_BOT = """
    from arena.bot import Bot

    class Good(Bot):
        def choose_move(self, board):
            return board.legal_moves()[0]
"""


@pytest.fixture
def no_processes_or_databases(monkeypatch: pytest.MonkeyPatch):
    """Any bot process started, or any database opened, fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("loading a config must start no process and open no database")

    monkeypatch.setattr("arena.sandbox.proxy.SandboxedBot._spawn", refuse)
    monkeypatch.setattr("arena.store.Store.__init__", refuse)


def test_loading_starts_no_bot_process(toml, write_bot, no_processes_or_databases):
    broken = write_bot("broken", BROKEN_BOT)
    path = toml(f'bots = ["random", "{broken}", "missing.py", "deep-blue"]\n')
    config = load_config(path)
    assert config.bots == ("random", broken, str(Path(path).parent / "missing.py"), "deep-blue")  # beside the file
    assert not config.resolved and config.submitted == ()


def test_loading_opens_no_database(toml, tmp_path, no_processes_or_databases):
    db = tmp_path / "league.db"
    db.write_bytes(b"")  # exists, so a lookup of submitted bots would open it
    config = load_config(toml(f'bots = ["random", "x@v1"]\ndb = "{db}"\n'))
    assert config.bots == ("random", "x@v1") and config.db == str(db)


def test_a_bot_that_fails_its_sandbox_check_is_refused_when_resolved(toml, write_bot):
    broken = write_bot("broken", BROKEN_BOT)
    path = toml(f'bots = ["random", "{broken}"]\n')
    config = load_config(path)
    with pytest.raises(ConfigError, match="failed to import: ModuleNotFoundError") as info:
        resolve_bots(config, None)
    assert str(info.value).startswith(f"{path}: bots: ")


def test_submitted_bots_are_resolved_against_the_store(toml, tmp_path, write_bot):
    store = Store(tmp_path / "league.db")
    source = Path(write_bot("good", GOOD_BOT)).read_text()
    store.submissions.submit("good", source, "bot", "good.py")
    store.submissions.submit("good", source + "\n# v2\n", "bot", "good.py")
    config = load_config(toml('bots = ["random", "good", "good@v1"]\n'))
    assert config.bots == ("random", "good", "good@v1")
    resolved = resolve_bots(config, store)
    assert resolved.resolved
    assert resolved.bots == ("random", "good@v2", "good@v1")
    assert dict(resolved.submitted)["good@v1"].text == source
    assert dict(resolved.submitted)["good@v2"].text == source + "\n# v2\n"
    assert resolve_bots(resolved, None) is resolved  # resolved once is resolved


def test_a_submitted_bot_listed_twice_is_found_once_resolved(toml, tmp_path, write_bot):
    store = Store(tmp_path / "league.db")
    store.submissions.submit("good", Path(write_bot("good", GOOD_BOT)).read_text(), "bot", "good.py")
    path = toml('bots = ["random", "good", "good@v1"]\n')
    with pytest.raises(ConfigError, match="bots: bot 'good@v1' is listed twice"):
        resolve_bots(load_config(path), store)


def test_a_submitted_bot_without_its_database_is_unknown(toml):
    message = config_error(toml('bots = ["random", "x@v1"]\n'))
    assert "unknown bot 'x@v1'" in message
