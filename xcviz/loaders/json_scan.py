"""The compiled JSON scanner: one pass over a graph file's bytes that checks its grammar and finds each node's fields.

`scan` validates the whole document as JSON and reads the top-level `nodes` array: per node the spans of
its name, its input references (CSR), and integer codes for op, device, scope, shape and dtype (each
distinct spelling once, by an FNV-1a hash over its bytes), the compile flag, and the spans of the rare
fields (attrs, control_inputs). `join` then resolves every reference to a node or graph input id by a hash
join over the names. Both only ever accept: anything the typed rows (json_rows) would read differently or
refuse (an unknown or repeated key, a wrong value type, an empty name, a ':' in a name, a repeated name, a
control character, bad grammar) ends the scan with a nonzero status and the loader takes the msgspec way.
Strings hold no backslash (the caller checks the whole file first), so each is its bytes between quotes.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import fastpath
from .json_join import find, intern, join
from .json_lex import grow, lit_end, shape_end, str_end, str_list_end, value_end, ws

fastpath.track_sources()  # (before any cached kernel below: see fastpath)

# the node fields, in json_types.Row's order (a field's number is its bit in a node's `seen` mask)
FIELDS = ("name", "op", "inputs", "control_inputs", "attrs", "device", "compile", "scope", "doc", "shape", "dtype")
_FIELD_BYTES = np.zeros((len(FIELDS), 16), np.uint8)
_FIELD_LENS = np.array([len(f) for f in FIELDS], np.int64)
for _i, _f in enumerate(FIELDS):
    _FIELD_BYTES[_i, :len(_f)] = np.frombuffer(_f.encode(), np.uint8)
# interned fields (tables): op, device, scope, shape, dtype
T_OP, T_DEVICE, T_SCOPE, T_SHAPE, T_DTYPE = range(5)

OK = 0


@njit(cache=True, nogil=True)
def _field(buf, s, e, names, lens):
    for f in range(lens.size):
        if lens[f] == e - s:
            ok = True
            for k in range(e - s):
                if buf[s + k] != names[f, k]:
                    ok = False
                    break
            if ok:
                return f
    return -1


@njit(cache=True, nogil=True)
def scan(buf, nmax, lits, names, lens):
    """(status (0: read), the nodes array's span a:b, node count, then per node: name spans, codes
    (T_* x node, -1 absent or null), compile, reference offsets (CSR); reference spans, rare spans
    (node, field, start, end), counts (keys in attrs, references, rare spans), and the starts of the
    interned fields (their lengths in codes, for `intern`). nmax: at least the number of nodes (the count of '"name"' in the file)."""
    n = buf.size
    name_se = np.zeros(2 * nmax, np.int64)
    codes = np.full((5, nmax), -1, np.int32)  # T_* per node; -1: absent or null
    compile_ = np.zeros(nmax, np.int8)  # 0 absent, 1 null, 2 false, 3 true
    in_off = np.zeros(nmax + 1, np.int64)
    refs = np.zeros(2 * nmax + 2, np.int64)
    rare = np.zeros(16, np.int64)  # (node, field, start, end) of attrs / control_inputs values
    keys = np.zeros(3, np.int64)  # keys in attrs objects (nested ones included), references, rare spans
    # the interned fields' spans (start, length in codes) for `intern` (hashing them here, between the
    # byte loops, made the scan twice as slow as hashing them in a loop of their own)
    starts = np.zeros((5, nmax), np.int64)
    nref = 0
    nrare = 0
    j = 0
    a = b = -1
    status = 1
    p = ws(buf, 0)
    if p >= n or buf[p] != 123:
        return 2, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
    p = ws(buf, p + 1)
    if p < n and buf[p] == 125:
        return 3, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
    while True:  # the top-level members
        if p >= n or buf[p] != 34:
            return 4, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
        q = str_end(buf, p)
        if q < 0:
            return 4, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
        is_nodes = q - p == 7 and buf[p + 1] == 110 and buf[p + 2] == 111 and buf[p + 3] == 100 and \
            buf[p + 4] == 101 and buf[p + 5] == 115
        p = ws(buf, q)
        if p >= n or buf[p] != 58:
            return 5, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
        p = ws(buf, p + 1)
        if not is_nodes:
            p = value_end(buf, p, np.zeros(1, np.int64), lits)
            if p < 0:
                return 6, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
        else:
            if a >= 0 or p >= n or buf[p] != 91:
                return 7, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
            a = p
            p = ws(buf, p + 1)
            if p < n and buf[p] == 93:
                return 8, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
            while True:  # the nodes
                if j >= nmax or p >= n or buf[p] != 123:
                    return 9, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                seen = 0
                p = ws(buf, p + 1)
                while True:  # a node's members
                    if p >= n or buf[p] != 34:
                        return 10, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                    q = str_end(buf, p)
                    f = -1 if q < 0 else _field(buf, p + 1, q - 1, names, lens)
                    if f < 0 or (seen >> f) & 1:
                        return 11, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                    seen |= 1 << f
                    p = ws(buf, q)
                    if p >= n or buf[p] != 58:
                        return 12, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                    p = ws(buf, p + 1)
                    if p >= n:
                        return 12, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                    c = buf[p]
                    null = c == 110
                    if null:
                        q = lit_end(buf, p, lits[2])
                    if f <= 1 or ((f == 5 or f == 7 or f == 8 or f == 10) and not null):  # a string
                        if c != 34:
                            return 13, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                        q = str_end(buf, p)
                        if q < 0 or (f <= 1 and q - p == 2):
                            return 14, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                        if f == 0:
                            for k in range(p + 1, q - 1):
                                if buf[k] == 58:  # a ':' in a name: the careful way
                                    return 15, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                            name_se[2 * j], name_se[2 * j + 1] = p + 1, q - 1
                        elif f != 8:
                            t = T_OP if f == 1 else T_DEVICE if f == 5 else T_SCOPE if f == 7 else T_DTYPE
                            starts[t, j], codes[t, j] = p + 1, q - p - 2
                    elif null:
                        if f == 9:  # (a null shape: as the typed rows read it)
                            return 17, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                        if f == 6:
                            compile_[j] = 1
                    elif f == 2:
                        if c != 91:
                            return 18, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                        q, refs, nref = str_list_end(buf, p, refs, nref)
                    elif f == 3 or f == 4:
                        if c != (91 if f == 3 else 123):
                            return 19, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                        if f == 3:
                            q, _, _ = str_list_end(buf, p, np.zeros(2, np.int64), 0)
                        else:
                            q = value_end(buf, p, keys, lits)
                        rare = grow(rare, 4 * nrare + 4)
                        rare[4 * nrare], rare[4 * nrare + 1], rare[4 * nrare + 2], rare[4 * nrare + 3] = j, f, p, q
                        nrare += 1
                    elif f == 6:
                        q = lit_end(buf, p, lits[0])
                        compile_[j] = 3
                        if q < 0:
                            q = lit_end(buf, p, lits[1])
                            compile_[j] = 2
                    else:  # f == 9, a shape
                        if c != 91:
                            return 20, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                        q = shape_end(buf, p)
                        starts[T_SHAPE, j], codes[T_SHAPE, j] = p, q - p
                    if q < 0:
                        return 21, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                    p = ws(buf, q)
                    if p < n and buf[p] == 44:
                        p = ws(buf, p + 1)
                        continue
                    if p < n and buf[p] == 125:
                        break
                    return 22, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                if seen & 3 != 3:  # no name or no op
                    return 23, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
                j += 1
                in_off[j] = nref
                p = ws(buf, p + 1)
                if p < n and buf[p] == 44:
                    p = ws(buf, p + 1)
                    continue
                if p < n and buf[p] == 93:
                    p += 1
                    b = p
                    break
                return 24, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
        p = ws(buf, p)
        if p < n and buf[p] == 44:
            p = ws(buf, p + 1)
            continue
        if p < n and buf[p] == 125:
            p = ws(buf, p + 1)
            break
        return 25, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
    if p != n or a < 0:
        return 26, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts
    keys[1], keys[2] = nref, nrare
    return OK, a, b, j, name_se, codes, compile_, in_off, refs, rare, keys, starts


# true, false, null: the literals a value may be (passed to the kernels as a tuple of arrays)
LITERALS = tuple(np.frombuffer(w, np.uint8).copy() for w in (b"true", b"false", b"null"))


ENTRIES = (scan, intern, join, find)


def warm() -> None:
    """Compile every entry point for the argument types the loader passes (json_fast.read)."""
    data = (b'{"nodes": [{"name": "a", "op": "relu", "inputs": ["x"], "control_inputs": [], "attrs": {"k": 1},'
            b' "device": "d", "compile": true, "scope": "s", "doc": "t", "shape": [2], "dtype": "float32"}]}')
    buf = np.frombuffer(data, np.uint8)
    status, a, b, n, name_se, codes, compile_, in_off, refs, rare, counts, starts = scan(
        buf, 1, LITERALS, _FIELD_BYTES, _FIELD_LENS)
    intern(buf, starts, codes, n)
    _, _, blob, off, slots = join(buf, name_se, n, np.frombuffer(b"x\0", np.uint8), np.array([0, 1], np.int64),
                                  refs[:2 * counts[1]])
    find(slots, blob, off, np.frombuffer(b"a", np.uint8))
