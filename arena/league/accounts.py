"""Accounts of the open league: passwords, API tokens, and who may do what.

Passwords are hashed with Argon2id (argon2-cffi, the password-hashing competition's
winner, with its library's maintained parameters); API tokens are long random
strings kept only as their SHA-256 (a token is already high-entropy, so a fast hash
is enough, and it can be looked up). Neither is ever stored or logged in clear: the
organiser sees each once, when it is made.

A password the organiser issues (:func:`add_user`, :func:`reset_password`) is one-time:
the account signed in with it must choose its own (:func:`set_password`) before it
does anything else on the site. Wrong passwords slow down further tries on their
account, from addresses it has not signed in from before, by a delay that doubles
with each failure in a row (:func:`attempt_sign_in`); the state lives in the
database, so every server process and a restart agree, and addresses are kept only
as keyed hashes.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from arena.errors import ArenaError
from arena.store import Store, User

USER_NAME = re.compile(r"[a-z][a-z0-9_.-]{0,39}")
_hasher = PasswordHasher()
# Verifying against this hash when the account does not exist takes as long as a
# real check: a sign-in's timing does not tell which names exist.
_DUMMY_HASH = _hasher.hash("not a password of anyone")


class AccountError(ArenaError):
    """An account that cannot be made or changed as asked."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_password() -> str:
    return secrets.token_urlsafe(12)


def new_token() -> str:
    return "arena_" + secrets.token_urlsafe(32)


def add_user(store: Store, name: str, admin: bool = False, by: User | None = None) -> tuple[User, str, str]:
    """A new account: the user, its one-time password and its API token (shown once)."""
    if not USER_NAME.fullmatch(name):
        raise AccountError(f"bad user name {name!r}: use 1-40 lower-case letters, digits, '.', '-' or '_', "
                           "starting with a letter")
    password, token = new_password(), new_token()
    with store.transaction():
        user = store.accounts.add_user(name, _hasher.hash(password), hash_token(token), admin)
        store.accounts.update_user(user.id, must_change_password=1)
        store.accounts.audit("add user", name, by.id if by else None, detail="admin" if admin else "")
    return check_user(store, name), password, token


def check_user(store: Store, name: str) -> User:
    user = store.accounts.user(name)
    if user is None:
        known = ", ".join(u.name for u in store.accounts.users()) or "none yet"
        raise AccountError(f"no user named {name!r} in {store.path}; users: {known}")
    return user


def renew_token(store: Store, name: str, by: User | None = None) -> str:
    """A new API token for ``name``; the old one stops working at once."""
    user = check_user(store, name)
    token = new_token()
    store.accounts.update_user(user.id, token_hash=hash_token(token))
    store.accounts.audit("new token", name, by.id if by else None)
    return token


def reset_password(store: Store, name: str, by: User | None = None) -> str:
    """A new one-time password for ``name`` (a forgotten password): signed in with it,
    the account must choose its own, and then it stops working. Its API token is unchanged."""
    user = check_user(store, name)
    password = new_password()
    store.accounts.update_user(user.id, password_hash=_hasher.hash(password), must_change_password=1)
    store.accounts.audit("new password", name, by.id if by else None)
    return password


def set_password(store: Store, user: User, password: str) -> None:
    """``user``'s own new password (which ends the need to change an issued one)."""
    if len(password) < 8:
        raise AccountError("a password needs at least 8 characters")
    if _verify(user.password_hash, password):
        raise AccountError("the new password is the one the account has now: choose another")
    store.accounts.update_user(user.id, password_hash=_hasher.hash(password), must_change_password=0)
    store.accounts.audit("password changed", user.name, user.id)


def disable_user(store: Store, name: str, disabled: bool = True, by: User | None = None) -> None:
    """Disable (or enable) account ``name``; ``by``: the admin who did it on the site (audited)."""
    user = check_user(store, name)
    store.accounts.update_user(user.id, disabled=int(disabled))
    store.accounts.audit("disable user" if disabled else "enable user", name, by.id if by else None)


def sign_in(store: Store, name: str, password: str) -> User | None:
    """The account if the password is its own and it is not disabled, else None
    (the same for every kind of failure: nothing tells which part was wrong)."""
    user = store.accounts.user(name)
    ok = _verify(user.password_hash if user else _DUMMY_HASH, password)
    if not ok or user is None or user.disabled:
        return None
    return user


def _verify(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


# --- delays after wrong passwords ----------------------------------------------------------------

FIRST_DELAY = 1.0  # seconds a try from an unknown address waits after one wrong password
MOST_DELAY = 300.0  # the delay doubles with each wrong password in a row, up to this
FORGET_FAILURES = 24 * 3600.0  # a name's failures are forgotten this long after its last one


@dataclass(frozen=True)
class SignInAttempt:
    """What became of a sign-in: the account (its password was right), or none, and
    how many seconds to wait when the try was delayed (its password was not even checked)."""

    user: User | None
    retry_after: int = 0


def delay_after(failures: int) -> float:
    """The wait after ``failures`` wrong passwords in a row: 1, 2, 4, ... seconds, at most :data:`MOST_DELAY`."""
    return 0.0 if failures < 1 else min(FIRST_DELAY * 2.0 ** min(failures - 1, 30), MOST_DELAY)


def address_hash(store: Store, address: str) -> str:
    """A visitor's address as stored: an HMAC under a key this database keeps (a plain
    hash of an IPv4 address is reversed by trying them all)."""
    key = store.accounts.setting("address_key", lambda: secrets.token_hex(32))
    return hmac.new(key.encode(), address.encode(), hashlib.sha256).hexdigest()


def attempt_sign_in(store: Store, name: str, password: str, address: str, now: float) -> SignInAttempt:
    """Sign ``name`` in from ``address`` at ``now`` (seconds since the epoch).

    From an address the account has signed in from before, the password is always
    checked. From any other, while the name's wrong passwords delay it, the try is
    refused unchecked with the seconds to wait. A wrong password (or a disabled
    account, or no such name: the same for all) lengthens the name's delay; the right
    one forgets the failures and remembers the address."""
    user = store.accounts.user(name)
    digest = address_hash(store, address)
    known = user is not None and store.accounts.known_address(user.id, digest)
    failures, until = store.accounts.sign_in_failures(name)
    if not known and now < until:
        return SignInAttempt(None, max(1, math.ceil(until - now)))
    found = sign_in(store, name, password)
    if found is None:
        with store.writing():  # read again under the write lock: tries in parallel (several servers) all count
            failures, until = store.accounts.sign_in_failures(name)
            failures += 1
            store.accounts.record_sign_in_failure(name, failures, max(until, now + delay_after(failures)), now,
                                                  now - FORGET_FAILURES)
        return SignInAttempt(None)
    if failures:
        store.accounts.clear_sign_in_failures(name)
    store.accounts.remember_address(found.id, digest)
    return SignInAttempt(found)


def unlock(store: Store, name: str, by: User | None = None) -> bool:
    """End the delay of account ``name``'s wrong passwords (audited; ``by``: the admin
    who did it on the site); whether it had one."""
    check_user(store, name)
    had = store.accounts.clear_sign_in_failures(name)
    store.accounts.audit("unlock user", name, by.id if by else None)
    return had


def user_of_token(store: Store, token: str) -> User | None:
    """The account of an API token; None for an unknown, revoked or disabled one."""
    if not token:
        return None
    user = store.accounts.user_by_token(hash_token(token))
    return None if user is None or user.disabled else user


class Throttle:
    """At most ``limit`` events per key within ``window`` seconds (the site's uploads
    that failed their checks). Kept in the server's memory: it guards one server."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit = limit
        self.window = window
        self._events: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        events = self._events[key]
        while events and events[0] <= now - self.window:
            events.popleft()
        return events

    def blocked(self, *keys: str, limit: int | None = None) -> bool:
        """Whether a key has had its ``limit`` (default: the throttle's) events in the window."""
        now = time.monotonic()
        with self._lock:
            return any(len(self._recent(key, now)) >= (limit or self.limit) for key in keys)

    def record(self, *keys: str) -> None:
        now = time.monotonic()
        with self._lock:
            for key in keys:
                self._recent(key, now).append(now)

    def clear(self, *keys: str) -> None:
        with self._lock:
            for key in keys:
                self._events.pop(key, None)
