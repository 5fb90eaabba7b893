"""Symbolic sizes: polynomials in named dimensions (`2*batch*seq + 16`), their canonical text, evaluation.

A symbolic dimension in a TensorType is a string. Plain names (`batch`) come from the file; shape inference
writes derived ones in this module's canonical text (`seq+1`, `2*seq`, `batch*seq`), so equal expressions
are equal strings and `--dim` bindings evaluate them. Coefficients are integers; a division that does not
come out exact is not represented (the caller falls back to an opaque name). sympy would do all of this
and more, but its import would be a visible part of every small command's time and each of its operations
is slow next to these; these polynomials are all shape inference and the cost model need.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Mapping

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*|\?")  # (`?`: the unnamed dim, ANONYMOUS, in expressions: `144*?`)
_TERM = re.compile(r"\s*([+-])?\s*([^+-]+)")
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# An unknown dimension the file leaves unnamed (TF's -1 / None, an ONNX dim without dim_param).
ANONYMOUS = "?"


def bind_anonymous(dims: dict, sizes: list[int]) -> dict:
    """`dims` with the unnamed `?` bound when the given inputs agree on it. Each `?` is its own dimension, so
    inputs never have to agree (a 1x224x224x3 image fits (?, ?, ?, 3)); but when every `?` axis of the given
    arrays has one size, the graph's own `?`s (what shape inference made from those axes) are bound to it, so
    static shapes, constant clusters and bytes follow the call. Sizes that differ leave `?` unbound."""
    if sizes and len(set(sizes)) == 1 and ANONYMOUS not in dims:
        dims[ANONYMOUS] = sizes[0]
    return dims


class Sym:
    """A polynomial with integer coefficients: {monomial: coefficient}, a monomial a sorted tuple of names
    (repeated for powers; () is the constant term). Immutable; hashable; compares by value."""

    __slots__ = ("terms",)

    def __init__(self, terms: Mapping[tuple[str, ...], int] | None = None) -> None:
        self.terms = {m: c for m, c in (terms or {}).items() if c}

    @staticmethod
    def of(d) -> Sym:
        """A dimension (int, str in canonical or plain form, or Sym) as a Sym."""
        if isinstance(d, Sym):
            return d
        if isinstance(d, str):
            return parse(d)
        return Sym({(): int(d)})

    @staticmethod
    def name(n: str) -> Sym:
        return Sym({(n,): 1})

    # ---- arithmetic ----------------------------------------------------------------------------
    def __add__(self, other) -> Sym:
        o = Sym.of(other)
        terms = dict(self.terms)
        for m, c in o.terms.items():
            terms[m] = terms.get(m, 0) + c
        return Sym(terms)

    __radd__ = __add__

    def __neg__(self) -> Sym:
        return Sym({m: -c for m, c in self.terms.items()})

    def __sub__(self, other) -> Sym:
        return self + (-Sym.of(other))

    def __rsub__(self, other) -> Sym:
        return Sym.of(other) - self

    def __mul__(self, other) -> Sym:
        o = Sym.of(other)
        terms: dict[tuple[str, ...], int] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in o.terms.items():
                m = tuple(sorted(m1 + m2))
                terms[m] = terms.get(m, 0) + c1 * c2
        return Sym(terms)

    __rmul__ = __mul__

    def exact_div(self, other) -> Sym | None:
        """self / other when other is one term (c * monomial) dividing every term exactly; else None."""
        o = Sym.of(other)
        if len(o.terms) != 1:
            return None if o != self else Sym({(): 1})
        (mono, coef), = o.terms.items()
        out: dict[tuple[str, ...], int] = {}
        for m, c in self.terms.items():
            rest = list(m)
            for name in mono:
                if name not in rest:
                    return None
                rest.remove(name)
            if c % coef:
                return None
            out[tuple(rest)] = c // coef
        return Sym(out)

    # ---- queries -------------------------------------------------------------------------------
    @property
    def is_const(self) -> bool:
        return all(not m for m in self.terms)

    @property
    def const(self) -> int:
        return self.terms.get((), 0)

    def names(self) -> set[str]:
        return {n for m in self.terms for n in m}

    def evaluate(self, dims: Mapping[str, int]) -> int | None:
        """The value with every name bound, or None when one is not."""
        total = 0
        for m, c in self.terms.items():
            v = c
            for n in m:
                x = dims.get(n)
                if x is None:
                    return None
                v *= x
            total += v
        return total

    def substitute(self, dims: Mapping[str, int]) -> Sym:
        """Bind the names `dims` has; the others stay."""
        out = Sym()
        for m, c in self.terms.items():
            term = Sym({(): c})
            for n in m:
                term = term * (dims[n] if n in dims else Sym.name(n))
            out = out + term
        return out

    def min_value(self) -> int:
        """A lower bound over all bindings of the names to sizes >= 1: the value at all ones when every
        non-constant coefficient is positive (the polynomial then grows with each name), else 0."""
        if all(c > 0 for m, c in self.terms.items() if m):
            return max(sum(self.terms.values()), 0)
        return 0

    def to_dim(self):
        """An int when constant, else the canonical text."""
        return self.const if self.is_const else str(self)

    def __eq__(self, other) -> bool:
        if isinstance(other, (int, str, Sym)):
            return self.terms == Sym.of(other).terms
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self.terms.items()))

    def __str__(self) -> str:
        return format_poly(self.terms, str)

    def __repr__(self) -> str:
        return f"Sym({str(self)!r})"


def monomial_text(m: tuple[str, ...], sep: str = "*") -> str:
    """('batch', 'seq', 'seq') -> 'batch*seq^2'."""
    parts = []
    for n in sorted(set(m)):
        k = m.count(n)
        parts.append(n if k == 1 else f"{n}^{k}")
    return sep.join(parts)


def _order(m: tuple[str, ...]) -> tuple:
    return (-len(m), m)  # highest degree first, then by name: one canonical order


def format_poly(terms: Mapping[tuple[str, ...], int], coef_text, sep: str = "*") -> str:
    """Terms in canonical order, each `coef_text(c)` times its monomial; '0' when empty."""
    out = []
    for m in sorted(terms, key=_order):
        c = terms[m]
        neg = c < 0
        a = abs(c)
        if m:
            body = monomial_text(m, sep)
            text = body if a == 1 and coef_text is str else f"{coef_text(a)}{sep}{body}"
        else:
            text = coef_text(a)
        out.append(("-" if neg else "+", text))
    if not out:
        return coef_text(0)
    first = ("-" if out[0][0] == "-" else "") + out[0][1]
    joiner = "" if sep == "*" else " "
    return first + "".join(f"{joiner}{s}{joiner}{t}" for s, t in out[1:])


@lru_cache(maxsize=4096)
def parse(text: str) -> Sym:
    """Canonical text (or a plain name) back to a Sym. A name with characters outside [A-Za-z0-9_.] (a
    dimension a file spells oddly, like 'N?') is kept whole as one name."""
    s = text.strip()
    if _PLAIN.match(s) or not s:
        return Sym.name(s)
    terms: dict[tuple[str, ...], int] = {}
    pos = 0
    for mt in _TERM.finditer(s):
        if mt.start() != pos:
            return Sym.name(s)
        pos = mt.end()
        sign = -1 if mt.group(1) == "-" else 1
        coef, names = 1, []
        for factor in mt.group(2).strip().split("*"):
            factor = factor.strip()
            base, _, power = factor.partition("^")
            if base.isdigit() and not power:
                coef *= int(base)
            elif _NAME.fullmatch(base) and (not power or power.isdigit()):
                names += [base] * (int(power) if power else 1)
            else:
                return Sym.name(s)  # not our syntax: the file's own name
        m = tuple(sorted(names))
        terms[m] = terms.get(m, 0) + sign * coef
    if pos != len(s):
        return Sym.name(s)
    return Sym(terms)


def eval_dim(d, dims: Mapping[str, int]):
    """A dimension with `dims` bound: an int when everything in it is bound, else d unchanged."""
    if not isinstance(d, str):
        return d
    v = dims.get(d)
    if v is not None:
        return v
    if _PLAIN.match(d):
        return d
    v = parse(d).evaluate(dims)
    return d if v is None else v
