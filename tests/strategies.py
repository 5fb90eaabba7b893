"""Random graphs for the property tests (hypothesis): one generator, parameterised where tests need variants."""
from __future__ import annotations

from hypothesis import strategies as st

from xcviz.ir import Graph, Node, TensorType, Value

# ops the clustering tests draw from, with how many inputs each reads (None: 0 to 3, drawn)
CLUSTERING_OPS = {"relu": 1, "add": 2, "mul": 2, "matmul": 2, "shape": 1, "const": 0, "identity": 1, "noop": 0,
                  "py_func": None, "tanh": 1}


@st.composite
def dags(draw, ops: dict[str, int | None] = CLUSTERING_OPS, nodes: tuple[int, int] = (1, 40),
         devices=(None, None, None, "gpu:0", "cpu:1"), compiles=(None, None, None, None, True, False),
         scopes=(None, None, None, "s1", "s2"), max_controls: int = 2, opaque=frozenset({"py_func"}),
         shape=(2, 2), shuffle: bool = False) -> Graph:
    """A hand-built DAG over one input `x`: node j reads `x` or earlier nodes (repeats allowed) and has up
    to `max_controls` control inputs from earlier nodes; every node outputs float32`shape`; ops in `opaque`
    are unknown to xcviz. `shuffle` lists the nodes out of topological order (as a hand-built Graph may).
    The last node listed is the output."""
    n = draw(st.integers(*nodes))
    t = TensorType(shape, "float32")
    built = []
    for j in range(n):
        op = draw(st.sampled_from(sorted(ops)))
        k = ops[op] if ops[op] is not None else draw(st.integers(0, 3))
        srcs = ["x"] + [f"n{i}" for i in range(j)]
        inputs = tuple(draw(st.sampled_from(srcs)) for _ in range(k))
        ctrl = tuple(sorted(set(draw(st.lists(st.sampled_from(srcs[1:]), max_size=max_controls))))) if j else ()
        built.append(Node(name=f"n{j}", op=op, op_type=op, inputs=inputs, control_inputs=ctrl,
                          device=draw(st.sampled_from(devices)), compile=draw(st.sampled_from(compiles)),
                          scope=draw(st.sampled_from(scopes)), outputs=[t], known=op not in opaque))
    if shuffle:
        built = list(draw(st.permutations(built)))
    return Graph("rand", [Value("x", t)], built, [built[-1].name])
