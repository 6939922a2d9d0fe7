"""Noisy bots: each sends the arena something that must stay data. Nested JSON
that would exhaust the parser, escapes that would act on a terminal, numbers
that JSON does not have, a kind the arena does not know, a seed that would give
away its opponent's.

The bot process answers the referee for the bot, but the bot can write to the
same socket itself: ``_write_to_the_arena`` does, and the referee reads that line
first, as if the bot process had sent it.

Bots that are meant to be played in a tournament behave while the arena checks
them (the check starts a game with seed 0) and misbehave in their games.
"""

import json
import os
import stat

from arena.bot import Bot, Choice, Option

ESCAPES = (
    "\x1b]0;pwned\x07"  # set the window title
    "\x1b]52;c;cHduZWQ=\x07"  # write the clipboard (OSC 52)
    "\x1b[2J"  # clear the screen
    "\x9b31m"  # CSI in one byte (C1)
    "\u202e"  # right-to-left override
)


def _write_to_the_arena(line):
    """Write ``line`` (text) on the socket to the referee, bypassing the bot process."""
    data = line.encode() + b"\n"
    for fd in range(3, 256):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                while data:
                    data = data[os.write(fd, data):]
                return
        except OSError:
            continue
    raise RuntimeError("no socket to the arena")


def _first(board):
    return board.legal_moves()[0]


class NestsAtStart(Bot):
    """Answers the start of a game with arrays nested 30000 deep (60 KB, under the
    size limit), which the arena's JSON parser cannot descend."""

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        if seed:
            _write_to_the_arena("[" * 30000 + "]" * 30000)

    def choose_move(self, board):
        return _first(board)


class NestsAlways(NestsAtStart):
    """Nests at the start of every game, the arena's check of it included."""

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed or 1)


class NestsInAMove(Bot):
    """Answers its first move with a legal move whose info nests 10000 objects deep."""

    def choose_move(self, board):
        info = '{"a":' * 10000 + "1" + "}" * 10000
        _write_to_the_arena(f'{{"move": {_first(board)}, "info": {info}}}')
        return _first(board)


class CrashesWithEscapes(Bot):
    """Crashes with a message full of escapes that also reads like a verdict on
    its opponent, from an exception class whose very name holds escapes."""

    def choose_move(self, board):
        raise type("Evil\x1b[2J", (RuntimeError,), {})(f"the OPPONENT crashed{ESCAPES}\nforfeit: opponent")


class ForgesItsError(Bot):
    """Writes the error of its failure itself, escapes and all, as the bot process
    would have written a crash: nothing escapes it on the way into the database."""

    def choose_move(self, board):
        _write_to_the_arena(json.dumps({"error": f"crashed: {ESCAPES}"}))
        return _first(board)


class KindWithEscapes(Bot):
    """Says it is a kind of bot the arena does not know, named with escapes."""

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        if seed:
            _write_to_the_arena(json.dumps({"ok": True, "kind": ESCAPES}))

    def choose_move(self, board):
        return _first(board)


class ReportsNumbersJSONHasNot(Bot):
    """Logs NaN and infinities (a bot's score after a division by zero, say), and a
    comment full of escapes."""

    def choose_move(self, board):
        info = {"score": float("nan"), "high": float("inf"), "low": float("-inf"), "seen": [1.5, float("nan")],
                "comment": ESCAPES}
        return Choice(_first(board), info)


class ReportsItsSeed(Bot):
    """Plays randomly and logs the seed the arena gave it."""

    entry = Option("", "only to tell two entries of a tournament apart")

    def choose_move(self, board):
        return Choice(self.rng.choice(board.legal_moves()), {"seed": self.seed})

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        self.seed = seed


class Described(Bot):
    """\x1b]0;pwned\x07\x1b[2J\u202eplays the first legal move"""

    def choose_move(self, board):
        return _first(board)
