"""xcviz's own YAML/JSON schema: parse the text safely, then turn the mapping into a Graph."""
from __future__ import annotations

import json
import math
from typing import Any

import yaml

from ..errors import XcvizError
from ..ir import Graph, Node, TensorType, Value, canonical_dtype

NODE_KEYS = {"name", "op", "inputs", "control_inputs", "attrs", "device", "compile", "scope", "shape", "dtype",
             "outputs", "num_outputs", "doc"}
GRAPH_KEYS = {"name", "inputs", "nodes", "outputs", "doc", "dims", "schema_version", "description"}

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_Loader):  # type: ignore[misc, valid-type]
    """Safe loader that refuses duplicate keys (PyYAML silently keeps the last one)."""


def _construct_mapping(loader, node, deep=False):
    loader.flatten_mapping(node)
    mapping = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            raise XcvizError("mapping key is not a string", where=f"line {key_node.start_mark.line + 1}") from None
        if key in mapping:
            raise XcvizError(f"duplicate key {key!r}", where=f"line {key_node.start_mark.line + 1}, column {key_node.start_mark.column + 1}",
                             hint="each key may appear once per mapping")
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def parse_yaml(text: str, source: str) -> Any:
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except XcvizError as e:
        e.where = f"{source}: {e.where}" if e.where else source
        raise
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = (e.problem or e.context or "malformed YAML").strip()
        hint = "YAML tags that construct Python objects are refused" if "constructor" in problem else "check indentation, colons and quotes"
        raise XcvizError(f"malformed YAML: {problem}", hint=hint, where=where) from None
    except yaml.YAMLError as e:
        raise XcvizError(f"malformed YAML: {e}", where=source) from None


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise XcvizError(f"duplicate key {k!r}", hint="each key may appear once per object")
        out[k] = v
    return out


def parse_json(text: str, source: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise XcvizError(f"malformed JSON: {e.msg}", where=f"{source}:{e.lineno}:{e.colno}",
                         hint="check commas, brackets and quotes") from None
    except ValueError as e:
        raise XcvizError(f"malformed JSON: {e}", where=source, hint="use null or a number") from None
    except XcvizError as e:
        e.where = source
        raise


# ---- mapping -> Graph ------------------------------------------------------------------------
def _where(source: str, what: str) -> str:
    return f"{source}: {what}"


def _shape(value: Any, where: str) -> tuple | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise XcvizError(f"shape must be a list of dimensions, got {type(value).__name__} {value!r}"[:200], where=where,
                         hint="write shape: [1, 3, 224, 224]; use a name like batch for a symbolic dimension")
    dims = []
    for d in value:
        if isinstance(d, bool) or not isinstance(d, (int, str)) or (isinstance(d, str) and not d.strip()):
            raise XcvizError(f"dimension {d!r} is neither an integer nor a symbolic name", where=where)
        if isinstance(d, int) and (d < 0 or d > 2**40):
            raise XcvizError(f"dimension {d} is out of range (0 .. 2^40)", where=where)
        dims.append(d)
    return tuple(dims)


def _dtype(value: Any, where: str) -> str | None:
    if value is None:
        return None
    dt = canonical_dtype(str(value)) if isinstance(value, str) else None
    if dt is None:
        raise XcvizError(f"unknown dtype {value!r}", where=where, hint="use float32, float16, bfloat16, int64, int32, bool, ...")
    return dt


def _str_list(value: Any, field: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise XcvizError(f"{field} must be a list of tensor names", where=where, hint=f"{field}: [x, conv1:0]")
    return tuple(value)


def _check_number(value: Any, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise XcvizError("NaN or infinite number in attributes", where=where)


def graph_from_mapping(data: Any, source: str) -> Graph:
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        raise XcvizError(f"graph file must be a mapping with `nodes`, got {kind}", where=source,
                         hint="see graphs/seed_demo.yaml for the schema")
    unknown = set(data) - GRAPH_KEYS
    if "nodes" not in data:
        raise XcvizError("graph has no `nodes` list", where=source, hint="see graphs/seed_demo.yaml for the schema")
    if unknown:
        raise XcvizError(f"unknown top-level key(s) {', '.join(sorted(map(str, unknown)))}", where=source,
                         hint="allowed: " + ", ".join(sorted(GRAPH_KEYS)))
    name = data.get("name") or (source.rsplit("/", 1)[-1].split(".")[0] if source else "graph")
    if not isinstance(name, str):
        raise XcvizError("graph `name` must be a string", where=source)
    nodes_data = data["nodes"]
    if not isinstance(nodes_data, list):
        raise XcvizError(f"`nodes` must be a list, got {type(nodes_data).__name__}", where=source,
                         hint="write each node as a list item: `- name: c1`")
    inputs_data = data.get("inputs") or []
    if not isinstance(inputs_data, list):
        raise XcvizError("`inputs` must be a list", where=source, hint="- {name: x, shape: [1, 3], dtype: float32}")
    inputs = []
    for i, item in enumerate(inputs_data):
        where = _where(source, f"inputs[{i}]")
        if isinstance(item, str):
            inputs.append(Value(item))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise XcvizError("each input needs a string `name`", where=where)
        extra = set(item) - {"name", "shape", "dtype", "doc"}
        if extra:
            raise XcvizError(f"unknown input key(s) {', '.join(sorted(map(str, extra)))}", where=where)
        inputs.append(Value(item["name"], TensorType(_shape(item.get("shape"), where), _dtype(item.get("dtype"), where))))
    nodes = []
    for i, nd in enumerate(nodes_data):
        if not isinstance(nd, dict):
            raise XcvizError(f"node #{i} must be a mapping, got {type(nd).__name__}", where=_where(source, f"nodes[{i}]"))
        nname = nd.get("name")
        where = _where(source, f"node {nname!r}" if isinstance(nname, str) else f"nodes[{i}]")
        if not isinstance(nname, str) or not nname:
            raise XcvizError("node has no `name`", where=where, hint="every node needs a unique string name")
        op = nd.get("op")
        if not isinstance(op, str) or not op:
            raise XcvizError("node has no `op`", where=where, hint="e.g. op: conv2d (see `xcviz ops`)")
        extra = set(nd) - NODE_KEYS
        if extra:
            raise XcvizError(f"unknown node key(s) {', '.join(sorted(map(str, extra)))}", where=where,
                             hint="allowed: " + ", ".join(sorted(NODE_KEYS)))
        attrs = nd.get("attrs") or {}
        if not isinstance(attrs, dict):
            raise XcvizError("`attrs` must be a mapping", where=where)
        for v in attrs.values():
            _check_number(v, where)
        compile_ = nd.get("compile")
        if compile_ is not None and not isinstance(compile_, bool):
            raise XcvizError("`compile` must be true or false", where=where)
        for key in ("device", "scope"):
            if nd.get(key) is not None and not isinstance(nd[key], str):
                raise XcvizError(f"`{key}` must be a string", where=where)
        outputs: list[TensorType] = []
        if nd.get("outputs") is not None:
            outs = nd["outputs"]
            if not isinstance(outs, list) or not all(isinstance(o, dict) for o in outs):
                raise XcvizError("`outputs` must be a list of {shape, dtype}", where=where)
            outputs = [TensorType(_shape(o.get("shape"), where), _dtype(o.get("dtype"), where)) for o in outs]
        elif "shape" in nd or "dtype" in nd:
            outputs = [TensorType(_shape(nd.get("shape"), where), _dtype(nd.get("dtype"), where))]
        n_out = nd.get("num_outputs")
        if n_out is not None:
            if isinstance(n_out, bool) or not isinstance(n_out, int) or not 0 <= n_out <= 4096:
                raise XcvizError("`num_outputs` must be an integer in 0..4096", where=where)
            outputs += [TensorType()] * (n_out - len(outputs))
        nodes.append(Node(
            name=nname, op=op, op_type=op,
            inputs=_str_list(nd.get("inputs"), "inputs", where),
            control_inputs=_str_list(nd.get("control_inputs"), "control_inputs", where),
            attrs=attrs, device=nd.get("device"), compile=compile_, scope=nd.get("scope"),
            outputs=outputs, where=where,
        ))
    outputs = _str_list(data.get("outputs"), "outputs", _where(source, "outputs"))
    dims = data.get("dims") or {}
    if not isinstance(dims, dict) or not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0 for k, v in dims.items()):
        raise XcvizError("`dims` must map symbolic names to non-negative integers", where=source)
    return Graph(name=name, inputs=inputs, nodes=nodes, outputs=list(outputs), source=source, dims=dict(dims))
