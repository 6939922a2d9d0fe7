"""Step through a stored game in the terminal, or play it through with a delay.

Plain library code: commands come from ``input`` and the positions go to
``output``, so the CLI only wires it to the terminal (and to the store).

Positions are numbered by ply: ply 0 is the empty board, ply N the board after
the first N moves. The per-move lists (``move_info``, ``move_ms``, ``marks``) are
indexed by move, like the store's ``moves`` table: entry i belongs to the i-th
move (stored ply i), which leads to position i + 1.

Commands: Enter or ``n`` next, ``p`` previous, ``j N`` or ``N`` jump to ply N
(0..number of moves), ``q`` quit; end of input quits too.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from arena.engine.game import PLAYER_MARKS, Board, Rules, format_move
from arena.terminal.console import TerminalIO
from arena.terminal.play import format_info, format_ms, render_board, result_text
from arena.text import plural, printable


class ReplaySession(TerminalIO):
    """A stored game, shown one position at a time.

    ``players`` are the names shown for X and O (e.g. bot specs). Lists shorter
    than ``moves`` are padded with None. ``ending`` (optional) is shown at the
    last ply instead of the result read from the board, e.g. ``"1-0 forfeit:
    crashed"``. Every move is checked on construction (IllegalMoveError, a
    ValueError, for a bad record).
    """

    def __init__(
        self,
        rules: Rules,
        moves: Sequence[int],
        players: tuple[str, str] = ("X", "O"),
        move_info: Sequence[dict[str, Any] | None] | None = None,
        move_ms: Sequence[float | None] | None = None,
        marks: Sequence[str | None] | None = None,
        input: TextIO | None = None,
        output: TextIO | None = None,
        color: bool = False,
        start: int = 0,
        ending: str | None = None,
        opening_plies: int = 0,
    ) -> None:
        self.rules = rules
        self.moves = list(moves)
        Board.from_moves(self.moves, rules)  # check the record once, up front
        self.players = tuple(players)
        self.move_info = _padded(move_info, len(self.moves))
        self.move_ms = _padded(move_ms, len(self.moves))
        self.marks = _padded(marks, len(self.moves))
        self.input = input if input is not None else sys.stdin
        self.output = output if output is not None else sys.stdout
        self.color = color
        self.ending = ending
        self.opening_plies = opening_plies  # the first moves, random, which no one chose
        if not 0 <= start <= len(self.moves):
            raise ValueError(f"start ply {start} is out of range 0..{len(self.moves)}")
        #: The position shown: the number of moves played on it.
        self.ply = start

    @property
    def last_ply(self) -> int:
        return len(self.moves)

    def board_at(self, ply: int) -> Board:
        board = Board(self.rules)
        for move in self.moves[:ply]:
            board.play(move)
        return board

    # --- interactive --------------------------------------------------------------------

    def run(self) -> int:
        """Step through the game until ``q`` or end of input; return the last ply shown."""
        self._say(self._header())
        self.show()
        while True:
            line = self._ask(self._prompt())
            if line is None:
                self._say("")
                return self.ply
            command = line.strip().lower()
            if command in ("q", "quit", "exit"):
                return self.ply
            target = self._target(command)
            if target is not None:
                self.ply = target
                self.show()

    def _target(self, command: str) -> int | None:
        """The ply a command asks for, or None after printing why not."""
        if command in ("", "n", "next"):
            if self.ply >= self.last_ply:
                self._say(f"already at the last ply ({self.last_ply}); p goes back, q quits")
                return None
            return self.ply + 1
        if command in ("p", "prev", "previous", "b", "back"):
            if self.ply == 0:
                self._say("already at the start (ply 0)")
                return None
            return self.ply - 1
        if command in ("?", "h", "help"):
            self._say("Enter/n next, p previous, j N or N jump to ply N, q quit")
            return None
        text = command
        for word in ("jump", "j"):
            if text.startswith(word):
                text = text[len(word):].strip()
                break
        if not text.isdigit():
            self._say(f"unknown command {command!r}: Enter/n next, p previous, j N jump, q quit")
            return None
        if int(text) > self.last_ply:
            self._say(f"no ply {int(text)}: this game has plies 0..{self.last_ply}")
            return None
        return int(text)

    # --- non-interactive ----------------------------------------------------------------

    def play_through(self, delay: float, sleep: Callable[[float], Any] = time.sleep) -> None:
        """Print every position from ply 0 to the end, waiting ``delay`` seconds between them."""
        self._say(self._header())
        for ply in range(self.last_ply + 1):
            if ply:
                sleep(delay)
            self.ply = ply
            self.show()

    # --- output ---------------------------------------------------------------------------

    def show(self) -> None:
        """Print the board at the current ply and what happened on it."""
        board = self.board_at(self.ply)
        self._say(render_board(board, self.color))
        self._say(self.describe(self.ply))
        if self.ply == self.last_ply:
            self._say(self._ending(board))

    def describe(self, ply: int) -> str:
        """One line about position ``ply``: the move that led to it, its time, info, mark."""
        head = f"ply {ply}/{self.last_ply}"
        if ply == 0:
            return f"{head}: start, {self._name(0)} to move"
        index = ply - 1
        player = index & 1
        move = format_move(self.moves[index], self.rules)
        if index < self.opening_plies:  # as 'arena show' labels it: no player chose it
            return f"{head}: opening {move} ({PLAYER_MARKS[player]})"
        text = f"{head}: {self._name(player)} played {move}"
        ms = self.move_ms[index]
        if ms is not None:
            text += f" in {format_ms(ms)} ms"
        details = format_info(self.move_info[index])
        if details:
            text += f" ({details})"
        mark = self.marks[index]
        if mark:
            text += f"  mark: {mark}"
        return text

    def _ending(self, board: Board) -> str:
        if self.ending:
            return f"end: {printable(self.ending)}"  # a forfeit's reason may quote the bot
        result = result_text(board)
        if result is None:
            return "end of the record (the game was not finished on the board)"
        return f"game over: {result}"

    def _header(self) -> str:
        return (
            f"{self.rules.describe()}: {PLAYER_MARKS[0]} {printable(self.players[0])} vs "
            f"{PLAYER_MARKS[1]} {printable(self.players[1])}, {plural(self.last_ply, 'ply', 'plies')}"
        )

    def _name(self, player: int) -> str:
        name = self.players[player] if player < len(self.players) else ""
        mark = PLAYER_MARKS[player]
        return f"{mark} ({printable(name)})" if name and name != mark else mark

    def _prompt(self) -> str:
        return f"ply {self.ply}/{self.last_ply} (Enter/n next, p previous, j N jump, q quit): "



def _padded(values: Sequence[Any] | None, length: int) -> list[Any]:
    values = list(values or [])[:length]
    return values + [None] * (length - len(values))
