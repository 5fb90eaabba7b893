"""Part of a graph as an ONNX model onnxruntime can run: sliced from the original file, or emitted from the op table.

A graph loaded from ONNX keeps its NodeProtos in the file: a slice takes them as they are (attributes,
bodies, domains), names its tensors as the file does, keeps the initializers it reads, and makes every
other value it reads a graph input and every value read outside it a graph output, with their types. Any
other graph (YAML, xcir, JSON, TF, torch) is emitted node by node where the node's op is an ONNX op and its
attributes are ONNX attributes; where one is not, `Unmappable` says which, and the caller falls back to
xcviz's NumPy reference (and says so).
"""
from __future__ import annotations

import os
import threading

import numpy as np

from ..ir import Graph, format_ref, parse_ref

EMIT_OPSET = 21   # the opset an emitted model declares (onnxruntime 1.2x runs it; YAML graphs use ONNX names)


class Unmappable(Exception):
    """This part of the graph has no ONNX form; the message names the first node that has none."""


_MODELS: dict[tuple, tuple] = {}   # (path, size, mtime) -> (model, {node name: NodeProto})
_LOCK = threading.Lock()


def _source_protos(graph: Graph):
    """(model, node name -> NodeProto) of the ONNX file `graph` was loaded from, named as the loader names
    nodes (the node's name, or op_type_i, made unique); None when the graph is not from an ONNX file."""
    src = graph.source
    if not src or not src.lower().endswith(".onnx") or not os.path.isfile(src):
        return None
    st = os.stat(src)
    key = (os.path.abspath(src), st.st_size, st.st_mtime_ns)
    with _LOCK:
        hit = _MODELS.get(key)
        if hit is None:
            import onnx

            model = onnx.load(src, load_external_data=False)
            if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
                from onnx.external_data_helper import load_external_data_for_model

                load_external_data_for_model(model, os.path.dirname(os.path.abspath(src)))
            protos, names = {}, set()
            for i, n in enumerate(model.graph.node):
                base = n.name or f"{n.op_type}_{i}"
                name, k = base, 1
                while name in names:
                    name, k = f"{base}_{k}", k + 1
                names.add(name)
                protos[name] = n
            _MODELS.clear()  # one model at a time: a big model's protos are not kept for the next one
            hit = _MODELS[key] = (model, protos)
    return hit


def _elem(v) -> int:
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype)


def _check_value(ref: str, v) -> None:
    if not isinstance(v, (np.ndarray, np.generic)):
        raise Unmappable(f"{ref!r} is a sequence or an optional: fed as a plain tensor only")


def subgraph_model(graph: Graph, members: list[int], entries: list[str], exits: list[str], values: dict):
    """(ModelProto, feed names by entry ref, output names in `exits` order) for the nodes `members`;
    `values` holds an example of every entry and exit (their dtypes and the entries' shapes)."""
    src = _source_protos(graph)
    nodes = [graph.nodes[i] for i in members if graph.nodes[i].op != "placeholder"]
    if src is not None and all(n.name in src[1] and src[1][n.name].op_type == n.op_type for n in nodes):
        return _sliced(graph, nodes, entries, exits, values, *src)
    return _emitted(graph, nodes, entries, exits, values)


def _onnx_name(ref: str, protos) -> str:
    """The file's name of a tensor: a node output's as its NodeProto writes it, a graph input's its own."""
    name, k = parse_ref(ref)
    proto = protos.get(name)
    if proto is not None and k < len(proto.output):
        return proto.output[k]
    return ref


def _sliced(graph: Graph, nodes, entries, exits, values, model, protos):
    from onnx import helper

    from onnx import numpy_helper

    inits = {t.name: t for t in model.graph.initializer}
    params = {v.name: v for v in graph.inputs if v.is_param}
    initializers, inputs, feeds = [], [], {}
    for r in entries:
        onnx_name = _onnx_name(r, protos)
        if r in params:   # a weight: inside the model, as the runtime keeps it (a stripped one with its seeded values)
            initializers.append(inits[onnx_name] if params[r].data is not None and onnx_name in inits
                                else numpy_helper.from_array(np.asarray(values[r]), onnx_name))
            continue
        _check_value(r, values[r])
        inputs.append(helper.make_tensor_value_info(onnx_name, _elem(values[r]), np.shape(values[r])))
        feeds[r] = onnx_name
    outs = []
    for r in exits:
        _check_value(r, values[r])
        outs.append(_onnx_name(r, protos))
    g = helper.make_graph([protos[n.name] for n in nodes], model.graph.name or "slice", inputs,
                          [helper.make_tensor_value_info(o, _elem(values[r]), None) for o, r in zip(outs, exits)],
                          initializers)
    m = helper.make_model(g, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    m.functions.extend(model.functions)  # local functions a node may call
    return m, feeds, outs


def _attr_value(v):
    """An xcviz attribute as helper.make_attribute takes it; Unmappable for bodies and anything else."""
    if isinstance(v, np.ndarray):
        from onnx import numpy_helper

        return numpy_helper.from_array(v)
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, float, str, bytes, np.integer, np.floating)):
        return v.item() if isinstance(v, np.generic) else v
    if isinstance(v, (list, tuple)) and all(isinstance(x, (int, float, str, np.integer, np.floating)) for x in v):
        return [x.item() if isinstance(x, np.generic) else x for x in v]
    raise Unmappable(f"attribute of type {type(v).__name__}")


def _name(ref: str) -> str:
    name, k = parse_ref(ref)
    return name if k == 0 else f"{name}__{k}"   # ':' is legal in ONNX, but '__' reads as a port in dumps


def _in_opset(name: str) -> bool:
    """Whether ONNX has `name` at the emitted opset (Swish, say, is newer than EMIT_OPSET)."""
    import onnx

    try:
        onnx.defs.get_schema(name, EMIT_OPSET, "")
        return True
    except onnx.defs.SchemaError:
        return False


def onnx_op(node) -> str | None:
    """The ONNX op a node is: its op_type where ONNX has it at EMIT_OPSET, else the first of its op's aliases
    that ONNX has there."""
    if _in_opset(node.op_type):
        return node.op_type
    from ..ops import REGISTRY

    opdef = REGISTRY.get(node.op) if node.known else None
    for name in (opdef.name, *opdef.aliases) if opdef is not None else ():
        if _in_opset(name):
            return name
    return None


def _emit_node(n, consts: list):
    """One NodeProto; an attribute ONNX takes as an input (Reshape's shape, Slice's starts) becomes a constant."""
    from onnx import helper, numpy_helper

    op_type = onnx_op(n)
    if op_type is None:
        raise Unmappable(f"node {n.name!r} ({n.op_type}) has no ONNX form")
    import onnx

    schema = onnx.defs.get_schema(op_type, EMIT_OPSET, "")
    formal = [f.name for f in schema.inputs]
    inputs = [_name(r) if r else "" for r in n.inputs]
    attrs = {}
    for k, v in n.attrs.items():
        if k.startswith("_"):
            continue
        if k in schema.attributes:
            try:
                attrs[k] = _attr_value(v)
            except Unmappable as e:
                raise Unmappable(f"node {n.name!r} ({n.op_type}): {e}") from None
        elif k in formal and isinstance(v, (list, tuple, int, np.ndarray)):
            pos = formal.index(k)
            inputs += [""] * (pos + 1 - len(inputs))
            if inputs[pos]:
                raise Unmappable(f"node {n.name!r} ({n.op_type}): {k!r} given twice")
            name = f"{n.name}__{k}"
            consts.append(numpy_helper.from_array(np.asarray(v, dtype=np.int64), name))
            inputs[pos] = name
        else:
            raise Unmappable(f"node {n.name!r} ({n.op_type}): attribute {k!r} is not ONNX's")
    outputs = [_name(format_ref(n.name, k)) for k in range(max(len(n.outputs), 1))]
    return helper.make_node(op_type, inputs, outputs, name=n.name, **attrs)


def _emitted(graph: Graph, nodes, entries, exits, values):
    from onnx import helper

    consts: list = []
    onnx_nodes = [_emit_node(n, consts) for n in nodes]
    params = {v.name for v in graph.inputs if v.is_param}
    initializers, inputs, feeds = consts, [], {}
    from onnx import numpy_helper

    for r in entries:
        if r in params and isinstance(values.get(r), np.ndarray):   # weights stay inside, as the runtime keeps them
            initializers.append(numpy_helper.from_array(np.asarray(values[r]), _name(r)))
            continue
        _check_value(r, values[r])
        inputs.append(helper.make_tensor_value_info(_name(r), _elem(values[r]), np.shape(values[r])))
        feeds[r] = _name(r)
    for r in exits:
        _check_value(r, values[r])
    outs = [_name(r) for r in exits]
    g = helper.make_graph(onnx_nodes, graph.name or "slice", inputs,
                          [helper.make_tensor_value_info(o, _elem(values[r]), None) for o, r in zip(outs, exits)],
                          initializers)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", EMIT_OPSET)], ir_version=10)
    return m, feeds, outs
