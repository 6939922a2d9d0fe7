"""The ``arena`` command: click only, one module per subject (see :mod:`arena.cli.main`)."""

from arena.cli.main import main

__all__ = ["main"]
