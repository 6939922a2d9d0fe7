"""What bots write: kept per game by ply, bounded, shown to whoever may read the bot's
code; a crash's traceback in the bot's own code; the live --debug; the keep time."""

from __future__ import annotations

import io
import json
import re
import shutil
import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from arena.bot import Bot
from arena.engine.game import Rules
from arena.league.accounts import add_user, set_password
from arena.league.policy import delete_old_logs, submit_to_league
from arena.league.scheduler import create_league, run_league
from arena.protocol import capture
from arena.protocol.bot_log import LogCollector
from arena.records import LOG_BYTES, START, GameSpec, Limits
from arena.referee.referee import play_game
from arena.store import BotIdentity, FinishedGame, Store
from arena.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]")

PRINTER = '''import sys
from arena.bot import Bot

print("loading")


class Printer(Bot):
    """Says what it does, on stdout and stderr, and crashes at its fourth move."""

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        print("new game", player)

    def choose_move(self, board):
        print("thinking at", board.ply, "\\x1b]0;pwned\\x07<b>bold</b>")
        print("doubt at", board.ply, file=sys.stderr)
        moves = board.legal_moves()
        if board.ply >= 6:
            return pick(moves)
        return moves[0]


def pick(moves):
    return moves[99]
'''

LOUD = '''from arena.bot import Bot


class Loud(Bot):
    """Prints {kb} KB at its first move, then plays on quietly."""

    def choose_move(self, board):
        if board.ply < 2:
            print("x" * 1023 * {kb})
        return board.legal_moves()[0]
'''


def spec(first: str, second: str = "random", limits: Limits | None = None) -> GameSpec:
    return GameSpec(key="g", rules=Rules(), first=first, second=second, pairing="p", limits=limits or Limits())


@pytest.fixture
def printer(tmp_path) -> str:
    path = tmp_path / "printer.py"
    path.write_text(PRINTER)
    return str(path)


class InProcessPrinter(Bot):
    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        print("new game", player)

    def choose_move(self, board):
        print("thinking at", board.ply)
        print("doubt at", board.ply, file=sys.stderr)
        moves = board.legal_moves()
        return moves[0] if board.ply < 6 else moves[99]


class Quiet(Bot):
    def choose_move(self, board):
        return board.legal_moves()[-1]


# --- what is kept -------------------------------------------------------------------------------


def test_a_sandboxed_bot_s_output_is_kept_by_ply_with_its_crash_in_its_own_code(printer):
    record = play_game(spec(printer))
    log = record.logs[0]
    assert record.logs[1] is None  # random printed nothing: nothing kept
    parts = dict(log.by_ply())
    assert parts[START] == "loading\nnew game 0\n"
    assert parts[2] == "thinking at 2 \x1b]0;pwned\x07<b>bold</b>\ndoubt at 2\n"  # in the order it printed
    assert [ply for ply, _ in log.by_ply()] == [START, 0, 2, 4, 6]
    # The crash: the bot's own frames (the file by the name its author gave it), not the arena's.
    assert record.reason == 'crashed: IndexError: "list index out of range" (printer.py line 24, in pick)'
    assert [(f.file, f.line, f.function, f.source) for f in log.frames] == [
        ("printer.py", 19, "choose_move", "return pick(moves)"), ("printer.py", 24, "pick", "return moves[99]")]
    assert log.crash == 'IndexError: "list index out of range"'


def test_an_in_process_bot_s_output_is_captured_by_ply_and_not_printed(capsys):
    record = play_game(spec("x", "y"), bots=(InProcessPrinter(), Quiet()))
    log = record.logs[0]
    assert dict(log.by_ply()) == {START: "new game 0\n", 0: "thinking at 0\ndoubt at 0\n",
                                  2: "thinking at 2\ndoubt at 2\n", 4: "thinking at 4\ndoubt at 4\n",
                                  6: "thinking at 6\ndoubt at 6\n"}
    assert capsys.readouterr() == ("", "")  # none of it reached the terminal
    assert record.reason.endswith(", in choose_move)") and "test_bot_logs.py line " in record.reason
    assert all(frame.file == "test_bot_logs.py" for frame in log.frames)  # no frame of the arena's


def test_a_game_whose_bots_print_nothing_keeps_and_stores_nothing():
    record = play_game(spec("random", "greedy"))
    assert record.logs == (None, None)
    assert FinishedGame.of(record).logs is None


@pytest.mark.parametrize("sandboxed", [True, False])
def test_more_than_64_kb_is_cut_with_a_note_and_the_game_goes_on(tmp_path, sandboxed):
    if sandboxed:
        path = tmp_path / "loud.py"
        path.write_text(LOUD.format(kb=100))
        record = play_game(spec(str(path)))
    else:
        class Loud(Bot):
            def choose_move(self, board):
                print("x" * 1023 * 100)
                return board.legal_moves()[0]

        record = play_game(spec("x", "y"), bots=(Loud(), Quiet()))
    log = record.logs[0]
    assert record.termination != "forfeit"
    assert log.cut and len(log.text.encode()) == LOG_BYTES


def test_more_than_output_kb_still_forfeits_and_what_was_kept_is_stored(tmp_path):
    path = tmp_path / "loud.py"
    path.write_text(LOUD.format(kb=200))
    record = play_game(spec(str(path), limits=Limits(output_kb=100)))
    assert (record.termination, record.reason) == ("forfeit", "output: printed more than the 100 KB allowed")
    assert record.logs[0].cut and len(record.logs[0].text.encode()) == LOG_BYTES


def test_a_bot_s_hostile_output_is_kept_as_text_without_nuls():
    collector = LogCollector()
    collector.add_bytes(0, b"ok\x00 \xff\xfe \xe2\x82")  # a NUL, bytes that are no UTF-8, a character cut...
    collector.add_bytes(2, b"\xac end")  # ...and finished in the next piece
    log = collector.log()
    assert log.text == "ok \ufffd\ufffd \u20ac end"
    assert log.plies == ((0, 0), (2, 6))


def test_a_log_is_kept_to_64_kb_of_text_ending_on_a_whole_character():
    # A character cut in two by the bound is left out, not replaced (and so over it).
    collector = LogCollector()
    collector.add_bytes(0, b"x" * (LOG_BYTES - 2))
    collector.add_bytes(2, "\u20ac".encode() * 3)
    collector.add_bytes(4, b"more")  # after the cut: nothing
    log = collector.log()
    assert log.cut and log.text == "x" * (LOG_BYTES - 2) and log.plies == ((0, 0),)
    # Bytes that are no UTF-8 become replacement characters of three bytes each: the
    # bound is on the text kept, not on the bytes written.
    collector = LogCollector()
    collector.add_bytes(0, b"\xff" * LOG_BYTES)
    log = collector.log()
    assert log.cut and len(log.text.encode()) <= LOG_BYTES and set(log.text) == {"\ufffd"}


FORGER = '''import base64, gc, json
from arena.bot import Bot
from arena.protocol.server import Channel


class Forger(Bot):
    """Writes its own answer on the arena's channel: a crash of its making."""

    def choose_move(self, board):
        channel = next(o for o in gc.get_objects() if isinstance(o, Channel))
        frame = ["/srv/arena/arena/referee/referee.py", 5, "<script>alert(1)</script>", "\\x1b[2J" + "y" * 300]
        channel.write_bytes(json.dumps({
            "error": "crashed", "exception": "E" * 1000 + "\\x1b]8;;http://evil\\x07link",
            "traceback": [frame] * 100, "output": base64.b64encode(b"\\xff" * 70000).decode()}).encode() + b"\\n")
        return board.legal_moves()[0]
'''


def test_a_forged_answer_on_the_channel_is_kept_bounded_and_shown_escaped(tmp_path):
    from arena.terminal.bot_logs import log_lines
    from arena.web.pages import environment

    path = tmp_path / "forger.py"
    path.write_text(FORGER)
    record = play_game(spec(str(path)))
    log = record.logs[0]
    assert record.termination == "forfeit"
    assert log.cut and len(log.text.encode()) <= LOG_BYTES
    assert len(log.crash) <= 400 and len(log.frames) == 30
    # No frame told as one in the arena's files: the name alone, as the bot's own are.
    assert {frame.file for frame in log.frames} == {"referee.py"}
    assert all(len(frame.source) <= 200 for frame in log.frames)
    assert not UNSAFE.search("\n".join(log_lines("X", log)))
    page = environment.from_string('{% from "_game_logs.html" import bot_logs %}{{ bot_logs(logs) }}').render(
        logs=[{"side": 0, "mark": "X", "bot": "forger", "visible": True, "lines": log.lines(), "start": "",
               "plies": {}, "cut": log.cut, "crash": log.crash, "frames": log.frames}])
    assert "<script>" not in page and "&lt;script&gt;" in page and not UNSAFE.search(page.replace("\n", ""))


@pytest.mark.parametrize("where", ["init", "import"])
def test_a_bot_that_crashes_before_its_game_keeps_what_it_printed_and_where(tmp_path, where):
    path = tmp_path / "boom.py"
    path.write_text(f'''from arena.bot import Bot
print("loading")


class Boom(Bot):
    def __init__(self):
        super().__init__()
        print("building")
        explode()

    def choose_move(self, board):
        return board.legal_moves()[0]


def explode():
    raise RuntimeError("at {where}")
{"explode()" if where == "import" else ""}
''')
    record = play_game(spec(str(path)))
    log = record.logs[0]
    assert log.crash == f'RuntimeError: "at {where}"'
    assert log.frames[-1] == ("boom.py", 16, "explode", f'raise RuntimeError("at {where}")')
    if where == "init":
        assert record.reason == 'crashed: RuntimeError: "at init" (boom.py line 16, in explode)'
        assert log.text == "loading\nbuilding\n"
    else:
        assert record.reason == "failed to import: RuntimeError: at import" and log.text == "loading\n"


def test_an_in_process_bot_that_replaces_sys_stdout_is_still_captured_and_the_arena_s_output_survives(capsys):
    class Hijacker(Bot):
        def new_game(self, rules, player, seed):
            super().new_game(rules, player, seed)
            sys.stdout = sys.stderr = io.StringIO()  # its own streams, for good

        def choose_move(self, board):
            print("thinking at", board.ply)
            return board.legal_moves()[0]

    record = play_game(spec("x", "y"), bots=(Hijacker(), Quiet()))
    assert not isinstance(sys.stdout, io.StringIO) and not isinstance(sys.stderr, io.StringIO)  # put back
    print("the arena's own line")
    assert capsys.readouterr().out == "the arena's own line\n"
    assert dict(record.logs[0].by_ply())[2] == "thinking at 2\n"


def test_threads_capture_their_own_writes():
    seen: dict[int, str] = {}

    def write(number: int) -> None:
        captured: list[str] = []
        capture.routed()
        capture.into(captured)
        try:
            for _ in range(200):
                print(number, end="")
        finally:
            capture.into(None)
        seen[number] = "".join(captured)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {n: str(n) * 200 for n in range(4)}


class Namer(Bot):
    """Prints its name and the ply at every move; reads its board only, so the
    referee hands it its own board, read-only."""

    reads_board_only = True

    def __init__(self, name: str) -> None:
        super().__init__()
        self.label = name

    def choose_move(self, board):
        print(self.label, board.ply)
        return board.legal_moves()[0] if board.ply % 4 < 2 else board.legal_moves()[-1]


def test_a_bot_given_the_referee_s_board_has_its_lines_filed_under_each_ply():
    record = play_game(spec("x", "y"), bots=(Namer("first"), Namer("second")))
    for side, name in enumerate(("first", "second")):
        lines = dict(record.logs[side].by_ply())
        assert lines and all(text == f"{name} {ply}\n" for ply, text in lines.items()), lines
        assert set(lines) == {move.ply for move in record.moves if move.ply % 2 == side}


def test_games_played_in_threads_at_once_keep_each_bot_s_own_lines(capsys):
    # Each thread plays its games with its own capture: no line of one game's bot
    # may end in another's log, nor escape to the terminal.
    records: dict[int, list] = {}

    def games(number: int) -> None:
        records[number] = [play_game(spec("x", "y"), bots=(Namer(f"a{number}"), Namer(f"b{number}")))
                           for _ in range(30)]

    threads = [threading.Thread(target=games, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for number, played in records.items():
        for record in played:
            for side, name in enumerate((f"a{number}", f"b{number}")):
                lines = dict(record.logs[side].by_ply())
                assert all(text == f"{name} {ply}\n" for ply, text in lines.items()), lines
                assert len(lines) == sum(1 for move in record.moves if move.ply % 2 == side)
    assert capsys.readouterr().out == ""


# --- stored, shown, deleted ---------------------------------------------------------------------


def stored_game(db: Path, record) -> int:
    """``record`` stored in tournament 1 of ``db``; its id."""
    with Store(db) as store:
        store.db.execute("insert into tournaments (name, format, config, identity, rules, seed, status, created_at) "
                         "values ('t', 'round-robin', '{}', '{}', ?, 0, 'finished', '2024-01-01')",
                         [json.dumps(Rules().as_dict())])
        ids = {spec: store.bots.id_of(BotIdentity(spec, spec, {}, "test")) for spec in record.spec.bots}
        return store.games.record_one(1, record, ids)


def test_arena_show_logs_prints_each_ply_s_lines_escaped_and_the_traceback(cli, tmp_path, printer):
    db = tmp_path / "a.db"
    game = stored_game(db, play_game(spec(printer)))
    shown = cli("show", game, "--logs", "--db", db)
    assert shown.exit_code == 0, shown.output
    out = shown.output
    assert "[X start] loading" in out and "[X ply 3] thinking at 2 \\x1b]0;pwned\\x07<b>bold</b>" in out
    assert "[X ply 3] doubt at 2" in out
    assert 'File "printer.py", line 24, in pick' in out and "return moves[99]" in out
    assert "arena" not in out.split("Traceback")[1]  # only the bot's own frames
    # Every line the bot's log gives is marked as its own: its traceback's too, whose
    # exception message is the bot's text and could pass for a line of the arena's.
    log_part = out.split("Log of X", 1)[1].splitlines()[1:]
    assert log_part and all(line.startswith("[X") for line in log_part), log_part
    assert not UNSAFE.search(out)
    assert "Log of O" not in out  # random wrote nothing
    plain = cli("show", game, "--db", db)
    assert "loading" not in plain.output


def test_arena_check_prints_where_the_bot_crashed(cli, tmp_path):
    path = tmp_path / "crashing.py"
    path.write_text(PRINTER.replace("if board.ply >= 6:", "if True:"))
    checked = cli("check", path)
    assert checked.exit_code == 1
    assert "crashed: IndexError" in checked.output and "(crashing.py line 24, in pick)" in checked.output
    assert 'File "crashing.py", line 19, in choose_move' in checked.output
    assert "return moves[99]" in checked.output and "server.py" not in checked.output


def test_arena_play_debug_prints_the_bot_s_lines_as_they_come(tmp_path, printer):
    from click.testing import CliRunner

    from arena.cli.main import main

    result = CliRunner().invoke(main, ["play", printer, "--debug", "--db", str(tmp_path / "p.db")],
                                input="1\n1\nq\n", catch_exceptions=False)
    assert result.exit_code == 0, result.output
    err = result.stderr
    assert f"[{printer} start] loading" in err
    assert f"[{printer} ply 2] thinking at 1 \\x1b]0;pwned\\x07<b>bold</b>" in err
    assert f"[{printer} ply 4] doubt at 3" in err
    assert not UNSAFE.search(err)
    quiet = CliRunner().invoke(main, ["play", printer, "--db", str(tmp_path / "q.db")], input="1\nq\n")
    assert "thinking" not in quiet.stderr


def test_logs_older_than_the_league_keeps_them_are_deleted_and_the_games_stay(tmp_path, printer):
    db = tmp_path / "a.db"
    game = stored_game(db, play_game(spec(printer)))
    with Store(db) as store:
        (tmp_path / "l.toml").write_text('bots = ["random", "greedy"]\n[league]\nlogs_days = 2\n')
        league = create_league(store, "t2", str(tmp_path / "l.toml"))
        league = type(league)(**{**league.__dict__, "tournament_id": 1})  # its games: those of tournament 1
        finished = time.time()
        assert delete_old_logs(store, league, now=finished + 86400) == 0  # a day later: kept
        assert store.games.logs(game)
        assert delete_old_logs(store, league, now=finished + 3 * 86400) == 1  # three days later: gone
        assert store.games.logs(game) == [] and store.games.get(game).reason.startswith("crashed")


def test_a_previous_release_s_database_opens_and_gets_the_logs_table(tmp_path, cli):
    old = tmp_path / "old.db"
    shutil.copy(ROOT / "tests" / "data" / "releases" / "1f58800-interrupted.db", old)
    shown = cli("show", "1", "--logs", "--db", old)  # read as it is: no logs table yet
    assert shown.exit_code == 0 and "No bot wrote anything" in shown.output
    with Store(old) as store:
        assert store.games.logs(1) == []
    tables = {name for (name,) in sqlite3.connect(old).execute("select name from sqlite_master")}
    assert "bot_logs" in tables


# --- the site: to whoever may read the bot's code -----------------------------------------------

LEAGUE = 'bots = ["random"]\ngames = 2\nseed = 3\n[openings]\nplies = 0\n'


@pytest.fixture(scope="module")
def league_site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs-league")
    (folder / "league.toml").write_text(LEAGUE)
    db = folder / "league.db"
    with Store(db) as store:
        league = create_league(store, "class", str(folder / "league.toml"))
        for name in ("alice", "bob"):
            user, _, _ = add_user(store, name)
            set_password(store, user, f"{name}'s own password")
        source = PRINTER.replace("if board.ply >= 6:", "if False:").replace("print(\"loading\")", "")
        submit_to_league(store, league, store.accounts.user("alice"), "printer", source.encode())
        run_league(store, league, workers=1, until_complete=True)
        game = next(g.id for g in store.games.all() if "printer" in g.first)
    return db, game


def signed_in(app, name: str) -> TestClient:
    client = TestClient(app, follow_redirects=False)
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/signin").text).group(1)
    answer = client.post("/signin", data={"name": name, "password": f"{name}'s own password", "csrf": token})
    assert answer.status_code == 303, answer.text
    return client


def test_the_game_page_shows_a_bot_s_lines_beside_its_moves_to_its_author_only(league_site):
    db, game = league_site
    app = create_app(str(db))
    author = signed_in(app, "alice").get(f"/games/{game}")
    assert author.status_code == 200
    assert '<pre class="bot-log">thinking at 0 \\x1b]0;pwned\\x07&lt;b&gt;bold&lt;/b&gt;\ndoubt at 0\n</pre>' \
        in author.text
    assert "<b>bold</b>" not in author.text and "\x1b" not in author.text
    assert author.headers["Cache-Control"] == "no-store"  # a page for one viewer
    for other in (signed_in(app, "bob"), TestClient(app)):
        page = other.get(f"/games/{game}").text
        assert "thinking at" not in page and "doubt at" not in page
        assert re.search(r"The bot wrote \d+ lines; visible to its author", page)


def test_a_game_s_json_and_downloads_carry_no_log_to_anyone(league_site):
    db, game = league_site
    app = create_app(str(db))
    for client in (signed_in(app, "alice"), signed_in(app, "bob"), TestClient(app)):
        for url in (f"/api/games/{game}", f"/games/{game}/export?format=json", f"/games/{game}/export"):
            answer = client.get(url)
            assert answer.status_code == 200 and "thinking at" not in answer.text and "doubt" not in answer.text


@pytest.mark.parametrize("days", [0, -3])
def test_a_keep_time_under_a_day_is_refused_naming_it(tmp_path, days):
    from arena.league.policy import LeagueError, settings_of

    with pytest.raises(LeagueError, match=f"league.logs_days must be at least 1, got {days}$"):
        settings_of({"league": {"logs_days": days}})
