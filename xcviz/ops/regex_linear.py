"""Whether a regular expression runs in linear time on Python's backtracking `re`, proven from its syntax.

A model file's RegexFullMatch pattern is hostile input: on a backtracking engine `(a+)+$` takes exponential
time on "a" * 32 + "!". google-re2 (the `re2` extra) runs every pattern in linear time; without it,
ops.regex_re2 runs a pattern on Python's `re` only when `why_not_linear` finds no reason to doubt it:

- no quantifier on a group that holds a variable quantifier or an alternation (nested quantifiers:
  `(a+)+`, `(a|a)*`, `(a*b){9}`: exponential);
- at most one variable quantifier (`*`, `+`, `?`, `{n,}`, `{n,m}` with m > n) in the whole pattern (k of them
  can split a text k ways: `a*a*a*b` is cubic, `a?` * 30 + `a` * 30 exponential in the pattern's length);
- no backreference or lookaround (ops.regex_re2 refuses those for every engine: RE2 has none).

The rule is conservative: some linear patterns are refused (`\\d+\\.\\d+`), never the other way round.
"""
from __future__ import annotations


def why_not_linear(pattern: str) -> str | None:
    """None when `pattern` (RE2 syntax, already checked by ops.regex_re2) provably runs in linear time on a
    backtracking engine, else the reason, in words."""
    stack = [[False, False]]  # per open group: (holds a variable quantifier, holds an alternation)
    variable = 0
    last_group: list | None = None  # the group just closed (a quantifier right after it applies to it)
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        quantified_group, last_group = last_group, None
        if c == "\\":
            i += 2
            continue
        if c == "[":  # a class is one atom: skip to its closing ] (a leading ] or ^] is a literal)
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            i += 1
            continue
        if c == "(":
            stack.append([False, False])
            i += 1
            if pattern.startswith("?P<", i):  # a named group: past its name
                i = pattern.find(">", i) + 1 or n
            elif pattern.startswith("?", i):  # (?: or flags (?i) (?i:...): past them
                while i < n and pattern[i] not in ":)":
                    i += 1
                i += pattern.startswith(":", i)
            continue
        if c == ")":
            last_group = stack.pop() if len(stack) > 1 else None
            if last_group is not None:  # what a group holds, its enclosing group holds
                stack[-1][0] |= last_group[0]
                stack[-1][1] |= last_group[1]
            i += 1
            continue
        if c == "|":
            stack[-1][1] = True
            i += 1
            continue
        end, var = _quantifier(pattern, i)
        if end == i:
            i += 1
            continue
        if quantified_group is not None and (quantified_group[0] or quantified_group[1]):
            return "a quantifier on a group holding " + ("a quantifier" if quantified_group[0] else "an alternation")
        if var:
            variable += 1
            stack[-1][0] = True
            if variable > 1:
                return "more than one variable quantifier"
        i = end + (1 if end < n and pattern[end] in "?+" else 0)  # (a lazy or possessive suffix)
    return None


def _quantifier(pattern: str, i: int) -> tuple[int, bool]:
    """At pattern[i]: (the end of the quantifier there, whether it is variable), or (i, False) if none."""
    c = pattern[i]
    if c in "*+?":
        return i + 1, True
    if c != "{":
        return i, False
    j = pattern.find("}", i)
    body = pattern[i + 1:j] if j > 0 else ""
    low, comma, high = body.partition(",")
    if not low.isdigit() or (high and not high.isdigit()):
        return i, False  # a literal brace
    return j + 1, bool(comma) and (not high or int(high) > int(low))
