"""Feeds for a run: given inputs checked against their declared types, constants, seeded random tensors."""
from __future__ import annotations

import numpy as np

from ..errors import XcvizError, did_you_mean
from ..ir import Graph, TensorType
from ..ir.containers import OptionalType, SequenceType
from ..ir.symbolic import ANONYMOUS, bind_anonymous
from ..ops.values import Seq

# Random inputs are refused beyond this many elements in all (--max-elements): a --dim typo such as
# seq=100000000 should be one clear error, not a MemoryError after minutes of swapping.
DEFAULT_MAX_ELEMENTS = 50_000_000


def input_shape(t: TensorType, dims: dict, name: str = "") -> list[int]:
    if t.shape is None:
        raise XcvizError(f"input {name!r} has unknown shape", hint="give its values with --inputs FILE.npz")
    shape = []
    for d in t.shape:
        if isinstance(d, str):
            if d not in dims:
                raise XcvizError(f"input {name!r} has symbolic dimension {d!r}", hint=f"bind it with --dim {d}=N or give --inputs")
            d = dims[d]
        shape.append(int(d))
    return shape


def random_array(t: TensorType, rng: np.random.Generator, dims: dict, name: str = "") -> np.ndarray:
    shape = input_shape(t, dims, name)
    dt = np.dtype(t.dtype or "float32") if t.dtype not in ("bfloat16", "string", None) else np.dtype("float32")
    if dt.kind == "f":  # drawn as float64 then cast: the values for a seed stay the same across dtypes
        return rng.standard_normal(shape).astype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(0, 4, size=shape).astype(dt)


def _feed_points(graph: Graph) -> list[tuple[str, TensorType, object]]:
    """(name, type, constant data or None) for graph inputs and placeholder nodes."""
    pts = [(v.name, v.type, v.data) for v in graph.inputs]
    pts += [(n.name, n.out(0), None) for n in graph.nodes if n.op == "placeholder"]
    return pts


def _shape_text(shape) -> str:
    return "[" + ",".join(map(str, shape)) + "]"


def _check_given(name: str, t: TensorType, arr: np.ndarray, dims: dict, where: str | None,
                 anonymous: list[int]) -> np.ndarray:
    """A given input against its declared type: rank, fixed dims, consistent symbolic dims, dtype."""
    declared = f"the graph declares {name}: {t}"
    if t.shape is not None:
        if arr.ndim != len(t.shape):
            raise XcvizError(f"input {name!r} has shape {_shape_text(arr.shape)} (rank {arr.ndim}), expected rank "
                             f"{len(t.shape)}: {t}", where=where, hint=declared)
        for d, n in zip(t.shape, arr.shape):
            if d == ANONYMOUS:  # TF's -1 / None, ONNX's unnamed dim: its own, whatever size, tied to nothing
                anonymous.append(n)
            elif isinstance(d, str):
                if dims.setdefault(d, n) != n:
                    raise XcvizError(f"input {name!r}: dimension {d!r} is {n} here but {dims[d]} in an earlier input",
                                     where=where, hint=f"every input must agree on {d!r}")
            elif d != n:
                raise XcvizError(f"input {name!r} has shape {_shape_text(arr.shape)}, expected {t}", where=where,
                                 hint=declared)
    if t.dtype == "string" and arr.dtype.kind in "US":
        return arr.astype(object)  # an .npz holds text as fixed-width strings; the runtime's are objects
    if arr.dtype.kind == "V" and arr.dtype.names is None and t.dtype:
        return _typed_bytes(name, t, arr, where)
    if t.dtype and t.dtype not in ("string", "bfloat16") and arr.dtype != np.dtype(t.dtype):
        want = np.dtype(t.dtype)
        # same kind (float64 -> float32) or integers/bools into any numeric type convert; the rest is refused
        if arr.dtype.kind == want.kind or (arr.dtype.kind in "iub" and want.kind in "iufb"):
            return arr.astype(want)
        raise XcvizError(f"input {name!r} has dtype {arr.dtype}, expected {t.dtype}", where=where,
                         hint=f"{declared}; save it with .astype('{t.dtype}')")
    return arr


def _typed_bytes(name: str, t: TensorType, arr: np.ndarray, where: str | None) -> np.ndarray:
    """Raw bytes ('|V2': np.savez of a bfloat16 array without ml_dtypes' name) as the declared dtype of that size."""
    from ..ops.arrays import np_dtype

    try:
        want = np_dtype(t.dtype)
    except XcvizError:
        want = None
    if want is None or want.itemsize != arr.dtype.itemsize:
        raise XcvizError(f"input {name!r} holds raw {arr.dtype.itemsize}-byte values, expected {t.dtype}", where=where,
                         hint="save it with ml_dtypes imported and xcviz's dtype (numpy.savez keeps the name then)")
    return arr.copy(order="C").view(want)   # (np.ascontiguousarray would make a scalar an array of one)


class Feeds(dict):
    """A run's input arrays by graph input name, and `dims`: the symbolic dimensions they bound (a run's
    reports count bytes at those sizes: `ir.bind_dims(graph, feeds.dims)`)."""

    __slots__ = ("dims",)

    def __init__(self, arrays: dict, dims: dict) -> None:
        super().__init__(arrays)
        self.dims = dims


def bind_inputs(graph: Graph, inputs: dict | None = None, seed: int | None = None,
                max_elements: int | None = DEFAULT_MAX_ELEMENTS) -> Feeds:
    """Feeds for every input: given, else the constant, else seeded random (symbolic dims bound from given
    ones, and with them the graph's dims: `Feeds.dims`; the graph is left as it is).

    `inputs` may carry a `source` attribute (the .npz path) used as the `where` of its errors. Random
    inputs stop at `max_elements` elements in all (None: no limit)."""
    where = getattr(inputs, "source", None)
    given = inputs is not None  # (an empty .npz too: then an optional left out is empty)
    inputs = dict(inputs or {})
    points = _feed_points(graph)
    known = {p[0] for p in points}
    _gather_sequences(inputs, {name for name, t, _ in points if _is_sequence(t)})
    extra = sorted(set(inputs) - known)
    if extra:
        raise XcvizError(f"unknown input {extra[0]!r}", where=where,
                         hint=did_you_mean(extra[0], known) or "graph inputs: " + ", ".join(sorted(known)))
    dims: dict[str, int] = {}  # bound by these inputs (they win over earlier bindings and --dim)
    feeds: dict[str, np.ndarray] = {}
    anonymous: list[int] = []  # the sizes given for unnamed `?` axes (ir.symbolic.bind_anonymous)
    for name, t, data in points:
        if name in inputs:
            feeds[name] = container_feed(inputs[name], _is_sequence(t)) if _is_container(t) else \
                _check_given(name, t, np.asarray(inputs[name]), dims, where, anonymous)
    bind_anonymous(dims, anonymous)
    rng = np.random.default_rng(0 if seed is None else seed)
    positive = _positive_inputs(graph)
    read = None  # the inputs something reads; one nothing reads (a frozen graph's unused_control_flow_input_1) is optional
    missing = []
    generated = 0
    for name, t, data in points:
        if name in feeds:
            continue
        if data is not None:
            feeds[name] = np.asarray(data)
        elif given and isinstance(t, OptionalType):
            feeds[name] = None  # an optional the given inputs leave out is empty
        elif seed is None and inputs and name in (read := read if read is not None else _read_inputs(graph)):
            missing.append(name)
        elif t.shape is None and name not in (read := read if read is not None else _read_inputs(graph)):
            continue  # read by nothing and of no known shape (a lowered frozen graph's unused_control_flow_input)
        else:
            dims_here = {**{d: 1 for d in _symbols(t)}, **graph.dims, **dims}
            shape = input_shape(t, dims_here, name)
            generated += int(np.prod(shape, dtype=object))
            if max_elements is not None and generated > max_elements:
                raise XcvizError(f"random inputs would need {generated:,} elements, over the limit of {max_elements:,} "
                                 f"(input {name!r} is {t.dtype or 'float32'}{_shape_text(shape)})",
                                 hint="bind smaller symbolic dims with --dim, give --inputs FILE.npz, or raise --max-elements")
            if _is_container(t):  # a sequence of two random elements; a full optional
                elem = TensorType(t.shape, t.dtype)
                items = [random_array(elem, rng, dims_here, name) for _ in range(2)]
                feeds[name] = Seq(items) if isinstance(t, SequenceType) or t.sequence else items[0]
                continue
            feeds[name] = random_array(t, rng, dims_here, name)
            if name in positive and feeds[name].dtype.kind == "f":
                feeds[name] = np.abs(feeds[name]) + feeds[name].dtype.type(0.5)
            for d, n in zip(t.shape or (), feeds[name].shape):
                if isinstance(d, str):
                    dims.setdefault(d, n)
    if missing:
        dataless = [n for n in dataless_weights(graph) if n in missing]
        hint = "give every graph input in the .npz, or pass --seed N for random ones"
        if dataless:
            hint = (f"{len(dataless)} of them are initializers with no data ({', '.join(dataless[:5])}): give their "
                    "values in the .npz, or pass --seed N to fill them with random ones")
        raise XcvizError(f"missing input {missing[0]!r}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
                         where=where, hint=hint)
    return Feeds(feeds, {**graph.dims, **dims})


def _gather_sequences(inputs: dict, sequences: set[str]) -> None:
    """A sequence input given as numbered tensors `s[0]`, `s[1]`, ... (as `xcviz run` writes a sequence output to
    an .npz) becomes one list under `s`; the numbers must run from 0 without a gap."""
    numbered: dict[str, dict[int, object]] = {}
    for key in list(inputs):
        base, _, rest = key.rpartition("[")
        if base in sequences and rest.endswith("]") and rest[:-1].isdigit() and key not in sequences:
            numbered.setdefault(base, {})[int(rest[:-1])] = inputs.pop(key)
    for base, items in numbered.items():
        if base in inputs or sorted(items) != list(range(len(items))):
            raise XcvizError(f"sequence input {base!r} is given as {base} and numbered tensors, or with a gap in "
                             f"its numbers ({', '.join(map(str, sorted(items)))})",
                             hint=f"give its tensors as {base}[0], {base}[1], ... in order")
        inputs[base] = [items[k] for k in range(len(items))]


def dataless_weights(graph: Graph, inputs: dict | None = None) -> list[str]:
    """Weights declared without values (ONNX initializers with dims but no data, YAML `param: true`) that
    `inputs` does not give: the ones a run fills with seeded random values, in graph order."""
    given = set(inputs or ())
    return [v.name for v in graph.inputs if v.param and v.data is None and v.name not in given]


def dataless_warning(names: list[str], shown: int = 5) -> str | None:
    """The one line that names the weights filled with seeded random values (None when there are none)."""
    if not names:
        return None
    head = ", ".join(names[:shown]) + (f", ... (+{len(names) - shown} more)" if len(names) > shown else "")
    verb = "initializer has no data and was" if len(names) == 1 else "initializers have no data and were"
    return f"warning: {len(names)} {verb} filled with seeded random values: {head}"


# (op, input slot) whose random values must be positive: variances, square roots, logarithms
def _positive_inputs(graph: Graph) -> set[str]:
    """Inputs whose random values must be positive (variances, square roots, logarithms): the entries say which."""
    from ..ops import REGISTRY

    slots = {(o.name, k) for o in REGISTRY for k in o.positive_inputs}
    return {ref for n in graph.nodes for k, ref in enumerate(n.inputs) if (n.op, k) in slots}


def _read_inputs(graph: Graph) -> set[str]:
    """The graph inputs some node or graph output reads."""
    read = {ref for n in graph.nodes for ref in n.inputs if ref} | set(graph.outputs)
    read |= {c for n in graph.nodes for c in n.control_inputs}
    return {v.name for v in graph.inputs if v.name in read}


def _is_container(t: TensorType) -> bool:
    return isinstance(t, (SequenceType, OptionalType))


def container_feed(v, sequence: bool = False):
    """A given sequence (a list or tuple of arrays, a Seq, or, for a `sequence`, one array whose first axis
    numbers its tensors: shape (0, ...) is the empty sequence) or optional (None: empty) as the runtime holds it."""
    if v is None or isinstance(v, Seq):
        return v
    if isinstance(v, (list, tuple)):
        return Seq([np.asarray(x) for x in v])
    v = np.asarray(v)
    return Seq(list(v)) if sequence and v.ndim else v


def _is_sequence(t) -> bool:
    return isinstance(t, SequenceType) or bool(getattr(t, "sequence", False))


def _symbols(t: TensorType) -> list[str]:
    return [d for d in (t.shape or ()) if isinstance(d, str)]
