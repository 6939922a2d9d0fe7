"""A knockout bracket as text for the terminal: a column per round, each entrant
with its seed and its points in the match, joined to the match's winner in the
next column by box-drawing lines; the champion in the last column.

Names are the bots' own, so they are escaped (:func:`arena.text.printable`) and
cut to ``name_width`` characters: a column's width is bounded whatever a bot is
called. The lines are 2 x places - 1 (places: the entrants and byes of the first
round), each at most (rounds + 1) x (the cell's width + 5) characters.
"""

from __future__ import annotations

from arena.ratings.knockout import COIN, EXTRA_PAIRS, SOLVER, Bracket, Entrant, Match
from arena.text import clip, plural, printable

#: At most this many characters of a name are shown.
NAME_WIDTH = 20
#: The mark beside the points of a match's winner where the points alone did not decide it.
MARKS = {EXTRA_PAIRS: "x", SOLVER: "s", COIN: "c"}
_LEGEND = {EXTRA_PAIRS: "x won in extra pairs", SOLVER: "s won by the solver's verdict",
           COIN: "c won by a coin (heads: the upper entrant, tails: the lower)"}
BYE_TEXT = "(bye)"


def render_bracket(bracket: Bracket, name_width: int = NAME_WIDTH) -> str:
    """The bracket, then a legend of the marks it shows."""
    count = len(bracket.rounds)
    # columns[c][j]: the j-th entrant from the top in column c, with the match it plays there
    # (the champion's column has no match)
    columns: list[list[tuple[Entrant | None, Match | None, int]]] = []
    for matches in bracket.rounds:
        columns.append([(side_entrant, match, side) for match in matches
                        for side, side_entrant in enumerate((match.top, match.bottom))])
    columns.append([(bracket.champion, None, 0)])

    names = {e.name: clip(printable(e.name), max(name_width, 4)) for e in bracket.entrants}
    name_w = max([len(BYE_TEXT), *map(len, names.values())])
    seed_w = len(str(len(bracket.entrants)))
    points_w = max([0, *(len(_points(m.points[side])) for m in bracket.matches() if m.games for side in (0, 1))])

    def cell(entrant: Entrant | None, match: Match | None, side: int) -> str:
        if match is not None and match.bye and side == 1:
            return f"{'':>{seed_w}} {BYE_TEXT:<{name_w}}"
        if entrant is None:
            return f"{'':>{seed_w}} {'':<{name_w}}"
        text = f"{entrant.seed:>{seed_w}} {names[entrant.name]:<{name_w}}"
        if match is None:  # the champion
            return text
        shown = _points(match.points[side]) if match.games else ""
        mark = MARKS.get(match.decided_by or "", "") if match.winner == entrant else ""
        return f"{text} {shown:>{points_w}} {mark:1}"

    texts = [[cell(*place) for place in column] for column in columns]
    width = max(len(text) for column in texts for text in column)
    lines = [_titles(count, width)]
    for y in range(2 * bracket.size - 1):
        parts = []
        for c, column in enumerate(texts):
            j, at = divmod(y - _row(c, 0), 2 ** (c + 1))
            on_line = at == 0 and 0 <= j < len(column)
            parts.append(f"{column[j] if on_line else '':<{width}}")
            if c < count:
                parts.append(_connector(y, c, on_line))
        lines.append("".join(parts).rstrip())
    marks = sorted({m.decided_by for m in bracket.matches() if m.decided_by in MARKS}, key=list(MARKS).index)
    lines.extend(f"  {_LEGEND[mark]}" for mark in marks)
    return "\n".join(lines)


def knockout_heading(bracket: Bracket) -> str:
    """One line above the bracket: the field, the matches' rules, the champion or
    how far the knockout is."""
    rules = bracket.rules
    decided = sum(1 for m in bracket.matches() if m.winner is not None and not m.bye)
    played = sum(1 for m in bracket.matches() if not m.bye)
    champion = bracket.champion
    where = (f"champion: {clip(printable(champion.name), NAME_WIDTH)}" if champion is not None
             else f"{decided} of {plural(played, 'match', 'matches')} decided")
    return (f"Knockout: {plural(len(bracket.entrants), 'entrant')}, {plural(len(bracket.rounds), 'round')}; "
            f"{plural(rules.pairs, 'pair')} of games a match, up to {plural(rules.extra_pairs, 'extra pair')} "
            f"while level; {where}")


def _points(points: float) -> str:
    return f"{points:g}"


def _row(column: int, index: int) -> int:
    """The line of the index-th entrant of a column: halfway between the two it comes from."""
    return (index << (column + 1)) + (1 << column) - 1


def _connector(y: int, column: int, entrant_line: bool) -> str:
    """The five characters after a column on line ``y``: a line leaving each
    entrant of a match, the two joined, and the join leading to the winner."""
    span = 2 ** (column + 2)  # lines from one match's upper entrant to the next match's
    offset = (y - _row(column, 0)) % span
    upper_to_lower = 2 ** (column + 1)
    if entrant_line and offset == 0:
        return " ─┐  "
    if entrant_line and offset == upper_to_lower:
        return " ─┘  "
    if 0 < offset < upper_to_lower and y >= _row(column, 0):
        return "  ├─ " if offset == upper_to_lower // 2 else "  │  "
    return "     "


def _titles(count: int, width: int) -> str:
    names = {1: "final", 2: "semi-finals", 3: "quarter-finals"}
    titles = [names.get(count - number + 1, f"round {number}") for number in range(1, count + 1)]
    return "".join(f"{title:<{width + 5}}" for title in [*titles, "champion"]).rstrip()
