"""How the cost model adds numbers: ONE method for floats, and exact integers.

Floats (times) are added left to right from 0, in node order or in a cluster's member order, as a Python
loop `total += t` adds them: np.sum and np.add.reduceat add pairwise, whose results differ in the last bits,
so they are not used for floats. Integers (FLOPs, bytes) are exact: int64 where no sum can overflow,
Python ints otherwise; their order does not matter."""
from __future__ import annotations

import numpy as np


LONG = 512              # clusters longer than this sum their times one by one (see seq_sums)


def exact_ints(values: list, count: int) -> np.ndarray:
    """int64 when no sum of `count` of these can overflow, else Python ints (object): exact either way."""
    if all(type(v) is int for v in values) and max(map(abs, values), default=0) * max(count, 1) < 2**62:
        return np.array(values, np.int64)
    return np.array(values + [None], object)[:-1]  # the None keeps numpy from reading tuples as rows


def starts(lengths: np.ndarray) -> np.ndarray:
    """Where each run begins, for runs of the given int64 lengths back to back (an exclusive running sum, in
    one pass: no subtraction after the sum)."""
    out = np.empty(len(lengths) + 1, np.int64)
    out[0] = 0
    np.cumsum(lengths, out=out[1:])
    return out[:-1]


def seq_sums(values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per run of consecutive values (runs of the given sizes): their sum added left to right from 0, so
    floats match a Python loop to the bit (np.add.reduceat adds pairwise). Step j adds the j-th value of
    every run at once: runs longest first, so the runs still going are a prefix (and each step reuses the
    same buffers: no array made per step)."""
    out = np.zeros(len(sizes))
    at = starts(sizes)
    for k in np.flatnonzero(sizes > LONG).tolist():
        out[k] = seq_total(values[at[k]:at[k] + sizes[k]])
    short = np.flatnonzero(sizes <= LONG)
    order = short[np.argsort(-sizes[short], kind="stable")]
    left = sizes[order]
    pos = at[order]   # each run's next value
    acc, buf = np.zeros(len(order)), np.empty(len(order))
    # going[j]: the runs longer than j
    for m in np.searchsorted(-left, -np.arange(int(left[0]) if len(left) else 0)).tolist():
        np.take(values, pos[:m], out=buf[:m])
        acc[:m] += buf[:m]
        pos[:m] += 1
    out[order] = acc
    return out


def seq_total(values: np.ndarray):
    """The sum of floats added left to right from 0, as a Python loop adds them (np.cumsum is sequential;
    np.sum is pairwise); 0 (an int) when there are none, as before."""
    # (from the first value rather than from 0.0: the same sum, but for the sign of a zero, which + 0.0 sets
    # as a start from 0.0 would have; no copy of the values made to put a 0.0 first)
    return float(np.cumsum(values)[-1] + 0.0) if len(values) else 0


def run_totals(values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Sums of exact integers (int64 or Python ints) over runs of consecutive values of the given sizes."""
    ends = np.cumsum(np.concatenate(([0], values)))  # exact: integers, and int64 only where it cannot overflow
    at = np.cumsum(sizes)
    return ends[at] - ends[at - sizes]


def seg_total(values: np.ndarray, seg: np.ndarray, nc: int) -> np.ndarray:
    """Sums of exact integers (int64 or Python ints) per segment id."""
    out = np.zeros(nc, values.dtype) if values.dtype != object else np.array([0] * nc + [None], object)[:-1]
    np.add.at(out, seg, values)
    return out
