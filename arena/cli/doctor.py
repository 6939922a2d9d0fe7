"""``arena doctor``: what the sandbox can do on this machine."""

from __future__ import annotations

import os

import click
from tabulate import tabulate

from arena.cli.main import main


@main.command("doctor")
def doctor_command() -> None:
    """Show which sandbox mechanisms hold on this machine, and whether untrusted bots can run."""
    from arena.sandbox.doctor import PROMISE_NOTES, containment, delegation_howto, promises, spawner_report, system
    from arena.sandbox.proxy import weak_sandbox_accepted

    mechanisms, missing = containment()
    click.echo(f"Sandbox on {system()}:")
    click.echo(tabulate([[m.name, "yes" if m.holds else "NO", m.what] for m in mechanisms],
                        headers=["mechanism", "holds", "what it gives a bot"]))
    click.echo()
    click.echo("What holds for an untrusted bot, here and wherever the arena runs:")
    click.echo(tabulate(promises(spawner_report()),
                        headers=["promise", "here", "as root", "unprivileged, delegated", "unprivileged, not"]))
    for note in PROMISE_NOTES:
        click.echo(note)
    click.echo()
    weaker = [m.name for m in mechanisms if not m.holds]
    if not missing and not weaker:
        click.echo("Untrusted bots (bot files, submissions) run fully isolated.")
    elif not missing:
        click.echo(f"Untrusted bots run isolated, but without: {', '.join(weaker)} (see above for what that means).")
    elif weak_sandbox_accepted():
        click.echo("Untrusted bots run with weaker containment: --weak-sandbox (or ARENA_WEAK_SANDBOX) accepts it.")
    else:
        click.echo(f"Untrusted bots are refused here: {'; '.join(missing)}. Run the arena as root, where "
                   "unprivileged user namespaces are allowed and with a delegated control group (--cgroup), or "
                   "accept weaker containment with 'arena --weak-sandbox ...'.")
    click.echo()
    echo_toolchains()
    # How to give an unprivileged arena its control groups: for this user where it lacks
    # them, for whichever user an operator picks where it does not.
    click.echo()
    for line in delegation_howto(_user_name() if os.geteuid() != 0 else "USER"):
        click.echo(line)


def echo_toolchains() -> None:
    """The languages a league here takes program bots in: the toolchains found, and
    for those missing, the Debian package to install."""
    from arena.entry.languages import toolchains

    click.echo("Toolchains for program bots (uploads in these languages are built and run in the sandbox):")
    rows = [[language.title, ", ".join(language.tools), "NO" if missing else "yes",
             f"missing {', '.join(missing)}: apt install {language.package.replace(' and ', ' ')}" if missing else ""]
            for language, missing in toolchains()]
    headers = ["language", "needs", "found", "to install"]
    click.echo(tabulate([["Python", "python3", "yes", ""], *rows], headers=headers))


def _user_name() -> str:
    """Who the arena runs as, to chown its groups to."""
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (KeyError, ImportError):
        return str(os.geteuid())
