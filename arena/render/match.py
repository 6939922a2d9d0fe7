"""A match's results as a small HTML table: each bot's games, wins, draws, losses,
forfeits and score, its forfeits' reasons, and the Elo difference with its interval
(what `arena match` prints)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import NamedTuple

from arena.text import clip, plural, printable

#: The reasons shown per bot, most frequent first (the rest are counted together).
REASONS_SHOWN = 5


class BotLine(NamedTuple):
    """One bot's row of the table."""

    bot: str
    games: int
    wins: int
    draws: int
    losses: int
    score: float
    forfeits: Sequence[tuple[str, int]]  # (reason, games), most frequent first


def match_html(lines: Sequence[BotLine], elo: tuple[float, float, float] | None) -> str:
    """The table, then a line per bot that forfeited, then the first bot's Elo advantage."""
    head = "".join(f"<th>{name}</th>" for name in
                   ("bot", "games", "wins", "draws", "losses", "forfeits", "score", "score %"))
    rows = "".join(
        f"<tr><td>{_shown(line.bot)}</td><td>{line.games}</td><td>{line.wins}</td><td>{line.draws}</td>"
        f"<td>{line.losses}</td><td>{sum(n for _, n in line.forfeits)}</td><td>{line.score:g}</td>"
        f"<td>{100 * line.score / line.games if line.games else 0:.1f}</td></tr>"
        for line in lines
    )
    notes = [_forfeits(line) for line in lines if line.forfeits]
    if elo is not None and len(lines) == 2:
        value, low, high = elo
        notes.append(f"Elo difference ({_shown(lines[0].bot)} - {_shown(lines[1].bot)}): {value:+.1f}, "
                     f"95% interval {low:+.1f} .. {high:+.1f}")
    games = lines[0].games if lines else 0
    return (f'<div class="arena-match"><table><caption>{plural(games, "game")}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
            + "".join(f"<p>{note}</p>" for note in notes) + "</div>")


def _forfeits(line: BotLine) -> str:
    count = sum(n for _, n in line.forfeits)
    reasons = [f"{n} x {_shown(clip(reason, 200))}" for reason, n in line.forfeits[:REASONS_SHOWN]]
    rest = line.forfeits[REASONS_SHOWN:]
    if rest:
        reasons.append(f"{sum(n for _, n in rest)} x {plural(len(rest), 'other reason')}")
    return f"{_shown(line.bot)} forfeited {plural(count, 'game')}: " + "; ".join(reasons)


def _shown(text: str) -> str:
    """Text a bot chose (its name, its crash's message), escaped for the page."""
    return escape(printable(text))
