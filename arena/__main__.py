"""``python -m arena``: the same as the ``arena`` command."""

from arena.cli.main import main

main()
