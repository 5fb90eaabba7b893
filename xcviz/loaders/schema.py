"""xcviz's own YAML/JSON schema: the parsed mapping -> a Graph (nodes, inputs, outputs, dims), checked key by key."""
from __future__ import annotations

import math
from operator import itemgetter
from typing import Any

from ..errors import XcvizError
from ..ir import Graph, Node, TensorType, Value, canonical_dtype, positions_by_name, seeded, short
from ..passes.columns import Gathered
from .parse import DEFAULT_MAX_DEPTH, parsed_keys

NODE_KEYS = {"name", "op", "inputs", "control_inputs", "attrs", "device", "compile", "scope", "shape", "dtype",
             "outputs", "num_outputs", "doc"}
GRAPH_KEYS = {"name", "inputs", "nodes", "outputs", "doc", "dims", "schema_version", "description"}


# ---- mapping -> Graph ------------------------------------------------------------------------
def where_text(source: str, what: str) -> str:
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
            raise XcvizError(f"dimension {d!r} is neither an integer nor a symbolic name"[:200], where=where,
                             hint="write sizes as integers, or a name like batch for a symbolic dimension")
        if isinstance(d, int) and (d < 0 or d > 2**40):
            raise XcvizError(f"dimension {d} is out of range (0 .. 2^40)"[:200], where=where,
                             hint="sizes are non-negative integers; use a name like batch for an unknown size")
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


def check_attr(key: Any, value: Any, where: str, max_depth: int) -> None:
    """Attribute values are plain data: null, bool, finite numbers, strings, lists and string-keyed mappings."""
    if isinstance(value, (str, int)) or value is None:  # the common case, bool included
        return
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, float):
            if not math.isfinite(v):
                raise XcvizError(f"attribute {key!r} holds NaN or an infinite number", where=where,
                                 hint="attributes must be finite numbers")
        elif isinstance(v, (list, tuple, dict)):
            if depth > max_depth:
                raise XcvizError(f"attribute {key!r} nests deeper than {max_depth} levels", where=where,
                                 hint="flatten it, or raise the limit with --max-depth")
            if isinstance(v, dict):
                for k in v:
                    if not isinstance(k, str):
                        raise XcvizError(f"attribute {key!r} has a non-string key {k!r}"[:200], where=where,
                                         hint="quote the key")
                items = v.values()
            else:
                items = v
            stack.extend((x, depth + 1) for x in items if not isinstance(x, (str, int)) or isinstance(x, bool))
        elif not (v is None or isinstance(v, (str, int))):
            raise XcvizError(f"attribute {key!r} holds a {type(v).__name__}, not plain data", where=where,
                             hint="use numbers, strings, booleans, lists or mappings (quote dates and tagged values)")


_isfinite = math.isfinite
_FAST_NODE_KEYS = frozenset({"name", "op", "inputs", "control_inputs", "attrs", "device", "compile", "scope", "doc",
                             "shape", "dtype"})


def plain_attrs(attrs: dict) -> bool:
    """True if every attribute has a string name and a str/int/bool/None or finite float value (nothing
    left to check)."""
    for k, v in attrs.items():
        if type(k) is not str or not (v is None or type(v) is str or type(v) is int or type(v) is bool
                                      or type(v) is float and _isfinite(v)):
            return False
    return True


def _node(nd: Any, i: int, source: str, max_depth: int) -> Node:
    """One node's mapping -> Node, every check in order (the first failing one is the error)."""
    if not isinstance(nd, dict):
        raise XcvizError(f"node #{i} must be a mapping, got {type(nd).__name__}", where=where_text(source, f"nodes[{i}]"),
                         hint="- {name: c1, op: conv2d, inputs: [x, w]}")
    nname = nd.get("name")
    where = where_text(source, f"node {short(nname)}" if isinstance(nname, str) else f"nodes[{i}]")
    if not isinstance(nname, str) or not nname:
        if nname is None or nname == "":
            raise XcvizError("node has no `name`", where=where, hint="every node needs a unique string name")
        raise XcvizError(f"node `name` must be a string, got {type(nname).__name__} {nname!r}"[:200], where=where,
                         hint="quote the name: name: \"1\"")
    op = nd.get("op")
    if not isinstance(op, str) or not op:
        if op is None or op == "":
            raise XcvizError("node has no `op`", where=where, hint="e.g. op: conv2d (see `xcviz ops`)")
        raise XcvizError(f"node `op` must be a string, got {type(op).__name__} {op!r}"[:200], where=where,
                         hint="e.g. op: conv2d (see `xcviz ops`)")
    extra = set(nd) - NODE_KEYS
    if extra:
        raise XcvizError(f"unknown node key(s) {', '.join(sorted(map(str, extra)))}", where=where,
                         hint="allowed: " + ", ".join(sorted(NODE_KEYS)))
    attrs = nd.get("attrs") or {}
    if not isinstance(attrs, dict):
        raise XcvizError("`attrs` must be a mapping", where=where, hint="attrs: {axis: 1}")
    for k, v in attrs.items():
        if not isinstance(k, str):
            raise XcvizError(f"attribute name {k!r} is not a string"[:200], where=where, hint="quote it")
        check_attr(k, v, where, max_depth)
    if nd.get("doc") is not None and not isinstance(nd["doc"], str):
        raise XcvizError("`doc` must be a string", where=where, hint="quote the text")
    compile_ = nd.get("compile")
    if compile_ is not None and not isinstance(compile_, bool):
        raise XcvizError("`compile` must be true or false", where=where, hint="compile: false forces the node off XLA")
    for key in ("device", "scope"):
        if nd.get(key) is not None and not isinstance(nd[key], str):
            raise XcvizError(f"`{key}` must be a string", where=where, hint="quote the text")
    outputs: list[TensorType] = []
    if nd.get("outputs") is not None:
        outs = nd["outputs"]
        if not isinstance(outs, list) or not all(isinstance(o, dict) for o in outs):
            raise XcvizError("`outputs` must be a list of {shape, dtype}", where=where,
                             hint="outputs: [{shape: [1, 8], dtype: float32}]")
        outputs = [TensorType(_shape(o.get("shape"), where), _dtype(o.get("dtype"), where)) for o in outs]
    elif "shape" in nd or "dtype" in nd:
        outputs = [TensorType(_shape(nd.get("shape"), where), _dtype(nd.get("dtype"), where))]
    n_out = nd.get("num_outputs")
    if n_out is not None:
        if isinstance(n_out, bool) or not isinstance(n_out, int) or not 0 <= n_out <= 4096:
            raise XcvizError("`num_outputs` must be an integer in 0..4096", where=where, hint="num_outputs: 2")
        outputs += [TensorType()] * (n_out - len(outputs))
    return Node(
        name=nname, op=op, op_type=op,
        inputs=_str_list(nd.get("inputs"), "inputs", where),
        control_inputs=_str_list(nd.get("control_inputs"), "control_inputs", where),
        attrs=attrs, device=nd.get("device"), compile=compile_, scope=nd.get("scope"),
        outputs=outputs, where=where,
    )


def _all_str(refs: list) -> bool:
    """All items are str: `"".join` checks that at C speed (and refs are short)."""
    try:
        "".join(refs)
    except TypeError:
        return False
    return True


def _each_node(nodes_data: list, source: str, max_depth: int, inputs: list[Value]):
    """The nodes, and on the way (while each node is in the CPU cache) their names, the flattened
    references and their count per node, the op types and which nodes have more than name, op and
    inputs; then the name index and each reference's position (see passes.columns.NodeColumns), and the number
    of keys in the node mappings; (nodes, index, Gathered or None, keys).

    References are checked to be strings once for the whole file; if one is not, the nodes are read
    again checking each node's in turn, so that the first bad node is the one reported."""
    try:
        nodes, names, refs, lens, op_types, special, keys = _node_loop(nodes_data, source, max_depth, False)
        "".join(refs)  # every reference a str (C speed); a TypeError otherwise
    except TypeError:
        nodes, names, refs, lens, op_types, special, keys = _node_loop(nodes_data, source, max_depth, True)
    n = len(nodes)
    ids = dict(zip(names, range(n)))  # (at C speed, as the look-ups below, not a store per node in the loop)
    if len(ids) != n or ":" in "".join(names):  # duplicates or names with ':': build works it out the careful way
        return nodes, ids, None, keys
    src = positions_by_name(ids, n, inputs, refs)
    return nodes, ids, Gathered(refs, src, lens, op_types, special), keys


def _node_loop(nodes_data: list, source: str, max_depth: int, strict: bool):
    nodes: list[Node] = []
    append = nodes.append
    fast_keys = _FAST_NODE_KEYS
    str_list = _all_str
    names: list[str] = []
    refs: list[str] = []
    lens: list[int] = []  # refs per node
    names_append, refs_ext, lens_append = names.append, refs.extend, lens.append
    declared: dict = {}  # (shape, dtype) as written -> its TensorType, checked once
    written: dict = {}  # the same for (repr(shape), dtype)
    same = {}.setdefault  # one object per distinct declared type
    plain = itemgetter("name", "op", "inputs")
    op_names = {}.setdefault
    op_types: list[str] = []
    special: list[int] = []  # nodes with more than name, op and inputs
    op_types_append, special_append = op_types.append, special.append
    typed = itemgetter("name", "op", "inputs", "shape", "dtype")
    keys = 0  # keys in the node mappings (to detect repeated keys, see parse_json_unchecked)
    for i, nd in enumerate(nodes_data):
        # Fast path for the plain nodes that make up big graphs; anything else (or anything wrong) goes
        # through _node, which repeats every check in order and so raises exactly the usual error.
        # Fast-path nodes get no `where` text: it is made from the name only if an error needs it
        # (ir.node_where), which saves a repr and a string per node.
        node = None
        if type(nd) is dict:
            if len(nd) == 3:  # name, op, inputs and nothing else: the bulk of a big graph
                try:
                    nname, op, ins = plain(nd)
                except KeyError:
                    nname = op = ins = None
                if (type(nname) is str and nname and type(op) is str and op and type(ins) is list
                        and (not strict or str_list(ins))):
                    op = op_names(op, op)  # one string object per op name: later look-ups hit by identity
                    ins_t = tuple(ins)
                    append(Node(nname, op, op, ins_t, (), {}, None, None, None, [], True, None, None))
                    op_types_append(op)
                    names_append(nname)
                    refs_ext(ins_t)
                    lens_append(len(ins_t))
                    keys += 3
                    continue
            elif len(nd) == 5:  # ... and a declared type, as exported models have on every node
                try:
                    nname, op, ins, shape, dtype = typed(nd)
                except KeyError:
                    nname = None
                if (type(nname) is str and nname and type(op) is str and op and type(ins) is list
                        and (not strict or str_list(ins)) and type(shape) is list and type(dtype) is str):
                    # repr tells apart what `==` does not (True, 1 and 1.0; a valid size is only 1)
                    key = (repr(shape), dtype)
                    t = written.get(key)
                    if t is None:
                        t = written[key] = declared_type(shape, dtype, same)
                    if t:
                        op = op_names(op, op)
                        ins_t = tuple(ins)
                        append(Node(nname, op, op, ins_t, (), {}, None, None, None, [t], True, None, None))
                        op_types_append(op)
                        special_append(i)
                        names_append(nname)
                        refs_ext(ins_t)
                        lens_append(len(ins_t))
                        keys += 5
                        continue
            dget = nd.get
            nname, op, ins = dget("name"), dget("op"), dget("inputs")
            if type(nname) is str and nname and type(op) is str and op:
                if nd.keys() <= fast_keys and (ins is None or type(ins) is list and str_list(ins)):
                    attrs, c, dev, scope, doc, ctl = (dget("attrs"), dget("compile"), dget("device"),
                                                      dget("scope"), dget("doc"), dget("control_inputs"))
                    outs = []
                    if "shape" in nd or "dtype" in nd:
                        shape, dtype = dget("shape"), dget("dtype")
                        # with the dims' types: True == 1 and 1.0 == 1, but only 1 is a valid size
                        key = ((tuple(shape), tuple(map(type, shape))) if type(shape) is list else shape, dtype)
                        try:
                            t = declared.get(key)
                        except TypeError:  # unhashable: not a valid shape or dtype anyway
                            t = False
                        if t is None:
                            t = declared[key] = declared_type(shape, dtype, same)
                        outs = [t] if t else None
                    if (outs is not None and (not attrs or type(attrs) is dict and plain_attrs(attrs))
                            and (c is None or type(c) is bool) and (dev is None or type(dev) is str)
                            and (scope is None or type(scope) is str) and (doc is None or type(doc) is str)
                            and (ctl is None or type(ctl) is list and all([type(r) is str for r in ctl]))):
                        node = Node(nname, op, op, tuple(ins) if ins else (), tuple(ctl) if ctl else (),
                                    attrs if attrs else {}, dev, c, scope, outs, True, None, None)
                        keys += len(nd) + (len(attrs) if attrs else 0)  # (plain values hold no mappings)
        if node is None:
            node = _node(nd, i, source, max_depth)
            keys += parsed_keys(nd)
        append(node)  # (the same bookkeeping as above, for nodes with more than name, op and inputs)
        op_types_append(node.op_type)
        special_append(i)
        names_append(node.name)
        refs_ext(node.inputs)
        lens_append(len(node.inputs))
    return nodes, names, refs, lens, op_types, special, keys


def declared_type(shape: Any, dtype: Any, same) -> TensorType | bool:
    """A node's `shape`/`dtype` as a TensorType (`same`: interns it), or False when they need _node's
    checks (and message)."""
    try:
        t = TensorType(_shape(shape, ""), _dtype(dtype, ""))
    except XcvizError:
        return False
    return same(t, t)


def graph_from_mapping(data: Any, source: str, *, max_nodes: int | None = None,
                       max_depth: int = DEFAULT_MAX_DEPTH, keys: int | None = None) -> Graph:
    """The mapping read from a YAML/JSON file -> Graph (to be finished by passes.prepare). `keys` (from
    parse_json_unchecked): the keys the text names; fewer in `data` means a repeated key, an error
    (check_keys then says where)."""
    return read_mapping(data, source, max_nodes, max_depth, keys)[0]


def read_mapping(data: Any, source: str, max_nodes: int | None, max_depth: int,
                 keys: int | None = None) -> tuple[Graph, Gathered | None]:
    """graph_from_mapping, and what it gathered on its way through the nodes for passes.prepare
    (passes.columns.Gathered), or None."""
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
    name, inputs = graph_header(data, source, max_nodes)
    nodes_data = data["nodes"]
    nodes, index, gathered, node_keys = _each_node(nodes_data, source, max_depth, inputs)
    if keys is not None and keys != len(data) + node_keys + sum(parsed_keys(v) for k, v in data.items() if k != "nodes"):
        raise XcvizError("duplicate key", where=source, hint="each key may appear once per object")
    outputs, dims = graph_tail(data, source)
    return seeded(Graph(name=name, inputs=inputs, nodes=nodes, outputs=outputs, source=source, dims=dims),
                  index=index), gathered


def graph_header(data: dict, source: str, max_nodes: int | None) -> tuple[str, list[Value]]:
    """The graph's name and inputs, checked (and `nodes` checked to be a list within max_nodes)."""
    name = data.get("name") or (source.rsplit("/", 1)[-1].split(".")[0] if source else "graph")
    if not isinstance(name, str):
        raise XcvizError("graph `name` must be a string", where=source, hint="quote it: name: \"my_model\"")
    nodes_data = data["nodes"]
    if not isinstance(nodes_data, list):
        raise XcvizError(f"`nodes` must be a list, got {type(nodes_data).__name__}", where=where_text(source, "nodes"),
                         hint="write each node as a list item: `- name: c1`")
    if max_nodes is not None and len(nodes_data) > max_nodes:
        raise XcvizError(f"graph has {len(nodes_data)} nodes, over the limit of {max_nodes}", where=source,
                         hint="raise it with --max-nodes")
    for key in ("doc", "description"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise XcvizError(f"`{key}` must be a string", where=where_text(source, key), hint="quote the text")
    inputs_data = data.get("inputs") or []
    if not isinstance(inputs_data, list):
        raise XcvizError("`inputs` must be a list", where=source, hint="- {name: x, shape: [1, 3], dtype: float32}")
    inputs = []
    for i, item in enumerate(inputs_data):
        where = where_text(source, f"inputs[{i}]")
        if isinstance(item, str):
            inputs.append(Value(item))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise XcvizError("each input needs a string `name`", where=where, hint="- {name: x, shape: [1, 3], dtype: float32}")
        extra = set(item) - {"name", "shape", "dtype", "doc", "param"}
        if extra:
            raise XcvizError(f"unknown input key(s) {', '.join(sorted(map(str, extra)))}"[:300], where=where,
                                 hint="allowed: name, shape, dtype, doc, param")
        if not isinstance(item.get("param", False), bool):
            raise XcvizError("`param` must be true or false", where=where, hint="param: true marks a weight")
        inputs.append(Value(item["name"], TensorType(_shape(item.get("shape"), where), _dtype(item.get("dtype"), where)),
                            param=item.get("param", False)))
    return name, inputs


def graph_tail(data: dict, source: str) -> tuple[list[str], dict]:
    """The graph's outputs and dims, checked."""
    outputs = _str_list(data.get("outputs"), "outputs", where_text(source, "outputs"))
    dims = data.get("dims") or {}
    if not isinstance(dims, dict) or not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0 for k, v in dims.items()):
        raise XcvizError("`dims` must map symbolic names to non-negative integers", where=where_text(source, "dims"),
                         hint="dims: {batch: 8}")
    return list(outputs), dict(dims)
