"""The one user-facing exception: what went wrong, where, and how to fix it."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable

BAD_INPUT = 2
INTERNAL = 1


@dataclass
class XcvizError(Exception):
    """Bad input or an impossible request. `main()` prints it as one line and exits with `code`."""

    message: str
    hint: str | None = None
    where: str | None = None  # "file.yaml:12:3", "node 'c1'", ...
    code: int = BAD_INPUT

    def __str__(self) -> str:
        text = f"{_cap(self.where)}: {_cap(self.message)}" if self.where else _cap(self.message)
        if self.hint:
            text += f" (hint: {_cap(self.hint)})"
        return text


MAX_PART = 1000  # characters of message, where or hint shown; hostile files can make any of them huge


def _cap(text: str) -> str:
    text = str(text)
    return text if len(text) <= MAX_PART else text[:MAX_PART] + f"… ({len(text) - MAX_PART} more characters)"


def did_you_mean(name: str, choices: Iterable[str]) -> str | None:
    """A 'did you mean' hint for a misspelt name, or None."""
    lowered = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)
    if not close:
        return None
    return "did you mean " + " or ".join(repr(lowered[c]) for c in close) + "?"
