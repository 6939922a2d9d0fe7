"""The minimax bot: negamax with alpha-beta over a window-counting evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TypeAlias

from arena.bot import Bot, BotOptionError, Choice, Option
from arena.engine.game import Board, Rules
from bots.lines import Lines, lines_for

#: A win scores WIN minus its distance in plies from the root, so sooner is better.
WIN = 1_000_000
FULL = 100_000  # a full window (only seen by evaluate(); the search stops at wins)
THREE = 100  # connect-1 own stones and one empty cell
TWO = 1  # connect-2 own stones and two empty cells
THREAT = 80  # connect-1 opponent stones and one empty cell (counted against)

#: A candidate move of :meth:`_Search.children`: (move, bit, o3, o2, p3, p2, blocks).
_Child: TypeAlias = tuple[int, int, int, int, int, int, bool]


def evaluate(board: Board, player: int) -> int:
    """Static score of ``board`` for ``player``, summed over every window."""
    lines = lines_for(board.rules)
    k = lines.connect
    own, opp = board.stones(player), board.stones(1 - player)
    score = 0
    for w in lines.windows:
        a = (w & own).bit_count()
        o = (w & opp).bit_count()
        if o == 0:
            if a == k:
                score += FULL
            elif a == k - 1:
                score += THREE
            elif a == k - 2:
                score += TWO
        elif a == 0:
            if o == k:
                score -= FULL
            elif o == k - 1:
                score -= THREAT
    return score


def counts(lines: Lines, own: int, opp: int) -> tuple[int, int]:
    """(windows with connect-1 own and the rest empty, with connect-2 own and rest empty)."""
    k = lines.connect
    threes = twos = 0
    for w in lines.windows:
        if not w & opp:
            a = (w & own).bit_count()
            if a == k - 1:
                threes += 1
            elif a == k - 2:
                twos += 1
    return threes, twos


@lru_cache(maxsize=64)
def _move_order(rules: Rules) -> tuple[tuple[int, ...], ...]:
    """The moves in centre order with their bits: (move, bottom, column, top)
    with gravity, (move, bit) without. Read-only, so searches may share it."""
    g = rules.geometry
    if rules.gravity:  # columns from the centre outwards
        return tuple((m, g.bottom[m], g.column[m], g.top[m]) for m in g.centre_order)
    return tuple((m, g.cell_bit[m]) for m in g.centre_order)


class _Search:
    """Negamax over raw bitboards (own, opp, mask) with incremental window counts.

    One search, one object: its node count is its own, so bots (or threads)
    searching at the same time never count each other's nodes.
    """

    def __init__(self, rules: Rules) -> None:
        lines = lines_for(rules)
        self.lines = lines
        self.through = lines.through
        self.k1 = lines.connect - 1
        self.k2 = lines.connect - 2
        self.k3 = lines.connect - 3
        self.gravity = rules.gravity
        self.full = rules.geometry.full
        self.order = _move_order(rules)
        self.nodes = 0

    def children(
        self, own: int, opp: int, mask: int, o3: int, o2: int, p3: int, p2: int
    ) -> tuple[int, None] | tuple[None, list[_Child]]:
        """Candidate moves with their bits and the counts after them.

        Returns (win, moves): ``win`` is a winning move or None; ``moves`` lists
        (move, bit, o3, o2, p3, p2, blocks) in centre order, where o3/o2 are the
        mover's counts and p3/p2 the opponent's after the move, and ``blocks``
        says the move fills a cell where the opponent would complete a line.
        """
        through, k1, k2, k3 = self.through, self.k1, self.k2, self.k3
        out: list[_Child] = []
        # (move, bit) pairs; the order's tuples have more fields with gravity.
        cands: Sequence[tuple[int, ...]]
        if self.gravity:
            cands = [(m, (mask + b) & col) for m, b, col, top in self.order if not mask & top]
        else:
            if mask:
                near = self.lines.dilate(mask, 1) & ~mask
                cands = [(m, b) for m, b in self.order if b & near]
            else:
                cands = self.order[:1]
        for move, bit in cands:
            n3, n2, m3, m2 = o3, o2, p3, p2
            blocks = False
            for w in through[bit.bit_length() - 1]:
                o = (w & opp).bit_count()
                if o == 0:
                    a = (w & own).bit_count()
                    if a == k1:
                        return move, None
                    if a == k2:
                        n3 += 1
                        n2 -= 1
                    elif a == k3:
                        n2 += 1
                elif not w & own:
                    if o == k1:
                        m3 -= 1
                        blocks = True
                    elif o == k2:
                        m2 -= 1
            out.append((move, bit, n3, n2, m3, m2, blocks))
        return None, out

    def can_win(self, own: int, opp: int, mask: int) -> bool:
        """Can the side to move (gravity on) complete a line in one move?"""
        through, k1 = self.through, self.k1
        for _m, b, col, top in self.order:
            if not mask & top:
                bit = (mask + b) & col
                for w in through[bit.bit_length() - 1]:
                    if not w & opp and (w & own).bit_count() == k1:
                        return True
        return False

    def negamax(
        self,
        own: int,
        opp: int,
        mask: int,
        depth: int,
        alpha: int,
        beta: int,
        ply: int,
        o3: int,
        o2: int,
        p3: int,
        p2: int,
    ) -> int:
        """Score for the side to move (stones ``own``); counts are o3/o2 own, p3/p2 opp."""
        self.nodes += 1
        # A win needs an open window with connect-1 own stones (o3 > 0); without
        # gravity its empty cell is always playable, with gravity check the columns.
        if o3 and (not self.gravity or self.can_win(own, opp, mask)):
            return WIN - (ply + 1)
        if depth == 0:
            return THREE * o3 + TWO * o2 - THREAT * p3
        win, moves = self.children(own, opp, mask, o3, o2, p3, p2)
        if win is not None:  # not reached (can_win said no); kept for safety
            return WIN - (ply + 1)
        if not moves:
            return 0  # the board is full: a draw
        forced = [m for m in moves if m[6]]
        if forced:
            moves = forced  # anything else lets the opponent win at once
        best = -WIN - 1
        for _move, bit, n3, n2, m3, m2, _ in moves:
            score = -self.negamax(
                opp, own | bit, mask | bit, depth - 1, -beta, -alpha, ply + 1, m3, m2, n3, n2
            )
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        return best

    def root(self, board: Board, depth: int) -> tuple[int, int]:
        """(best move, its score) for the side to move in ``board``."""
        me = board.to_move
        own, opp, mask = board.stones(me), board.stones(1 - me), board.occupied
        o3, o2 = counts(self.lines, own, opp)
        p3, p2 = counts(self.lines, opp, own)
        self.nodes = 1
        win, moves = self.children(own, opp, mask, o3, o2, p3, p2)
        if win is not None:
            return win, WIN - 1
        if not moves:  # cannot happen on a board with room left; be safe anyway
            return board.centre_order(board.legal_moves())[0], 0
        forced = [m for m in moves if m[6]]
        if forced:
            moves = forced
        alpha, beta = -WIN - 1, WIN + 1
        best_move, best = moves[0][0], -WIN - 1
        for move, bit, n3, n2, m3, m2, _ in moves:
            score = -self.negamax(
                opp, own | bit, mask | bit, depth - 1, -beta, -alpha, 1, m3, m2, n3, n2
            )
            if score > best:  # strict: ties keep the first move in centre order
                best, best_move = score, move
                alpha = max(alpha, score)
        return best_move, best


class MinimaxBot(Bot):
    """Minimax: negamax with alpha-beta to a fixed depth over window scores.

    Every window of `connect` cells scores +100 with connect-1 own stones and one
    empty cell, +1 with connect-2 own and two empty, -80 with connect-1 opponent
    stones and one empty; a win scores 1,000,000 less its distance in plies.
    Moves are searched centre first, wins first; a forced block prunes the rest.
    On gravity-free boards only cells next to a stone are searched.
    """

    name = "minimax"
    depth = Option(4, "search depth in plies (at least 1)")

    def __init__(self, **options: object) -> None:
        super().__init__(**options)
        if self.depth < 1:
            raise BotOptionError(f"option depth={self.depth} must be at least 1")

    def choose_move(self, board: Board) -> Choice:
        depth = self.depth
        if board.rules.counts_windows:
            counting = _CountSearch(board.rules)
            move, score = counting.root(board.copy(), depth)
            return Choice(move, {"score": score, "depth": depth, "nodes": counting.nodes})
        search = _Search(board.rules)
        move, score = search.root(board, depth)
        return Choice(move, {"score": score, "depth": depth, "nodes": search.nodes})


class _CountSearch:
    """Negamax for full-board scoring: nothing ends the game early, so the aim is to
    own more complete windows when the board fills. Each own full window is worth
    FULL, the open-window terms are as in the line game."""

    def __init__(self, rules: Rules) -> None:
        self.lines = lines_for(rules)
        self.nodes = 0

    def evaluate(self, board: Board) -> int:
        me = board.to_move
        own, opp = board.stones(me), board.stones(1 - me)
        mine, theirs = board.window_counts()
        if me == 1:
            mine, theirs = theirs, mine
        if board.is_full():
            return (WIN if mine > theirs else -WIN if theirs > mine else 0) + (mine - theirs)
        o3, o2 = counts(self.lines, own, opp)
        p3, _ = counts(self.lines, opp, own)
        return FULL * (mine - theirs) + THREE * o3 + TWO * o2 - THREAT * p3

    def negamax(self, board: Board, depth: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        if depth == 0 or board.is_full():
            return self.evaluate(board)
        best = -WIN * 2
        for move in board.centre_order(board.legal_moves()):
            board.play(move)
            score = -self.negamax(board, depth - 1, -beta, -alpha)
            board.undo()
            if score > best:
                best = score
                alpha = max(alpha, score)
                if alpha >= beta:
                    break
        return best

    def root(self, board: Board, depth: int) -> tuple[int, int]:
        self.nodes = 1
        best_move, best = None, -WIN * 2
        alpha = -WIN * 2
        for move in board.centre_order(board.legal_moves()):
            board.play(move)
            score = -self.negamax(board, depth - 1, -WIN * 2, -alpha)
            board.undo()
            if score > best:
                best, best_move = score, move
                alpha = max(alpha, score)
        assert best_move is not None
        return best_move, best
