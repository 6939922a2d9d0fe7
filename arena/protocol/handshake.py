"""What a bot says of itself in its answer to ``hello``: the variants it plays and the
options it takes, read and checked (docs/protocol.md, "hello").

A program bot declares its options with their types; the user gives them as text
(``cmd:./mybot:depth=6``). :func:`typed_options` turns the one into values of the
other, or says in one line what is wrong, before any game: a mistake of the user's
is never a bot's forfeit. A game whose rules no declared variant matches is refused
the same way (:func:`plays`).

Whatever the answer holds is the bot's, untrusted: every reader here checks its
shape and refuses, as :class:`~arena.bot.BotFailure` ("protocol: ..."), what it cannot use.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from arena.bot import BotFailure
from arena.engine.game import MAX_SIZE, MIN_SIZE, SCORINGS, Rules
from arena.text import clip, printable

#: The types an option may declare, and how its value is written in JSON.
OPTION_TYPES = ("int", "float", "bool", "str")
#: Variants a bot may declare at most: a handful describe any real bot.
MAX_VARIANTS = 32
#: Options a bot may declare at most.
MAX_OPTIONS = 64


@dataclass(frozen=True)
class Variant:
    """A family of games a bot plays: inclusive ranges of width, height and connect,
    which gravities, and which scorings (the first line wins, unless it says ``count``)."""

    width: tuple[int, int]
    height: tuple[int, int]
    connect: tuple[int, int]
    gravity: tuple[bool, ...]
    scoring: tuple[str, ...] = ("line",)

    def matches(self, rules: Rules) -> bool:
        return (self.width[0] <= rules.width <= self.width[1] and self.height[0] <= rules.height <= self.height[1]
                and self.connect[0] <= rules.connect <= self.connect[1] and rules.gravity in self.gravity
                and rules.scoring in self.scoring)

    def as_dict(self) -> dict[str, Any]:
        declared = {"width": list(self.width), "height": list(self.height), "connect": list(self.connect),
                    "gravity": list(self.gravity)}
        if self.scoring != ("line",):
            declared["scoring"] = list(self.scoring)
        return declared

    def describe(self) -> str:
        def span(pair: tuple[int, int]) -> str:
            return str(pair[0]) if pair[0] == pair[1] else f"{pair[0]}-{pair[1]}"

        gravities: dict[tuple[bool, ...], str] = {(True,): "with gravity", (False,): "without gravity"}
        gravity = gravities.get(self.gravity, "with or without gravity")
        scoring = "" if self.scoring == ("line",) else f", scoring {' or '.join(self.scoring)}"
        return f"{span(self.width)}x{span(self.height)} connect {span(self.connect)} {gravity}{scoring}"


#: What a bot that declares no variants plays: Connect Four.
CONNECT_FOUR = Variant((7, 7), (6, 6), (4, 4), (True,))
#: Every game the arena has (what a Python bot plays).
EVERY_GAME = Variant((MIN_SIZE, MAX_SIZE), (MIN_SIZE, MAX_SIZE), (MIN_SIZE, MAX_SIZE), (True, False), SCORINGS)


@dataclass(frozen=True)
class DeclaredOption:
    """One option a bot declares: its type, default, help and bounds."""

    type: str
    default: Any = None
    help: str = ""
    min: float | None = None
    max: float | None = None


def variants_of(hello: dict[str, Any]) -> tuple[Variant, ...]:
    """The variants a ``hello`` answer declares (Connect Four alone if it declares none)."""
    declared = hello.get("variants")
    if declared is None:
        return (CONNECT_FOUR,)
    if not isinstance(declared, list) or not declared or len(declared) > MAX_VARIANTS:
        raise BotFailure(f"protocol: variants must be a list of 1 to {MAX_VARIANTS} objects")
    return tuple(_variant(item) for item in declared)


def _variant(item: Any) -> Variant:
    if not isinstance(item, dict):
        raise BotFailure("protocol: a variant that is not an object")
    ranges = []
    for key in ("width", "height", "connect"):
        value = item.get(key, [MIN_SIZE, MAX_SIZE])
        if (not isinstance(value, list) or len(value) != 2 or not all(type(v) is int for v in value)
                or value[0] > value[1]):
            raise BotFailure(f"protocol: a variant's {key} must be [lowest, highest], got {clip(repr(value), 40)}")
        ranges.append((value[0], value[1]))
    gravity = item.get("gravity", [True, False])
    if not isinstance(gravity, list) or not gravity or not all(type(g) is bool for g in gravity):
        raise BotFailure("protocol: a variant's gravity must be a list of true and false, "
                         f"got {clip(repr(gravity), 40)}")
    scoring = item.get("scoring", ["line"])
    if not isinstance(scoring, list) or not scoring or not set(scoring) <= set(SCORINGS):
        raise BotFailure(f"protocol: a variant's scoring must be a list of {' and '.join(map(repr, SCORINGS))}, "
                         f"got {clip(repr(scoring), 40)}")
    return Variant(ranges[0], ranges[1], ranges[2], tuple(sorted(set(gravity), reverse=True)),
                   tuple(s for s in SCORINGS if s in scoring))


def plays(variants: tuple[Variant, ...], rules: Rules) -> bool:
    """Whether a bot that declared ``variants`` plays a game of ``rules``."""
    return any(variant.matches(rules) for variant in variants)


def refusal(name: str, variants: tuple[Variant, ...], rules: Rules) -> str:
    """Why a bot does not play ``rules``: what it declared."""
    declared = "; ".join(variant.describe() for variant in variants)
    return f"bot {name!r} does not play {rules.describe()}: it declares {declared}"


def declared_options(hello: dict[str, Any]) -> dict[str, DeclaredOption]:
    """The options a ``hello`` answer declares, by name."""
    declared = hello.get("options") or {}
    if not isinstance(declared, dict) or len(declared) > MAX_OPTIONS:
        raise BotFailure(f"protocol: options must be an object of at most {MAX_OPTIONS} options")
    options = {}
    for name, spec in declared.items():
        if not isinstance(spec, dict) or spec.get("type") not in OPTION_TYPES:
            raise BotFailure(f"protocol: option {clip(repr(name), 40)} must give its type, one of "
                             f"{', '.join(OPTION_TYPES)}")
        bounds = [spec.get(key) for key in ("min", "max")]
        if any(b is not None and type(b) not in (int, float) for b in bounds):
            raise BotFailure(f"protocol: option {clip(repr(name), 40)}'s min and max must be numbers")
        help_text = spec.get("help")
        options[str(name)] = DeclaredOption(spec["type"], spec.get("default"),
                                            help_text if isinstance(help_text, str) else "", bounds[0], bounds[1])
    return options


_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def typed_options(declared: dict[str, DeclaredOption], given: dict[str, str]) -> dict[str, Any]:
    """The values of ``given`` (as the user wrote them) in the types the bot declared,
    or :class:`BotOptionValueError` saying which is wrong and what to give instead."""
    values: dict[str, Any] = {}
    for name, text in given.items():
        option = declared.get(name)
        if option is None:
            close = difflib.get_close_matches(name, list(declared), n=1)
            guess = f" (did you mean {close[0]!r}?)" if close else ""
            raise BotOptionValueError(f"the bot has no option {name!r}{guess}; its options: "
                                      f"{', '.join(printable(clip(n, 40)) for n in declared) or 'none'}")
        values[name] = _value(name, option, text)
    return values


def _value(name: str, option: DeclaredOption, text: str) -> Any:
    value: Any
    try:
        if option.type == "int":
            value = int(text)
        elif option.type == "float":
            value = float(text)
        elif option.type == "bool":
            if text.lower() not in _TRUE + _FALSE:
                raise ValueError
            value = text.lower() in _TRUE
        else:
            value = text
    except ValueError:
        raise BotOptionValueError(f"option {name}={text!r}: not a {option.type}") from None
    if option.type in ("int", "float"):
        if option.min is not None and value < option.min:
            raise BotOptionValueError(f"option {name}={text}: at least {option.min}")
        if option.max is not None and value > option.max:
            raise BotOptionValueError(f"option {name}={text}: at most {option.max}")
    return value


class BotOptionValueError(BotFailure):
    """An option the user gave that the bot does not declare, or a value not of its type."""
