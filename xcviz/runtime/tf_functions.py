"""Bodies of TensorFlow's functional ops (While / If / calls): built once per function attribute (runtime.node runs them)."""
from __future__ import annotations

from ..ops.tf.functional import TFFunction
from .missing import preflight


def function_graph(fn: TFFunction):
    """The function as a finalized Graph, built on its first run and kept on the attribute (a While runs its
    body every iteration); refused at once when it holds ops xcviz cannot run."""
    if fn.graph is None:
        from ..loaders.tensorflow.functions import function_graph as build

        g = build(fn.fdef, fn.library, f"function {str(fn)!r}")
        preflight(g)
        fn.graph = g
    return fn.graph
