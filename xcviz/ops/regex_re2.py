"""RE2 patterns (ONNX RegexFullMatch): the syntax RE2 and Python's `re` read alike, the rest refused by name, run
on google-re2 (the `re2` extra: linear time) when installed, else on Python's `re` when provably linear.

A pattern from a model file is hostile input: Python's backtracking `re` takes exponential time on `(a+)+$`.
With google-re2 the pattern runs on RE2 itself, in linear time. Without it, a pattern ops.regex_linear cannot
prove linear is refused with one line naming the extra.

ONNX specifies RE2. Python's `re` agrees with it on the common syntax once \\w \\d \\s \\b are ASCII-only, as in
RE2 (re.ASCII) and RE2's \\z is spelled \\Z. Where the two differ, the pattern is refused with a clear error,
never run with Python's meaning:
- Python-only (RE2 rejects them): backreferences (\\1, (?P=n)), lookarounds ((?=, (?!, (?<=, (?<!),
  conditionals ((?(), atomic groups ((?>), possessive quantifiers (a*+), comments ((?#), flags other than
  i, m, s, and \\Z; `{,n}` (Python: {0,n}, RE2: the literal text);
- RE2-only (Python rejects them): \\p{..} / \\pL classes, [[:alpha:]], \\Q..\\E, \\C, the U flag, (?<name>);
  Python-only \\u, \\U, \\N{..} escapes;
- the same syntax with another meaning: `$` without the m flag is RE2's end of text, run as Python's \\Z;
  under an m flag that does not lead the pattern it is refused for texts with a newline; \\s (RE2 leaves out
  \\v) is refused on texts with a \\v; the i flag (RE2 folds Unicode case: k matches KELVIN SIGN) is refused
  for a non-ASCII pattern or texts holding KELVIN SIGN or LONG S, the two non-ASCII letters folding to ASCII.
Zero-width assertions are wrapped in groups, since RE2 lets a quantifier follow them (^*).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache

from ..ir.types import short
from .arrays import Unsupported
from .regex_linear import why_not_linear

_LOOK = {"=": "lookahead (?=", "!": "negative lookahead (?!", "(": "conditional (?(", ">": "atomic group (?>",
         "#": "comment (?#"}


# the only non-ASCII characters in the simple case-folding orbit of an ASCII letter (Unicode CaseFolding.txt):
# under the i flag RE2 matches them with k and s, Python's ASCII mode does not
_FOLDS_INTO_ASCII = ("\u212a", "\u017f")


@dataclass(frozen=True)
class _Scan:
    python: str            # the pattern as Python's re reads it
    dollar: bool           # an unescaped $ outside classes under an m flag that is not global
    space_class: bool      # \s or \S
    ignore_case: bool      # an i flag


def _refuse(pattern: str, what: str, hint: str = "rewrite the pattern in the syntax RE2 and Python share"):
    raise Unsupported(f"RegexFullMatch pattern {pattern!r}: {what}", hint=hint)


def _flags(pattern: str, i: int) -> tuple[int, bool]:
    """At pattern[i] just after '(?': the end of a flag group's flags and whether it sets i."""
    j = i
    while j < len(pattern) and pattern[j] not in ":)":
        if pattern[j] not in "ims-":
            _refuse(pattern, f"flag {pattern[j]!r} (RE2 and Python share only i, m, s)")
        j += 1
    head = pattern[i:j].split("-")[0]
    return j, "i" in head


@lru_cache(maxsize=256)
def _scan(pattern: str) -> _Scan:
    out, i, in_class, dollar, space, icase = [], 0, False, False, False, False
    n = len(pattern)
    m_flags = re.findall(r"\(\?[a-zA-Z]*m[a-zA-Z-]*[:)]", pattern)
    lead = re.match(r"\(\?[a-zA-Z]*\)", pattern)
    multiline = ("none" if not m_flags else "global" if len(m_flags) == 1 and lead and "m" in lead.group(0)
                 else "scoped")
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if e in "pP":
                _refuse(pattern, f"Unicode class \\{e} (RE2 only; Python's re has none)")
            if e in "QEC":
                _refuse(pattern, f"\\{e} (RE2 only)")
            if e in "uUN":
                _refuse(pattern, f"\\{e} escape (Python only; RE2 writes \\x{{...}})")
            if not in_class and e in "123456789":
                _refuse(pattern, f"backreference \\{e} (Python only; RE2 has no backreferences)")
            if e in "ZAGbB" and in_class:
                _refuse(pattern, f"\\{e} inside a character class")
            if e == "Z":
                _refuse(pattern, "\\Z (Python only; RE2 spells the end of the text \\z)")
            space |= e in "sS"
            # zero-width escapes in a group: RE2 lets a quantifier follow them, Python only a group
            out.append("(?:\\Z)" if e == "z" else f"(?:{pattern[i:i + 2]})" if e in "bBA" else pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "[" and i + 1 < n and pattern[i + 1] in ":=.":
                _refuse(pattern, "POSIX class [[:name:]] (RE2 only; Python reads it as a set of characters)")
            in_class = c != "]"  # a leading ] was taken as a literal when the class opened
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            if pattern.startswith("[^", i):
                out.append("[^")
                i += 2
                if i < n and pattern[i] == "]":  # a leading ] is a literal
                    out.append("]")
                    i += 1
                continue
            out.append("[")
            i += 1
            if i < n and pattern[i] == "]":
                out.append("]")
                i += 1
            continue
        if c == "(" and pattern.startswith("(?", i):
            k = pattern[i + 2:i + 3]
            if k in _LOOK:
                _refuse(pattern, f"{_LOOK[k]} (Python only)")
            if pattern.startswith("(?<", i):
                _refuse(pattern, ("lookbehind (Python only)" if pattern[i + 3:i + 4] in "=!" else
                                  "named group (?<name> (RE2 only; write (?P<name>)"))
            if pattern.startswith("(?P=", i):
                _refuse(pattern, "named backreference (?P=name) (Python only)")
            if not pattern.startswith("(?P<", i) and k != ":":
                end, has_i = _flags(pattern, i + 2)
                icase |= has_i
                out.append(pattern[i:end])
                i = end
                continue
        if c in "*+?}" and i + 1 < n and pattern[i + 1] == "+":
            _refuse(pattern, f"possessive quantifier {c}+ (Python only)")
        if c == "{" and pattern.startswith("{,", i):
            _refuse(pattern, "{,n} (Python reads {0,n}, RE2 the literal text)", hint="write {0,n}")
        if c in "^$":
            dollar |= c == "$"
            # RE2's $ without the m flag is the end of the text, Python's \Z (Python's $ also matches before a
            # final newline); with a leading (?m) both match before every newline
            out.append("(?:^)" if c == "^" else "(?:$)" if multiline != "none" else "(?:\\Z)")
            i += 1
            continue
        out.append(c)
        i += 1
    return _Scan("".join(out), dollar and multiline == "scoped", space, icase)


@lru_cache(maxsize=256)
def _compiled(python: str, pattern: str) -> re.Pattern:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # Python's "possible nested set" and similar: meaning in doubt
            return re.compile(python, re.ASCII)
    except (re.error, FutureWarning, DeprecationWarning) as e:
        _refuse(pattern, f"not valid in Python's re ({e}); RE2 may accept it, Python cannot run it")


@lru_cache(maxsize=256)
def _compiled_re2(pattern: str):
    """RE2's compiled form of `pattern`, or None without google-re2."""
    try:
        import re2
    except ImportError:
        return None
    options = re2.Options()
    options.log_errors = False  # (RE2 logs each parse error to stderr: the refusal below says it once)
    try:
        return re2.compile(pattern, options)
    except Exception as e:  # (re2.error, or the binding's own Error for a parse error)
        text = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
        _refuse(pattern, f"not valid in RE2 ({text})", hint="check the pattern against RE2's syntax")


def compile_re2(pattern, texts: list[str]):
    """The compiled form of RE2 `pattern` (google-re2's, else Python's `re`: both have `fullmatch`), after
    checking that it means the same in RE2 and Python on these texts, and, on Python's `re`, that it runs in
    linear time."""
    if pattern is None:
        raise Unsupported("RegexFullMatch needs a `pattern` attribute")
    pattern = pattern.decode("utf-8") if isinstance(pattern, bytes) else str(pattern)
    scan = _scan(pattern)
    if scan.dollar and any("\n" in t for t in texts):
        _refuse(pattern, "$ under a scoped m flag on a text with a newline (only a leading (?m) is read alike)",
                hint="put the m flag at the start of the pattern, or use \\z for the end of the text")
    if scan.space_class and any("\v" in t for t in texts):
        _refuse(pattern, "\\s on a text with a vertical tab (RE2's \\s leaves out \\v, Python's includes it)")
    if scan.ignore_case and (not pattern.isascii() or re.search(r"\\x[89a-fA-F]", pattern)
                             or any(c in t for t in texts for c in _FOLDS_INTO_ASCII)):
        _refuse(pattern, "case-insensitive match of non-ASCII letters (RE2 folds Unicode case: k matches KELVIN "
                "SIGN, é matches É; Python's ASCII mode folds only ASCII)")
    fast = _compiled_re2(pattern)
    if fast is not None:
        return fast
    why = why_not_linear(pattern)
    if why is not None:
        raise Unsupported(f"RegexFullMatch needs google-re2 (pip install 'xcviz[re2]') for pattern {short(pattern, 40)}: "
                          f"{why}, which Python's backtracking re may take exponential time on",
                          hint="google-re2 runs every RE2 pattern in linear time")
    return _compiled(scan.python, pattern)
