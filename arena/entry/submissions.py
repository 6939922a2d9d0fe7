"""Submitted bots: checked in the sandbox, stored in the league database by name
and version, and run from there (always sandboxed) in tournaments.

A submitted bot is referred to as ``name`` (its latest version) or ``name@v2``;
options follow as usual (``name:depth=3``). Games record the exact version.
"""

from __future__ import annotations

import re
from pathlib import Path

from arena.entry.checks import CheckReport, check_code
from arena.errors import ArenaError
from arena.players.plugins import BotSpec, BotSpecError, installed_bots, parse_spec, spec_text
from arena.records import BotCode
from arena.store import Store, Submission
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


def resolve(text: str, store: Store | None) -> tuple[str, BotCode] | None:
    """(canonical spec, its code) if ``text`` names a submitted bot, else None."""
    spec = parse_spec(text)
    if spec.is_file or spec.name in installed_bots():
        return None
    match = VERSIONED.fullmatch(spec.name)
    if match is None or store is None:
        return None
    version = int(match["version"]) if match["version"] else None
    found = store.submissions.get(match["name"], version)
    if found is None:
        if version is not None and store.submissions.get(match["name"]) is not None:
            known = ", ".join(s.spec for s in store.submissions.all(match["name"]))
            raise BotSpecError(f"no version {version} of submitted bot {match['name']!r}; versions: {known}")
        return None
    if not found.source:
        raise BotSpecError(f"the code of {found.spec} was removed with its author's account: it cannot play")
    canonical = BotSpec(name=found.spec, options=spec.options)
    return spec_text(canonical), BotCode(label=found.spec, text=found.source, class_name=found.class_name)
