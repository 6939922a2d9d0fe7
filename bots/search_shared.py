"""What the built-in searches share with their compiled back ends, in a module that
imports no bot: :mod:`bots.solver` and :mod:`bots.solver_fast` share the clock's
cadence, the enhanced transposition cutoff's threshold and the abort signal;
:mod:`bots.mcts` and :mod:`bots.mcts_fast` share the playouts' random generator and
the shape of a root move. A back end imports these from here, never from the bot
that uses it, so no import runs back up (tests/test_bots_imports.py checks).

Pure Python: the bots import it whether or not numba is there.
"""

from __future__ import annotations

# --- the solver -------------------------------------------------------------------------

#: Look at the clock (and the node budget) at most every this many nodes.
CHECK_EVERY = 1024
#: Nodes with at least this many empty cells look among their children's table
#: entries for one that proves the cutoff before searching any (an enhanced
#: transposition cutoff). Nearer the end a child's search is too small to be
#: worth the table look-ups (measured on cold 8- to 12-stone solves of 7x6).
ETC_EMPTY_CELLS = 20


class SearchAborted(Exception):
    """The deadline or node budget of a search ran out (internal)."""


# --- MCTS -------------------------------------------------------------------------------

#: The playouts' random numbers: a 64-bit linear congruential generator (Knuth's
#: MMIX constants); a draw below ``n`` is ``(top 32 bits * n) >> 32``. Both back ends
#: step the same generator, so the same state gives the same playout in each.
LCG_MUL = 6364136223846793005
LCG_ADD = 1442695040888963407

#: A move of the root as both back ends report it: (move, visits, value, proven
#: result or None), in the order the moves were first tried (most central first).
RootMove = tuple[int, int, float, float | None]
