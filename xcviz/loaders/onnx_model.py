"""ONNX models (binary .onnx and the protobuf JSON form) -> Graph, with ONNX shape inference."""
from __future__ import annotations

import os
from typing import Any

from msgspec.structs import replace as replace_struct

from ..errors import XcvizError
from ..ir import Body, Graph, Node, TensorType, Value, canonical_dtype
from ..ir.containers import OptionalType, SequenceType

STANDARD_DOMAINS = ("", "ai.onnx", "ai.onnx.ml")


def _s(text) -> str:
    """A protobuf string field; proto2 hands back bytes when a hostile file holds invalid UTF-8."""
    return text.decode("utf-8", "replace") if isinstance(text, bytes) else text


def _dtype(elem_type: int) -> str | None:
    import onnx

    if not elem_type:
        return None
    try:
        np_dtype = onnx.helper.tensor_dtype_to_np_dtype(elem_type)
    except Exception:  # noqa: BLE001 - unknown enum value in a hostile file
        return None
    return "bfloat16" if elem_type == onnx.TensorProto.BFLOAT16 else canonical_dtype(str(np_dtype)) or (
        "string" if elem_type == onnx.TensorProto.STRING else None)


def _value_type(vi) -> TensorType:
    return _type(vi.type)


def _type(tp) -> TensorType:
    """An ONNX TypeProto: a tensor, a sequence of tensors or an optional (ir.containers); others unknown."""
    kind = tp.WhichOneof("value")
    if kind in ("sequence_type", "optional_type"):
        inner = _type(tp.sequence_type.elem_type if kind == "sequence_type" else tp.optional_type.elem_type)
        if kind == "sequence_type":
            return SequenceType(inner.shape, inner.dtype) if type(inner) is TensorType else TensorType()
        return TensorType() if isinstance(inner, OptionalType) else OptionalType(
            inner.shape, inner.dtype, isinstance(inner, SequenceType))
    if kind != "tensor_type":
        return TensorType()
    t = tp.tensor_type
    shape = None
    if t.HasField("shape"):
        dims = []
        for d in t.shape.dim:
            if d.HasField("dim_value"):
                dims.append(int(d.dim_value))
            elif d.dim_param:
                dims.append(_s(d.dim_param))
            else:
                dims.append("?")
        shape = tuple(dims)
    return TensorType(shape, _dtype(t.elem_type))


def _attr(a, opset: tuple = (), bodies: dict | None = None) -> Any:
    import onnx
    from onnx import numpy_helper

    v = onnx.helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, onnx.TensorProto):
        return numpy_helper.to_array(v)
    if isinstance(v, list):
        return [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in v
                if not isinstance(x, (onnx.GraphProto, onnx.TensorProto))]
    if isinstance(v, onnx.GraphProto):
        return _subgraph(v, opset, {} if bodies is None else bodies)
    if isinstance(v, onnx.TypeProto):  # Optional's `type`: kept as its text ("f32[2]", "seq<f32[?]>")
        return str(_type(v))
    return v


def _subgraph(g, opset: tuple, bodies: dict):
    """A body attribute kept whole (ir.Body), its Graph built here, once: every later reader
    (clustering, cost, runtime, renderers) takes `.graph`. A body that does not build keeps the error, which
    clustering gives as its node's reason and a run raises. `bodies`: this load's bodies by their bytes, so
    that equal bodies (an exporter's many identical If branches) are built once and shared."""
    import hashlib

    data = g.SerializeToString()
    if data in bodies:
        return bodies[data]
    label = f"<subgraph {_s(g.name)} #{hashlib.sha1(data).hexdigest()[:10]}>"
    outer = tuple(free_names(g))
    inits = {t.name for t in g.initializer}
    inputs = tuple(i.name for i in g.input if i.name not in inits)
    graph = error = declared = None
    try:
        graph, declared = _body_graph(g, opset, outer, bodies)
    except Exception as e:  # noqa: BLE001 - a body that does not load is its node's reason, not a failed load
        error = e
    bodies[data] = Body(label, graph, opset, inputs, _output_types(g), outer, declared or {}, data, error)
    return bodies[data]


def _body_graph(g, opset: tuple, outer: tuple, bodies: dict) -> tuple[Graph, dict]:
    """The body as a finalized Graph (its outer-scope names are extra graph inputs, typed as the file types
    them), and each node's output types as the file gave them, before inference."""
    import onnx

    from ..passes.prepare import prepare

    model = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid(d, v) for d, v in opset])
    raw = graph_from_model(model, f"body {g.name!r}", outer=outer, bodies=bodies)
    declared = {n.name: list(n.outputs) for n in raw.nodes}
    return prepare(raw, onnx=True), declared


def _output_types(g) -> tuple:
    """The body's declared output types: fully known ones, unknown (TensorType()) for the rest."""
    import onnx

    got = []
    for o in g.output:
        t = o.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)
        known = o.type.HasField("tensor_type") and t.HasField("shape") and None not in dims
        try:
            dtype = canonical_dtype(str(onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)))
        except Exception:  # noqa: BLE001 - no or an exotic element type: the type stays unknown
            dtype = None
        got.append(TensorType(dims, dtype) if known and dtype else TensorType())
    return tuple(got)


def free_names(g) -> list[str]:
    """Tensor names a (sub)graph reads but does not define: its outer-scope references, nested bodies' included."""
    import onnx

    defined = {_s(i.name) for i in g.input} | {_s(t.name) for t in g.initializer}
    free: list[str] = []
    for n in g.node:
        used = [_s(t) for t in n.input if t]
        for a in n.attribute:
            for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                used += free_names(sub)
        free += [t for t in used if t not in defined and t not in free]
        defined.update(_s(o) for o in n.output if o)
    return free


_DATA_FIELDS = ("raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")


def _shape_only(t) -> bool:
    """An initializer with dims but no values (and no external data): its structure without its weights."""
    n = 1
    for d in t.dims:
        n *= int(d)
    return n > 0 and not t.external_data and not any(len(getattr(t, f)) for f in _DATA_FIELDS)


def check_external_data(model, folder: str, source: str) -> None:
    """Refuse external-data locations that escape the model's folder (absolute, '..', symlinks)."""
    from onnx.external_data_helper import _get_all_tensors, uses_external_data

    from .budget import current

    root = os.path.realpath(folder)
    read: set[str] = set()
    for tensor in _get_all_tensors(model):
        if not uses_external_data(tensor):
            continue
        location = _s(next((e.value for e in tensor.external_data if _s(e.key) == "location"), ""))
        target = os.path.realpath(os.path.join(root, location))
        if os.path.isabs(location) or not (target == root or target.startswith(root + os.sep)):
            raise XcvizError(f"external data of tensor {_s(tensor.name)!r} points outside the model's folder ({location!r})",
                             where=source, hint="keep external data files beside the model")
        if not os.path.isfile(target):
            raise XcvizError(f"external data file {location!r} of tensor {_s(tensor.name)!r} is missing", where=source,
                             hint="copy the weights file next to the model")
        if target not in read:  # (what is read from beside the model counts against --max-file-bytes too)
            read.add(target)
            current().take(os.path.getsize(target), f"external data file {location!r}", source)


def read_onnx_bytes(data: bytes, source: str, folder: str):
    import onnx
    from google.protobuf.message import DecodeError

    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as e:
        raise XcvizError(f"not a valid ONNX protobuf ({e.__class__.__name__})", where=source,
                         hint="the file may be truncated or not an ONNX model") from None
    if not model.HasField("graph"):
        raise XcvizError("ONNX model has no graph", where=source, hint="the file may be truncated or not an ONNX model")
    check_external_data(model, folder, source)
    from onnx.external_data_helper import load_external_data_for_model

    try:
        load_external_data_for_model(model, folder)
    except Exception as e:  # noqa: BLE001
        raise XcvizError(f"cannot read external data: {e}"[:300], where=source, hint="the weights file may be truncated") from None
    return model


def read_onnx_json(data: dict, text: str, source: str):
    import onnx
    from google.protobuf import json_format

    model = onnx.ModelProto()
    try:
        json_format.Parse(text, model)
    except json_format.ParseError as e:
        raise XcvizError(f"not a valid ONNX JSON model: {e}", where=source,
                         hint="expected protobuf json_format of a ModelProto (graph.node[].opType, ...)") from None
    return model


def _coerces_2d_before_13(op_type: str) -> bool:
    """Before opset 13 Softmax, LogSoftmax and Hardmax coerce their input to 2-D at `axis` (default 1) and
    normalise over the flattened trailing block; from 13 on they work along `axis` (default -1). Their entries
    say so with a `coerce_2d` attribute, which the loader sets."""
    from ..ops import REGISTRY

    opdef = REGISTRY.get(op_type)
    return opdef is not None and op_type in opdef.aliases and "coerce_2d" in opdef.attrs


def _default_opset(model) -> int | None:
    for opset in model.opset_import:
        if _s(opset.domain) in ("", "ai.onnx"):
            return int(opset.version)
    return None


def _legacy_attrs(op_type: str, domain: str, opset: int | None, attrs: dict) -> None:
    """Spell out the semantics older opsets give an op, so every backend computes the file's opset."""
    if domain in ("", "ai.onnx") and opset is not None and opset < 13 and _coerces_2d_before_13(op_type):
        attrs.setdefault("axis", 1)
        attrs["coerce_2d"] = 1
    if op_type == "RoiAlign" and domain in ("", "ai.onnx") and opset is not None and opset < 16:
        attrs.setdefault("coordinate_transformation_mode", "output_half_pixel")  # opset 10's only behaviour
    if op_type == "DFT" and domain in ("", "ai.onnx") and opset is not None and opset < 20:
        attrs.setdefault("axis", 1)  # opsets 17-19 default to axis 1; opset 20 takes it as an input (default -2)


def _for_inference(model):
    """onnx <= 1.23's STFT shape inference reads a missing `onesided` as 0, where the schema's default is 1
    (fixed in onnx/onnx#7731): a copy with the default written out, so the inferred shapes are the op's."""
    if not any(n.op_type == "STFT" and all(a.name != "onesided" for a in n.attribute) for n in model.graph.node):
        return model
    from onnx import helper

    fixed = type(model)()
    fixed.CopyFrom(model)
    for n in fixed.graph.node:
        if n.op_type == "STFT" and all(a.name != "onesided" for a in n.attribute):
            n.attribute.append(helper.make_attribute("onesided", 1))
    return fixed


def graph_from_model(model, source: str, outer: tuple[str, ...] = (), bodies: dict | None = None) -> Graph:
    """`outer`: for a body, the outer-scope names it reads; they become inputs of the body's graph. `bodies`:
    the bodies this load has built so far (by their bytes), shared with the bodies' own graphs."""
    import onnx
    from onnx import numpy_helper

    bodies = {} if bodies is None else bodies
    opset = _default_opset(model)
    opsets = tuple((_s(o.domain), int(o.version)) for o in model.opset_import)
    try:
        inferred = onnx.shape_inference.infer_shapes(_for_inference(model), strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - inference is a bonus; the file's own types still count
        inferred = model
    g = inferred.graph
    types: dict[str, TensorType] = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        types[_s(vi.name)] = _value_type(vi)

    inputs: list[Value] = []
    seen_inputs = set()
    for init in g.initializer:
        if _shape_only(init):
            # weights stripped to share a model's structure: a weight (param) of the declared type without values
            # (cluster, stats, render work; run and validate fill it with seeded random values and say so)
            inputs.append(Value(_s(init.name), TensorType(tuple(int(d) for d in init.dims), _dtype(init.data_type)),
                                param=True))
            seen_inputs.add(_s(init.name))
            continue
        try:
            arr = numpy_helper.to_array(init)
        except Exception as e:  # noqa: BLE001
            raise XcvizError(f"cannot read initializer {_s(init.name)!r}: {e}"[:300], where=source,
                             hint="the file may be truncated or corrupted") from None
        dt = canonical_dtype(str(arr.dtype)) or _dtype(init.data_type)
        inputs.append(Value(_s(init.name), TensorType(tuple(int(d) for d in arr.shape), dt), data=arr))
        seen_inputs.add(_s(init.name))
    for vi in g.input:
        if _s(vi.name) not in seen_inputs:
            inputs.insert(len(inputs), Value(_s(vi.name), types.get(_s(vi.name), TensorType())))
            seen_inputs.add(_s(vi.name))
    for ref in outer:
        if ref not in seen_inputs:
            inputs.append(Value(ref, types.get(ref, TensorType())))
            seen_inputs.add(ref)
    # graph inputs first (activations), then weights: a stable, readable order
    inputs.sort(key=lambda v: v.data is not None)

    producer: dict[str, str] = {}
    names: set[str] = set()
    nodes: list[Node] = []
    for i, n in enumerate(g.node):
        op_type = _s(n.op_type)
        base = _s(n.name) or f"{op_type}_{i}"
        name, k = base, 1
        while name in names:
            name, k = f"{base}_{k}", k + 1
        names.add(name)
        node_outputs = [_s(o) for o in n.output]
        for j, out in enumerate(node_outputs):
            if out:
                if out in producer:
                    first = producer[out].split(":")[0]
                    raise XcvizError(f"tensor {out!r} is produced twice: by node {first!r} and by node #{i} {name!r} "
                                     f"({op_type})", where=source, hint="every ONNX tensor name must have one producer")
                producer[out] = name if j == 0 else f"{name}:{j}"
        domain = _s(n.domain) or ""
        attrs = {_s(a.name): _attr(a, opsets, bodies) for a in n.attribute}
        _legacy_attrs(op_type, domain, opset, attrs)
        node_inputs = tuple(_s(t) for t in n.input)
        reads = [t for v in attrs.values() for t in getattr(v, "outer", ())]
        if reads:  # outer-scope tensors a body reads: real inputs of the node, so order and liveness see them
            reads = list(dict.fromkeys(reads))
            attrs["_n_inputs"], attrs["_outer"] = len(node_inputs), reads
            node_inputs += tuple(reads)
        note = None
        if domain not in STANDARD_DOMAINS:
            note = f"custom op {domain}::{op_type}"
        outputs = [types.get(o, TensorType()) if o else TensorType() for o in node_outputs]
        nodes.append(Node(name=name, op=op_type, op_type=op_type, inputs=node_inputs, attrs=attrs,
                          outputs=outputs, note=note, where=f"{source}: node #{i} {name!r} ({op_type})"))
    # rewrite tensor names into xcviz refs
    nodes = [replace_struct(node, inputs=tuple(producer.get(t, t) if t else "" for t in node.inputs)) for node in nodes]
    outputs = [producer.get(_s(o.name), _s(o.name)) for o in g.output]
    output_names = {ref: _s(o.name) for ref, o in zip(outputs, g.output) if ref != _s(o.name)}
    name = _s(g.name) or (os.path.basename(source).split(".")[0] if source else "model")
    return Graph(name=name, inputs=inputs, nodes=nodes, outputs=outputs, source=source, output_names=output_names)
