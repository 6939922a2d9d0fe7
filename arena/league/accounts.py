"""Accounts of the open league: passwords, API tokens, and who may do what.

Passwords are hashed with Argon2id (argon2-cffi, the password-hashing competition's
winner, with its library's maintained parameters); API tokens are long random
strings kept only as their SHA-256 (a token is already high-entropy, so a fast hash
is enough, and it can be looked up). Neither is ever stored or logged in clear: the
organiser sees each once, when it is made.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from collections import defaultdict, deque

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
    user = store.accounts.add_user(name, _hasher.hash(password), hash_token(token), admin)
    store.accounts.audit("add user", name, by.id if by else None, detail="admin" if admin else "")
    return user, password, token


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
    user = check_user(store, name)
    password = new_password()
    store.accounts.update_user(user.id, password_hash=_hasher.hash(password))
    store.accounts.audit("new password", name, by.id if by else None)
    return password


def set_password(store: Store, user: User, password: str) -> None:
    if len(password) < 8:
        raise AccountError("a password needs at least 8 characters")
    store.accounts.update_user(user.id, password_hash=_hasher.hash(password))
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
    ok: bool
    try:
        ok = _hasher.verify(user.password_hash if user else _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        ok = False
    if not ok or user is None or user.disabled:
        return None
    return user


def user_of_token(store: Store, token: str) -> User | None:
    """The account of an API token; None for an unknown, revoked or disabled one."""
    if not token:
        return None
    user = store.accounts.user_by_token(hash_token(token))
    return None if user is None or user.disabled else user


class Throttle:
    """At most ``limit`` events per key within ``window`` seconds (failed sign-ins per
    account and per address). Kept in the server's memory: it guards one server."""

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
