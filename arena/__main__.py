"""``python -m arena``: the same as the ``arena`` command."""

from arena.cli import main

main()
