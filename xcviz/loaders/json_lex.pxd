# cython: language_level=3
"""The JSON scanner's grammar: readers of blanks, strings, numbers, literals and whole values over a file's bytes.

Inline C functions, compiled into json_scan (cimport). Each takes the bytes (a pointer and their length) and
a position, and returns the position after what it read, or -1 when the bytes there are not what JSON (as
json_scan accepts it) allows. Strings may hold no backslash and no control character: the scanner leaves
files with escapes to msgspec."""
from libc.stdint cimport int64_t
from libc.stdlib cimport realloc

cdef enum:
    MAX_DEPTH = 256  # containers open at once in one value; deeper goes the generic way

ctypedef const unsigned char* Bytes


cdef inline Py_ssize_t ws(Bytes buf, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    cdef unsigned char c
    while p < n:
        c = buf[p]
        if c != 32 and c != 10 and c != 13 and c != 9:
            break
        p += 1
    return p


cdef inline Py_ssize_t str_end(Bytes buf, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """buf[p] is '"': the position after the closing quote, or -1 (a control character, a backslash, the end)."""
    cdef unsigned char c
    p += 1
    while p < n:
        c = buf[p]
        if c == 34:
            return p + 1
        if c < 32 or c == 92:
            return -1
        p += 1
    return -1


cdef inline Py_ssize_t member_key(Bytes buf, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """An object member's key and its ':' from p (at a '"'): the position of its value, or -1."""
    if p >= n or buf[p] != 34:
        return -1
    p = str_end(buf, n, p)
    if p < 0:
        return -1
    p = ws(buf, n, p)
    if p >= n or buf[p] != 58:
        return -1
    return ws(buf, n, p + 1)


cdef inline Py_ssize_t num_end(Bytes buf, Py_ssize_t n, Py_ssize_t p, int* plain) noexcept nogil:
    """A JSON number from p: its end (-1 if invalid); *plain 1 if it is an integer literal of at most 18 digits."""
    cdef Py_ssize_t q = p, d0, digits, s
    plain[0] = 0
    if q < n and buf[q] == 45:
        q += 1
    if q >= n:
        return -1
    d0 = q
    if buf[q] == 48:
        q += 1
    elif 49 <= buf[q] <= 57:
        while q < n and 48 <= buf[q] <= 57:
            q += 1
    else:
        return -1
    digits = q - d0
    plain[0] = 1
    if q < n and buf[q] == 46:
        plain[0] = 0
        q += 1
        s = q
        while q < n and 48 <= buf[q] <= 57:
            q += 1
        if q == s:
            return -1
    if q < n and (buf[q] == 101 or buf[q] == 69):
        plain[0] = 0
        q += 1
        if q < n and (buf[q] == 43 or buf[q] == 45):
            q += 1
        s = q
        while q < n and 48 <= buf[q] <= 57:
            q += 1
        if q == s:
            return -1
    if digits > 18:
        plain[0] = 0
    return q


cdef inline Py_ssize_t lit_end(Bytes buf, Py_ssize_t n, Py_ssize_t p, const char* word, Py_ssize_t wl) noexcept nogil:
    cdef Py_ssize_t k
    if p + wl > n:
        return -1
    for k in range(wl):
        if buf[p + k] != <unsigned char>word[k]:
            return -1
    return p + wl


cdef inline Py_ssize_t any_lit_end(Bytes buf, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """true, false or null from p: the end, or -1."""
    cdef Py_ssize_t q = lit_end(buf, n, p, b"true", 4)
    if q < 0:
        q = lit_end(buf, n, p, b"false", 5)
    if q < 0:
        q = lit_end(buf, n, p, b"null", 4)
    return q


cdef inline Py_ssize_t value_end(Bytes buf, Py_ssize_t n, Py_ssize_t p, int64_t* keys) noexcept nogil:
    """Any JSON value from p (a non-blank byte): the position after it, or -1. Adds the keys of every object
    in it to keys[0]. Iterative (a stack of open containers, at most MAX_DEPTH deep)."""
    cdef unsigned char stack[MAX_DEPTH]  # 1: object, 2: array
    cdef int depth = 0, plain
    cdef unsigned char c, kind
    cdef bint closed
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
            p = ws(buf, n, p + 1)
            if p >= n:
                return -1
            if buf[p] == (125 if c == 123 else 93):
                depth -= 1
                p += 1
                closed = True
            elif c == 123:
                p = member_key(buf, n, p)
                if p < 0:
                    return -1
                keys[0] += 1
                continue
            else:
                continue
        elif c == 34:
            p = str_end(buf, n, p)
            if p < 0:
                return -1
            closed = True
        elif c == 45 or 48 <= c <= 57:
            p = num_end(buf, n, p, &plain)
            if p < 0:
                return -1
            closed = True
        else:
            p = any_lit_end(buf, n, p)
            if p < 0:
                return -1
            closed = True
        # after a value: close containers, or go on to the next member
        while closed:
            if depth == 0:
                return p
            p = ws(buf, n, p)
            if p >= n:
                return -1
            c = buf[p]
            kind = stack[depth - 1]
            if c == 44:  # ,
                p = ws(buf, n, p + 1)
                if kind == 1:
                    p = member_key(buf, n, p)
                    if p < 0:
                        return -1
                    keys[0] += 1
                closed = False
            elif (kind == 1 and c == 125) or (kind == 2 and c == 93):
                depth -= 1
                p += 1
            else:
                return -1


cdef inline int grow(int64_t** a, Py_ssize_t* cap, Py_ssize_t need) noexcept nogil:
    """Make room for `need` entries in the malloc'd array *a (doubling); 0, or -1 when out of memory."""
    cdef Py_ssize_t size
    cdef int64_t* b
    if need <= cap[0]:
        return 0
    size = 2 * cap[0] if 2 * cap[0] > need else need
    b = <int64_t*>realloc(a[0], size * sizeof(int64_t))
    if b == NULL:
        return -1
    a[0], cap[0] = b, size
    return 0


cdef inline Py_ssize_t str_list_end(Bytes buf, Py_ssize_t n, Py_ssize_t p, int64_t** out, Py_ssize_t* cap,
                                    Py_ssize_t* m) noexcept nogil:
    """An array of strings from p ('['): its end, with the strings' inner spans appended to *out (pairs from
    index 2 * *m, grown as needed; none kept where out is NULL); -1 when it is something else, -2 out of memory."""
    cdef Py_ssize_t q
    p = ws(buf, n, p + 1)
    if p < n and buf[p] == 93:
        return p + 1
    while True:
        if p >= n or buf[p] != 34:
            return -1
        q = str_end(buf, n, p)
        if q < 0:
            return -1
        if out != NULL:
            if grow(out, cap, 2 * m[0] + 2) < 0:
                return -2
            out[0][2 * m[0]] = p + 1
            out[0][2 * m[0] + 1] = q - 1
            m[0] += 1
        p = ws(buf, n, q)
        if p >= n:
            return -1
        if buf[p] == 93:
            return p + 1
        if buf[p] != 44:
            return -1
        p = ws(buf, n, p + 1)


cdef inline Py_ssize_t shape_end(Bytes buf, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """A shape from p ('['): integer literals and strings only; the end, or -1."""
    cdef int plain
    p = ws(buf, n, p + 1)
    if p < n and buf[p] == 93:
        return p + 1
    while True:
        if p >= n:
            return -1
        if buf[p] == 34:
            p = str_end(buf, n, p)
        else:
            p = num_end(buf, n, p, &plain)
            if p >= 0 and plain == 0:
                return -1
        if p < 0:
            return -1
        p = ws(buf, n, p)
        if p >= n:
            return -1
        if buf[p] == 93:
            return p + 1
        if buf[p] != 44:
            return -1
        p = ws(buf, n, p + 1)
