"""The MCTS bot: UCT Monte-Carlo tree search with tactical random playouts.

Everything in the hot loop works on raw bitboard ints in the layout of
:mod:`arena.engine.game` (bit ``column * (height + 1) + row``). A position is four ints:
``a`` and ``o``, the stones of the side to move and of the other side, and ``wa``
and ``wo``, their *threat cells*: the cells (empty or not) that would complete a
line of ``connect`` for that side. A move wins exactly when it fills one of the
mover's threat cells, so one threat computation per ply replaces the win test and
also drives the playout policy:

* win if you can: a playable cell among the mover's threats ends the playout;
* block if you must: a playable cell among the opponent's threats is played
  (two of them and the mover has lost);
* otherwise a random move, avoiding (with gravity) the cell right under an
  opponent's threat, which would hand the opponent the win.

The tree uses the same rules to choose its candidate moves, and proves wins and
losses as it goes (MCTS-solver): a node whose side to move can win at once is
lost for the side that moved into it; a node all of whose moves lose is won.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from arena.bot import Bot, BotOptionError, Choice, Option
from arena.engine.game import Board, Rules
from bots.lines import lines_for

#: A line of the safety margin: the share of time_allowed used, and seconds kept back.
TIME_SHARE = 0.8
TIME_RESERVE = 0.05
#: In a playout, look at the clock every this many plies (a power of two, minus one).
CLOCK_EVERY = 31


def threat_source(rules: Rules) -> str:
    """Python source of ``threats(x)``: every cell that completes a line with ``x``.

    For each direction with shift ``s``, ``up_j`` marks the cells ``p`` with own
    stones on ``p+s .. p+j*s`` and ``dn_j`` those with own stones on
    ``p-s .. p-j*s``; the cell completes a line when ``up_j & dn_(k-1-j)`` for
    some ``j``. The empty bit on top of every column stops lines from wrapping
    (see arena.engine.game). With gravity an empty cell has nothing above it, so the
    vertical direction only looks down. The code is generated straight-line per
    rules: it runs once per playout ply and is the bulk of the work.
    """
    g = rules.geometry
    k = rules.connect
    body = ["def threats(x):", "    t = 0"]
    for d, s in enumerate(g.shifts):
        only_down = rules.gravity and s == 1
        for side, op in (("dn", "<<"), ("up", ">>")):
            if only_down and side == "up":
                continue
            for j in range(1, k):
                shifted = f"(x {op} {j * s})"
                prev = f" & {side}{d}_{j - 1}" if j > 1 else ""
                body.append(f"    {side}{d}_{j} = {shifted}{prev}")
        terms = [f"dn{d}_{k - 1}"]
        if not only_down:
            terms.append(f"up{d}_{k - 1}")
            terms += [f"(up{d}_{j} & dn{d}_{k - 1 - j})" for j in range(1, k - 1)]
        body.append(f"    t |= {' | '.join(terms)}")
    body.append(f"    return t & {g.full}")
    return "\n".join(body) + "\n"


class Kit:
    """What the search needs for one set of rules: masks, threats, move lists."""

    def __init__(self, rules: Rules) -> None:
        g = rules.geometry
        self.rules = rules
        self.gravity = rules.gravity
        self.width = rules.width
        self.stride = g.stride
        self.full = g.full
        self.bottom_row = sum(g.bottom)
        self.top_row = sum(g.top)
        self.column = list(g.column)
        self.bit_cell = g.bit_cell
        self.cell_bits = list(g.cell_bit)
        # exec() fills a namespace of arbitrary values; "threats" is the generated function.
        namespace: dict[str, Any] = {}
        exec(compile(threat_source(rules), f"<threats {rules.describe()}>", "exec"), namespace)
        self.threats: Callable[[int], int] = namespace["threats"]
        # Candidate moves in centre order: (move, column mask) or (move, cell bit).
        if rules.gravity:
            self.order = [(m, g.column[m]) for m in g.centre_order]
        else:
            self.order = [(m, g.cell_bit[m]) for m in g.centre_order]
            self.lines = lines_for(rules)

    def playable(self, mask: int) -> int:
        """The cells a move can fill now."""
        if self.gravity:
            return (mask + self.bottom_row) & self.full
        return self.full & ~mask

    def move_of(self, bit: int) -> int:
        """The move that fills the cell ``bit`` (which must be playable)."""
        if self.gravity:
            return (bit.bit_length() - 1) // self.stride
        return self.bit_cell[bit]

    def candidates(self, a: int, o: int, wa: int, wo: int) -> tuple[list[tuple[int, int]], bool]:
        """The moves worth searching, centre last (they are popped), and whether
        every move left out is a proven loss.

        A win is the only candidate; else a forced block; else every move except,
        with gravity, those right under an opponent threat (they lose at once);
        without gravity, only cells next to a stone (unless the board is empty).
        """
        mask = a | o
        free = self.playable(mask)
        win = wa & free
        if win:
            bit = win & -win
            return [(self.move_of(bit), bit)], True
        block = wo & free
        if block:
            bit = block & -block
            return [(self.move_of(bit), bit)], True
        exact = True
        if self.gravity:
            unsafe = (wo & ~mask) >> 1
            if free & ~unsafe:
                free &= ~unsafe
            moves = [(m, free & col) for m, col in self.order if free & col]
        else:
            if mask:
                near = free & self.lines.dilate(mask, 1)
                if near != free:
                    exact = False
                free = near or free
                moves = [(m, bit) for m, bit in self.order if free & bit]
            else:
                moves = self.order[:1]
                exact = False
        moves.reverse()
        return moves, exact

    def playout(
        self,
        a: int,
        o: int,
        wa: int,
        wo: int,
        rnd: Callable[[], float],
        clock: Callable[[], float],
        deadline: float,
    ) -> float:
        """Play on to the end; 1 if the side to move now wins, 0 if it loses, 0.5 a draw
        (also when the deadline passes first)."""
        if self.gravity:
            return self._playout_gravity(a, o, wa, wo, rnd, clock, deadline)
        return self._playout_free(a, o, wa, wo, rnd, clock, deadline)

    def _playout_gravity(
        self,
        a: int,
        o: int,
        wa: int,
        wo: int,
        rnd: Callable[[], float],
        clock: Callable[[], float],
        deadline: float,
    ) -> float:
        threats, column, full = self.threats, self.column, self.full
        top_row, stride = self.top_row, self.stride
        mask = a | o
        free = (mask + self.bottom_row) & full
        cols = [c for c in range(self.width) if free & column[c]]
        turn = 0
        plies = 0
        while free:
            if wa & free:
                return 1 - turn  # the side to move wins
            block = wo & free
            if block:
                if block & (block - 1):
                    return turn  # two threats: the side to move loses
                bit = block
            else:
                n = len(cols)
                unsafe = (wo & ~mask) >> 1
                if free & unsafe and free & ~unsafe:
                    while True:
                        bit = free & column[cols[int(rnd() * n)]]
                        if not bit & unsafe:
                            break
                else:
                    bit = free & column[cols[int(rnd() * n)]]
            a |= bit
            mask |= bit
            free ^= bit
            if bit & top_row:
                cols.remove((bit.bit_length() - 1) // stride)
            else:
                free |= bit << 1
            a, o, wa, wo = o, a, wo, threats(a)
            turn ^= 1
            plies += 1
            if not plies & CLOCK_EVERY and clock() > deadline:
                break
        return 0.5

    def _playout_free(
        self,
        a: int,
        o: int,
        wa: int,
        wo: int,
        rnd: Callable[[], float],
        clock: Callable[[], float],
        deadline: float,
    ) -> float:
        threats = self.threats
        mask = a | o
        free = self.full & ~mask
        cells = [bit for bit in self.cell_bits if not bit & mask]
        n = len(cells)
        turn = 0
        plies = 0
        while free:
            if wa & free:
                return 1 - turn
            block = wo & free
            if block:
                if block & (block - 1):
                    return turn
                bit = block
            else:
                # Pick-and-remove; cells filled by forced moves are dropped when drawn.
                while True:
                    i = int(rnd() * n)
                    bit = cells[i]
                    n -= 1
                    cells[i] = cells[n]
                    if bit & free:
                        break
            a |= bit
            mask |= bit
            free ^= bit
            a, o, wa, wo = o, a, wo, threats(a)
            turn ^= 1
            plies += 1
            if not plies & CLOCK_EVERY and clock() > deadline:
                break
        return 0.5


@lru_cache(maxsize=64)
def kit_for(rules: Rules) -> Kit:
    return Kit(rules)


class Node:
    """A position in the tree, with the statistics of the move that led to it.

    ``value`` is the sum of rewards for the side that moved into the node;
    ``result`` is None while unproven, else the proven reward for that side
    (1 win, 0 loss, 0.5 draw by a full board).
    """

    __slots__ = (
        "a",
        "children",
        "exact",
        "move",
        "o",
        "result",
        "untried",
        "value",
        "visits",
        "wa",
        "wo",
    )

    def __init__(self, move: int, a: int, o: int, wa: int, wo: int, result: float | None) -> None:
        self.move = move
        self.a, self.o, self.wa, self.wo = a, o, wa, wo
        self.children: list[Node] = []
        self.untried: list[tuple[int, int]] | None = None
        self.exact = True
        self.visits = 0
        self.value = 0.0
        self.result = result

    def prove(self, result: float) -> None:
        self.result = result
        self.value = self.visits * result  # from now on every visit returns it

    def best_child(self) -> Node | None:
        """The move to play: a proven win, else the most visited move not proven lost."""
        children = self.children
        if not children:
            return None
        for child in children:
            if child.result == 1.0:
                return child
        alive = [c for c in children if c.result != 0.0] or children
        return max(alive, key=lambda c: (c.visits, c.value))


class MctsBot(Bot):
    """MCTS: UCT tree search with win/block-aware random playouts, proven wins and tree reuse.

    Each iteration descends the tree by UCT (value + c * sqrt(ln N / n)), adds one
    move and plays at random to the end, except that every side takes a win when
    it has one, blocks a single threat, and with gravity avoids the cell under an
    opponent's threat. Tree candidates follow the same rules; wins and losses are
    proven and propagated (MCTS-solver). The budget is ``playouts`` iterations if
    set, else ``seconds`` (cut down to 80% of time_allowed less 50 ms when the
    referee allows less). The subtree of the position after the opponent's reply
    is kept for the next move.
    """

    name = "mcts"
    playouts = Option(0, "iterations per move (0: search for `seconds`)")
    seconds = Option(1.0, "seconds per move when playouts is 0")
    c = Option(0.8, "UCT exploration constant")
    reuse = Option(True, "keep the subtree of the position after the opponent's reply")

    def __init__(self, **options: object) -> None:
        super().__init__(**options)
        if self.playouts < 0:
            raise BotOptionError(f"option playouts={self.playouts} must be 0 or more")
        if not self.seconds > 0 or not math.isfinite(self.seconds):
            raise BotOptionError(f"option seconds={self.seconds} must be a positive number")
        if not self.c >= 0 or not math.isfinite(self.c):
            raise BotOptionError(f"option c={self.c} must be 0 or more")
        self._root: Node | None = None
        self._root_history: list[int] = []

    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        super().new_game(rules, player, seed)
        self._root = None
        self._root_history = []

    # --- budget ----------------------------------------------------------------

    def _deadline(self, started: float) -> float:
        seconds = math.inf if self.playouts else self.seconds
        if self.time_allowed is not None:
            seconds = min(seconds, max(0.005, self.time_allowed * TIME_SHARE - TIME_RESERVE))
        return started + seconds

    # --- tree reuse ------------------------------------------------------------

    def _find_root(self, board: Board, kit: Kit) -> tuple[Node, bool]:
        history = board.history
        old, known = self._root, self._root_history
        if (
            self.reuse
            and old is not None
            and len(history) >= len(known)
            and history[: len(known)] == known
        ):
            node: Node = old
            for move in history[len(known):]:
                child = next((c for c in node.children if c.move == move), None)
                if child is None:
                    break
                node = child
            else:
                return node, node.visits > 0
        me = board.to_move
        a, o = board.stones(me), board.stones(1 - me)
        return Node(-1, a, o, kit.threats(a), kit.threats(o), None), False

    # --- search ----------------------------------------------------------------

    def choose_move(self, board: Board) -> Choice:
        if board.rules.counts_windows:
            # Its playouts end at the first line: under full-board scoring they would
            # aim at the wrong thing. The window-counting minimax plays instead.
            from bots.minimax import MinimaxBot

            answer = MinimaxBot(depth=2).choose_move(board)
            return Choice(answer.move, {**answer.info, "fallback": "count scoring: minimax depth 2"})
        started = time.perf_counter()
        kit = kit_for(board.rules)
        root, reused = self._find_root(board, kit)
        deadline = self._deadline(started)
        if root.untried is None:
            root.untried, root.exact = kit.candidates(root.a, root.o, root.wa, root.wo)
        playouts = 0
        if len(root.untried) + len(root.children) > 1:
            playouts = self._search(root, kit, deadline)
        elif root.untried:  # a single candidate (a win or a forced block): expand it
            self._iterate(root, kit, time.perf_counter, deadline)
            playouts = 1
        self._root, self._root_history = root, board.history
        best = root.best_child()
        if best is None:  # no time for a single iteration: the most central candidate
            return Choice(root.untried[-1][0], {
                "playouts": 0, "visits": root.visits, "win_rate": 0.5, "reused": reused,
            })
        rate = best.value / best.visits if best.visits else 0.5
        return Choice(best.move, {
            "playouts": playouts,
            "visits": root.visits,
            "win_rate": round(rate, 4),
            "reused": reused,
        })

    def _search(self, root: Node, kit: Kit, deadline: float) -> int:
        clock = time.perf_counter
        budget = self.playouts or None
        done = 0
        last = 0.0
        while root.result is None:
            now = clock()
            if budget is None:
                if now + last > deadline:  # the next iteration would likely overrun
                    break
            elif done >= budget or now > deadline:
                break
            self._iterate(root, kit, clock, deadline)
            done += 1
            last = clock() - now
        return done

    def _iterate(self, root: Node, kit: Kit, clock: Callable[[], float], deadline: float) -> None:
        """One selection, expansion, playout and backup; proves what it can."""
        c = self.c
        log, sqrt = math.log, math.sqrt
        node = root
        path = [root]
        while True:
            if node.result is not None:
                reward = node.result
                break
            if node.untried is None:
                node.untried, node.exact = kit.candidates(node.a, node.o, node.wa, node.wo)
            if node.untried:
                move, bit = node.untried.pop()
                a, o = node.o, node.a | bit
                if bit & node.wa:
                    child = Node(move, a, o, 0, 0, 1.0)
                elif a | o == kit.full:
                    child = Node(move, a, o, 0, 0, 0.5)
                else:
                    child = Node(move, a, o, node.wo, kit.threats(o), None)
                node.children.append(child)
                path.append(child)
                if child.result is not None:
                    reward = child.result
                else:
                    reward = 1.0 - kit.playout(a, o, child.wa, child.wo, self.rng.random, clock, deadline)
                break
            # every candidate expanded: descend by UCT (every score is >= 0 > -1.0,
            # so the first child always replaces this starting best)
            scale = c * sqrt(log(node.visits))
            best, best_score = node.children[0], -1.0
            for child in node.children:
                n = child.visits
                score = child.value / n + scale / sqrt(n)
                if score > best_score:
                    best, best_score = child, score
            node = best
            path.append(node)
        # back up, proving wins and losses on the way
        for i in range(len(path) - 1, -1, -1):
            node = path[i]
            node.visits += 1
            node.value += reward
            reward = 1.0 - reward
        for i in range(len(path) - 1, 0, -1):
            node, parent = path[i], path[i - 1]
            if node.result is None or parent.result is not None:
                break
            if node.result == 1.0:  # the side to move in parent wins by this move
                parent.prove(0.0)
            elif (
                node.result == 0.0
                and parent.exact
                and not parent.untried
                and all(ch.result == 0.0 for ch in parent.children)
            ):
                parent.prove(1.0)  # every move loses: the side that moved in wins
            else:
                break
