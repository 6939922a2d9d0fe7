"""Submitted bots: checked in the sandbox, stored in the league database by name
and version, and run from there (always sandboxed) in tournaments.

A submitted bot is referred to as ``name`` (its latest version) or ``name@v2``;
options follow as usual (``name:depth=3``). Games record the exact version.
:func:`resolve_bot` is where every command finds the bot a spec names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from arena.engine.game import Rules
from arena.entry.checks import CheckReport, check_code, require_sandbox
from arena.errors import ArenaError
from arena.players.plugins import (
    BotSpec,
    BotSpecError,
    check_spec,
    installed_bots,
    parse_spec,
    spec_text,
    unknown_bot,
)
from arena.records import BotCode
from arena.store import Store, StoreError, Submission
from arena.text import source_text

NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
VERSIONED = re.compile(r"(?P<name>[a-z][a-z0-9_-]{0,39})(?:@v(?P<version>\d+))?")


class SubmissionError(ArenaError):
    """A bot that cannot be submitted, or a submitted bot that does not exist."""

    def __init__(self, message: str, report: CheckReport | None = None) -> None:
        super().__init__(message)
        self.report = report  # the submission checks, when they ran and one failed


def submit_file(store: Store, path: str, name: str | None = None) -> tuple[Submission, bool, CheckReport]:
    """Check ``path`` (``file.py`` or ``file.py:Class``) in the sandbox and store it
    under ``name`` (default: the class's or the file's name, in lower case).

    Returns the stored version, whether it is new, and the check report.
    """
    spec = parse_spec(path)
    if not spec.is_file:
        raise SubmissionError(f"{path!r} is not a .py file: give the path of a bot file")
    # Checked here for a league that runs it beside others' bots: in the sandbox only.
    require_sandbox(f"submitting {path} (a league runs its bots only in the sandbox)")
    if spec.options:
        raise SubmissionError(
            f"options are given when the bot plays (--bots NAME:key=value), not when it is submitted: {path!r}"
        )
    file = Path(spec.path or "")
    if not file.is_file():
        raise SubmissionError(f"bot file {spec.path!r} does not exist")
    name = name or (spec.class_name or file.stem).lower().replace(" ", "-")
    if not NAME.fullmatch(name):
        raise SubmissionError(
            f"bad bot name {name!r}: use 1-40 lower-case letters, digits, '-' or '_', starting with a letter"
        )
    if name in installed_bots():
        raise SubmissionError(f"{name!r} is the name of an installed bot: pick another with --name")
    try:
        source = source_text(file.read_bytes())
    except (OSError, UnicodeDecodeError) as exc:
        raise SubmissionError(f"bot file {path!r} cannot be read: {exc}") from None
    report = check_code(BotCode(label=path, text=source, class_name=spec.class_name))
    if not report.passed:
        raise SubmissionError(f"{path} was not submitted: {report.first_failure()}", report)
    submission, new = store.submissions.submit(name, source, report.kind, str(file.resolve()), spec.class_name)
    return submission, new, report


def submit_program(store: Store, path: str, name: str | None = None) -> tuple[Submission, bool, CheckReport, str]:
    """Build ``path`` (a source file in a language :mod:`arena.entry.languages` knows, or
    an archive: :mod:`arena.entry.uploads`) in the sandbox, check it there and store it
    under ``name`` (default: its bot.toml's name, else the file's). Returns the stored
    version, whether it is new, the checks' report and what its build printed. A build
    that fails is :class:`~arena.errors.BuildFailed`, with its log."""
    from arena.entry.uploads import build_upload, check_toolchain, read_upload, upload_text
    from arena.store.submissions import ProgramVersion

    require_sandbox(f"submitting {path} (a league builds and runs others' programs only in the sandbox)")
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise SubmissionError(f"bot file {path!r} cannot be read: {exc.strerror or exc}") from None
    upload = read_upload(file.name, data)
    check_toolchain(upload)
    name = name or upload.name or file.name.split(".", 1)[0].lower().replace(" ", "-")
    if not NAME.fullmatch(name):
        raise SubmissionError(
            f"bad bot name {name!r}: use 1-40 lower-case letters, digits, '-' or '_', starting with a letter (--name)"
        )
    if name in installed_bots():
        raise SubmissionError(f"{name!r} is the name of an installed bot: pick another with --name")
    built = build_upload(upload, path)
    report = check_code(built.code)
    if not report.passed:
        raise SubmissionError(f"{path} was not submitted: {report.first_failure()}", report)
    submission, new = store.submissions.submit(name, upload_text(upload), report.kind, str(file.resolve()),
                                               program=ProgramVersion(upload.language, built.code, built.log))
    return submission, new, report, built.log


@dataclass(frozen=True)
class ResolvedBot:
    """A bot as it plays: its canonical spec (a submitted bot pinned to a version) and,
    for a submitted bot, its code, which goes with every game it plays."""

    spec: str
    code: BotCode | None = None

    @property
    def submitted(self) -> dict[str, BotCode]:
        """The code by name, as games carry it (``GameSpec.submitted``): empty unless submitted."""
        return {parse_spec(self.spec).name: self.code} if self.code is not None else {}


def resolve_bot(text: str, store: Store | None) -> ResolvedBot:
    """What the spec ``text`` names: an installed bot, a bot file, or a bot submitted to
    ``store``: ``name`` (its newest version) or ``name@vN``, with options as usual.

    Every command that takes a bot finds it here. A name that is none of these is a
    BotSpecError naming the closest known names; so is a version that is not stored,
    and a version whose code was removed. A bot file is not read here (whoever builds
    it reads it), nor is an installed bot imported.
    """
    spec = parse_spec(text)
    installed = installed_bots()
    if spec.is_file or spec.name in installed:
        return ResolvedBot(spec_text(spec))
    match = VERSIONED.fullmatch(spec.name)
    found = None
    if match is not None and store is not None:
        version = int(match["version"]) if match["version"] else None
        found = store.submissions.get(match["name"], version)
        if found is None and version is not None and store.submissions.get(match["name"]) is not None:
            known = ", ".join(s.spec for s in store.submissions.all(match["name"]))
            raise BotSpecError(f"no version {version} of submitted bot {match['name']!r}; versions: {known}")
    if found is None:
        names = {s.name for s in store.submissions.all()} if store is not None else ()
        raise unknown_bot(spec.name, installed, names, store.path if store is not None else None)
    if not found.source:
        raise BotSpecError(f"the code of {found.spec} was removed with its author's account: it cannot play")
    canonical = BotSpec(name=found.spec, options=spec.options)
    return ResolvedBot(spec_text(canonical), store.submissions.code(found))  # type: ignore[union-attr]


def check_bot(text: str, db: str, rules: Rules | None = None) -> ResolvedBot:
    """:func:`resolve_bot` against the database ``db`` (only read, and only if it
    exists: without it, no name is a submitted bot), then the bot built once, and an
    untrusted one started in the sandbox, so that a bot that cannot play is one line
    before any game (:func:`~arena.players.plugins.check_spec`)."""
    with existing_store(db) as store:
        found = resolve_bot(text, store)
    check_spec(found.spec, submitted=found.submitted, rules=rules)
    return found


@contextmanager
def existing_store(db: str) -> Iterator[Store | None]:
    """The database ``db`` opened read-only (never created, never migrated), or None
    where there is none to read: no file, or one that cannot be opened (whoever
    writes to it later says why)."""
    store = None
    if Path(db).is_file():
        try:
            store = Store(db, read_only=True)
        except StoreError:
            pass
    try:
        yield store
    finally:
        if store is not None:
            store.close()
