"""The solver bot as a perfect 7x6 player: games at 0.1 s a move, every move judged.

It plays ``--games`` games (half as first player, half as second) from the empty
board against each opponent, through the arena's referee, and checks every move the solver chose against
BitBully with its 12-ply opening book, an independent perfect solver: a move is
perfect when BitBully scores it as high as the best move of the position.

The solver keeps to 0.1 s a move by its own clock (``seconds=0.1``) and the bench
counts any move over 0.1 s as a fault; the referee itself sets no limit, because
BitBully's search past its book sometimes takes longer.

Opponents:

* ``bitbully``: BitBully with its opening book, breaking ties between equally good
  moves at random (a perfect player, so the best a public Connect Four agent can
  be: against it the first player wins and the second loses, every game);
* ``mcts``: this project's MCTS bot at the same 0.1 s a move.

Prints, per opponent and colour, W-D-L, the share of the solver's moves that were
perfect, how many came from the book, and the slowest move. Exit status 1 if any
solver move was not perfect or took over 0.1 s, or it lost a game as first player.

Run: pip install -r bench/requirements.txt; python bench/perfect_play.py [--games 100]
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, field

from arena.bot import Bot, Choice
from arena.engine.game import Board, Rules
from arena.records import GameSpec, TimeControl
from arena.referee.referee import play_game
from bots.mcts import MctsBot
from bots.solver import SolverBot

try:
    import bitbully
except ImportError:  # pragma: no cover - depends on the bench's own installs
    sys.exit("BitBully is missing: pip install -r bench/requirements.txt")

C4 = Rules()
MOVE_SECONDS = 0.1


def bitbully_board(history: list[int]) -> bitbully.Board:
    """BitBully's board after ``history`` (its move lists are 0-based columns too)."""
    return bitbully.Board(history) if history else bitbully.Board()


class BitBullyBot(Bot):
    """BitBully with its opening book, ties broken at random."""

    name = "bitbully"

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.engine = bitbully.BitBully("12-ply-dist")
        self.rng = random.Random(seed)

    def choose_move(self, board: Board) -> Choice:
        return Choice(self.engine.best_move(bitbully_board(board.history), tie_break="random", rng=self.rng))


@dataclass
class Tally:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    moves: int = 0
    perfect: int = 0
    book: int = 0
    slowest_ms: float = 0.0
    faults: list[str] = field(default_factory=list)

    def line(self) -> str:
        share = 100.0 * self.perfect / self.moves if self.moves else 0.0
        return (
            f"{self.wins:>3}-{self.draws}-{self.losses:<3}  {self.perfect}/{self.moves} moves perfect "
            f"({share:.1f}%), {self.book} from the book, slowest {self.slowest_ms:.0f} ms"
        )


def judge(judge_engine: bitbully.BitBully, history: list[int], move: int) -> bool:
    """Does ``move`` score as high as the best move after ``history``?"""
    scores = judge_engine.score_all_moves(bitbully_board(history))
    return scores[move] == max(scores.values())


def play(opponent: str, solver_first: bool, seed: int, referee_judge: bitbully.BitBully, tally: Tally) -> None:
    # The solver keeps to 0.1 s by its own clock; the referee sets no limit, as
    # BitBully's search past its book can take longer, and the bench checks the
    # solver's times itself.
    solver = SolverBot(seconds=MOVE_SECONDS)
    other: Bot = BitBullyBot(seed) if opponent == "bitbully" else MctsBot(seconds=MOVE_SECONDS)
    bots = (solver, other) if solver_first else (other, solver)
    names = ("solver", opponent) if solver_first else (opponent, "solver")
    spec = GameSpec(
        key=f"{opponent}-{seed}", rules=C4, first=names[0], second=names[1], pairing="bench",
        seed=seed, time_control=TimeControl(None),
    )
    record = play_game(spec, bots)
    me = 0 if solver_first else 1
    history: list[int] = []
    for entry in record.moves:
        if entry.ply % 2 == me:
            tally.moves += 1
            tally.slowest_ms = max(tally.slowest_ms, entry.ms or 0.0)
            if (entry.ms or 0.0) > 1000 * MOVE_SECONDS:
                tally.faults.append(f"{opponent} seed {seed}: ply {entry.ply} took {entry.ms:.0f} ms")
            if entry.info and entry.info.get("book"):
                tally.book += 1
            if judge(referee_judge, history, entry.move):
                tally.perfect += 1
            else:
                tally.faults.append(f"{opponent} seed {seed}: ply {entry.ply} after {history} played {entry.move + 1}")
        history.append(entry.move)
    outcome = record.outcome
    if outcome.termination.value == "forfeit":
        tally.faults.append(f"{opponent} seed {seed}: forfeit {outcome.reason}")
    if outcome.winner is None:
        tally.draws += 1
    elif outcome.winner == me:
        tally.wins += 1
    else:
        tally.losses += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=100, help="games per opponent, half with each colour")
    parser.add_argument("--opponents", default="bitbully,mcts")
    args = parser.parse_args()
    referee_judge = bitbully.BitBully("12-ply-dist")
    failed = False
    for opponent in args.opponents.split(","):
        for solver_first in (True, False):
            tally = Tally()
            for seed in range(args.games // 2):
                play(opponent, solver_first, 1000 * solver_first + seed, referee_judge, tally)
            colour = "first " if solver_first else "second"
            print(f"solver {colour} vs {opponent:<8} {tally.line()}", flush=True)
            for fault in tally.faults[:10]:
                print(f"    {fault}")
            failed |= bool(tally.faults) or (solver_first and tally.losses > 0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
