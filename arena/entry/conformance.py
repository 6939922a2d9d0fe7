"""The conformance suite of protocol v1: ``arena check ./mybot`` for a program bot.

Each check starts the program afresh, through the players the arena plays games
with (sandboxed where the system has a sandbox), and either holds a short exchange
with it over the real channel or plays whole games against the random bot through
the referee: what passes here plays in the arena. A check that fails keeps the
end of its exchange, the lines sent (``>``) and received (``<``), and what came
instead of an answer (no answer, an exit), escaped and clipped: the bot's words
are shown, never obeyed.

The checks run in order, and a check that the rest stand on (an answer to
``hello``, a start in time, answers that can be read and paired with requests)
skips the rest when it fails: every game would fail the same way, and say no more.
Waits on answers whose time is not what a check measures are generous
(:func:`patience`), so that a slow start fails the start-up check alone, not the
handshake as well.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

from arena.bot import BotFailure, Limit
from arena.engine.game import MAX_SIZE, MIN_SIZE, Board, Rules, RulesError
from arena.errors import ArenaFault
from arena.players import programs
from arena.players.plugins import BotSpec, BotSpecError, file_code, parse_spec, spec_text, untrusted_bot
from arena.protocol import handshake, messages
from arena.protocol.descriptors import QUIT_SECONDS, BotTimeout, DescriptorBot
from arena.protocol.handshake import DeclaredOption, Variant
from arena.records import BotCode, GameRecord, GameSpec, Limits, Termination, TimeControl
from arena.referee.referee import play_game
from arena.text import clip, json_text, printable

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
#: Lines of an exchange a failed check keeps: its end, where it went wrong.
TRANSCRIPT_LINES = 8
#: Characters of one line of an exchange shown, at most.
LINE_CHARACTERS = 200
#: Seconds waited after an answer for a second line: a bot that answers twice
#: writes its lines together, far within this.
SECOND_LINE_SECONDS = 0.5
#: Games chosen from the variants a bot declares, at most (each played twice: as
#: first and as second player).
MAX_GAMES = 6
#: The connect of the largest board played, where the bot's variant allows it:
#: games that end, where a long line would fill the board.
LARGE_CONNECT = 4
#: A name a user can give an option in a bot spec (``cmd:./mybot:depth=6``) holds none of these.
SPEC_CHARACTERS = ":,= "


def patience(seconds: float) -> float:
    """How long a check waits for an answer whose time it does not measure, where
    the arena allows ``seconds``: long enough that a late answer still comes, and
    its lateness is the failure of the check that measures it."""
    return max(2 * seconds, seconds + 5.0)


@dataclass
class Result:
    """One check: its name, passed, failed or skipped, what it found, and (failed)
    the end of the exchange that failed, escaped."""

    name: str
    outcome: str
    detail: str = ""
    exchange: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.outcome == PASSED


class Transcript:
    """What passes on a bot's channel, as the bot saw it: the arena's lines (``>``),
    the bot's (``<``), and what came instead of an answer. Kept by wrapping the
    channel of one bot object (never the class: games elsewhere pay nothing)."""

    def __init__(self, bot: DescriptorBot) -> None:
        self.lines: deque[str] = deque(maxlen=TRANSCRIPT_LINES)
        self._on = False  # off while the sandbox starts its process, and once the bot is closed
        send, receive, connect, close = bot._send, bot._receive, bot._connect, bot.close

        def sent(data: bytes, seconds: float) -> None:
            if self._on:
                self.lines.append("> " + shown(data.rstrip(b"\n")))
            send(data, seconds)

        def received(seconds: float, since: float) -> bytes:
            try:
                line = receive(seconds, since)
            except BotFailure as failure:
                if self._on:
                    self.lines.append(f"  ({printable(clip(failure.reason, LINE_CHARACTERS))})")
                raise
            if self._on:
                self.lines.append("< " + shown(line))
            return line

        def connected() -> None:
            self._on = False  # the job and the sandbox's own first line are no part of the protocol
            connect()
            self._on = True

        def closed() -> None:
            self._on = False  # its quit is no part of the exchange that failed
            close()

        for name, wrapper in (("_send", sent), ("_receive", received), ("_connect", connected), ("close", closed)):
            setattr(bot, name, wrapper)

    def note(self, text: str) -> None:
        self.lines.append(f"  ({text})")


def shown(line: bytes) -> str:
    """A line of the channel as a transcript shows it: text, clipped, escaped."""
    return printable(clip(line.decode("utf-8", "replace"), LINE_CHARACTERS))


class Exchange:
    """One fresh process of the bot, spoken to request by request."""

    def __init__(self, bot: DescriptorBot) -> None:
        self.bot = bot
        self.transcript = Transcript(bot)
        self.started = 0.0
        self._unstarted: BotFailure | None = None  # why its process could not be started

    def __enter__(self) -> Exchange:
        try:
            self.bot._connect()
        except BotFailure as failure:  # its command cannot be run: said as the first request's failure
            self.transcript.note(printable(clip(failure.reason, LINE_CHARACTERS)))
            self._unstarted = failure
        self.started = time.monotonic()  # the arena's start-up clock runs from here too
        return self

    def __exit__(self, *exc: object) -> None:
        self.bot.close()

    def ask(self, request: Any, seconds: float, since: float | None = None) -> dict[str, Any]:
        """Send ``request``, and read its answer within ``seconds`` (of ``since``, or of
        now); :class:`BotFailure` if none comes, or one that is not an answer."""
        if self._unstarted is not None:
            raise self._unstarted
        sent = time.monotonic()
        try:
            self.bot._send(messages.encode(request), seconds)
        except OSError:
            pass  # gone: reading says how
        return messages.parse_answer(self.bot._receive(seconds, sent if since is None else since))

    def second_line(self, seconds: float) -> bytes | None:
        """A line the bot sent after its answer, within ``seconds``; None if none came."""
        try:
            return self.bot._receive(seconds, time.monotonic())
        except BotTimeout:
            self.transcript.lines.pop()  # the wait that found nothing: not part of the exchange
            return None

    def failed(self, name: str, detail: str) -> Result:
        return Result(name, FAILED, detail, list(self.transcript.lines))


@dataclass(frozen=True)
class Settings:
    """The limits a bot is checked under: as a tournament would give them."""

    start_seconds: float = Limits().start_seconds
    move_seconds: float = 1.0
    #: The games to play; None: chosen from the variants the bot declares.
    rules: tuple[Rules, ...] | None = None
    seed: int = 1


class Conformance:
    """The suite for one program bot, named by its spec (``cmd:./mybot``, a folder
    with ``bot.toml``, with options). Made at once: a spec that names no program
    that can run is :class:`BotSpecError` here, before any check; a program with a
    build is built first. :meth:`checks` then runs the checks one by one."""

    def __init__(self, text: str, settings: Settings | None = None) -> None:
        self.spec: BotSpec = parse_spec(text)
        if not self.spec.program or self.spec.path is None:
            raise BotSpecError(f"{text!r} is not a program bot: give cmd:PATH to an executable, or a folder with "
                               f"a {programs.MANIFEST}")
        try:
            programs.build_program(programs.read_program(self.spec.path))
        except programs.ProgramError as exc:
            raise BotSpecError(str(exc)) from None
        self.code: BotCode = file_code(self.spec)
        self.settings = settings or Settings()
        self.limits = Limits(start_seconds=self.settings.start_seconds, move_seconds=self.settings.move_seconds)
        self.label = spec_text(self.spec)
        self.hello_exchange: list[str] = []  # hello and its answer, where the options were declared
        #: The options given, typed as the bot declares them: sent in new_game once checked, as a game sends them.
        self.values: dict[str, Any] = {}

    def fresh(self) -> DescriptorBot:
        """A new bot process's player, as a game makes it (the user's options given)."""
        bot = untrusted_bot(self.code, self.spec.options, self.limits, own=True)
        assert isinstance(bot, DescriptorBot)  # a program: its own process, over descriptors
        return bot

    def checks(self) -> Iterator[Result]:
        """Each check's result, as it is known."""
        hello: dict[str, Any] = {}
        games: list[Rules] = []
        for result in self._opening(hello, games):
            yield result
            if not result.passed:
                yield from self._skipped(f"{result.name} failed", *CHECKS[CHECKS.index(result.name) + 1:])
                return
        sendable = yield from self._options(hello, games[0])
        channel = list(self._channel(games[0]))
        yield from channel
        if any(not result.passed for result in channel):
            yield from self._skipped("its answers cannot be paired with the requests", "legal moves", "move time",
                                     "impossible positions")
        else:
            if self.spec.options and not sendable:
                yield from self._skipped("the options given cannot be sent to it", "legal moves", "move time")
            else:
                yield from self._games(games)
            yield self._impossible_positions(games)
        yield self._quit(games[0])

    def _skipped(self, why: str, *names: str) -> Iterator[Result]:
        for name in names:
            yield Result(name, SKIPPED, why)

    # --- handshake and start-up -----------------------------------------------------------

    def _opening(self, hello: dict[str, Any], games: list[Rules]) -> Iterator[Result]:
        """The handshake, then the start-up: one process, as a game starts it."""
        start = self.settings.start_seconds
        with Exchange(self.fresh()) as exchange:
            try:
                hello.update(exchange.ask(messages.Hello(), patience(start), exchange.started))
            except BotFailure as failure:
                yield exchange.failed("handshake", failure.reason)
                return
            self.hello_exchange = list(exchange.transcript.lines)
            problem = hello_problem(hello)
            if problem is not None:
                yield exchange.failed("handshake", problem)
                return
            variants = handshake.variants_of(hello)
            games.extend(self.settings.rules or games_to_play(variants))
            refused = next((rules for rules in games if not handshake.plays(variants, rules)), None)
            if refused is not None or not games:
                why = (handshake.refusal(printable(clip(str(hello["name"]), 40)), variants, refused)
                       if refused is not None else "its variants hold no game the arena has")
                yield exchange.failed("handshake", why)
                return
            yield Result("handshake", PASSED, describe_hello(hello, variants))
            game = messages.NewGame(games[0], 0, self.settings.seed, TimeControl(self.settings.move_seconds))
            try:
                reply = exchange.ask(game, patience(start), exchange.started)
            except BotFailure as failure:
                yield exchange.failed("start-up", failure.reason)
                return
            took = time.monotonic() - exchange.started
            if reply != messages.ready():
                yield exchange.failed("start-up", f"new_game answered with {_answer(reply)}, not {{\"ok\": true}}")
            elif took > start:
                yield exchange.failed("start-up", f"ready after {took:.3f} s, over start_seconds {start:g} s")
            else:
                yield Result("start-up", PASSED, f"ready in {took:.3f} s (start_seconds {start:g} s)")

    # --- options --------------------------------------------------------------------------

    def _options(self, hello: dict[str, Any], rules: Rules) -> Generator[Result, None, bool]:
        """Its declared options well formed, then their defaults and the user's values
        accepted in ``new_game``. Returns whether the options given can be sent."""
        problem = options_problem(hello.get("options"))
        if problem is not None:
            yield Result("options declared", FAILED, problem, self.hello_exchange)
            yield Result("option values", SKIPPED, "its options are not declared as the protocol says")
            return False
        declared = handshake.declared_options(hello)
        yield Result("options declared", PASSED, f"{len(declared)} declared" if declared else "none declared")
        trials: list[tuple[str, dict[str, Any]]] = []
        defaults = {name: option.default for name, option in declared.items()}
        if defaults:
            trials.append(("their defaults", defaults))
        typed: dict[str, Any] = {}
        if self.spec.options:
            try:
                typed = handshake.typed_options(declared, self.spec.options)
                trials.append(("the values given", typed))
            except BotFailure as failure:
                yield Result("option values", FAILED, f"the values given: {failure.reason}")
                return False
        if not trials:
            yield Result("option values", PASSED, "none to give")
            return True
        for what, values in trials:
            with Exchange(self.fresh()) as exchange:
                game = messages.NewGame(rules, 0, self.settings.seed, TimeControl(self.settings.move_seconds),
                                        values)
                try:
                    exchange.ask(messages.Hello(), patience(self.settings.start_seconds))
                    reply = exchange.ask(game, patience(self.settings.start_seconds))
                except BotFailure as failure:
                    yield exchange.failed("option values", f"{what}: {failure.reason}")
                    return False
                if reply != messages.ready():
                    yield exchange.failed("option values", f"{what}: new_game answered with {_answer(reply)}")
                    return False
        self.values = typed
        yield Result("option values", PASSED, " and ".join(what for what, _ in trials) + " accepted")
        return True

    # --- the channel ----------------------------------------------------------------------

    def _channel(self, rules: Rules) -> Iterator[Result]:
        """Nothing on stdout but answers, and one answer per request: hello, new_game
        and a move, each answer waited for, then a moment for a line no request asked for."""
        start, move = self.settings.start_seconds, self.settings.move_seconds
        requests: list[tuple[Any, float]] = [
            (messages.Hello(), patience(start)),
            (messages.NewGame(rules, 0, self.settings.seed, TimeControl(move), self.values), patience(start)),
            (messages.Move([], Limit(move)), patience(move)),
        ]
        with Exchange(self.fresh()) as exchange:
            for request, seconds in requests:
                try:
                    exchange.ask(request, seconds)
                    extra = exchange.second_line(SECOND_LINE_SECONDS)
                except BotFailure as failure:
                    yield exchange.failed("only answers on stdout", f"to {request.TYPE}: {failure.reason}")
                    yield Result("one answer per request", SKIPPED, "its answers cannot be read")
                    return
                if extra is None:
                    continue
                try:
                    messages.parse_answer(extra)
                except BotFailure:
                    yield exchange.failed("only answers on stdout",
                                          f"a line that is no answer after its answer to {request.TYPE}")
                    yield Result("one answer per request", SKIPPED, "its answers cannot be read")
                    return
                yield Result("only answers on stdout", PASSED, "every line an answer")
                yield exchange.failed("one answer per request",
                                      f"answered twice: a second line after its answer to {request.TYPE}")
                return
        yield Result("only answers on stdout", PASSED, "every line an answer")
        yield Result("one answer per request", PASSED, f"no second line within {SECOND_LINE_SECONDS:g} s of each")

    # --- games ----------------------------------------------------------------------------

    def _games(self, games: list[Rules]) -> Iterator[Result]:
        """Whole games against the random bot, as first and as second player, under the
        move time: a check of legal moves per game, then one of the time taken."""
        clock = TimeControl(self.settings.move_seconds)
        slowest, late = 0.0, None
        for rules in games:
            name = f"legal moves: {rules.describe()}"
            played: list[tuple[int, GameRecord, list[str]]] = []
            for side in (0, 1):
                bot = self.fresh()
                transcript = Transcript(bot)
                spec = GameSpec(key=f"check-{side}", rules=rules, first=self.label if side == 0 else "random",
                                second="random" if side == 0 else self.label, pairing="check",
                                seed=self.settings.seed + side, time_control=clock, limits=self.limits)
                record = play_game(spec, (bot, None) if side == 0 else (None, bot))
                played.append((side, record, list(transcript.lines)))
                slowest = max([slowest, *(m.ms or 0.0 for m in record.moves if m.ply % 2 == side)])
            failure = _game_failure(played)
            if failure is None:
                yield Result(name, PASSED, "; ".join(_game_summary(side, record) for side, record, _ in played))
                continue
            side, record, lines = failure
            reason = record.outcome.reason or ""
            where = f"as {'first' if side == 0 else 'second'} player, ply {len(record.moves)}"
            if reason.startswith("time:"):
                late = late or Result("move time", FAILED, f"{rules.describe()}, {where}: {reason}", lines)
                yield Result(name, SKIPPED, f"cut short by its clock ({where}): see move time")
            else:
                yield Result(name, FAILED, f"{where}: {reason}", lines)
        limit = f"{self.settings.move_seconds:g} s a move"
        yield late or Result("move time", PASSED, f"slowest move {slowest / 1000:.3f} s ({limit})")

    # --- impossible positions -------------------------------------------------------------

    def _impossible_positions(self, games: list[Rules]) -> Result:
        """A move asked in positions that are no game: each refused with an error, in time."""
        name = "impossible positions"
        move = self.settings.move_seconds
        tried = []
        for rules, what, moves in impossible_positions(games):
            with Exchange(self.fresh()) as exchange:
                game = messages.NewGame(rules, len(moves) % 2, self.settings.seed, TimeControl(move), self.values)
                try:
                    exchange.ask(messages.Hello(), patience(self.settings.start_seconds))
                    exchange.ask(game, patience(self.settings.start_seconds))
                    reply = exchange.ask(messages.Move(moves, Limit(move)), move)
                except BotFailure as failure:
                    return exchange.failed(name, f"{what} ({rules.describe()}): {failure.reason}")
                if "error" not in reply:
                    return exchange.failed(name, f"{what} ({rules.describe()}): answered {_answer(reply)}, "
                                                 "not an error")
            tried.append(what)
        return Result(name, PASSED, "refused " + ", ".join(tried))

    # --- quit -----------------------------------------------------------------------------

    def _quit(self, rules: Rules) -> Result:
        """After ``quit`` it closes stdout and exits with code 0, within 1 s."""
        name = "clean quit"
        start = self.settings.start_seconds
        with Exchange(self.fresh()) as exchange:
            try:
                exchange.ask(messages.Hello(), patience(start))
                exchange.ask(messages.NewGame(rules, 0, self.settings.seed, TimeControl(1.0), self.values),
                             patience(start))
                asked = time.monotonic()
                exchange.bot._send_quit()
            except (BotFailure, OSError) as failure:
                return exchange.failed(name, f"before quit: {getattr(failure, 'reason', failure)}")
            if not exchange.bot._closed_within(QUIT_SECONDS):
                exchange.transcript.note(f"stdout still open after {QUIT_SECONDS:g} s")
                return exchange.failed(name, f"did not exit within {QUIT_SECONDS:g} s of quit")
            code = exchange.bot.exit_code(QUIT_SECONDS)
            took = time.monotonic() - asked
            if code is None:
                exchange.transcript.note("stdout closed, the process still running")
                return exchange.failed(name, f"closed its stdout but did not exit within {QUIT_SECONDS:g} s")
            if code != 0:
                exchange.transcript.note(exited(code))
                return exchange.failed(name, f"{exited(code)} after quit, not 0")
        return Result(name, PASSED, f"exited with code 0 in {took:.3f} s")


#: The checks in order, each skipped when the handshake or the start-up before it fails.
CHECKS = ("handshake", "start-up", "options declared", "option values", "only answers on stdout",
          "one answer per request", "legal moves", "move time", "impossible positions", "clean quit")


def exited(code: int) -> str:
    return f"exited with code {code}" if code >= 0 else f"killed by signal {-code}"


def _answer(reply: dict[str, Any]) -> str:
    return printable(clip(json_text(reply), 80))


def _game_failure(played: list[tuple[int, GameRecord, list[str]]]) -> tuple[int, GameRecord, list[str]] | None:
    """The first game the bot lost by forfeit. A game the arena failed in says
    nothing of the bot: :class:`ArenaFault`, as it would stop a tournament."""
    for side, record, lines in played:
        outcome = record.outcome
        if outcome.termination is Termination.VOID:
            raise ArenaFault((outcome.reason or "a game was void").removeprefix("the arena failed: "))
        if outcome.termination is Termination.FORFEIT and outcome.winner != side:
            return side, record, lines
    return None


def _game_summary(side: int, record: GameRecord) -> str:
    winner = record.outcome.winner
    result = "drew" if winner is None else "won" if winner == side else "lost"
    return f"{result} as {'first' if side == 0 else 'second'} in {len(record.moves)} plies"


# --- what the bot says of itself ------------------------------------------------------------


def hello_problem(hello: dict[str, Any]) -> str | None:
    """What is wrong with an answer to ``hello`` for the protocol (None: nothing)."""
    try:
        messages.check_hello(hello)
        handshake.variants_of(hello)
    except BotFailure as failure:
        return failure.reason
    if hello.get("type") != "hello":
        return f"its answer's type is {_value(hello.get('type'))}, not \"hello\""
    name = hello.get("name")
    if not isinstance(name, str) or not name.strip():
        return f"no name: give \"name\", a short text (got {_value(name)})"
    for key in ("author", "version"):
        if key in hello and not isinstance(hello[key], str):
            return f"its {key} must be a text, got {_value(hello[key])}"
    if hello.get("kind", "bot") != "bot":
        return f"kind {_value(hello.get('kind'))}: a program is a \"bot\" (\"connectx\" is for Kaggle agents)"
    return None


def describe_hello(hello: dict[str, Any], variants: tuple[Variant, ...]) -> str:
    who = printable(clip(str(hello["name"]), 40))
    if isinstance(hello.get("version"), str):
        who += " " + printable(clip(hello["version"], 20))
    if isinstance(hello.get("author"), str):
        who += " by " + printable(clip(hello["author"], 40))
    return f"{who}; plays {'; '.join(variant.describe() for variant in variants)}"


def options_problem(declared: Any) -> str | None:
    """What is wrong with the options a ``hello`` answer declares (None: nothing):
    each a name a spec can give, its type, a default of that type within its
    bounds, a help text, and bounds only for numbers, the lower not above the upper."""
    try:
        options = handshake.declared_options({"options": declared})
    except BotFailure as failure:
        return failure.reason
    for name, option in options.items():
        shown_name = printable(clip(repr(name), 40))
        if not name or any(c in name for c in SPEC_CHARACTERS):
            return f"option {shown_name}: a name holds no ':', ',', '=' or space (a spec gives it as name=value)"
        raw = declared[name]
        if "default" not in raw:
            return f"option {shown_name} has no default"
        if not _of_type(option.default, option.type):
            return f"option {shown_name}: its default {_value(option.default)} is not a {option.type}"
        if "help" in raw and not isinstance(raw["help"], str):
            return f"option {shown_name}: its help must be a text"
        if option.type not in ("int", "float") and (option.min is not None or option.max is not None):
            return f"option {shown_name}: min and max are for numbers, not a {option.type}"
        if option.min is not None and option.max is not None and option.min > option.max:
            return f"option {shown_name}: min {option.min} is above max {option.max}"
        if not _within(option):
            return f"option {shown_name}: its default {option.default} is outside min {option.min}, max {option.max}"
    return None


def _of_type(value: Any, kind: str) -> bool:
    types: dict[str, Callable[[Any], bool]] = {
        "int": lambda v: type(v) is int, "float": lambda v: type(v) in (int, float),
        "bool": lambda v: type(v) is bool, "str": lambda v: type(v) is str}
    return types[kind](value)


def _within(option: DeclaredOption) -> bool:
    if option.type not in ("int", "float"):
        return True
    return ((option.min is None or option.default >= option.min)
            and (option.max is None or option.default <= option.max))


def _value(value: Any) -> str:
    return printable(clip(repr(value), 40))


# --- the games a check plays ----------------------------------------------------------------


def games_to_play(variants: tuple[Variant, ...]) -> list[Rules]:
    """Concrete games of the variants a bot declares: Connect Four if it plays it,
    each variant's smallest game with each gravity it claims, and its largest
    board (with Connect Four's line where the variant allows it, for games that
    end); at most :data:`MAX_GAMES`, each once."""
    chosen: list[Rules] = []

    def add(rules: Rules | None) -> None:
        if rules is not None and rules not in chosen and handshake.plays(variants, rules):
            chosen.append(rules)

    add(Rules())
    for variant in variants:
        for gravity in variant.gravity:
            add(_game(variant, variant.width[0], variant.height[0], variant.connect[0], gravity))
    for variant in variants:
        width, height = variant.width[1], variant.height[1]
        add(_game(variant, width, height, max(variant.connect[0], min(LARGE_CONNECT, variant.connect[1])),
                  variant.gravity[0]))
    return chosen[:MAX_GAMES]


def _game(variant: Variant, width: int, height: int, connect: int, gravity: bool) -> Rules | None:
    """A game of ``variant`` near the sizes asked, within the arena's; None if there is none."""
    width, height = (min(max(size, MIN_SIZE), MAX_SIZE) for size in (width, height))
    if connect > max(width, height):  # a line longer than the board: widen it, then heighten it
        width = min(max(width, connect), variant.width[1], MAX_SIZE)
        if connect > max(width, height):
            height = min(max(height, connect), variant.height[1], MAX_SIZE)
    try:
        return Rules(width, height, connect, gravity)
    except RulesError:
        return None


def impossible_positions(games: list[Rules]) -> list[tuple[Rules, str, list[int]]]:
    """Positions that are no game, to be refused: in the first game with gravity the
    bot plays, a full column, a move after the game was won, a column off the
    board; in the first without, a taken cell, a move after a win, a cell off the board."""
    found: list[tuple[Rules, str, list[int]]] = []
    for gravity in (True, False):
        rules = next((r for r in games if r.gravity is gravity), None)
        if rules is None:
            continue
        if gravity:
            found.append((rules, "a full column", [0] * (rules.height + 1)))
        else:
            found.append((rules, "a taken cell", [0, 0]))
        found.append((rules, "a move after the game was won", won_then_moved(rules)))
        found.append((rules, "a move off the board", [rules.move_count]))
    return found


def won_then_moved(rules: Rules) -> list[int]:
    """Moves in which the first player wins, then the second moves."""
    k = rules.connect
    if k <= rules.height:  # a column of the first player's, the second's beside it
        first, second, after = [(0, row) for row in range(k)], [(1, row) for row in range(k - 1)], (2, 0)
    else:  # a row (the rules hold: k <= width), the second's on top of it
        first, second, after = [(c, 0) for c in range(k)], [(c, 1) for c in range(k - 1)], (k - 1, 1)
    cells = [cell for pair in zip(first, second) for cell in pair] + [first[-1], after]
    board = Board(rules)
    return [board.cell_move(column, row) for column, row in cells]
