"""`arena bots`: every bot the arena can find, with its options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click
from tabulate import tabulate

from arena.cli.main import db_option, main
from arena.players.plugins import discover
from arena.text import printable

if TYPE_CHECKING:
    from arena.store import Submission


# `arena bots` must start fast: it lists what it finds without loading the
# sandbox, the tournament machinery or (without --db) the database.


@main.command("bots")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@db_option
def bots_command(as_json: bool, db: str) -> None:
    """List every bot: installed plug-ins, then bots submitted to the database."""
    entries = sorted(discover().values(), key=lambda e: e.name)
    submitted: list[Submission] = []
    if Path(db).exists():  # no database yet is no mistake here: the plug-ins are listed anyway
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


