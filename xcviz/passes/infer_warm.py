"""`python -m xcviz.passes.infer_warm LOCK`: compile the shape-inference walk into numba's cache, then remove LOCK.

Runs infer_fast on a small graph, so every entry point is compiled for exactly the argument types the real
pass uses (infer_fast.worth_compiling starts it)."""
from __future__ import annotations

import os
import sys


def main(lock: str | None) -> None:
    try:
        import numpy as np

        from ..ir import Graph, Node, TensorType, Value
        from ..ir.columns import NodeColumns
        from . import infer_fast

        t = TensorType((2, 2), "float32")
        nodes = [Node(name=f"n{j}", op="relu", op_type="relu", inputs=(f"n{j - 1}" if j else "x",)) for j in range(3)]
        graph = Graph("warm", [Value("x", t)], nodes, ["n2"])
        infer_fast.infer_shapes_fast(graph, [1] * len(nodes), NodeColumns(graph))
        empty = np.full(4, -1, np.int64)
        infer_fast._rehash(empty, empty.copy(), 8)  # (only big graphs with many distinct keys reach it)
    finally:
        if lock and os.path.exists(lock):
            os.remove(lock)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
