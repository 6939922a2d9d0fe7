"""No bot thinks on its opponent's time: every sandboxed bot is frozen from its answer
to the referee's next request, whatever it runs and however many tasks it shows.

The attackers (tests/bots/ponderers.py) replace the serving loop's ``os`` in their
own process, so that code of theirs runs while they wait: one spins in its read, the
other starts helpers after each answer and reaps them before the next. They play an
opponent that takes SLOW seconds a move, and say how much processor time they had
off move. Frozen, they get next to none: only the moments between their answer and
the freeze, and between the thaw and the request.
"""

from __future__ import annotations

import sys
import time

import pytest

from arena.bot import Bot
from arena.engine.game import Rules
from arena.records import BotCode, GameSpec, Limits, TimeControl
from arena.referee.referee import play_game
from arena.sandbox import cgroups
from arena.sandbox.proxy import SandboxedBot
from tests.conftest import TEST_BOTS

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux's"),
    pytest.mark.skipif("freezer" not in cgroups.find_hierarchies(),
                       reason="no cgroup freezer this process may use (root, or a delegated group)"),
]

SLOW = 0.2  # seconds the opponent takes a move: what an unfrozen bot would get to think in
#: The most processor time a bot may have had off move, on average per wait, however
#: loaded the machine: far below SLOW, which a bot that is not frozen gets (each helper).
MOST_PER_WAIT = SLOW / 4


class Slow(Bot):
    def choose_move(self, board):  # type: ignore[no-untyped-def]
        time.sleep(SLOW)
        return board.legal_moves()[-1]


def off_move_cpu(attacker: str) -> tuple[float, int]:
    """(processor seconds the attacker had off move, how many waits), from its last report."""
    code = BotCode(str(TEST_BOTS / "ponderers.py"), text=(TEST_BOTS / "ponderers.py").read_text(),
                   class_name=attacker)
    # Connect 5 on 5x4: only a full row wins, so the game lasts long enough to tell.
    spec = GameSpec(key="1", rules=Rules(width=5, height=4, connect=5), first="attacker", second="slow",
                    pairing="1", seed=1, time_control=TimeControl(5.0))
    boxed = SandboxedBot(code, {}, Limits())
    record = play_game(spec, (boxed, Slow()))
    assert record.termination != "forfeit" or record.winner == 0, record.reason
    reports = [m.info for m in record.moves if m.ply % 2 == 0 and m.info]
    assert reports, record.reason
    return float(reports[-1]["off_move_cpu"]), int(reports[-1]["waits"])


def test_a_bot_that_spins_in_its_own_read_gets_no_time_off_move() -> None:
    """One process, one task: its replaced read loop would compute all through its
    opponent's move. Frozen, it gets almost nothing."""
    used, waits = off_move_cpu("SpinsWhileWaiting")
    assert waits >= 5
    assert used / waits < MOST_PER_WAIT, f"{used:.3f} s of processor time over {waits} waits off move"


def test_a_bot_that_forks_helpers_after_answering_gets_no_time_off_move() -> None:
    """Helpers started after each answer, in sessions of their own, and reaped before
    the next: the referee never sees a second task when it looks. Frozen, they get
    almost nothing."""
    used, waits = off_move_cpu("ForksAfterAnswering")
    assert waits >= 5
    assert used / waits < MOST_PER_WAIT, f"{used:.3f} s of processor time over {waits} waits off move"
