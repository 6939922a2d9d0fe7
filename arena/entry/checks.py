"""Checks a bot author can run before submitting (``arena check PATH``).

The bot runs in the sandbox exactly as in a tournament: it must load, start a
game, and answer a legal move within the time limit on an empty board and in a
few random positions, on Connect Four and, optionally, other rules.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from arena.bot import BotFailure, Limit
from arena.engine.game import Board, Rules
from arena.protocol import connectx
from arena.protocol.bot_log import LogCollector, traceback_lines
from arena.records import BotCode, Limits

if TYPE_CHECKING:
    from arena.protocol.player import ChannelBot

# The sandbox is imported when a check runs: the league's rules and the site import
# this module for its reports, and reading results must not load the sandbox.

POSITIONS = 5  # random positions per rules, besides the empty board


@dataclass
class Check:
    name: str
    passed: bool
    detail: str = ""
    #: A crash's traceback, in the bot's own code (its raw text: shown escaped).
    traceback: list[str] = field(default_factory=list)


@dataclass
class CheckReport:
    checks: list[Check] = field(default_factory=list)
    kind: str = "bot"  # or "connectx"

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    def first_failure(self) -> str:
        failed = next((c for c in self.checks if not c.passed), None)
        return f"{failed.name}: {failed.detail}" if failed else "all checks passed"

    def text(self) -> str:
        """One line per check, as 'arena check' prints them, and a crash's traceback."""
        return "\n".join(f"{'ok  ' if c.passed else 'FAIL'} {c.name}" + (f": {c.detail}" if c.detail else "")
                         + "".join(f"\n    {line}" for line in c.traceback) for c in self.checks)

    def as_dict(self) -> dict[str, object]:
        return {"passed": self.passed, "kind": self.kind,
                "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail,
                            **({"traceback": c.traceback} if c.traceback else {})} for c in self.checks]}


def require_sandbox(what: str) -> None:
    """:func:`arena.sandbox.system.require_sandbox`, for the rooms above that may not
    import the sandbox (a league refuses to run its entrants without one); loaded
    only when asked, as reading results loads nothing of the sandbox."""
    from arena.sandbox.system import require_sandbox as require

    require(what)


def check_code(
    code: BotCode,
    options: dict[str, str] | None = None,
    rules_list: tuple[Rules, ...] = (Rules(),),
    seconds: float = 1.0,
    seed: int = 1,
    limits: Limits | None = None,
    own: bool = False,
) -> CheckReport:
    """Run the checks on a bot's code; stop at the first rules that fail.

    The code runs in the sandbox. Where the system has none, code ``own`` to whoever
    checks it (``arena check``) runs in this process, said on stderr; any other (a
    submission to a league) is refused: NoSandbox.
    """
    from arena.players.plugins import untrusted_bot

    report = CheckReport()
    for rules in rules_list:
        bot = untrusted_bot(code, options or {}, limits, own=own)
        bot.log = LogCollector()  # for where it crashed, if it does
        try:
            if not _check_rules(bot, rules, seconds, random.Random(seed), report):
                break
        finally:
            bot.close()
    return report


def _check_rules(bot: ChannelBot, rules: Rules, seconds: float, rng: random.Random, report: CheckReport) -> bool:
    where = rules.describe()
    try:
        bot.new_game(rules, 0, rng.randrange(2**32))
    except BotFailure as failure:
        report.checks.append(Check(f"loads and starts a game ({where})", False, failure.reason, _traceback(bot)))
        return False
    report.kind = bot.kind
    why = connectx.unsupported(rules) if bot.kind == "connectx" else None
    if why is not None:  # it would forfeit every game: said once, here
        report.checks.append(Check(f"can play {where}", False, f"a Kaggle ConnectX agent, and {why}"))
        return False
    report.checks.append(Check(f"loads and starts a game ({where})", True, f"a {bot.kind}"))
    for number, board in enumerate(_positions(rules, rng)):
        label = "answers on the empty board" if number == 0 else f"answers in position {board.moves_string()!r}"
        check = _check_move(bot, board, seconds, f"{label} ({where})")
        report.checks.append(check)
        if not check.passed:
            return False
    return True


def _check_move(bot: ChannelBot, board: Board, seconds: float, name: str) -> Check:
    started = time.perf_counter()
    try:
        move, _ = bot.play(board.copy(), Limit(seconds))
    except BotFailure as failure:
        return Check(name, False, failure.reason, _traceback(bot))
    took = time.perf_counter() - started
    if not board.is_legal(move):  # the bot's answer, of any type: checked here
        return Check(name, False, f"answered {move!r}, which is not a legal move")
    return Check(name, True, f"{took * 1000:.1f} ms")


def _traceback(bot: ChannelBot) -> list[str]:
    """Where the bot crashed, in its own code, if it did."""
    log = bot.log
    if log is None or log.crash is None:
        return []
    return traceback_lines(log.crash, log.frames)


def _positions(rules: Rules, rng: random.Random) -> list[Board]:
    """The empty board, then random positions of the side that moves first."""
    boards = [Board(rules)]
    while len(boards) < POSITIONS + 1:
        board = Board(rules)
        for _ in range(2 * rng.randrange(1, rules.cells // 4 + 1)):
            moves = [m for m in board.legal_moves() if not board.is_winning_move(m)]
            if not moves:
                break
            board.play(rng.choice(moves))
        if not board.is_over() and board.to_move == 0:
            boards.append(board)
    return boards
