"""Plays one game between two bots and says exactly how it ended.

The referee is the trust boundary: each bot gets its own copy of the board (a
Python bot that only reads it, the referee's own, read-only), and its answer is
checked before it touches the real one. A bot that raises, answers
something that is not a legal move, or overruns its clock loses the game by
forfeit, with the reason recorded; its opponent wins. Every text a bot supplies
(the words of its forfeit reason, its info's keys and values) enters the record
made storable (:func:`arena.text.storable`): a lone surrogate in a bot's message
must not stop the store from writing the game, or the games stored with it. A
game during which the arena itself failed (:class:`~arena.errors.ArenaFault`) is
void: nobody wins or loses it, and whoever runs the games plays it again.

What each bot writes (stdout and stderr) is collected by ply, bounded, and kept
with the record (:class:`~arena.records.BotLog`), with a crash's frames in the
bot's own code; a crash's reason names its innermost one. Nothing is kept for a
bot that wrote nothing.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from arena.bot import NO_LIMIT, Bot, BotFailure, Limit, describe_non_move
from arena.engine.game import Board, format_move, read_only
from arena.errors import ArenaFault
from arena.players.plugins import make_player
from arena.protocol.bot_log import LogCollector, crash_reason, where
from arena.protocol.messages import describe_exception
from arena.protocol.player import Player, as_player
from arena.records import GameRecord, GameSpec, Outcome, RefereedGame, Termination, TimeControl
from arena.referee.adjudication import Adjudicator
from arena.referee.kept_bots import KeptBots
from arena.text import json_text, storable


class _Forfeit(Exception):
    def __init__(self, player: int, reason: str) -> None:
        super().__init__(reason)
        self.player = player
        self.reason = reason


#: Told what a bot writes as it writes it: the bot's spec, the ply (or "start"), the text.
LogSink = Callable[[str, int | str, str], None]


def play_game(
    spec: GameSpec,
    bots: tuple[Bot | Player | None, Bot | Player | None] | None = None,
    log_sink: LogSink | None = None,
    kept: KeptBots | None = None,
) -> GameRecord:
    """Play ``spec`` to the end. Bots are built from the spec unless given (as
    players, or as Python bots to call in this process); a side given as None is
    built from its spec too, or taken from ``kept`` (the bots of the games played
    before it, where their class allows: see :class:`KeptBots`), which then keeps
    it for the next game. ``log_sink`` is told what each bot writes as it comes
    (``arena play --debug``)."""
    return referee_game(spec, bots, log_sink, kept).record()


def referee_game(
    spec: GameSpec,
    bots: tuple[Bot | Player | None, Bot | Player | None] | None = None,
    log_sink: LogSink | None = None,
    kept: KeptBots | None = None,
) -> RefereedGame:
    """:func:`play_game`, its moves left in columns (what a tournament's worker stores)."""
    started = time.perf_counter()
    # The referee's board, read-only to its bots: one that only reads it is handed
    # it as it is (the rest get a copy for every move).
    board = Board(spec.rules)
    for move in spec.opening:
        board.play_checked(move)
    board = read_only(board)
    moves = list(spec.opening)
    ms: list[float | None] = [None] * len(moves)
    infos: dict[int, dict[str, Any]] = {}
    players: tuple[Player, ...] = ()
    collectors = (_collector(spec.first, log_sink), _collector(spec.second, log_sink))
    try:
        players = _make_players(spec, bots or (None, None), kept)
        for player, collector in zip(players, collectors):
            player.log = collector
        _start_bots(players, spec)
        adjudicator = None if spec.adjudicate is None else Adjudicator(spec.adjudicate)
        adjudicated = _play_out(board, players, spec.time_control, (moves, ms, infos), adjudicator)
        outcome = adjudicated or _PLAYED_OUT[board.winner]
    except _Forfeit as forfeit:
        outcome = Outcome(1 - forfeit.player, Termination.FORFEIT, storable(forfeit.reason))
    except ArenaFault as fault:
        outcome = Outcome(None, Termination.VOID, storable(void_reason(fault)))
    finally:
        for bot in players:
            _close(bot)
            bot.log = None
    if kept is not None and outcome.termination in _FAILED:
        kept.clear()  # a bot that failed is built anew, and so is its opponent
    return RefereedGame(spec, outcome, moves, ms, infos, time.perf_counter() - started, time.time(),
                        (collectors[0].log(), collectors[1].log()))


#: The terminations after which the kept bots are built anew (a module name: reading
#: an enum's member costs a lookup through its class).
_FAILED = (Termination.FORFEIT, Termination.VOID)
#: The outcome of a game played to its end, by winner (None: a draw). Outcomes are
#: frozen: every game shares these three rather than making its own.
_PLAYED_OUT = {0: Outcome(0, Termination.WIN), 1: Outcome(1, Termination.WIN), None: Outcome(None, Termination.DRAW)}


def _collector(bot: str, sink: LogSink | None) -> LogCollector:
    if sink is None:
        return LogCollector()
    return LogCollector(lambda ply, text: sink(bot, ply, text))


def void_reason(fault: ArenaFault) -> str:
    """What a void game's record says: the arena failed, and how (never the bot)."""
    return f"the arena failed: {fault}"


def _make_players(
    spec: GameSpec, given: tuple[Bot | Player | None, Bot | Player | None], kept: KeptBots | None = None
) -> tuple[Player, Player]:
    # A bot that failed its start-up check before the run (a submitted bot: see
    # arena/tournament/entrants.py) forfeits without being started again: the
    # check said why, and starting it for every game would only cost its start time.
    failed = dict(spec.failed_start)
    for player, text in enumerate(spec.bots):
        if text in failed and given[player] is None:
            raise _Forfeit(player, f"failed its start-up check: {failed[text]}")
    made: list[Player] = []
    for player, text in enumerate(spec.bots):
        ready = given[player]
        if ready is not None:
            made.append(as_player(ready))
            continue
        old = kept.get(text, player) if kept is not None else None
        if old is not None:
            made.append(old)
            continue
        try:
            made.append(make_player(text, isolate=spec.isolate, limits=spec.limits, submitted=dict(spec.submitted)))
            if kept is not None:
                kept.keep(text, player, made[-1])
        except Exception as exc:
            for bot in made:
                _close(bot)
            if isinstance(exc, ArenaFault):
                raise
            raise _Forfeit(player, f"bot could not be created: {describe_exception(exc)}") from None
    return made[0], made[1]


def _start_bots(players: tuple[Player, ...], spec: GameSpec) -> None:
    # Begin every bot before waiting for any, so bots that are slow to get ready
    # (sandboxed ones start a process) get ready side by side. A bot that fails to
    # start a game forfeits it.
    for player, bot in enumerate(players):
        try:
            bot.begin_game(spec.rules, player, _bot_seed(spec.seed, player), spec.time_control)
        except ArenaFault:
            raise
        except Exception as exc:
            raise _start_forfeit(player, bot, exc) from None
    for player, bot in enumerate(players):
        try:
            bot.finish_start()
        except ArenaFault:
            raise
        except Exception as exc:
            raise _start_forfeit(player, bot, exc) from None


def _start_forfeit(player: int, bot: Player, exc: Exception) -> _Forfeit:
    if isinstance(exc, BotFailure):
        return _Forfeit(player, exc.reason)
    return _Forfeit(player, f"crashed in new_game: {describe_exception(exc)}{where(_frames(bot))}")


def _frames(bot: Player) -> tuple[Any, ...]:
    """The frames of the crash a bot's player saw, in the bot's own code."""
    return bot.log.frames if bot.log is not None else ()


def _close(bot: Player) -> None:
    try:
        bot.close()
    except Exception:
        pass  # a bot that cannot even close has already lost or finished


def _play_out(
    board: Board, players: tuple[Player, Player], clock: TimeControl,
    played: tuple[list[int], list[float | None], dict[int, dict[str, Any]]],
    adjudicator: Adjudicator | None = None,
) -> Outcome | None:
    """Play until the game is over (None), or until ``adjudicator`` proves its
    result (that outcome), asked before each move, off both clocks. Each move goes
    into ``played``'s columns (see :class:`RefereedGame`) once it is found legal."""
    banks = [clock.bank_seconds, clock.bank_seconds]
    limit = clock.move_seconds
    # The limit each side is given for its next move: the same object move after
    # move, made anew only when an overrun has drawn on a bank.
    given = [_limit(clock, clock.bank_seconds)] * 2
    now = time.perf_counter
    # A game of random bots spends as long here as in the bots: no call, lookup or
    # object per move that the loop can do without. The side to move and the ply
    # are counted here rather than asked of the board each move.
    record_move, record_ms = played[0].append, played[1].append
    infos = played[2]
    copy = board.copy
    # The board is read-only to the bots, not to the referee: Board's own method.
    play_if_legal = Board.play_if_legal.__get__(board)
    asks = (players[0].play, players[1].play)
    # What each side is shown: the board itself (a bot that only reads it), else a copy.
    shown = [board if bot.reads_board_only else None for bot in players]
    ply = board.ply
    player = ply & 1
    adjudicate_from = adjudicator.stones if adjudicator is not None else board.rules.cells + 1
    over = board.is_over()
    while not over:
        if ply >= adjudicate_from:
            assert adjudicator is not None
            verdict = adjudicator.verdict(board)
            if verdict is not None:
                return verdict
        started = now()
        try:
            move, info = asks[player](shown[player] or copy(), given[player])
        except BotFailure as failure:
            raise _Forfeit(player, failure.reason) from None
        except ArenaFault:
            raise
        except Exception as exc:
            raise _Forfeit(player, crash_reason(describe_exception(exc), _frames(players[player]))) from None
        took = now() - started
        if limit is not None and took > limit:
            banks[player] -= took - limit
            if banks[player] < 0:
                raise _Forfeit(player, f"time: took {took:.3f} s, limit {clock.describe()}")
            given[player] = _limit(clock, banks[player])
        over = play_if_legal(move)  # the bot's answer, of any type: checked here
        if over is None:
            raise _Forfeit(player, _illegal(board, move))
        record_move(move)  # type: ignore[arg-type]  # an int: it was legal
        record_ms(took * 1000.0)
        if info is not None:
            info = _clean_info(info)
            if info is not None:
                infos[ply] = info
        ply += 1
        player ^= 1
    return None


def _limit(clock: TimeControl, bank: float) -> Limit:
    """The limit of a move: the clock's time per move, and what is left of the bank."""
    if clock.move_seconds is None:
        return NO_LIMIT
    return Limit(clock.move_seconds, max(bank, 0.0) if clock.bank_seconds else None)


def _illegal(board: Board, move: object) -> str:
    if type(move) is not int:
        return f"not a move: {describe_non_move(move)}"
    cause = board.illegal_cause(move)
    if 0 <= move < board.rules.move_count:
        return f"illegal move: {format_move(move, board.rules)}, {cause}"
    return f"illegal move: {move} is {cause}"


def _clean_info(info: dict[str, Any]) -> dict[str, Any] | None:
    """Keep a bot's info only if it can be stored as JSON (and is not huge). A float
    that is not finite is no JSON: the store writes it as null (see json_text). Its
    strings, keys too, are made storable."""
    if not info:
        return None
    try:
        text = json_text(info)
        if len(text) > 4096:
            return {"error": f"info too large ({len(text)} bytes)"}
        # json_text writes every character beyond ASCII as an escape, and a
        # surrogate as one of \ud800 to \udfff: info without one (nearly all) is
        # not walked.
        if "\\ud" in text:
            info = storable(info)
    except Exception:  # not JSON: an object, a circular or a too deeply nested structure
        return {"error": "info was not JSON-serialisable"}
    return info


#: The key of the hash that gives each side its seed. It is no secret (a tournament
#: with a public seed must give the same games on any machine); what matters is that
#: the hash is one-way. That alone does not hide the opponent's seed when the game's
#: seed can be searched for (a small public tournament seed: a bot tries seeds and
#: game keys until one gives its own side seed). With private seeds the game's seed
#: is itself keyed by the tournament's secret (see arena.engine.openings.game_seed),
#: 63 bits no bot can compute, so the secret reaches both side seeds through it; the
#: secret never travels with a game, to a worker or a cluster's machine.
_SEED_KEY = b"connectk-arena side seeds"
#: The keyed hash of each side before the game's seed is fed to it, copied for
#: every game: setting up a keyed hash costs as much again as hashing the seed.
_SIDE_HASHES = tuple(
    hashlib.blake2b(digest_size=6, key=_SEED_KEY, person=b"side %d" % player) for player in (0, 1)
)


def _bot_seed(game_seed: int, player: int) -> int:
    """The seed of ``player``'s bot in a game: reproducible from the game's seed, and
    one bot's seed tells nothing about the other's (with ``game_seed * 2 + player``,
    a bot knew its opponent's seed, its own with the last bit flipped, and so the
    moves of a seeded random opponent). 48 bits, as bots have always been given."""
    side = _SIDE_HASHES[player].copy()
    side.update(b"%d" % game_seed)
    return int.from_bytes(side.digest(), "big")
