"""The small IR: tensor types, read-only nodes and graphs, in topological order, with unique names.

types.py holds the values (TensorType, Value, Node), nodes.py the one node sequence (Nodes), graph.py the
Graph; columns.py the integer columns clustering and costs read."""
from __future__ import annotations

from .body import Body  # noqa: F401
from .collector import freeze_for_process, gc_paused  # noqa: F401
from .function import TFFunction  # noqa: F401
from .columns import plain_positions, positions_by_name  # noqa: F401
from .graph import FrozenDict, Graph, bind_dims, derived, relabel, seeded, topo_order, unit_order  # noqa: F401
from .nodes import Nodes  # noqa: F401
from .types import (DTYPE_ALIASES, DTYPE_SIZES, Dim, FrozenList, Node, Ref, Shape, TensorType, Value,  # noqa: F401
                    canonical_dtype, format_ref, frozen, node_where, parse_ref, short)
