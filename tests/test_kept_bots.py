"""Bots that play a run of games as one object (Bot.reusable), and bots handed the
referee's board, read-only, instead of a copy (Bot.reads_board_only): the games
they play are the games fresh bots and copies give."""

from __future__ import annotations

import pickle

import pytest

from arena.bot import Bot
from arena.engine.game import Board, ReadOnlyBoard, Rules, read_only
from arena.protocol.player import InProcessPlayer
from arena.records import GameSpec
from arena.referee.kept_bots import KeptBots
from arena.referee.referee import play_game
from arena.store import FinishedGame
from arena.tournament.config import TournamentConfig
from arena.tournament.runner import play_for_store
from arena.tournament.schedule import iter_schedule
from bots.random_bot import RandomBot


def spec(first: str, second: str, key: str = "g", seed: int = 0) -> GameSpec:
    return GameSpec(key=key, rules=Rules(), first=first, second=second, pairing="g", seed=seed)


def without_times(game: FinishedGame) -> FinishedGame:
    return game._replace(duration=0.0, finished_at="", move_ms=())


def test_a_chunk_played_with_kept_bots_stores_the_games_fresh_bots_give():
    config = TournamentConfig(name="t", bots=("random:stream=1", "random:stream=2", "greedy"), games=6, seed=5)
    specs = list(iter_schedule(config))
    chunk = [without_times(game) for game in play_for_store(specs)]
    one_by_one = [without_times(FinishedGame.of(play_game(game))) for game in specs]
    assert chunk == one_by_one


def test_a_reusable_bot_is_kept_for_each_side_and_others_are_built_for_every_game():
    kept = KeptBots()
    play_game(spec("random", "random", seed=1), kept=kept)
    first, second = kept.get("random", 0), kept.get("random", 1)
    assert isinstance(first, InProcessPlayer) and isinstance(second, InProcessPlayer)
    assert first is not second  # a bot playing itself is two bots
    play_game(spec("random", "greedy", seed=2), kept=kept)
    assert kept.get("random", 0) is first
    assert kept.get("greedy", 1) is None  # its class does not say it can play game after game


class Crasher(Bot):
    reusable = True

    def choose_move(self, board: Board) -> int:
        raise RuntimeError("boom")


def test_a_forfeit_leaves_no_bot_kept():
    kept = KeptBots()
    play_game(spec("random", "random", seed=1), kept=kept)
    record = play_game(spec("random", "random", seed=2), (None, Crasher()), kept=kept)
    assert record.termination == "forfeit"
    assert kept.get("random", 0) is None


class Talker(RandomBot):
    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        super().new_game(rules, player, seed)
        print("new game", seed)

    def choose_move(self, board: Board) -> int:
        print("at ply", board.ply)
        return super().choose_move(board)


def test_what_a_kept_bot_prints_is_logged_with_each_game_it_prints_in(monkeypatch):
    monkeypatch.setattr("arena.players.plugins.make_bot", lambda *args, **kwargs: Talker())
    kept = KeptBots()
    logs = [play_game(spec("talker", "talker", seed=seed), kept=kept).logs for seed in (1, 2)]
    for first, second in logs:
        assert first is not None and second is not None
        assert "new game" in first.text and "at ply 0\n" in first.text and "at ply 1\n" not in first.text
        assert "at ply 1\n" in second.text
    assert logs[0][0].text != logs[1][0].text  # each game's own seed, each game's own log


class Looker(Bot):
    """Only reads its board, and keeps what it was handed."""

    reads_board_only = True
    seen: list[Board] = []

    def choose_move(self, board: Board) -> int:
        self.seen.append(board)
        return board.legal_moves()[0]


class Player(Bot):
    """Plays on its board (its own copy) before answering."""

    reads_board_only = True

    def choose_move(self, board: Board) -> int:
        move = board.legal_moves()[0]
        board.play(move)
        return move


def test_a_bot_that_only_reads_is_handed_the_referees_board_the_others_a_copy():
    Looker.seen = []
    record = play_game(spec("a", "b"), (Looker(), Looker()))
    assert record.termination == "win"
    assert len({id(board) for board in Looker.seen}) == 1
    assert isinstance(Looker.seen[0], ReadOnlyBoard)
    Looker.seen = []
    Looker.reads_board_only = False
    try:
        play_game(spec("a", "b"), (Looker(), Looker()))
    finally:
        Looker.reads_board_only = True
    assert len({id(board) for board in Looker.seen}) == len(Looker.seen)  # a copy for every move


def test_a_bot_that_plays_on_the_board_it_said_it_only_reads_forfeits():
    record = play_game(spec("a", "b"), (Player(), RandomBot()))
    assert record.termination == "forfeit" and record.winner == 1
    assert "read-only" in (record.outcome.reason or "")


def test_a_read_only_board_refuses_to_be_played_on_and_copies_to_an_ordinary_board():
    board = read_only(Board.from_moves("44"))
    for change in (lambda: board.play(3), lambda: board.play_checked(3), lambda: board.play_if_legal(3), board.undo):
        with pytest.raises(TypeError, match="read-only"):
            change()
    Board.play(board, 2)  # its owner plays on
    assert Board.play_if_legal(board, 3) is False and Board.play_if_legal(board, 99) is None
    assert board.moves_string() == Board.from_moves("4434").moves_string()
    copy = board.copy()
    copy.play(0)
    assert type(copy) is Board and board.ply == 4
    again = pickle.loads(pickle.dumps(board))
    assert type(again) is Board and again == board
