"""Write the trust corpus (issue 26) into tests/hostile/: .pt2 files whose pickles would run code, zip bombs,
weights and TF tensors declaring sizes their file cannot hold, SavedModels with broken bundles, deep nesting.

No torch or TensorFlow needed: a .pt2 is a zip of JSON written here by hand, a pickle payload is a few bytes
of pickle opcodes, a SavedModel is its protobufs built from xcviz's own field table. Deterministic (fixed zip
dates). Run from the repo root: python tools/make_hostile.py (the 3 GiB bzip2 bomb takes ~45 s to write).

Every pickle payload, when unpickled, creates the file MARKER in the current folder (builtins.open(MARKER, 'w')):
tests run each command in an empty folder and assert the marker is never there without --trust-pickle."""
from __future__ import annotations

import copy
import json
import os
import shutil
import struct
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "tests", "hostile")
MARKER = "xcviz-pickle-ran"
DATE = (2026, 1, 1, 0, 0, 0)
# protocol 0: builtins.open('xcviz-pickle-ran', 'w'); the call happens as the pickle is read
PAYLOAD = b"cbuiltins\nopen\n(V" + MARKER.encode() + b"\nVw\ntR."

F32 = 7  # torch's ScalarType enum value for float32 (torch/_export/serde/schema.py)


def _write(name: str, data: str | bytes) -> None:
    """Write a corpus file (a name relative to tests/hostile/, or a path)."""
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def _meta(sizes, strides=None, offset=0):
    if strides is None:
        strides, acc = [], 1
        for n in reversed(sizes):
            strides.insert(0, acc)
            acc *= n if isinstance(n, int) and n > 0 else 1
    return {"dtype": F32, "sizes": [{"as_int": n} for n in sizes], "requires_grad": False,
            "device": {"type": "cpu", "index": None}, "strides": [{"as_int": s} for s in strides],
            "storage_offset": {"as_int": offset}, "layout": 7}


def program(weight_sizes=(2, 3)) -> dict:
    """y = relu(x + w) as torch.export.save writes it (schema 8), x: f32[2,3], w a parameter."""
    tv = {"p_w": _meta(list(weight_sizes)), "x": _meta([2, 3]), "add": _meta([2, 3]), "relu": _meta([2, 3])}
    node = lambda target, ins, out: {
        "target": target, "inputs": [{"name": n, "arg": {"as_tensor": {"name": a}}, "kind": 1} for n, a in ins],
        "outputs": [{"as_tensor": {"name": out}}], "metadata": {"nn_module_stack": "L__self__,,M"},
        "is_hop_single_tensor_return": None, "name": out}
    return {"graph_module": {
        "graph": {"inputs": [{"as_tensor": {"name": "p_w"}}, {"as_tensor": {"name": "x"}}],
                  "outputs": [{"as_tensor": {"name": "relu"}}],
                  "nodes": [node("torch.ops.aten.add.Tensor", [("self", "x"), ("other", "p_w")], "add"),
                            node("torch.ops.aten.relu.default", [("self", "add")], "relu")],
                  "tensor_values": tv, "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": False,
                  "custom_obj_values": {}, "sym_float_values": {}},
        "signature": {"input_specs": [{"parameter": {"arg": {"name": "p_w"}, "parameter_name": "w"}},
                                      {"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
                      "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "relu"}}}}]},
        "module_call_graph": [], "metadata": {}, "treespec_namedtuple_fields": {}},
        "opset_version": {"aten": 10}, "range_constraints": {}, "schema_version": {"major": 8, "minor": 20},
        "verifiers": ["TRAINING"], "torch_version": "2.13.0+cpu", "guards_code": []}


def weights_config(meta=None, **entry) -> dict:
    e = {"path_name": "weight_0", "is_param": True, "use_pickle": False, "tensor_meta": meta or _meta([2, 3])}
    e.update(entry)
    return {"config": {"w": e}}


def pt2(name: str, prog=None, weights=None, members=None, model_json: bytes | None = None,
        weight_bytes: bytes = struct.pack("<6f", 1, 2, 3, 4, 5, 6), compress: dict | None = None,
        drop=()) -> None:
    """A .pt2 archive as torch.export.save lays it out (root folder = the file's stem); `members` add or
    replace members, `compress` names a member's compression (zipfile.ZIP_DEFLATED, ZIP_BZIP2)."""
    root = name.split(".")[0]
    files = {
        f"{root}/data/weights/weight_0": weight_bytes,
        f"{root}/data/weights/model_weights_config.json": json.dumps(weights or weights_config()).encode(),
        f"{root}/data/constants/model_constants_config.json": b'{"config": {}}',
        f"{root}/models/model.json": model_json if model_json is not None else json.dumps(prog or program()).encode(),
        f"{root}/data/sample_inputs/model.pt": PAYLOAD,  # torch-written files always hold a pickle here
        f"{root}/archive_format": b"pt2", f"{root}/archive_version": b"0", f"{root}/.data/version": b"6\n",
        f"{root}/byteorder": b"little",
    }
    files.update({f"{root}/{k}": v for k, v in (members or {}).items()})
    for k in drop:
        del files[f"{root}/{k}"]
    with zipfile.ZipFile(os.path.join(HERE, name), "w") as z:
        for member, data in files.items():
            info = zipfile.ZipInfo(member, DATE)
            info.compress_type = (compress or {}).get(member.split("/", 1)[1], zipfile.ZIP_STORED)
            if isinstance(data, Stream):
                with z.open(info, "w", force_zip64=data.size >= 2**31) as f:
                    for chunk in data:
                        f.write(chunk)
            else:
                z.writestr(info, data)


class Stream:
    """`size` bytes of `byte`, written in chunks (a bomb is never held in memory)."""

    def __init__(self, size: int, byte: bytes = b" ") -> None:
        self.size, self.byte = size, byte

    def __iter__(self):
        left = self.size
        while left:
            n = min(left, 1 << 24)
            yield self.byte * n
            left -= n


def lie_about_size(name: str, member_suffix: str, declared: int) -> None:
    """Rewrite the uncompressed size a member's local and central headers declare (the data stays)."""
    path = os.path.join(HERE, name)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    with zipfile.ZipFile(path) as z:
        info = next(i for i in z.infolist() if i.filename.endswith(member_suffix))
    struct.pack_into("<I", data, info.header_offset + 22, declared)  # local file header
    central = data.find(b"PK\x01\x02" + data[info.header_offset + 4:info.header_offset + 6])
    while central >= 0:
        name_len = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46:central + 46 + name_len].decode() == info.filename:
            struct.pack_into("<I", data, central + 24, declared)
            break
        central = data.find(b"PK\x01\x02", central + 4)
    with open(path, "wb") as f:
        f.write(bytes(data))


def pt2_cases() -> None:
    # code execution: each pickle here is what torch.export.load would unpickle
    pt2("pt2_pickled_weight.pt2", weights=weights_config(use_pickle=True), weight_bytes=PAYLOAD)
    constants = {"config": {"obj": {"path_name": "custom_obj_0", "is_param": False, "use_pickle": False,
                                    "tensor_meta": None}}}
    pt2("pt2_pickled_constant.pt2", members={"data/constants/model_constants_config.json": json.dumps(constants).encode(),
                                             "data/constants/custom_obj_0": PAYLOAD})
    pt2("pt2_legacy_weights.pt2", members={"data/weights/model.pt": PAYLOAD},
        drop=["data/weights/model_weights_config.json", "data/weights/weight_0"])
    pt2("pt2_sample_inputs.pt2")  # a plain program: only its sample inputs are pickled, which xcviz never reads
    # a program xcviz's reader does not cover (a bfloat16 weight): refused, not handed to torch, by default
    bf16 = copy.deepcopy(weights_config())
    bf16["config"]["w"]["tensor_meta"]["dtype"] = 13  # BFLOAT16
    pt2("pt2_uncovered.pt2", weights=bf16, weight_bytes=b"\0" * 12)
    # memory
    pt2("pt2_zip_bomb.pt2", model_json=Stream(3 * 1024**3), compress={"models/model.json": zipfile.ZIP_BZIP2})
    pt2("pt2_size_lie.pt2", model_json=Stream(16 * 1024**2), compress={"models/model.json": zipfile.ZIP_DEFLATED})
    lie_about_size("pt2_size_lie.pt2", "models/model.json", 4000)
    pt2("pt2_zero_strides.pt2", prog=program((4, 2**30)), weights=weights_config(_meta([4, 2**30], [0, 0])),
        weight_bytes=b"\0" * 4)
    pt2("pt2_weight_overflow.pt2", prog=program((2**40, 2**40)), weights=weights_config(_meta([2**40, 2**40])))
    pt2("pt2_weight_outside.pt2", weights=weights_config(_meta([2, 3], [3, 1], offset=5)))
    pt2("pt2_weight_negative.pt2", weights=weights_config(_meta([-2, 3], [3, 1])))
    pt2("pt2_weight_float_dim.pt2", weights=weights_config(_meta([2.5, 3], [3, 1])))
    neg = program()
    neg["graph_module"]["graph"]["tensor_values"]["x"]["sizes"][0] = {"as_int": -7}
    pt2("pt2_negative_size.pt2", prog=neg)
    power = program()
    power["graph_module"]["graph"]["tensor_values"]["x"]["sizes"][0] = {"as_expr": {"expr_str": "9**9**9**9"}}
    pt2("pt2_power_size.pt2", prog=power)
    pt2("pt2_deep_json.pt2", model_json=b'{"schema_version": {"major": 8, "minor": 20}, "graph_module": '
        + b"[" * 200_000 + b"]" * 200_000 + b"}", compress={"models/model.json": zipfile.ZIP_DEFLATED})
    evil = program()
    evil["graph_module"]["graph"]["nodes"][1]["outputs"][0]["as_tensor"]["name"] = "relu = __import__('os'); x"
    pt2("pt2_code_in_name.pt2", prog=evil)


# ---- TensorFlow ---------------------------------------------------------------------------------------------
def _tf():
    sys.path.insert(0, ROOT)
    from xcviz.loaders.tensorflow.protos import message_classes

    return message_classes()


def pbtxt_cases() -> None:
    def const(name: str, dims: str, values: str = "float_val: 1") -> str:
        return (f'node {{ name: "{name}" op: "Const" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }}\n'
                f'  attr {{ key: "value" value {{ tensor {{ dtype: DT_FLOAT tensor_shape {{ {dims} }} {values} }} }} }} }}\n')

    relu = 'node { name: "y" op: "Relu" input: "c" attr { key: "T" value { type: DT_FLOAT } } }\n'
    w = _write
    w("tf_const_splat.pbtxt", const("c", "dim { size: 4000000000 } dim { size: 4000000000 }") + relu)
    w("tf_const_splat_bytes.pbtxt", const("c", "dim { size: 100000 } dim { size: 100000 }") + relu)
    w("tf_const_negative_dim.pbtxt", const("c", "dim { size: -5 } dim { size: 3 }") + relu)
    w("tf_placeholder_negative_dim.pbtxt",
      'node { name: "c" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }\n'
      '  attr { key: "shape" value { shape { dim { size: -5 } dim { size: 3 } } } } }\n' + relu)


def _leveldb_table(entries: list[tuple[bytes, bytes]]) -> bytes:
    """A LevelDB table as TF's tensor bundle index writes it: one data block, one index block, the footer."""
    def block(items):
        out = bytearray()
        for k, v in items:
            out += _varint(0) + _varint(len(k)) + _varint(len(v)) + k + v
        out += struct.pack("<II", 0, 1)  # one restart point at 0
        return bytes(out)

    data = block(entries)
    index_off = len(data) + 5
    index = block([(entries[-1][0] + b"\xff", _varint(0) + _varint(len(data)))])
    body = data + b"\0\0\0\0\0" + index + b"\0\0\0\0\0"
    footer = _varint(0) + _varint(0) + _varint(index_off) + _varint(len(index))
    footer += b"\0" * (40 - len(footer)) + struct.pack("<Q", 0xdb4775248b80fb57)
    return body + footer


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def saved_model(name: str, shape=(2, 3), shard_id=0, num_shards=1, size=None, offset=0, shards=(24,)) -> None:
    """y = x + v (a variable) as a SavedModel folder; the bundle's entry for v says what the arguments say."""
    m = _tf()
    folder = os.path.join(HERE, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "variables"))
    sm = m["SavedModel"](saved_model_schema_version=1)
    meta = sm.meta_graphs.add()
    meta.meta_info_def.tags.append("serve")
    g = meta.graph_def
    x = g.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = 1
    for d in (2, 3):
        x.attr["shape"].shape.dim.add(size=d)
    v = g.node.add(name="v", op="VarHandleOp")
    v.attr["dtype"].type = 1
    v.attr["shared_name"].s = b"v"
    for d in shape:
        v.attr["shape"].shape.dim.add(size=d)
    r = g.node.add(name="r", op="ReadVariableOp", input=["v"])
    r.attr["dtype"].type = 1
    y = g.node.add(name="y", op="AddV2", input=["x", "r"])
    y.attr["T"].type = 1
    sig = meta.signature_def["serving_default"]
    sig.inputs["x"].name = "x:0"
    sig.outputs["y"].name = "y:0"
    root = meta.object_graph_def.nodes.add()
    root.children.add(node_id=1, local_name="v")
    meta.object_graph_def.nodes.add().variable.name = "v"
    _write(os.path.join(folder, "saved_model.pb"), sm.SerializeToString(deterministic=True))
    header = m["BundleHeaderProto"](num_shards=num_shards).SerializeToString(deterministic=True)
    entry = m["BundleEntryProto"](dtype=1, shard_id=shard_id, offset=offset,
                                  size=4 * 6 if size is None else size)
    for d in shape:
        entry.shape.dim.add(size=d)
    index = _leveldb_table([(b"", header), (b"v/.ATTRIBUTES/VARIABLE_VALUE", entry.SerializeToString())])
    prefix = os.path.join(folder, "variables", "variables")
    _write(prefix + ".index", index)
    for k, n in enumerate(shards):
        if n is not None:
            _write(f"{prefix}.data-{k:05d}-of-{num_shards:05d}", b"\0" * n)


def savedmodel_cases() -> None:
    saved_model("sm_ok")  # the control: loads
    saved_model("sm_missing_shard", num_shards=2, shard_id=1, shards=(24, None))
    saved_model("sm_shard_out_of_range", shard_id=7)
    saved_model("sm_huge_entry", shape=(250000, 1000000), size=10**12, shards=(7800,))
    saved_model("sm_variable_overflow", shape=(2**32, 2**32), size=0)
    saved_model("sm_entry_past_shard", offset=100)
    saved_model("sm_negative_dim", shape=(-1, 3), size=12)


def xcir_cases() -> None:
    w = _write
    w("xcir_deep_type.xcir", "graph g(%x: " + "opt<" * 5_000 + "f32[2]" + ">" * 5_000 + ") {\n  return %x\n}\n")
    w("xcir_long_dim.xcir", "graph g(%x: f32[" + "9" * 5000 + "]) {\n  %y: f32[2] = relu(%x)\n  return %y\n}\n")


if __name__ == "__main__":
    pt2_cases()
    pbtxt_cases()
    savedmodel_cases()
    xcir_cases()
