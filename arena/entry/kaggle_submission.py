"""A bot as a Kaggle ConnectX submission: one ``main.py`` holding the bot and all it needs.

Kaggle's ConnectX runs one Python file and calls its ``agent(observation, configuration)``
each turn, with Python's standard library and numpy to hand and nothing of the arena.
:func:`build_submission` writes such a file for a bot spec (``solver``, ``minimax:depth=4``,
``my_bot.py``): the bot's module, the arena modules it imports and their package data (the
solver's opening book) go into a zip archive, LZMA-compressed and base64-encoded in the file,
which :mod:`arena.protocol.kaggle_bundle` imports from memory; :mod:`arena.protocol.kaggle_agent`
answers Kaggle's calls. :func:`write_submission` writes it as ``main.py`` or as a
``.tar.gz`` archive with ``main.py`` at its root.

Which modules: those the bot's module imports when it runs, and theirs, read from the
source (an import under ``if TYPE_CHECKING:`` is for type checkers only). An import inside a
function is followed too where what it imports can go to Kaggle; where it cannot (the numba
back ends of the solver and MCTS bots), it is left out, and the bot's own fallback plays: a
bot with a ``backend`` option is exported with ``backend=python``. An import that runs with
the module and needs anything but the standard library, numpy and the bundled packages is
refused, naming it. A module that imports ``importlib.resources`` reads its package's data:
the files of that package that are not code go in too.
"""

from __future__ import annotations

import ast
import base64
import importlib.util
import io
import os
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.bot import BotOptionError
from arena.engine.game import CONNECT_FOUR, Rules
from arena.errors import ArenaError
from arena.players.plugins import BotSpec, BotSpecError, file_code, load_entry, parse_spec, spec_text
from arena.protocol import connectx, kaggle_bundle
from arena.text import clip

#: Kaggle's limit on a submitted file.
KAGGLE_LIMIT_BYTES = 100 * 1024 * 1024
#: The module a bot file becomes in the bundle (its own name could be a standard module's).
FILE_MODULE = "kaggle_bot"
#: The module that answers Kaggle's calls, bundled with every bot.
RUNTIME = "arena.protocol.kaggle_agent"
#: The packages bundled from this installation, besides a plug-in bot's own.
PACKAGES = ("arena", "bots")
#: What Kaggle's ConnectX has besides the standard library.
KAGGLE_HAS = ("numpy",)
#: The back end a bot with a ``backend`` option is exported with: numba's are not bundled.
PURE_BACKEND = "python"
PURE_BACKENDS = ("auto", PURE_BACKEND)
#: What a bundle never holds of a package's files.
NOT_DATA = (".py", ".pyc", "py.typed")
#: Base64's line length in the file.
LINE = 76


class SubmissionError(ArenaError):
    """A bot, an output path or rules that cannot make a Kaggle submission."""


@dataclass(frozen=True)
class Submission:
    """A submission file's text and what its bundle holds."""

    text: str
    modules: tuple[str, ...]
    data: tuple[str, ...]
    settings: dict[str, Any] = field(hash=False)

    @property
    def size(self) -> int:
        """Bytes of ``main.py``."""
        return len(self.text.encode("utf-8"))


@dataclass(frozen=True)
class WrittenSubmission:
    """A submission written: where, how big (``size``: the file written, ``main_size``: its main.py)."""

    path: Path
    size: int
    main_size: int
    submission: Submission


# --- what goes in -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Module:
    name: str
    path: str  # in the archive
    source: bytes
    package: bool
    now: tuple[str, ...]  # what it imports when it runs
    later: tuple[str, ...]  # what its functions import
    reads_data: bool  # it imports importlib.resources
    folder: Path | None  # a package's folder, for its data


class _Gatherer:
    """The modules of a bundle: read from their files, never imported."""

    def __init__(self, packages: Iterable[str], own: dict[str, bytes]) -> None:
        self.packages = set(packages) | {name.split(".")[0] for name in own}
        self.own = own  # modules given as source (a bot file), by name
        self._read: dict[str, _Module | None] = {}

    def kind(self, name: str) -> str:
        """"bundle", "there" (Kaggle has it) or "foreign"."""
        top = name.split(".")[0]
        if top in self.packages:
            return "bundle"
        if top == "__future__" or top in sys.stdlib_module_names or top in KAGGLE_HAS:
            return "there"
        return "foreign"

    def module(self, name: str) -> _Module | None:
        """The module ``name`` as read from its file; None where there is no such module."""
        if name not in self._read:
            self._read[name] = self._load(name)
        return self._read[name]

    def _load(self, name: str) -> _Module | None:
        if name in self.own:
            return self._parsed(name, f"{name}.py", self.own[name], False, None)
        parent = name.rpartition(".")[0]
        if parent and not getattr(self.module(parent), "package", False):
            return None  # a name in a module (finding it would import that module)
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            return None
        package = spec.submodule_search_locations is not None
        path = name.replace(".", "/") + ("/__init__.py" if package else ".py")
        folder = Path(spec.origin).parent if package else None
        return self._parsed(name, path, Path(spec.origin).read_bytes(), package, folder)

    def _parsed(self, name: str, path: str, source: bytes, package: bool, folder: Path | None) -> _Module:
        try:
            tree = ast.parse(source, filename=path)
        except SyntaxError as exc:
            raise SubmissionError(f"{path} does not parse: {exc.msg} (line {exc.lineno}): "
                                  "fix it, then export again") from None
        now: list[str] = []
        later: list[str] = []
        here = name if package else name.rpartition(".")[0]
        _collect(tree, here, now, later, deferred=False)
        resources = {"importlib.resources"} & set(now + later)
        return _Module(name, path, source, package, tuple(self._modules_of(now)), tuple(self._modules_of(later)),
                       bool(resources), folder)

    def _modules_of(self, imported: list[str]) -> list[str]:
        """Each imported name that is a module (``from bots import solver_fast`` imports the
        module ``bots.solver_fast``; ``from bots.lines import lines_for``, the module ``bots.lines``)."""
        found = []
        for name in imported:
            if self.kind(name) != "bundle" or self.module(name) is not None:
                found.append(name)
        return found

    def closure(self, root: str) -> tuple[set[str], str | None]:
        """The bundled modules ``root`` needs when it runs (its packages too), or why it cannot
        go to Kaggle: ``(modules, None)`` or ``(set(), reason)``."""
        needed: set[str] = set()
        stack = [(root, "")]
        while stack:
            name, importer = stack.pop()
            kind = self.kind(name)
            if kind == "there" or name in needed:
                continue
            if kind == "foreign":
                return set(), f"{importer} imports {name}, which is neither Python's standard library nor numpy"
            module = self.module(name)
            if module is None:
                return set(), f"{importer or 'the bot'} imports {name}, which is not installed here"
            needed.add(name)
            parts = name.split(".")
            stack += [(".".join(parts[:i]), name) for i in range(1, len(parts))]
            stack += [(imported, name) for imported in module.now]
        return needed, None

    def gather(self, roots: list[str]) -> list[_Module]:
        """Every module of the bundle: the roots' closures, then what their functions import
        where that can go too."""
        included: set[str] = set()
        for root in roots:
            needed, why = self.closure(root)
            if why is not None:
                raise SubmissionError(f"cannot go to Kaggle: {why} (Kaggle's ConnectX has only those)")
            included |= needed
        queue = sorted(included)
        while queue:
            module = self.module(queue.pop())
            assert module is not None
            for name in module.later:
                if self.kind(name) != "bundle" or name in included:
                    continue
                needed, why = self.closure(name)
                if why is None:  # else an optional path (numba's), which the bot does without
                    queue += sorted(needed - included)
                    included |= needed
        modules = [self.module(name) for name in sorted(included)]
        return [module for module in modules if module is not None]


def _collect(node: ast.AST, here: str, now: list[str], later: list[str], deferred: bool) -> None:
    """The modules ``node`` imports, into ``now`` (when the module runs) or ``later`` (in a
    function); ``here`` is the package relative imports start from."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            _collect(child, here, now, later, True)
            continue
        if isinstance(child, ast.If) and _type_checking(child.test):
            for other in child.orelse:  # the body is for type checkers only
                _collect(ast.Module(body=[other], type_ignores=[]), here, now, later, deferred)
            continue
        into = later if deferred else now
        if isinstance(child, ast.Import):
            into += [alias.name for alias in child.names]
        elif isinstance(child, ast.ImportFrom):
            base = child.module or ""
            if child.level:
                parts = here.split(".")
                parent = ".".join(parts[: len(parts) - child.level + 1])
                base = f"{parent}.{base}" if base else parent
            into.append(base)
            into += [f"{base}.{alias.name}" for alias in child.names if alias.name != "*"]
        _collect(child, here, now, later, deferred)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _data_files(modules: list[_Module]) -> dict[str, bytes]:
    """The package data of the packages whose modules read theirs, by path in the archive."""
    folders: dict[str, Path] = {}
    by_name = {module.name: module for module in modules}
    for module in modules:
        if not module.reads_data:
            continue
        package = by_name.get(module.name if module.package else module.name.rpartition(".")[0])
        if package is not None and package.folder is not None:
            folders[package.name] = package.folder
    files: dict[str, bytes] = {}
    for name, folder in folders.items():
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if path.is_file() and "__pycache__" not in relative.parts and not path.name.endswith(NOT_DATA):
                files[f"{name.replace('.', '/')}/{relative.as_posix()}"] = path.read_bytes()
    return files


# --- the bot ------------------------------------------------------------------------------


def _bot_settings(spec: BotSpec, text: str) -> tuple[dict[str, Any], dict[str, bytes]]:
    """What the file's settings say of the bot, and the modules given as source (a bot file's)."""
    if spec.is_file:
        code = file_code(spec)
        tree = ast.parse(code.text or "") if _parses(code.text or "") else None
        if tree is not None and not any(isinstance(node, ast.ClassDef) for node in tree.body):
            raise SubmissionError(
                f"bot file {clip(spec.path or '')!r} defines no class: export-bot takes a file with a Bot subclass "
                "(a file with a ConnectX agent(observation, configuration) is a Kaggle submission as it is)")
        settings = {"module": FILE_MODULE, "class": spec.class_name, "options": dict(spec.options)}
        return settings, {FILE_MODULE: (code.text or "").encode("utf-8")}
    entry = load_entry(spec)
    bot_class = entry.bot_class
    assert bot_class is not None  # load_entry gives usable entries only
    options = dict(spec.options)
    if "backend" in bot_class.options:
        if options.get("backend", "auto") not in PURE_BACKENDS:
            raise SubmissionError(
                f"bot spec {text!r}: backend={options['backend']} cannot go to Kaggle (numba is not bundled): "
                f"leave the option out, or give backend={PURE_BACKEND}")
        options["backend"] = PURE_BACKEND
    try:
        bot_class(**options)  # the options checked now, not on Kaggle
    except BotOptionError as exc:
        raise BotSpecError(f"bot spec {text!r}: {exc}") from None
    return {"module": bot_class.__module__, "class": bot_class.__qualname__, "options": options}, {}


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def build_submission(text: str, rules: Rules = CONNECT_FOUR) -> Submission:
    """The ``main.py`` of bot spec ``text``, for ConnectX games of ``rules`` (Kaggle's: 7x6
    connect 4; the bot warms up for them when the file is loaded)."""
    why = connectx.unsupported(rules)
    if why is not None:
        raise SubmissionError(f"cannot export for {rules.describe()}: {why}; give rules with gravity "
                              "and a first line that wins")
    spec = parse_spec(text)
    settings, own = _bot_settings(spec, text)
    settings = {"spec": spec_text(spec), **settings, "rules": rules.as_dict(), "seed": 0}
    top = str(settings["module"]).split(".")[0]
    gatherer = _Gatherer((*PACKAGES, top), own)
    modules = gatherer.gather([str(settings["module"]), RUNTIME])
    data = _data_files(modules)
    archive = _archive({module.path: module.source for module in modules} | data)
    return Submission(_main_text(settings, archive), tuple(m.name for m in modules), tuple(sorted(data)), settings)


def _archive(files: dict[str, bytes]) -> bytes:
    """A zip archive of ``files`` (LZMA), the same bytes for the same files."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_LZMA
            archive.writestr(info, files[name])
    return out.getvalue()


HEADER = '''"""A connectk-arena bot for Kaggle's ConnectX: Kaggle calls agent(observation, configuration), the last
function of this file, each turn.

Written by 'arena export-bot' (SETTINGS names the bot). The bot and the modules it needs are in
BUNDLE, a zip archive in base64, imported from memory by the code below: this file needs
Python's standard library alone.
"""
'''

TAIL = '''

def _start() -> Any:
    runtime = importlib.import_module("arena.protocol.kaggle_agent")
    return runtime.start_player(SETTINGS)


PLAYER = load_bundle(BUNDLE, "main.py", _start)


def agent(observation, configuration):
    """The column to play, as Kaggle's ConnectX asks each turn."""
    return PLAYER(observation, configuration)
'''


def _main_text(settings: dict[str, Any], archive: bytes) -> str:
    encoded = base64.b64encode(archive).decode("ascii")
    lines = "\n".join(encoded[i: i + LINE] for i in range(0, len(encoded), LINE))
    return (f"{HEADER}{_bootstrap_source()}\n\nSETTINGS = {settings!r}\n\n"
            f'BUNDLE = """\n{lines}\n"""\n{TAIL}')


def _bootstrap_source() -> str:
    """:mod:`arena.protocol.kaggle_bundle`'s source without its docstring (the file has its own)."""
    source = Path(kaggle_bundle.__file__).read_text(encoding="utf-8")
    first = ast.parse(source).body[0]
    assert isinstance(first, ast.Expr) and first.end_lineno is not None  # its docstring
    return "\n".join(source.splitlines()[first.end_lineno:]).strip() + "\n"


# --- writing it ---------------------------------------------------------------------------


def write_submission(submission: Submission, out: str | Path, force: bool = False) -> WrittenSubmission:
    """Write ``submission`` to ``out``: ``main.py`` itself where ``out`` ends in ``.py``, a
    ``.tar.gz`` archive holding it where ``out`` ends so. A file already there is replaced
    only with ``force``; the file is whole or not there (written beside it, then renamed)."""
    path = Path(out)
    name = path.name.lower()
    if not name.endswith((".py", ".tar.gz")):
        raise SubmissionError(f"cannot write {clip(str(out))!r}: give a .py file (main.py) or a .tar.gz archive")
    if path.exists() and not force:
        raise SubmissionError(f"{clip(str(out))!r} exists already: give --force to replace it, or another path")
    if path.is_dir():
        raise SubmissionError(f"{clip(str(out))!r} is a folder: give a file's path")
    if not path.parent.is_dir():
        raise SubmissionError(f"cannot write {clip(str(out))!r}: its folder does not exist")
    main = submission.text.encode("utf-8")
    content = _tarball(main) if name.endswith(".tar.gz") else main
    if len(content) > KAGGLE_LIMIT_BYTES:
        raise SubmissionError(f"the submission would be {len(content)} bytes, more than Kaggle's "
                              f"{KAGGLE_LIMIT_BYTES} per file")
    part = path.with_name(path.name + ".part")
    try:
        part.write_bytes(content)
        os.replace(part, path)
    except OSError as exc:
        raise SubmissionError(f"cannot write {clip(str(out))!r} ({exc.strerror}): give another path") from None
    finally:
        if part.exists():
            part.unlink()
    return WrittenSubmission(path, len(content), len(main), submission)


def _tarball(main: bytes) -> bytes:
    """A gzipped tar archive with ``main.py`` at its root."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        info = tarfile.TarInfo("main.py")
        info.size, info.mode, info.mtime = len(main), 0o644, int(time.time())
        archive.addfile(info, io.BytesIO(main))
    return out.getvalue()


def export_submission(text: str, out: str | Path, rules: Rules = CONNECT_FOUR,
                      force: bool = False) -> WrittenSubmission:
    """Build the submission of bot spec ``text`` and write it to ``out`` (see :func:`write_submission`)."""
    return write_submission(build_submission(text, rules), out, force)

