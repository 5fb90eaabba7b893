"""The JSON scanner's grammar: compiled readers of blanks, strings, numbers, literals and whole values over a file's bytes.

Each takes the bytes (a uint8 array) and a position, and returns the position after what it read, or -1
when the bytes there are not what JSON (as json_scan accepts it) allows. Strings may hold no backslash
and no control character: the scanner leaves files with escapes to msgspec."""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import fastpath

fastpath.track_sources()  # (before any cached kernel below: see fastpath)

MAX_DEPTH = 256  # containers open at once in one value; deeper goes the msgspec way


@njit(cache=True, nogil=True)
def ws(buf, p):
    n = buf.size
    while p < n:
        c = buf[p]
        if c != 32 and c != 10 and c != 13 and c != 9:
            break
        p += 1
    return p


@njit(cache=True, nogil=True)
def str_end(buf, p):
    """buf[p] is '"': the position after the closing quote, or -1 (a control character, a backslash, the end)."""
    n = buf.size
    p += 1
    while p < n:
        c = buf[p]
        if c == 34:
            return p + 1
        if c < 32 or c == 92:
            return -1
        p += 1
    return -1


@njit(cache=True, nogil=True)
def member_key(buf, p):
    """An object member's key and its ':' from p (at a '"'): the position of its value, or -1."""
    n = buf.size
    if p >= n or buf[p] != 34:
        return -1
    p = str_end(buf, p)
    if p < 0:
        return -1
    p = ws(buf, p)
    if p >= n or buf[p] != 58:
        return -1
    return ws(buf, p + 1)


@njit(cache=True, nogil=True)
def num_end(buf, p):
    """A JSON number from p: (end, 1 if it is an integer literal of at most 18 digits else 0), end -1 if invalid."""
    n = buf.size
    q = p
    if q < n and buf[q] == 45:
        q += 1
    if q >= n:
        return -1, 0
    d0 = q
    if buf[q] == 48:
        q += 1
    elif 49 <= buf[q] <= 57:
        while q < n and 48 <= buf[q] <= 57:
            q += 1
    else:
        return -1, 0
    digits = q - d0
    plain = 1
    if q < n and buf[q] == 46:
        plain = 0
        q += 1
        s = q
        while q < n and 48 <= buf[q] <= 57:
            q += 1
        if q == s:
            return -1, 0
    if q < n and (buf[q] == 101 or buf[q] == 69):
        plain = 0
        q += 1
        if q < n and (buf[q] == 43 or buf[q] == 45):
            q += 1
        s = q
        while q < n and 48 <= buf[q] <= 57:
            q += 1
        if q == s:
            return -1, 0
    if digits > 18:
        plain = 0
    return q, plain


@njit(cache=True, nogil=True)
def lit_end(buf, p, word):
    n = buf.size
    if p + word.size > n:
        return -1
    for k in range(word.size):
        if buf[p + k] != word[k]:
            return -1
    return p + word.size


@njit(cache=True, nogil=True)
def value_end(buf, p, keys, lits):
    """Any JSON value from p (a non-blank byte): the position after it, or -1. Adds the keys of every object
    in it to keys[0]. Iterative (a stack of open containers, at most MAX_DEPTH deep)."""
    n = buf.size
    stack = np.zeros(MAX_DEPTH, np.uint8)  # 1: object, 2: array
    depth = 0
    while True:
        # a value starts at p
        if p >= n:
            return -1
        c = buf[p]
        closed = False
        if c == 123 or c == 91:  # { or [
            if depth == MAX_DEPTH:
                return -1
            stack[depth] = 1 if c == 123 else 2
            depth += 1
            p = ws(buf, p + 1)
            if p >= n:
                return -1
            if buf[p] == (125 if c == 123 else 93):
                depth -= 1
                p += 1
                closed = True
            elif c == 123:
                p = member_key(buf, p)
                if p < 0:
                    return -1
                keys[0] += 1
                continue
            else:
                continue
        elif c == 34:
            p = str_end(buf, p)
            if p < 0:
                return -1
            closed = True
        elif c == 45 or 48 <= c <= 57:
            p, _ = num_end(buf, p)
            if p < 0:
                return -1
            closed = True
        else:
            q = lit_end(buf, p, lits[0])
            if q < 0:
                q = lit_end(buf, p, lits[1])
            if q < 0:
                q = lit_end(buf, p, lits[2])
            if q < 0:
                return -1
            p = q
            closed = True
        # after a value: close containers, or go on to the next member
        while closed:
            if depth == 0:
                return p
            p = ws(buf, p)
            if p >= n:
                return -1
            c = buf[p]
            kind = stack[depth - 1]
            if c == 44:  # ,
                p = ws(buf, p + 1)
                if kind == 1:
                    p = member_key(buf, p)
                    if p < 0:
                        return -1
                    keys[0] += 1
                closed = False
            elif (kind == 1 and c == 125) or (kind == 2 and c == 93):
                depth -= 1
                p += 1
            else:
                return -1


@njit(cache=True, nogil=True)
def grow(a, need):
    if need <= a.size:
        return a
    b = np.empty(max(need, 2 * a.size), a.dtype)
    b[:a.size] = a
    return b


@njit(cache=True, nogil=True)
def str_list_end(buf, p, out, m):
    """An array of strings from p ('['): (end, entries) with the strings' inner spans appended to out
    (pairs from index 2*m, grown as needed); end -1 when it is something else."""
    n = buf.size
    p = ws(buf, p + 1)
    if p < n and buf[p] == 93:
        return p + 1, out, m
    while True:
        if p >= n or buf[p] != 34:
            return -1, out, m
        q = str_end(buf, p)
        if q < 0:
            return -1, out, m
        out = grow(out, 2 * m + 2)
        out[2 * m], out[2 * m + 1] = p + 1, q - 1
        m += 1
        p = ws(buf, q)
        if p >= n:
            return -1, out, m
        if buf[p] == 93:
            return p + 1, out, m
        if buf[p] != 44:
            return -1, out, m
        p = ws(buf, p + 1)


@njit(cache=True, nogil=True)
def shape_end(buf, p):
    """A shape from p ('['): integer literals and strings only; the end, or -1."""
    n = buf.size
    p = ws(buf, p + 1)
    if p < n and buf[p] == 93:
        return p + 1
    while True:
        if p >= n:
            return -1
        if buf[p] == 34:
            p = str_end(buf, p)
        else:
            p, plain = num_end(buf, p)
            if plain == 0:
                return -1
        if p < 0:
            return -1
        p = ws(buf, p)
        if p >= n:
            return -1
        if buf[p] == 93:
            return p + 1
        if buf[p] != 44:
            return -1
        p = ws(buf, p + 1)
