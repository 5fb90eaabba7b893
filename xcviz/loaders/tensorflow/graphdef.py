"""A TensorFlow GraphDef (its NodeDefs) -> xcviz Graph: TF op names, control inputs, back edges, shapes."""
from __future__ import annotations

from ...errors import XcvizError
from ...ir import Graph, Node, TensorType, Value, canonical_dtype
from ...ops.tf.facts import BOOL_OUT, FIXED_OUT, OUT_DTYPE_ATTR
from .attrs import attr_value, shape_of

PREFIX = "tf."  # op_type of a node read from TensorFlow: TF names resolve to the TF-signature entries
BACK_EDGES = "_back_edges"  # Merge inputs from NextIteration: kept as an attribute, so the graph stays a DAG

# Attributes the loader turns into node fields (or types), not attrs.
_FIELDS = {"_output_shapes", "_XlaCompile", "_XlaInternalScope"}


def _out_dtypes(op: str, attrs: dict, n: int) -> list[str | None]:
    if op in BOOL_OUT:
        first = "bool"
    elif op in FIXED_OUT:
        first = FIXED_OUT[op]
    elif op in OUT_DTYPE_ATTR:
        first = attrs.get(OUT_DTYPE_ATTR[op]) if OUT_DTYPE_ATTR[op] else None
    else:
        first = attrs.get("dtype") if op in ("Const", "Placeholder", "ReadVariableOp", "RandomUniform",
                                              "RandomStandardNormal", "_Arg") and "T" not in attrs else None
        first = first or attrs.get("T") or attrs.get("dtype")
    out = [first] * n
    if op == "Merge" and n > 1:
        out[1] = "int32"
    if op.startswith("FusedBatchNorm") and attrs.get("U"):
        out[1:] = [attrs["U"]] * (n - 1)
    if isinstance(attrs.get("Tout"), list) and len(attrs["Tout"]) == n:
        out = list(attrs["Tout"])
    if isinstance(attrs.get("T"), list) and len(attrs["T"]) == n and op in ("While", "StatelessWhile", "IdentityN"):
        out = list(attrs["T"])
    return [canonical_dtype(d) if isinstance(d, str) else None for d in out]


def split_input(ref: str) -> tuple[str, bool]:
    """'^x' -> ('x', True); 'x:0' -> ('x', False); 'x:2' stays."""
    if ref.startswith("^"):
        return ref[1:], True
    return (ref[:-2] if ref.endswith(":0") else ref), False


def nodes_to_graph(node_defs, name: str, source: str, outputs: list[str] | None = None,
                   feeds: set[str] | None = None) -> Graph:
    """NodeDefs in file order -> Graph. Placeholders (and `feeds`) become graph inputs; `_Arg` stays a node
    (TF's pass sees it as one); graph outputs are `outputs`, else the `_Retval` inputs, else the sinks."""
    seen: set[str] = set()
    ops: dict[str, str] = {}
    for i, nd in enumerate(node_defs):
        if not nd.name:
            raise XcvizError(f"node #{i} has no name", where=source, hint="the GraphDef is malformed")
        if nd.name in seen:
            raise XcvizError(f"two nodes are named {nd.name!r}", where=source, hint="node names must be unique")
        seen.add(nd.name)
        ops[nd.name] = nd.op
    inputs: list[Value] = []
    nodes: list[Node] = []
    consumed: set[str] = set()
    node_by_name = {nd.name: nd for nd in node_defs}
    for i, nd in enumerate(node_defs):
        where = f"{source}: node {nd.name!r} ({nd.op})"
        attrs = {k: attr_value(v, where) for k, v in sorted(nd.attr.items()) if k not in _FIELDS}
        shapes = None
        if "_output_shapes" in nd.attr:
            shapes = [shape_of(s) for s in nd.attr["_output_shapes"].list.shape]
        data, ctrl, back = [], [], []
        for ref in nd.input:
            base, is_ctrl = split_input(ref)
            src = base.split(":")[0]
            if src not in ops:
                raise XcvizError(f"input {ref!r} names no node of the graph", where=where,
                                 hint="every input must be a node name, `name:k` or `^name`")
            consumed.add(src)
            if is_ctrl:
                ctrl.append(base)
            elif nd.op == "Merge" and ops[src] == "NextIteration":
                back.append(base)
            else:
                data.append(base)
        if back:
            attrs[BACK_EDGES] = back
        if (nd.op == "Placeholder" or (feeds and nd.name in feeds)) and not ctrl:
            dt = canonical_dtype(attrs.get("dtype") or "") if isinstance(attrs.get("dtype"), str) else None
            shape = attrs.get("shape") if isinstance(attrs.get("shape"), tuple) else (shapes[0] if shapes else None)
            inputs.append(Value(nd.name, TensorType(_sym(shape, nd.name), dt)))
            continue
        if not shapes and nd.op == "ReadVariableOp" and data:
            shapes = handle_shape(node_by_name.get(data[0].split(":")[0]))
        n_out = len(shapes) if shapes else 0
        dts = _out_dtypes(nd.op, attrs, max(n_out, 1))
        if nd.op in ("_Arg", "VarHandleOp") and (attrs.get("T") == "resource" or nd.op == "VarHandleOp"):
            # a resource handle has the type of its variable: xcviz's runs read a handle as the value
            shapes = handle_shape(nd) or shapes
            dt = attrs.get("dtype") if nd.op == "VarHandleOp" else (attrs.get("_handle_dtypes") or [None])[0]
            dts = [canonical_dtype(dt) if isinstance(dt, str) else None]
        outs = [TensorType(_sym(s, nd.name), d) for s, d in zip(shapes, dts)] if shapes else []
        compile_ = nd.attr["_XlaCompile"].b if "_XlaCompile" in nd.attr else None
        scope = nd.attr["_XlaInternalScope"].s.decode() if "_XlaInternalScope" in nd.attr else None
        nodes.append(Node(name=nd.name, op=PREFIX + nd.op, op_type=PREFIX + nd.op, inputs=tuple(data),
                          control_inputs=tuple(ctrl), attrs=attrs, device=nd.device or None, compile=compile_,
                          scope=scope, outputs=outs, where=where))
    if outputs is None:
        rets = [n.inputs[0] for n in nodes if n.op_type == PREFIX + "_Retval" and n.inputs]
        outputs = rets or [n.name for n in nodes if n.name not in consumed and n.op_type not in _NOT_OUTPUTS]
    return Graph(name=name, inputs=inputs, nodes=nodes, outputs=outputs, source=source)


_NOT_OUTPUTS = {PREFIX + o for o in ("NoOp", "_Retval", "Assert", "AssignVariableOp", "AssignAddVariableOp",
                                     "AssignSubVariableOp", "VarHandleOp")}


def handle_shape(nd) -> list | None:
    """The variable shape a resource handle carries: VarHandleOp's `shape`, an _Arg's `_handle_shapes`."""
    if nd is None:
        return None
    if nd.op == "VarHandleOp" and "shape" in nd.attr:
        return [shape_of(nd.attr["shape"].shape)]
    if "_handle_shapes" in nd.attr and len(nd.attr["_handle_shapes"].list.shape) == 1:
        return [shape_of(nd.attr["_handle_shapes"].list.shape[0])]
    return None


def _sym(shape, name: str):
    """Unknown dims (-1) read as "?", as the ONNX loader writes them."""
    if shape is None:
        return None
    return tuple(d if isinstance(d, int) and d >= 0 else "?" for d in shape)


