"""Line-by-line conversation with a person, on injected streams (testable)."""

from __future__ import annotations

from typing import TextIO


class TerminalIO:
    """Mixin for sessions holding ``self.input`` and ``self.output`` streams."""

    input: TextIO
    output: TextIO

    def _ask(self, prompt: str) -> str | None:
        """Show ``prompt`` and read a line; None at the end of input."""
        self.output.write(prompt)
        self.output.flush()
        line = self.input.readline()
        return line if line else None

    def _say(self, text: str) -> None:
        self.output.write(text + "\n")
        self.output.flush()
