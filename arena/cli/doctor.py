"""``arena doctor``: what the sandbox can do on this machine."""

from __future__ import annotations

import click
from tabulate import tabulate

from arena.cli.main import main


@main.command("doctor")
def doctor_command() -> None:
    """Show which sandbox mechanisms hold on this machine, and whether untrusted bots can run."""
    from arena.sandbox.doctor import containment, system
    from arena.sandbox.proxy import weak_sandbox_accepted

    mechanisms, missing = containment()
    click.echo(f"Sandbox on {system()}:")
    click.echo(tabulate([[m.name, "yes" if m.holds else "NO", m.what] for m in mechanisms],
                        headers=["mechanism", "holds", "what it gives a bot"]))
    weaker = [m.name for m in mechanisms if not m.holds]
    if not missing and not weaker:
        click.echo("Untrusted bots (bot files, submissions) run fully isolated.")
    elif not missing:
        click.echo(f"Untrusted bots run isolated, but without: {', '.join(weaker)} (see above for what that means).")
    elif weak_sandbox_accepted():
        click.echo("Untrusted bots run with weaker containment: --weak-sandbox (or ARENA_WEAK_SANDBOX) accepts it.")
    else:
        click.echo("Untrusted bots are refused here: run the arena as root or where unprivileged user namespaces "
                   "are allowed, or accept weaker containment with 'arena --weak-sandbox ...'.")
