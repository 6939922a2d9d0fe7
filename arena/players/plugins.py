"""Finding bots: installed plug-ins (entry-point group ``arena.bots``) and bot files.

A bot spec names a bot and its options: ``minimax``, ``minimax:depth=6``,
``path/to/my_bot.py``, ``path/to/my_bot.py:MyBot:depth=3``. Specs are plain
strings so they can travel to worker processes; each worker turns a spec into a
fresh bot with :func:`make_bot`, or into what the referee asks for moves (a
:class:`~arena.protocol.player.Player`) with :func:`make_player`.

A plug-in that fails to import is reported as broken and never takes the other
bots down with it.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from arena.bot import Bot, BotFailure, BotOptionError, Option, Program
from arena.engine.game import Rules
from arena.errors import ArenaError
from arena.players import programs
from arena.players.programs import is_program_path
from arena.protocol import connectx, handshake
from arena.protocol.player import ChannelBot, Player, as_player
from arena.records import BotCode, Limits
from arena.text import content_hash, source_text

# The sandbox is imported inside the functions that start sandboxed bots:
# listing the installed bots (`arena bots`) must not load it.

ENTRY_POINT_GROUP = "arena.bots"


class BotSpecError(ArenaError):
    """A bot spec that names no usable bot or carries a bad option."""


class BotStartError(BotSpecError):
    """A bot that was built but failed to start a game when it was checked:
    ``reason`` is its forfeit reason, as a game would record it."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class BotEntry:
    """One bot the arena knows of, usable or not."""

    name: str
    source: str  # "distribution version" or a file path
    bot_class: type[Bot] | None = None
    error: str | None = None
    content_hash: str | None = None  # for file bots
    program: Program | None = None  # an installed program (any language), played sandboxed

    @property
    def description(self) -> str:
        if self.program is not None:
            return self.program.description or f"program bot at {self.program.path}"
        return self.bot_class.description() if self.bot_class else ""

    @property
    def options(self) -> dict[str, Option[Any]]:
        return dict(self.bot_class.options) if self.bot_class else {}

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "description": self.description,
            "options": {
                key: {"default": opt.default, "type": opt.kind.__name__, "help": opt.help}
                for key, opt in self.options.items()
            },
            "error": self.error,
        }


@dataclass(frozen=True)
class BotSpec:
    """A parsed bot spec: which bot, and the options given to it (as written)."""

    name: str
    options: dict[str, str] = field(default_factory=dict, hash=False)
    path: str | None = None  # set for file bots and program bots
    class_name: str | None = None
    program: bool = False  # a program in any language (arena.players.programs), at path

    @property
    def is_file(self) -> bool:
        return self.path is not None


def parse_spec(text: str) -> BotSpec:
    """Split ``name[:key=value,...]``, ``file.py[:Class][:key=value,...]``, or a program's
    ``cmd:PATH[:key=value,...]`` / ``folder/with/bot.toml[:key=value,...]``."""
    text = text.strip()
    if not text:
        raise BotSpecError("empty bot spec: give a bot name such as 'random' or a .py file")
    head, _, rest = text.partition(":")
    path = class_name = None
    program = False
    if head + ":" == programs.PREFIX or (is_program_path(head) and not head.endswith(".py")):
        if head + ":" == programs.PREFIX:
            head, _, rest = rest.partition(":")
            if not head:
                raise BotSpecError(f"bot spec {text!r}: give the program's path after cmd:, e.g. cmd:./mybot")
        path, program = head, True
        name = programs.program_name(head)
    elif head.endswith(".py"):
        path = head
        if rest and "=" not in rest.split(":", 1)[0]:
            class_name, _, rest = rest.partition(":")
        name = class_name if class_name else Path(head).stem
    else:
        name = head
    options: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise BotSpecError(
                f"bad option {item!r} in bot spec {text!r}: write key=value, "
                "e.g. 'minimax:depth=6'"
            )
        options[key.strip()] = value.strip()
    return BotSpec(name=name, options=options, path=path, class_name=class_name, program=program)


def discover() -> dict[str, BotEntry]:
    """Every installed bot, by name; broken and clashing plug-ins included, marked."""
    found: dict[str, BotEntry] = {}
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=_ep_order):
        entry = _load_entry_point(ep)
        other = found.get(ep.name)
        if other is not None and other.source != entry.source:
            found[ep.name] = BotEntry(
                name=ep.name,
                source=f"{other.source}; {entry.source}",
                error=(
                    f"two plug-ins are named {ep.name!r}: one from {other.source}, "
                    f"one from {entry.source}; uninstall one of them"
                ),
            )
            continue
        found[ep.name] = entry
    return found


class BotRegistry:
    """The installed bots, discovered on first use and kept until :meth:`refresh`.

    Plug-ins do not change mid-run, and importing them all again for every
    game would cost a worker more than the game; a long-lived process that
    installs or removes a plug-in calls :meth:`refresh` to see the change.
    """

    def __init__(self) -> None:
        self._bots: dict[str, BotEntry] | None = None

    def bots(self) -> dict[str, BotEntry]:
        """Every installed bot, by name (see :func:`discover`)."""
        if self._bots is None:
            self._bots = discover()
        return self._bots

    def refresh(self) -> dict[str, BotEntry]:
        """Discover the installed bots again, and keep the new list."""
        self._bots = None
        return self.bots()


#: This process's registry of installed bots.
INSTALLED_BOTS = BotRegistry()


def installed_bots() -> dict[str, BotEntry]:
    """The installed bots of this process's registry (:data:`INSTALLED_BOTS`)."""
    return INSTALLED_BOTS.bots()


def load_entry(spec: BotSpec, installed: dict[str, BotEntry] | None = None) -> BotEntry:
    """The usable BotEntry a spec refers to, or BotSpecError saying why not."""
    if spec.is_file:
        path, digest = file_identity(spec.path, spec.program)  # type: ignore[arg-type]
        return BotEntry(name=spec.name if spec.program else spec.class_name or Path(path).stem, source=path,
                        content_hash=digest)
    installed = installed_bots() if installed is None else installed
    entry = installed.get(spec.name)
    if entry is None:
        raise unknown_bot(spec.name, installed)
    if entry.error:
        raise BotSpecError(f"bot {spec.name!r} cannot be used: {entry.error}")
    return entry


#: Submitted bots an unknown name's message names, at most (close matches come first).
SUBMITTED_NAMED = 10


def unknown_bot(
    name: str, installed: dict[str, BotEntry], submitted: Iterable[str] = (), where: str | None = None
) -> BotSpecError:
    """The one line that refuses a name that is no bot: the known names closest to it
    first, then the installed bots and the bots submitted to the database ``where``."""
    usable = sorted(n for n, e in installed.items() if not e.error)
    names = sorted(set(submitted))
    close = difflib.get_close_matches(name, usable + names, n=3, cutoff=0.6)
    guess = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    listed = f"; installed bots: {', '.join(usable) or 'none'}"
    if where is not None:
        shown = ", ".join(names[:SUBMITTED_NAMED]) + (", ..." if len(names) > SUBMITTED_NAMED else "")
        listed += f"; submitted to {where}: {shown or 'none'}"
    return BotSpecError(f"unknown bot {name!r}{guess}{listed} (or give a path to a .py file)")


def make_bot(
    spec: BotSpec | str,
    installed: dict[str, BotEntry] | None = None,
    isolate: bool = False,
    limits: Limits | None = None,
    submitted: dict[str, BotCode] | None = None,
) -> Bot:
    """A fresh bot built from a spec.

    Bot files and submitted bots (whose code is in ``submitted``, by name; a bot
    file's code may be there too, by its path, when the game is played on a
    cluster's worker) are untrusted: they always run sandboxed in a process of
    their own. Installed bots run in this process unless ``isolate`` is set.
    """
    if isinstance(spec, str):
        spec = _parse_installed_spec(spec) if installed is None else parse_spec(spec)
    if spec.is_file:
        # On another machine the file is not there: its code comes with the game, by path.
        carried = submitted.get(spec.path) if submitted and spec.path else None
        # The file of whoever runs the arena: theirs to play where there is no sandbox.
        return untrusted_bot(carried or file_code(spec), spec.options, limits, own=carried is None)
    if submitted and spec.name in submitted:
        return untrusted_bot(submitted[spec.name], spec.options, limits)
    entry = load_entry(spec, installed)
    if entry.program is not None:  # installed by whoever runs the arena: theirs where there is no sandbox
        try:
            code = programs.program_code(entry.program.path)
        except programs.ProgramError as exc:
            raise BotSpecError(f"installed bot {spec.name!r}: {exc}") from None
        return untrusted_bot(dataclasses.replace(code, label=spec.name), spec.options, limits, own=True)
    assert entry.bot_class is not None
    try:
        bot = entry.bot_class(**spec.options)  # trusted code: also checks the options
    except BotOptionError as exc:
        raise BotSpecError(f"bot spec {spec_text(spec)!r}: {exc}") from None
    if isolate:
        target = f"{entry.bot_class.__module__}:{entry.bot_class.__qualname__}"
        return untrusted_bot(BotCode(label=spec.name, entry_point=target), spec.options, limits)
    return bot


def untrusted_bot(
    code: BotCode, options: dict[str, str], limits: Limits | None = None, own: bool = False
) -> ChannelBot:
    """A bot of code that is not trusted, in the sandbox. Where the system has none
    (:func:`~arena.sandbox.system.sandbox_missing`), a bot file ``own`` to whoever
    runs the arena plays in this process, said once on stderr; any other code
    (submitted bots, installed bots to isolate) is refused: NoSandbox."""
    from arena.sandbox.system import require_sandbox, sandbox_missing, tell_unsandboxed

    if sandbox_missing() is not None:
        if not own:
            require_sandbox(f"bot {code.label!r} (code others wrote)")  # fails closed
        tell_unsandboxed(code.label)
        if code.is_program:
            from arena.protocol.program import LocalProgram

            return LocalProgram(code, options, limits)
        from arena.protocol.local import UnsandboxedBot

        return UnsandboxedBot(code, options, limits)
    from arena.sandbox.proxy import SandboxedBot  # only where there is a sandbox: it needs Linux

    return SandboxedBot(code, options, limits)


def make_player(
    spec: BotSpec | str,
    installed: dict[str, BotEntry] | None = None,
    isolate: bool = False,
    limits: Limits | None = None,
    submitted: dict[str, BotCode] | None = None,
) -> Player:
    """A fresh player built from a spec (see :func:`make_bot`): a sandboxed bot, or
    an installed bot called in this process."""
    return as_player(make_bot(spec, installed, isolate, limits, submitted))


@lru_cache(maxsize=256)
def _parse_installed_spec(text: str) -> BotSpec:
    # Workers build two bots per game from the same few spec strings.
    return parse_spec(text)


def check_spec(
    text: str, installed: dict[str, BotEntry] | None = None, submitted: dict[str, BotCode] | None = None,
    rules: Rules | None = None,
) -> BotSpec:
    """Parse a spec and build the bot once, so mistakes surface before any game.

    Untrusted code is loaded in the sandbox (never in this process) and must start a game.
    With ``rules``, a bot that can never play them (a Kaggle ConnectX agent on a board
    without gravity) is refused too. Nothing is remembered: to check many specs, some
    more than once, use a :class:`BotChecker`.
    """
    return BotChecker(installed).check(text, submitted, rules)


class BotChecker:
    """Checks bot specs like :func:`check_spec`, starting each untrusted bot once.

    Whoever holds the checker decides how long a check counts: a tournament's
    checks share one, and a later run with a fresh checker (a bot file may have
    changed meanwhile, or the sandbox) checks again.
    """

    def __init__(self, installed: dict[str, BotEntry] | None = None) -> None:
        self.installed = installed
        # (canonical spec, sha256 of the code) of the sandboxed bots that started a
        # game, with the kind each said it is ("bot" or "connectx").
        self._started: dict[tuple[str, str], str] = {}
        self._built: set[str] = set()  # program folders built by this checker
        self._variants: dict[tuple[str, str], tuple[handshake.Variant, ...]] = {}  # what each declared it plays

    def check(self, text: str, submitted: dict[str, BotCode] | None = None, rules: Rules | None = None) -> BotSpec:
        """The parsed spec, once its bot was built (and, if sandboxed, started a game).
        A program bot of this machine's (not one submitted) is built first, once."""
        spec = parse_spec(text)
        if spec.program and spec.path is not None and not (submitted and spec.path in submitted):
            built = str(Path(spec.path).resolve())
            if built not in self._built:
                try:
                    programs.build_program(programs.read_program(spec.path))
                except programs.ProgramError as exc:
                    raise BotSpecError(str(exc)) from None
                self._built.add(built)
        bot = make_bot(spec, self.installed, submitted=submitted)
        kind = str(getattr(bot, "kind", "bot"))
        if isinstance(bot, ChannelBot):
            key = (spec_text(spec), programs.code_digest(bot.code) if bot.code.is_program
                   else content_hash(bot.code.text or ""))
            if key in self._started:
                bot.close()
            else:
                _check_sandboxed(key[0], bot)
                self._started[key] = bot.kind
                self._variants[key] = handshake.variants_of(bot.hello)
            kind = self._started[key]
            if rules is not None and not handshake.plays(self._variants[key], rules):
                raise BotSpecError(handshake.refusal(text, self._variants[key], rules) + "; give it rules it "
                                   "declares, or leave it out")
        if rules is not None and kind == "connectx":
            why = connectx.unsupported(rules)
            if why is not None:
                raise BotSpecError(f"bot {text!r} is a Kaggle ConnectX agent and {why}: "
                                   f"it cannot play {rules.describe()}; give it rules Kaggle has, or make it a Bot")
        return spec


def _check_sandboxed(text: str, bot: Bot) -> None:
    try:
        bot.new_game(Rules(), 0, 0)
    except BotFailure as exc:
        raise BotStartError(f"bot {text!r}: {exc.reason}", exc.reason) from None
    finally:
        bot.close()


def spec_text(spec: BotSpec) -> str:
    """The canonical text of a spec (options sorted), used as the bot's identity."""
    head = spec.path if spec.is_file else spec.name
    if spec.program and not is_program_path(spec.path or ""):  # a bare file name: cmd: says what it is
        head = programs.PREFIX + (spec.path or "")
    if spec.class_name:
        head = f"{head}:{spec.class_name}"
    if not spec.options:
        return head  # type: ignore[return-value]
    options = ",".join(f"{k}={v}" for k, v in sorted(spec.options.items()))
    return f"{head}:{options}"


def file_code(spec: BotSpec) -> BotCode:
    """The source of a file bot, or a program's command and files, read now (the
    sandbox never needs to open them)."""
    assert spec.path is not None
    if spec.program:
        try:
            return programs.program_code(spec.path)
        except programs.ProgramError as exc:
            raise BotSpecError(str(exc)) from None
    file = Path(spec.path)
    if not file.is_file():
        raise BotSpecError(f"bot file {spec.path!r} does not exist")
    try:
        source = source_text(file.read_bytes())
    except (OSError, UnicodeDecodeError) as exc:
        raise BotSpecError(f"bot file {spec.path!r} cannot be read: {exc}") from None
    return BotCode(label=spec.path, text=source, class_name=spec.class_name)


def file_identity(path: str, program: bool = False) -> tuple[str, str]:
    """(absolute path, sha256 of the content) of a bot file, or of a program's files."""
    if program:
        try:
            return str(Path(path).resolve()), programs.code_digest(programs.program_code(path))
        except programs.ProgramError as exc:
            raise BotSpecError(str(exc)) from None
    file = Path(path)
    if not file.is_file():
        raise BotSpecError(f"bot file {path!r} does not exist")
    data = file.read_bytes()
    try:  # the hash of its text, as file_code reads it: a byte-order mark is no part of the code
        return str(file.resolve()), content_hash(source_text(data))
    except UnicodeDecodeError:
        return str(file.resolve()), content_hash(data)


def _ep_order(ep: metadata.EntryPoint) -> tuple[str, str]:
    return (ep.name, _ep_source(ep))


def _ep_source(ep: metadata.EntryPoint) -> str:
    dist = ep.dist
    if dist is None:
        return ep.value
    return f"{dist.metadata['Name']} {dist.version}"


def _load_entry_point(ep: metadata.EntryPoint) -> BotEntry:
    source = _ep_source(ep)
    try:
        obj = ep.load()
    except Exception as exc:  # any failure in third-party code is reported, not raised
        return BotEntry(ep.name, source, error=f"failed to import: {type(exc).__name__}: {exc}")
    if isinstance(obj, Program):
        return BotEntry(ep.name, source, program=obj)
    if not (inspect.isclass(obj) and issubclass(obj, Bot)):
        return BotEntry(ep.name, source, error=f"{ep.value} is not a subclass of arena.bot.Bot "
                                               "nor an arena.bot.Program")
    return BotEntry(ep.name, source, bot_class=obj)
