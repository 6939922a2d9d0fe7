"""Writes :mod:`bots.kernel_c4`: the solver's compiled search (the kernel section of
:mod:`bots.solver_fast`) with the geometry of 7x6 connect 4 with gravity written in
as constants.

The generic kernel reads the rules from an array at run time (whether stones
fall, the line directions' shifts, the board's mask, the move order), so the
compiler can fold none of it. Written in, each test of the rules disappears, the
shifts become immediates and the move loops run over constants: the search of
the game nearly everyone plays visits the same nodes in about 0.96x the time
(``python bench/solver.py --kernels``). The section is copied as it is but for
the reads that :func:`constants` lists, so the
two kernels cannot drift apart: ``tests/test_solver_kernel.py`` fails when the
written file is not what this module writes now.

Run ``python -m bots.kernel_source`` after changing the kernel of
``bots/solver_fast.py`` (``--check`` says whether the file is up to date).
"""

from __future__ import annotations

import argparse
import ast
import builtins
import sys
from pathlib import Path

import numpy as np

from arena.engine.game import Rules

HERE = Path(__file__).resolve().parent
GENERIC = HERE / "solver_fast.py"
WRITTEN = HERE / "kernel_c4.py"
BEGIN = "# --- the kernel ---"
END = "# --- end of the kernel ---"
#: The rules the written kernel serves (bots.solver hands it to the compiled core for them).
RULES = Rules()


def constants(rules: Rules = RULES) -> dict[str, str]:
    """Each run-time read of the rules in the kernel, and the constant written in
    its place for ``rules`` (with gravity, connect 4, a board of at most 64 bits:
    the kernel's fast line test)."""
    g = rules.geometry
    order = [g.column[c] for c in g.centre_order]
    return {
        "st[GRAVITY]": "True",
        "st[FAST4]": "True",
        "st[CONNECT]": str(rules.connect),
        "st[STRIDE]": "2",  # words per entry with gravity: the key says the whole position
        "st[NMOVES]": str(len(order)),
        "st[CELLS]": str(rules.cells),
        "st[HALF]": str((rules.cells + 1) // 2),
        "st[SHIFT + d]": "SHIFTS_C4[d]",
        "st[FITS + d]": "True",
        "cw[FULL]": "FULL_C4",
        "cw[BOTTOM]": "BOTTOM_C4",
        "cw[ORDER + i]": "ORDER_C4[i]",
        "cw[ORDER + rank]": "ORDER_C4[rank]",
    }


def _section(text: str) -> str:
    start = text.index(BEGIN)
    start = text.index("\n\n\n", start) + 3  # after the section's own comment
    return text[start:text.index(END)].rstrip() + "\n"


def _imports(
    generic: str, section: str, values: dict[str, str], extra: dict[str, tuple[str, str]] | None = None
) -> list[str]:
    """The import lines the section needs, sorted as the project's linter sorts
    them: each name from where bots/solver_fast.py takes it, or from
    bots.solver_fast when it is its own and not among ``values`` (written in)."""
    tree = ast.parse(generic)
    origin: dict[str, tuple[str, str]] = {}  # name -> (module, name there)
    modules: dict[str, str] = {}  # name -> module, for ``import x as y``
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            for alias in node.names:
                origin[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                modules[alias.asname or alias.name] = alias.name
    own = _top_level_names(tree)
    written = ast.parse(section)
    used = {node.id for node in ast.walk(written) if isinstance(node, ast.Name)}
    used -= _top_level_names(written) | set(dir(builtins))
    straight: dict[str, list[str]] = {}  # module -> its import lines
    by_module: dict[str, list[str]] = {}
    for name in used & set(modules):
        module = modules[name]
        straight[module] = [f"import {module}" + (f" as {name}" if name != module else "")]
    origin.update(extra or {})
    used |= set(extra or ())
    for name in used & set(origin):
        module, there = origin[name]
        by_module.setdefault(module, []).append(there if there == name else f"{there} as {name}")
    mine = sorted(name for name in used & own if name not in values)
    if mine:
        by_module["bots.solver_fast"] = mine
    lines: list[str] = []
    for group in ("stdlib", "third-party", "first-party"):
        chosen = [module for module in {*straight, *by_module} if _group(module) == group]
        if not chosen:
            continue
        lines += [line for module in sorted(chosen) for line in straight.get(module, [])]
        lines += [_from_line(module, by_module[module]) for module in sorted(chosen) if module in by_module]
        lines.append("")
    return lines


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a module's own statements bind (its functions, classes, assignments)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {item.id for item in ast.walk(target) if isinstance(item, ast.Name)}
    return names


def _group(module: str) -> str:
    top = module.split(".")[0]
    if top in sys.stdlib_module_names:
        return "stdlib"
    return "first-party" if top in ("arena", "bots") else "third-party"


def _from_line(module: str, names: list[str]) -> str:
    """``from module import names``: constants, then classes, then the rest; on
    lines of their own when one line would be too long."""
    def kind(name: str) -> tuple[int, str]:
        bare = name.split(" as ")[0]
        return (0 if bare.isupper() else 1 if bare[0].isupper() else 2, bare.lower())

    ordered = sorted(names, key=kind)
    line = f"from {module} import {', '.join(ordered)}"
    if len(line) <= 120:
        return line
    return "\n".join([f"from {module} import (", *[f"    {name}," for name in ordered], ")"])


def _values(generic: str, section: str) -> dict[str, str]:
    """The numbers of bots/solver_fast.py that the section reads (the layout of
    the rules' array and of a table entry), each as the line that defines it here.

    Written in rather than imported: numba's cache of a module's compiled code
    knows only that module's own file, so a number changed in bots/solver_fast.py
    would leave this kernel's cached code with the old one; written here, the
    change makes this file out of date (its test says so) and its code new."""
    from bots import solver_fast

    own = _top_level_names(ast.parse(generic))
    used = {node.id for node in ast.walk(ast.parse(section)) if isinstance(node, ast.Name)}
    lines: dict[str, str] = {}
    for name in sorted(used & own):
        value = getattr(solver_fast, name)
        if isinstance(value, np.uint64):
            lines[name] = f"{name} = np.uint64({int(value)})"
        elif isinstance(value, int) and not isinstance(value, bool):
            lines[name] = f"{name} = {value}"
        elif isinstance(value, float) and value == np.inf:
            lines[name] = f"{name} = np.inf"
    return lines


def source(generic: str | None = None, rules: Rules = RULES) -> str:
    """The text of bots/kernel_c4.py, from the text of bots/solver_fast.py, for
    ``rules`` with gravity and connect 4 on a board whose shifts fit 64 bits: the
    kernel's fast line test, which the written constants assume."""
    g = rules.geometry
    if not (rules.gravity and rules.connect == 4 and rules.scoring == "line" and 3 * (rules.height + 2) < 64
            and rules.width * (rules.height + 1) <= 64):
        raise ValueError(f"a kernel can be written only for connect 4 with gravity that fits 64 bits, "
                         f"not {rules.describe()}")
    generic = GENERIC.read_text() if generic is None else generic
    section = _section(generic)
    for read, constant in constants(rules).items():
        if read not in section:
            raise ValueError(f"the kernel no longer reads {read}: update bots/kernel_source.py")
        section = section.replace(read, constant)
    # Any other read of the same slots ("st[SHIFT + 1]") would be left to the run time.
    slots = sorted({read.split(" ")[0].rstrip("]") for read in constants(rules)})
    left = [slot for slot in slots if slot in section]
    if left:
        raise ValueError(f"the kernel reads {', '.join(left)} in a new way: update bots/kernel_source.py")
    values = _values(generic, section)
    order = [g.column[c] for c in g.centre_order]
    head = [
        '"""GENERATED by ``python -m bots.kernel_source`` from the kernel of',
        ":mod:`bots.solver_fast`, with the geometry of "
        f"{rules.describe()} written in: do not edit.",
        "",
        "Its functions take the same arguments as the generic kernel's (the rules'",
        "array and words are still passed, and read only for the clock, the node",
        "count and the table); :mod:`bots.solver` gives this search to the compiled",
        'core for these rules."""',
        "",
        "# ruff: noqa: SIM222",
        "",
        "from __future__ import annotations",
        "",
        *_imports(generic, section, values, extra={"Rules": ("arena.engine.game", "Rules")}),
        "#: The numbers of bots/solver_fast.py the kernel reads.",
        *values.values(),
        "",
        "#: The rules this kernel serves.",
        f"RULES = {rules!r}",
        f"SHIFTS_C4 = {tuple(g.shifts)}  # the four line directions' shifts",
        f"FULL_C4 = np.uint64({g.full})",
        f"BOTTOM_C4 = np.uint64({sum(g.bottom)})",
        "#: The columns' cells, centre first.",
        "ORDER_C4 = (",
        *[f"    np.uint64({column})," for column in order],
        ")",
        "",
        "",
    ]
    return "\n".join(head) + section


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only say whether bots/kernel_c4.py is up to date")
    args = parser.parse_args()
    text = source()
    if args.check:
        if not WRITTEN.exists() or WRITTEN.read_text() != text:
            print(f"{WRITTEN} is out of date: run python -m bots.kernel_source", file=sys.stderr)
            sys.exit(1)
        print(f"{WRITTEN} is up to date")
        return
    WRITTEN.write_text(text)
    print(f"wrote {WRITTEN}")


if __name__ == "__main__":
    main()
