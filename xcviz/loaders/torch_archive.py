"""A .pt2 file's serialized program read straight from the archive's JSON (torch/_export/serde/schema.py)
into the FX graph, signature and weights graph_from_program reads, never unpickling or evaluating anything.

torch.export.load unpickles (and sympifies), so it is no reader for a file from anyone else; it also turns every
JSON object into a dataclass, slow on a big program. This keeps only what xcviz uses, each declared size
checked against the archive and the limits before anything is inflated or allocated. What it does not cover
raises Unreadable (Pickled: a member only unpickling reads); the caller refuses, or with --trust-pickle asks torch."""
from __future__ import annotations

import dataclasses
import keyword
import operator
import re
import sys
import zipfile
from types import SimpleNamespace

import msgspec
import numpy as np

from ..errors import XcvizError
from .budget import Limits

# a symbol in a size expression as torch writes it: Symbol('s77', positive=True, integer=True)
_SYMBOL = re.compile(r"Symbol\('([A-Za-z_][A-Za-z0-9_]*)'(?:, [a-z_]+=(?:True|False))*\)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXPR = re.compile(r"[A-Za-z0-9_ +*()-]+")
_SYMBOL_NAME = re.compile(r"[a-z]+[0-9]+")  # torch's size symbols: s77, u0
# sympy computes an integer power exactly (9**9**9 would take the machine's memory): only small exponents
_SMALL_POWER = re.compile(r"(?<![A-Za-z0-9_])[a-z]+[0-9]+\*\*[0-9](?![0-9])")
_LONG_NUMBER = re.compile(r"[0-9]{19}")
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
    """Something this reader does not cover: the caller refuses the file, or with the opt-in asks torch."""


class Pickled(Unreadable):
    """A member that only unpickling reads (`member`: its path in the archive)."""

    def __init__(self, reason: str, member: str) -> None:
        super().__init__(f"{reason}: archive member {member!r} is a pickle")
        self.member, self.what = member, reason


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


def read_archive(path: str, limits: Limits | None = None):
    """The program as graph_from_program reads one (graph, graph_signature, state_dict, constants); raises
    Unreadable on anything unfamiliar (Pickled on a member only unpickling reads), XcvizError on a size
    over the limits or that the archive cannot hold."""
    import torch
    from torch._export.serde import schema

    def enum(cls, names):
        return {cls[k].value: getattr(torch, v) for k, v in names.items() if k in cls.__members__ and hasattr(torch, v)}

    ser = SimpleNamespace(dtype=enum(schema.ScalarType, DTYPES), layout=enum(schema.Layout, LAYOUTS),
                          memory_format=enum(schema.MemoryFormat, MEMORY_FORMATS), source=path)
    limits = Limits(*(dataclasses.astuple(limits)[:3] if limits is not None else ()), source=path)
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            models = sorted(n for n in names if re.fullmatch(r"[^/]+/models/[^/]+\.json", n))
            if len(models) != 1:
                raise Unreadable(f"{len(models)} programs in the archive")
            root, model = models[0].split("/models/")
            model = model[:-len(".json")]
            byteorder = f"{root}/byteorder"
            if byteorder in names and limits.read(z, byteorder).decode().strip() != sys.byteorder:
                raise Unreadable("byte order")
            for kind in ("weights", "constants"):  # (the legacy form: the whole state dict as one pickle)
                legacy = f"{root}/data/{kind}/{model}.pt"
                if legacy in names:
                    raise Pickled(f"the program's {kind} (legacy form)", legacy)
            program = limits.json(z, models[0])  # (msgspec: several times json.loads's speed)
            weights = {}
            for kind in ("weights", "constants"):
                config = f"{root}/data/{kind}/model_{kind}_config.json"
                if config not in names:
                    config = f"{root}/data/{kind}/{model}_{kind}_config.json"
                if config in names:
                    weights.update(_payloads(z, limits.json(z, config).get("config") or {},
                                             f"{root}/data/{kind}/", ser, limits))
        ep = _program(program["graph_module"], weights, ser)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RuntimeError, msgspec.DecodeError,
            zipfile.BadZipFile, NotImplementedError, EOFError, OSError, zlib_error()) as e:
        raise Unreadable(f"{type(e).__name__}: {e}") from None
    for spec in ep.graph_signature.input_specs:
        if spec.target is not None and spec.target not in weights:
            raise Unreadable(f"weight {spec.target!r} is not in the archive")
    return ep


def zlib_error():
    import zlib

    return zlib.error


def _payloads(z: zipfile.ZipFile, config: dict, base: str, ser, limits: Limits) -> dict:
    out, storages = {}, {}
    for fqn, meta in config.items():
        path_name = str(meta.get("path_name"))
        if meta.get("use_pickle") or path_name.startswith(("custom_obj_", "opaque_obj_")):
            raise Pickled(f"{'constant' if '/constants/' in base else 'weight'} {fqn!r}", base + path_name)
        t = meta["tensor_meta"]
        dtype = np.dtype(_np_dtype(ser.dtype[t["dtype"]]))
        sizes, strides = _ints(t["sizes"], fqn, "size", limits.source), _ints(t["strides"], fqn, "stride", limits.source)
        offset = _ints([t["storage_offset"]], fqn, "storage offset", limits.source)[0]
        if len(sizes) != len(strides):
            raise Unreadable(f"weight {fqn} has {len(sizes)} sizes and {len(strides)} strides")
        member = base + meta["path_name"]
        # checked before anything is allocated: a zero stride lets a few bytes declare any size (what a weight
        # adds to its storage's bytes counts; the storage itself, read once however many weights share it)
        count = limits.tensor(sizes, dtype.itemsize, f"weight {fqn!r}", stored=z.getinfo(member).file_size)
        if count == 0:
            out[fqn] = np.zeros(sizes, dtype)
            continue
        if member not in storages:
            storages[member] = limits.read(z, member)
        raw = storages[member]
        if not raw:  # (torch writes an empty record for a tensor without storage)
            out[fqn] = np.zeros(sizes, dtype)
            continue
        if len(raw) % dtype.itemsize:
            raise Unreadable(f"weight {fqn}: {len(raw)} bytes is no whole number of {dtype} elements")
        flat = np.frombuffer(raw, dtype=dtype)
        last = offset + sum((n - 1) * s for n, s in zip(sizes, strides))
        if last >= flat.size:
            raise XcvizError(f"weight {fqn!r} {list(sizes)} (strides {list(strides)}, offset {offset}) reaches "
                             f"element {last:,} of a storage of {flat.size:,}", where=limits.source,
                             hint="the file is corrupted or crafted")
        view = np.lib.stride_tricks.as_strided(flat[offset:], sizes, [s * dtype.itemsize for s in strides])
        out[fqn] = np.array(view)
    return out


def _np_dtype(torch_dtype) -> str:
    name = str(torch_dtype).removeprefix("torch.")
    if name in ("bfloat16",) or name.startswith(("float8", "complex32", "quint", "qint", "uint1", "int1")):
        raise Unreadable(f"a {name} weight")
    return name


def _ints(values, fqn: str = "", what: str = "size", where: str | None = None) -> list[int]:
    """Sizes, strides, offsets: plain non-negative integers (a symbolic, negative or fractional one is refused)."""
    out = []
    for v in values:
        if "as_int" not in v:
            raise Unreadable(f"a symbolic weight {what}")
        n = v["as_int"]
        if type(n) is not int or n < 0:
            raise XcvizError(f"weight {fqn!r} has a {what} of {str(n)[:40]}, not a non-negative integer",
                             where=where, hint="the file is corrupted or crafted")
        out.append(n)
    return out


def _program(gm: dict, weights: dict, ser):
    import sympy
    import torch

    graph_json, sig = gm["graph"], gm["signature"]
    metas = graph_json["tensor_values"]
    exprs: dict = {}

    def size(d):
        if "as_int" in d:
            n = d["as_int"]
            if type(n) is not int or not 0 <= n < 2**63:
                raise XcvizError(f"a tensor size of {str(n)[:40]}, not a non-negative integer", where=ser.source,
                                 hint="the file is corrupted or crafted")
            return n
        text = d["as_expr"]["expr_str"]
        if text not in exprs:
            if not isinstance(text, str) or len(text) > 1000:
                raise Unreadable("a size expression over 1,000 characters")
            plain = _SYMBOL.sub(r"\1", text)
            if "**" in _SMALL_POWER.sub("", plain) or _LONG_NUMBER.search(plain):
                raise Unreadable(f"size expression {text[:100]!r}: a power or number sympy would expand")
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
        # (FX writes node names into the Python source it generates and runs: only identifiers, as torch's are)
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise XcvizError(f"node name {str(name)[:80]!r} is not an identifier, as every name torch writes is",
                             where=ser.source, hint="the file is corrupted or crafted")
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
                if not str(i["name"]).isidentifier() or keyword.iskeyword(i["name"]):
                    raise Unreadable(f"keyword argument {str(i['name'])[:80]!r}")
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
    """torch.ops.NS.NAME.OVERLOAD as the operator it names: only an operator registered with torch (its schema is
    looked up by name before any attribute is read) and only an OpOverload comes back, whatever the text says.
    Op names may start with `_` (aten._softmax, aten.__and__), the namespace may not."""
    import torch

    parts = text.split(".")
    if parts[:2] != ["torch", "ops"] or len(parts) != 5 or not all(_NAME.fullmatch(p) for p in parts) \
            or parts[2].startswith("_") or parts[4].startswith("__"):
        raise Unreadable(f"target {text}")
    ns, name, overload = parts[2:]
    if not torch._C._jit_get_schemas_for_operator(f"{ns}::{name}"):
        raise Unreadable(f"target {text}")
    t = getattr(getattr(getattr(torch.ops, ns), name, None), overload, None)
    if not isinstance(t, torch._ops.OpOverload):
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
