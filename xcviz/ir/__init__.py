"""The small IR: tensor types, nodes and graphs, in topological order, with unique names."""
from __future__ import annotations

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from typing import Mapping, Sequence

import msgspec

from .symbolic import eval_dim

# Element sizes in bytes of every dtype xcviz knows (ONNX and NumPy spellings map here).
DTYPE_SIZES: dict[str, int] = {
    "float64": 8, "float32": 4, "float16": 2, "bfloat16": 2,
    "int64": 8, "int32": 4, "int16": 2, "int8": 1,
    "uint64": 8, "uint32": 4, "uint16": 2, "uint8": 1,
    "bool": 1, "complex64": 8, "complex128": 16, "string": 0,
    "float8_e4m3fn": 1, "float8_e5m2": 1,
}
DTYPE_ALIASES = {
    "f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16",
    "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8",
    "u64": "uint64", "u32": "uint32", "u16": "uint16", "u8": "uint8",
    "double": "float64", "float": "float32", "half": "float16", "long": "int64", "int": "int32",
}

Dim = int | str  # a str is a symbolic dimension ("batch")
Shape = tuple[Dim, ...]


def canonical_dtype(name: str) -> str | None:
    key = str(name).lower()
    key = DTYPE_ALIASES.get(key, key)
    return key if key in DTYPE_SIZES else None


@dataclass(frozen=True, slots=True)
class TensorType:
    """Shape (None = unknown rank; str dims are symbolic) and dtype (None = unknown)."""

    shape: Shape | None = None
    dtype: str | None = None

    def numel(self, dims: Mapping[str, int] | None = None) -> int | None:
        if self.shape is None:
            return None
        n = 1
        for d in self.shape:
            if isinstance(d, str):
                if not dims:
                    return None
                d = dims[d] if d in dims else eval_dim(d, dims)  # an expression ('seq+1') binds through its names
                if isinstance(d, str):
                    return None
            n *= d
        return n

    def nbytes(self, dims: Mapping[str, int] | None = None) -> int | None:
        n = self.numel(dims)
        if n is None or self.dtype is None:
            return None
        return n * DTYPE_SIZES[self.dtype]

    def bind(self, dims: Mapping[str, int]) -> "TensorType":
        if self.shape is None or not dims:
            return self
        return TensorType(tuple(eval_dim(d, dims) if isinstance(d, str) else d for d in self.shape), self.dtype)

    def __str__(self) -> str:
        dt = self.dtype or "?"
        if self.shape is None:
            return f"{dt}[?]"
        return f"{dt}[{','.join(str(d) for d in self.shape)}]"


def parse_ref(ref: str) -> tuple[str, int]:
    """'node' -> ('node', 0); 'node:2' -> ('node', 2). Names may contain ':' if not followed by digits."""
    if ":" not in ref:  # the common case, and the hot one on big graphs
        return ref, 0
    head, sep, tail = ref.rpartition(":")
    if sep and head and tail.isdigit():
        return head, int(tail)
    return ref, 0


def format_ref(name: str, index: int) -> str:
    return name if index == 0 else f"{name}:{index}"


@dataclass(slots=True)
class Value:
    """A graph input (activation or weight) with its type; `data` holds a constant's values when known."""

    name: str
    type: TensorType = field(default_factory=TensorType)
    data: object | None = None  # numpy array for initializers / constants
    # a weight given without its values (YAML `param: true`): resident on the device, never fed per call.
    # An input with `data` is a parameter too. Not part of equality: the text form does not carry it.
    param: bool = field(default=False, compare=False)

    @property
    def is_param(self) -> bool:
        return self.param or self.data is not None


class Node(msgspec.Struct, gc=False):
    """One op. A msgspec Struct rather than a dataclass: built in C (a load makes one per node, so building
    them is on every big load's path) and not tracked by the cyclic GC (the IR holds no cycles).
    Copy with msgspec.structs.replace."""

    name: str
    op: str                      # canonical op name from the registry (or the raw name of an opaque op)
    op_type: str                 # the op name as written in the source file
    inputs: tuple[str, ...] = ()  # tensor refs: "node", "node:k", or a graph input name
    control_inputs: tuple[str, ...] = ()
    attrs: dict = {}             # (a new dict per node, as with every mutable default of a Struct)
    device: str | None = None
    compile: bool | None = None
    scope: str | None = None
    outputs: list[TensorType] = []
    known: bool = True           # False: opaque op unknown to the registry
    note: str | None = None      # loader's reason for an opaque op ("custom op com.x::Y")
    where: str | None = None     # location in the source file, for messages (None: see node_where)
    module: str | None = None    # display only: the source module path (torch's nn_module_stack), never a scope

    def out(self, k: int = 0) -> TensorType:
        return self.outputs[k] if k < len(self.outputs) else TensorType()


def short(value, limit: int = 80) -> str:
    """repr() for messages, cut to `limit` characters: a 100,000-character name must not flood the terminal."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def node_where(node: Node, source: str | None) -> str:
    """Where a node is, for messages: the loader's text, or `file: node 'name'` (big-graph loaders leave
    `where` empty and let an error make it)."""
    return node.where or f"{source}: node {short(node.name)}"


@dataclass(slots=True)
class Graph:
    name: str
    inputs: list[Value] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    source: str | None = None      # file name as given (never made absolute)
    dims: dict[str, int] = field(default_factory=dict)  # bound symbolic dimensions
    output_names: dict[str, str] = field(default_factory=dict)  # output ref -> the model's own name (ONNX)
    _index: dict[str, int] | None = field(default=None, repr=False, compare=False)
    # the graph's one GraphColumns, made by the loader or on first use (ir.columns.columns_of)
    _columns: object | None = field(default=None, repr=False, compare=False)
    # a torch program's aten calls by node name (loaders.torch_calls): torch eager replays them as the native runtime
    aten_calls: dict | None = field(default=None, repr=False, compare=False)

    # -- lookups ---------------------------------------------------------
    @property
    def index(self) -> dict[str, int]:
        """Node name -> position in topological order. For a graph whose nodes are still columns (a lazy
        NodeSeq) a LazyIndex: the dict is made on its first use (hashing every name of a big graph is a real
        cost, and a load's passes mostly hold the index without looking anything up)."""
        if self._index is None or len(self._index) != len(self.nodes):
            nodes = self.nodes
            if getattr(nodes, "lazy", False):
                return LazyIndex(self)
            self._index = dict(zip(map(attrgetter("name"), nodes), range(len(nodes))))  # C speed
        return self._index

    def _make_index(self) -> dict[str, int]:
        nodes = self.nodes  # (a lazy NodeSeq gives its names column, without making nodes)
        names = nodes.column("name") if hasattr(nodes, "column") else map(attrgetter("name"), nodes)
        self._index = dict(zip(names, range(len(nodes))))
        return self._index

    def node(self, name: str) -> Node:
        return self.nodes[self.index[name]]

    @property
    def bodies(self) -> dict[tuple[str, str], "Graph"]:
        """The control-flow bodies the loader built once, by (node name, attribute): a body attribute
        (ops.control.Subgraph) carries its Graph; one that did not load is absent; a body's own are its
        `.bodies`. Walks the nodes: ask clustering.bodies.has_control_flow first on a big graph."""
        out: dict[tuple[str, str], Graph] = {}
        for node in self.nodes:
            for k, v in node.attrs.items():
                body = getattr(v, "graph", None) if isinstance(v, str) else None
                if isinstance(body, Graph):
                    out[(node.name, k)] = body
        return out

    def tensor_type(self, ref: str) -> TensorType:
        name, k = parse_ref(ref)
        i = self.index.get(name)
        if i is not None:
            return self.nodes[i].out(k)
        for v in self.inputs:
            if v.name == ref:
                return v.type
        return TensorType()


class LazyIndex(dict):
    """Graph.index of a graph whose nodes are columns: a dict (for isinstance) that is empty itself and makes
    the graph's real index on first use, then answers from it (each method one call further). Where the
    loader left a look-up (`nodes.find`, loaders/json_scanned), the first _FIND_MAX look-ups of single names
    are answered by it: a load's passes look up a few hundred names, which is no reason to hash 10^6."""

    __slots__ = ("_graph", "_real", "_find", "_left")

    def __init__(self, graph: "Graph") -> None:
        super().__init__()
        self._graph, self._real = graph, None
        self._find, self._left = getattr(graph.nodes, "find", None), _FIND_MAX

    def _d(self) -> dict:
        if self._real is None:
            g = self._graph
            self._real = g._index if g._index is not None and len(g._index) == len(g.nodes) else g._make_index()
        return self._real

    def _one(self, k):
        """Position of the node named k, or None (by the loader's look-up while it pays), else _MISS."""
        if self._real is None and self._find is not None and self._left and type(k) is str and \
                self._graph._index is None:
            self._left -= 1
            return self._find(k)
        return _MISS

    def __getitem__(self, k):
        i = self._one(k)
        if i is _MISS:
            return self._d()[k]
        if i is None:
            raise KeyError(k)
        return i

    def get(self, k, default=None):
        i = self._one(k)
        if i is _MISS:
            return self._d().get(k, default)
        return default if i is None else i

    def __contains__(self, k) -> bool:
        i = self._one(k)
        return k in self._d() if i is _MISS else i is not None

    def __len__(self) -> int:
        return len(self._d())

    def __iter__(self):
        return iter(self._d())

    def keys(self):
        return self._d().keys()

    def values(self):
        return self._d().values()

    def items(self):
        return self._d().items()

    def copy(self) -> dict:
        return self._d().copy()

    def setdefault(self, k, default=None):
        return self._d().setdefault(k, default)

    def pop(self, k, *default):
        return self._d().pop(k, *default)

    def __setitem__(self, k, v) -> None:
        self._d()[k] = v

    def __delitem__(self, k) -> None:
        del self._d()[k]

    def __eq__(self, other) -> bool:
        return self._d() == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._d())


_MISS = object()
# single look-ups answered without the dict: each costs more than a dict look-up, but a few thousand of them
# cost less than hashing every name of a big graph
_FIND_MAX = 10_000


def plain_positions(graph: "Graph", refs) -> list[int]:
    """Position of what each ref names when it is a plain name: a node (its output 0), n + i for graph
    input i; -1 for anything else (an empty ref, 'node:k', an undefined name). Node names containing ':'
    are left out: such a ref may read as name:k, which the callers resolve one by one."""
    ids = graph.index
    if ":" in "".join(ids):
        ids = {name: i for name, i in ids.items() if ":" not in name}
    return positions_by_name(ids, len(graph.nodes), graph.inputs, refs)


def positions_by_name(index: dict[str, int], n: int, inputs: Sequence["Value"], refs) -> list[int]:
    """plain_positions over a name index (no name in it holding ':') of n nodes: a node before the first
    graph input of the same name (the loader's checks refuse that name clash), -1 for anything else."""
    added = [v.name for v in inputs if v.name not in index]  # (the index itself, for the time of one map)
    for i, v in enumerate(inputs):
        index.setdefault(v.name, n + i)
    try:
        return list(map(index.get, refs, repeat(-1)))
    finally:
        for name in added:
            index.pop(name, None)


_PROCESS_FROZEN = False  # set by freeze_for_process()
_PROMOTE_ABOVE = 10_000  # young objects a GC pause must leave to be promoted; fewer go the usual way


def freeze_for_process() -> None:
    """For a process that ends without freeing its objects (the `xcviz` command): freeze everything alive
    now, and what later GC pauses build, out of the cyclic GC's reach (they are still freed by refcount)."""
    global _PROCESS_FROZEN
    gc.freeze()
    _PROCESS_FROZEN = True


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building millions of acyclic objects.

    Allocation-triggered collections rescan every live object, which made loading and clustering of
    10^5..10^6-node graphs several times slower (quadratic in practice); the IR holds no cycles.

    On the way out, when the pause built many objects, they are moved straight to the oldest generation:
    left young, the first allocation after re-enabling would scan all of them (every node a load built) to
    find nothing. (freeze + unfreeze makes that move in O(1); where the process froze objects,
    as the CLI does after loading (freeze_for_process), the new ones are frozen with them.)"""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_count()[0] > _PROMOTE_ABOVE:
                # (get_freeze_count walks the frozen objects: nothing to walk unless someone froze some)
                frozen = _PROCESS_FROZEN or gc.get_freeze_count() > 0
                gc.freeze()
                if not frozen:
                    gc.unfreeze()
            gc.enable()


def bind_dims(graph: Graph, dims: Mapping[str, int], base: Mapping[str, int] | None = None) -> Graph:
    """A new graph with these bindings for symbolic dimensions (used by every byte count) over the graph's
    own (or over `base`); it shares the nodes and inputs, which binding leaves as they are."""
    from dataclasses import replace

    return replace(graph, dims={**(graph.dims if base is None else base), **dims})


def topo_order(n: int, preds: Sequence[Sequence[int]]) -> list[int] | None:
    """Kahn's algorithm, stable (prefers file order); None if there is a cycle."""
    import heapq

    indeg = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    for v in range(n):
        for u in preds[v]:
            succ[u].append(v)
            indeg[v] += 1
    ready = [v for v in range(n) if indeg[v] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        u = heapq.heappop(ready)
        order.append(u)
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(ready, v)
    return order if len(order) == n else None
