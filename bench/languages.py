"""What the arena adds to a bot's move in each language, beside the sandboxed Python bot.

Each language plays the same trivial bot (the leftmost legal column, at once:
bench/programs/), sandboxed, against the random bot, so that what is measured is
the arena: the protocol, the sandbox, the runtime's start. For each language it
prints, in one run, rounds interleaved so that every language sees the same machine:

- start: from asking for a bot process to the answer to ``new_game`` (the process
  forked and confined, the program executed, its runtime booted, hello answered);
- move: the round trip of one move, as the referee times it (request written to
  answer read), median and 90th percentile;
- games/s: whole games, one after the other, each with its bot's process started
  and ended;

and each figure's ratio to the sandboxed Python bot's. A language whose toolchain is
missing here is named and left out.

Run: python bench/languages.py [--games N] [--rounds N] [--starts N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from pathlib import Path

from arena.engine.game import Rules
from arena.players.plugins import BotChecker, BotSpecError, make_bot
from arena.records import GameSpec, TimeControl
from arena.referee.referee import play_game

HERE = Path(__file__).resolve().parent / "programs"
# (language, bot spec, the commands it needs)
LANGUAGES = [
    ("python (sandboxed)", str(HERE / "python" / "bench_python.py"), []),
    ("c", str(HERE / "c"), ["gcc"]),
    ("java", str(HERE / "java"), ["javac", "java"]),
    ("csharp", str(HERE / "csharp"), ["mcs", "mono"]),
    ("javascript", str(HERE / "javascript"), ["node"]),
    ("elixir", str(HERE / "elixir"), ["elixir"]),
]


def start_seconds(spec: str, times: int) -> list[float]:
    """Seconds from asking for the bot to its answer to new_game, ``times`` times."""
    taken = []
    for seed in range(times):
        bot = make_bot(spec, None)
        started = time.perf_counter()
        bot.new_game(Rules(), 0, seed)  # type: ignore[call-arg]
        taken.append(time.perf_counter() - started)
        bot.close()
    return taken


def games(spec: str, count: int, seed: int) -> tuple[float, list[float]]:
    """(seconds, the bot's move times in seconds) for ``count`` games against random."""
    moves: list[float] = []
    started = time.perf_counter()
    for number in range(count):
        first, second = (spec, "random") if number % 2 == 0 else ("random", spec)
        record = play_game(GameSpec(f"g{number}", Rules(), first, second, "bench", seed=seed + number,
                                    time_control=TimeControl(5.0)))
        if record.termination == "forfeit":
            raise SystemExit(f"{spec}: forfeit: {record.reason}")
        side = 0 if first == spec else 1
        moves += [move.ms / 1000 for move in record.moves[side::2] if move.ms is not None]
    return time.perf_counter() - started, moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10, help="games per language per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--starts", type=int, default=5, help="start-ups timed per language per round")
    args = parser.parse_args()
    present = []
    for language, spec, commands in LANGUAGES:
        missing = [c for c in commands if shutil.which(c) is None]
        if missing:
            print(f"{language}: left out ({', '.join(missing)} not installed)")
            continue
        try:
            BotChecker().check(spec)  # builds it
        except BotSpecError as exc:
            print(f"{language}: left out ({exc})")
            continue
        present.append((language, spec))
    starts: dict[str, list[float]] = {language: [] for language, _ in present}
    moves: dict[str, list[float]] = {language: [] for language, _ in present}
    seconds: dict[str, float] = dict.fromkeys(starts, 0.0)
    played: dict[str, int] = dict.fromkeys(starts, 0)
    for round_number in range(args.rounds):
        order = present if round_number % 2 == 0 else present[::-1]
        for language, spec in order:
            starts[language] += start_seconds(spec, args.starts)
            taken, timed = games(spec, args.games, seed=1000 * round_number)
            seconds[language] += taken
            played[language] += args.games
            moves[language] += timed
    base = present[0][0]

    def ratio(value: float, reference: float) -> str:
        return f"{value / reference:.2f}x" if reference else "-"

    print(f"\n{'language':<20}{'start ms':>10}{'ratio':>8}{'move ms':>10}{'p90':>8}{'ratio':>8}"
          f"{'games/s':>9}{'ratio':>8}")
    reference = (statistics.median(starts[base]), statistics.median(moves[base]), played[base] / seconds[base])
    for language, _ in present:
        start = statistics.median(starts[language])
        move = statistics.median(moves[language])
        p90 = statistics.quantiles(moves[language], n=10)[-1]
        rate = played[language] / seconds[language]
        print(f"{language:<20}{start * 1000:>10.1f}{ratio(start, reference[0]):>8}{move * 1000:>10.3f}"
              f"{p90 * 1000:>8.3f}{ratio(move, reference[1]):>8}{rate:>9.2f}{ratio(rate, reference[2]):>8}")
    print(f"\n{args.rounds} rounds of {args.games} games and {args.starts} start-ups per language, interleaved; "
          f"ratios to {base}.")


if __name__ == "__main__":
    main()
