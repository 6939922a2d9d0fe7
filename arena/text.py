"""Small text helpers shared by every room (nothing here imports the arena)."""

from __future__ import annotations


def clip(text: str, limit: int = 60) -> str:
    """``text``, cut to at most ``limit`` characters, ending in "..." if it was cut:
    what a message shows of something too long to quote whole."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def content_hash(content: str | bytes) -> str:
    """The identity of a bot's code: the sha256 (hex) of its text, as UTF-8, or
    of its bytes. Equal code, equal hash, wherever it came from."""
    # Imported here: the spawner loads this module for clip, and every module it
    # loads (hashlib brings libcrypto) is copied into every bot process it forks.
    import hashlib

    data = content.encode() if isinstance(content, str) else content
    return hashlib.sha256(data).hexdigest()


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and the noun it counts, singular for one: "1 game", "2 games",
    "1 ply", "3 plies" (``nouns`` for a plural that is not ``noun`` + "s")."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"
