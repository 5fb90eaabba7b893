"""The IR's values: dtypes, tensor types, tensor references, graph inputs (Value) and nodes (Node), all read-only (FrozenDict: a read-only mapping)."""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

import msgspec
import numpy as np

from .symbolic import eval_dim


def _refuse(self, *args, **kwargs):
    raise TypeError("the IR is read-only: make a new node or graph (msgspec.structs.replace, ir.bind_dims, "
                    "dataclasses.replace)")


class FrozenDict(dict):
    """A read-only mapping (a node's attributes, a graph's dims and output names): a dict to every reader (JSON
    encoders, `dict(...)`, `**`), refusing every change. Read-only all the way down: a list, dict or numpy
    array it is given as a value is taken read-only (`frozen`). A changed node or graph is a new one
    (msgspec.structs.replace with `attrs={**node.attrs, k: v}`; ir.bind_dims, dataclasses.replace)."""

    __slots__ = ()

    def __init__(self, *args, **kwargs) -> None:
        dict.__init__(self, *args, **kwargs)
        changed = [(k, frozen(v)) for k, v in dict.items(self) if type(v) not in _FROZEN]
        for k, v in changed:
            dict.__setitem__(self, k, v)

    _refuse = _refuse
    __setitem__ = __delitem__ = __ior__ = update = pop = popitem = clear = setdefault = _refuse  # type: ignore

    def __reduce__(self):
        return FrozenDict, (dict(self),)


class FrozenList(list):
    """A read-only list (an attribute's list value: pads, perm, axes): a list to every reader (equality with
    lists, JSON, `isinstance(v, list)`, the text IR's `[...]`), refusing every change; its items are taken
    read-only as FrozenDict's values are. A list, not a tuple: the text IR writes tuples as `(...)`."""

    __slots__ = ()

    def __init__(self, items=()) -> None:
        list.__init__(self, map(frozen, items))

    _refuse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = \
        reverse = _refuse  # type: ignore

    def __reduce__(self):
        return FrozenList, (list(self),)


# values that are read-only as they are (a FrozenList or FrozenDict is read-only all the way down)
_FROZEN = frozenset({str, int, float, bool, type(None), bytes, complex, FrozenList, FrozenDict})


def frozen(value):
    """The value read-only all the way down: a list as a FrozenList, a dict as a FrozenDict, a tuple's items
    frozen, a writable numpy array as a read-only view of it (the caller's array stays theirs, writable);
    anything else (numbers, strings, IR values such as ir.body.Body) as it is. Lists and dicts are copied,
    never changed; nesting of any depth is walked without recursion (a hostile file's 1000 levels)."""
    t = type(value)
    if t in _FROZEN:
        return value
    if t is list and all(type(x) in _FROZEN for x in value):  # (the common case: pads, perm, axes)
        flat = list.__new__(FrozenList)
        list.__init__(flat, value)
        return flat
    if t in _CONTAINERS:
        return _frozen_tree(value)
    if isinstance(value, np.ndarray):
        return value if not value.flags.writeable else _read_only_view(value)
    return value


_CONTAINERS = frozenset({list, dict, tuple})


def _frozen_tree(root):
    """frozen() of a list, dict or tuple, depth first with a stack (not recursion): each container made
    read-only once the ones it holds are. A container held twice is frozen once (and shared); one that
    holds itself is refused."""
    done: dict[int, object] = {}
    path: set[int] = set()  # the containers being frozen: the one on top of the stack and those holding it
    stack = [(root, False)]
    while stack:
        c, ready = stack.pop()
        key = id(c)
        if key in done:
            continue
        items = c.values() if type(c) is dict else c
        if not ready:
            if key in path:
                raise ValueError("an attribute value holds itself")
            path.add(key)
            stack.append((c, True))
            stack.extend((x, False) for x in items if type(x) in _CONTAINERS and id(x) not in done)
            continue
        vals = [done[id(x)] if type(x) in _CONTAINERS else frozen(x) for x in items]
        t = type(c)
        if t is dict:
            new = dict.__new__(FrozenDict)
            dict.__init__(new, zip(c, vals))
        elif t is list:
            new = list.__new__(FrozenList)
            list.__init__(new, vals)
        else:
            new = c if all(map(operator.is_, vals, c)) else tuple(vals)
        done[key] = new
        path.discard(key)
    return done[id(root)]


def _read_only_view(a: np.ndarray) -> np.ndarray:
    """A read-only view of the array's data. Through a read-only memoryview where the buffer protocol allows
    (a C-contiguous ndarray of a buffer dtype): then not even `flags.writeable = True` makes it writable;
    else (bfloat16, object, strided) a view flagged read-only, which every ordinary write refuses."""
    if type(a) is np.ndarray and a.flags.c_contiguous and not a.dtype.hasobject:
        try:
            return np.frombuffer(memoryview(a).toreadonly().cast("B"), a.dtype).reshape(a.shape)
        except (ValueError, TypeError, BufferError):  # (a dtype the buffer protocol cannot name)
            pass
    view = a.view()
    view.flags.writeable = False
    return view


NO_ATTRS = FrozenDict()  # the one empty attribute mapping every node without attributes shares

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

    def __post_init__(self) -> None:  # (a shape given as a list is taken as a tuple: read-only all the way down)
        if type(self.shape) is list:
            object.__setattr__(self, "shape", tuple(self.shape))

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


class Ref(NamedTuple):
    """A tensor reference, parsed: output `index` of node `node` (a graph input: its name, output 0). A node's
    `inputs` keep the text (the serialized form, as ONNX's do); the graph parses them once (Graph.input_refs,
    Graph.output_refs, Graph.input_sources) and `parse_ref` is the one parser."""

    node: str
    index: int = 0

    def __str__(self) -> str:
        return format_ref(self.node, self.index)


def parse_ref(ref: str) -> Ref:
    """'node' -> Ref('node', 0); 'node:2' -> Ref('node', 2). Names may contain ':' if not followed by digits."""
    if ":" not in ref:  # the common case, and the hot one on big graphs
        return _new_ref(Ref, (ref, 0))
    head, sep, tail = ref.rpartition(":")
    if sep and head and tail.isdigit():
        return _new_ref(Ref, (head, int(tail)))
    return _new_ref(Ref, (ref, 0))


_new_ref = tuple.__new__  # (Ref's own __new__ is Python code: tuple's, in C, makes the same Ref)


def format_ref(name: str, index: int) -> str:
    return name if index == 0 else f"{name}:{index}"


@dataclass(frozen=True, slots=True)
class Value:
    """A graph input (activation or weight) with its type; `data` holds a constant's values when known."""

    name: str
    type: TensorType = field(default_factory=TensorType)
    data: object | None = None  # numpy array for initializers / constants
    # a weight given without its values (YAML `param: true`): resident on the device, never fed per call.
    # An input with `data` is a parameter too. Not part of equality: the text form does not carry it.
    param: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:  # (a weight's values are read-only too: a view, the caller's array stays theirs)
        if type(self.data) is np.ndarray and self.data.flags.writeable:
            object.__setattr__(self, "data", _read_only_view(self.data))

    @property
    def is_param(self) -> bool:
        return self.param or self.data is not None


class Node(msgspec.Struct, frozen=True, gc=False):
    """One op, read-only. A msgspec Struct rather than a dataclass: built in C (a load makes one per node, so
    building them is on every big load's path) and not tracked by the cyclic GC (the IR holds no cycles).
    A changed node is a new one: msgspec.structs.replace."""

    name: str
    op: str                      # canonical op name from the registry (or the raw name of an opaque op)
    op_type: str                 # the op name as written in the source file
    inputs: tuple[str, ...] = ()  # tensor refs: "node", "node:k", or a graph input name
    control_inputs: tuple[str, ...] = ()
    attrs: FrozenDict = NO_ATTRS  # read-only all the way down (a dict given is taken as a FrozenDict: ir.types.frozen)
    device: str | None = None
    compile: bool | None = None
    scope: str | None = None
    outputs: tuple[TensorType, ...] = ()  # (a list given is taken as a tuple)
    known: bool = True           # False: opaque op unknown to the registry
    note: str | None = None      # loader's reason for an opaque op ("custom op com.x::Y")
    where: str | None = None     # location in the source file, for messages (None: see node_where)
    module: str | None = None    # the source module path (torch's nn_module_stack): shown, and the node's layer
                                 # (ir.scopes), never an XLA scope

    def __post_init__(self) -> None:  # (read-only all the way down: a dict or list given is copied)
        if type(self.attrs) is not FrozenDict:
            msgspec.structs.force_setattr(self, "attrs", FrozenDict(self.attrs) if self.attrs else NO_ATTRS)
        for name in ("inputs", "control_inputs", "outputs"):
            if type(getattr(self, name)) is not tuple:
                msgspec.structs.force_setattr(self, name, tuple(getattr(self, name)))

    def out(self, k: int = 0) -> TensorType:
        return self.outputs[k] if k < len(self.outputs) else TensorType()

    @property
    def must_compile(self) -> bool:
        """XLA must compile it: marked so (`compile`), or a TF call of a `jit_compile` function
        (`_XlaMustCompile`), which TensorFlow itself runs through XLA."""
        return self.compile is True or bool(self.attrs.get("_XlaMustCompile"))


def short(value, limit: int = 80) -> str:
    """repr() for messages, cut to `limit` characters: a 100,000-character name must not flood the terminal."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def node_where(node: Node, source: str | None) -> str:
    """Where a node is, for messages: the loader's text, or `file: node 'name'` (big-graph loaders leave
    `where` empty and let an error make it)."""
    return node.where or f"{source}: node {short(node.name)}"
