"""The languages a league takes program bots in: how it knows a source file's
language, how it builds and runs a single file by default, which commands each
needs on the league's machine and which Debian package has them.

Python files are not here: they take the Python path (a ``Bot`` subclass or a
ConnectX agent, checked as they always were). ``arena doctor`` lists the
toolchains :func:`toolchains` finds.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import PurePosixPath

#: Where the toolchains are looked for: the folders a program's command is looked
#: for in the sandbox (arena.sandbox.bot_process.PROGRAM_PATH), not the arena's own PATH.
TOOL_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Language:
    """A language a program bot may be written in."""

    key: str  # as a bot.toml's language names it
    title: str  # in messages and on the site
    extensions: tuple[str, ...]
    tools: tuple[str, ...]  # commands the league's machine needs, to build and to run
    package: str  # the Debian package(s) that have them
    build: tuple[str, ...] | None  # "{sources}": every source file; "{main}": the one named; None: no build
    run: tuple[str, ...]  # "{main}" the file, "{stem}" its name without its extension

    def build_command(self, main: str, sources: list[str]) -> tuple[str, ...] | None:
        """The default build of a bot whose main source file is ``main``, in a folder
        holding ``sources`` (this language's files)."""
        return None if self.build is None else _fill(self.build, main, sources)

    def run_command(self, main: str) -> tuple[str, ...]:
        return _fill(self.run, main, [main])

    def missing(self) -> list[str]:
        """The tools of this language not found on this machine."""
        return [tool for tool in self.tools if shutil.which(tool, path=TOOL_PATH) is None]


def _fill(words: tuple[str, ...], main: str, sources: list[str]) -> tuple[str, ...]:
    filled: list[str] = []
    for word in words:
        if word == "{sources}":
            filled.extend(sources)
        else:
            filled.append(word.replace("{main}", main).replace("{stem}", PurePosixPath(main).stem))
    return tuple(filled)


_JVM = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")

LANGUAGES: dict[str, Language] = {language.key: language for language in (
    Language("c", "C", (".c",), ("gcc",), "gcc",
             ("gcc", "-O2", "-std=gnu11", "-o", "bot", "{sources}", "-lm"), ("./bot",)),
    Language("cpp", "C++", (".cpp", ".cc"), ("g++",), "g++",
             ("g++", "-O2", "-std=gnu++17", "-o", "bot", "{sources}"), ("./bot",)),
    Language("java", "Java", (".java",), ("javac", "java"), "default-jdk-headless",
             ("javac", *(f"-J{flag}" for flag in _JVM), "-encoding", "UTF-8", "{sources}"),
             ("java", *_JVM, "-cp", ".", "{stem}")),
    Language("csharp", "C#", (".cs",), ("mcs", "mono"), "mono-mcs and mono-runtime",
             ("mcs", "-out:bot.exe", "{sources}"), ("mono", "bot.exe")),
    Language("javascript", "JavaScript", (".js",), ("node",), "nodejs", None, ("node", "{main}")),
    Language("elixir", "Elixir", (".exs", ".ex"), ("elixir",), "elixir", None, ("elixir", "{main}")),
    Language("rust", "Rust", (".rs",), ("rustc",), "rustc", ("rustc", "-O", "-o", "bot", "{main}"), ("./bot",)),
    Language("go", "Go", (".go",), ("go",), "golang-go", ("go", "build", "-o", "bot", "{sources}"), ("./bot",)),
)}


def language_of(filename: str) -> Language | None:
    """The language of a source file, by its extension (None: not one of these)."""
    suffix = PurePosixPath(filename).suffix.lower()
    return next((language for language in LANGUAGES.values() if suffix in language.extensions), None)


def toolchains() -> list[tuple[Language, list[str]]]:
    """Every language with the tools it lacks here (none: it can be built and run)."""
    return [(language, language.missing()) for language in LANGUAGES.values()]


def unavailable(key: str) -> str | None:
    """Why a league here cannot take a bot in language ``key`` (a bot.toml's
    ``language``), or None where it can: the tools missing, and the package."""
    language = LANGUAGES.get(key)
    if language is None:
        return None  # python, other: nothing to check (a manifest's commands say what it needs)
    missing = language.missing()
    if not missing:
        return None
    return (f"{language.title} bots cannot be built or run here: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed on the league's machine "
            f"(Debian package {language.package}); upload in another language, or ask the league's organiser")
