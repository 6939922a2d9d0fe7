"""The bot authors' contract (arena.bot): starting a game, failures, options."""

from __future__ import annotations

from arena.bot import Bot, BotFailure
from arena.engine.game import Board, Rules
from arena.sandbox.proxy import BotTimeout


class _Plain(Bot):
    def choose_move(self, board: Board) -> int:
        return board.legal_moves()[0]


def test_begin_game_is_new_game_unless_a_bot_says_otherwise():
    bot = _Plain()
    rules = Rules(5, 4, 3)
    bot.begin_game(rules, 1, 99)
    bot.finish_start()  # nothing to wait for
    fresh = _Plain()
    fresh.new_game(rules, 1, 99)
    assert (bot.rules, bot.player) == (rules, 1)
    assert bot.rng.random() == fresh.rng.random()


def test_a_sandbox_timeout_is_a_bot_failure_with_a_reason():
    timeout = BotTimeout("time: no answer within 1 s")
    assert isinstance(timeout, BotFailure)
    assert timeout.reason == str(timeout) == "time: no answer within 1 s"
