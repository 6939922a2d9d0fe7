"""`arena openings`: a suite of balanced openings, each with its solver value."""

from __future__ import annotations

from pathlib import Path

import click

from arena.cli.main import ArenaUsageError, main, make_rules, rules_options
from arena.text import plural


@main.command("openings")
@click.option("--plies", type=click.IntRange(min=0), required=True,
              help="Random plies in each opening (10 or more: nearly every one is proven within the budget).")
@click.option("--margin", type=click.IntRange(min=0), default=0, show_default=True,
              help="Keep openings whose solver score is within this of a draw (0: proven draws only).")
@click.option("--count", type=click.IntRange(min=1), default=20, show_default=True, help="Openings to write.")
@click.option("--seed", type=int, default=1, show_default=True, help="The same seed writes the same suite.")
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="The file to write ('-': stdout).")
@rules_options
def openings_command(plies: int, margin: int, count: int, seed: int, out: str, width: int | None,
                     height: int | None, connect: int | None, no_gravity: bool, scoring: str | None) -> None:
    """Write balanced openings to a file: random openings the solver proves drawn (or within --margin).

    One opening a line with its value, the solver's score for the first player
    (``4453  # value 0``); play them with 'arena tournament run --openings
    file:FILE'. 7x6 connect four only.
    """
    from arena.engine.game import format_moves
    from arena.engine.openings import balanced_openings, check_balanced_rules, openings_rng
    from arena.engine.solvers import find_solver

    rules = make_rules(width, height, connect, no_gravity, scoring)
    check_balanced_rules(rules)
    if plies > rules.cells // 2:
        raise ArenaUsageError(f"--plies must be between 0 and {rules.cells // 2}, got {plies}")
    found = balanced_openings(rules, plies, margin, count, openings_rng("balanced-openings", seed),
                              find_solver(rules))
    lines = [f"# {plural(count, 'balanced opening')} of {plural(plies, 'ply', 'plies')}, within {margin} of a draw, "
             f"seed {seed}; value: the solver's score for the first player (0 a draw)",
             *(f"{format_moves(o.moves, rules) or '-'}  # value {o.value}" for o in found)]
    text = "\n".join(lines) + "\n"
    if out == "-":
        click.echo(text, nl=False)
        return
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ArenaUsageError(f"cannot write --out {out!r}: {exc.strerror or exc}") from None
    click.echo(f"Wrote {plural(len(found), 'opening')} to {out}", err=True)
