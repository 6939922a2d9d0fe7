"""Accounts of the open league: ``arena users add|list|disable|enable|token|password|unlock|delete``."""

from __future__ import annotations

import click
from tabulate import tabulate

from arena.cli.main import db_option, main, open_store
from arena.text import printable


@main.group("users")
def users_group() -> None:
    """Accounts of the open league: add, list, disable, new token or password, unlock, delete."""


ONE_TIME = ("The password is for one thing only: signing in with it on the site asks for a password of the "
            "user's own before anything else, and it stops working then. The API token works as it is.")


@users_group.command("add")
@click.argument("name")
@click.option("--admin", is_flag=True, help="May manage users, retire any bot and read all code.")
@db_option
def add_command(name: str, admin: bool, db: str) -> None:
    """Create account NAME; print its one-time password and its API token (shown only now)."""
    from arena.league.accounts import add_user

    user, password, token = add_user(open_store(db, create=True), name, admin)
    click.echo(f"user {user.name}{' (admin)' if admin else ''} added to {db}")
    click.echo(f"password: {password}")
    click.echo(f"API token: {token}")
    click.echo("Give both to the user now: they are stored only as hashes and cannot be shown again.")
    click.echo(ONE_TIME)


@users_group.command("list")
@db_option
def list_command(db: str) -> None:
    """Every account: name, admin, disabled, created."""
    store = open_store(db)
    rows = [[printable(u.name), "yes" if u.admin else "", "disabled" if u.disabled else "active", u.created_at]
            for u in store.accounts.users()]
    click.echo(tabulate(rows, headers=["user", "admin", "status", "created"]) if rows else "no users yet")


@users_group.command("disable")
@click.argument("name")
@db_option
def disable_command(name: str, db: str) -> None:
    """Disable account NAME: it can no longer sign in, use its token or submit."""
    from arena.league.accounts import disable_user

    disable_user(open_store(db, write=True), name)
    click.echo(f"user {name} disabled")


@users_group.command("enable")
@click.argument("name")
@db_option
def enable_command(name: str, db: str) -> None:
    """Enable a disabled account NAME again."""
    from arena.league.accounts import disable_user

    disable_user(open_store(db, write=True), name, disabled=False)
    click.echo(f"user {name} enabled")


@users_group.command("token")
@click.argument("name")
@db_option
def token_command(name: str, db: str) -> None:
    """A new API token for NAME; the old one stops working at once."""
    from arena.league.accounts import renew_token

    token = renew_token(open_store(db, write=True), name)
    click.echo(f"API token: {token}")


@users_group.command("password")
@click.argument("name")
@db_option
def password_command(name: str, db: str) -> None:
    """A new one-time password for NAME (a forgotten password); the API token is unchanged."""
    from arena.league.accounts import reset_password

    click.echo(f"password: {reset_password(open_store(db, write=True), name)}")
    click.echo(ONE_TIME)


@users_group.command("unlock")
@click.argument("name")
@db_option
def unlock_command(name: str, db: str) -> None:
    """End the wait after wrong passwords for NAME: signing in from anywhere is not delayed."""
    from arena.league.accounts import unlock

    had = unlock(open_store(db, write=True), name)
    click.echo(f"user {name} unlocked" if had else f"user {name} had no wrong passwords to forget")


@users_group.command("delete")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@db_option
def delete_command(name: str, yes: bool, db: str) -> None:
    """Remove account NAME's data: the account is disabled and renamed removed-ID (NAME is
    free again), its bots renamed and their code deleted, its entrants retired; its games
    stay, under the new names, so everyone else's standings are unchanged."""
    from arena.league.accounts import check_user
    from arena.league.removal import remove_user

    store = open_store(db, write=True)
    check_user(store, name)
    if not yes:
        click.confirm(f"Remove account {printable(name)!r}, its bots' code and names from {db}? This cannot be undone",
                      abort=True)
    removed = remove_user(store, name)
    bots = ", ".join(f"{printable(old)} -> {new}" for old, new in removed.bots.items())
    click.echo(f"account {printable(name)} removed: it is now {removed.name} (disabled)"
               + (f"; bots renamed: {bots}" if bots else "")
               + (f"; retired: {', '.join(removed.retired)}" if removed.retired else "")
               + "; its games are kept under the new names")
