"""How a picture folds the parameters a model stores (weights, initializers, constants) into labels.

The stored parameters are cost.params.stored_parameters: the graph inputs that are weights (`Value.is_param`:
an ONNX initializer, an input with values, a YAML input marked `param: true`) and the constant nodes' outputs.
Folded (the default), one is not drawn as its own node with an edge: its consumer's label gains one line
`W ‹64×64› f32` (‹› rather than ⟨⟩, which the PNG renderer's fonts lack), so a ResNet's picture shows its 30
ops instead of 52 weight boxes fanning into them. A value computed from parameters alone is a parameter to
the cost model too (resident, never handed over per call), but it is an op of the graph, so the picture
draws it as one."""
from __future__ import annotations

from dataclasses import dataclass

from ..cost.params import stored_parameters
from ..ir import Graph
from ..ops import REGISTRY
from ..ops.registry import VARIABLE

VARIABLE_OPS = REGISTRY.names(VARIABLE)

MODES = ("fold", "show", "hide")
FOLD_LINES = 3          # parameter lines per node label; more are summed into one "+N params" line
VALUE_ITEMS = 4         # a parameter of at most this many numbers shows its value, not its shape
NAME_CHARS = 22         # long export names ("model.encoder.layer.3.attention.self.query.weight") keep their tail
DTYPE_SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int64": "i64",
               "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "bool"}


@dataclass(frozen=True)
class StoredParams:
    """The stored parameters of one graph, and the mode a picture draws them in."""
    mode: str
    inputs: frozenset[int]      # positions in graph.inputs
    nodes: frozenset[int]       # positions of constant nodes

    def hidden_input(self, k: int) -> bool:
        return self.mode != "show" and k in self.inputs

    def hidden_node(self, j: int) -> bool:
        return self.mode != "show" and j in self.nodes


def stored_params(graph: Graph, mode: str = "fold") -> StoredParams:
    """The stored parameters of `graph`, and its variables (variable_nodes); in "show" mode nothing is hidden
    (the picture before folding)."""
    if mode not in MODES:
        raise ValueError(f"params mode {mode!r} not in {MODES}")
    inputs, nodes = stored_parameters(graph)
    variables = variable_nodes(graph)
    return StoredParams(mode, inputs, nodes | variables if variables else nodes)


def variable_nodes(graph: Graph) -> frozenset[int]:
    """A TF model's variables and their reads (ops of the VARIABLE group: VarHandleOp, and a ReadVariableOp of
    one): the weights of a SavedModel, drawn as parameters like an ONNX initializer, never as fallback ops."""
    ops = VARIABLE_OPS
    if not ops:
        return frozenset()
    col = graph.nodes.column("op")
    if not any(op in ops for op in col):   # (one pass over the ops; most graphs have none)
        return frozenset()
    found: set[int] = set()
    for j, op in enumerate(col):  # nodes come in topological order: a handle before its reads
        if op in ops:
            srcs = [s for s in graph.input_sources(j) if s >= 0]
            if all(k in found for k in srcs):
                found.add(j)
    return frozenset(found)


def is_stored(graph: Graph, ref: str, params: StoredParams, inputs: dict[str, int]) -> bool:
    """Is tensor `ref` a stored parameter (a weight input or a constant node's output)?"""
    if not params.inputs and not params.nodes:   # most big generated graphs: no lookups at all
        return False
    if ref in inputs:
        return inputs[ref] in params.inputs
    j = graph.producer(ref)
    return j is not None and j in params.nodes


def short_name(name: str) -> str:
    """A long name cut in the middle, never from the left: `layers.0.0.conv1.weight` stays readable as
    `layers.0…conv1.weight` (its start says where, its end what); the part kept at each end stops at a
    separator where one is near."""
    if len(name) <= NAME_CHARS:
        return name
    room = NAME_CHARS - 1
    head, tail = name[:room // 3 + 1], name[-(room - room // 3 - 1):]
    cuts = [k for k, c in enumerate(tail[:len(tail) // 2]) if c in "./:_"]
    if cuts:   # start the tail after a separator when one is in its first half
        tail = tail[cuts[0] + 1:]
    return head + "…" + tail


def param_line(name: str, t, value=None) -> str:
    """`W ‹64×64› f32`; an unknown shape is `‹?›`; a known value of up to VALUE_ITEMS numbers is shown instead
    of the shape (`eps = 1e-05 f32`, `axes = [0, 2] i64`): for a Clip bound or a Slice start it is the point."""
    dtype = DTYPE_SHORT.get(t.dtype or "?", t.dtype or "?")
    shown = small_value(value)
    if shown is not None:
        return f"{short_name(name)} = {shown} {dtype}"
    shape = "?" if t.shape is None else "×".join(str(d) for d in t.shape) or "scalar"
    return f"{short_name(name)} ‹{shape}› {dtype}"


def small_value(value) -> str | None:
    """`1e-05`, `[0, 2]`: the numbers of a tiny numeric array, None for anything else."""
    import numpy as np

    if value is None:
        return None
    try:
        arr = np.asarray(value)
    except Exception:  # noqa: BLE001 - not array-like: show the shape instead
        return None
    if arr.size > VALUE_ITEMS or arr.dtype.kind not in "biuf":
        return None
    items = [f"{float(v):.4g}" if arr.dtype.kind == "f" else str(v.item()) for v in arr.reshape(-1)]
    return items[0] if arr.ndim == 0 else "[" + ", ".join(items) + "]"


def param_value(graph: Graph, ref: str, inputs: dict[str, int]):
    """The known value of parameter `ref`: a graph input's data or a const node's `value` attribute."""
    if ref in inputs:
        return graph.inputs[inputs[ref]].data
    j = graph.producer(ref)
    return graph.nodes[j].attrs.get("value") if j is not None else None


def folded_lines(graph: Graph, j: int, params: StoredParams, inputs: dict[str, int]) -> list[str]:
    """The lines node j's label gains for its parameter inputs (none unless folding)."""
    if params.mode != "fold":
        return []
    from .units import fmt_bytes

    refs = [r for r in dict.fromkeys(graph.nodes[j].inputs) if r and is_stored(graph, r, params, inputs)]
    shown = refs if len(refs) <= FOLD_LINES + 1 else refs[:FOLD_LINES]   # never a "+1 params" line
    lines = [param_line(_shown_name(graph, r, inputs), graph.tensor_type(r).bind(graph.dims), param_value(graph, r, inputs))
             for r in shown]
    if len(refs) > len(shown):
        rest = [graph.tensor_type(r).bind(graph.dims).nbytes() for r in refs[len(shown):]]
        total = None if any(b is None for b in rest) else sum(rest)
        lines.append(f"+{len(rest)} params · {fmt_bytes(total)}")
    return lines


def _shown_name(graph: Graph, ref: str, inputs: dict[str, int]) -> str:
    """The name a parameter is shown by: a variable read's variable (`conv/kernel`, not `.../ReadVariableOp`)."""
    if ref in inputs or not VARIABLE_OPS:
        return ref
    j = graph.producer(ref)
    node = graph.nodes[j] if j is not None else None
    if node is not None and node.op in VARIABLE_OPS and node.inputs and node.inputs[0]:
        return graph.input_refs(j)[0].node
    return ref
