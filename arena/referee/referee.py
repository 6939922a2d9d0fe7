"""Plays one game between two bots and says exactly how it ended.

The referee is the trust boundary: each bot gets its own copy of the board, and
its answer is checked before it touches the real one. A bot that raises, answers
something that is not a legal move, or overruns its clock loses the game by
forfeit, with the reason recorded; its opponent wins.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from arena.bot import Bot, describe_non_move, split_answer
from arena.engine.game import Board, Rules, format_move
from arena.sandbox.wire import BotCode, Limits
from arena.plugins import make_bot
from arena.sandbox.proxy import BotFailure, SandboxedBot
from arena.text import clip

WIN, DRAW, FORFEIT = "win", "draw", "forfeit"


@dataclass(frozen=True)
class TimeControl:
    """Seconds allowed per move, plus an optional bank to draw on for overruns.

    ``move_seconds=None`` means no limit.
    """

    move_seconds: float | None = None
    bank_seconds: float = 0.0

    def describe(self) -> str:
        if self.move_seconds is None:
            return "no limit"
        bank = f" + {self.bank_seconds:g} s bank" if self.bank_seconds else ""
        return f"{self.move_seconds:g} s/move{bank}"


@dataclass(frozen=True)
class GameSpec:
    """Everything needed to play one game, and nothing that is not picklable."""

    key: str
    rules: Rules
    first: str  # bot spec text of the player who moves first
    second: str
    opening: tuple[int, ...] = ()
    seed: int = 0
    time_control: TimeControl = TimeControl()
    isolate: bool = False  # run installed bots in their own processes too
    limits: Limits = Limits()  # for sandboxed bots
    sources: tuple[tuple[str, BotCode], ...] = ()  # code of submitted bots, by name

    @property
    def bots(self) -> tuple[str, str]:
        return (self.first, self.second)


class MoveRecord(NamedTuple):
    ply: int
    move: int
    ms: float | None  # None for opening plies, which no bot chose
    info: dict[str, Any] | None = None


@dataclass
class GameRecord:
    """How one game went: its result, why it ended, and every ply."""

    spec: GameSpec
    winner: int | None  # 0 first player, 1 second, None draw
    termination: str  # win / draw / forfeit
    reason: str | None  # for forfeits: what the loser did wrong
    moves: list[MoveRecord] = field(default_factory=list)
    duration: float = 0.0
    finished_at: float = 0.0

    @property
    def result(self) -> str:
        if self.termination == "unfinished":
            return "*"
        return {0: "1-0", 1: "0-1", None: "1/2-1/2"}[self.winner]

    @property
    def plies(self) -> int:
        return len(self.moves)

    def score(self, player: int) -> float:
        """1, 0.5 or 0 for ``player`` (0 first, 1 second)."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == player else 0.0

    def move_list(self) -> list[int]:
        return [m.move for m in self.moves]

    # Records cross process boundaries by the thousand: pickle the moves as plain
    # tuples (plies are implied by position), several times cheaper than objects.
    def __getstate__(self) -> tuple[Any, ...]:
        moves = tuple((m.move, m.ms, m.info) for m in self.moves)
        return (self.spec, self.winner, self.termination, self.reason, moves, self.duration, self.finished_at)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.spec, self.winner, self.termination, self.reason, moves, self.duration, self.finished_at = state
        make = tuple.__new__  # skips NamedTuple's Python-level __new__: 5x faster
        self.moves = [make(MoveRecord, (ply, *move)) for ply, move in enumerate(moves)]


class _Forfeit(Exception):
    def __init__(self, player: int, reason: str) -> None:
        super().__init__(reason)
        self.player = player
        self.reason = reason


def play_game(spec: GameSpec, bots: tuple[Bot, Bot] | None = None) -> GameRecord:
    """Play ``spec`` to the end. Bots are built from the spec unless given."""
    started = time.perf_counter()
    board = Board(spec.rules)
    moves = [MoveRecord(ply, move, None) for ply, move in enumerate(spec.opening)]
    for move in spec.opening:
        board.play_checked(move)
    players: tuple[Bot, ...] = ()
    try:
        players = bots if bots is not None else _make_bots(spec)
        _start_bots(players, spec)
        _play_out(board, players, spec.time_control, moves)
        winner = board.winner
        termination, reason = (WIN if winner is not None else DRAW), None
    except _Forfeit as forfeit:
        winner, termination, reason = 1 - forfeit.player, FORFEIT, forfeit.reason
    finally:
        for bot in players:
            _close(bot)
    return GameRecord(
        spec=spec,
        winner=winner,
        termination=termination,
        reason=reason,
        moves=moves,
        duration=time.perf_counter() - started,
        finished_at=time.time(),
    )


def _make_bots(spec: GameSpec) -> tuple[Bot, Bot]:
    made: list[Bot] = []
    for player, text in enumerate(spec.bots):
        try:
            made.append(make_bot(text, isolate=spec.isolate, limits=spec.limits, sources=dict(spec.sources)))
        except Exception as exc:
            for bot in made:
                _close(bot)
            raise _Forfeit(player, f"bot could not be created: {_describe(exc)}") from None
    return made[0], made[1]


def _start_bots(players: tuple[Bot, ...], spec: GameSpec) -> None:
    # Sandboxed bots start their processes side by side; then every bot is ready.
    begun = set()
    for player, bot in enumerate(players):
        if isinstance(bot, SandboxedBot):
            with _forfeit_on_failure(player):
                bot.begin_game(spec.rules, player, _bot_seed(spec.seed, player))
            begun.add(player)
    for player, bot in enumerate(players):
        with _forfeit_on_failure(player):
            if player in begun:
                bot.finish_start()  # type: ignore[attr-defined]
            else:
                bot.new_game(spec.rules, player, _bot_seed(spec.seed, player))


@contextmanager
def _forfeit_on_failure(player: int) -> Iterator[None]:
    """A bot that fails to start a game forfeits it."""
    try:
        yield
    except BotFailure as failure:
        raise _Forfeit(player, failure.reason) from None
    except Exception as exc:
        raise _Forfeit(player, f"crashed in new_game: {_describe(exc)}") from None


def _close(bot: Bot) -> None:
    try:
        bot.close()
    except Exception:
        pass  # a bot that cannot even close has already lost or finished


def _play_out(
    board: Board, players: tuple[Bot, Bot], clock: TimeControl, moves: list[MoveRecord]
) -> None:
    banks = [clock.bank_seconds, clock.bank_seconds]
    limit = clock.move_seconds
    while not board.is_over():
        player = board.to_move
        bot = players[player]
        if limit is not None:
            bot.time_allowed = limit + max(banks[player], 0.0)
        started = time.perf_counter()
        try:
            answer = bot.choose_move(board.copy())
        except BotFailure as failure:
            raise _Forfeit(player, failure.reason) from None
        except Exception as exc:
            raise _Forfeit(player, f"crashed: {_describe(exc)}") from None
        took = time.perf_counter() - started
        if limit is not None and took > limit:
            banks[player] -= took - limit
            if banks[player] < 0:
                raise _Forfeit(player, f"time: took {took:.3f} s, limit {clock.describe()}")
        move, info = split_answer(answer)
        if not board.is_legal(move):
            raise _Forfeit(player, _illegal(board, move))
        board.play(move)  # type: ignore[arg-type]
        moves.append(MoveRecord(board.ply - 1, move, took * 1000.0, _clean_info(info)))  # type: ignore[arg-type]


def _illegal(board: Board, move: object) -> str:
    if type(move) is not int:
        return f"not a move: {describe_non_move(move)}"
    cause = board.illegal_cause(move)
    if 0 <= move < board.rules.move_count:
        return f"illegal move: {format_move(move, board.rules)}, {cause}"
    return f"illegal move: {move} is {cause}"


def _clean_info(info: dict[str, Any]) -> dict[str, Any] | None:
    """Keep a bot's info only if it can be stored as JSON (and is not huge)."""
    if not info:
        return None
    try:
        text = json.dumps(info)
    except (TypeError, ValueError):
        return {"error": "info was not JSON-serialisable"}
    if len(text) > 4096:
        return {"error": f"info too large ({len(text)} bytes)"}
    return info


def _describe(exc: BaseException) -> str:
    return clip(f"{type(exc).__name__}: {exc}", 200)


def _bot_seed(game_seed: int, player: int) -> int:
    # Distinct, reproducible streams for the two bots of a game.
    return (game_seed * 2 + player) & 0xFFFF_FFFF_FFFF
