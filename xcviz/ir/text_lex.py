"""The tokens of the text form (`.xcir`): a one-regex lexer, `file:line:col` for any offset, and string escapes."""
from __future__ import annotations

import re
from bisect import bisect_right

from ..errors import XcvizError

# blanks and comments, taken with the token after them (half the matches); possessive: never backtracked
_SKIP = r"(?:[ \t\r\n]++|\#[^\n]*+)*+"
_TOKEN = re.compile(_SKIP + r"""(?:
    (?P<val>%(?:[A-Za-z0-9_./-]+|"(?:[^"\\\n]|\\.)*"))
  | (?P<bytes>b"(?:[^"\\\n]|\\.)*")
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<hex>0x[0-9a-fA-F \t\r\n]*)
  | (?P<num>-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|-inf\b)
  | (?P<word>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<punct>[(){}\[\]<>,=:^?])
)""", re.VERBOSE)
_BLANK = re.compile(_SKIP)
_ESCAPE = re.compile(r'\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|["\\nrt])')
_SIMPLE = {'"': '"', "\\": "\\", "n": "\n", "r": "\r", "t": "\t"}


class Tokens:
    """The token list of a text, read left to right by a parser (`i` is the next token)."""

    def __init__(self, text: str, source: str | None) -> None:
        self.text, self.source = text, source or "<text>"
        self._newlines: list[int] | None = None
        self.i = 0
        self.toks: list[tuple[str, str, int]] = []  # (kind, text, offset)
        append = self.toks.append
        pos, end = 0, len(text)
        match = _TOKEN.match  # (not finditer: after a failed match it would retry at every later offset)
        while True:
            m = match(text, pos)
            if m is None:
                break
            pos = m.end()
            kind = m.lastgroup
            append((kind, m.group(kind), m.start(kind)))
        pos = _BLANK.match(text, pos).end()
        if pos != end:
            raise self.error(f"unexpected character {text[pos]!r}", pos,
                             hint="names with other characters are quoted: %\"my name\"")
        append(("eof", "", len(text)))

    # -- tokens ---------------------------------------------------------------
    def at(self, pos: int) -> str:
        """`file:line:col` of an offset (newlines found once, then a bisection)."""
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        line = bisect_right(self._newlines, pos - 1)
        return f"{self.source}:{line + 1}:{pos - (self._newlines[line - 1] if line else -1)}"

    def error(self, message: str, pos: int | None = None, hint: str | None = None) -> XcvizError:
        if pos is None:
            pos = self.toks[self.i][2]
        return XcvizError(message, where=self.at(pos), hint=hint or "see `xcviz print` for the syntax")

    def peek(self, text: str | None = None, kind: str | None = None) -> bool:
        """Is the next token `text` (a word or punctuation: other kinds never spell one) / of `kind`?"""
        k, t, _ = self.toks[self.i]
        return (kind is None or k == kind) and (text is None or t == text)

    def take(self, text: str | None = None, kind: str | None = None, what: str | None = None) -> str:
        k, t, _ = self.toks[self.i]
        if (kind is not None and k != kind) or (text is not None and t != text) or (k == "eof" and kind != "eof"):
            found = "end of text" if k == "eof" else repr(t if len(t) <= 30 else t[:29] + "…")
            raise self.error(f"expected {what or repr(text) or kind}, found {found}")
        self.i += 1
        return t

    def where(self) -> str:
        return self.at(self.toks[self.i][2])

    def string(self, tok: str, at: int | None = None) -> str:
        """A quoted token's text; `at`: the token's index (default: the one just taken), for errors."""
        body = tok[1:-1]
        if "\\" not in body:
            return body

        def one(m: re.Match) -> str:
            e = m.group(1)
            return _SIMPLE.get(e) or chr(int(e[1:], 16))

        if at is None:
            at = self.i - 1
        bad = _ESCAPE.sub("", body)
        if "\\" in bad:
            self.i = at
            raise self.error("unknown escape in a string", hint='escapes are \\" \\\\ \\n \\r \\t \\xNN \\uNNNN \\UNNNNNNNN')
        try:
            return _ESCAPE.sub(one, body)
        except (ValueError, OverflowError):
            self.i = at
            raise self.error("escape out of range", hint="\\U escapes go up to 0010ffff") from None
