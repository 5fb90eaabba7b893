"""The compiled pass's attempt log: an integer table whose rows become Attempt objects (with their reason text) when read."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .result import Attempt

# the table's columns (the kernel's state.pxd A_*): phase, src, dst, merged, code, x1, x2, path start, path length
_MERGED = 3


class AttemptLog(Sequence):
    """Attempts as a (k, 9) int32 table; items are built as Attempt objects on access, so recording 10^6
    decisions costs arrays, not objects."""

    def __init__(self, table: np.ndarray, paths: np.ndarray, columns, devices: list[str], scopes: list[str],
                 max_cluster_size, dead_text: list[str] | None = None) -> None:
        self.table, self.paths = table, paths
        # the graph's columns, for the nodes' names: read on the first message (10^6 names cost ~0.1 s)
        self._columns, self._devices, self._scopes, self._max = columns, devices, scopes, max_cluster_size
        self._dead = dead_text

    def __len__(self) -> int:
        return len(self.table)

    def _make(self, row) -> Attempt:
        from ._kernel import REFUSALS

        phase, src, dst, merged, code, x1, x2, ps, pl = (int(x) for x in row)
        if merged:
            return Attempt(phase, src, dst, True)
        path: tuple[int, ...] = ()
        c = REFUSALS[code]
        if c == "device":
            why = f"incompatible devices ({self._devices[x1]} vs {self._devices[x2]})"
        elif c == "scope":
            why = f"mismatching XLA scopes ({self._scopes[x1]} vs {self._scopes[x2]})"
        elif c == "max-size":
            why = f"merged size {x1} > max cluster size {self._max}"
        elif c == "cross-device":
            why = f"would introduce a cross-device dependency via {self._columns.column('name')[x1]}"
        elif c == "deadness":
            why = f"the two nodes have mismatching deadness: {self._dead[x1]} and {self._dead[x2]}"
        elif c == "resource":
            why = "the new cluster would break resource variable semantics"
        else:
            names = self._columns.column("name")
            path = tuple(int(p) for p in self.paths[ps:ps + pl])
            via = ", ".join(names[p] for p in path) or "a graph input"
            why = f"would create a cycle via {via}"
        return Attempt(phase, src, dst, False, why, c, path)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._make(r) for r in self.table[i]]
        return self._make(self.table[i])

    def __iter__(self):
        make = self._make
        for row in self.table.tolist():
            yield make(row)

    def refused(self, limit: int | None = None) -> list[Attempt]:
        rows = self.table[self.table[:, _MERGED] == 0]
        return [self._make(r) for r in (rows if limit is None else rows[:limit]).tolist()]

    def columns(self) -> tuple[list[int], list[int], list[bool]]:
        """src, dst and merged of every attempt, as plain lists."""
        return self.table[:, 1].tolist(), self.table[:, 2].tolist(), self.table[:, _MERGED].astype(bool).tolist()

    def merged_count(self) -> int:
        return int(self.table[:, _MERGED].sum())

    def __eq__(self, other) -> bool:
        return list(self) == list(other)

    def __repr__(self) -> str:
        return f"AttemptLog({len(self)} attempts)"
