"""Hostile bots that attack the arena with what they say rather than what they do:
text no UTF-8 encoder can write (lone surrogates) in a crash message, in move
info, in a protocol answer of their own; a second answer to one request; and a
start-up answer nested too deep, given only to a tournament's start-up check.

A Python bot in the sandbox shares its process with the protocol's server, so it
can reach the server's channel (the ``channel`` of ``Server.run``, up its own call
stack) and write lines of its own on it: the arena must judge whatever comes up
the channel, however it got there. tests/test_bot_text.py and
tests/test_submitted_startup.py play them.
"""

import json
import os
import sys

from arena.bot import Bot, Choice

BYE = "bye \ud800"  # a lone high surrogate: valid in a Python string, never in UTF-8


def server_channel():
    """The protocol server's channel (what it reads requests from and writes answers
    to), found in the frame of ``Server.run`` up this call stack."""
    frame = sys._getframe(1)
    while frame is not None:
        channel = frame.f_locals.get("channel")
        if hasattr(channel, "write_bytes"):
            return channel
        frame = frame.f_back
    raise RuntimeError("no protocol server up the stack: not run behind the protocol")


def first_legal(board):
    return board.legal_moves()[0]


class SurrogateCrash(Bot):
    """Raises an exception whose message holds a lone surrogate, at its first move."""

    def choose_move(self, board):
        raise ValueError(BYE)


class SurrogateInfo(Bot):
    """Plays legal moves, with lone surrogates in its info's keys and values (nested
    too), and a surrogate pair that makes one real character."""

    def choose_move(self, board):
        return Choice(first_legal(board), {
            "key \udc00": "value \ud800",
            "nested": ["deep \udfff", {"inner \ud801": 1}],
            "pair": "smile \ud83d\ude00",
        })


class SurrogateNonMove(Bot):
    """Answers with an object that is no move, whose repr holds a lone surrogate (a
    class's name cannot hold one: Python refuses it)."""

    class Weird:
        def __repr__(self):
            return "weird \udfff"

    def choose_move(self, board):
        return self.Weird()


class ForgedError(Bot):
    """Writes its own answer on the channel, ``{"error": ...}`` with JSON escapes of
    lone surrogates, then leaves before the server can answer: the arena reads the
    bot's line as its answer. (Only behind the protocol: it ends its process.)"""

    def choose_move(self, board):
        server_channel().write_bytes(b'{"error": "forged \\ud800 and \\udfff"}\n')
        os._exit(0)


class AnswersTwice(Bot):
    """Answers each move more than once: two lines of its own (a legal move for the
    position it was shown), written together, then the server's answer. Only the
    first answers the request: buffered, the next would be taken as the answer to
    the next move before that position is even sent."""

    def choose_move(self, board):
        move = first_legal(board)
        line = json.dumps({"move": move, "info": {}}).encode() + b"\n"
        server_channel().write_bytes(line + line)  # one write: both lines arrive together
        return move


class DeepAtStartup(Bot):
    """Plays legal moves, and passes ``arena submit``: but when started with seed 0,
    as a tournament's start-up check starts a bot (its games and the submission
    checks give other seeds), it answers first with arrays nested 40 deep."""

    def new_game(self, rules, player, seed):
        super().new_game(rules, player, seed)
        if seed == 0:
            server_channel().write_bytes(b"[" * 40 + b"]" * 40 + b"\n")

    def choose_move(self, board):
        return first_legal(board)
