"""The JSON scanner's hash join: distinct byte strings to integer codes, and references to node ids.

FNV-1a over the bytes, open addressing, a byte compare on every hit: no Python string is made for a
name or a reference (json_fast decodes only the distinct values and the names, in one piece)."""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import fastpath

fastpath.track_sources()  # (before any cached kernel below: see fastpath)

_TABLE_BITS = 17
TABLE_CAP = 1 << 16  # distinct values per interned field; more goes the msgspec way
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, nogil=True)
def _hash(buf, s, e):
    h = _FNV_OFFSET
    for k in range(s, e):
        h = (h ^ np.uint64(buf[k])) * _FNV_PRIME
    return h


@njit(cache=True, nogil=True)
def _same(a, s1, e1, b, s2, e2):
    if e1 - s1 != e2 - s2:
        return False
    for k in range(e1 - s1):
        if a[s1 + k] != b[s2 + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def _intern(buf, s, e, t, slots, fs, fe, count):
    """The code of the bytes buf[s:e] in table t (new ones numbered in order of first appearance), -1 when full."""
    mask = slots.shape[1] - 1
    h = np.int64(_hash(buf, s, e) & np.uint64(mask))
    while True:
        c = slots[t, h]
        if c < 0:
            c = count[t]
            if c >= fs.shape[1]:
                return -1
            slots[t, h] = c
            fs[t, c], fe[t, c] = s, e
            count[t] = c + 1
            return c
        if _same(buf, fs[t, c], fe[t, c], buf, s, e):
            return c
        h = (h + 1) & mask


@njit(cache=True, nogil=True)
def intern(buf, starts, codes, n):
    """Turn codes[t, :n] from lengths (-1: absent or null) into codes of the distinct byte strings, numbered
    in order of first appearance; (status (1: over TABLE_CAP distinct values in a field), each code's
    first span (T_* x code x (start, end)), how many codes each field has)."""
    slots = np.full((5, 1 << _TABLE_BITS), -1, np.int32)
    fs = np.zeros((5, TABLE_CAP), np.int64)
    fe = np.zeros((5, TABLE_CAP), np.int64)
    count = np.zeros(5, np.int64)
    for t in range(5):
        last_s, last_e, last_k = 0, -1, -1  # (length -1: matches nothing, not even "")
        for j in range(n):
            ln = codes[t, j]
            if ln >= 0:
                s = starts[t, j]
                # (neighbours mostly share a shape and dtype: a compare in cache beats a probe)
                if _same(buf, last_s, last_e, buf, s, s + ln):
                    codes[t, j] = last_k
                    continue
                k = _intern(buf, s, s + ln, t, slots, fs, fe, count)
                if k < 0:
                    return 1, fs, fe, count
                codes[t, j] = k
                last_s, last_e, last_k = s, s + ln, k
    return 0, fs, fe, count


@njit(cache=True, nogil=True)
def _name(k, n, buf, name_se, ibuf, in_se):
    """Entry k of the join's table: (bytes, start, end) of node k's name, or of graph input k - n's."""
    if k < n:
        return buf, name_se[2 * k], name_se[2 * k + 1]
    return ibuf, in_se[2 * (k - n)], in_se[2 * (k - n) + 1]


@njit(cache=True, nogil=True)
def join(buf, name_se, n, ibuf, in_se, refs):
    """(status, src per reference: node id, n + i for graph input i, -1 for anything else; the names joined
    by newlines, where each starts in that blob (n + 1 offsets), and the table, for `find`). A repeated node
    name, a repeated graph input or one named as a node: status 1 (the loader's checks say which). Each slot
    holds an entry's id + 1 and 32 more bits of its hash beside it (one cache line): most probes of another
    name end there, without reading its bytes."""
    m = in_se.size // 2
    size = 1
    while size < 2 * (n + m) + 2:
        size *= 2
    mask = np.uint64(size - 1)
    slots = np.zeros(2 * size, np.int32)
    total = 0
    for k in range(n + m):
        b, s, e = _name(k, n, buf, name_se, ibuf, in_se)
        total += e - s + 1
        hv = _hash(b, s, e)
        h, tag = np.int64(hv & mask), np.int32(hv >> np.uint64(33))
        while slots[2 * h]:
            if slots[2 * h + 1] == tag:
                b2, s2, e2 = _name(slots[2 * h] - 1, n, buf, name_se, ibuf, in_se)
                if _same(b2, s2, e2, b, s, e):
                    return 1, np.zeros(0, np.int64), np.zeros(0, np.uint8), np.zeros(0, np.int64), slots
            h = (h + 1) & np.int64(mask)
        slots[2 * h], slots[2 * h + 1] = k + 1, tag
    src = np.full(refs.size // 2, -1, np.int64)
    for r in range(refs.size // 2):
        s, e = refs[2 * r], refs[2 * r + 1]
        hv = _hash(buf, s, e)
        h, tag = np.int64(hv & mask), np.int32(hv >> np.uint64(33))
        while slots[2 * h]:
            if slots[2 * h + 1] == tag:
                k = slots[2 * h] - 1
                b2, s2, e2 = _name(k, n, buf, name_se, ibuf, in_se)
                if _same(b2, s2, e2, buf, s, e):
                    src[r] = k
                    break
            h = (h + 1) & np.int64(mask)
    total -= m  # (the blob holds the node names only)
    for k in range(n, n + m):
        total -= in_se[2 * (k - n) + 1] - in_se[2 * (k - n)]
    blob = np.empty(max(total - 1, 0), np.uint8)
    off = np.zeros(n + 1, np.int64)
    w = 0
    for i in range(n):
        if i:
            blob[w] = 10
            w += 1
        off[i] = w
        for k in range(name_se[2 * i], name_se[2 * i + 1]):
            blob[w] = buf[k]
            w += 1
    off[n] = w + 1
    return 0, src, blob, off, slots


@njit(cache=True, nogil=True)
def find(slots, blob, off, key):
    """The node named by the bytes `key` (a look-up in join's table after the file is gone: the names are
    compared in the blob), or -1."""
    n = off.size - 1
    mask = np.uint64(slots.size // 2 - 1)
    hv = _hash(key, 0, key.size)
    h, tag = np.int64(hv & mask), np.int32(hv >> np.uint64(33))
    while slots[2 * h]:
        k = slots[2 * h] - 1
        if slots[2 * h + 1] == tag and k < n and _same(blob, off[k], off[k + 1] - 1, key, 0, key.size):
            return k
        h = (h + 1) & np.int64(mask)
    return -1
