"""Submitted bots: every version of their code, kept in the database."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from typing import Any

from arena.records import BotCode, ProgramFile
from arena.store.rows import Submission
from arena.store.sql import Repository, now
from arena.text import content_hash


class Submissions(Repository):
    """The submissions table (``store.submissions``)."""

    def submit(
        self, name: str, source: str, kind: str, file: str, class_name: str | None = None,
        user_id: int | None = None, about: str | None = None, program: ProgramVersion | None = None,
    ) -> tuple[Submission, bool]:
        """Store a version of ``name``; identical code (and class) returns the existing version.
        ``program``: a program bot's (``source`` is then its upload as text).

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
            if program is not None:
                row |= {"language": program.language, "program": json.dumps(list(program.code.program or ())),
                        "program_files": pack_files(program.code.files), "build_log": program.build_log}
            self.db.table("submissions").insert(row)
        return self.get(name, row["version"]), True  # type: ignore[return-value]  # just stored

    def all(self, name: str | None = None) -> list[Submission]:
        """Every stored version (of one name), oldest first."""
        where, params = ("name = ?", [name]) if name is not None else (None, [])
        rows = self.db.table("submissions").rows_where(where, params, order_by="name, version", select=self._columns())
        return [_submission(r) for r in rows]

    def by_id(self, submission_id: int) -> Submission | None:
        rows = list(self.db.table("submissions").rows_where("id = ?", [submission_id], select=self._columns()))
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


    def _columns(self) -> str:
        """The row's columns but the program's files (read only to play): those this
        database has (one not yet migrated lacks the later ones)."""
        found = self.db.table("submissions").columns_dict
        return ", ".join(name for name in Submission.__dataclass_fields__ if name in found)

    def code(self, submission: Submission) -> BotCode:
        """What a stored version plays: a Python bot's source, or a program's command
        and its built files."""
        if submission.program is None:
            return BotCode(label=submission.spec, text=submission.source, class_name=submission.class_name)
        row = self.db.execute("select program_files from submissions where id = ?", [submission.id]).fetchone()
        files = unpack_files(row[0]) if row is not None and row[0] else ()
        return BotCode(label=submission.spec, program=tuple(json.loads(submission.program)), files=files)


@dataclass(frozen=True)
class ProgramVersion:
    """What a program bot's version stores besides its source: its language, what
    it plays (its command and built files) and its build's log."""

    language: str
    code: BotCode
    build_log: str


def pack_files(files: tuple[ProgramFile, ...]) -> bytes:
    """A program's files as one compressed blob: a zip archive (paths, bytes, and
    which are executable, in its file modes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as packed:
        for file in files:
            info = zipfile.ZipInfo(file.path, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100755 if file.executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            packed.writestr(info, file.data)
    return buffer.getvalue()


def unpack_files(blob: bytes) -> tuple[ProgramFile, ...]:
    """The files :func:`pack_files` packed, in the same order."""
    with zipfile.ZipFile(io.BytesIO(blob)) as packed:
        return tuple(ProgramFile(info.filename, packed.read(info), bool((info.external_attr >> 16) & 0o100))
                     for info in packed.infolist())


def _submission(row: dict[str, Any]) -> Submission:
    return Submission(**{k: row[k] for k in Submission.__dataclass_fields__ if k in row})
