"""A league's gate: a new version enters only once a pentanomial SPRT against its
author's previous version accepts it. Its settings are checked when the league file
is read; it lets a clearly stronger version in and keeps a clearly weaker one out
(and errs no more often than its alpha and beta, on simulated results); its games
never count in the league's standings; a league stopped mid-test resumes it, and a
decision lost with the process is made again from the stored games."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cli.main import main
from arena.league.accounts import add_user
from arena.league.gate import GateError, Tally, game_number, gate_of, stored_tally
from arena.league.policy import retire, submit_to_league
from arena.league.scheduler import create_league, run_league
from arena.ratings.sprt import ACCEPT_H0, ACCEPT_H1, CONTINUE, Outcomes, Sprt, expected_score
from arena.store import Store

LEFTY = '''from arena.bot import Bot


class Lefty(Bot):
    """Plays the first legal move{suffix}."""

    def choose_move(self, board):
        return board.legal_moves()[0]
'''
# Wins when it can, blocks the opponent's win, else plays nearest the centre: it
# beats Lefty from every opening, with either colour.
CENTRE = '''from arena.bot import Bot


class Centre(Bot):
    """Wins, blocks, else the centre."""

    def choose_move(self, board):
        legal = board.legal_moves()
        for move in legal:
            if board.is_winning_move(move):
                return move
        for move in legal:
            other = next(m for m in legal if m != move) if len(legal) > 1 else None
            if other is not None:
                after = board.copy()
                after.play(other)
                if after.is_winning_move(move):
                    return move
        middle = (board.rules.width - 1) / 2
        return min(legal, key=lambda m: abs(m - middle))
'''
# Bounds far apart: a sweep decides within a few pairs (bounds 10 Elo apart take
# about a hundred pairs even for a sweep: see docs/league.md).
GATED = """bots = ["random"]
games = 2
seed = 3
[gate]
sprt = "elo0=0 elo1=200 alpha=0.05 beta=0.05"
max_pairs = 40
"""


def lefty(suffix: str = "") -> bytes:
    return LEFTY.format(suffix=suffix).encode()


@pytest.fixture(autouse=True)
def _checks_not_timed_by_the_machines_load(monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.entry import checks
    from arena.league import policy

    monkeypatch.setattr(policy, "check_code", lambda code, **kw: checks.check_code(code, **{"seconds": 30.0, **kw}))


def gated_league(folder: Path, text: str = GATED) -> Path:
    (folder / "league.toml").write_text(text)
    path = folder / "league.db"
    with Store(path) as store:
        create_league(store, "g", str(folder / "league.toml"))
        add_user(store, "alice")
    return path


def statuses(store: Store) -> dict[str, str]:
    return {e.spec: e.status for e in store.leagues.entries(store.leagues.check("g").id)}


def gate_games(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("select g.key, b1.spec, b2.spec, g.moves, g.result from games g join tournaments t "
                            "on t.id = g.tournament_id join bots b1 on b1.id = g.first_bot_id join bots b2 "
                            "on b2.id = g.second_bot_id where t.format = 'gate' order by g.key").fetchall()
    finally:
        conn.close()


@pytest.fixture
def tested(tmp_path) -> Path:
    """A gated league where alice's lefty@v1 played the field and centre's code waits as v2."""
    path = gated_league(tmp_path)
    with Store(path) as store:
        league, alice = store.leagues.check("g"), store.accounts.user("alice")
        first = submit_to_league(store, league, alice, "bot", lefty())
        assert first.entry.status == "active" and first.testing_against is None  # a first version enters at once
        assert run_league(store, league, workers=1, until_complete=True).played == 2
        second = submit_to_league(store, league, alice, "bot", CENTRE.encode())
        assert second.entry.status == "testing" and second.testing_against == "bot@v1" and second.retired == []
        assert statuses(store) == {"random": "active", "bot@v1": "active", "bot@v2": "testing"}
    return path


# --- settings ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("table", "message"), [
    ('[gate]\nsprt = "elo0=10 elo1=0"\n', "elo0 < elo1"),
    ('[gate]\nsprt = "elo0=0 elo1=10 alpha=0.7"\n', "alpha must be between 0 and 0.5"),
    ('[gate]\nsprt = "elo0=0 elo1=ten"\n', "bad gate.sprt value 'elo1=ten'"),
    ('[gate]\nsprt = "delta=3"\n', "bad gate.sprt item 'delta=3'"),
    ('[gate]\nmax_pairs = 10\n', "gate.sprt is missing"),
    ('[gate]\nsprt = "elo0=0 elo1=10"\nmax_pairs = 0\n', "gate.max_pairs must be 1 to 100,000, got 0"),
    ('[gate]\nsprt = "elo0=0 elo1=10"\nmax_pairs = "many"\n', "gate.max_pairs must be int, got 'many'"),
    ('[gate]\nsprt = "elo0=0 elo1=10"\npairs = 3\n', "unknown key 'gate.pairs'"),
    ('gate = "on"\n', "gate must be a table"),
])
def test_bad_gate_settings_are_refused_when_the_league_file_is_read(tmp_path, table, message):
    file = tmp_path / "league.toml"
    file.write_text('bots = ["random"]\n' + table)
    result = CliRunner().invoke(main, ["league", "create", "x", str(file), "--db", str(tmp_path / "l.db")])
    assert result.exit_code == 2 and message in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    if (tmp_path / "l.db").exists():
        with Store(tmp_path / "l.db", read_only=True) as store:
            assert store.leagues.all() == []


def test_gate_settings_read_as_the_match_option_reads_them():
    settings = gate_of({"gate": {"sprt": "elo0=-1, elo1=4 alpha=0.1 beta=0.2 model=normalized", "max_pairs": 5}})
    assert settings is not None and settings.max_pairs == 5
    assert settings.test == Sprt(-1, 4, 0.1, 0.2, "normalized")
    assert Sprt.parse(settings.describe()) == settings.test  # stored with each test, read back
    assert gate_of({}) is None
    assert gate_of({"gate": {"sprt": "elo0=5"}}) == gate_of({"gate": {"sprt": "elo0=5,elo1=20"}})  # as --sprt
    with pytest.raises(GateError, match="gate must be a table"):
        gate_of({"gate": []})


# --- the gate's decisions ---------------------------------------------------------------------


def test_the_gate_lets_a_clearly_stronger_version_in_and_its_games_stay_out_of_the_standings(tested):
    with Store(tested) as store:
        league = store.leagues.check("g")
        ladder_before = store.games.tournament_count(league.tournament_id)
        outcome = run_league(store, league, workers=1, until_complete=True)
        test = store.gates.of_league(league.id)[0]
        assert test.status == "accepted" and test.reason.startswith("accepted after ")
        assert statuses(store) == {"random": "active", "bot@v1": "retired", "bot@v2": "active"}
        gate_count = store.games.tournament_count(test.tournament_id)
        assert 2 <= gate_count <= 2 * test.max_pairs
        # v2 then played the field (random) in the ladder: its 2 games, and no gate game there.
        assert store.games.tournament_count(league.tournament_id) == ladder_before + 2
        assert outcome.played == gate_count + 2
    standings = CliRunner().invoke(main, ["league", "standings", "g", "--all-versions", "--format", "json",
                                          "--db", str(tested)])
    assert standings.exit_code == 0, standings.output
    rows = {row["bot"]: row for row in json.loads(standings.output)["standings"]}
    assert rows["bot@v2"]["games"] == 2 and rows["bot@v1"]["games"] == 2  # against random only
    assert all(key.startswith("bot@v2~bot@v1-p") for key, *_ in gate_games(tested))


def test_the_gate_keeps_a_clearly_weaker_version_out_and_says_why(tmp_path):
    path = gated_league(tmp_path)
    with Store(path) as store:
        league, alice = store.leagues.check("g"), store.accounts.user("alice")
        submit_to_league(store, league, alice, "bot", CENTRE.encode())
        run_league(store, league, workers=1, until_complete=True)
        submit_to_league(store, league, alice, "bot", lefty())
        outcome = run_league(store, league, workers=1, until_complete=True)
        test = store.gates.of_league(league.id)[0]
        assert test.status == "rejected" and "rejected after" in test.reason
        assert "previous version plays on" in test.reason
        assert statuses(store) == {"random": "active", "bot@v1": "active", "bot@v2": "rejected"}
        assert outcome.played == store.games.tournament_count(test.tournament_id)  # no ladder game for v2
        assert store.leagues.entrant_record(league.tournament_id, "bot@v2").games == 0


def test_max_pairs_without_a_decision_keeps_the_version_out(tmp_path):
    path = gated_league(tmp_path, GATED.replace("max_pairs = 40", "max_pairs = 2").replace("elo1=200", "elo1=5"))
    with Store(path) as store:
        league, alice = store.leagues.check("g"), store.accounts.user("alice")
        submit_to_league(store, league, alice, "bot", lefty())
        submit_to_league(store, league, alice, "bot", CENTRE.encode())
        run_league(store, league, workers=1, until_complete=True)
        test = store.gates.of_league(league.id)[0]
        assert test.status == "rejected" and "undecided after 2 pairs" in test.reason
        assert store.games.tournament_count(test.tournament_id) == 4
        assert statuses(store)["bot@v2"] == "rejected" and statuses(store)["bot@v1"] == "active"


def test_a_newer_version_or_a_retirement_withdraws_a_test_undecided(tested):
    with Store(tested) as store:
        league, alice = store.leagues.check("g"), store.accounts.user("alice")
        third = submit_to_league(store, league, alice, "bot", lefty(" again"))
        assert third.testing_against == "bot@v1" and third.entry.status == "testing"
        tests = {store.leagues.entry(t.entry_id).spec: t for t in store.gates.of_league(league.id)}
        assert tests["bot@v2"].status == "withdrawn" and "a newer version was submitted" in tests["bot@v2"].reason
        retire(store, league, alice, third.entry.id)
        assert store.gates.get(third.entry.id).status == "withdrawn"
        assert statuses(store) == {"random": "active", "bot@v1": "active", "bot@v2": "retired", "bot@v3": "retired"}
        assert run_league(store, league, workers=1, until_complete=True).played == 0  # nothing left to test


def test_removing_an_account_withdraws_its_version_under_test(tested):
    from arena.league.removal import remove_user

    with Store(tested) as store:
        league = store.leagues.check("g")
        waiting = store.gates.of_league(league.id)[0]
        remove_user(store, "alice")
        assert store.gates.get(waiting.entry_id).status == "withdrawn"
        # No trace of the bot's name: the test's tournament is named by the entry's number.
        assert [t.name for t in store.tournaments.all() if t.format == "gate"] == [f"g gate {waiting.entry_id}"]
        assert "bot@" not in store.db.execute("select group_concat(config || identity) from tournaments").fetchone()[0]
        assert {e.status for e in store.leagues.entries(league.id, user_id=store.accounts.users()[0].id)} == {"retired"}
        assert run_league(store, league, workers=1, until_complete=True).played == 0


def test_a_league_without_a_gate_lets_every_version_in_at_once(tmp_path):
    path = gated_league(tmp_path, 'bots = ["random"]\ngames = 2\nseed = 3\n')
    with Store(path) as store:
        league, alice = store.leagues.check("g"), store.accounts.user("alice")
        submit_to_league(store, league, alice, "bot", lefty())
        second = submit_to_league(store, league, alice, "bot", CENTRE.encode())
        assert second.entry.status == "active" and second.retired == ["bot@v1"] and second.testing_against is None
        assert store.gates.of_league(league.id) == []


# --- resuming and healing ---------------------------------------------------------------------


def test_a_league_stopped_mid_test_resumes_it_to_the_same_games_and_decision(tested, tmp_path):
    whole = tmp_path / "whole.db"
    shutil.copy(tested, whole)
    with Store(whole) as store:
        run_league(store, store.leagues.check("g"), workers=1, until_complete=True)
    stops = []

    def stop_after_the_first_batch(line: str) -> None:
        if "games played" in line and not stops:
            stops.append(line)
            raise KeyboardInterrupt

    with Store(tested) as store:
        league = store.leagues.check("g")
        stopped = run_league(store, league, workers=1, until_complete=True, report=stop_after_the_first_batch)
        assert stopped.interrupted and 0 < len(gate_games(tested)) < len(gate_games(whole))
        assert store.gates.of_league(league.id)[0].status == "running"
        run_league(store, league, workers=1, until_complete=True)
    with Store(tested) as store, Store(whole) as other:
        test, test_whole = store.gates.of_league(1)[0], other.gates.of_league(1)[0]
        assert (test.status, test.reason) == (test_whole.status, test_whole.reason) and test.status == "accepted"
        assert statuses(store) == statuses(other)
        pairs = stored_tally(store, test, "bot@v2").pairs
        assert pairs == stored_tally(other, test_whole, "bot@v2").pairs > 0
    # The same games up to the deciding pair; the games played after it in the same
    # batch (kept, not counted) depend on where the batches fell.
    counted = {f"-p{pair:04d}-" for pair in range(pairs)}
    assert ([g for g in gate_games(tested) if g[0][-8:-1] in counted]
            == [g for g in gate_games(whole) if g[0][-8:-1] in counted])
    assert len([g for g in gate_games(whole) if g[0][-8:-1] in counted]) == 2 * pairs


def test_a_decision_lost_with_the_process_is_made_from_the_stored_games(tested):
    """Killed after the deciding pair was stored and before the decision was: the next
    run decides at once, playing no game of the test again."""
    with Store(tested) as store:
        league = store.leagues.check("g")
        run_league(store, league, workers=1, until_complete=True)
        decided = store.gates.of_league(league.id)[0]
        games = gate_games(tested)
        store.db.execute("update gate_tests set status = 'running', reason = null, decided_at = null")
        store.db.execute("update entries set status = 'testing' where spec = 'bot@v2'")
        store.db.execute("update entries set status = 'active', retired_at = null where spec = 'bot@v1'")
        store.db.conn.commit()
        assert run_league(store, league, workers=1, until_complete=True).played == 0
        again = store.gates.of_league(league.id)[0]
        assert (again.status, again.reason) == (decided.status, decided.reason)
        assert statuses(store) == {"random": "active", "bot@v1": "retired", "bot@v2": "active"}
    assert gate_games(tested) == games


# --- the test's arithmetic ----------------------------------------------------------------------


def pair_distribution(elo: float, draw_rate: float = 0.2) -> list[float]:
    """Pair outcomes (0, 1/2, ..., 2 points) of two independent games whose expected score
    is the logistic Elo's, with ``draw_rate`` draws."""
    score = expected_score(elo)
    win = score - draw_rate / 2
    game = [1 - win - draw_rate, draw_rate, win]
    pair = [0.0] * 5
    for a, pa in enumerate(game):
        for b, pb in enumerate(game):
            pair[a + b] += pa * pb
    return pair


def run_test(test: Sprt, elo: float, rng: random.Random, most: int = 2000) -> str:
    """One gate test on pairs drawn at ``elo``, through the gate's own tally."""
    tally = Tally(test, most)
    weights = pair_distribution(elo)
    for pair in range(most):
        points = rng.choices(range(5), weights)[0] / 2
        # The pair's two games, as the league stores them: their points add up to the pair's.
        first = min(1.0, points)
        tally.add(2 * pair, first)
        tally.add(2 * pair + 1, points - first)
        if tally.decision != CONTINUE:
            return tally.decision
    return CONTINUE


def test_the_gate_errs_no_more_often_than_its_alpha_and_beta():
    """Seeded simulations, 300 tests at each bound: a version exactly elo0 stronger is let
    in (a false accept) at most about alpha of the time, one exactly elo1 stronger kept
    out at most about beta of the time (the SPRT's error rates are upper bounds, up to
    its overshoot: three standard errors of slack)."""
    test = Sprt(0, 60, 0.05, 0.1)
    rng = random.Random(31)
    runs = 300
    false_accepts = sum(run_test(test, test.elo0, rng) == ACCEPT_H1 for _ in range(runs))
    false_rejects = sum(run_test(test, test.elo1, rng) == ACCEPT_H0 for _ in range(runs))
    for errors, rate in ((false_accepts, test.alpha), (false_rejects, test.beta)):
        assert errors / runs <= rate + 3 * (rate * (1 - rate) / runs) ** 0.5, (errors, rate)
    # And it decides the clear cases the right way round almost always.
    assert sum(run_test(test, 300, rng) == ACCEPT_H1 for _ in range(50)) >= 49
    assert sum(run_test(test, -300, rng) == ACCEPT_H0 for _ in range(50)) >= 49


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=2, max_size=40).map(lambda p: p[: len(p) // 2 * 2]),
       st.randoms(use_true_random=False))
def test_the_decision_depends_on_the_games_not_the_order_they_were_stored_in(points, rng):
    """What makes a test resumable: any order of storing gives the sequential test's
    verdict on the pairs in order, stopping at its first decision."""
    test = Sprt(0, 150, 0.1, 0.1)
    order = list(range(len(points)))
    rng.shuffle(order)
    shuffled = Tally(test, 1000)
    for number in order:
        shuffled.add(number, points[number])
    counts, expected, pairs = [0] * 5, CONTINUE, 0
    for pair in range(len(points) // 2):
        counts[round(2 * (points[2 * pair] + points[2 * pair + 1]))] += 1
        pairs += 1
        expected = test.decision(Outcomes(tuple(counts)))
        if expected != CONTINUE:
            break
    assert (shuffled.decision, shuffled.pairs) == (expected, pairs)


def test_a_gate_games_number_comes_from_its_key():
    assert game_number("bot@v2~bot@v1-p0003-a") == 6 and game_number("bot@v2~bot@v1-p0003-b") == 7
    assert game_number("bot@v2~bot@v1-o0003-b") is None
