"""Play in the terminal: a person against a bot, or two people at one keyboard.

:class:`PlaySession` is plain library code: it reads commands from ``input`` and
writes to ``output`` (any text streams), so the CLI only wires it to the terminal
and tests drive it with ``io.StringIO`` scripts.

At the prompt a person types a move in the notation of the rules (a column
``1``..``7``, or a cell such as ``c3`` where moves name cells), or a command:

``u`` undo
    Take back the last move; against a bot, the bot's reply and the person's move
    together, so that it is the person's turn again.
``r`` redo
    Replay what was undone (again in pairs against a bot). A new move clears it.
``h`` hint
    Ask the hint bot for a move and show it, without playing it.
``s`` save
    Call ``on_save(board, False)`` and print the text it returns.
``q`` quit
    Leave the game unfinished (end of input does the same).

When the game ends the result is printed and ``on_save(board, True)`` is called
once. Bad input never raises: it prints one short line and the prompt again.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from arena.bot import NO_LIMIT
from arena.engine.game import PLAYER_MARKS, Board, NotationError, Rules, format_move, parse_move
from arena.players.plugins import make_player
from arena.protocol.bot_log import LogCollector
from arena.protocol.player import Player
from arena.records import BotCode
from arena.terminal.console import TerminalIO
from arena.text import clip, printable, storable

# ANSI escape codes; used only when colour is asked for.
RESET = "\x1b[0m"
STONE_COLOURS = ("\x1b[1;31m", "\x1b[1;33m")  # X bold red, O bold yellow
LAST_MOVE = "\x1b[7m"  # reverse video on top of the stone's colour
_STONE = re.compile(r"[XOxo]")

RESULT_TEXT = {0: f"{PLAYER_MARKS[0]} wins", 1: f"{PLAYER_MARKS[1]} wins", None: "draw"}
HELP = (
    "moves: {moves}; commands: u undo, r redo, h hint, s save, q quit"
)


# --- shared text helpers (also used by arena.replay) ---------------------------------


def render_board(board: Board, color: bool = False) -> str:
    """``board.render()``, with ANSI colours for the stones and the last move if ``color``.

    Without colour the text is exactly ``board.render()`` (no escape codes; the
    last move is the lower-case stone).
    """
    text = board.render()
    if not color:
        return text
    lines = text.split("\n")
    # The last line holds the column labels, which may be letters (even x or o).
    return "\n".join([_STONE.sub(_colour_stone, line) for line in lines[:-1]] + lines[-1:])


def _colour_stone(match: re.Match[str]) -> str:
    mark = match.group(0)
    colour = STONE_COLOURS[PLAYER_MARKS.index(mark.upper())]
    if mark.islower():  # render() shows the last move in lower case
        return f"{colour}{LAST_MOVE}{mark.upper()}{RESET}"
    return f"{colour}{mark}{RESET}"


def format_info(info: dict[str, Any] | None, limit: int = 160) -> str:
    """A bot's info as ``score 12, depth 6, nodes 3456`` (cut at ``limit`` characters)."""
    if not info:
        return ""
    parts = []
    for key, value in info.items():
        if isinstance(value, float):
            shown = f"{value:.4g}"
        elif isinstance(value, (dict, list)):
            shown = json.dumps(value, separators=(",", ":"))
        else:
            shown = str(value)
        parts.append(f"{key} {shown}")
    # Keys and values are the bot's own text: escaped, so they cannot act on the terminal.
    return clip(printable(", ".join(parts)), limit)


def format_ms(ms: float) -> str:
    """Milliseconds to show: one decimal below 10 ms, whole numbers above."""
    return f"{ms:.1f}" if ms < 10 else f"{ms:.0f}"


def move_range(rules: Rules) -> str:
    """The moves a person may type, e.g. ``1-7`` or ``a1-c3``."""
    return f"{format_move(0, rules)}-{format_move(rules.move_count - 1, rules)}"


def result_text(board: Board) -> str | None:
    """``X wins``, ``O wins``, ``draw``, or None while the game goes on."""
    if not board.is_over():
        return None
    return RESULT_TEXT[board.winner]


# --- the session -----------------------------------------------------------------------


@dataclass
class PlyRecord:
    """One ply of a session: the move, and for bot moves the time taken and its info."""

    move: int
    by_bot: bool = False
    ms: float | None = None
    info: dict[str, Any] | None = None


class PlaySession(TerminalIO):
    """A game in the terminal: a person against a bot (``bot`` spec), or two people.

    ``human_player`` is 0 when the person moves first (X), 1 when the bot does.
    ``log_sink`` is told what the bot writes as it writes it (``arena play --debug``).
    ``on_save(board, finished)`` stores the game and returns a line to show
    (e.g. ``saved as game 12``). It gets a copy of the board; ``self.records``
    holds the time and info of every ply (aligned with ``board.history``) for a
    caller that wants to store them too.

    The bot is built here, so a bad spec raises ``BotSpecError`` (an ArenaError)
    before any output; a bot that fails during the game ends the session
    (``outcome`` is then ``"bot failed"``).
    """

    def __init__(
        self,
        rules: Rules,
        bot: str | None = None,
        human_player: int = 0,
        input: TextIO | None = None,
        output: TextIO | None = None,
        color: bool = False,
        hint_bot: str | None = "minimax:depth=6",
        on_save: Callable[[Board, bool], str] | None = None,
        seed: int = 0,
        submitted: dict[str, BotCode] | None = None,
        log_sink: Callable[[str, int | str, str], None] | None = None,
    ) -> None:
        if human_player not in (0, 1):
            raise ValueError(f"human_player must be 0 (moves first) or 1, got {human_player!r}")
        self.rules = rules
        self.bot_spec = bot
        self.human_player = human_player
        self.bot_player: int | None = None if bot is None else 1 - human_player
        self.input = input if input is not None else sys.stdin
        self.output = output if output is not None else sys.stdout
        self.color = color
        self.hint_spec = hint_bot
        self.on_save = on_save
        self.seed = seed
        self.board = Board(rules)
        #: Time and info of every ply on the board, aligned with ``board.history``.
        self.records: list[PlyRecord] = []
        self._redo: list[list[PlyRecord]] = []  # groups of plies, undone last at the end
        #: How the session ended: "X wins", "O wins", "draw", "quit", "bot failed" (None while running).
        self.outcome: str | None = None
        self.submitted = dict(submitted or {})  # the code of submitted bots among bot and hint_bot, by name
        self._bot: Player | None = make_player(bot, submitted=self.submitted) if bot is not None else None
        self._hint: Player | None = None
        if self._bot is not None and log_sink is not None:  # what the bot writes, told as it comes
            self._bot.log = LogCollector(lambda ply, text: log_sink(bot or "", ply, text))

    # --- public -------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        return self.board.is_over()

    def run(self) -> Board:
        """Play until the game ends or the person quits; return the final board."""
        try:
            if not self._restart_bot():
                return self.board
            self._show()
            while not self.board.is_over():
                if self.board.to_move == self.bot_player:
                    if not self._bot_moves():
                        return self.board
                    self._show()
                    continue
                line = self._ask(self._prompt())
                if line is None:  # end of input
                    self._say("")
                    self._quit()
                    return self.board
                status = self._command(line.strip())
                if status == "quit":
                    self._quit()
                    return self.board
                if status == "stop":  # the bot failed to restart after undo/redo
                    return self.board
            self._finish()
            return self.board
        finally:
            self.close()

    def close(self) -> None:
        """Close the bots (run() does this itself when it returns)."""
        for bot in (self._bot, self._hint):
            if bot is not None:
                try:
                    bot.close()
                except Exception:
                    pass
        self._hint = None

    # --- commands -------------------------------------------------------------------

    def _command(self, text: str) -> str | None:
        word = text.lower()
        if not word:
            return None
        if word in ("q", "quit", "exit"):
            return "quit"
        if word in ("u", "undo"):
            return self._undo()
        if word in ("r", "redo"):
            return self._redo_moves()
        if word in ("h", "hint"):
            self._give_hint()
        elif word in ("s", "save"):
            self._save(finished=False)
        elif word in ("?", "help"):
            self._say(HELP.format(moves=move_range(self.rules)))
        else:
            self._human_move(text)
        return None

    def _human_move(self, text: str) -> None:
        try:
            move = parse_move(text, self.rules)
        except NotationError:
            self._say(f"not a move: {text!r} (moves are {move_range(self.rules)}; type ? for help)")
            return
        if not self.board.is_legal(move):
            self._say(f"illegal move: {self.rules.filled_text(move)}")
            return
        self._redo.clear()
        self._play(PlyRecord(move))
        self._show()

    def _undo(self) -> str | None:
        count = 1 if self._bot is None else 2  # against a bot: its reply and the person's move
        if self.board.ply < count:
            self._say("nothing to undo")
            return None
        group = []
        for _ in range(count):
            self.board.undo()
            group.append(self.records.pop())
        self._redo.append(group[::-1])
        if not self._restart_bot():
            return "stop"
        self._show(note=f"took back {self._describe_moves(group[::-1])}")
        return None

    def _redo_moves(self) -> str | None:
        if not self._redo:
            self._say("nothing to redo")
            return None
        group = self._redo.pop()
        for record in group:
            self._play(record)
        if not self._restart_bot():
            return "stop"
        self._show(note=f"replayed {self._describe_moves(group)}")
        return None

    def _give_hint(self) -> None:
        if self.hint_spec is None:
            self._say("no hint bot configured")
            return
        try:
            if self._hint is None:
                self._hint = make_player(self.hint_spec, submitted=self.submitted)
            self._hint.new_game(self.rules, self.board.to_move, self.seed)
            move, info = self._hint.play(self.board.copy(), NO_LIMIT)
        except Exception as exc:  # any failure of the hint bot is only a message
            self._say(f"no hint: {self.hint_spec} failed ({_short(exc)})")
            return
        if not self.board.is_legal(move):  # the bot's answer: checked here
            self._say(f"no hint: {self.hint_spec} suggested an illegal move {move!r}")
            return
        details = format_info(info)
        suffix = f" ({details})" if details else ""
        self._say(f"hint: {format_move(move, self.rules)}{suffix}")  # type: ignore[arg-type]

    def _save(self, finished: bool) -> None:
        if self.on_save is None:
            if not finished:
                self._say("saving is not available here")
            return
        try:
            text = self.on_save(self.board.copy(), finished)
        except Exception as exc:
            self._say(f"save failed: {_short(exc)}")
            return
        if text:
            self._say(str(text))

    # --- the bot ----------------------------------------------------------------------

    def _restart_bot(self) -> bool:
        """(Re)start the bot for the current position; False if it failed."""
        if self._bot is None:
            return True
        try:
            self._bot.new_game(self.rules, self.bot_player, self.seed)  # type: ignore[arg-type]
        except Exception as exc:
            self._bot_failed(f"could not start: {_short(exc)}")
            return False
        return True

    def _bot_moves(self) -> bool:
        assert self._bot is not None
        started = time.perf_counter()
        try:
            move, info = self._bot.play(self.board.copy(), NO_LIMIT)
        except Exception as exc:
            self._bot_failed(f"crashed: {_short(exc)}")
            return False
        ms = (time.perf_counter() - started) * 1000.0
        if not self.board.is_legal(move):  # the bot's answer: checked here
            self._bot_failed(f"answered an illegal move: {move!r}")
            return False
        # storable: the info is the bot's own words, and goes into the game saved
        self._play(PlyRecord(move, by_bot=True, ms=ms, info=storable(dict(info)) if info else None))  # type: ignore[arg-type]
        return True

    def _bot_failed(self, reason: str) -> None:
        self._say(printable(f"the bot {self.bot_spec} {reason}; game abandoned"))  # the reason may quote the bot
        self.outcome = "bot failed"

    # --- board and output ---------------------------------------------------------------

    def _play(self, record: PlyRecord) -> None:
        self.board.play(record.move)
        self.records.append(record)

    def _finish(self) -> None:
        self.outcome = result_text(self.board)
        self._say(f"game over: {self.outcome}")
        self._save(finished=True)

    def _quit(self) -> None:
        self.outcome = "quit"
        self._say(f"quit at ply {self.board.ply}; the game is not finished")

    def _show(self, note: str | None = None) -> None:
        self._say(render_board(self.board, self.color))
        self._say(self._status(note))

    def _status(self, note: str | None) -> str:
        parts = [note] if note else []
        if self.records and note is None:
            record = self.records[-1]
            mover = self._name(self.board.ply - 1 & 1)
            text = f"{mover} played {format_move(record.move, self.rules)} (ply {self.board.ply})"
            if record.ms is not None:
                text += f" in {format_ms(record.ms)} ms"
            details = format_info(record.info)
            if details:
                text += f": {details}"
            parts.append(text)
        elif not self.records:
            parts.append(f"{self.rules.describe()}; X moves first")
        if not self.board.is_over():
            parts.append(f"{self._name(self.board.to_move)} to move")
        return ". ".join(parts)

    def _name(self, player: int) -> str:
        mark = PLAYER_MARKS[player]
        if self._bot is None:
            return mark
        return f"{mark} ({self.bot_spec})" if player == self.bot_player else f"{mark} (you)"

    def _prompt(self) -> str:
        mark = PLAYER_MARKS[self.board.to_move]
        return f"{mark} to move ({move_range(self.rules)}, u undo, r redo, h hint, s save, q quit): "

    def _describe_moves(self, group: list[PlyRecord]) -> str:
        return " ".join(format_move(r.move, self.rules) for r in group)



def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    text = text.splitlines()[0] if text.strip() else type(exc).__name__
    return clip(printable(text), 160)  # a bot's failure may quote the bot
