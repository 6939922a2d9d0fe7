"""Any Python bot as a program of the protocol, on stdin and stdout: for other tools.

``python -m arena.engine mybot.py`` (or ``mybot.py:MyBot``, or an installed bot's
name, with options as ``minimax:depth=6``) reads the requests of protocol v1 on stdin
and answers on stdout, one line each, until ``quit`` or the end of stdin. What the bot
prints goes to stderr, its log: stdout carries nothing but answers. Options given in
``new_game`` (typed, as ``hello`` declares them) take the place of those on the
command line for that game.

Inside the arena Python bots are never run this way: the sandbox serves them with its
own server (:mod:`arena.protocol.server`) over a socket the bot's code cannot reach.
This client answers with the same server, so a bot behaves here as it does there.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, BinaryIO

from arena.bot import Bot, BotFailure, BotOptionError
from arena.engine.game import Board, IllegalMoveError, Rules
from arena.errors import ArenaError
from arena.protocol.messages import Move, NewGame, Quit, decode_request, encode, failed
from arena.protocol.server import BotLoadFailed, Server, load_bot
from arena.records import BotCode, Limits
from arena.text import source_text

USAGE = "usage: python -m arena.engine BOT  (a bot file, file.py:Class, or an installed bot; options as :key=value,...)"
ENTRY_POINT_GROUP = "arena.bots"  # arena.players.plugins.ENTRY_POINT_GROUP (a room above)


class UsageError(ArenaError):
    """The command line names no bot that can be loaded."""


def split_spec(text: str) -> tuple[str, str | None, dict[str, str]]:
    """``file.py[:Class][:key=value,...]`` or ``name[:key=value,...]``: (file or name, class, options)."""
    head, _, rest = text.strip().partition(":")
    class_name = None
    if head.endswith(".py") and rest and "=" not in rest.split(":", 1)[0]:
        class_name, _, rest = rest.partition(":")
    options = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise UsageError(f"bad option {item!r}: write key=value")
        options[key.strip()] = value.strip()
    return head, class_name, options


def bot_code(text: str) -> tuple[BotCode, dict[str, str]]:
    """What ``text`` names, as the sandbox's server would load it, and its options."""
    head, class_name, options = split_spec(text)
    if head.endswith(".py"):
        path = Path(head)
        if not path.is_file():
            raise UsageError(f"bot file {head!r} does not exist")
        return BotCode(label=path.name, text=source_text(path.read_bytes()), class_name=class_name), options
    found = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == head]
    if not found:
        raise UsageError(f"no bot file or installed bot {head!r}")
    return BotCode(label=head, entry_point=found[0].value), options


def impossible(rules: Rules, moves: tuple[int, ...]) -> str | None:
    """Why ``moves`` are not a game of ``rules`` (None: they are one, not yet over)."""
    board = Board(rules)
    for ply, move in enumerate(moves):
        if board.is_over():
            return f"move {ply + 1} ({move}) comes after the game was over"
        try:
            board.play_checked(move)
        except IllegalMoveError as exc:
            return f"move {ply + 1} is not legal: {exc}"
    if board.is_over():
        return "the game is over: there is no move to make"
    return None


class Engine:
    """Answers requests for one bot: the sandbox's :class:`Server`, with each game's
    options and a check of every position it is sent."""

    def __init__(self, code: BotCode, options: dict[str, str]) -> None:
        self.code = code
        self.options: dict[str, Any] = dict(options)
        self.server = self._server(self.options)
        self.rules = Rules()

    def _server(self, options: dict[str, Any]) -> Server:
        return Server(load_bot(self.code, options), Limits(), code=self.code)

    def answer(self, line: bytes) -> dict[str, Any] | None:
        try:
            request = decode_request(line)
        except BotFailure as failure:
            return failed(failure.reason)
        if isinstance(request, Quit):
            return None
        if isinstance(request, NewGame):
            self.rules = request.rules
            if request.options:
                try:
                    self.server = self._server({**self.options, **request.options})
                except BotOptionError as exc:
                    return failed(f"bad option: {exc}")
                except BaseException as exc:
                    return Server(Bot(), Limits(), code=self.code)._crash(exc)
        if isinstance(request, Move):
            why = impossible(self.rules, tuple(request.moves))
            if why is not None:
                return failed(f"impossible position: {why}")
        return self.server.answer(request)


def serve(engine: Engine, requests: BinaryIO, answers: BinaryIO) -> None:
    """Answer each line of ``requests`` on ``answers`` until ``quit`` or the end."""
    for line in requests:
        answer = engine.answer(line.rstrip(b"\r\n"))
        if answer is None:
            return
        answers.write(encode(answer))
        answers.flush()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if args and args[0] in ("-h", "--help") else 2
    # stdout is the protocol's: whatever the bot prints goes to stderr, its log.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        code, options = bot_code(args[0])
        engine = Engine(code, options)
    except UsageError as exc:
        print(f"error: {exc}; {USAGE}", file=sys.stderr)
        return 2
    except Exception as exc:  # the bot's own code failed to load: the protocol says why
        first = sys.stdin.buffer.readline()
        if first:
            why = str(exc) if isinstance(exc, BotLoadFailed) else f"failed to load: {type(exc).__name__}: {exc}"
            answers.write(encode(failed(why)))
            answers.flush()
        return 1
    serve(engine, sys.stdin.buffer, answers)
    return 0
