# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The compiled JSON scanner: one pass over a graph file's bytes that checks its grammar and finds each node's fields.

`scan` validates the whole document as JSON and reads the top-level `nodes` array: per node the spans of
its name, its input references (CSR), the spans of op, device, scope, shape and dtype (json_join.intern
turns them into codes, each distinct spelling once), the compile flag, and the spans of the rare fields
(attrs, control_inputs). json_join.join then resolves every reference to a node or graph input id. Both only
ever accept: anything the generic reader (schema.read_mapping) would read differently or refuse (an unknown or repeated
key, a wrong value type, an empty name, a ':' in a name, a repeated name, a control character, bad
grammar) ends the scan with a nonzero status and the loader takes the generic way. Strings hold no
backslash (the caller checks the whole file first), so each is its bytes between quotes. Built by Cython
at install (setup.py)."""
import numpy as np

from libc.stdint cimport int8_t, int32_t, int64_t
from libc.stdlib cimport free
from libc.string cimport memcmp, memcpy

from .json_lex cimport Bytes, grow, lit_end, shape_end, str_end, str_list_end, value_end, ws

# the node fields, in json_types.Row's order (a field's number is its bit in a node's `seen` mask)
FIELDS = ("name", "op", "inputs", "control_inputs", "attrs", "device", "compile", "scope", "doc", "shape", "dtype")
cdef const char* _NAMES[11]
cdef Py_ssize_t _LENS[11]
_NAMES[0] = b"name"
_NAMES[1] = b"op"
_NAMES[2] = b"inputs"
_NAMES[3] = b"control_inputs"
_NAMES[4] = b"attrs"
_NAMES[5] = b"device"
_NAMES[6] = b"compile"
_NAMES[7] = b"scope"
_NAMES[8] = b"doc"
_NAMES[9] = b"shape"
_NAMES[10] = b"dtype"
for _i in range(11):
    _LENS[_i] = len(<bytes>_NAMES[_i])
    assert <bytes>_NAMES[_i] == FIELDS[_i].encode()
# interned fields (tables): op, device, scope, shape, dtype
T_OP, T_DEVICE, T_SCOPE, T_SHAPE, T_DTYPE = range(5)
cdef enum:
    C_OP = 0
    C_DEVICE = 1
    C_SCOPE = 2
    C_SHAPE = 3
    C_DTYPE = 4
    NO_MEMORY = -1

OK = 0


cdef struct Out:
    Py_ssize_t a, b, j  # the nodes array's span, the nodes read
    Py_ssize_t nref, nrare, cap_refs, cap_rare
    int64_t keys  # keys in attrs objects (nested ones included)
    int64_t* refs  # reference spans (start, end)
    int64_t* rare  # (node, field, start, end) of attrs / control_inputs values


cdef inline int _field(Bytes buf, Py_ssize_t s, Py_ssize_t e) noexcept nogil:
    cdef int f
    cdef Py_ssize_t size = e - s
    for f in range(11):
        if _LENS[f] == size and memcmp(buf + s, _NAMES[f], size) == 0:
            return f
    return -1


def scan(const unsigned char[::1] data, Py_ssize_t nmax):
    """(status (0: read), the nodes array's span a:b, node count, then per node: name spans, field lengths
    (T_* x node, -1 absent or null), compile (0 absent, 1 null, 2 false, 3 true), reference offsets (CSR);
    reference spans, rare spans (node, field, start, end), counts (keys in attrs, references, rare spans),
    and the starts of the interned fields (their lengths in codes, for json_join.intern). nmax: at least the
    number of nodes (the count of '"name"' in the file)."""
    nmax = max(nmax, 1)
    name_se_a = np.zeros(2 * nmax, np.int64)
    codes_a = np.full((5, nmax), -1, np.int32)
    compile_a = np.zeros(nmax, np.int8)
    in_off_a = np.zeros(nmax + 1, np.int64)
    starts_a = np.zeros((5, nmax), np.int64)
    cdef int64_t[::1] name_se = name_se_a
    cdef int32_t[:, ::1] codes = codes_a
    cdef int8_t[::1] compile_ = compile_a
    cdef int64_t[::1] in_off = in_off_a
    cdef int64_t[:, ::1] starts = starts_a
    cdef Out o
    cdef int status = 2
    o.a = o.b = -1
    o.j = o.nref = o.nrare = o.cap_refs = o.cap_rare = 0
    o.keys = 0
    o.refs = o.rare = NULL
    try:
        if data.shape[0]:
            with nogil:
                status = _scan(&data[0], data.shape[0], nmax, &name_se[0], &codes[0, 0], &compile_[0], &in_off[0],
                               &starts[0, 0], &o)
        if status == NO_MEMORY:
            raise MemoryError("the JSON scanner's reference table")
        refs, rare = _array(o.refs, 2 * o.nref), _array(o.rare, 4 * o.nrare)
    finally:
        free(o.refs)
        free(o.rare)
    counts = np.array([o.keys, o.nref, o.nrare], np.int64)
    return status, o.a, o.b, o.j, name_se_a, codes_a, compile_a, in_off_a, refs, rare, counts, starts_a


cdef object _array(int64_t* p, Py_ssize_t size):
    """A numpy copy of size int64 at p."""
    out = np.empty(size, np.int64)
    cdef int64_t[::1] view = out
    if size:
        memcpy(&view[0], p, size * sizeof(int64_t))
    return out


cdef int _scan(Bytes buf, Py_ssize_t n, Py_ssize_t nmax, int64_t* name_se, int32_t* codes, int8_t* compile_,
               int64_t* in_off, int64_t* starts, Out* o) noexcept nogil:
    cdef Py_ssize_t p, q, k, j
    cdef int f, t, seen
    cdef unsigned char c
    cdef bint null, is_nodes
    cdef int64_t scratch = 0
    p = ws(buf, n, 0)
    if p >= n or buf[p] != 123:
        return 2
    p = ws(buf, n, p + 1)
    if p < n and buf[p] == 125:
        return 3
    while True:  # the top-level members
        if p >= n or buf[p] != 34:
            return 4
        q = str_end(buf, n, p)
        if q < 0:
            return 4
        is_nodes = q - p == 7 and memcmp(buf + p + 1, b"nodes", 5) == 0
        p = ws(buf, n, q)
        if p >= n or buf[p] != 58:
            return 5
        p = ws(buf, n, p + 1)
        if not is_nodes:
            p = value_end(buf, n, p, &scratch)
            if p < 0:
                return 6
        else:
            if o.a >= 0 or p >= n or buf[p] != 91:
                return 7
            o.a = p
            p = ws(buf, n, p + 1)
            if p < n and buf[p] == 93:
                return 8
            while True:  # the nodes
                j = o.j
                if j >= nmax or p >= n or buf[p] != 123:
                    return 9
                seen = 0
                p = ws(buf, n, p + 1)
                while True:  # a node's members
                    if p >= n or buf[p] != 34:
                        return 10
                    q = str_end(buf, n, p)
                    f = -1 if q < 0 else _field(buf, p + 1, q - 1)
                    if f < 0 or (seen >> f) & 1:
                        return 11
                    seen |= 1 << f
                    p = ws(buf, n, q)
                    if p >= n or buf[p] != 58:
                        return 12
                    p = ws(buf, n, p + 1)
                    if p >= n:
                        return 12
                    c = buf[p]
                    null = c == 110
                    if null:
                        q = lit_end(buf, n, p, b"null", 4)
                    if f <= 1 or ((f == 5 or f == 7 or f == 8 or f == 10) and not null):  # a string
                        if c != 34:
                            return 13
                        q = str_end(buf, n, p)
                        if q < 0 or (f <= 1 and q - p == 2):
                            return 14
                        if f == 0:
                            for k in range(p + 1, q - 1):
                                if buf[k] == 58:  # a ':' in a name: the careful way
                                    return 15
                            name_se[2 * j] = p + 1
                            name_se[2 * j + 1] = q - 1
                        elif f != 8:
                            t = C_OP if f == 1 else C_DEVICE if f == 5 else C_SCOPE if f == 7 else C_DTYPE
                            starts[t * nmax + j] = p + 1
                            codes[t * nmax + j] = <int32_t>(q - p - 2)
                    elif null:
                        if f == 9:  # (a null shape: as the schema reads it)
                            return 17
                        if f == 6:
                            compile_[j] = 1
                    elif f == 2:
                        if c != 91:
                            return 18
                        q = str_list_end(buf, n, p, &o.refs, &o.cap_refs, &o.nref)
                        if q == -2:
                            return NO_MEMORY
                    elif f == 3 or f == 4:
                        if c != (91 if f == 3 else 123):
                            return 19
                        if f == 3:
                            q = str_list_end(buf, n, p, NULL, NULL, NULL)
                        else:
                            q = value_end(buf, n, p, &o.keys)
                        if grow(&o.rare, &o.cap_rare, 4 * o.nrare + 4) < 0:
                            return NO_MEMORY
                        o.rare[4 * o.nrare] = j
                        o.rare[4 * o.nrare + 1] = f
                        o.rare[4 * o.nrare + 2] = p
                        o.rare[4 * o.nrare + 3] = q
                        o.nrare += 1
                    elif f == 6:
                        q = lit_end(buf, n, p, b"true", 4)
                        compile_[j] = 3
                        if q < 0:
                            q = lit_end(buf, n, p, b"false", 5)
                            compile_[j] = 2
                    else:  # f == 9, a shape
                        if c != 91:
                            return 20
                        q = shape_end(buf, n, p)
                        starts[C_SHAPE * nmax + j] = p
                        codes[C_SHAPE * nmax + j] = <int32_t>(q - p)
                    if q < 0:
                        return 21
                    p = ws(buf, n, q)
                    if p < n and buf[p] == 44:
                        p = ws(buf, n, p + 1)
                        continue
                    if p < n and buf[p] == 125:
                        break
                    return 22
                if (seen & 3) != 3:  # no name or no op
                    return 23
                o.j = j + 1
                in_off[j + 1] = o.nref
                p = ws(buf, n, p + 1)
                if p < n and buf[p] == 44:
                    p = ws(buf, n, p + 1)
                    continue
                if p < n and buf[p] == 93:
                    p += 1
                    o.b = p
                    break
                return 24
        p = ws(buf, n, p)
        if p < n and buf[p] == 44:
            p = ws(buf, n, p + 1)
            continue
        if p < n and buf[p] == 125:
            p = ws(buf, n, p + 1)
            break
        return 25
    if p != n or o.a < 0:
        return 26
    return 0
