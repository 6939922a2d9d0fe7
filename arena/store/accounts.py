"""The open league's accounts, its audit log, and what the site keeps (its session key, the sessions
signed out, failed sign-ins and the addresses each account signed in from)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.store.rows import StoreError, User
from arena.store.sql import Repository, insert_row, now


class Accounts(Repository):
    """The users, audit and settings tables (``store.accounts``)."""

    def add_user(self, name: str, password_hash: str, token_hash: str, admin: bool = False) -> User:
        """A new account; StoreError if the name is taken."""
        if self.user(name) is not None:
            raise StoreError(f"there is already a user named {name!r} in {self.path}")
        insert_row(self.db.table("users"), {"name": name, "password_hash": password_hash, "token_hash": token_hash,
                                            "admin": int(admin), "disabled": 0, "created_at": now()})
        return self.user(name)  # type: ignore[return-value]  # just stored

    def user(self, name: str) -> User | None:
        rows = list(self.db.table("users").rows_where("name = ?", [name]))
        return User.of(rows[0]) if rows else None

    def user_by_id(self, user_id: int) -> User | None:
        rows = list(self.db.table("users").rows_where("id = ?", [user_id]))
        return User.of(rows[0]) if rows else None

    def user_by_token(self, token_hash: str) -> User | None:
        rows = list(self.db.table("users").rows_where("token_hash = ?", [token_hash]))
        return User.of(rows[0]) if rows else None

    def users(self) -> list[User]:
        return [User.of(row) for row in self.db.table("users").rows_where(order_by="name")]

    def update_user(self, user_id: int, **changes: Any) -> None:
        """Set columns of an account (password_hash, token_hash, disabled, admin, must_change_password)."""
        allowed = {"password_hash", "token_hash", "disabled", "admin", "must_change_password"}
        if not set(changes) <= allowed:
            raise ValueError(f"not a user column: {sorted(set(changes) - allowed)}")
        self.db.table("users").update(user_id, changes)

    def audit(self, action: str, subject: str, user_id: int | None = None, detail: str = "") -> None:
        """Record who did what (submissions, retirements, admin actions)."""
        self.db.table("audit").insert({"at": now(), "user_id": user_id, "action": action, "subject": subject,
                                       "detail": detail})

    def actions_since(self, user_id: int, action: str, since: str) -> int:
        """How many times the audit log says ``user_id`` did ``action`` at ``since`` (an
        ISO time, as the log writes them) or later."""
        return int(self.db.execute("select count(*) from audit where user_id = ? and action = ? and at >= ?",
                                   [user_id, action, since]).fetchone()[0])

    def audit_log(self) -> list[dict[str, Any]]:
        return list(self.db.query(
            "select a.at, u.name as user, a.action, a.subject, a.detail from audit a "
            "left join users u on u.id = a.user_id order by a.id"))

    def setting(self, key: str, make: Callable[[], str]) -> str:
        """A value the site keeps (its session key): made once, then the same."""
        row = self.db.execute("select value from settings where key = ?", [key]).fetchone()
        if row is not None:
            return str(row[0])
        value = make()
        self.db.execute("insert or ignore into settings (key, value) values (?, ?)", [key, value])
        self.db.conn.commit()
        return str(self.db.execute("select value from settings where key = ?", [key]).fetchone()[0])

    def end_session(self, session: str, until: str) -> None:
        """Remember that site session ``session`` (a digest of its token) was signed out:
        its cookie, copied before, is refused until ``until`` (when it expires anyway).
        Those past their time are forgotten."""
        self.db.execute("delete from settings where key like 'ended session %' and value < ?", [now()])
        self.db.execute("insert or replace into settings (key, value) values (?, ?)",
                        [f"ended session {session}", until])
        self.db.conn.commit()

    def session_ended(self, session: str) -> bool:
        return self.stored_setting(f"ended session {session}") is not None

    def stored_setting(self, key: str) -> str | None:
        """A value the site keeps, if it was made (read-only: see :meth:`setting`)."""
        row = self.db.execute("select value from settings where key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    # --- failed sign-ins and known addresses (see arena.league.accounts) --------------------------

    def sign_in_failures(self, name: str) -> tuple[int, float]:
        """(failed sign-ins in a row, delayed until: seconds since the epoch) of the name ``name``."""
        row = self.db.execute("select failures, delayed_until from sign_in_failures where name = ?",
                              [name]).fetchone()
        return (0, 0.0) if row is None else (int(row[0]), float(row[1]))

    def record_sign_in_failure(self, name: str, failures: int, delayed_until: float, at: float,
                               forget_before: float) -> None:
        """Store a name's failures in a row and its delay; the rows of names whose last
        failure was before ``forget_before`` are forgotten (a name tried once is not kept forever)."""
        with self.db.atomic():
            self.db.execute("delete from sign_in_failures where failed_at < ?", [forget_before])
            self.db.execute("insert or replace into sign_in_failures (name, failures, delayed_until, failed_at) "
                            "values (?, ?, ?, ?)", [name, failures, delayed_until, at])

    def clear_sign_in_failures(self, name: str) -> bool:
        """Forget a name's failed sign-ins (and so its delay); whether it had any."""
        with self.db.atomic():
            return self.db.execute("delete from sign_in_failures where name = ?", [name]).rowcount > 0

    def known_address(self, user_id: int, address_hash: str) -> bool:
        return self.db.execute("select 1 from known_addresses where user_id = ? and address_hash = ?",
                               [user_id, address_hash]).fetchone() is not None

    def remember_address(self, user_id: int, address_hash: str) -> None:
        with self.db.atomic():
            self.db.execute("insert or ignore into known_addresses (user_id, address_hash, first_at) "
                            "values (?, ?, ?)", [user_id, address_hash, now()])
