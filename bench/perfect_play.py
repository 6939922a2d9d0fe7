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

``--openings PLIES`` plays from openings instead of the empty board, as a
tournament's games start: for each opening of PLIES plies (every one of the 49 for
2 plies, a seeded sample of ``--sample`` openings, 50 by default, for more plies;
several counts as ``2,3,4``) one game with the solver as first player and one as
second, against BitBully unless ``--opponents`` says otherwise. The opening's
moves are not the solver's and are not judged; it prints, per plies and colour,
the same figures and how many openings saw an imperfect or slow move.

Run: pip install -r bench/requirements.txt; python bench/perfect_play.py [--games 100]
     python bench/perfect_play.py --openings 2,3,4 [--sample 50] [--opponents bitbully]
"""

from __future__ import annotations

import argparse
import itertools
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
    games: int = 0
    faulty_games: int = 0  # games with an imperfect or slow solver move, or a forfeit

    def line(self) -> str:
        share = 100.0 * self.perfect / self.moves if self.moves else 0.0
        return (
            f"{self.wins:>3}-{self.draws}-{self.losses:<3}  {self.perfect}/{self.moves} moves perfect "
            f"({share:.2f}%), {self.book} from the book, slowest {self.slowest_ms:.0f} ms"
        )


def judge(judge_engine: bitbully.BitBully, history: list[int], move: int) -> bool:
    """Does ``move`` score as high as the best move after ``history``?"""
    scores = judge_engine.score_all_moves(bitbully_board(history))
    return scores[move] == max(scores.values())


def play(
    opponent: str,
    solver_first: bool,
    seed: int,
    referee_judge: bitbully.BitBully,
    tally: Tally,
    opening: tuple[int, ...] = (),
) -> None:
    # The solver keeps to 0.1 s by its own clock; the referee sets no limit, as
    # BitBully's search past its book can take longer, and the bench checks the
    # solver's times itself.
    solver = SolverBot(seconds=MOVE_SECONDS)
    other: Bot = BitBullyBot(seed) if opponent == "bitbully" else MctsBot(seconds=MOVE_SECONDS)
    bots = (solver, other) if solver_first else (other, solver)
    names = ("solver", opponent) if solver_first else (opponent, "solver")
    spec = GameSpec(
        key=f"{opponent}-{seed}", rules=C4, first=names[0], second=names[1], pairing="bench",
        opening=opening, seed=seed, time_control=TimeControl(None),
    )  # fmt: skip
    record = play_game(spec, bots)
    me = 0 if solver_first else 1
    game = f"{opponent} seed {seed}" + (f" opening {''.join(str(m + 1) for m in opening)}" if opening else "")
    faults = len(tally.faults)
    history: list[int] = []
    for entry in record.moves:
        if entry.ply % 2 == me and entry.ply >= len(opening):  # the opening's moves are no one's
            tally.moves += 1
            tally.slowest_ms = max(tally.slowest_ms, entry.ms or 0.0)
            if (entry.ms or 0.0) > 1000 * MOVE_SECONDS:
                tally.faults.append(f"{game}: ply {entry.ply} took {entry.ms:.0f} ms")
            if entry.info and entry.info.get("book"):
                tally.book += 1
            if judge(referee_judge, history, entry.move):
                tally.perfect += 1
            else:
                tally.faults.append(f"{game}: ply {entry.ply} after {history} played {entry.move + 1}")
        history.append(entry.move)
    outcome = record.outcome
    if outcome.termination.value == "forfeit":
        tally.faults.append(f"{game}: forfeit {outcome.reason}")
    tally.games += 1
    tally.faulty_games += len(tally.faults) > faults
    if outcome.winner is None:
        tally.draws += 1
    elif outcome.winner == me:
        tally.wins += 1
    else:
        tally.losses += 1


def openings(plies: int, sample: int | None, rng: random.Random) -> list[tuple[int, ...]]:
    """Every opening of ``plies`` moves, or a sample of ``sample`` of them (in move order)."""
    every = list(itertools.product(range(C4.width), repeat=plies))
    if sample is None or sample >= len(every):
        return every
    return sorted(rng.sample(every, sample))


def play_openings(plies: int, sample: int | None, opponents: list[str], referee_judge: bitbully.BitBully) -> bool:
    """Games from each opening of ``plies`` plies, the solver with each colour;
    prints the tallies and returns whether any solver move was a fault."""
    chosen = openings(plies, sample, random.Random(plies))
    failed = False
    for opponent in opponents:
        for solver_first in (True, False):
            tally = Tally()
            for number, opening in enumerate(chosen):
                play(opponent, solver_first, 1000 * plies + number, referee_judge, tally, opening)
            colour = "first " if solver_first else "second"
            print(
                f"{plies}-ply openings ({len(chosen)}), solver {colour} vs {opponent:<8} {tally.line()}; "
                f"{tally.faulty_games} openings with an imperfect or slow move",
                flush=True,
            )
            for fault in tally.faults[:10]:
                print(f"    {fault}")
            failed |= bool(tally.faults)
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=100, help="games per opponent, half with each colour")
    parser.add_argument("--opponents", default=None, help="default: bitbully,mcts; from openings bitbully")
    parser.add_argument("--openings", default=None, metavar="PLIES", help="play from openings of these plies (2,3,4)")
    parser.add_argument("--sample", type=int, default=None, help="openings per plies (default: all 49 of 2 plies, 50)")
    args = parser.parse_args()
    referee_judge = bitbully.BitBully("12-ply-dist")
    if args.openings:
        try:
            counts = [int(p) for p in args.openings.split(",")]
        except ValueError:
            parser.error(f"--openings takes numbers of plies such as 2,3,4, got {args.openings!r}")
        if any(not 1 <= p <= 8 for p in counts):
            parser.error(f"--openings takes 1 to 8 plies, got {args.openings!r}")
        opponents = (args.opponents or "bitbully").split(",")
        failed = False
        for plies in counts:
            sample = args.sample if args.sample is not None or plies <= 2 else 50
            failed |= play_openings(plies, sample, opponents, referee_judge)
        return 1 if failed else 0
    failed = False
    for opponent in (args.opponents or "bitbully,mcts").split(","):
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
