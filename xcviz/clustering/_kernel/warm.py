"""`python -m xcviz.clustering._kernel.warm LOCK`: compile the kernel into numba's cache, then remove LOCK.

Runs the fast pass (mark_fast) on a small graph, so every entry point is compiled for exactly the argument
types the real pass uses (first_use.compile_in_background starts it)."""
from __future__ import annotations

import os
import sys


def main(lock: str | None) -> None:
    try:
        from ...ir import Graph, Node, TensorType, Value
        from .. import ClusterOptions, find_candidates
        from ..mark_fast import mark_for_compilation

        t = TensorType((2, 2), "float32")
        nodes = [Node(name=f"n{j}", op="relu", op_type="Relu", inputs=(f"n{j - 1}" if j else "x",), outputs=[t])
                 for j in range(3)]
        graph, opts = Graph("warm", [Value("x", t)], nodes, ["n2"]), ClusterOptions()
        mark_for_compilation(graph, find_candidates(graph, opts), opts)
    finally:
        if lock and os.path.exists(lock):
            os.remove(lock)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
