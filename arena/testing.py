"""The submission checks under their first import path, for bot authors' scripts.

Compatibility only: the checks live in :mod:`arena.entry.checks`.
"""

from arena.entry.checks import Check, CheckReport, check_code

__all__ = ["Check", "CheckReport", "check_code"]
