"""Bodies of TensorFlow's functional ops (While / If / calls): built once per function attribute (runtime.node runs them)."""
from __future__ import annotations

from ..ir import TFFunction
from .missing import preflight


def function_graph(fn: TFFunction):
    """The function as a finalized Graph, built on its first run and kept in the function's run state (a While
    runs its body every iteration); refused at once when it holds ops xcviz cannot run."""
    state = fn.run_state
    if "graph" not in state:
        from ..loaders.tensorflow.functions import function_graph as build

        g = build(fn.fdef, fn.library, f"function {fn.name!r}")
        preflight(g)
        state["graph"] = g
    return state["graph"]
