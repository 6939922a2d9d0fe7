"""`arena submit` and `arena check`: a bot file (or a program, built first) checked in the sandbox, then stored
(or sent to a league site); `check` runs the same checks and stores nothing."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from arena.cli.main import ArenaUsageError, db_option, main, make_rules, open_store, rules_options
from arena.players.plugins import BotSpecError, file_code, parse_spec
from arena.text import printable

if TYPE_CHECKING:
    from arena.engine.game import Rules
    from arena.entry.checks import CheckReport


@main.command("submit")
@click.argument("path", metavar="PATH[:Class]")
@click.option("--name", help="Name to enter the bot under (default: the class's or the file's name).")
@click.option("--server", metavar="URL",
              help="Submit to the league site at URL (as 'arena serve' serves it) instead of the database.")
@click.option("--token", help="With --server: your API token (default: ARENA_TOKEN).")
@click.option("--league", help="With --server: the league to enter (default: the site's only league).")
@db_option
def submit_command(path: str, name: str | None, server: str | None, token: str | None, league: str | None,
                   db: str) -> None:
    """Check a bot file in the sandbox and store it in the league database.

    PATH is a Python file, a source file in another language (.c, .cpp, .java,
    .cs, .js, .exs, .rs, .go) or a .zip/.tar.gz archive with a bot.toml: that is
    built in the sandbox first, and its build log printed. A Python file with
    several Bot subclasses needs :Class. The bot then plays in
    tournaments by name (NAME for the latest version, NAME@v2 for an older one).
    Resubmitting changed code makes a new version.

    With --server URL the file goes to a league site instead, which checks it in
    its own sandbox and enters it in its league (your previous version of the
    bot retires); the token is --token or ARENA_TOKEN.
    """
    if server is not None:
        _submit_to_server(path, name, server, token or os.environ.get("ARENA_TOKEN"), league)
        return
    if token is not None or league is not None:
        raise ArenaUsageError("--token and --league go with --server URL (a league site)")
    from arena.entry.submissions import SubmissionError, submit_file, submit_program
    from arena.entry.uploads import is_program_upload
    from arena.errors import BuildFailed

    store = open_store(db, create=True)
    try:
        if is_program_upload(path):
            submission, new, report, log = submit_program(store, path, name)
            echo_build_log(log)
        else:
            submission, new, report = submit_file(store, path, name)
    except SubmissionError as exc:
        if exc.report is not None:  # the checks ran and one failed: show them as 'arena check' does
            _echo_checks(exc.report)
        raise
    except BuildFailed as failed:
        echo_build_log(failed.log)
        raise
    _echo_checks(report)
    if new:
        click.echo(f"Submitted {submission.spec} ({submission.kind}, sha256 {submission.content_hash[:12]}) to {db}; "
                   f"play it with: arena tournament run --bots {submission.name},minimax --db {db}")
    else:
        click.echo(f"Unchanged: this code is already {submission.spec} in {db}")


SERVER_SECONDS = 120  # an upload's checks take seconds; a server that says nothing for this long is down


def _submit_to_server(path: str, name: str | None, server: str, token: str | None, league: str | None) -> None:
    """POST the file to the site's /api/bots and print its answer as a local submit prints
    (each check, then the version stored); every failure is one line and exit code 2."""
    import urllib.error
    import urllib.parse
    import urllib.request

    from arena.entry.uploads import is_program_upload

    spec = parse_spec(path) if not is_program_upload(path) else None
    if spec is not None and (not spec.is_file or spec.options):
        raise ArenaUsageError(f"{path!r} is not a bot file: give the path of a .py file (PATH.py[:Class]), a source "
                              "file of another language (.c, .java, .js...) or a .zip or .tar.gz archive")
    class_name = spec.class_name if spec is not None else None
    file = Path(spec.path or "" if spec is not None else path)
    if not file.is_file():
        raise ArenaUsageError(f"bot file {str(file)!r} does not exist")
    if not token:
        raise ArenaUsageError("--server needs your API token: --token TOKEN or ARENA_TOKEN "
                              "(the organiser gives it; 'arena users token NAME' makes a new one)")
    parts = urllib.parse.urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ArenaUsageError(f"bad --server {server!r}: give the site's address, such as http://127.0.0.1:8000")
    try:
        source = file.read_bytes()
    except OSError as exc:
        raise ArenaUsageError(f"bot file {path!r} cannot be read: {exc.strerror or exc}") from None
    fields = {"name": name or (class_name or file.name.split(".", 1)[0]).lower().replace(" ", "-"),
              "league": league or "", "class": class_name or ""}
    body, content_type = _multipart(fields, file.name, source)
    url = server.rstrip("/") + "/api/bots"
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": content_type, "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=SERVER_SECONDS) as response:
            status, text = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ArenaUsageError(f"cannot reach {url}: {reason}") from None
    try:
        answer = json.loads(text)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ArenaUsageError(f"{url} answered {status} without the arena's JSON: is {server} an arena league site?")
    checks = answer.get("checks")
    if isinstance(checks, dict):
        for check in checks.get("checks") or []:
            if isinstance(check, dict):
                click.echo(f"  {'ok' if check.get('passed') else 'FAIL':4}  {printable(str(check.get('name')))}: "
                           f"{printable(str(check.get('detail')))}")
    echo_build_log(answer.get("build_log"))
    if status != 201:
        raise ArenaUsageError(f"{server} refused {path} ({status}): {printable(str(answer.get('error')))}")
    retired = ", ".join(printable(str(spec)) for spec in answer.get("retired") or [])
    click.echo(f"Submitted {printable(str(answer.get('spec')))} ({printable(str(answer.get('kind')))}, sha256 "
               f"{printable(str(answer.get('sha256')))[:12]}) to league {printable(str(answer.get('league')))!r} "
               f"at {server}" + (f"; it replaces {retired}" if retired else "")
               + (f"; it enters once the league's gate finds it stronger than "
                  f"{printable(str(answer['testing_against']))}" if answer.get("testing_against") else "")
               + f"; entry {printable(str(answer.get('entry')))}")


#: Lines of a build's log printed, at most (the rest is on the submission's page).
BUILD_LOG_LINES = 60


def echo_build_log(log: object) -> None:
    """What a program's build printed, each line escaped (it is the build's own text:
    nothing in it may act on the terminal), at most :data:`BUILD_LOG_LINES` lines."""
    if not isinstance(log, str) or not log.strip():
        return
    lines = log.rstrip("\n").split("\n")
    click.echo("  build log:")
    for line in lines[:BUILD_LOG_LINES]:
        click.echo(f"  | {printable(line)}")
    if len(lines) > BUILD_LOG_LINES:
        click.echo(f"  | ... {len(lines) - BUILD_LOG_LINES} more lines")


def _multipart(fields: dict[str, str], filename: str, content: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body of ``fields`` and one file (the field ``file``)."""
    import secrets

    boundary = "arena-" + secrets.token_hex(16)
    chunks = []
    for key, value in fields.items():
        value = value.replace("\r", " ").replace("\n", " ")  # a line break would end the field's part early
        if value:
            chunks.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode())
    quoted = filename.replace("\\", "_").replace('"', "_").replace("\r", "_").replace("\n", "_")
    chunks.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{quoted}"\r\n'
                  "Content-Type: text/x-python\r\n\r\n".encode() + content + b"\r\n")
    chunks.append(f"--{boundary}--\r\n".encode())
    return b"".join(chunks), f"multipart/form-data; boundary={boundary}"


@main.command("check")
@click.argument("path", metavar="PATH[:Class][:key=value,...]")
@click.option("--seconds", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Time allowed per move.")
@click.option("--start-seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              help="A program's time to start, from its process to its answer to new_game (default: "
                   "a tournament's, 10).")
@rules_options
def check_command(path: str, seconds: float, start_seconds: float | None, width: int | None, height: int | None,
                  connect: int | None, no_gravity: bool, scoring: str | None) -> None:
    """Run the submission checks on a bot file or a program, in the sandbox, without storing it.

    A program (cmd:PATH, or a folder with bot.toml) is checked against the protocol:
    the handshake, its start, its options, whole games in the variants it declares
    (or in the rules given), its move time, impossible positions refused, a clean
    quit. Exit code 0 if every check passes, 1 if one fails.
    """
    from arena.entry.checks import check_code

    rules = make_rules(width, height, connect, no_gravity, scoring)
    spec = parse_spec(path)
    if spec.program:
        given = any(flag is not None for flag in (width, height, connect, scoring)) or no_gravity
        _check_program(path, seconds, start_seconds, rules if given else None)
        return
    if start_seconds is not None:
        raise ArenaUsageError("--start-seconds is for a program (cmd:PATH or a folder with bot.toml); a bot "
                              "file starts within a tournament's limit")
    if not spec.is_file:
        raise BotSpecError(f"{path!r} is not a .py file: give the path of a bot file (PATH.py[:Class][:key=value])")
    report = check_code(file_code(spec), spec.options, rules_list=(rules,), seconds=seconds, own=True)
    _echo_checks(report)
    if not report.passed:
        click.echo(printable(f"{path}: not ready to submit ({report.first_failure()})"))
        sys.exit(1)
    click.echo(f"{path}: all checks passed (a {report.kind})")


def _check_program(path: str, seconds: float, start_seconds: float | None, rules: Rules | None) -> None:
    """The conformance suite on a program: a line per check as it ends (a failed one's
    exchange below it), then the count; exit code 1 if one failed."""
    from arena.entry.conformance import FAILED, Conformance, Settings

    defaults = Settings()
    suite = Conformance(path, Settings(start_seconds if start_seconds is not None else defaults.start_seconds,
                                       seconds, (rules,) if rules is not None else None))
    failed, count = [], 0
    for result in suite.checks():
        count += 1
        mark = {"passed": "ok", "failed": "FAIL"}.get(result.outcome, "skip")
        click.echo(f"  {mark:4}  {printable(result.name)}: {printable(result.detail)}")
        for line in result.exchange:
            click.echo(f"        {printable(line)}")
        if result.outcome == FAILED:
            failed.append(result.name)
    if failed:
        click.echo(printable(f"{path}: {len(failed)} of {count} checks failed ({', '.join(failed)})"))
        sys.exit(1)
    click.echo(printable(f"{path}: every check passed"))


def _echo_checks(report: CheckReport) -> None:
    """One line per submission check: ok or FAIL, its name and what it found (what
    the bot said, escaped: one line, and nothing that acts on the terminal)."""
    for check in report.checks:
        click.echo(f"  {'ok' if check.passed else 'FAIL':4}  {printable(check.name)}: {printable(check.detail)}")
        for line in check.traceback:  # where the bot crashed, in its own code
            click.echo(f"        {printable(line)}")
