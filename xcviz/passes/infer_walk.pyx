# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The shape-inference walk's kernel: each node given the result its key already has, until one needs Python.

A key is (static id, arity, input type ids), hashed with splitmix64's finaliser into an open-addressing
table (HK: key hashes, -1 empty; HV: result ids) and compared in full (`keys` rows) on a hit. infer.py
drives it (see its docstring). Built by Cython at install (setup.py)."""
import numpy as np

from libc.stdint cimport int64_t, uint64_t


cdef inline int64_t _mix(int64_t h, int64_t x) noexcept nogil:
    """One step of a 64-bit hash over the key's integers (splitmix64's finaliser); never negative."""
    cdef uint64_t z = <uint64_t>h * 0x9E3779B97F4A7C15ULL + <uint64_t>x + 1
    z ^= z >> 31
    z *= 0xBF58476D1CE4E5B9ULL
    z ^= z >> 29
    return <int64_t>(z >> 1)


cdef inline int64_t _slot(const int64_t[::1] HK, int64_t h) noexcept nogil:
    cdef int64_t mask = HK.shape[0] - 1
    cdef int64_t i = h & mask
    while HK[i] != -1 and HK[i] != h:
        i = (i + 1) & mask
    return i


def key_hash(int64_t static, const int64_t[::1] tids):
    """The hash of a key: its static id and its input type ids."""
    cdef int64_t h = _mix(static, tids.shape[0])
    cdef Py_ssize_t k
    for k in range(tids.shape[0]):
        h = _mix(h, tids[k])
    return h


def find(const int64_t[::1] HK, int64_t h):
    """Slot of hash `h` in the table HK (-1 = empty), or of the empty slot ending its probe."""
    return _slot(HK, h)


def rehash(const int64_t[::1] HK, const int64_t[::1] HV, Py_ssize_t size):
    """The table in `size` slots (a power of two)."""
    NK_a = np.full(size, -1, np.int64)
    NV_a = np.full(size, -1, np.int64)
    cdef int64_t[::1] NK = NK_a, NV = NV_a
    cdef Py_ssize_t i
    cdef int64_t j
    for i in range(HK.shape[0]):
        if HK[i] != -1:
            j = _slot(NK, HK[i])
            NK[j] = HK[i]
            NV[j] = HV[i]
    return NK_a, NV_a


def walk(Py_ssize_t start, Py_ssize_t n, const int64_t[::1] static, const int64_t[::1] off, const int64_t[::1] src,
         int64_t[::1] tid, int64_t[::1] rid, const int64_t[::1] res_tid0, const unsigned char[::1] res_readc,
         const unsigned char[::1] ccap, const int64_t[:, ::1] keys, const int64_t[::1] HK, const int64_t[::1] HV):
    """From node `start`, give each node the result its key has; return the first node Python must run (or
    n). Keys are compared in full (`keys` rows: static, arity, input type ids), not by hash alone. ccap and
    res_readc: booleans as uint8."""
    cdef Py_ssize_t i
    with nogil:
        i = _walk(start, n, static, off, src, tid, rid, res_tid0, res_readc, ccap, keys, HK, HV)
    return i


cdef Py_ssize_t _walk(Py_ssize_t start, Py_ssize_t n, const int64_t[::1] static, const int64_t[::1] off,
                      const int64_t[::1] src, int64_t[::1] tid, int64_t[::1] rid, const int64_t[::1] res_tid0,
                      const unsigned char[::1] res_readc, const unsigned char[::1] ccap, const int64_t[:, ::1] keys,
                      const int64_t[::1] HK, const int64_t[::1] HV) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t s, a, b, h, j, k, r
    cdef bint has_const, differs
    for i in range(start, n):
        s = static[i]
        if s < 0:
            return i
        a, b = off[i], off[i + 1]
        h = _mix(s, b - a)
        has_const = False
        for k in range(a, b):
            j = src[k]
            if j < 0:
                return i
            h = _mix(h, tid[j])
            if ccap[j]:
                has_const = True
        r = HV[_slot(HK, h)]
        if r < 0 or keys[r, 0] != s or keys[r, 1] != b - a:
            return i
        differs = False
        for k in range(a, b):
            if keys[r, 2 + k - a] != tid[src[k]]:
                differs = True
                break
        if differs or (has_const and res_readc[r]):
            return i
        rid[i] = r
        tid[i] = res_tid0[r]
    return n
