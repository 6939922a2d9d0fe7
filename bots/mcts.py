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
from typing import TYPE_CHECKING, Any, Protocol

from arena.bot import Bot, BotOptionError, Choice, Option
from arena.engine.game import Board, Rules
from bots.lines import lines_for
from bots.search_shared import LCG_ADD, LCG_MUL, RootMove

if TYPE_CHECKING:
    from bots.mcts_fast import NumbaTree

#: A line of the safety margin: the share of time_allowed used, and seconds kept back.
TIME_SHARE = 0.8
TIME_RESERVE = 0.05
#: In a playout, look at the clock every this many plies (a power of two, minus one).
CLOCK_EVERY = 31
# The playouts' random numbers: LCG_MUL and LCG_ADD (bots/search_shared.py), on 64 bits.
M64 = (1 << 64) - 1
BACKENDS = ("auto", "numba", "python")


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
        self, a: int, o: int, wa: int, wo: int, state: int, clock: Callable[[], float], deadline: float
    ) -> tuple[float, int]:
        """Play on to the end: (1 if the side to move now wins, 0 if it loses, 0.5 a
        draw, also when the deadline passes first; the random stream's new state)."""
        if self.gravity:
            return self._playout_gravity(a, o, wa, wo, state, clock, deadline)
        return self._playout_free(a, o, wa, wo, state, clock, deadline)

    def _playout_gravity(
        self, a: int, o: int, wa: int, wo: int, state: int, clock: Callable[[], float], deadline: float
    ) -> tuple[float, int]:
        threats, column, full = self.threats, self.column, self.full
        top_row, stride = self.top_row, self.stride
        mask = a | o
        free = (mask + self.bottom_row) & full
        cols = [c for c in range(self.width) if free & column[c]]
        turn = 0
        plies = 0
        while free:
            if wa & free:
                return 1 - turn, state  # the side to move wins
            block = wo & free
            if block:
                if block & (block - 1):
                    return turn, state  # two threats: the side to move loses
                bit = block
            else:
                n = len(cols)
                unsafe = (wo & ~mask) >> 1
                if free & unsafe and free & ~unsafe:
                    while True:
                        state = (state * LCG_MUL + LCG_ADD) & M64
                        bit = free & column[cols[((state >> 32) * n) >> 32]]
                        if not bit & unsafe:
                            break
                else:
                    state = (state * LCG_MUL + LCG_ADD) & M64
                    bit = free & column[cols[((state >> 32) * n) >> 32]]
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
        return 0.5, state

    def _playout_free(
        self, a: int, o: int, wa: int, wo: int, state: int, clock: Callable[[], float], deadline: float
    ) -> tuple[float, int]:
        threats = self.threats
        mask = a | o
        free = self.full & ~mask
        cells = [bit for bit in self.cell_bits if not bit & mask]
        n = len(cells)
        turn = 0
        plies = 0
        while free:
            if wa & free:
                return 1 - turn, state
            block = wo & free
            if block:
                if block & (block - 1):
                    return turn, state
                bit = block
            else:
                # Pick-and-remove; cells filled by forced moves are dropped when drawn.
                while True:
                    state = (state * LCG_MUL + LCG_ADD) & M64
                    i = ((state >> 32) * n) >> 32
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
        return 0.5, state


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


def pick_move(moves: list[RootMove]) -> RootMove | None:
    """The move to play: a proven win, else the most visited move not proven lost
    (more value breaks a tie, then the earlier tried)."""
    if not moves:
        return None
    for move in moves:
        if move[3] == 1.0:
            return move
    alive = [m for m in moves if m[3] != 0.0] or moves
    return max(alive, key=lambda m: (m[1], m[2]))


class SearchTree(Protocol):
    """What the bot asks of a back end (:class:`PythonTree`, ``bots.mcts_fast.NumbaTree``).

    A tree belongs to one bot and one set of rules; ``state`` is the random
    stream of its playouts, carried from move to move.
    """

    name: str
    rules: Rules
    state: int

    def set_root(self, board: Board, reuse: bool) -> bool:
        """Search ``board`` next: the kept subtree if it reached this position
        (and ``reuse``), else a fresh tree. True when a subtree was kept."""
        ...

    def think(self, deadline: float, budget: int | None) -> int:
        """Iterate until the root is proven, ``budget`` iterations ran, or
        ``deadline`` (time.perf_counter) comes; the number of iterations."""
        ...

    def root_visits(self) -> int: ...

    def root_moves(self) -> list[RootMove]: ...

    def first_candidate(self) -> int:
        """The most central move worth searching (when no iteration could run)."""
        ...


class PythonTree:
    """The tree as linked :class:`Node` objects on Python ints: any rules, any size."""

    name = "python"

    def __init__(self, rules: Rules, c: float, state: int) -> None:
        self.rules = rules
        self.kit = kit_for(rules)
        self.c = c
        self.state = state
        self.root = Node(-1, 0, 0, 0, 0, None)
        self.history: list[int] | None = None  # the root's moves; None: no tree yet

    def set_root(self, board: Board, reuse: bool) -> bool:
        kit = self.kit
        history, known = board.history, self.history
        node: Node | None = None
        if reuse and known is not None and len(history) >= len(known) and history[: len(known)] == known:
            node = self.root
            for move in history[len(known):]:
                node = next((c for c in node.children if c.move == move), None)
                if node is None:
                    break
        reused = node is not None and node.visits > 0
        if node is None or not reused:
            me = board.to_move
            a, o = board.stones(me), board.stones(1 - me)
            node = Node(-1, a, o, kit.threats(a), kit.threats(o), None)
        if node.untried is None:
            node.untried, node.exact = kit.candidates(node.a, node.o, node.wa, node.wo)
        self.root, self.history = node, list(history)
        return reused

    def root_visits(self) -> int:
        return self.root.visits

    def root_moves(self) -> list[RootMove]:
        return [(c.move, c.visits, c.value, c.result) for c in self.root.children]

    def first_candidate(self) -> int:
        untried = self.root.untried
        return untried[-1][0] if untried else self.root.children[0].move

    def think(self, deadline: float, budget: int | None) -> int:
        root = self.root
        assert root.untried is not None  # set_root lists the root's candidates
        if len(root.untried) + len(root.children) > 1:
            return self._search(root, deadline, budget)
        if root.untried:  # a single candidate (a win or a forced block): expand it
            self._iterate(root, time.perf_counter, deadline)
            return 1
        return 0

    def _search(self, root: Node, deadline: float, budget: int | None) -> int:
        clock = time.perf_counter
        done = 0
        last = 0.0
        while root.result is None:
            now = clock()
            if budget is None:
                if now + last > deadline:  # the next iteration would likely overrun
                    break
            elif done >= budget or now > deadline:
                break
            self._iterate(root, clock, deadline)
            done += 1
            last = clock() - now
        return done

    def _iterate(self, root: Node, clock: Callable[[], float], deadline: float) -> None:
        """One selection, expansion, playout and backup; proves what it can."""
        kit, c = self.kit, self.c
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
                    result, self.state = kit.playout(a, o, child.wa, child.wo, self.state, clock, deadline)
                    reward = 1.0 - result
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


# --- choosing a back end ---------------------------------------------------------------


class _FastModule(Protocol):
    """What the bot takes from :mod:`bots.mcts_fast` (the module itself)."""

    @property
    def NumbaTree(self) -> type[NumbaTree]: ...  # the module's class

    def warm_up(self, rules: Rules) -> None: ...


@lru_cache(maxsize=1)
def _fast_module() -> _FastModule | None:
    try:
        from bots import mcts_fast
    except Exception:  # numba missing, or it cannot build/cache here: stay pure
        return None
    return mcts_fast


def fast_available() -> bool:
    """True if the compiled back end (numba) can be imported."""
    return _fast_module() is not None


def fits_fast(rules: Rules) -> bool:
    """Does the board fit the compiled back end (64-bit bitboards)?"""
    return rules.width * (rules.height + 1) <= 64


def resolve_backend(rules: Rules, backend: str) -> str:
    """The back end that will serve ``rules`` when ``backend`` is asked for: "numba" or "python"."""
    if backend == "python":
        return "python"
    usable = fits_fast(rules) and fast_available()
    if backend == "numba" and not usable:
        why = "numba is not importable" if fits_fast(rules) else "the board needs more than 64 bits"
        raise BotOptionError(f"option backend=numba cannot serve {rules.describe()}: {why}")
    return "numba" if usable else "python"


def make_tree(rules: Rules, backend: str, c: float, state: int) -> SearchTree:
    """A fresh tree for ``rules`` on the back end ``backend`` resolves to."""
    if resolve_backend(rules, backend) == "numba":
        module = _fast_module()
        assert module is not None  # resolve_backend picks numba only when it is importable
        return module.NumbaTree(rules, c, state)
    return PythonTree(rules, c, state)


class MctsBot(Bot):
    """MCTS: UCT tree search with win/block-aware random playouts, proven wins and tree reuse.

    Each iteration descends the tree by UCT (value + c * sqrt(ln N / n)), adds one
    move and plays at random to the end, except that every side takes a win when
    it has one, blocks a single threat, and with gravity avoids the cell under an
    opponent's threat. Tree candidates follow the same rules; wins and losses are
    proven and propagated (MCTS-solver). The budget is ``playouts`` iterations if
    set, else ``seconds`` (cut down to 80% of time_allowed less 50 ms when the
    referee allows less). The subtree of the position after the opponent's reply
    is kept for the next move. Boards that fit in 64 bits are searched by the
    compiled back end (:mod:`bots.mcts_fast`) when numba is there; both back ends
    make the same moves for the same seed and playout budget.
    """

    name = "mcts"
    playouts = Option(0, "iterations per move (0: search for `seconds`)")
    seconds = Option(1.0, "seconds per move when playouts is 0")
    c = Option(0.8, "UCT exploration constant")
    reuse = Option(True, "keep the subtree of the position after the opponent's reply")
    backend = Option("auto", "tree and playout back end: auto, numba or python")

    def __init__(self, **options: object) -> None:
        super().__init__(**options)
        if self.playouts < 0:
            raise BotOptionError(f"option playouts={self.playouts} must be 0 or more")
        if not self.seconds > 0 or not math.isfinite(self.seconds):
            raise BotOptionError(f"option seconds={self.seconds} must be a positive number")
        if not self.c >= 0 or not math.isfinite(self.c):
            raise BotOptionError(f"option c={self.c} must be 0 or more")
        if self.backend not in BACKENDS:
            raise BotOptionError(f"option backend={self.backend!r} must be one of {', '.join(BACKENDS)}")
        self._tree: SearchTree | None = None

    def new_game(self, rules: Rules, player: int, seed: int) -> None:
        super().new_game(rules, player, seed)
        self._tree = None
        if not rules.counts_windows:
            tree = self._tree_for(rules)
            if tree.name == "numba":
                module = _fast_module()
                assert module is not None
                module.warm_up(rules)  # compile/load before the clock runs

    def _tree_for(self, rules: Rules) -> SearchTree:
        if self._tree is None or self._tree.rules != rules:
            self._tree = make_tree(rules, self.backend, self.c, self.rng.getrandbits(64))
        return self._tree

    # --- budget ----------------------------------------------------------------

    def _deadline(self, started: float) -> float:
        seconds = math.inf if self.playouts else self.seconds
        if self.time_allowed is not None:
            seconds = min(seconds, max(0.005, self.time_allowed * TIME_SHARE - TIME_RESERVE))
        return started + seconds

    # --- search ----------------------------------------------------------------

    def choose_move(self, board: Board) -> Choice:
        if board.rules.counts_windows:
            # Its playouts end at the first line: under full-board scoring they would
            # aim at the wrong thing. The window-counting minimax plays instead.
            from bots.minimax import MinimaxBot

            answer = MinimaxBot(depth=2).choose_move(board)
            return Choice(answer.move, {**answer.info, "fallback": "count scoring: minimax depth 2"})
        started = time.perf_counter()
        tree = self._tree_for(board.rules)
        reused = tree.set_root(board, self.reuse)
        playouts = tree.think(self._deadline(started), self.playouts or None)
        best = pick_move(tree.root_moves())
        info: dict[str, object] = {"playouts": playouts, "visits": tree.root_visits()}
        if best is None:  # no time for a single iteration: the most central candidate
            move, rate = tree.first_candidate(), 0.5
        else:
            move, visits, value, _ = best
            rate = value / visits if visits else 0.5
        info.update(win_rate=round(rate, 4), reused=reused, backend=tree.name)
        return Choice(move, info)
