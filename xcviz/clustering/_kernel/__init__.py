"""Compiled (numba, cached) MarkForCompilationPass over integer ids: the same steps as mark_reference.py.

Node ids are ints (SOURCE, SINK, the graph inputs, then the graph's nodes); each node's successor and
predecessor sets are insertion-ordered slices of one int32 pool (sets.py); the cycle graph keeps a
Pearce-Kelly topological order (order.py); cycle_graph.py writes the graph before contraction and
phase.py runs the pass. The state travels as two named tuples (state.py). first_use.py decides whether
compiling pays and says so while it compiles. Every loop mirrors the reference line by line; the
equivalence tests hold them together.
"""
from . import phase
from .cycle_graph import build, cycle_edges, graph_edges
from .first_use import Announced
from .phase import final_groups, run_phase
from .state import A_COLS, C_CROSS, C_CYCLE, C_DEVICE, C_MAXSIZE, C_NONE, C_SCOPE, Clusters, State

# the pass in one call (the parts above are for tests): a line on stderr while a cold cache makes it compile
run_pass = Announced(phase.run_pass)

__all__ = ["build", "cycle_edges", "graph_edges", "run_phase", "final_groups", "run_pass", "Clusters", "State", "A_COLS", "C_NONE", "C_DEVICE",
           "C_SCOPE", "C_MAXSIZE", "C_CROSS", "C_CYCLE"]
