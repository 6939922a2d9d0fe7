"""Runs an exported main.py as Kaggle would, in a process of its own: tests/test_kaggle_submission.py
starts it with ``python -I`` from a folder holding only the file.

Imports of the arena, the bots and numba are refused before the file is loaded, so the file
must bring every module it uses. Each line in is ``{"observation": ..., "configuration": ...}``;
each line out is ``{"action": column, "info": the bot's info, "modules": ...}``.
"""

import json
import sys
from importlib.abc import MetaPathFinder


class Refused(MetaPathFinder):
    """Refuses what the submission must not take from this machine."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("arena", "bots", "numba"):
            raise ImportError(f"{name} is not on Kaggle")
        return None


sys.meta_path.insert(0, Refused())
namespace = {}  # as Kaggle runs the file: exec'd in a namespace of its own, the last callable its agent
with open(sys.argv[1], encoding="utf-8") as file:
    exec(compile(file.read(), sys.argv[1], "exec"), namespace)
agent = [value for value in namespace.values() if callable(value)][-1]
for line in sys.stdin:
    request = json.loads(line)
    action = agent(request["observation"], request["configuration"])
    print(json.dumps({
        "action": action,
        "type": type(action).__name__,
        "info": namespace["PLAYER"].last_info,
        "agent": agent.__name__,
        "numba": "numba" in sys.modules,
    }), flush=True)
