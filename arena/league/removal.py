"""Removing an account and its data (``arena users delete NAME``, the admin page's "Delete").

What is removed, and what stays:

- The account is kept, disabled, under a new name ``removed-ID`` (its id): it can no
  longer sign in or use a token, it is no member of any league, and its old name is
  free for a new account. Keeping the row keeps the league's other rows (entrants,
  submissions, the audit log) pointing at one author, now nameless.
- Each of its bots is renamed ``removed-ID`` (then ``removed-ID-2``, ...) everywhere the
  database holds a bot's name: versions, entrants, stored bots, game keys, tournament
  settings, the audit log. The code of every version is deleted, with its file name,
  description and check report; what the bots wrote during their games (each move's
  info, the reason of a game they lost by their own doing) is emptied.
- Its active entrants are retired: they play no more (a version under test at a
  league's gate too, its test withdrawn).
- Its games stay, between the renamed bots and their opponents, so the other
  players' results and standings are what they were.

A game of the removed account's bots that a league runner was playing at that moment
is not stored when it finishes (see :func:`arena.league.scheduler.run_league`).
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.league.accounts import AccountError, check_user
from arena.league.gate import withdraw
from arena.store import Store, User
from arena.store.removal import REMOVED_HASH, Removals
from arena.text import plural

PREFIX = "removed-"


@dataclass(frozen=True)
class Removed:
    """What :func:`remove_user` did."""

    name: str  # the account's new name
    bots: dict[str, str]  # each old bot name and its new one
    retired: list[str]  # the entrants retired (their new specs)


def remove_user(store: Store, name: str, by: User | None = None) -> Removed:
    """Remove account ``name``'s data (see the module's description), all or nothing;
    ``by``: the admin who did it on the site (audited)."""
    user = check_user(store, name)
    if user.password_hash == REMOVED_HASH:
        raise AccountError(f"account {name!r} was removed already")
    removals = Removals(store)
    with store.writing():
        taken: set[str] = set()  # the bots' new names so far (the account's may be the first bot's too)

        def free(base: str) -> str:
            candidate, n = base, 1
            while candidate in taken or removals.name_taken(candidate):
                n += 1
                candidate = f"{base}-{n}"
            return candidate

        new_name = free(f"{PREFIX}{user.id}")
        own = [s for s in store.submissions.all() if s.user_id == user.id]
        names = list(dict.fromkeys(s.name for s in sorted(own, key=lambda s: s.id or 0)))  # first submitted first
        bots: dict[str, str] = {}
        for old in names:
            bots[old] = free(new_name if not bots else f"{new_name}-{len(bots) + 1}")
            taken.add(bots[old])
        retired = []
        for league in store.leagues.all():
            for entry in store.leagues.entries(league.id, user_id=user.id):
                if entry.status not in ("active", "testing"):
                    continue
                withdraw(store, entry, "withdrawn: its author's account was removed")  # a version under test
                store.leagues.retire_entry(entry.id)
                retired.append(entry.id)
        removals.remove_account(user.id, new_name, user.name, bots)
        store.accounts.audit("remove user", new_name, by.id if by else None,
                             f"{plural(len(bots), 'bot')} renamed, {plural(len(retired), 'entrant')} retired")
        specs = [stored.spec for entry_id in retired if (stored := store.leagues.entry(entry_id)) is not None]
    return Removed(new_name, bots, specs)


def is_removed(user: User) -> bool:
    """Whether ``user`` is what remains of a removed account."""
    return user.password_hash == REMOVED_HASH
