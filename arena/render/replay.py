"""A game as the league site's animated replay, in one self-contained HTML fragment:
what a notebook shows for a game record or a stored game.

The fragment holds the board (:mod:`arena.engine.svg`), the replay's controls and
the move list as the game page has them, the site's style sheet and its
``replay.js``, read from the installed package (never copied). Several replays
share a notebook: each one lives in a shadow tree of its own element, whose id is
made afresh for every fragment, so the ids ``replay.js`` looks up (``board``,
``moves``...) are its own and the site's styles touch nothing outside it. The
script is given that tree as its ``document``, and a ``history`` that keeps no
address (a notebook has no ``?ply=`` to keep). Where scripts do not run (an
untrusted notebook, a rendering on a code host) the final board is shown instead.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from functools import cache
from html import escape
from importlib import resources
from typing import Any

from arena.engine.game import PLAYER_MARKS, Board, Rules, format_move
from arena.engine.svg import CELL, draw
from arena.text import clip, info_value, plural, printable

#: The info fields most bots report, in columns of their own (as on the site).
INFO_COLUMNS = ("score", "depth", "nodes")
#: What the move list shows of the rest of a move's info.
INFO_SHOWN = 80


@cache
def site_file(name: str) -> str:
    """A file of the league site's ``static/`` folder, as installed with the package."""
    return (resources.files("arena") / "web" / "static" / name).read_text(encoding="utf-8")


def replay_html(
    rules: Rules,
    moves: Sequence[int],
    players: tuple[str, str],
    result: str,
    termination: str,
    reason: str | None = None,
    opening_plies: int = 0,
    move_ms: Sequence[float | None] | None = None,
    move_info: Sequence[Any] | None = None,
) -> str:
    """The replay of a game: its rules, its moves (opening included), its players'
    names (first, second), its result ("1-0", "0-1", "1/2-1/2", "*") and how it
    ended; the time and info of each move where they are known."""
    board = Board.from_moves(list(moves), rules)
    cells = rules.landings(moves)
    names = [escape(printable(name)) for name in players]
    ended = f"{escape(result)} ({escape(termination)})" if result != "*" else "unfinished"
    why = f"<div><dt>Why</dt><dd>{escape(printable(reason))}</dd></div>" if reason else ""
    opening = f" ({opening_plies} of opening)" if opening_plies else ""
    seats = "".join(f'<div><dt><span class="disc p{side}" aria-hidden="true"></span> {PLAYER_MARKS[side]}, '
                    f"{('first', 'second')[side]}</dt><dd>{names[side]}</dd></div>" for side in (0, 1))
    facts = (f'<dl class="facts">{seats}<div><dt>Result</dt><dd>{ended}</dd></div>{why}'
             f"<div><dt>Plies</dt><dd>{len(moves)}{opening}</dd></div></dl>")
    notation = [format_move(move, rules) for move in moves]
    data = {"width": rules.width, "height": rules.height, "cell": CELL, "left": CELL if rules.drawing.row_labels else 0,
            "cells": cells, "falls": [rules.drawing.fall(row) for _, row in cells], "moves": notation,
            "ply": len(moves)}
    svg = draw(rules, cells, board.winning_line(), shown_width=None,
               attributes=' id="board" aria-labelledby="board-caption"')
    large = " large" if max(rules.width, rules.height) > 12 else ""
    replay = (
        f'<div class="game{large}"><section class="board-side" aria-label="Board"><figure>{svg}'
        f'<figcaption id="board-caption">{escape(_after(len(moves), notation))}</figcaption></figure>'
        f"{_controls(len(moves))}</section>"
        f'<section class="moves" aria-label="Moves"><div class="moves-box">'
        f"{_move_table(rules, notation, opening_plies, move_ms, move_info)}</div></section></div>"
    )
    style = _style(len(moves))
    # "<" never appears raw in the JSON: a name or a move cannot end the script element early.
    script_data = json.dumps(data).replace("<", "\\u003c")
    tree = (f"<style>{style}</style><div class=\"arena-game\"><p class=\"heading\">{escape(rules.describe())}</p>"
            f'{facts}{replay}<script type="application/json" id="replay-data">{script_data}</script></div>')
    host = f"arena-replay-{uuid.uuid4().hex}"
    fallback = (f"<div>{draw(rules, cells, board.winning_line())}<p>{names[0]} ({PLAYER_MARKS[0]}) - {names[1]} "
                f"({PLAYER_MARKS[1]}): {ended}, {plural(len(moves), 'ply', 'plies')}</p></div>")
    return (f'<div id="{host}" class="arena-replay"><template>{tree}</template>{fallback}</div>'
            f"<script>{_starter(host)}</script>")


def _after(ply: int, notation: list[str]) -> str:
    """The board's caption after ``ply`` plies, as the game page and replay.js write it."""
    plies = plural(len(notation), "ply", "plies")
    if not ply:
        return f"After 0 of {plies}"
    return f"After {ply} of {plies}: {PLAYER_MARKS[(ply - 1) % 2]} played {notation[ply - 1]}"


def _controls(plies: int) -> str:
    return (
        '<div class="replay" data-with-js hidden>'
        '<button type="button" data-step="first">First</button>'
        '<button type="button" data-step="back" aria-label="Back" title="Back one ply (left arrow key)">◀</button>'
        '<button type="button" data-play aria-pressed="false">Play</button>'
        '<button type="button" data-step="forward" aria-label="Forward" title="Forward one ply (right arrow key)">'
        "▶</button>"
        '<button type="button" data-step="last">Last</button>'
        f'<label class="ply-slider">Ply <input type="range" id="replay-ply" min="0" max="{plies}" value="{plies}">'
        f'</label><output id="replay-count" for="replay-ply">{plies} / {plies}</output></div>'
    )


def _move_table(rules: Rules, notation: list[str], opening_plies: int,
                move_ms: Sequence[float | None] | None, move_info: Sequence[Any] | None) -> str:
    head = "".join(f'<th scope="col"{" class=num" if num else ""}>{name}</th>' for name, num in (
        ("Ply", True), ("By", False), ("Move", False), ("ms", True), ("Score", True), ("Depth", True),
        ("Nodes", True), ("Other info", False)))
    rows = []
    for ply, move in enumerate(notation):
        by = "opening" if ply < opening_plies else PLAYER_MARKS[ply % 2]
        disc = "" if by == "opening" else f'<span class="disc p{ply % 2}" aria-hidden="true"></span> '
        ms = move_ms[ply] if move_ms is not None and ply < len(move_ms) else None
        info = move_info[ply] if move_info is not None and ply < len(move_info) else None
        columns = [info_value(info.get(key)) for key in INFO_COLUMNS] if isinstance(info, dict) else ["", "", ""]
        rest = {k: v for k, v in info.items() if k not in INFO_COLUMNS} if isinstance(info, dict) else info
        other = clip(json.dumps(rest, ensure_ascii=False), INFO_SHOWN) if rest else ""
        current = ' aria-current="step"' if ply + 1 == len(notation) else ""
        rows.append(
            f'<tr data-ply="{ply + 1}" data-move="{escape(move)}"{current}>'
            f'<td class="num"><a href="#" data-goto="{ply + 1}">{ply + 1}</a></td><td>{disc}{by}</td>'
            f'<td>{escape(move)}</td><td class="num">{"" if ms is None else f"{ms:.1f}"}</td>'
            + "".join(f'<td class="num">{escape(printable(value))}</td>' for value in columns)
            + f'<td class="info">{escape(printable(other))}</td></tr>'
        )
    return (f'<table id="moves"><caption>Each move\'s time and its bot\'s info</caption>'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _style(plies: int) -> str:
    """The site's style sheet for the shadow tree (whose top is the host, not the
    page's root), a notebook's sizes, and the winning line shown at the last ply only."""
    return (
        site_file("site.css").replace(":root", ":host", 1)
        + ":host { display: block; font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;"
        " color: var(--ink); }"
        " .arena-game { max-width: 1100px; } .moves-box { max-height: 26em; } svg.board { max-height: 26em; }"
        f' svg.board:not([data-ply="{plies}"]) .winning-line {{ visibility: hidden; }}'
    )


def _starter(host: str) -> str:
    """The script that builds the replay's shadow tree and runs replay.js in it."""
    code = site_file("replay.js").replace("</script", "<\\/script")
    return f"""(() => {{
  const host = document.getElementById("{host}");
  if (!host || host.shadowRoot) return;
  const tree = host.attachShadow({{ mode: "open" }});
  tree.appendChild(host.querySelector("template").content.cloneNode(true));
  const own = {{
    getElementById: (id) => tree.getElementById(id),
    querySelector: (selector) => tree.querySelector(selector),
    querySelectorAll: (selector) => tree.querySelectorAll(selector),
    addEventListener: (...args) => tree.addEventListener(...args),
  }};
  const page = new Proxy(document, {{
    get(target, name) {{
      if (name in own) return own[name];
      const value = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    }},
  }});
  ((document, history) => {{
{code}
  }})(page, {{ replaceState() {{}} }});
}})();"""
