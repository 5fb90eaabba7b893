"""Bodies of TensorFlow's functional ops (While / If / calls): built once per function attribute, interpreted node by node."""
from __future__ import annotations

from ..ops.tf.functional import TFFunction, set_tf_runner
from .missing import preflight
from .node import run_graph_nodes


def function_graph(fn: TFFunction):
    """The function as a finalized Graph, built on its first run and kept on the attribute (a While runs its
    body every iteration); refused at once when it holds ops xcviz cannot run."""
    if fn.graph is None:
        from ..loaders.tensorflow.functions import function_graph as build

        g = build(fn.fdef, fn.library, f"function {str(fn)!r}")
        preflight(g)
        fn.graph = g
    return fn.graph


def run_function(fn: TFFunction, args: list, use_jax: bool = False) -> list:
    """Run a library function on its arguments; its results in signature order. With use_jax the values may be
    tracers and each node runs its JAX lowering (concrete ones fold natively)."""
    g = function_graph(fn)
    if len(args) != len(g.inputs):
        from ..ops.arrays import Unsupported

        raise Unsupported(f"function {str(fn)!r} takes {len(g.inputs)} arguments, the call gives {len(args)}")
    env: dict = {v.name: a for v, a in zip(g.inputs, args)}
    return run_graph_nodes(g, env, use_jax)


set_tf_runner(run_function)
