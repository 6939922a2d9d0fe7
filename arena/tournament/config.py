"""Tournament definitions: a TOML file plus command-line overrides, checked up front.

Every mistake is reported before any game is played, naming the file and the key:
``config/x.toml: rules.width must be between 3 and 40, got 50``.

Loading only reads and checks the definition: it opens no database and starts no
bot. Which bots the specs name (installed, bot files, submitted ``name@vN``) is
settled afterwards by :func:`arena.tournament.entrants.resolve_bots`.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from arena.engine.game import Board, Rules, RulesError, parse_moves
from arena.engine.openings import ValuedOpening, balanced_openings, check_balanced_rules, openings_rng
from arena.engine.solvers import find_solver
from arena.errors import ArenaError
from arena.players.plugins import BotSpecError, parse_spec, spec_text
from arena.ratings.knockout import rounds_for
from arena.ratings.knockout_record import COIN, KNOCKOUT_FORMAT, SOLVER, KnockoutSettings
from arena.records import BotCode, Limits, TimeControl
from arena.referee.adjudication import DEFAULT_ADJUDICATION_STONES
from arena.store.location import DEFAULT_DB, default_db
from arena.text import content_hash, plural

TOURNAMENT_FORMATS = ("round-robin", "gauntlet", "swiss", KNOCKOUT_FORMAT)
#: Formats paired round by round from the results so far (see arena.tournament.rounds).
SWISS_FORMAT = "swiss"
#: The format of a match (``arena match``): one challenger against one bot, which may
#: be itself. Made by :func:`arena.tournament.match.match_config`, never by a file.
MATCH_FORMAT = "match"


class ConfigError(ArenaError):
    """A tournament definition that cannot be run."""


@dataclass(frozen=True)
class OpeningsConfig:
    plies: int = 2  # random plies before the bots take over
    file: str | None = None  # or: one move string per line
    # Only openings the solver proves drawn, or within `margin` of a draw (7x6 connect four).
    balanced: bool = False
    margin: int = 0


#: Balanced openings drawn for a tournament at most: past them they come round again.
MAX_BALANCED_OPENINGS = 100


@dataclass(frozen=True)
class TournamentConfig:
    """A whole tournament definition, validated.

    ``bots`` and ``challengers`` hold canonical spec texts. Until ``resolved`` is
    set (by :func:`arena.tournament.entrants.resolve_bots`) they are as written:
    not yet known to exist, and a submitted bot's latest version not yet pinned.
    """

    name: str  # "" until resolved when neither the file, its path nor --name gave one: see default_name
    bots: tuple[str, ...]
    format: str = "round-robin"
    challengers: tuple[str, ...] = ()  # gauntlet: these play everyone in `bots`
    games: int = 2  # per pairing; each opening is played twice, colours swapped
    rounds: int = 0  # swiss: rounds to play (0 for the other formats)
    rules: Rules = Rules()
    openings: OpeningsConfig = OpeningsConfig()
    time_control: TimeControl = TimeControl()
    seed: int = 1
    private_seeds: bool = False  # seeds keyed by a secret kept in the database (see seed_secret)
    workers: int = 0  # 0: one per core
    isolate: bool = False  # installed bots too run sandboxed (bot files always are)
    limits: Limits = Limits()
    db: str = DEFAULT_DB
    cluster: str | None = None  # where the games are played: local:N, a scheduler's address or file; None: here
    origin: str = "<command line>"  # the file the definition came from (or none), for messages
    opening_lines: tuple[tuple[int, ...], ...] = field(default=(), compare=False)
    submitted: tuple[tuple[str, BotCode], ...] = field(default=(), compare=False)  # submitted bots' code, by name
    # (spec, why) of the submitted bots that failed their start-up check when resolved:
    # each forfeits its games (see arena/tournament/entrants.py).
    failed_start: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    resolved: bool = False  # every bot found, built once, and (if untrusted) started in the sandbox
    # Named by default_name when resolved (no name given): an edited bot file names another tournament.
    named_by_code: bool = field(default=False, compare=False)
    # With private_seeds: the tournament's secret, read from (or first written to) its
    # database by the runner. Never part of the identity, the settings shown, or a repr.
    seed_secret: bytes | None = field(default=None, compare=False, repr=False)
    # A match's sequential test (``Sprt.describe()``), which may end it before its
    # games run out: part of what the match is, so a resumed match goes on with it.
    sprt: str | None = None
    # The stones on the board from which the solver ends a game with the result it
    # proves (``adjudicate = "solver:N"``); None: every game is played out.
    adjudicate: int | None = None
    # The solver's value of each of opening_lines for the first player, where known.
    opening_values: tuple[int | None, ...] = field(default=(), compare=False)
    # A knockout's tie-breaks, seeding and decider (None for the other formats).
    knockout: KnockoutSettings | None = None
    # A knockout's entrants in seed order, settled by the runner when it starts (or
    # read from the stored tournament when it resumes): see arena.tournament.knockout.
    seeds: tuple[str, ...] = field(default=(), compare=False)

    @property
    def entrants(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.challengers + self.bots))

    def identity(self) -> dict[str, Any]:
        """What makes two runs the same tournament (resume checks this)."""
        return {
            "format": self.format,
            "bots": list(self.bots),
            "challengers": list(self.challengers),
            "games": self.games,
            # only for a Swiss tournament: other tournaments' names stay the same
            **({"rounds": self.rounds} if self.format == SWISS_FORMAT else {}),
            **({"knockout": self.knockout.as_dict()} if self.knockout is not None else {}),
            "rules": self.rules.as_dict(),
            "openings": {"plies": self.openings.plies, "lines": [list(o) for o in self.opening_lines],
                         # only when set: names given before balanced openings existed stay the same
                         **({"balanced": {"margin": self.openings.margin}} if self.openings.balanced else {}),
                         # the solver's value of each line, where known (the colours table shows them)
                         **({"values": list(self.opening_values)}
                            if any(v is not None for v in self.opening_values) else {})},
            "time_control": {
                "move_seconds": self.time_control.move_seconds,
                "bank_seconds": self.time_control.bank_seconds,
            },
            "seed": self.seed,
            # only when set: names given before private seeds existed stay the same
            **({"private_seeds": True} if self.private_seeds else {}),
            **({"sprt": self.sprt} if self.sprt else {}),
            **({"adjudicate": f"solver:{self.adjudicate}"} if self.adjudicate is not None else {}),
            "isolate": self.isolate,
            "limits": {"memory_mb": self.limits.memory_mb, "output_kb": self.limits.output_kb,
                       # only when set: names given before the limit existed stay the same
                       **({"processes": self.limits.processes} if self.limits.processes != Limits.processes else {})},
        }

    def default_name(self, code: dict[str, str] | None = None) -> str:
        """The name of a tournament given by flags alone: ``tournament-`` and the first
        8 hex digits of the SHA-256 of its identity (bots with submitted versions pinned,
        games, rules, seed...) and of ``code``, the SHA-256 of each bot file's code by
        spec. The same command with the same code names the same tournament, so running
        it again resumes it; any other setting, a new version of a submitted bot or an
        edited bot file names a new one instead of clashing. A match is ``match-A-B-``
        and the hash, A and B its bots' names."""
        named = self.identity()
        if code:  # only then: the names of tournaments without bot files stay as they were
            named["code"] = dict(sorted(code.items()))
        digest = content_hash(json.dumps(named, sort_keys=True))[:8]
        if self.format == MATCH_FORMAT:
            return "-".join(["match", *(_name_part(bot) for bot in self.challengers + self.bots), digest])
        return "tournament-" + digest


def _name_part(spec: str) -> str:
    """A bot's name as part of a match's name: its name without options or folders,
    in letters, digits, dots and underscores (a bot file's path could hold anything)."""
    name = parse_spec(spec).name.rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9_.@]+", "_", name)[:24] or "bot"


_TOP_KEYS = {
    "name": str, "format": str, "bots": list, "challengers": list, "games": int, "rounds": int,
    "seed": int, "private_seeds": bool, "workers": int, "db": str, "cluster": str, "isolate": bool, "rules": dict,
    "openings": dict, "time": dict, "limits": dict, "adjudicate": str,
    "extra_pairs": int, "seeding": str, "decider": str,  # knockout only
}
#: The keys only a knockout takes.
KNOCKOUT_KEYS = ("extra_pairs", "seeding", "decider")
_LIMITS_KEYS = {"memory_mb": int, "output_kb": int, "processes": int}
_RULES_KEYS = {"width": int, "height": int, "connect": int, "gravity": bool, "scoring": str}
_OPENINGS_KEYS = {"plies": int, "file": str, "balanced": bool, "margin": int}
_TIME_KEYS = {"move_seconds": (int, float), "bank_seconds": (int, float)}


def load_config(path: str | None, overrides: dict[str, Any] | None = None) -> TournamentConfig:
    """Read ``path`` (or start empty), apply ``overrides`` (None values ignored), check.

    Pure: no database is opened and no bot is built; the result is not yet resolved.
    """
    raw: dict[str, Any] = {}
    source = "<command line>"
    base = Path.cwd()
    if path is not None:
        raw, source = _read_toml(path), path
        base = Path(path).resolve().parent
    _check_all(raw, source)
    if path is not None and raw.get("db"):
        raw["db"] = _db_beside(path, raw["db"])  # before the overrides: --db is relative to here
    if path is not None:  # so are bot files: --bots is relative to here, the file's to the file
        for key in ("bots", "challengers"):
            if isinstance(raw.get(key), list):
                raw[key] = [_bot_beside(path, item, key) for item in raw[key]]
    merged = _merge(raw, overrides or {})
    _check_all(merged, source)  # overrides too: the library may be called without the CLI
    return _build(merged, source, base)


def config_db(path: str) -> str:
    """The database the tournament file at ``path`` stores its games in, as
    :func:`load_config` decides: its ``db`` (relative to the file's folder), else
    ``ARENA_DB``, else ``arena.db``. Checks the file's keys, reads nothing else:
    commands that only read a database find it this way (``--config FILE``)."""
    raw = _read_toml(path)
    _check_all(raw, path)
    db = raw.get("db")
    return _db_beside(path, db) if db else default_db()


def _db_beside(config_path: str, db: str) -> str:
    """A ``db`` written in a tournament file: relative to the file's folder, as
    ``openings.file`` is (an absolute path stays as it is)."""
    return str(Path(config_path).parent / db)


def _bot_beside(config_path: str, item: Any, key: str) -> Any:
    """A bot file written in a tournament file, relative to the file's folder (as
    ``db`` and ``openings.file`` are; an absolute path stays as it is), so a tournament
    file plays the same bots wherever the command runs. A path that is not there but
    would be from the current folder is refused here, naming the path and the
    tournament file: the file's folder decides, never the current one, which would
    play another bot from another folder. One that is nowhere is refused when the
    bots are resolved, with the path it was looked for at. The path given back is
    from the current folder: it names the bot in the tables, so a run resumes from
    the folder it started in."""
    if not isinstance(item, str):
        return item  # refused with the other wrong types when the list is checked
    text = item.strip()
    try:
        spec = parse_spec(text)
    except BotSpecError:
        return item  # refused, naming the key, when the list is checked
    if not spec.is_file or Path(spec.path or "").is_absolute():
        return item
    written = spec.path or ""
    prefix = text[:text.index(written)]  # "cmd:" before a program's path, else nothing
    beside = str(Path(config_path).parent / written)
    if spec.program:  # its name in the tables: examples/c-alphabeta, not config/../examples/c-alphabeta
        beside = os.path.normpath(beside)
    if not Path(beside).exists() and Path(written).exists():
        raise ConfigError(f"{config_path}: {key}: bot file {written!r} is not next to the tournament file (looked "
                          f"at {beside}); bot files in a tournament file are relative to the file, not to the current "
                          f"folder: write the path from {str(Path(config_path).parent)!r}")
    # The class and options as written (one not there: refused when resolved).
    return prefix + beside + text[len(prefix) + len(written):]


def _check_all(raw: dict[str, Any], source: str) -> None:
    _check_keys(raw, _TOP_KEYS, source, "")
    sections = (("rules", _RULES_KEYS), ("openings", _OPENINGS_KEYS), ("time", _TIME_KEYS), ("limits", _LIMITS_KEYS))
    for section, keys in sections:
        _check_keys(raw.get(section, {}), keys, source, f"{section}.")


def _read_toml(path: str) -> dict[str, Any]:
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"tournament file {path!r} does not exist")
    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def _check_keys(table: Any, expected: dict[str, Any], source: str, prefix: str) -> None:
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: {prefix.rstrip('.')} must be a table")
    for key, value in table.items():
        if key not in expected:
            valid = ", ".join(prefix + k for k in expected)
            raise ConfigError(f"{source}: unknown key {prefix + key!r}; valid keys: {valid}")
        kind = expected[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wrong_bool = isinstance(value, bool) and bool not in kinds
        if not isinstance(value, kind) or wrong_bool:
            names = " or ".join(k.__name__ for k in kinds)
            raise ConfigError(f"{source}: {prefix + key} must be {names}, got {value!r}")


def _merge(raw: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = dict(raw)
    for key, value in overrides.items():
        if value is None:
            continue
        if "." in key:
            section, sub = key.split(".", 1)
            merged[section] = {**merged.get(section, {}), sub: value}
        else:
            merged[key] = value
    return merged


def config_from_table(raw: dict[str, Any], source: str, base: Path, check_field: bool = True) -> TournamentConfig:
    """A configuration from a tournament file's table already read (a league's stored
    settings); ``check_field`` False allows fewer than two bots (a league starts empty)."""
    _check_all(raw, source)
    return _build(raw, source, base, check_field)


def _build(raw: dict[str, Any], source: str, base: Path, check_field: bool = True) -> TournamentConfig:
    def fail(message: str) -> ConfigError:
        return ConfigError(f"{source}: {message}")

    db = raw.get("db") or default_db()
    bots = _bot_specs(raw.get("bots", []), "bots", fail)
    challengers = _bot_specs(raw.get("challengers", []), "challengers", fail)
    fmt = raw.get("format", "round-robin")
    if fmt not in TOURNAMENT_FORMATS:
        raise fail(f"format must be one of {', '.join(TOURNAMENT_FORMATS)}, got {fmt!r}")
    if check_field:
        check_field_of_play(fmt, bots, challengers, fail)
    try:
        rules = Rules(**raw.get("rules", {}))
    except RulesError as exc:
        raise fail(f"rules: {exc}") from None
    games = raw.get("games", 2)
    if games < 1:
        raise fail(f"games (per pairing) must be at least 1, got {games}")
    rounds = _rounds(fmt, raw.get("rounds"), games, len(bots), fail)
    knockout = _knockout(fmt, raw, games, rules, fail)
    workers = raw.get("workers", 0)
    if workers < 0:
        raise fail(f"workers must be 0 (one per core) or more, got {workers}")
    openings_raw = raw.get("openings", {})
    openings = OpeningsConfig(plies=openings_raw.get("plies", 2), file=openings_raw.get("file"),
                              balanced=openings_raw.get("balanced", False), margin=openings_raw.get("margin", 0))
    if not 0 <= openings.plies <= rules.cells // 2:
        raise fail(f"openings.plies must be between 0 and {rules.cells // 2}, got {openings.plies}")
    valued: tuple[ValuedOpening, ...] = ()
    if openings.file:
        valued = _opening_lines(openings.file, rules, base, fail)
    if openings.balanced:
        # A knockout plays a round's pairs and extra pairs each from an opening of its own.
        pairs = (rounds_for(len(bots)) * (games // 2 + knockout.extra_pairs) if knockout is not None
                 else (games + 1) // 2)
        valued = _balanced(openings, rules, pairs, raw, fail)
    adjudicate = adjudication_stones(raw["adjudicate"], fail) if raw.get("adjudicate") is not None else None
    if adjudicate is not None:
        find_solver(rules)  # a solver that cannot serve these rules is said now, in one line, not game by game
    name = raw.get("name") or (Path(source).stem if source != "<command line>" else "")
    cluster = configured_cluster(raw.get("cluster"), fail)
    return TournamentConfig(
        name=name,
        bots=bots,
        format=fmt,
        challengers=challengers,
        games=games,
        rounds=rounds,
        rules=rules,
        openings=openings,
        time_control=_time_control(raw.get("time", {}), fail),
        seed=raw.get("seed", 1),
        private_seeds=raw.get("private_seeds", False),
        workers=workers,
        isolate=raw.get("isolate", False),
        limits=_limits(raw.get("limits", {}), fail),
        db=db,
        cluster=cluster,
        origin=source,
        opening_lines=tuple(o.moves for o in valued),
        opening_values=tuple(o.value for o in valued),
        adjudicate=adjudicate,
        knockout=knockout,
    )


def _balanced(openings: OpeningsConfig, rules: Rules, pairs: int, raw: dict[str, Any],
              fail: Callable[[str], ConfigError]) -> tuple[ValuedOpening, ...]:
    """The balanced openings of a tournament: one per pair of games of a pairing
    (``pairs``; at most :data:`MAX_BALANCED_OPENINGS`), drawn from its seed."""
    if openings.file:
        raise fail(f"openings.balanced draws openings and openings.file {openings.file!r} reads them: give one")
    if openings.margin < 0:
        raise fail(f"openings.margin must be 0 (a draw) or more, got {openings.margin}")
    if raw.get("private_seeds"):
        # Private seeds promise openings no one can compute from the seed; a balanced
        # draw is worked out before the run reads the secret from the database.
        raise fail("balanced openings are drawn from the public seed, and private_seeds keeps openings secret: "
                   "write a suite with 'arena openings' and play it with --openings file:FILE, or drop private seeds")
    try:
        check_balanced_rules(rules)
    except ArenaError as exc:
        raise fail(str(exc)) from None
    count = min(pairs, MAX_BALANCED_OPENINGS)
    return _drawn_balanced(rules, openings.plies, openings.margin, count, raw.get("seed", 1))


@lru_cache(maxsize=16)
def _drawn_balanced(rules: Rules, plies: int, margin: int, count: int, seed: int) -> tuple[ValuedOpening, ...]:
    """Solving the openings takes seconds: a configuration loaded again draws them once."""
    rng = openings_rng("balanced-openings", seed)
    return tuple(balanced_openings(rules, plies, margin, count, rng, find_solver(rules)))


_OPENINGS_SPEC = "N (random plies), balanced:PLIES[:MARGIN] or file:PATH"


def openings_overrides(text: str) -> dict[str, Any]:
    """The settings ``--openings TEXT`` stands for: ``N`` random plies,
    ``balanced:PLIES[:MARGIN]`` openings the solver proves drawn (within MARGIN),
    ``file:PATH`` the openings of a file."""
    kind, _, rest = text.strip().partition(":")
    if kind.isdigit() and not rest:
        return {"openings.plies": int(kind)}
    if kind == "file" and rest.strip():
        return {"openings.file": rest.strip()}
    if kind == "balanced":
        parts = rest.split(":")
        if 1 <= len(parts) <= 2 and all(p.strip().isdigit() for p in parts):
            return {"openings.plies": int(parts[0]), "openings.balanced": True,
                    "openings.margin": int(parts[1]) if len(parts) == 2 else 0}
    raise ConfigError(f"bad --openings {text!r}: write {_OPENINGS_SPEC}, e.g. balanced:10 or balanced:10:2")


def adjudication_stones(text: str, fail: Callable[[str], ConfigError]) -> int | None:
    """The stones from which ``adjudicate = TEXT`` ends games: ``solver`` (from
    :data:`DEFAULT_ADJUDICATION_STONES`), ``solver:N``; ``off`` is None."""
    kind, colon, stones = text.strip().partition(":")
    if kind == "off" and not colon:
        return None
    if kind == "solver" and not colon:
        return DEFAULT_ADJUDICATION_STONES
    if kind == "solver" and stones.strip().isdigit():
        return int(stones)
    raise fail(f"adjudicate must be solver, solver:STONES (the stones on the board from which the solver may end "
               f"a game, e.g. solver:{DEFAULT_ADJUDICATION_STONES}) or off, got {text!r}")


#: Where the games are played when neither a file nor --cluster says: a scheduler's
#: address, or local:N (see :func:`check_cluster`).
CLUSTER_VARIABLE = "ARENA_CLUSTER"
#: Dask's own setting of a scheduler's address (its ``scheduler-address`` config):
#: the last place a cluster is looked for.
DASK_ADDRESS_VARIABLE = "DASK_SCHEDULER_ADDRESS"
#: A cluster given by the file a Dask scheduler writes its address to (``dask
#: scheduler --scheduler-file PATH``, dask-jobqueue, dask-mpi): ``scheduler-file:PATH``.
SCHEDULER_FILE = "scheduler-file:"
#: The cluster setting that plays here, whatever cluster is configured elsewhere.
NO_CLUSTER = "none"
_LOCAL_CLUSTER = re.compile(r"local:(\d+)")
# A Dask scheduler's address: an optional protocol, a host name or IP (IPv6 in
# brackets), an optional port. Only its form is checked here: whether a scheduler
# answers there is for the run to find out.
_SCHEDULER_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:[\w.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?")


def local_cluster_workers(cluster: str) -> int | None:
    """N for ``local:N`` (a cluster of N worker processes on this machine); None for
    a scheduler's address."""
    match = _LOCAL_CLUSTER.fullmatch(cluster)
    return int(match.group(1)) if match else None


def configured_cluster(setting: str | None, fail: Callable[[str], ConfigError]) -> str | None:
    """Where the games are played: ``setting`` (--cluster, else the file's cluster),
    else ARENA_CLUSTER, else DASK_SCHEDULER_ADDRESS; None (here) when none is set or
    the first one set is ``none``."""
    for value in (setting, os.environ.get(CLUSTER_VARIABLE), os.environ.get(DASK_ADDRESS_VARIABLE)):
        if value:
            if value == NO_CLUSTER:
                return None
            check_cluster(value, fail)
            return value
    return None


def cluster_origin(cluster: str) -> str:
    """Which setting of the environment gave ``cluster``, for the line that says
    where the games are played ("" when neither variable holds it)."""
    for variable in (CLUSTER_VARIABLE, DASK_ADDRESS_VARIABLE):
        if os.environ.get(variable) == cluster:
            return variable
    return ""


def check_cluster(cluster: str, fail: Callable[[str], ConfigError]) -> None:
    """``cluster`` is ``local:N`` with N at least 1, ``scheduler-file:PATH``, ``none``,
    or has the form of a scheduler's address."""
    if cluster == NO_CLUSTER:
        return
    if cluster.startswith(SCHEDULER_FILE):
        if not cluster[len(SCHEDULER_FILE):].strip():
            raise fail(f"cluster scheduler-file:PATH needs the path of a Dask scheduler file, got {cluster!r}")
        return
    workers = local_cluster_workers(cluster)
    if workers is not None:
        if workers < 1:
            raise fail(f"cluster local:N needs at least one worker process, got {cluster!r}")
        return
    if cluster == "local" or cluster.startswith("local:") or not _SCHEDULER_ADDRESS.fullmatch(cluster):
        raise fail(f"cluster must be local:N (N worker processes on this machine), a Dask scheduler's address "
                   f"such as tcp://scheduler.lan:8786, scheduler-file:PATH or none, got {cluster!r}")


def _bot_specs(items: list[Any], key: str, fail: Callable[[str], ConfigError]) -> tuple[str, ...]:
    specs = []
    for item in items:
        if not isinstance(item, str):
            raise fail(f"{key} must be a list of bot specs (strings), got {item!r}")
        try:
            specs.append(spec_text(parse_spec(item)))
        except BotSpecError as exc:
            raise fail(f"{key}: {exc}") from None
    check_listed_once(specs, key, fail)
    return tuple(specs)


def check_listed_once(specs: Sequence[str], key: str, fail: Callable[[str], ConfigError]) -> None:
    """No spec twice in one list (checked again once submitted bots' versions are pinned)."""
    duplicates = {s for s in specs if specs.count(s) > 1}
    if duplicates:
        raise fail(f"{key}: bot {sorted(duplicates)[0]!r} is listed twice")


def check_field_of_play(
    fmt: str, bots: tuple[str, ...], challengers: tuple[str, ...], fail: Callable[[str], ConfigError]
) -> None:
    """Who plays suits the format (checked again once submitted bots' versions are pinned)."""
    if fmt == MATCH_FORMAT:  # a bot may play itself: two instances, told apart by seat
        if len(challengers) != 1 or len(bots) != 1:
            raise fail(f"a match is one bot against one other, got {len(challengers) + len(bots)} bots")
    elif fmt in ("round-robin", SWISS_FORMAT, KNOCKOUT_FORMAT):
        kind = {"round-robin": "a round robin", SWISS_FORMAT: "a Swiss tournament"}.get(fmt, "a knockout")
        if challengers:
            raise fail(f"challengers are for format = \"gauntlet\"; {kind} uses bots only")
        if len(bots) < 2:
            raise fail(f"{kind} needs at least two bots, got {len(bots)}: set bots or pass --bots a,b")
    else:
        if not challengers or not bots:
            raise fail("a gauntlet needs challengers (who play) and bots (the field they face)")
        both = set(challengers) & set(bots)
        if both:
            raise fail(f"bot {sorted(both)[0]!r} is both a challenger and in the field")


def _rounds(fmt: str, rounds: int | None, games: int, field: int, fail: Callable[[str], ConfigError]) -> int:
    """A Swiss tournament's rounds, checked against its games and its field; 0 for the
    other formats, which are refused any."""
    if fmt != SWISS_FORMAT:
        if rounds is not None:
            raise fail(f"rounds are for format = \"swiss\", got rounds = {rounds} with format {fmt!r}")
        return 0
    if rounds is None or rounds < 1:
        raise fail(f"a Swiss tournament needs its number of rounds, at least 1 (--rounds N), got {rounds}")
    if games % 2:
        raise fail(f"games (per pairing) must be even in a Swiss tournament: each pairing plays every opening "
                   f"with both colours; got {games}")
    # Beyond this a round may have no pairing without a rematch (see arena.tournament.swiss).
    if field < 2 * rounds - 1:
        raise fail(f"{rounds} Swiss rounds need at least {2 * rounds - 1} bots, got {field}: "
                   f"play at most {plural((field + 1) // 2, 'round')}, or a round robin")
    return rounds


def _knockout(fmt: str, raw: dict[str, Any], games: int, rules: Rules,
              fail: Callable[[str], ConfigError]) -> KnockoutSettings | None:
    """A knockout's settings, checked; None for the other formats, which are refused them.
    Without a decider, the solver's verdict where the solver serves the rules
    (connect four on 7x6 with gravity), else the coin."""
    if fmt != KNOCKOUT_FORMAT:
        given = [key for key in KNOCKOUT_KEYS if raw.get(key) is not None]
        if given:
            raise fail(f"{given[0]} is for format = \"knockout\", got {given[0]} = {raw[given[0]]!r} "
                       f"with format {fmt!r}")
        return None
    if games % 2:
        raise fail(f"games (per match) must be even in a knockout: a match is pairs of games, each opening "
                   f"played with both colours (--games 2 is one pair); got {games}")
    decider = raw.get("decider")
    if decider is None:
        decider = SOLVER if rules == Rules() and _solver_serves(rules) else COIN
    try:
        settings = KnockoutSettings(raw.get("extra_pairs", 1), raw.get("seeding", "listed"), decider)
    except ArenaError as exc:
        raise fail(str(exc)) from None
    if settings.decider == SOLVER:
        find_solver(rules)  # a solver that cannot serve these rules is said now, in one line
    return settings


def _solver_serves(rules: Rules) -> bool:
    try:
        find_solver(rules)
    except ArenaError:
        return False
    return True


def _limits(raw: dict[str, Any], fail: Any) -> Limits:
    defaults = Limits()
    memory = raw.get("memory_mb", defaults.memory_mb)
    output = raw.get("output_kb", defaults.output_kb)
    if memory < 64:
        raise fail(f"limits.memory_mb must be at least 64 (Python needs room to start), got {memory}")
    processes = raw.get("processes", defaults.processes)
    if output < 1:
        raise fail(f"limits.output_kb must be at least 1, got {output}")
    if processes < 1:
        raise fail(f"limits.processes must be at least 1 (the bot itself), got {processes}")
    return Limits(memory_mb=memory, output_kb=output, processes=processes)


def _time_control(raw: dict[str, Any], fail: Any) -> TimeControl:
    move = raw.get("move_seconds")
    bank = raw.get("bank_seconds", 0.0)
    if move is not None and move <= 0:
        raise fail(f"time.move_seconds must be positive, got {move}")
    if bank < 0:
        raise fail(f"time.bank_seconds must not be negative, got {bank}")
    if bank and move is None:  # as arena match says: without a move limit a bank limits nothing
        raise fail(f"time.bank_seconds {bank:g} needs time.move_seconds: a bank adds to a move limit, "
                   "and without one a move is not timed at all")
    return TimeControl(None if move is None else float(move), float(bank))


#: The value ``arena openings`` writes after an opening: ``4453  # value 0``.
_VALUE_NOTE = re.compile(r"#\s*value\s+([+-]?\d+)\b")


def _opening_lines(file: str, rules: Rules, base: Path, fail: Any) -> tuple[ValuedOpening, ...]:
    path = Path(file) if Path(file).is_absolute() else base / file
    if not path.is_file():
        raise fail(f"openings.file {file!r} does not exist (looked at {path})")
    lines = []
    for number, written in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = written.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            board = Board.from_moves(parse_moves(text, rules), rules)
        except ValueError as exc:
            raise fail(f"openings.file {file!r} line {number}: {exc}") from None
        if board.is_over():
            raise fail(f"openings.file {file!r} line {number}: the game is already over after {text!r}")
        noted = _VALUE_NOTE.search(written)
        lines.append(ValuedOpening(tuple(board.history), int(noted.group(1)) if noted else None))
    if not lines:
        raise fail(f"openings.file {file!r} holds no openings")
    return tuple(lines)

