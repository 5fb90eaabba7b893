"""MarkForCompilationPass over integer ids, compiled ahead of time (Cython, built by `pip install`): mark_reference.py's steps.

Node ids are ints (SOURCE, SINK, the graph inputs, the graph's nodes, then TF's frame nodes); each node's
successor and predecessor sets are insertion-ordered slices of one int32 pool (sets.pxd); the cycle graph
keeps a Pearce-Kelly topological order (order.pxd); cycle_graph.pyx writes the graph before contraction and
phase.pyx runs the pass over the state of state.pxd. Every loop mirrors the reference line by line; the
equivalence tests hold them together.
"""
try:
    from .cycle_graph import CycleGraph, HashTable, build, cycle_edges, graph_edges
    from .phase import ATTEMPT_COLUMNS, REFUSALS, final_groups, run_pass
except ImportError as e:  # a source tree nobody installed: say how to build it rather than a bare ImportError
    raise ImportError(f"xcviz's compiled clustering kernel is not built ({e}): run `pip install -e .` (or "
                      "`python setup.py build_ext --inplace`) in the source tree; it needs a C compiler") from e

__all__ = ["CycleGraph", "HashTable", "build", "cycle_edges", "graph_edges", "final_groups", "run_pass",
           "ATTEMPT_COLUMNS", "REFUSALS"]
