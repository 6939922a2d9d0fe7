"""Uploads in any language: a single source file or an archive, read safely, then
built in the sandbox into a program bot's files.

An upload is a ``.py`` file (the Python path, unchanged: not here), a source file
of one of :data:`~arena.entry.languages.LANGUAGES` (built and run by that
language's default commands), or an archive (``.zip``, ``.tar.gz``, ``.tgz``)
holding a ``bot.toml`` (as :mod:`arena.players.programs` reads it: its build
runs in the sandbox, its run command plays) or a single source file. Archives are
bounded (entries, bytes) and may hold only plain files and folders, under
relative paths that stay inside the upload.
"""

from __future__ import annotations

import io
import re
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from arena.entry.languages import LANGUAGES, language_of, unavailable
from arena.errors import ArenaError
from arena.players.programs import MANIFEST, ProgramError, parse_manifest
from arena.records import BotCode, ProgramFile
from arena.text import printable

#: What an archive may hold, at most.
MAX_ENTRIES = 500
MAX_UNPACKED = 16 * 1024 * 1024
ARCHIVES = (".zip", ".tar.gz", ".tgz")
#: Seconds a build may take (its wall clock), as the author is told.
BUILD_SECONDS = 120
#: What an upload form takes (its file input's ``accept``).
ACCEPTED = ",".join([".py", *(e for language in LANGUAGES.values() for e in language.extensions), *ARCHIVES])
#: Names an upload's files may not have: the sandbox writes a bot's output there.
RESERVED = ("output.txt",)
_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}")


class UploadError(ArenaError):
    """An upload that cannot be read as a program bot."""


@dataclass(frozen=True)
class ProgramUpload:
    """A program bot as uploaded, before its build."""

    language: str  # a key of LANGUAGES, or a bot.toml's (python, other)
    files: tuple[ProgramFile, ...]
    build: tuple[str, ...] | None
    run: tuple[str, ...]
    name: str | None = None  # a bot.toml's name, if it gives one


@dataclass(frozen=True)
class BuiltProgram:
    """An upload built: what plays, its build's log and how long the build took."""

    upload: ProgramUpload
    code: BotCode
    log: str
    seconds: float


def is_program_upload(filename: str) -> bool:
    """Whether ``filename`` is an upload for this module (anything but a Python file)."""
    lower = filename.lower()
    return lower.endswith(ARCHIVES) or language_of(lower) is not None


def read_upload(filename: str, data: bytes) -> ProgramUpload:
    """The program bot in an upload named ``filename``: a source file or an archive."""
    base = PurePosixPath(filename.replace("\\", "/")).name
    lower = base.lower()
    if lower.endswith(ARCHIVES):
        return _from_files(base, _unpack(base, data))
    language = language_of(base)
    if language is None:
        raise UploadError(f"{printable(base)!r} is not a file the league takes: upload a source file "
                          f"({', '.join(_extensions())}), a .py file, or a .zip or .tar.gz archive")
    if not _SAFE_NAME.fullmatch(base) or base in RESERVED:
        base = f"bot{PurePosixPath(base).suffix.lower()}"
    return _single(language.key, base, (ProgramFile(base, data),))


def _extensions() -> list[str]:
    return [extension for language in LANGUAGES.values() for extension in language.extensions]



def _single(key: str, main: str, files: tuple[ProgramFile, ...]) -> ProgramUpload:
    language = LANGUAGES[key]
    sources = sorted(f.path for f in files if language_of(f.path) is language)
    return ProgramUpload(key, files, language.build_command(main, sources), language.run_command(main))


def _from_files(archive: str, files: tuple[ProgramFile, ...]) -> ProgramUpload:
    """An archive's program: its bot.toml's, else that of its single source file."""
    manifest = next((f for f in files if f.path == MANIFEST), None)
    if manifest is not None:
        try:
            program = parse_manifest(manifest.data.decode("utf-8"), f"{archive}: {MANIFEST}", Path(archive))
        except UnicodeDecodeError:
            raise UploadError(f"{printable(archive)}: its {MANIFEST} is not UTF-8 text") from None
        except ProgramError as exc:
            raise UploadError(printable(str(exc))) from None
        return ProgramUpload(program.language, files, program.build, program.run,
                             program.name if program.name != Path(archive).resolve().name else None)
    sources = [f for f in files if language_of(f.path) is not None or f.path.endswith(".py")]
    if len(sources) != 1 or sources[0].path.endswith(".py"):
        found = ", ".join(printable(f.path) for f in sources[:5]) or "none"
        raise UploadError(f"{printable(archive)}: no {MANIFEST}, and not a single source file of a language the "
                          f"league builds (found: {found}); add a {MANIFEST} with its build and run commands")
    language = language_of(sources[0].path)
    assert language is not None
    return _single(language.key, sources[0].path, files)


def _unpack(archive: str, data: bytes) -> tuple[ProgramFile, ...]:
    """An archive's files, checked: bounded, plain files and folders only, every path
    relative and inside the upload. A single folder holding everything is taken
    off (archives are often made of a folder)."""
    try:
        if archive.lower().endswith(".zip"):
            entries = _zip_entries(archive, data)
        else:
            entries = _tar_entries(archive, data)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise UploadError(f"{printable(archive)} cannot be read as an archive: {printable(str(exc))}") from None
    files = [(path, content, executable) for path, content, executable in entries if content is not None]
    if not files:
        raise UploadError(f"{printable(archive)} holds no files")
    tops = {path.split("/", 1)[0] for path, _, _ in files}
    if len(tops) == 1 and all("/" in path for path, _, _ in files):
        files = [(path.split("/", 1)[1], content, executable) for path, content, executable in files]
    for path, _, _ in files:
        if path in RESERVED:
            raise UploadError(f"{printable(archive)}: a file named {path!r} (the arena writes a bot's output "
                              "there): rename it")
    return tuple(ProgramFile(path, content, executable) for path, content, executable in sorted(files))


def _checked_path(archive: str, name: str) -> str:
    path = name.rstrip("/")
    parts = path.split("/")
    if not path or path.startswith("/") or "\\" in path or any(part in ("", ".", "..") for part in parts):
        raise UploadError(f"{printable(archive)}: the entry {printable(name)!r} would land outside the bot's folder "
                          "(an absolute path, or '..'): archives take relative paths only")
    if any(ord(c) < 32 for c in path):
        raise UploadError(f"{printable(archive)}: the entry {printable(name)!r} has control characters in its name")
    return path


def _count(archive: str, entries: int, unpacked: int) -> None:
    if entries > MAX_ENTRIES:
        raise UploadError(f"{printable(archive)} holds more than {MAX_ENTRIES} entries")
    if unpacked > MAX_UNPACKED:
        raise UploadError(f"{printable(archive)} unpacks to more than {MAX_UNPACKED // 2**20} MB")


Entry = tuple[str, bytes | None, bool]  # path, content (None: a folder), executable


def _zip_entries(archive: str, data: bytes) -> list[Entry]:
    entries: list[Entry] = []
    with zipfile.ZipFile(io.BytesIO(data)) as zipped:
        infos = zipped.infolist()
        _count(archive, len(infos), sum(info.file_size for info in infos))
        for info in infos:
            path = _checked_path(archive, info.filename)
            mode = info.external_attr >> 16
            kind = mode & 0o170000
            if kind not in (0, 0o100000, 0o040000):
                raise UploadError(f"{printable(archive)}: the entry {printable(info.filename)!r} is a link or a "
                                  "special file: archives take plain files and folders only")
            if info.is_dir():
                entries.append((path, None, False))
                continue
            with zipped.open(info) as member:
                content = member.read(MAX_UNPACKED + 1)
            _count(archive, len(entries), len(content))
            entries.append((path, content, bool(mode & 0o100)))
    return entries


def _tar_entries(archive: str, data: bytes) -> list[Entry]:
    entries: list[Entry] = []
    unpacked = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tarred:
        for member in tarred:
            _count(archive, len(entries) + 1, unpacked)
            path = _checked_path(archive, member.name)
            if member.isdir():
                entries.append((path, None, False))
                continue
            if not member.isfile():
                raise UploadError(f"{printable(archive)}: the entry {printable(member.name)!r} is a link or a "
                                  "special file: archives take plain files and folders only")
            unpacked += member.size
            _count(archive, len(entries) + 1, unpacked)
            extracted = tarred.extractfile(member)
            content = extracted.read() if extracted is not None else b""
            entries.append((path, content, bool(member.mode & 0o100)))
    return entries


def check_toolchain(upload: ProgramUpload) -> None:
    """Refuse an upload in a language whose toolchain this machine lacks, naming its package."""
    why = unavailable(upload.language)
    if why is not None:
        raise UploadError(why)


def build_upload(upload: ProgramUpload, label: str) -> BuiltProgram:
    """Build ``upload`` in the sandbox (:func:`arena.sandbox.build.build_in_sandbox`):
    its files after the build are the program's. Without a build, its files as they
    are. Raises :class:`~arena.errors.BuildFailed` with the log."""
    if upload.build is None:
        return BuiltProgram(upload, BotCode(label=label, program=upload.run, files=upload.files), "", 0.0)
    from arena.sandbox.build import BuildLimits, build_in_sandbox  # Linux only, and only when a build runs

    built = build_in_sandbox(upload.files, upload.build, BuildLimits(wall_seconds=BUILD_SECONDS))
    return BuiltProgram(upload, BotCode(label=label, program=upload.run, files=built.files), built.log, built.seconds)


def upload_text(upload: ProgramUpload) -> str:
    """The upload as text, to store and show as its code: each file under a line
    naming it; a file that is not UTF-8 text named with its size only."""
    parts = []
    for file in upload.files:
        try:
            text = file.data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None or "\x00" in text:
            parts.append(f"=== {file.path} ({len(file.data)} bytes, not text)\n")
        else:
            parts.append(f"=== {file.path}\n{text}" + ("" if text.endswith("\n") else "\n"))
    return "".join(parts)
