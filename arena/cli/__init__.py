"""The ``arena`` command: click only, one module per subject (see :mod:`arena.cli.main`)."""

import sys

try:
    from arena.cli.main import main
except KeyboardInterrupt:
    # Ctrl-C while the command loads (its imports take a moment, more on a busy
    # machine) ends it as Ctrl-C anywhere else does: one line and 130, not a
    # traceback. The command's own handler is not in place before it has loaded.
    sys.stderr.write("Interrupted.\n")
    sys.exit(130)

__all__ = ["main"]
