"""The open league: accounts, submissions to a league and what they refuse, and the
league runner that plays every new entrant against the field by itself."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.league.accounts import add_user, renew_token, sign_in, user_of_token
from arena.league.policy import Refusal, Refused, retire, submit_to_league
from arena.league.scheduler import LeagueSchedule, config_of, create_league, run_league
from arena.store import Store
from tests.test_cli import dump

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _checks_not_timed_by_the_machines_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about what a league accepts, not about how fast a bot answers:
    the checks give each move 30 s here, so a busy machine never fails a trivial bot
    (the time limit of the checks is tested in tests/test_submit.py)."""
    from arena.entry import checks
    from arena.league import policy

    monkeypatch.setattr(policy, "check_code", lambda code, **kw: checks.check_code(code, **{"seconds": 30.0, **kw}))
BOT = '''from arena.bot import Bot


class {name}(Bot):
    """Plays the first legal move{suffix}."""

    def choose_move(self, board):
        return board.legal_moves()[0]
'''
LEAGUE = """bots = ["random", "greedy"]
games = 2
seed = 3
[openings]
plies = 2
[league]
submissions_per_hour = 3
upload_kb = 4
"""


def bot_source(name: str = "Lefty", suffix: str = "") -> bytes:
    return BOT.format(name=name, suffix=suffix).encode()


@pytest.fixture
def league_db(tmp_path):
    file = tmp_path / "league.toml"
    file.write_text(LEAGUE)
    path = tmp_path / "league.db"
    with Store(path) as store:
        create_league(store, "class", str(file))
        add_user(store, "alice")
        add_user(store, "bob")
        add_user(store, "admin", admin=True)
    return path


def test_a_submission_joins_the_league_and_a_new_version_retires_the_old(league_db):
    with Store(league_db) as store:
        league, alice = store.leagues.check("class"), store.accounts.user("alice")
        first = submit_to_league(store, league, alice, "lefty", bot_source())
        assert first.report.passed and first.entry.status == "active" and first.submission.spec == "lefty@v1"
        second = submit_to_league(store, league, alice, "lefty", bot_source(suffix=", again"))
        assert second.retired == ["lefty@v1"]
        active = [e.spec for e in store.leagues.entries(league.id, status="active")]
        assert active == ["random", "greedy", "lefty@v2"]
        assert [row["action"] for row in store.accounts.audit_log()][-2:] == ["submit", "submit"]


@pytest.mark.parametrize(("who", "name", "source", "kind", "message"), [
    ("bob", "lefty", bot_source(), Refusal.NOT_ALLOWED, "belongs to another author"),
    ("alice", "big", b"# " + b"x" * 5000, Refusal.TOO_LARGE, "takes at most 4 KB"),
    ("alice", "latin", "# caf\xe9\n".encode("latin-1"), Refusal.INVALID, "not UTF-8"),
    ("alice", "broken", b"this is not python(", Refusal.INVALID, "did not pass the checks"),
    ("alice", "Bad Name", bot_source(), Refusal.INVALID, "bad bot name"),
    ("alice", "random", bot_source(), Refusal.INVALID, "installed bot"),
])
def test_every_refusal_leaves_the_database_unchanged(league_db, who, name, source, kind, message):
    with Store(league_db) as store:
        submit_to_league(store, store.leagues.check("class"), store.accounts.user("alice"), "lefty", bot_source())
    before = dump(league_db)
    with Store(league_db) as store, pytest.raises(Refused, match=message) as refused:
        submit_to_league(store, store.leagues.check("class"), store.accounts.user(who), name, source)
    assert refused.value.kind == kind
    assert dump(league_db) == before


def test_submissions_are_rate_limited_per_author(league_db):
    with Store(league_db) as store:
        league, alice = store.leagues.check("class"), store.accounts.user("alice")
        for i in range(3):
            submit_to_league(store, league, alice, "lefty", bot_source(suffix=f" #{i}"))
        before = dump(league_db)
        with pytest.raises(Refused, match="at most 3 per author per hour") as refused:
            submit_to_league(store, league, alice, "lefty", bot_source(suffix=" #4"))
        assert refused.value.kind == Refusal.TOO_MANY
        # another author is not held back by alice's submissions
        submit_to_league(store, league, store.accounts.user("bob"), "righty", bot_source("Righty"))
    assert len(before) < len(dump(league_db))


def test_a_closed_league_takes_only_its_members(tmp_path):
    file = tmp_path / "closed.toml"
    file.write_text('bots = ["random"]\n[league]\nclosed = true\n')
    with Store(tmp_path / "db.db") as store:
        league = create_league(store, "cup", str(file))
        alice = add_user(store, "alice")[0]
        with pytest.raises(Refused, match="closed") as refused:
            submit_to_league(store, league, alice, "lefty", bot_source())
        assert refused.value.kind == Refusal.NOT_ALLOWED
        store.leagues.add_member(league.id, alice.id)
        assert submit_to_league(store, league, alice, "lefty", bot_source()).entry.status == "active"


def test_only_the_author_or_an_admin_retires_a_bot(league_db):
    with Store(league_db) as store:
        league = store.leagues.check("class")
        entry = submit_to_league(store, league, store.accounts.user("alice"), "lefty", bot_source()).entry
        with pytest.raises(Refused, match="not yours") as refused:
            retire(store, league, store.accounts.user("bob"), entry.id)
        assert refused.value.kind == Refusal.NOT_ALLOWED
        assert retire(store, league, store.accounts.user("admin"), entry.id).status == "retired"


def test_passwords_and_tokens_are_stored_only_as_hashes(tmp_path):
    with Store(tmp_path / "db.db") as store:
        user, password, token = add_user(store, "carol")
        assert password not in str(dump(tmp_path / "db.db")) and token not in str(dump(tmp_path / "db.db"))
        assert sign_in(store, "carol", password) == user
        assert sign_in(store, "carol", password + "x") is None and sign_in(store, "nobody", password) is None
        assert user_of_token(store, token) == user
        new = renew_token(store, "carol")
        assert user_of_token(store, token) is None and user_of_token(store, new) is not None


def test_users_commands(tmp_path):
    db = str(tmp_path / "db.db")
    runner = CliRunner()
    added = runner.invoke(main, ["users", "add", "dave", "--db", db])
    assert added.exit_code == 0 and "API token: arena_" in added.output
    assert runner.invoke(main, ["users", "add", "dave", "--db", db]).exit_code == 2
    bad = runner.invoke(main, ["users", "add", "Dave Smith", "--db", db])
    assert bad.exit_code == 2 and "bad user name" in bad.output
    assert runner.invoke(main, ["users", "disable", "dave", "--db", db]).exit_code == 0
    assert "disabled" in runner.invoke(main, ["users", "list", "--db", db]).output
    unknown = runner.invoke(main, ["users", "token", "erin", "--db", db])
    assert unknown.exit_code == 2 and "no user named 'erin'" in unknown.output


def test_league_files_are_checked(tmp_path):
    file = tmp_path / "bad.toml"
    runner = CliRunner()
    for text, message in (('bots = ["nosuchbot"]\n', "nosuchbot"), ("[league]\nopen = true\n", "league.open"),
                          ("[league]\nupload_kb = true\n", "upload_kb must be int")):
        file.write_text(text)
        result = runner.invoke(main, ["league", "create", "x", str(file), "--db", str(tmp_path / "db.db")])
        assert result.exit_code == 2 and message in result.output, result.output


def test_the_newest_entrant_plays_first(league_db):
    with Store(league_db) as store:
        league = store.leagues.check("class")
        submit_to_league(store, league, store.accounts.user("alice"), "lefty", bot_source())
        entries = store.leagues.entries(league.id, status="active")
        schedule = LeagueSchedule(config_of(league.config, league.name), set())
        games = schedule.next_games(entries, {}, 4)
        assert all("lefty@v1" in g.bots for g in games)
        assert {g.first for g in games[:2]} == {g.second for g in games[:2]}  # each opening with both colours


def test_the_league_plays_every_pairing_and_a_new_version_at_once(league_db):
    with Store(league_db) as store:
        league = store.leagues.check("class")
        submit_to_league(store, league, store.accounts.user("alice"), "lefty", bot_source())
        assert run_league(store, league, workers=1, until_complete=True).played == 6  # 3 pairings x 2
        submit_to_league(store, league, store.accounts.user("alice"), "lefty", bot_source(suffix="."))
        assert run_league(store, league, workers=1, until_complete=True).played == 4  # v2 against the 2 others
        assert run_league(store, league, workers=1, until_complete=True).played == 0
        result = CliRunner().invoke(main, ["league", "standings", "class", "--db", str(league_db)])
        assert result.exit_code == 0
        assert "lefty@v2" in result.output and "lefty@v1" not in result.output
        everything = CliRunner().invoke(main, ["league", "standings", "class", "--all-versions",
                                               "--db", str(league_db)])
        assert "lefty@v1" in everything.output


def _games(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("select g.key, b1.spec, b2.spec, g.moves, g.result from games g "
                            "join bots b1 on b1.id = g.first_bot_id join bots b2 on b2.id = g.second_bot_id "
                            "order by g.key").fetchall()
    finally:
        conn.close()


def test_kill_9_and_restart_store_the_games_of_an_uninterrupted_run(tmp_path):
    """Deterministic bots: the league killed mid-run and run again ends with exactly the
    games of a run that was never stopped, none twice."""
    file = tmp_path / "league.toml"
    # Enough games (96, minimax searching deeper) that the kill lands in the middle.
    file.write_text('bots = ["greedy", "blocker", "minimax:depth=3", "neighbour"]\ngames = 16\nseed = 5\n')
    paths = [tmp_path / "whole.db", tmp_path / "killed.db"]
    with Store(paths[0]) as store:
        create_league(store, "l", str(file))
    shutil.copy(paths[0], paths[1])  # one league, with its secret: played twice
    command = [sys.executable, "-m", "arena", "league", "run", "l", "--until-complete", "--workers", "2"]
    subprocess.run([*command, "--db", str(paths[0])], check=True, capture_output=True, timeout=300)
    process = subprocess.Popen([*command, "--db", str(paths[1])], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(_games(paths[1])) < 8:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert 0 < len(_games(paths[1])) < 96
    subprocess.run([*command, "--db", str(paths[1])], check=True, capture_output=True, timeout=300)
    assert _games(paths[1]) == _games(paths[0])
    assert len(_games(paths[0])) == 96  # 6 pairings x 16 games


def test_a_league_on_a_local_cluster_stores_the_games_of_a_local_run(tmp_path):
    """The same league played by the local worker processes and by a local Dask
    cluster (deterministic bots): the same games, with the same keys and moves."""
    file = tmp_path / "league.toml"
    file.write_text('bots = ["greedy", "blocker", "minimax:depth=2"]\ngames = 4\nseed = 9\n')
    paths = [tmp_path / "local.db", tmp_path / "cluster.db"]
    with Store(paths[0]) as store:
        create_league(store, "l", str(file))
    shutil.copy(paths[0], paths[1])  # one league, with its secret: played both ways
    for where, path in zip(("local", "cluster"), paths):
        with Store(path) as store:
            outcome = run_league(store, store.leagues.check("l"), workers=2, until_complete=True,
                                 cluster="local:2" if where == "cluster" else None)
            assert outcome.played == 12 and not outcome.interrupted
    assert _games(paths[1]) == _games(paths[0])


def test_a_bad_cluster_for_a_league_is_one_line(league_db):
    result = CliRunner().invoke(main, ["league", "run", "class", "--cluster", "local:0", "--db", str(league_db)])
    assert result.exit_code == 2
    assert result.output.startswith("Error: --cluster: cluster local:N needs at least one worker process")


def test_the_site_answers_each_kind_of_refusal_with_its_http_status():
    from arena.web.leagues import HTTP_STATUS

    assert HTTP_STATUS == {Refusal.NOT_ALLOWED: 403, Refusal.NOT_FOUND: 404, Refusal.TOO_LARGE: 413,
                           Refusal.INVALID: 422, Refusal.TOO_MANY: 429,
                           Refusal.UNAVAILABLE: 503}
