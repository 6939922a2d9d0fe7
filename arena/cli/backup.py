"""`arena backup FILE`: a checked copy of the database, taken while it is in use."""

from __future__ import annotations

import click

from arena.cli.main import db_option, main
from arena.text import plural, printable


@main.command("backup")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Replace FILE if it exists.")
@db_option
def backup_command(file: str, force: bool, db: str) -> None:
    """Copy the database to FILE while tournaments and leagues go on writing it.

    The copy is one moment of the database, checked (integrity, schema) before it is
    kept. To restore it: stop the league and the site, copy FILE over the database,
    remove the database's -wal and -shm files, and start them again.
    """
    from arena.store.backup import backup  # the database library is slow to import: only when used

    made = backup(db, file, force=force)
    counts = made.counts
    click.echo(f"backed up {printable(db)} to {printable(file)}: {_size(made.size)}, "
               + ", ".join(plural(counts[label], label.rstrip("s")) for label in counts)
               + " (integrity checked)")


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    value = size / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
