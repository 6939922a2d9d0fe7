"""``python -m arena.engine BOT``: a Python bot as a program of the bot protocol, on
stdin and stdout, for other tools (see :mod:`arena.protocol.stdio`). Only this
launcher reaches up from the engine's package; nothing in the engine imports it."""

import sys

from arena.protocol.stdio import main

if __name__ == "__main__":
    sys.exit(main())
