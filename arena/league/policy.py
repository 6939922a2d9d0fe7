"""The open league's rules for its entrants: who may submit what, how often, and
what a new version does to the previous one.

Every submission is checked first, in the sandbox (the same checks as ``arena
check``); a refusal of any kind (a bad file, failed checks, someone else's bot name,
too many submissions, a closed league) changes nothing in the database. A passed
version becomes an active entrant at once and retires its author's previous version
of the same bot: the old one's games stay, it plays no more. In a league with a gate
(:mod:`arena.league.gate`) a version with a previous one waits, ``testing``, until a
sequential test against that version lets it in or keeps it out.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from arena.engine.game import Rules
from arena.entry.checks import CheckReport, check_code
from arena.entry.submissions import NAME, VERSIONED
from arena.entry.uploads import UploadError, build_upload, check_toolchain, is_program_upload, read_upload, upload_text
from arena.errors import ArenaError, ArenaFault, BuildFailed, NoSandbox
from arena.league.gate import gate_of, open_test, withdraw
from arena.league.settings_tables import checked_table
from arena.players.plugins import installed_bots
from arena.records import BotCode
from arena.store import Entry, League, Store, Submission, User, rules_of
from arena.store.submissions import ProgramVersion
from arena.text import content_hash, source_text

LEAGUE_FORMAT = "league"  # the format of the tournament row a league's games are stored under
#: The [league] table of a league file: who may submit, whose code is shown, limits.
LEAGUE_KEYS: dict[str, tuple[type, ...]] = {"public_code": (bool,), "closed": (bool,), "submissions_per_hour": (int,),
                                            "upload_kb": (int,), "logs_days": (int,)}
REMOVED_PREFIX = "removed-"  # the names of removed accounts' bots (arena.league.removal), no one else's


class LeagueError(ArenaError):
    """A league that cannot be made, run or entered as asked."""


class Refusal(StrEnum):
    """Why the league refuses what an author asks."""

    NOT_ALLOWED = "not allowed"  # not this author's to do: a disabled account, a closed league, another's bot
    NOT_FOUND = "not found"  # no such league or entrant
    TOO_LARGE = "too large"  # a file larger than the league takes
    INVALID = "invalid"  # a bad file, name or description, failed checks, or code already entered
    TOO_MANY = "too many"  # more submissions (or failed checks) in the last hour than the league takes
    UNAVAILABLE = "unavailable"  # the arena failed while checking (not the bot): try again later


class Refused(ArenaError):
    """A submission (or retirement) refused; ``kind`` says why, ``report`` holds the
    checks' report when they ran, ``build_log`` a failed build's output."""

    def __init__(self, message: str, kind: Refusal, report: CheckReport | None = None,
                 build_log: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.report = report
        self.build_log = build_log  # a failed build's output (hostile: shown escaped, to its author)


@dataclass(frozen=True)
class LeagueSettings:
    public_code: bool = False  # every entrant's code may be read by everyone
    closed: bool = False  # only members may submit
    submissions_per_hour: int = 20  # per author
    upload_kb: int = 256  # the largest bot file accepted
    logs_days: int = 30  # how long what the bots wrote in a game is kept (the game stays)


def settings_of(raw: dict[str, Any], source: str = "<league>") -> LeagueSettings:
    """The [league] table of a league's settings, checked."""
    table = checked_table(raw, "league", LEAGUE_KEYS, LeagueError, source) or {}
    settings = LeagueSettings(**table)
    for key in ("submissions_per_hour", "upload_kb", "logs_days"):
        if getattr(settings, key) < 1:
            raise LeagueError(f"{source}: league.{key} must be at least 1, got {getattr(settings, key)}")
    return settings


def delete_old_logs(store: Store, league: League, now: float | None = None) -> int:
    """Delete what the bots wrote in ``league``'s games older than its keep time
    (``league.logs_days``); how many logs went."""
    days = settings_of(league.config).logs_days
    return store.games.delete_logs_before(league.tournament_id, (time.time() if now is None else now) - days * 86400)


@dataclass(frozen=True)
class Submitted:
    entry: Entry
    submission: Submission
    report: CheckReport
    retired: list[str]  # the author's earlier versions this one replaced
    testing_against: str | None = None  # behind the league's gate: the version it must beat first


def submit_to_league(
    store: Store, league: League, user: User, name: str, source: bytes, filename: str = "bot.py",
    about: str = "", class_name: str | None = None,
) -> Submitted:
    """Check ``source`` in the sandbox and enter it in ``league`` as ``user``'s bot ``name``.

    Raises :class:`Refused` (with the kind of refusal) and changes nothing when the
    submission is not allowed or its checks fail."""
    settings = settings_of(league.config)
    if user.disabled:
        raise Refused(f"account {user.name!r} is disabled", Refusal.NOT_ALLOWED)
    if league.closed and not user.admin and not store.leagues.is_member(league.id, user.id):
        raise Refused(f"league {league.name!r} is closed: only its members may submit", Refusal.NOT_ALLOWED)
    if len(source) > settings.upload_kb * 1024:
        raise Refused(f"the file is {len(source) // 1024} KB; league {league.name!r} takes at most "
                      f"{settings.upload_kb} KB", Refusal.TOO_LARGE)
    if not NAME.fullmatch(name):
        raise Refused(f"bad bot name {name!r}: use 1-40 lower-case letters, digits, '-' or '_', "
                      "starting with a letter", Refusal.INVALID)
    if name.startswith(REMOVED_PREFIX):
        raise Refused(f"bad bot name {name!r}: names starting with {REMOVED_PREFIX!r} are kept for the bots of "
                      "removed accounts; pick another name", Refusal.INVALID)
    if name in installed_bots():
        raise Refused(f"{name!r} is the name of an installed bot: pick another name", Refusal.INVALID)
    owners = {s.user_id for s in store.submissions.all(name)}
    if owners and owners != {user.id}:
        raise Refused(f"bot name {name!r} belongs to another author: pick another name", Refusal.NOT_ALLOWED)
    if len(about) > 2000:
        raise Refused("the description is longer than 2000 characters", Refusal.INVALID)
    program: ProgramVersion | None = None
    if is_program_upload(filename):
        text, program, report = _check_program(store, league, user, settings, filename, source)
    else:
        text, report = _check_python(store, league, user, settings, filename, source, class_name)
    gate = gate_of(league.config)
    with store.transaction():
        submission, _ = store.submissions.submit(name, text, report.kind, filename, class_name, user.id, about or None,
                                                 program)
        same = [e for e in store.leagues.entries(league.id, user_id=user.id)
                if e.status in ("active", "testing") and e.spec.split("@", 1)[0] == name]
        if any(old.submission_id == submission.id for old in same):
            raise Refused(f"{submission.spec} is already in league {league.name!r}: this is the same code",
                          Refusal.INVALID)
        retired = []
        for old in same:
            if old.status == "testing":  # a test not decided yet: the newer version is tested instead
                withdraw(store, old, "withdrawn: a newer version was submitted before the test decided")
            elif gate is not None:  # it plays on until the new version passes the gate
                continue
            store.leagues.retire_entry(old.id)
            retired.append(old.spec)
        previous = next((old for old in same if old.status == "active"), None)
        testing = gate is not None and previous is not None
        entry = store.leagues.add_entry(league.id, submission.spec, "testing" if testing else "active", submission.id,
                                        user.id, report.text())
        if gate is not None and previous is not None:
            open_test(store, league, entry, previous, gate, _rules(store, league))
        store.accounts.audit("submit", submission.spec, user.id, f"league {league.name}"
                             + (f"; retired {', '.join(retired)}" if retired else "")
                             + (f"; testing against {previous.spec}" if testing and previous else ""))
    return Submitted(entry, submission, report, retired, previous.spec if testing and previous else None)


def _check_python(
    store: Store, league: League, user: User, settings: LeagueSettings, filename: str, source: bytes,
    class_name: str | None,
) -> tuple[str, CheckReport]:
    """A Python bot file's text and its checks' report (passed), or Refused."""
    try:
        text = source_text(source)
    except UnicodeDecodeError as exc:
        raise Refused(f"the file is not UTF-8 text (byte {exc.start}): upload a Python source file",
                      Refusal.INVALID) from None
    if "\x00" in text:
        raise Refused("the file holds a NUL byte: upload a Python source file", Refusal.INVALID)
    _refuse_same_code(store, league, text, class_name)
    _limit_rate(store, league, user, settings)
    return text, _checked(store, league, filename, BotCode(label=filename, text=text, class_name=class_name))


def _check_program(
    store: Store, league: League, user: User, settings: LeagueSettings, filename: str, source: bytes,
) -> tuple[str, ProgramVersion, CheckReport]:
    """A program upload (any language but Python) read, built in the sandbox and
    checked there: its text, what it stores and its checks' report, or Refused
    (a failed build with its log)."""
    try:
        upload = read_upload(filename, source)
        check_toolchain(upload)
    except UploadError as exc:
        raise Refused(str(exc), Refusal.INVALID) from None
    text = upload_text(upload)
    _refuse_same_code(store, league, text, None)
    _limit_rate(store, league, user, settings)
    try:
        built = build_upload(upload, filename)
    except NoSandbox as refused:  # fails closed, as for any code others wrote
        raise Refused(str(refused), Refusal.UNAVAILABLE) from None
    except BuildFailed as failed:
        raise Refused(f"{filename} was not built: {failed.reason}", Refusal.INVALID, build_log=failed.log) from None
    except ArenaFault as fault:
        raise Refused(f"the arena failed while building {filename} ({fault}), not your bot: "
                      "nothing was stored; try again in a few minutes", Refusal.UNAVAILABLE) from None
    try:
        report = _checked(store, league, filename, built.code)
    except Refused as refused:
        refused.build_log = built.log  # what the build said may tell why the program did not play
        raise
    return text, ProgramVersion(upload.language, built.code, built.log), report


def _refuse_same_code(store: Store, league: League, text: str, class_name: str | None) -> None:
    """A league takes the same code once."""
    same_code = store.leagues.entries_with_code(league.id, content_hash(text), class_name)
    if same_code:
        raise Refused(f"this code is already in league {league.name!r}: {entered_as(store, same_code[0])}; "
                      "a league takes the same code once: change the bot, or enter it in another league",
                      Refusal.INVALID)


def _limit_rate(store: Store, league: League, user: User, settings: LeagueSettings) -> None:
    since = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat(timespec="seconds")
    recent = store.accounts.actions_since(user.id, "submit", since)
    if recent >= settings.submissions_per_hour:
        raise Refused(f"{recent} submissions in the last hour: league {league.name!r} takes at most "
                      f"{settings.submissions_per_hour} per author per hour; try again later", Refusal.TOO_MANY)


def _rules(store: Store, league: League) -> Rules:
    tournament = store.tournaments.get(league.name)
    return rules_of(tournament) if tournament is not None else Rules()


def _checked(store: Store, league: League, filename: str, code: BotCode) -> CheckReport:
    """The checks' report of ``code`` (passed), run in the sandbox, or Refused."""
    rules = _rules(store, league)
    try:
        # Checked on the league's own board: a bot that cannot play it (a ConnectX
        # agent in a league without gravity) is refused before it forfeits every game.
        report = check_code(code, rules_list=(rules,))
    except NoSandbox as refused:  # this machine, not the bot: nothing stored, said as it is
        raise Refused(str(refused), Refusal.UNAVAILABLE) from None
    except ArenaFault as fault:
        raise Refused(f"the arena failed while checking {filename} ({fault}), not your bot: "
                      "nothing was stored; try again in a few minutes", Refusal.UNAVAILABLE) from None
    if not report.passed:
        raise Refused(f"{filename} did not pass the checks: {report.first_failure()}", Refusal.INVALID, report)
    return report


def entered_as(store: Store, entry: Entry) -> str:
    """An entrant in words: its bot and version, its author, its id and status."""
    author = store.accounts.user_by_id(entry.user_id) if entry.user_id is not None else None
    return f"{entry.spec} by {author.name if author else 'the organiser'} (entry {entry.id}, {entry.status})"


def retirable(store: Store, league: League, user: User, entry_id: int) -> Entry:
    """The entrant ``user`` may retire (its author's, or any for an admin), checked and
    left as it is: a page asks to confirm only what :func:`retire` would do."""
    entry = store.leagues.entry(entry_id)
    if entry is None or entry.league_id != league.id:
        raise Refused(f"no entrant {entry_id} in league {league.name!r}", Refusal.NOT_FOUND)
    if entry.user_id != user.id and not user.admin:
        raise Refused(f"entrant {entry.spec} is not yours to retire", Refusal.NOT_ALLOWED)
    if entry.status not in ("active", "testing"):
        raise Refused(f"entrant {entry.spec} is {entry.status} already", Refusal.INVALID)
    return entry


def retire(store: Store, league: League, user: User, entry_id: int) -> Entry:
    """Take an entrant out of the league (its author's, or any for an admin)."""
    entry = retirable(store, league, user, entry_id)
    with store.transaction():
        withdraw(store, entry, f"withdrawn: retired by {user.name} before the test decided")
        store.leagues.retire_entry(entry.id)
        store.accounts.audit("retire", entry.spec, user.id, f"league {league.name}")
    return store.leagues.entry(entry.id)  # type: ignore[return-value]  # still there


def change_settings(store: Store, league: League, changes: dict[str, Any], by: User | None = None) -> League:
    """Change settings of a league's [league] table (``arena league settings``): checked as
    a league file's are; the league runner and the site follow them at once. ``by``: the
    admin who did it on the site (audited)."""
    table = {**league.config.get("league", {}), **changes}
    settings = settings_of({"league": table}, f"league {league.name!r}")
    current = settings_of(league.config)
    changed = {key: value for key, value in changes.items() if getattr(current, key) != value}
    if not changed:
        return league
    with store.transaction():
        store.leagues.update_settings(league.id, {**league.config, "league": table}, settings.public_code,
                                      settings.closed)
        store.accounts.audit("league settings", league.name, by.id if by else None,
                             ", ".join(f"{key}={value}" for key, value in sorted(changed.items())))
    return store.leagues.check(league.name)


def add_member(store: Store, league: League, user: User, by: User | None = None) -> None:
    """Let ``user`` submit to the closed ``league`` (``arena league add-member``)."""
    store.leagues.add_member(league.id, user.id)
    store.accounts.audit("add member", user.name, by.id if by else None, f"league {league.name}")


def may_read_code(league: League | None, user: User | None, submission: Submission) -> bool:
    """Code is shown to its author and to admins, and to everyone in a league with public code."""
    if league is not None and league.public_code:
        return True
    return user is not None and (user.admin or submission.user_id == user.id)


def may_read_log(store: Store, user: User | None, spec: str, tournament: str) -> bool:
    """Whether ``user`` may read what the bot ``spec`` wrote in a game of ``tournament``:
    whoever may read its code (:func:`may_read_code`, as the code page decides: for a
    submitted version, in any league it was entered in). A bot that is no submitted
    version (an installed bot, a bot file) has no author here: its log is the admins',
    and everyone's in a league with public code."""
    submission = _submission_of(store, spec)
    if submission is not None:
        leagues: list[League | None] = [*store.leagues.of_submission(submission.id)] or [None]  # type: ignore[arg-type]
        return any(may_read_code(league, user, submission) for league in leagues)
    league = store.leagues.get(tournament)  # a league's games are stored under its name
    if league is not None and league.public_code:
        return True
    return user is not None and user.admin


def _submission_of(store: Store, spec: str) -> Submission | None:
    """The submitted version a spec plays (``guard@v2``, with options or not), or None."""
    name = spec.partition(":")[0]
    match = VERSIONED.fullmatch(name)
    if match is None or match["version"] is None:
        return None
    return store.submissions.get(match["name"], int(match["version"]))
