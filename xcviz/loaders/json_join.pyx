# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The JSON scanner's hash join: distinct byte strings to integer codes, and references to node ids.

FNV-1a over the bytes, open addressing, a byte compare on every hit: no Python string is made for a
name or a reference (json_scanned decodes only the distinct values and the names, in one piece). Built by
Cython at install (setup.py)."""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memcmp

ctypedef const unsigned char* Bytes

cdef enum:
    CAP = 1 << 16  # distinct values per interned field; more goes the generic way
TABLE_CAP = CAP
cdef uint64_t FNV_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t FNV_PRIME = 0x100000001B3ULL


cdef inline uint64_t _hash(Bytes buf, int64_t s, int64_t e) noexcept nogil:
    cdef uint64_t h = FNV_OFFSET
    cdef int64_t k
    for k in range(s, e):
        h = (h ^ buf[k]) * FNV_PRIME
    return h


cdef inline bint _same(Bytes a, int64_t s1, int64_t e1, Bytes b, int64_t s2, int64_t e2) noexcept nogil:
    if e1 - s1 != e2 - s2:
        return False
    return e1 == s1 or memcmp(a + s1, b + s2, e1 - s1) == 0


cdef inline Bytes _ptr(const unsigned char[::1] a) noexcept:
    return &a[0] if a.shape[0] else NULL


def intern(const unsigned char[::1] data, const int64_t[:, ::1] starts, int32_t[:, ::1] codes, Py_ssize_t n):
    """Turn codes[t, :n] from lengths (-1: absent or null) into codes of the distinct byte strings, numbered
    in order of first appearance; (status (1: over TABLE_CAP distinct values in a field), each code's
    first span (T_* x code: start, end), how many codes each field has)."""
    cdef int64_t cap = min(n, CAP), size = 2  # (a field has at most n distinct values: small files, small tables)
    while size < 2 * cap:
        size *= 2
    slots_a = np.full((5, size), -1, np.int32)
    fs_a = np.zeros((5, cap), np.int64)
    fe_a = np.zeros((5, cap), np.int64)
    count_a = np.zeros(5, np.int64)
    cdef int32_t[:, ::1] slots = slots_a
    cdef int64_t[:, ::1] fs = fs_a, fe = fe_a
    cdef int64_t[::1] count = count_a
    cdef Bytes buf = _ptr(data)
    cdef int t, status = 0
    cdef int64_t ln, s, last_s, last_e, last_k, k, c, h, mask = size - 1
    cdef Py_ssize_t j
    with nogil:
        for t in range(5):
            last_s, last_e, last_k = 0, -1, -1  # (length -1: matches nothing, not even "")
            for j in range(n):
                ln = codes[t, j]
                if ln < 0:
                    continue
                s = starts[t, j]
                # (neighbours mostly share a shape and dtype: a compare in cache beats a probe)
                if _same(buf, last_s, last_e, buf, s, s + ln):
                    codes[t, j] = <int32_t>last_k
                    continue
                h = <int64_t>(_hash(buf, s, s + ln) & <uint64_t>mask)
                while True:
                    c = slots[t, h]
                    if c < 0:
                        c = count[t]
                        if c >= cap:
                            status = 1
                            break
                        slots[t, h] = <int32_t>c
                        fs[t, c], fe[t, c] = s, s + ln
                        count[t] = c + 1
                        break
                    if _same(buf, fs[t, c], fe[t, c], buf, s, s + ln):
                        break
                    h = (h + 1) & mask
                if status:
                    break
                codes[t, j] = <int32_t>c
                last_s, last_e, last_k = s, s + ln, c
            if status:
                break
    return status, fs_a, fe_a, count_a


cdef inline void _name(int64_t k, int64_t n, Bytes buf, const int64_t* name_se, Bytes ibuf, const int64_t* in_se,
                       Bytes* b, int64_t* s, int64_t* e) noexcept nogil:
    """Entry k of the join's table: the bytes, start and end of node k's name, or of graph input k - n's."""
    if k < n:
        b[0], s[0], e[0] = buf, name_se[2 * k], name_se[2 * k + 1]
    else:
        b[0], s[0], e[0] = ibuf, in_se[2 * (k - n)], in_se[2 * (k - n) + 1]


def join(const unsigned char[::1] data, const int64_t[::1] name_se, Py_ssize_t n, const unsigned char[::1] idata,
         const int64_t[::1] in_se, const int64_t[::1] refs):
    """(status, src per reference: node id, n + i for graph input i, -1 for anything else; the names joined
    by newlines, where each starts in that blob (n + 1 offsets), and the table, for `find`). A repeated node
    name, a repeated graph input or one named as a node: status 1 (the loader's checks say which). Each slot
    holds an entry's id + 1 and 32 more bits of its hash beside it (one cache line): most probes of another
    name end there, without reading its bytes."""
    cdef int64_t m = in_se.shape[0] // 2, size = 1, total = 0, k, r, s, e, s2, e2, h, w, i, nr = refs.shape[0] // 2
    cdef Bytes buf = _ptr(data), ibuf = _ptr(idata), b, b2
    cdef const int64_t* nse = &name_se[0] if name_se.shape[0] else NULL
    cdef const int64_t* ise = &in_se[0] if in_se.shape[0] else NULL
    cdef uint64_t hv, mask
    cdef int32_t tag
    cdef bint repeated = False
    while size < 2 * (n + m) + 2:
        size *= 2
    mask = <uint64_t>(size - 1)
    slots_a = np.zeros(2 * size, np.int32)
    src_a = np.full(nr, -1, np.int64)
    cdef int32_t[::1] slots = slots_a
    cdef int64_t[::1] src = src_a
    with nogil:
        for k in range(n + m):
            _name(k, n, buf, nse, ibuf, ise, &b, &s, &e)
            total += e - s + 1
            hv = _hash(b, s, e)
            h, tag = <int64_t>(hv & mask), <int32_t>(hv >> 33)
            while slots[2 * h]:
                if slots[2 * h + 1] == tag:
                    _name(slots[2 * h] - 1, n, buf, nse, ibuf, ise, &b2, &s2, &e2)
                    if _same(b2, s2, e2, b, s, e):
                        repeated = True
                        break
                h = (h + 1) & <int64_t>mask
            if repeated:
                break
            slots[2 * h], slots[2 * h + 1] = <int32_t>(k + 1), tag
        if not repeated:
            for r in range(nr):
                s, e = refs[2 * r], refs[2 * r + 1]
                hv = _hash(buf, s, e)
                h, tag = <int64_t>(hv & mask), <int32_t>(hv >> 33)
                while slots[2 * h]:
                    if slots[2 * h + 1] == tag:
                        k = slots[2 * h] - 1
                        _name(k, n, buf, nse, ibuf, ise, &b2, &s2, &e2)
                        if _same(b2, s2, e2, buf, s, e):
                            src[r] = k
                            break
                    h = (h + 1) & <int64_t>mask
    if repeated:
        return 1, np.zeros(0, np.int64), np.zeros(0, np.uint8), np.zeros(0, np.int64), slots_a
    total -= m  # (the blob holds the node names only)
    for k in range(n, n + m):
        total -= in_se[2 * (k - n) + 1] - in_se[2 * (k - n)]
    blob_a = np.empty(max(total - 1, 0), np.uint8)
    off_a = np.zeros(n + 1, np.int64)
    cdef unsigned char[::1] blob = blob_a
    cdef int64_t[::1] off = off_a
    w = 0
    with nogil:
        for i in range(n):
            if i:
                blob[w] = 10
                w += 1
            off[i] = w
            for k in range(name_se[2 * i], name_se[2 * i + 1]):
                blob[w] = buf[k]
                w += 1
        off[n] = w + 1
    return 0, src_a, blob_a, off_a, slots_a


def find(const int32_t[::1] slots, const unsigned char[::1] blob, const int64_t[::1] off,
         const unsigned char[::1] key):
    """The node named by the bytes `key` (a look-up in join's table after the file is gone: the names are
    compared in the blob), or -1."""
    cdef int64_t n = off.shape[0] - 1, k, h, size = key.shape[0]
    cdef uint64_t mask = <uint64_t>(slots.shape[0] // 2 - 1)
    cdef Bytes kp = _ptr(key), bp = _ptr(blob)
    cdef uint64_t hv = _hash(kp, 0, size)
    cdef int32_t tag = <int32_t>(hv >> 33)
    h = <int64_t>(hv & mask)
    while slots[2 * h]:
        k = slots[2 * h] - 1
        if slots[2 * h + 1] == tag and k < n and _same(bp, off[k], off[k + 1] - 1, kp, 0, size):
            return k
        h = (h + 1) & <int64_t>mask
    return -1
