"""A .pt2 file's serialized program read straight from the archive's JSON (torch/_export/serde/schema.py)
into the FX graph, signature and weights graph_from_program reads. torch.export.load turns every JSON
object into a dataclass and every node's output into a fake tensor (minutes at 10^4 nodes); this keeps
only what xcviz uses. What it does not know raises Unreadable, and the caller uses torch.export.load."""
from __future__ import annotations

import operator
import re
import sys
import zipfile
from types import SimpleNamespace

import msgspec
import numpy as np

# a symbol in a size expression as torch writes it: Symbol('s77', positive=True, integer=True)
_SYMBOL = re.compile(r"Symbol\('([A-Za-z_][A-Za-z0-9_]*)'(?:, [a-z_]+=(?:True|False))*\)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXPR = re.compile(r"[A-Za-z0-9_ +*()-]+")
_SYMBOL_NAME = re.compile(r"[a-z]+[0-9]+")  # torch's size symbols: s77, u0
# the schema's enums -> torch's names (torch/_export/serde/serialize.py keeps these maps, but importing it
# costs seconds: it pulls in the compiler stack)
DTYPES = {"BYTE": "uint8", "CHAR": "int8", "UINT16": "uint16", "SHORT": "int16", "INT": "int32", "LONG": "int64",
          "HALF": "float16", "FLOAT": "float32", "DOUBLE": "float64", "COMPLEXHALF": "complex32",
          "COMPLEXFLOAT": "complex64", "COMPLEXDOUBLE": "complex128", "BOOL": "bool", "BFLOAT16": "bfloat16",
          "FLOAT8E4M3FN": "float8_e4m3fn", "FLOAT8E5M2": "float8_e5m2", "FLOAT8E4M3FNUZ": "float8_e4m3fnuz",
          "FLOAT8E5M2FNUZ": "float8_e5m2fnuz", "FLOAT8E8M0FNU": "float8_e8m0fnu", "UINT32": "uint32",
          "UINT64": "uint64"}
LAYOUTS = {"Strided": "strided"}
MEMORY_FORMATS = {"ContiguousFormat": "contiguous_format", "ChannelsLast": "channels_last",
                  "ChannelsLast3d": "channels_last_3d", "PreserveFormat": "preserve_format"}
WEIGHT_SPECS = {"parameter": ("PARAMETER", "parameter_name"), "buffer": ("BUFFER", "buffer_name"),
                "tensor_constant": ("CONSTANT_TENSOR", "tensor_constant_name")}


class Unreadable(Exception):
    """Something this reader does not cover (the reason is for debugging; the caller falls back)."""


class _Sym:
    """A symbolic size as graph_from_program reads one: `.node.expr`, a sympy expression."""

    __slots__ = ("node", "expr")

    def __init__(self, expr):
        self.node, self.expr = self, expr


class _Val:
    """A tensor's metadata standing in for its fake tensor: shape (ints and _Sym) and torch dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def read_archive(path: str):
    """The program as graph_from_program reads one (graph, graph_signature, state_dict, constants); raises
    Unreadable on anything unfamiliar."""
    import torch
    from torch._export.serde import schema

    def enum(cls, names):
        return {cls[k].value: getattr(torch, v) for k, v in names.items() if k in cls.__members__ and hasattr(torch, v)}

    ser = SimpleNamespace(dtype=enum(schema.ScalarType, DTYPES), layout=enum(schema.Layout, LAYOUTS),
                          memory_format=enum(schema.MemoryFormat, MEMORY_FORMATS))

    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            models = sorted(n for n in names if re.fullmatch(r"[^/]+/models/[^/]+\.json", n))
            if len(models) != 1:
                raise Unreadable(f"{len(models)} programs in the archive")
            root, model = models[0].split("/models/")
            model = model[:-len(".json")]
            byteorder = f"{root}/byteorder"
            if byteorder in names and z.read(byteorder).decode().strip() != sys.byteorder:
                raise Unreadable("byte order")
            program = msgspec.json.decode(z.read(models[0]))  # (several times json.loads's speed)
            weights = {}
            for kind in ("weights", "constants"):
                config = f"{root}/data/{kind}/model_{kind}_config.json"
                if config not in names:
                    config = f"{root}/data/{kind}/{model}_{kind}_config.json"
                if config in names:
                    weights.update(_payloads(z, msgspec.json.decode(z.read(config)).get("config") or {},
                                             f"{root}/data/{kind}/", ser))
        return _program(program["graph_module"], weights, ser)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RuntimeError, msgspec.DecodeError) as e:
        raise Unreadable(f"{type(e).__name__}: {e}") from None


def _payloads(z: zipfile.ZipFile, config: dict, base: str, ser) -> dict:
    out = {}
    for fqn, meta in config.items():
        if meta.get("use_pickle"):
            raise Unreadable("a pickled weight")
        t = meta["tensor_meta"]
        dtype = np.dtype(_np_dtype(ser.dtype[t["dtype"]]))
        sizes, strides = _ints(t["sizes"]), _ints(t["strides"])
        offset = _ints([t["storage_offset"]])[0]
        raw = z.read(base + meta["path_name"])
        flat = np.frombuffer(raw, dtype=dtype) if raw else np.zeros(0, dtype)
        if 0 in sizes:
            out[fqn] = np.zeros(sizes, dtype)
            continue
        if not raw and sizes:
            out[fqn] = np.zeros(sizes, dtype)
            continue
        last = offset + sum((n - 1) * s for n, s in zip(sizes, strides))
        if any(s < 0 for s in strides) or last >= flat.size:
            raise Unreadable(f"weight {fqn} does not fit its storage")
        view = np.lib.stride_tricks.as_strided(flat[offset:], sizes, [s * dtype.itemsize for s in strides])
        out[fqn] = np.array(view)
    return out


def _np_dtype(torch_dtype) -> str:
    name = str(torch_dtype).removeprefix("torch.")
    if name in ("bfloat16",) or name.startswith(("float8", "complex32", "quint", "qint", "uint1", "int1")):
        raise Unreadable(f"a {name} weight")
    return name


def _ints(values) -> list[int]:
    out = []
    for v in values:
        if "as_int" not in v:
            raise Unreadable("a symbolic weight size")
        out.append(int(v["as_int"]))
    return out


def _program(gm: dict, weights: dict, ser):
    import sympy
    import torch

    graph_json, sig = gm["graph"], gm["signature"]
    metas = graph_json["tensor_values"]
    exprs: dict = {}

    def size(d):
        if "as_int" in d:
            return int(d["as_int"])
        text = d["as_expr"]["expr_str"]
        if text not in exprs:
            plain = _SYMBOL.sub(r"\1", text)
            names = _NAME.findall(plain)
            if not _EXPR.fullmatch(plain) or not all(_SYMBOL_NAME.fullmatch(n) for n in names):
                raise Unreadable(f"size expression {text!r}")  # (functions such as Max, FloorDiv: torch reads them)
            exprs[text] = _Sym(sympy.sympify(plain, locals={n: sympy.Symbol(n) for n in names}))
        return exprs[text]

    def val(name):
        m = metas.get(name)
        if m is None:
            raise Unreadable(f"no metadata for {name!r}")
        return _Val(tuple(size(d) for d in m["sizes"]), ser.dtype[m["dtype"]])

    g = torch.fx.Graph()
    env: dict = {}

    def made(node, name: str):
        if name in env:
            raise Unreadable(f"two nodes named {name!r}")
        node.name = name  # (as torch's deserializer does: FX may have renamed it, `input` to `input_1`)
        env[name] = node
        return node

    for a in graph_json["inputs"]:
        if "as_tensor" not in a:
            raise Unreadable(f"a non-tensor graph input {list(a)}")
        name = a["as_tensor"]["name"]
        made(g.placeholder(name), name).meta["val"] = val(name)

    def arg(a: dict):
        (kind, v), = a.items()
        if kind == "as_tensor":
            return env[v["name"]]
        if kind == "as_tensors":
            return [env[t["name"]] for t in v]
        if kind == "as_optional_tensors":
            return [env[t["as_tensor"]["name"]] if "as_tensor" in t else None for t in v]
        if kind in ("as_none",):
            return None
        if kind in ("as_int", "as_float", "as_bool", "as_string", "as_ints", "as_floats", "as_bools", "as_strings"):
            return v
        if kind == "as_sym_int":
            return v["as_int"] if "as_int" in v else v["as_name"]  # a symbolic size: its name, not a tensor
        if kind == "as_sym_ints":
            return [s["as_int"] if "as_int" in s else s["as_name"] for s in v]
        if kind == "as_scalar_type":
            return ser.dtype[v]
        if kind == "as_layout":
            return ser.layout[v]
        if kind == "as_memory_format":
            return ser.memory_format[v]
        if kind == "as_device":
            return torch.device(v["type"], v.get("index"))
        raise Unreadable(f"argument kind {kind}")

    targets: dict = {}
    for n in graph_json["nodes"]:
        outs = n["outputs"]
        tensors = [o for o in outs if "as_tensor" in o or "as_tensors" in o]
        if not tensors:
            continue  # shape arithmetic and assertions: graph_from_program reads no such node
        if len(tensors) != len(outs) and any("as_none" not in o for o in outs if o not in tensors):
            raise Unreadable(f"node {n.get('name')!r} mixes tensor and other outputs")
        target = targets.get(n["target"]) or targets.setdefault(n["target"], _target(n["target"]))
        args, kwargs = [], {}
        for i in n["inputs"]:
            if i.get("kind", 1) == 2:
                kwargs[i["name"]] = arg(i["arg"])
            else:
                args.append(arg(i["arg"]))
        single = len(outs) == 1 and "as_tensor" in outs[0]
        name = outs[0]["as_tensor"]["name"] if single else n.get("name")
        if not name or name in env:
            raise Unreadable(f"node name {name!r}")
        node = made(g.create_node("call_function", target, tuple(args), kwargs, name=name), name)
        node.meta["nn_module_stack"] = _module_stack(n.get("metadata", {}).get("nn_module_stack"))
        if single:
            node.meta["val"] = val(name)
            continue
        items = outs[0]["as_tensors"] if len(outs) == 1 and "as_tensors" in outs[0] else \
            [o.get("as_tensor") for o in outs]
        node.meta["val"] = tuple(val(t["name"]) if t else None for t in items)
        for k, t in enumerate(items):
            if t:
                made(g.create_node("call_function", operator.getitem, (node, k), name=t["name"]),
                     t["name"]).meta["val"] = node.meta["val"][k]
    g.output(tuple(arg(a) for a in graph_json["outputs"]))
    return SimpleNamespace(graph=g, graph_signature=_signature(sig), state_dict=weights, constants={})


def _target(text: str):
    import torch

    parts = text.split(".")
    if parts[:2] != ["torch", "ops"] or len(parts) != 5:
        raise Unreadable(f"target {text}")
    t = torch.ops
    for p in parts[2:]:
        t = getattr(t, p, None)
        if t is None:
            raise Unreadable(f"target {text}")
    return t


def _module_stack(text: str | None) -> dict:
    """The innermost module only ({key: (path, type)}): all graph_from_program shows."""
    if not text:
        return {}
    last = text.split(";")[-1]  # (serialize.ST_DELIMITER)
    parts = last.split(",")
    if "[" in last or "(" in last:
        parts, start, depth = [], 0, 0
        for end, c in enumerate(last):  # torch's own split: commas inside brackets belong to the part
            if c in "[(":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif c == "," and depth == 0:
                parts.append(last[start:end])
                start = end + 1
        parts.append(last[start:])
    if len(parts) != 3:
        raise Unreadable("nn_module_stack entry")
    return {parts[0]: (parts[1], parts[2])}


def _signature(sig: dict):
    inputs, outputs = [], []
    for spec in sig["input_specs"]:
        (kind, body), = spec.items()
        if kind == "user_input":
            if "as_tensor" not in body["arg"]:
                raise Unreadable("a non-tensor user input")
            inputs.append(_spec("USER_INPUT", body["arg"]["as_tensor"]["name"], None))
        elif kind in WEIGHT_SPECS:
            label, key = WEIGHT_SPECS[kind]
            inputs.append(_spec(label, body["arg"]["name"], body[key]))
        else:
            raise Unreadable(f"input kind {kind}")
    for spec in sig["output_specs"]:
        (kind, body), = spec.items()
        a = body.get("arg") or {}
        name = a.get("as_tensor", {}).get("name") if "as_tensor" in a else a.get("name")
        outputs.append(_spec(kind.upper(), name, None))
    return SimpleNamespace(input_specs=inputs, output_specs=outputs)


def _spec(kind: str, name: str | None, target: str | None):
    return SimpleNamespace(kind=SimpleNamespace(name=kind), arg=SimpleNamespace(name=name), target=target)
