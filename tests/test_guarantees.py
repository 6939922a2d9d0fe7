"""Guarantees that hold only while a particular line of code stays: each test here
fails when that line is removed or changed (they were found by mutating the code)."""

from __future__ import annotations

import itertools
import json
import sqlite3
import time

import numpy as np
import pytest

from arena.bot import Bot, Choice
from arena.engine.game import Board, Rules
from arena.ratings.fit import ELO_PER_NATURAL, MEAN_RATING, Result, fit_ratings
from arena.records import GameSpec, TimeControl
from arena.referee.referee import play_game
from arena.store import Store
from tests.conftest import FakeClock

C4 = Rules()


def spec(**kwargs) -> GameSpec:
    return GameSpec(key="g", pairing="g", rules=C4, first="a", second="b", **kwargs)


class Leftmost(Bot):
    """Plays the leftmost legal column."""

    def choose_move(self, board: Board) -> int:
        return board.legal_moves()[0]


# --- the referee's board is never the bot's -----------------------------------------


class Scribbler(Leftmost):
    """Plays stones all over the board it is given before answering."""

    def choose_move(self, board: Board) -> int:
        move = board.legal_moves()[-1]
        for column in board.legal_moves():
            board.play(column)
            if board.is_over():
                break
        return move


def test_an_in_process_bot_that_scribbles_on_its_board_changes_nothing():
    record = play_game(spec(), bots=(Scribbler(), Leftmost()))
    moves = record.move_list()
    assert record.termination in ("win", "draw")
    assert Board.from_moves(moves, C4).winner == record.winner
    # Both bots saw the real position each time: every stored move is the answer
    # it gives there (rightmost legal column, leftmost legal column).
    replay = Board(C4)
    for ply, move in enumerate(moves):
        legal = replay.legal_moves()
        assert move == (legal[-1] if ply % 2 == 0 else legal[0])
        replay.play(move)


# --- the time bank --------------------------------------------------------------------


class Slow(Leftmost):
    """Takes ``seconds`` of the referee's clock per move."""

    def __init__(self, clock: FakeClock, seconds: float) -> None:
        super().__init__()
        self.clock, self.seconds = clock, seconds

    def choose_move(self, board: Board) -> int:
        self.clock.now += self.seconds
        return super().choose_move(board)


@pytest.mark.parametrize(("bank", "overruns_allowed"), [(0.0, 0), (1.0, 2), (1.1, 2), (1.6, 3)])
def test_overruns_are_paid_from_the_bank_until_it_is_spent(monkeypatch, bank, overruns_allowed):
    clock = FakeClock(step=0.0)
    monkeypatch.setattr(time, "perf_counter", clock)
    clock_rules = TimeControl(move_seconds=1.0, bank_seconds=bank)
    # The first player overruns by 0.5 s on every move; the second is instant.
    record = play_game(spec(time_control=clock_rules), bots=(Slow(clock, 1.5), Leftmost()))
    assert record.termination == "forfeit" and record.winner == 1
    assert record.reason.startswith("time: took 1.500 s")
    slow_moves = [m for m in record.moves if m.ply % 2 == 0]
    assert len(slow_moves) == overruns_allowed


def test_a_bot_within_its_time_never_draws_on_the_bank(monkeypatch):
    clock = FakeClock(step=0.0)
    monkeypatch.setattr(time, "perf_counter", clock)
    record = play_game(spec(time_control=TimeControl(1.0, 0.0)), bots=(Slow(clock, 0.75), Slow(clock, 0.25)))
    assert record.termination != "forfeit"


# --- a bot's info is stored only while it is small -------------------------------------


class Talker(Leftmost):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def choose_move(self, board: Board) -> Choice:
        # {"note": "xxx..."} is 12 bytes of JSON around the note.
        return Choice(super().choose_move(board), {"note": "x" * (self.size - 12)})


def test_info_of_4096_bytes_is_kept_and_one_byte_more_is_refused():
    kept = play_game(spec(), bots=(Talker(4096), Leftmost())).moves[0].info
    assert kept is not None and len(json.dumps(kept)) == 4096
    refused = play_game(spec(), bots=(Talker(4097), Leftmost())).moves[0].info
    assert refused == {"error": "info too large (4097 bytes)"}


# --- the rating covariance includes the prior ------------------------------------------


def test_rating_intervals_are_the_curvature_of_the_posterior_with_its_prior():
    """An independent check of the fit: the log posterior (Davidson's model with the
    first-move bonus, the virtual draws and the weak priors, written out game by game
    in tests/test_ratings.py) maximised and differentiated numerically, over the
    strengths, the bonus and log nu; the covariance of the strengths (centred) must be
    what the fit reports."""
    from tests.test_ratings import log_likelihood

    names = ["a", "b", "c"]
    results = [Result("a", "b", 1.0)] * 5 + [Result("b", "a", 0.5)] * 2 + [Result("b", "c", 1.0)] * 3
    results += [Result("c", "b", 0.0)] * 2 + [Result("a", "c", 1.0)] * 4 + [Result("c", "a", 0.5)]
    results += [Result("c", "a", 1.0), Result("b", "a", 1.0)]

    def log_posterior(x: np.ndarray) -> float:
        strength = {"a": 0.0, "b": float(x[0]), "c": float(x[1])}  # a held at 0: only gaps are fitted
        return log_likelihood(names, results, strength, float(x[2]), float(x[3]))

    def hessian(x: np.ndarray, h: float = 1e-4) -> np.ndarray:
        n = len(x)
        out = np.zeros((n, n))
        for i, j in itertools.product(range(n), repeat=2):
            e_i, e_j = np.eye(n)[i] * h, np.eye(n)[j] * h
            out[i, j] = (log_posterior(x + e_i + e_j) - log_posterior(x + e_i - e_j)
                         - log_posterior(x - e_i + e_j) + log_posterior(x - e_i - e_j)) / (4 * h * h)
        return out

    def gradient(x: np.ndarray, h: float = 1e-6) -> np.ndarray:
        return np.array([(log_posterior(x + e) - log_posterior(x - e)) / (2 * h) for e in np.eye(len(x)) * h])

    x = np.zeros(4)
    for _ in range(50):
        x = x - np.linalg.solve(hessian(x), gradient(x))
    covariance = np.zeros((3, 3))
    covariance[1:, 1:] = np.linalg.inv(-hessian(x))[:2, :2]
    centring = np.eye(3) - np.full((3, 3), 1 / 3)
    expected = centring @ covariance @ centring.T * ELO_PER_NATURAL**2

    fit = fit_ratings(results)
    for a, b in itertools.product(names, repeat=2):
        assert fit.covariance[a, b] == pytest.approx(expected[names.index(a), names.index(b)], rel=1e-3, abs=1e-2)
    strengths = np.array([0.0, x[0], x[1]])
    for i, name in enumerate(names):
        elo = MEAN_RATING + (strengths[i] - strengths.mean()) * ELO_PER_NATURAL
        assert fit.ratings[name].elo == pytest.approx(elo, abs=1e-2)
    assert fit.first_move_elo == pytest.approx(x[2] * ELO_PER_NATURAL, abs=1e-2)


# --- only a finished tournament has a finishing time ------------------------------------


def test_an_interrupted_tournament_has_no_finishing_time(tmp_path):
    path = tmp_path / "arena.db"
    store = Store(path)
    tournament = store.tournaments.start("t", "round-robin", {"rules": {}}, {}, 1)
    store.tournaments.set_status(tournament, "interrupted")
    store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("select status, finished_at from tournaments").fetchone() == ("interrupted", None)
    store = Store(path)
    store.tournaments.set_status(tournament, "finished")
    store.close()
    with sqlite3.connect(path) as conn:
        status, finished_at = conn.execute("select status, finished_at from tournaments").fetchone()
    assert status == "finished" and finished_at
