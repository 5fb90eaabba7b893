"""Regenerate the binary/awkward files of the hostile-input corpus (text cases are written by hand).

Run from the repo root: python tests/hostile/make_corpus.py. Each file is one case in cases.yaml.
"""
from __future__ import annotations

import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def w(name: str, data: bytes | str) -> None:
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def text_cases() -> None:
    w("empty.yaml", "")
    w("blank.yaml", "  \n\n\t\n")
    w("not_yaml.yaml", "nodes: [a, b\n  - {name: : }\n")
    w("prose.yaml", "This is a letter to a colleague, not a graph.\n")
    w("invalid_utf8.yaml", b"name: g\nnodes:\n  - {name: \"caf\xe9\xff\", op: relu}\n")
    w("nan.json", '{"nodes": [{"name": "c", "op": "const", "attrs": {"value": NaN}}], "outputs": ["c"]}\n')
    w("infinity.json", '{"nodes": [{"name": "c", "op": "const",\n  "attrs": {"value": -Infinity}}]}\n')
    w("deep_nesting.json", '{"nodes": [{"name": "c", "op": "const", "attrs": {"value": ' + "[" * 5000 + "]" * 5000 + "}}]}\n")
    w("deep_nesting.yaml", "nodes:\n  - {name: c, op: const, attrs: {value: " + "[" * 50000 + "]" * 50000 + "}}\n")
    # nesting where a node belongs: the error's line lookup must not hand it to libyaml (a C stack overflow)
    w("deep_in_nodes.json", '{"nodes": [' + "[" * 100000 + "]" * 100000 + "]}\n")
    w("deep_in_nodes_900.json", '{"nodes": [{"name": "a", "op": "relu", "inputs": []},\n ' + "[" * 900 + "]" * 900 + "]}\n")
    w("deep_attr.json", '{"nodes": [{"name": "c", "op": "const", "attrs": {"value": ' + "[" * 150 + "]" * 150 + "}}]}\n")
    lol = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    prev = "a"
    for c in "bcdefghi":
        lol += f"{c}: &{c} [" + ",".join([f"*{prev}"] * 9) + "]\n"
        prev = c
    w("alias_bomb.yaml", "# billion laughs: 9^9 strings if expanded\nnodes: []\ndoc:\n" +
      "".join("  " + line + "\n" for line in lol.splitlines()))
    w("alias_bomb_attrs.yaml", "nodes:\n  - name: c\n    op: const\n    attrs:\n" +
      "".join("      " + line + "\n" for line in lol.splitlines()))
    w("alias_recursive.yaml", "nodes:\n  - &n {name: c, op: relu, attrs: {self: *n}}\n")
    w("long_name.yaml", "inputs: [x]\nnodes:\n  - {name: " + "n" * 100_000 + ", op: relu, inputs: [y]}\n")


def garbage() -> None:
    rnd = random.Random(6)
    w("garbage.bin", bytes(rnd.randrange(256) for _ in range(4096)))
    w("garbage_text.yaml", bytes(rnd.randrange(256) for _ in range(512)))
    w("garbage.onnx", b"\x08\x07\x12\x04junk" + bytes(rnd.randrange(256) for _ in range(300)))


def onnx_cases() -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])

    def model(nodes, inits=(), inputs=(x,), outputs=(y,), opsets=(("", 17),), name="g"):
        g = helper.make_graph(list(nodes), name, list(inputs), list(outputs), initializer=list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
        m.ir_version = 8
        return m

    ok = model([helper.make_node("Relu", ["x"], ["r"], name="r"), helper.make_node("Tanh", ["r"], ["y"], name="t")])
    data = ok.SerializeToString()
    w("onnx_truncated.onnx", data[: len(data) // 2])
    w("onnx_empty_graph.onnx", b"\x08\x08")  # ir_version only, no graph
    w("onnx_unknown_domain.onnx", model(
        [helper.make_node("Relu", ["x"], ["r"], name="r"),
         helper.make_node("FrobnicateV9", ["r"], ["y"], name="frob", domain="org.evil.ops")],
        opsets=(("", 17), ("org.evil.ops", 1))).SerializeToString())
    w("onnx_undefined_input.onnx", model(
        [helper.make_node("Relu", ["x"], ["r"], name="r"), helper.make_node("Add", ["r", "ghost"], ["y"], name="add")]
    ).SerializeToString())

    def external(location: str) -> bytes:
        t = numpy_helper.from_array(np.zeros((2, 3), np.float32), "w")
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", location
        m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], inits=[t])
        return m.SerializeToString()

    w("onnx_external_dotdot.onnx", external("../../../../etc/passwd"))
    w("onnx_external_absolute.onnx", external("/etc/passwd"))
    w("onnx_external_missing.onnx", external("weights_that_do_not_exist.bin"))

    # an If whose branches hold an op xcviz does not know: the outer If loads and falls back
    then_out = helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [2, 3])
    else_out = helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [2, 3])
    then_g = helper.make_graph([helper.make_node("Weird", ["r"], ["t_out"], name="weird", domain="com.example")],
                               "then", [], [then_out])
    else_g = helper.make_graph([helper.make_node("Identity", ["r"], ["e_out"], name="ident")], "else", [], [else_out])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    w("onnx_nested_subgraph.onnx", model(
        [helper.make_node("Relu", ["x"], ["r"], name="r"),
         helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)],
        inputs=(x, cond), opsets=(("", 17), ("com.example", 1))).SerializeToString())
    body_in = [helper.make_tensor_value_info("i", TensorProto.INT64, []),
               helper.make_tensor_value_info("c", TensorProto.BOOL, []),
               helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 3])]
    body_out = [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [2, 3])]
    body = helper.make_graph([helper.make_node("Identity", ["c"], ["c_out"]),
                              helper.make_node("Mystery", ["v"], ["v_out"], domain="com.example")],
                             "body", body_in, body_out)
    trip = numpy_helper.from_array(np.array(3, np.int64), "trip")
    w("onnx_loop_body.onnx", model(
        [helper.make_node("Loop", ["trip", "", "x"], ["y"], name="loop", body=body)], inits=[trip],
        opsets=(("", 17), ("com.example", 1))).SerializeToString())
    markup = model([helper.make_node("Relu", ["x"], ["y"], name="[bold]<script>alert(1)</script>&\"'{}\n\x07",
                                     doc_string="<b>doc</b> [red]x[/red]")])
    w("onnx_markup.onnx", markup.SerializeToString())
    # protobuf hands back bytes, not str, for string fields holding invalid UTF-8 (found by fuzzing)
    bad = model([helper.make_node("Relu", ["x"], ["mid"], name="NAMEX"), helper.make_node("Tanh", ["mid"], ["y"])],
                opsets=(("", 17), ("DOMX", 1)), name="GRAPHX")
    data = bad.SerializeToString()
    for good, broken in ((b"NAMEX", b"NA\xffEX"), (b"DOMX", b"D\x80MX"), (b"GRAPHX", b"GR\xc3PHX"), (b"mid", b"m\xfed")):
        data = data.replace(good, broken)
    w("onnx_invalid_utf8_names.onnx", data)


if __name__ == "__main__":
    text_cases()
    garbage()
    onnx_cases()
