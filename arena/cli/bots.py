"""Commands about bots: list them, match two, submit and check bot files."""

from __future__ import annotations

import json
import math
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click
from tabulate import tabulate

from arena.cli.main import (
    ArenaUsageError,
    db_option,
    main,
    make_rules,
    open_store,
    rules_options,
)
from arena.players.plugins import BotSpecError, check_spec, discover, file_code, parse_spec, spec_text
from arena.text import plural, printable

if TYPE_CHECKING:
    from arena.entry.checks import CheckReport
    from arena.store import Submission

# `arena bots` must start fast: the other commands here import what they run on
# (tournaments, the sandbox, the database) inside themselves.


@main.command("bots")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@db_option
def bots_command(as_json: bool, db: str) -> None:
    """List every bot: installed plug-ins, then bots submitted to the database."""
    entries = sorted(discover().values(), key=lambda e: e.name)
    submitted: list[Submission] = []
    if Path(db).is_file():  # no database yet is no mistake here: the plug-ins are listed anyway
        from arena.store import Store  # sqlite-utils (and numpy) only when there is a database

        with Store(db, read_only=True) as store:
            submitted = store.submissions.all()
    if as_json:
        data = [e.as_dict() for e in entries] + [
            {"name": s.spec, "source": f"submitted {s.submitted_at} ({s.kind})", "description": s.description,
             "options": {}, "error": None, "sha256": s.content_hash}
            for s in submitted
        ]
        click.echo(json.dumps(data, indent=2))
        return
    rows = []
    for entry in entries:
        options = ", ".join(f"{k}={o.default!r}" for k, o in entry.options.items())
        about = f"BROKEN: {entry.error}" if entry.error else entry.description
        rows.append([entry.name, entry.source, about, options or "-"])
    for sub in submitted:
        details = f"a {sub.kind}, sha256 {sub.content_hash[:12]}, {sub.submitted_at}"
        about = f"{sub.description} ({details})" if sub.description else details
        rows.append([sub.spec, f"submitted to {db}", about, "-"])
    # Descriptions are docstrings of bot files, errors a plug-in's: escaped for the terminal.
    rows = [[printable(str(cell)) for cell in row] for row in rows]
    click.echo(tabulate(rows, headers=["bot", "source", "description", "options"]))


@main.command("match")
@click.argument("bot_a")
@click.argument("bot_b")
@click.option("--games", "-n", type=click.IntRange(min=1), default=None,
              help="Games to play [default: 10; with --sprt, until the test decides, at most 100000].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed: the same seed gives the same games.")
@click.option("--openings", "opening_plies", type=click.IntRange(min=0), default=2, show_default=True,
              help="Random plies before the bots take over (each opening is played with both colours).")
@click.option("--sprt", "sprt_text",
              help="Stop when a sequential test decides: elo0=0,elo1=20[,alpha=0.05,beta=0.05,model=normalized].")
@click.option("--move-seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Time limit per move; a bot that overruns it (and its bank) forfeits the game.")
@click.option("--bank-seconds", type=click.FloatRange(min=0), default=0.0,
              help="Extra time a bot may draw on over the game (with --move-seconds).")
@rules_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def match_command(
    bot_a: str,
    bot_b: str,
    games: int | None,
    seed: int,
    opening_plies: int,
    sprt_text: str | None,
    move_seconds: float | None,
    bank_seconds: float,
    width: int | None,
    height: int | None,
    connect: int | None,
    no_gravity: bool,
    scoring: str | None,
    as_json: bool,
) -> None:
    """Play GAMES games between BOT_A and BOT_B, alternating who moves first.

    A bot is a name from `arena bots` with optional options (minimax:depth=6)
    or a path to a bot file (my_bot.py, my_bot.py:MyBot). The result gives BOT_A's
    Elo advantage over BOT_B with its 95% interval, and each bot's forfeits (games
    lost by crashing, overrunning its clock or playing an illegal move) with why.

    With --sprt the match stops as soon as a sequential probability ratio test
    decides between elo0 and elo1 (scored per pair of games on one opening).
    """
    from arena.ratings.sprt import Sprt, elo_with_interval, normalized_elo
    from arena.records import TimeControl
    from arena.terminal import progress as progress_bar
    from arena.tournament.match import SPRT_MAX_GAMES, match_specs, play_match, play_sprt

    rules = make_rules(width, height, connect, no_gravity, scoring)
    a = spec_text(check_spec(bot_a))
    b = spec_text(check_spec(bot_b))
    if bank_seconds and move_seconds is None:
        raise ArenaUsageError(f"--bank-seconds {bank_seconds:g} needs --move-seconds: a bank adds to a move limit")
    test = Sprt.parse(sprt_text) if sprt_text else None
    clock = TimeControl(move_seconds, bank_seconds)
    if games is None:
        games = 10 if test is None else SPRT_MAX_GAMES
    specs = match_specs(a, b, games, seed, rules, time_control=clock, opening_plies=opening_plies)
    bar = progress_bar.ProgressBar.for_stderr()  # on a terminal only
    progress = bar.update if bar else None
    try:
        if test is None:
            result, decision = play_match(specs, (a, b), progress=progress), None
        else:
            result, decision = play_sprt(specs, (a, b), test, progress=progress)
    finally:
        if bar:
            bar.close()
    label_a, label_b = result.labels  # a bot playing itself: two instances, 'random' and 'random#2'
    tally = result.tally()[label_a]
    elo, low, high = elo_with_interval(tally.wins, tally.draws, tally.losses)
    if as_json:
        data = result.as_json()
        data["elo_difference"] = {"elo": _finite(elo), "low": _finite(low), "high": _finite(high)}
        if test is not None:
            outcomes = result.outcomes()
            data["elo_difference"]["sequential"] = True  # stopped by the test: biased away from zero
            data["sprt"] = {
                "decision": decision, "model": test.model, "elo0": test.elo0, "elo1": test.elo1,
                "alpha": test.alpha, "beta": test.beta,
                "llr": round(test.llr(outcomes), 3), "bounds": [round(x, 3) for x in test.bounds],
                outcomes.label(): list(outcomes.counts),
            }
            if test.model == "normalized":
                data["sprt"]["normalized_elo"] = _finite(normalized_elo(outcomes))
        click.echo(json.dumps(data, indent=2))
        return
    tallies = result.tally()
    rows = [
        [printable(bot), t.games, t.wins, t.draws, t.losses, t.forfeits, f"{100 * t.score / t.games:.1f}"]
        for bot, t in tallies.items()
    ]
    clock_text = f", {clock.describe()}" if move_seconds is not None else ""
    click.echo(f"{plural(len(result.records), 'game')}, {rules.describe()}{clock_text}, seed {seed}")
    click.echo(tabulate(rows, headers=["bot", "games", "wins", "draws", "losses", "forfeits", "score %"]))
    for bot, t in tallies.items():
        for line in _forfeit_lines(bot, t.forfeits, t.reasons):
            click.echo(line)
    # A sequential test stops when the games lean far enough one way, so the Elo at
    # the stop overstates that lean: said, not hidden.
    sequential = " (sequential test: biased)" if test is not None else ""
    click.echo(f"Elo difference ({printable(label_a)} - {printable(label_b)}): {elo:+.1f}, "
               f"95% interval {low:+.1f} .. {high:+.1f}{sequential}")
    if test is not None and decision is not None:
        outcomes = result.outcomes()
        llr = test.llr(outcomes)
        lower, upper = test.bounds
        if outcomes.paired:
            pairs = ", ".join(f"{points:g}: {n}" for points, n in zip((0, 0.5, 1, 1.5, 2), outcomes.counts))
            click.echo(f"Game pairs by {printable(label_a)}'s points: {pairs}")
        if test.model == "normalized":
            click.echo(f"Normalized Elo: {normalized_elo(outcomes):+.1f}{sequential}")
        unit = "normalized Elo" if test.model == "normalized" else "Elo"
        verdict = {
            "H1": f"H1 accepted: the games favour a difference of {test.elo1:g} {unit} over {test.elo0:g}",
            "H0": f"H0 accepted: the games favour a difference of {test.elo0:g} {unit} over {test.elo1:g}",
            "continue": f"undecided after {plural(len(result.records), 'game')}: raise --games to go on",
        }[decision]
        click.echo(
            f"SPRT ({outcomes.label()}, {test.model} Elo) {test.describe()}: "
            f"LLR {llr:.2f} (bounds {lower:.2f}, {upper:.2f}); {verdict}"
        )


def _forfeit_lines(bot: str, forfeits: int, reasons: Counter[str], shown: int = 5) -> list[str]:
    """``BOT forfeited N games:`` and its reasons, most frequent first, each counted
    (escaped for the terminal: a reason may quote the bot)."""
    if not forfeits:
        return []
    lines = [f"{printable(bot)} forfeited {forfeits} game{'s' if forfeits != 1 else ''}:"]
    common = reasons.most_common()
    lines += [f"  {count} x {printable(reason)}" for reason, count in common[:shown]]
    if len(common) > shown:
        rest = sum(count for _, count in common[shown:])
        lines.append(f"  {rest} x {len(common) - shown} other reasons (--json lists them all)")
    return lines


def _finite(value: float) -> float | None:
    """JSON has no infinity: an unbounded Elo difference is null."""
    return round(value, 1) if math.isfinite(value) else None


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

    A file with several Bot subclasses needs :Class. The bot then plays in
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
    from arena.entry.submissions import SubmissionError, submit_file

    store = open_store(db, create=True)
    try:
        submission, new, report = submit_file(store, path, name)
    except SubmissionError as exc:
        if exc.report is not None:  # the checks ran and one failed: show them as 'arena check' does
            _echo_checks(exc.report)
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

    spec = parse_spec(path)
    if not spec.is_file or spec.options:
        raise ArenaUsageError(f"{path!r} is not a .py file: give the path of a bot file (PATH.py[:Class])")
    file = Path(spec.path or "")
    if not file.is_file():
        raise ArenaUsageError(f"bot file {spec.path!r} does not exist")
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
    fields = {"name": name or (spec.class_name or file.stem).lower().replace(" ", "-"), "league": league or "",
              "class": spec.class_name or ""}
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
    if status != 201:
        raise ArenaUsageError(f"{server} refused {path} ({status}): {printable(str(answer.get('error')))}")
    retired = ", ".join(printable(str(spec)) for spec in answer.get("retired") or [])
    click.echo(f"Submitted {printable(str(answer.get('spec')))} ({printable(str(answer.get('kind')))}, sha256 "
               f"{printable(str(answer.get('sha256')))[:12]}) to league {printable(str(answer.get('league')))!r} "
               f"at {server}" + (f"; it replaces {retired}" if retired else "")
               + f"; entry {printable(str(answer.get('entry')))}")


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
@rules_options
def check_command(path: str, seconds: float, width: int | None, height: int | None, connect: int | None,
                  no_gravity: bool, scoring: str | None) -> None:
    """Run the submission checks on a bot file, in the sandbox, without storing it.

    Exit code 0 if every check passes, 1 if one fails.
    """
    from arena.entry.checks import check_code

    rules = make_rules(width, height, connect, no_gravity, scoring)
    spec = parse_spec(path)
    if not spec.is_file:
        raise BotSpecError(f"{path!r} is not a .py file: give the path of a bot file (PATH.py[:Class][:key=value])")
    report = check_code(file_code(spec), spec.options, rules_list=(rules,), seconds=seconds)
    _echo_checks(report)
    if not report.passed:
        click.echo(printable(f"{path}: not ready to submit ({report.first_failure()})"))
        sys.exit(1)
    click.echo(f"{path}: all checks passed (a {report.kind})")


def _echo_checks(report: CheckReport) -> None:
    """One line per submission check: ok or FAIL, its name and what it found (what
    the bot said, escaped: one line, and nothing that acts on the terminal)."""
    for check in report.checks:
        click.echo(f"  {'ok' if check.passed else 'FAIL':4}  {printable(check.name)}: {printable(check.detail)}")
