"""What each test draws, as Profiles of the one graph draw, and the strategies tests import."""
from __future__ import annotations

from hypothesis import strategies as st

from .adapters import to_graph, to_mapping
from .core import NONE, GraphSpec, NodeSpec, Profile, Rule, graph_specs, last_node, sometimes
from .defects import ODD, corrupt, dumps, junk, repeat_a_key, to_pairs


def _one_input(name: str, shape: tuple, dtype: str = "float32"):
    return st.just([(name, tuple(shape), dtype)])


# ---- clustering (test_mark_matches_reference, test_mark_kernel): hand-built, every field clustering reads -----------
# ops with how many inputs each reads (None: 0 to 3, drawn)
CLUSTERING_OPS = {"relu": 1, "add": 2, "mul": 2, "matmul": 2, "shape": 1, "const": 0, "identity": 1, "noop": 0,
                  "py_func": None, "tanh": 1}


def clustering_profile(ops: dict[str, int | None] = CLUSTERING_OPS, nodes: tuple[int, int] = (1, 40),
                       devices=(None, None, None, "gpu:0", "cpu:1"), compiles=(None, None, None, None, True, False),
                       scopes=(None, None, None, "s1", "s2"), max_controls: int = 2, opaque=frozenset({"py_func"}),
                       shape=(2, 2), shuffle: bool = False, declare: bool = True) -> Profile:
    t = (tuple(shape), "float32")
    return Profile(groups=(tuple(sorted(ops)),), inputs=_one_input("x", shape), nodes=nodes,
                   rules={op: Rule(k if k is not None else (0, 3)) for op, k in ops.items()},
                   controls=max_controls, device=st.sampled_from(devices), compile=st.sampled_from(compiles),
                   scope=st.sampled_from(scopes), opaque=frozenset(opaque), shuffle=shuffle,
                   declare=(lambda draw, spec, node: [t]) if declare else None)


def dags(**kw):
    """A hand-built DAG over one input `x`: node j reads `x` or earlier nodes (repeats allowed) and has up
    to `max_controls` control inputs from earlier nodes; every node outputs float32`shape`; ops in `opaque`
    are unknown to xcviz. `shuffle` lists the nodes out of topological order (as a hand-built Graph may).
    The last node listed is the output."""
    return graph_specs(clustering_profile(**kw)).map(to_graph)


# ---- type-correct graphs for passes.prepare (test_mark_properties): TF op names, outputs left to inference --------
FINALIZE_OPS = ["relu", "add", "mul", "Identity", "Const", "Shape", "NoOp", "PyFunc", "RandomNormalLike", "sigmoid"]
FINALIZE = Profile(
    groups=(tuple(FINALIZE_OPS),), inputs=_one_input("x", (4, 4)), nodes=(1, 28),
    # data inputs: distinct f32[4,4] producers (not Shape, NoOp), filled up with `x`
    rules={"Const": Rule(0, attrs=st.just({"value": 1.0})), "NoOp": Rule(0, readable=False),
           "Shape": Rule(1, readable=False), "add": Rule(2), "mul": Rule(2)},
    unique_inputs=True, pad="x", controls=1, controls_apart=True,
    device=st.sampled_from([None, None, None, "gpu:0"]), scope=st.sampled_from([None, None, "s1", "s2"]),
    compile=st.sampled_from([None, None, None, None, False]),
    declare=lambda draw, spec, node: [((4, 4), "float32")] if node.op == "PyFunc" else None,  # opaque: declared
    outputs=lambda spec: last_node(spec) if spec.nodes[-1].op != "NoOp" else [])


def finalized_dags():
    """FINALIZE graphs through passes.prepare (allow_unknown)."""
    return graph_specs(FINALIZE).map(lambda s: to_graph(s, finalize=True))


# ---- structure-aware fuzzing (test_fuzz): valid-looking mappings, then corrupted ----------------------------
FUZZ_UNARY = ["relu", "tanh", "exp", "sigmoid", "neg", "abs", "identity", "softmax", "custom_nms", "unique", "print"]
FUZZ_BINARY = ["add", "mul", "sub", "matmul", "div", "maximum"]
FUZZ_OTHER = ["conv2d", "pool", "concat", "reshape", "transpose", "reduce_sum", "const", "shape", "noop", "nms",
              "if", "loop", "py_func", "rleu", "UnknownOp"]


@st.composite
def _fuzz_inputs(draw):
    n_inputs = draw(st.integers(1, 3))
    rank = draw(st.integers(0, 4))
    base = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    return [(f"x{i}", base, draw(st.sampled_from(["float32", "float16", "int32"]))) for i in range(n_inputs)]


FUZZ = Profile(
    name="fuzz", groups=(tuple(FUZZ_UNARY),) * 2 + (tuple(FUZZ_BINARY),) * 2 + (tuple(FUZZ_OTHER),),
    inputs=_fuzz_inputs(), nodes=(0, 12),
    rules={**{op: Rule(1) for op in FUZZ_UNARY}, **{op: Rule(2) for op in FUZZ_BINARY},
           **{op: Rule((0, 3)) for op in FUZZ_OTHER}},
    compile=sometimes(st.booleans(), 5),
    declare=lambda draw, spec, node: [(spec.inputs[0][1], "float32")] if draw(st.integers(0, 4)) == 0 else None,
    attrs=sometimes(st.dictionaries(st.sampled_from(["axis", "perm", "pads", "group", "value", "shape"]), junk,
                                    max_size=2), 6),
    outputs=lambda spec: last_node(spec) or [spec.inputs[-1][0]],
    dims=sometimes(st.fixed_dictionaries({"batch": st.integers(0, 8)}), 6))


def fuzz_mappings():
    return graph_specs(FUZZ).map(to_mapping)


@st.composite
def corrupted_mappings(draw):
    return corrupt(draw, draw(fuzz_mappings()))


# ---- shape inference (test_infer_matches_reference): constants that rules read -------------------------------
INFER_OPS = ["add", "mul", "relu", "tanh", "matmul", "shape", "reshape", "const", "identity", "transpose"]
INFER = Profile(
    name="h", groups=(tuple(INFER_OPS),), nodes=(1, 40),
    inputs=st.just([("x", (8, 8), "float32"), ("w", (8, 8), "float32"), ("t", (2,), "int64")]),
    readable_inputs=("x", "w"),  # `t` only as a reshape target
    rules={"add": Rule(2), "mul": Rule(2), "matmul": Rule(2), "reshape": Rule(2, pools=(None, ("t",))),
           "const": Rule(0, attrs=st.fixed_dictionaries({"value": st.sampled_from([1.0, [8, 8], [64], [-1]])}))})


def infer_mappings():
    return graph_specs(INFER).map(to_mapping)


# ---- JSON documents (tests/loaders/test_json_readers_agree.py): one extra field per node, wrong types, a repeated key ---------------
def _json_extra(draw, spec: GraphSpec, node: NodeSpec) -> None:
    extra = draw(st.sampled_from(["", "attrs", "shape", "outputs", "scope", "compile", "odd"]))
    if extra == "attrs":
        # (beyond 64 bits: read as int by both parsers, never as a float)
        node.attrs = {"axis": draw(st.sampled_from([-1, 0, 1, 2**100 + 1, -(2**70) - 3]))}
    elif extra in ("shape", "outputs"):
        node.outputs, node.outputs_field = [((2, 3), "float32")], extra == "outputs"
    elif extra == "scope":
        node.scope = "s"
    elif extra == "compile":
        node.compile = draw(st.booleans())
    elif extra == "odd":  # a wrong type somewhere: both routes must give the same message
        node.planted[("name", "op", "inputs")[draw(st.integers(0, 2))]] = draw(ODD)


JSON_DOC = Profile(
    name="g", groups=(("relu", "add", "softmax", "Identity", "nosuch"),), inputs=_one_input("x", (2, 3)), nodes=(1, 6),
    default=Rule((0, 2)), extra_refs=lambda j: [""] + ([f"n{j - 1}:1"] if j else []), decorate=_json_extra,
    outputs=lambda spec: None, dims=st.sampled_from([None, {"B": 1}]))


@st.composite
def json_documents(draw):
    """JSON text; half of them write one key of one mapping twice."""
    doc = to_pairs(to_mapping(draw(graph_specs(JSON_DOC))))
    if draw(st.booleans()):
        repeat_a_key(draw, doc)
    return dumps(doc)


__all__ = ["CLUSTERING_OPS", "NONE", "clustering_profile", "dags", "finalized_dags", "fuzz_mappings",
           "corrupted_mappings", "infer_mappings", "json_documents"]
