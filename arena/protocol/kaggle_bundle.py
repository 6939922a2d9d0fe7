"""Modules and their data imported from memory: what a Kaggle submission file runs first.

Kaggle's ConnectX takes one Python file. ``arena export-bot`` (:mod:`arena.entry.kaggle_submission`)
writes this module's source into it (less this docstring), then the bundle: a zip archive of
the bot's modules, the arena modules they import and their package data, base64-encoded.
:func:`load_bundle` imports them from that archive, never from disk, with the standard library
alone: the file runs where no arena is installed.

The bundle's modules are imported under their own names (``arena.bot``, ``bots.solver``). Modules
of those names imported already (an arena installed in the same process, another submission's
bundle) are set aside while the bundle loads and put back after it, so each bundle's bot runs on
the modules it was exported with. A package's data (the solver's opening book) is read through
``importlib.resources``, as from an installed package.
"""

from __future__ import annotations

import base64
import importlib
import io
import sys
import zipfile
from collections.abc import Callable, Iterator
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import IO, Any, TypeVar

T = TypeVar("T")


class BundleFile:
    """A file or folder of the bundle, as ``importlib.resources`` walks them (a Traversable)."""

    def __init__(self, files: dict[str, bytes], path: str) -> None:
        self.files = files
        self.path = path.strip("/")

    @property
    def name(self) -> str:
        return self.path.rpartition("/")[2]

    def joinpath(self, *parts: str) -> BundleFile:
        return BundleFile(self.files, "/".join([self.path, *parts]))

    def __truediv__(self, part: str) -> BundleFile:
        return self.joinpath(part)

    def is_file(self) -> bool:
        return self.path in self.files

    def is_dir(self) -> bool:
        prefix = self.path + "/"
        return any(name.startswith(prefix) for name in self.files)

    def iterdir(self) -> Iterator[BundleFile]:
        prefix = self.path + "/"
        names = {name[len(prefix):].partition("/")[0] for name in self.files if name.startswith(prefix)}
        for name in sorted(names):
            yield self.joinpath(name)

    def read_bytes(self) -> bytes:
        if not self.is_file():
            raise FileNotFoundError(self.path)
        return self.files[self.path]

    def read_text(self, encoding: str | None = None) -> str:
        return self.read_bytes().decode(encoding or "utf-8")

    def open(self, mode: str = "r", *args: Any, **kwargs: Any) -> IO[Any]:
        data = io.BytesIO(self.read_bytes())
        return data if "b" in mode else io.TextIOWrapper(data, *args, **kwargs)


class BundleResources:
    """A package's data in the bundle: what ``importlib.resources.files(package)`` asks its loader for."""

    def __init__(self, files: dict[str, bytes], folder: str) -> None:
        self._root = BundleFile(files, folder)

    def files(self) -> BundleFile:
        return self._root


class BundleFinder(MetaPathFinder, Loader):
    """Finds, loads and reads the data of the modules in one bundle (an import finder and loader)."""

    def __init__(self, files: dict[str, bytes], label: str) -> None:
        self.files = files
        self.label = label

    def module_names(self) -> list[str]:
        """Every module of the bundle, packages first (a parent before its children)."""
        names = []
        for path in self.files:
            if path.endswith("/__init__.py"):
                names.append(path[: -len("/__init__.py")].replace("/", "."))
            elif path.endswith(".py"):
                names.append(path[:-3].replace("/", "."))
        return sorted(names, key=lambda name: (name.count("."), name))

    def _file(self, fullname: str) -> tuple[str, bool] | None:
        base = fullname.replace(".", "/")
        for path, package in ((f"{base}/__init__.py", True), (f"{base}.py", False)):
            if path in self.files:
                return path, package
        return None

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        found = self._file(fullname)
        if found is None:
            return None
        file, package = found
        return ModuleSpec(fullname, self, origin=f"{self.label}/{file}", is_package=package)

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # the usual module object

    def exec_module(self, module: ModuleType) -> None:
        found = self._file(module.__name__)
        assert found is not None  # find_spec found it
        code = compile(self.files[found[0]], f"{self.label}/{found[0]}", "exec")
        exec(code, module.__dict__)

    def get_source(self, fullname: str) -> str | None:
        found = self._file(fullname)
        return None if found is None else self.files[found[0]].decode("utf-8")

    def get_resource_reader(self, fullname: str) -> BundleResources:
        return BundleResources(self.files, fullname.replace(".", "/"))


def read_bundle(encoded: str) -> dict[str, bytes]:
    """The files of a bundle: path in the archive, content."""
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(encoded))) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def load_bundle(encoded: str, label: str, start: Callable[[], T]) -> T:
    """Import every module of the bundle ``encoded`` and call ``start`` while they are the
    modules of their names; what ``start`` returns (the player) keeps them in use.

    Where modules of those names were imported before, they are put back after ``start`` (and
    the bundle's taken out: the two copies never mix); where none were (on Kaggle, where the
    file runs alone) the bundle's stay imported, so that an import inside a function of the
    bot finds them later."""
    finder = BundleFinder(read_bundle(encoded), label)
    names = finder.module_names()
    roots = {name.split(".")[0] for name in names}
    aside = {name: module for name, module in sys.modules.items() if name.split(".")[0] in roots}
    for name in aside:
        del sys.modules[name]
    sys.meta_path.insert(0, finder)
    try:
        for name in names:
            importlib.import_module(name)
        return start()
    finally:
        sys.meta_path.remove(finder)
        if aside:
            for name in [name for name in sys.modules if name.split(".")[0] in roots]:
                del sys.modules[name]
            sys.modules.update(aside)
