"""The board as an SVG picture: what a notebook shows for a :class:`Board`, and the
board of a game's replay (:mod:`arena.render.replay`).

The picture is the league site's game board (``arena/web/templates/game.html``):
the same classes (``board``, ``stone`` with ``data-col``, ``data-row``,
``data-player`` and ``data-ply``, ``last``, ``labels``), so the site's style sheet
and ``replay.js`` work on it, and the same colours written on each element, so it
looks the same without them. It defines no ids (no patterns, no masks: the stand's
face is one path with a hole per cell), so any number of boards fit in one page.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the board draws itself with this module: no import back at run time
    from arena.engine.game import Board, Rules

CELL = 40  # SVG units per cell: the picture scales, the units never change
#: A board with a side longer than this gets its labels (larger) on every fifth line only.
LARGE_BOARD = 12
#: The widest a board is drawn by default, in pixels (a notebook's output is narrow).
SHOWN_WIDTH = 420
COLOURS = {"first": "#d23c3c", "second": "#e6b400", "face": "#1f4f9c", "back": "#e8edf3",
           "square": "#f3e2bd", "square-edge": "#c9b283", "last": "#17324f", "label": "#5b6570"}
STONE_RADIUS = 0.42  # of a cell
HOLE_RADIUS = 0.4


def board_svg(board: Board, shown_width: int | None = SHOWN_WIDTH) -> str:
    """``board`` as an SVG document: its stones in play order, the last one marked,
    and the winning line marked once the game is won."""
    return draw(board.rules, board.rules.landings(board.history), board.winning_line(), shown_width=shown_width)


def draw(
    rules: Rules,
    cells: Sequence[tuple[int, int]],
    line: Collection[tuple[int, int]] = (),
    *,
    shown_width: int | None = SHOWN_WIDTH,
    attributes: str = "",
) -> str:
    """The board with a stone on each of ``cells`` (column, row; the first player's
    first, then in turn), the last one marked, and a ring on each of ``line``.
    ``attributes`` are added to the ``svg`` element as they are (the caller escapes them)."""
    drawing = rules.drawing
    large = max(rules.width, rules.height) > LARGE_BOARD
    left = CELL if drawing.row_labels else 0  # room for the row numbers
    width, height = rules.width * CELL, rules.height * CELL
    label_size = 20 if large else 13
    view = (left + width, height + CELL * 3 // 4)

    def centre(column: int, row: int) -> tuple[float, float]:
        return left + column * CELL + CELL / 2, (rules.height - 1 - row) * CELL + CELL / 2

    def labelled(index: int) -> bool:
        return not large or index == 0 or (index + 1) % 5 == 0

    size = ""
    if shown_width is not None:
        scale = min(1.0, shown_width / view[0])
        size = f' width="{view[0] * scale:g}" height="{view[1] * scale:g}"'
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="board {drawing.style}" '
             f'viewBox="0 0 {view[0]} {view[1]}"{size} role="img" data-ply="{len(cells)}"{attributes}>']
    if drawing.face:  # the stand: a backdrop seen through the holes, the stones, then its face
        parts.append(f'<rect class="back" x="{left}" y="0" width="{width}" height="{height}" '
                     f'fill="{COLOURS["back"]}"></rect>')
    else:  # a square per cell, the stones on top
        parts += [f'<rect class="square" x="{left + c * CELL + 1}" y="{r * CELL + 1}" width="{CELL - 2}" '
                  f'height="{CELL - 2}" rx="3" fill="{COLOURS["square"]}" stroke="{COLOURS["square-edge"]}"></rect>'
                  for c in range(rules.width) for r in range(rules.height)]
    parts.append('<g class="stones">')
    for ply, (column, row) in enumerate(cells):
        x, y = centre(column, row)
        colour = COLOURS["first"] if ply % 2 == 0 else COLOURS["second"]
        parts.append(f'<circle class="stone" data-ply="{ply}" data-col="{column}" data-row="{row}" '
                     f'data-player="{ply % 2}" cx="{x:g}" cy="{y:g}" r="{CELL * STONE_RADIUS:g}" fill="{colour}" '
                     'stroke="rgba(0, 0, 0, .3)" stroke-width="1.5"></circle>')
    parts.append("</g>")
    if drawing.face:
        holes = "".join(f"M{x - CELL * HOLE_RADIUS:g},{y:g}a{CELL * HOLE_RADIUS:g},{CELL * HOLE_RADIUS:g} 0 1,0 "
                        f"{2 * CELL * HOLE_RADIUS:g},0a{CELL * HOLE_RADIUS:g},{CELL * HOLE_RADIUS:g} 0 1,0 "
                        f"{-2 * CELL * HOLE_RADIUS:g},0z"
                        for x, y in (centre(c, r) for c in range(rules.width) for r in range(rules.height)))
        parts.append(f'<path class="face" fill-rule="evenodd" fill="{COLOURS["face"]}" '
                     f'd="M{left},0h{width}v{height}h{-width}z{holes}"></path>')
    if line:
        parts.append('<g class="winning-line">')
        parts += [f'<circle class="win" data-col="{c}" data-row="{r}" cx="{centre(c, r)[0]:g}" '
                  f'cy="{centre(c, r)[1]:g}" r="{CELL * 0.3:g}" fill="none" stroke="#fff" stroke-width="4">'
                  "</circle>" for c, r in sorted(line)]
        parts.append("</g>")
    last = centre(*cells[-1]) if cells else (0.0, 0.0)
    hidden = "" if cells else ' visibility="hidden"'
    parts.append(f'<circle class="last" r="{CELL * 0.1:g}" cx="{last[0]:g}" cy="{last[1]:g}" fill="#fff" '
                 f'stroke="{COLOURS["last"]}" stroke-width="2"{hidden}></circle>')
    parts.append(f'<g class="labels" aria-hidden="true" font-size="{label_size}" fill="{COLOURS["label"]}" '
                 'text-anchor="middle" font-family="sans-serif">')
    parts += [f'<text x="{centre(c, 0)[0]:g}" y="{height + label_size + 4}">{escape(label)}</text>'
              for c, label in enumerate(drawing.column_labels) if labelled(c)]
    parts += [f'<text x="{left / 2:g}" y="{centre(0, r)[1] + label_size * 0.35:g}">{escape(label)}</text>'
              for r, label in enumerate(drawing.row_labels) if labelled(r)]
    parts.append("</g></svg>")
    return "".join(parts)
