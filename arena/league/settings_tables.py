"""The tables of a league's settings file ([league], [gate], [pairing]) checked the
same way: a table, only its known keys, each of its type, every mistake said in one
line that names the key and the value."""

from __future__ import annotations

from typing import Any


def checked_table(
    raw: dict[str, Any], name: str, kinds: dict[str, tuple[type, ...]], error: type[Exception], source: str,
    example: str = "",
) -> dict[str, Any] | None:
    """The table ``name`` of the settings ``raw`` (None where there is none), each key
    known to ``kinds`` and of one of its types (its first named in the message). TOML's
    true and false are never numbers, though Python's bool is an int. ``example``
    (as [gate] with ...) ends the message of a value that is not a table."""
    table = raw.get(name)
    if table is None:
        return None
    if not isinstance(table, dict):
        raise error(f"{source}: {name} must be a table" + (f", {example}" if example else ""))
    for key, value in table.items():
        allowed = kinds.get(key)
        if allowed is None:
            raise error(f"{source}: unknown key '{name}.{key}'; valid keys: " + ", ".join(f"{name}.{k}" for k in kinds))
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            raise error(f"{source}: {name}.{key} must be {allowed[0].__name__}, got {value!r}")
    return table
