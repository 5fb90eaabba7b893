"""Terminal safety for user strings: control and bidi characters shown as visible symbols, never executed."""
from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, C1 controls, and the bidi overrides/isolates of "trojan source".
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(m: re.Match) -> str:
    c = ord(m.group())
    if c < 0x20:
        return chr(0x2400 + c)  # ␛ for ESC, ␇ for BEL, ...
    return "\u2421" if c == 0x7f else "\ufffd"


def printable(text: str) -> str:
    """The same length as `text` (so styled spans stay valid), with unsafe characters made visible."""
    return _UNSAFE.sub(_visible, text) if _UNSAFE.search(text) else text


def sanitize(renderable):
    """Make every rich Text inside a renderable (Group, Table cells/title/caption, Panel) printable, in place."""
    from rich.text import Text

    stack = [renderable]
    seen: set[int] = set()
    while stack:
        r = stack.pop()
        if r is None or id(r) in seen:
            continue
        seen.add(id(r))
        if isinstance(r, Text):
            clean = printable(r.plain)
            if clean != r.plain:
                r.plain = clean
            continue
        if isinstance(r, str):
            continue
        for attr in ("title", "caption", "renderable"):
            stack.append(getattr(r, attr, None))
        stack.extend(getattr(r, "renderables", None) or [])
        for column in getattr(r, "columns", None) or []:
            stack.append(getattr(column, "header", None))
            stack.extend(getattr(column, "_cells", None) or [])
    return renderable
