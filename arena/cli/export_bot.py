"""`arena export-bot`: a bot as a file for another arena (Kaggle's ConnectX)."""

from __future__ import annotations

import click

from arena.cli.main import main, make_rules, rules_options
from arena.text import printable


@main.command("export-bot")
@click.argument("spec")
@click.option("--kaggle", "out", required=True, metavar="OUT",
              help="Write a Kaggle ConnectX submission: main.py (OUT ending in .py) or a .tar.gz with main.py "
                   "at its root.")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@rules_options
def export_bot_command(spec: str, out: str, force: bool, width: int | None, height: int | None,
                       connect: int | None, no_gravity: bool, scoring: str | None) -> None:
    """Write SPEC (a bot name with options, or a Bot file) as a Kaggle ConnectX submission.

    The file holds the bot and every module it needs, the solver's opening book
    included, and needs nothing but Python's standard library. The rules
    (default 7x6 connect 4, Kaggle's) are those it warms up for; Kaggle's
    configuration gives each game's own. OUT is never replaced without --force.
    """
    from arena.entry.kaggle_submission import export_submission  # reads the bot's sources: not for --help

    rules = make_rules(width, height, connect, no_gravity, scoring)
    written = export_submission(spec, out, rules, force)
    submission = written.submission
    data = f" and {', '.join(submission.data)}" if submission.data else ""
    size = f"{written.size / 1024:.0f} KiB"
    if written.size != written.main_size:
        size += f", main.py {written.main_size / 1024:.0f} KiB"
    click.echo(f"Wrote {printable(str(written.path))} ({size}): {printable(submission.settings['spec'])} with "
               f"{len(submission.modules)} modules{data}; submit it to Kaggle's ConnectX competition")
