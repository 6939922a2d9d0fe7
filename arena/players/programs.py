"""Program bots: bots in any language, speaking the protocol on stdin and stdout.

A program bot is named by a path: ``cmd:./mybot`` (an executable file: its folder's
other files stay behind), or a folder holding a ``bot.toml`` manifest (the folder's
files all go with it)::

    name = "c-alphabeta"                    # its name in tables (default: the folder's)
    language = "c"                          # what it is written in (shown; a league builds by it)
    build = "gcc -O2 -o bot bot.c"          # optional: run in the folder before it plays
    run = "./bot"                           # the command, run in its folder

Commands are words split as a shell would (no shell runs them). :func:`program_code`
reads the files the bot starts with into a :class:`~arena.records.BotCode`, which
travels with games to workers and clusters like a bot file's text; the sandbox
writes them into the bot's private folder and runs the command there.
:func:`build_program` runs the build, in the author's own folder, on the author's
own machine (a league builds uploads in the sandbox instead).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.records import BotCode, ProgramFile
from arena.text import clip, printable

MANIFEST = "bot.toml"
PREFIX = "cmd:"
#: What a program bot may carry into its folder, at most.
MAX_FILES = 2000
MAX_BYTES = 64 * 1024 * 1024
#: Seconds a build may take on the author's machine.
BUILD_SECONDS = 600
#: Folders never copied: version control, caches.
SKIPPED = {".git", ".hg", ".svn", "__pycache__", "node_modules/.cache", ".mypy_cache", ".pytest_cache"}
LANGUAGES = ("c", "cpp", "java", "csharp", "javascript", "elixir", "python", "rust", "go", "other")
_KEYS = {"name", "language", "build", "run", "author"}


class ProgramError(ArenaError):
    """A program bot that cannot be read, built or run as named."""


@dataclass(frozen=True)
class Program:
    """A program bot as its author describes it."""

    name: str
    folder: Path
    run: tuple[str, ...]
    build: tuple[str, ...] | None = None
    language: str = "other"
    only: str | None = None  # an executable named alone: the one file it carries

    @property
    def label(self) -> str:
        return str(self.folder / self.only) if self.only else str(self.folder)


def is_program_path(head: str) -> bool:
    """Whether a spec's first part names a program: ``cmd:PATH``, a folder path (it has a
    ``/``: installed bots' names never do) that is not a ``.py`` file, or a ``bot.toml``."""
    return head.startswith(PREFIX) or head.endswith(MANIFEST) or ("/" in head and not head.endswith(".py"))


def program_name(path: str) -> str:
    """The name of the program bot at ``path``: its manifest's ``name``, else its
    folder's or file's name (a manifest that cannot be read is refused later, when
    the bot is read whole)."""
    try:
        return read_program(path).name
    except (ProgramError, OSError):
        target = Path(path)
        return (target.parent if target.name == MANIFEST else target).resolve().name or path


def read_program(path: str) -> Program:
    """The program bot at ``path``: a folder with ``bot.toml``, that file, or an executable."""
    target = Path(path)
    if target.name == MANIFEST or target.is_dir():
        folder = target.parent if target.name == MANIFEST else target
        manifest = folder / MANIFEST
        if not manifest.is_file():
            what = "does not exist" if not folder.exists() else f"has no {MANIFEST}"
            raise ProgramError(f"program bot {path!r}: {folder} {what}; give a folder with a {MANIFEST} "
                               f"(name, run, and build if it needs one) or cmd:PATH to an executable")
        return _manifest(manifest, folder)
    if not target.is_file():
        raise ProgramError(f"program bot {path!r} does not exist; give cmd:PATH to an executable, or a folder "
                           f"with a {MANIFEST}")
    if not os.access(target, os.X_OK):
        raise ProgramError(f"program bot {path!r} is not executable; make it so (chmod +x {path}), or give a folder "
                           f"with a {MANIFEST} whose run names its interpreter")
    return Program(target.name, target.parent, (f"./{target.name}",), only=target.name)


def _manifest(manifest: Path, folder: Path) -> Program:
    try:
        text = manifest.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError) as exc:
        raise ProgramError(f"{manifest}: not valid TOML: {exc}") from None
    return parse_manifest(text, manifest, folder)


def parse_manifest(text: str, manifest: Path | str, folder: Path) -> Program:
    """The program a manifest's ``text`` describes (``manifest`` names it in messages;
    ``folder`` holds its files: a bot.toml in an upload names the upload's)."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProgramError(f"{manifest}: not valid TOML: {exc}") from None
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ProgramError(f"{manifest}: unknown key {unknown[0]!r}; the keys are {', '.join(sorted(_KEYS))}")
    if "run" not in raw:
        raise ProgramError(f"{manifest}: no run command; add run = \"./bot\" (the command that starts the bot, "
                           "in its folder)")
    name = raw.get("name", folder.resolve().name)
    if not isinstance(name, str) or not name.strip() or any(c in name for c in ":,= /@"):
        raise ProgramError(f"{manifest}: name must be a word without spaces, ':', ',', '=', '/' or '@', "
                           f"got {name!r}")
    language = raw.get("language", "other")
    if language not in LANGUAGES:
        raise ProgramError(f"{manifest}: language {language!r} is not one of {', '.join(LANGUAGES)}")
    build = _command(manifest, "build", raw["build"]) if "build" in raw else None
    return Program(name, folder, _command(manifest, "run", raw["run"]), build, language)


def _command(manifest: Path | str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            words = shlex.split(value)
        except ValueError as exc:
            raise ProgramError(f"{manifest}: {key} = {value!r}: {exc}") from None
    elif isinstance(value, list) and all(isinstance(word, str) for word in value):
        words = list(value)
    else:
        words = []
    if not words:
        raise ProgramError(f"{manifest}: {key} must be a command, as a text or a list of words, got {value!r}")
    return tuple(words)


def build_program(program: Program) -> str:
    """Run the program's build in its folder, on this machine; what it printed. A
    build that fails is :class:`ProgramError` with the end of its output."""
    if program.build is None:
        return ""
    try:
        done = subprocess.run(program.build, cwd=program.folder, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=BUILD_SECONDS, check=False)
    except FileNotFoundError:
        raise ProgramError(f"program bot {program.label!r}: its build command {program.build[0]!r} is not installed "
                           f"here ({program.language} toolchain missing? 'arena doctor' lists those found)") from None
    except subprocess.TimeoutExpired:
        raise ProgramError(f"program bot {program.label!r}: its build took more than {BUILD_SECONDS} s") from None
    log = done.stdout.decode("utf-8", "replace")
    if done.returncode != 0:
        tail = " | ".join(line for line in log.strip().splitlines()[-3:]) or "no output"
        raise ProgramError(f"program bot {program.label!r}: its build failed (exit {done.returncode}): "
                           f"{printable(clip(tail, 300))}")
    return log


def program_files(program: Program) -> tuple[ProgramFile, ...]:
    """The files the bot starts with: its executable alone, or its folder's files
    (links and special files left out: a link could lead anywhere on this machine)."""
    if program.only is not None:
        paths = [program.folder / program.only]
    else:
        paths = []
        for root, folders, files in os.walk(program.folder):
            folders[:] = sorted(f for f in folders if f not in SKIPPED and not f.startswith("."))
            paths.extend(Path(root) / name for name in sorted(files))
            if len(paths) > MAX_FILES:
                raise ProgramError(f"program bot {program.label!r}: more than {MAX_FILES} files in its folder")
    carried, total = [], 0
    for path in paths:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            continue
        total += info.st_size
        if total > MAX_BYTES:
            raise ProgramError(f"program bot {program.label!r}: its files come to more than "
                               f"{MAX_BYTES // 2**20} MB")
        relative = path.relative_to(program.folder).as_posix()
        carried.append(ProgramFile(relative, path.read_bytes(), bool(info.st_mode & stat.S_IXUSR)))
    return tuple(carried)


def program_code(path: str) -> BotCode:
    """What the sandbox runs for the program bot at ``path``: its command and files, read now."""
    program = read_program(path)
    try:
        files = program_files(program)
    except OSError as exc:
        raise ProgramError(f"program bot {path!r}: its files cannot be read: {exc}") from None
    return BotCode(label=path, program=program.run, files=files)


def code_digest(code: BotCode) -> str:
    """The sha256 of a program's command and files: a changed file is another bot."""
    digest = hashlib.sha256(repr(code.program).encode())
    for file in code.files:
        digest.update(f"\0{file.path}\0{int(file.executable)}\0{len(file.data)}\0".encode())
        digest.update(file.data)
    return digest.hexdigest()
