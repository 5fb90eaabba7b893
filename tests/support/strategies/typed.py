"""Type-correct graphs for execution (test_execute_differential): each node's shape tracked, weights added as needed."""
from __future__ import annotations

from hypothesis import strategies as st

from .core import GraphSpec, NodeSpec

UNARY = ["relu", "tanh", "sigmoid", "neg", "abs", "gelu", "sin", "elu", "softplus", "identity", "leaky_relu"]
BINARY = ["add", "sub", "mul", "max", "min"]
REDUCE = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"]
FALLBACK = ["Print", "CheckNumerics", "PyFunc", "custom_nms"]   # no XLA kernel: always native
KINDS = (["unary"] * 4 + ["binary"] * 3 + ["matmul"] * 3 + ["reduce"] * 2 + ["softmax"] * 2 + ["layernorm", "transpose",
         "reshape", "concat"] + ["fallback"] * 2)


def _node(draw, kind: str, name: str, src: str, shp: list, same: list[str], new_input) -> tuple[NodeSpec, list]:
    """One node of `kind` reading `src` (of shape `shp`); `same`: the tensors of that shape. -> node, out shape."""
    out = list(shp)
    node = NodeSpec(name, "", [src])
    if kind == "unary":
        node.op = draw(st.sampled_from(UNARY))
    elif kind == "binary":
        other = draw(st.sampled_from(same + [None]))
        node.op, node.inputs = draw(st.sampled_from(BINARY)), [src, other or new_input(shp[-1:])]
    elif kind == "matmul":
        out = shp[:-1] + [draw(st.integers(1, 4))]
        node.op, node.inputs = "matmul", [src, new_input([shp[-1], out[-1]])]
    elif kind == "reduce":
        out = shp[:-1] + [1]
        node.op, node.attrs = draw(st.sampled_from(REDUCE)), {"axes": [-1], "keepdims": 1}
    elif kind == "softmax":
        node.op, node.attrs = draw(st.sampled_from(["softmax", "log_softmax"])), {"axis": -1}
    elif kind == "layernorm":
        node.op, node.attrs = "layernorm", {"axis": -1}
        node.inputs = [src, new_input(shp[-1:]), new_input(shp[-1:])]
    elif kind == "transpose":
        perm = list(range(len(shp)))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        out = [shp[p] for p in perm]
        node.op, node.attrs = "transpose", {"perm": perm}
    elif kind == "reshape":
        out = shp[:-2] + [shp[-2] * shp[-1]] if len(shp) == 3 else [shp[0], shp[1], 1]
        node.op, node.attrs = "reshape", {"shape": out}
    elif kind == "concat":
        out = shp[:-1] + [2 * shp[-1]]
        node.op, node.inputs, node.attrs = "concat", [src, draw(st.sampled_from(same))], {"axis": -1}
    else:
        node.op = draw(st.sampled_from(FALLBACK))
    return node, out


@st.composite
def typed_specs(draw) -> GraphSpec:
    """2-9 nodes over x0 (rank 2-3, float32 or float64); recent tensors are likelier operands (long chains,
    but also fan-out and reuse); every unread node and up to two more are outputs."""
    dtype = draw(st.sampled_from(["float32", "float32", "float64"]))
    rank = draw(st.integers(2, 3))
    shape = [draw(st.integers(1, 4)) for _ in range(rank)]
    spec = GraphSpec("diff", [("x0", tuple(shape), dtype)], [])
    tensors: list[tuple[str, list[int]]] = [("x0", shape)]

    def new_input(shp):
        name = f"w{len(spec.inputs)}"
        spec.inputs.append((name, tuple(shp), dtype))
        return name

    for i in range(draw(st.integers(2, 9))):
        src, shp = tensors[draw(st.integers(max(0, len(tensors) - 4), len(tensors) - 1))]
        kind = draw(st.sampled_from(KINDS))
        node, out = _node(draw, kind, f"n{i}", src, shp, [t for t, s in tensors if s == shp], new_input)
        if node.op == "custom_nms":
            node.outputs = [(tuple(shp), dtype)]
        if kind != "fallback" and draw(st.integers(0, 9)) == 0:
            node.compile = False
        spec.nodes.append(node)
        tensors.append((node.name, out))
    used = {r for n in spec.nodes for r in n.inputs}
    spec.outputs = [n.name for n in spec.nodes if n.name not in used]
    extra = draw(st.lists(st.sampled_from([n.name for n in spec.nodes]), max_size=2))
    spec.outputs += [o for o in dict.fromkeys(extra) if o not in spec.outputs]
    return spec
