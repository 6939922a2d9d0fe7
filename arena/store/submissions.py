"""Submitted bots: every version of their code, kept in the database."""

from __future__ import annotations

from typing import Any

from arena.store.rows import Submission
from arena.store.sql import Repository, now
from arena.text import content_hash


class Submissions(Repository):
    """The submissions table (``store.submissions``)."""

    def submit(
        self, name: str, source: str, kind: str, file: str, class_name: str | None = None,
        user_id: int | None = None, about: str | None = None,
    ) -> tuple[Submission, bool]:
        """Store a version of ``name``; identical code (and class) returns the existing version.

        Returns the submission and whether it is new.
        """
        digest = content_hash(source)
        for existing in self.all(name):
            if existing.content_hash == digest and existing.class_name == class_name:
                return existing, False
        with self.db.atomic():
            latest = self.db.execute(
                "select coalesce(max(version), 0) from submissions where name = ?", [name]
            ).fetchone()[0]
            row = {
                "name": name, "version": latest + 1, "kind": kind, "source": source,
                "content_hash": digest, "file": file, "submitted_at": now(), "class_name": class_name,
                "user_id": user_id, "about": about,
            }
            self.db.table("submissions").insert(row)
        return self.get(name, row["version"]), True  # type: ignore[return-value]  # just stored

    def all(self, name: str | None = None) -> list[Submission]:
        """Every stored version (of one name), oldest first."""
        where, params = ("name = ?", [name]) if name is not None else (None, [])
        rows = self.db.table("submissions").rows_where(where, params, order_by="name, version")
        return [_submission(r) for r in rows]

    def by_id(self, submission_id: int) -> Submission | None:
        rows = list(self.db.table("submissions").rows_where("id = ?", [submission_id]))
        return _submission(rows[0]) if rows else None

    def has(self, name: str, version: int) -> bool:
        """Whether version ``version`` of ``name`` is stored (under that name)."""
        return bool(self.db.execute("select 1 from submissions where name = ? and version = ?",
                                    [name, version]).fetchone())

    def get(self, name: str, version: int | None = None) -> Submission | None:
        """One version of a submitted bot (the latest if ``version`` is None)."""
        versions = self.all(name)
        if version is None:
            return versions[-1] if versions else None
        return next((v for v in versions if v.version == version), None)


def _submission(row: dict[str, Any]) -> Submission:
    return Submission(**{k: row[k] for k in Submission.__dataclass_fields__})
