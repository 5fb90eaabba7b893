"""A SavedModel's variables: TF's tensor bundle (variables.index, a LevelDB-format table of BundleEntryProto,
and variables.data-*), read without TensorFlow, named by the SavedObjectGraph's variable names."""
from __future__ import annotations

import os

import numpy as np

from ...errors import XcvizError
from ..budget import current
from .attrs import NP_TYPES, dtype_name, shape_of
from .protos import parse_binary

VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


def _varint(b: bytes, i: int) -> tuple[int, int]:
    r = s = 0
    while True:
        if i >= len(b) or s > 63:
            raise ValueError("bad varint")
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def _block(data: bytes, off: int, size: int) -> list[tuple[bytes, bytes]]:
    """The (key, value) entries of one table block (prefix-compressed keys, restart array at the end)."""
    if off + size + 5 > len(data) or data[off + size] != 0:
        raise ValueError("block out of range or compressed")
    b = data[off:off + size]
    n_restarts = int.from_bytes(b[-4:], "little")
    end = len(b) - 4 - 4 * n_restarts
    i, key, out = 0, b"", []
    while i < end:
        shared, i = _varint(b, i)
        own, i = _varint(b, i)
        n, i = _varint(b, i)
        key = key[:shared] + b[i:i + own]
        i += own
        out.append((key, b[i:i + n]))
        i += n
    return out


def read_bundle(prefix: str) -> dict[str, np.ndarray]:
    """{checkpoint key: array} of the bundle at `prefix` (…/variables/variables)."""
    current().take(os.path.getsize(prefix + ".index"), "the variables index", prefix + ".index")
    try:
        with open(prefix + ".index", "rb") as f:
            data = f.read()
        footer = data[-48:]
        _, i = _varint(footer, 0)
        _, i = _varint(footer, i)
        index_off, i = _varint(footer, i)
        index_size, _ = _varint(footer, i)
        entries = [e for _, v in _block(data, index_off, index_size)
                   for e in _block(data, *_handle(v))]
    except (OSError, ValueError, IndexError) as e:
        raise XcvizError(f"cannot read the SavedModel's variables index ({e})", where=prefix + ".index",
                         hint="the variables folder may be truncated; the graph loads without it") from None
    num_shards = 1
    values: dict[str, np.ndarray] = {}
    limits = current()
    sizes: dict[str, int] = {}
    for key, raw in entries:
        if key == b"":
            num_shards = max(parse_binary("BundleHeaderProto", raw).num_shards, 1)
            continue
        entry = parse_binary("BundleEntryProto", raw)
        np_dt = NP_TYPES.get(dtype_name(entry.dtype))
        shape = shape_of(entry.shape)
        if np_dt is None or shape is None or not key.endswith(VALUE_SUFFIX.encode()):
            continue
        name = key.decode("utf-8", "replace")
        where = f"{prefix}.index: variable {name!r}"
        # every declared size checked against the bundle before anything is read or allocated
        if not 0 <= entry.shard_id < num_shards:
            raise XcvizError(f"shard {entry.shard_id} is out of range (the bundle has {num_shards})", where=where,
                             hint="the variables folder is corrupted or crafted")
        path = f"{prefix}.data-{entry.shard_id:05d}-of-{num_shards:05d}"
        if path not in sizes:
            if not os.path.isfile(path):
                raise XcvizError(f"its shard {os.path.basename(path)} is missing", where=where,
                                 hint="the variables folder is incomplete")
            sizes[path] = os.path.getsize(path)
        itemsize = np.dtype(np_dt).itemsize
        count = limits.tensor(shape, itemsize, "the variable", where)
        if entry.size != count * itemsize or entry.offset + entry.size > sizes[path]:
            raise XcvizError(f"it declares {entry.size:,} bytes at offset {entry.offset:,} for {list(shape)} "
                             f"{dtype_name(entry.dtype)}, which {os.path.basename(path)} ({sizes[path]:,} bytes) "
                             "does not hold", where=where, hint="the variables folder is truncated or crafted")
        try:
            with open(path, "rb") as f:
                f.seek(entry.offset)
                buf = f.read(entry.size)
        except OSError as e:
            raise XcvizError(f"cannot read {os.path.basename(path)}: {e.strerror}", where=where) from None
        if len(buf) != entry.size:
            raise XcvizError(f"variable {name!r} is truncated in {os.path.basename(path)}",
                             where=path, hint="the variables folder may be incomplete")
        values[name] = np.frombuffer(buf, dtype=np_dt).reshape(shape).copy()
    return values


def _handle(v: bytes) -> tuple[int, int]:
    off, i = _varint(v, 0)
    size, _ = _varint(v, i)
    return off, size


def variable_values(saved_model_dir: str, object_graph, graph_def=None) -> dict[str, np.ndarray]:
    """{variable name (VarHandleOp shared_name): value}, through the object graph's paths to its variables; and,
    with the meta graph's `graph_def`, the handles its function calls capture, by the objects the called function
    binds them to (a variable created inside a tf.function, Keras's export: `kernel_1` is the object `kernel`)."""
    prefix = os.path.join(saved_model_dir, "variables", "variables")
    if not os.path.isfile(prefix + ".index") or not object_graph.nodes:
        return {}
    values = read_bundle(prefix)
    out: dict[str, np.ndarray] = {}
    by_node: dict[int, np.ndarray] = {}
    seen = {0}
    todo = [(0, "")]
    while todo:  # breadth first, as TF names a checkpoint key by an object's shortest path from the root
        node_id, path = todo.pop(0)
        obj = object_graph.nodes[node_id]
        if obj.HasField("variable") and path + VALUE_SUFFIX in values:
            out[obj.variable.name] = by_node[node_id] = values[path + VALUE_SUFFIX]
        for child in obj.children:
            if child.node_id not in seen and child.node_id < len(object_graph.nodes):
                seen.add(child.node_id)
                todo.append((child.node_id, f"{path}/{child.local_name}" if path else child.local_name))
    if graph_def is not None:
        out.update(_captured(graph_def, object_graph, by_node))
    return out


def _captured(graph_def, object_graph, by_node: dict) -> dict[str, np.ndarray]:
    """{shared_name: value} of the VarHandleOps a call passes as the called function's bound inputs (its last
    inputs, in the order of SavedConcreteFunction.bound_inputs)."""
    handles = {n.name: n.attr["shared_name"].s.decode() or n.name for n in graph_def.node if n.op == "VarHandleOp"}
    out: dict[str, np.ndarray] = {}
    for n in graph_def.node:
        if n.op not in ("StatefulPartitionedCall", "PartitionedCall"):
            continue
        fn = object_graph.concrete_functions.get(n.attr["f"].func.name)
        bound = list(fn.bound_inputs) if fn is not None else []
        data = [r for r in n.input if not r.startswith("^")]
        if not bound or len(bound) > len(data):
            continue
        for ref, node_id in zip(data[len(data) - len(bound):], bound):
            name = ref.split(":")[0]
            if name in handles and node_id in by_node:
                out.setdefault(handles[name], by_node[node_id])
    return out
