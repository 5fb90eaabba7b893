"""The one user-facing exception: what went wrong, where, and how to fix it."""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Iterable

BAD_INPUT = 2
INTERNAL = 1


# Parameters whose command-line flag is not their name with dashes
_FLAGS = {"dims": "--dim"}


def flag_of(param: str) -> str:
    """The command line's spelling of an option: min_cluster_size -> --min-cluster-size."""
    return _FLAGS.get(param, "--" + param.replace("_", "-"))


@dataclass
class XcvizError(Exception):
    """Bad input or an impossible request. `main()` prints it as one line and exits with `code`.

    `param`: the option the error concerns (its Python name, "deny"); the message then starts with it as the
    surface that raised it spells it: `--deny` on the command line (the default), `deny` through the API
    (`surface = "api"`, set by xcviz's public functions)."""

    message: str
    hint: str | None = None
    where: str | None = None  # "file.yaml:12:3", "node 'c1'", ...
    code: int = BAD_INPUT
    param: str | None = None
    surface: str = "cli"

    @property
    def text(self) -> str:
        """The message with its parameter, as the surface spells it."""
        if not self.param:
            return self.message
        return f"{self.param if self.surface == 'api' else flag_of(self.param)}: {self.message}"

    def __str__(self) -> str:
        text = f"{_cap(self.where)}: {_cap(self.text)}" if self.where else _cap(self.text)
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


def node_hint(name: str, names: Iterable[str], limit: int = 3) -> str:
    """A hint for a node name the graph lacks: the names holding it as a path part (`fc` -> `/fc/Gemm`),
    ending with it, or containing it, then close spellings; failing all, the first few names.

    Exporters write long scoped names (`/layer1/layer1.0/conv1/Conv`): a user types the short part."""
    names = list(names)
    low = name.lower()
    tiers: list[list[str]] = [[], [], [], []]
    for n in names:
        nl = n.lower()
        if low not in nl:
            continue
        parts = [p for p in re.split(r"[/.:]", nl) if p]
        tiers[0 if low in parts else 1 if nl.endswith(low) else 2].append(n)
    found = [n for tier in tiers[:3] for n in sorted(tier, key=len)]
    if found:
        more = f" (+{len(found) - limit} more with {name!r})" if len(found) > limit else ""
        return "did you mean " + " or ".join(repr(n) for n in found[:limit]) + "?" + more
    lowered = {n.lower(): n for n in names}
    close = difflib.get_close_matches(low, list(lowered), n=limit, cutoff=0.5 if len(low) <= 4 else 0.6)
    if close:
        return "did you mean " + " or ".join(repr(lowered[c]) for c in close) + "?"
    if not names:
        return "the graph has no nodes"
    return "its nodes include " + ", ".join(repr(n) for n in names[:5]) + " (see `xcviz cluster`)"
