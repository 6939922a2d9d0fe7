"""Whether this system has the sandbox at all: it is built of Linux's namespaces,
control groups, Landlock and seccomp, and other systems have none of them.

Imports nothing of the sandbox itself (which needs Linux), so that every system may
ask. Where there is none, a bot author's own bot file still plays on their own
machine (``arena check``, ``arena match``, ``arena play``: it is their own code),
without the sandbox and saying so; code others wrote (a submitted bot, an upload, a
league's entrants) never runs: it fails closed (:func:`require_sandbox`).
"""

from __future__ import annotations

import sys

from arena.errors import NoSandbox
from arena.text import printable

__all__ = ["NoSandbox", "require_sandbox", "sandbox_missing", "tell_unsandboxed"]


def sandbox_missing() -> str | None:
    """Why this system has no sandbox (None on Linux, where ``arena doctor`` says what holds)."""
    if sys.platform.startswith("linux"):
        return None
    return f"this system ({sys.platform}) has none: the sandbox is Linux-only"


def require_sandbox(what: str) -> None:
    """Fail closed: :class:`NoSandbox` unless this system has the sandbox, for ``what``
    (a league, a submission, a submitted bot: code others wrote, or code for a league
    to run beside it), said with why. ``--weak-sandbox`` does not lift it: there is
    nothing weaker to fall back on."""
    missing = sandbox_missing()
    if missing is not None:
        raise NoSandbox(f"{what} needs the sandbox, and {missing}; run it on Linux (a bot file of your own "
                        "still plays here without it: arena check, arena match, arena play)")


_TOLD: set[str] = set()  # the bot files already said to run without the sandbox, in this process


def tell_unsandboxed(label: str) -> None:
    """One line on stderr, once per bot file and process: it runs without the sandbox, and why."""
    if label in _TOLD:
        return
    _TOLD.add(label)
    print(printable(f"{label} runs without the sandbox: {sandbox_missing()} (your own code, on your own machine)"),
          file=sys.stderr)
