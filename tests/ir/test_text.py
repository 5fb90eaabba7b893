"""The text form (.xcir): print -> parse gives the same graph, byte-exact reprints, goldens, errors, window.

Rewrite the goldens with XCVIZ_UPDATE_GOLDEN=1 pytest tests/ir/test_text.py, then review the diff."""
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.support.paths import GRAPHS, ROOT
from tests.support.goldens import check_golden
from tests.support.strategies import (clustering_profile, finalized_dags, fuzz_mappings, graph_specs, mapping_to_graph, to_graph,
                        typed_mappings)
from xcviz import XcvizError, load, parse_graph, print_graph
from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.ir import Graph, Node, TensorType, Value, parse_ref
from xcviz.ir.text_print import window
from xcviz.passes.prepare import prepare

GOLDEN = os.path.join(ROOT, "tests", "golden", "xcir")
EXAMPLES = sorted(f for f in os.listdir(GRAPHS) if f.endswith((".yaml", ".yml", ".json", ".onnx")))


# ---- equality: every field a graph's meaning rests on (not `source`, nor a node's `where`) -------------
def same_value(a, b) -> bool:
    """Equal and of the same type all the way down; NaN equals NaN; arrays by dtype, shape and bytes."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype == object:
            return all(same_value(x, y) for x, y in zip(a.flat, b.flat))
        return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
    return a == b


NODE_FIELDS = ("name", "op", "op_type", "inputs", "control_inputs", "device", "compile", "scope", "outputs",
               "known", "note")


def assert_same_graph(a: Graph, b: Graph) -> None:
    assert a.name == b.name
    assert [(v.name, v.type) for v in a.inputs] == [(v.name, v.type) for v in b.inputs]
    for v, w in zip(a.inputs, b.inputs):
        assert same_value(v.data, w.data), v.name
    assert len(a.nodes) == len(b.nodes)
    for m, n in zip(a.nodes, b.nodes):
        for f in NODE_FIELDS:
            assert getattr(m, f) == getattr(n, f), (m.name, f, getattr(m, f), getattr(n, f))
        assert same_value(m.attrs, n.attrs), (m.name, m.attrs, n.attrs)
    assert a.outputs == b.outputs
    assert a.output_names == b.output_names
    assert a.dims == b.dims and list(a.dims) == list(b.dims)


def roundtrip(g: Graph, clustering=None) -> str:
    text = print_graph(g, clustering)
    back = parse_graph(text, "rt.xcir")
    assert_same_graph(g, back)
    assert print_graph(back, clustering) == text  # byte for byte
    return text


# ---- every example graph ---------------------------------------------------------------------------
def _analyse(name):
    from xcviz.pipeline import analyse

    cwd = os.getcwd()
    os.chdir(ROOT)  # relative source paths, as in samples/
    try:
        a = analyse(os.path.join("graphs", name))
        return a.graph, a.clustering, a.stats
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_round_trip_and_match_goldens(name):
    g, c, _ = _analyse(name)
    roundtrip(g)
    text = roundtrip(g, c)
    golden = os.path.join(GOLDEN, f"{os.path.splitext(name)[0]}.xcir")
    check_golden(golden, text, __file__)
    # a golden is a graph file too: it loads as the graph it was printed from, and clusters the same
    back = load(golden)
    assert_same_graph(g, back)
    assert run_clustering(back, ClusterOptions()).cluster_of == c.cluster_of


def test_every_example_has_a_golden():
    assert sorted(os.listdir(GOLDEN)) == sorted(f"{os.path.splitext(n)[0]}.xcir" for n in EXAMPLES)


# ---- property-generated graphs -------------------------------------------------------------------------
PROPS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@PROPS
@given(g=finalized_dags())
def test_random_dags_round_trip(g):
    roundtrip(g)
    roundtrip(g, run_clustering(g, ClusterOptions(min_cluster_size=1)))


@pytest.mark.slow
@PROPS
@given(spec=graph_specs(clustering_profile(declare=False, opaque=())))
def test_random_clustering_graphs_round_trip(spec):
    """Devices, scopes, compile flags, several control inputs, repeated inputs. (Not `known=False` set by
    hand on a registry op: the text has no way to say it.)"""
    try:
        g = to_graph(spec, finalize=True)
    except XcvizError:
        assume(False)
    roundtrip(g)
    roundtrip(g, run_clustering(g, ClusterOptions(min_cluster_size=1)))


@pytest.mark.slow
@PROPS
@given(m=st.one_of(fuzz_mappings(), typed_mappings()))
def test_random_mapping_graphs_round_trip(m):
    try:
        g = mapping_to_graph(m, "fuzz.yaml", allow_unknown=True)
    except XcvizError:
        assume(False)
    roundtrip(g)


# ---- hand-built graphs with everything the text must carry --------------------------------------------
HOSTILE_NAMES = ["/bn1/BatchNormalization", "a:b", "x:1", "with space", "名前", 'q"uote', "back\\slash", "new\nline",
                 "\x1b[31mred", "\u202eevil", "\ud800", "tab\there", "#hash", "%pct", "", "0", "-", "none"]


def _graph(nodes, inputs=None, outputs=None, **kw):
    inputs = inputs or [Value("x", TensorType((2, 3), "float32"))]
    return prepare(Graph("t", inputs=inputs, nodes=nodes, outputs=outputs or [nodes[-1].name], **kw), allow_unknown=True)


@pytest.mark.parametrize("name", [n for n in HOSTILE_NAMES if n])
def test_names_round_trip(name):
    plain = parse_ref(name) == (name, 0)  # else a ref to it reads as output k of another name
    ref = name if plain else "x"
    nodes = [Node(name, "relu", "relu", ("x",)), Node(name + "_2", "add", "Add", (ref, "x"), (name,))]
    g = _graph(nodes, inputs=[Value("x", TensorType((2, 3), "float32"))], outputs=[ref, name + "_2"],
               output_names={ref: name + " own"})
    text = roundtrip(g)
    assert "\x1b" not in text and "\u202e" not in text and "\ud800" not in text  # escaped, never raw


def test_graph_and_input_names_round_trip():
    for name in HOSTILE_NAMES:
        g = prepare(Graph(name, inputs=[Value(name or "in", TensorType((2,), "float32"))],
                           nodes=[Node("n", "relu", "relu", (name or "in",))], outputs=["n"]))
        roundtrip(g)


def test_refs_keep_their_exact_spelling():
    nodes = [Node("s", "split", "Split", ("x",), attrs={"axis": 1, "num_outputs": 3}),
             Node("a", "add", "add", ("s:0", "s:2")), Node("b", "add", "add", ("s:1", "s")),
             Node("c:7", "relu", "relu", ("b",)), Node("d", "relu", "relu", ("b",), ("c:7",))]
    g = _graph(nodes, inputs=[Value("x", TensorType((2, 3), "float32"))], outputs=["s:0", "s:02", "d"])
    text = roundtrip(g)
    assert "%s:0, %s:2" in text and '%"c:7": ' in text and '^%"c:7"' in text


ATTRS = {
    "i": 3, "neg": -7, "big": 2**80, "f": 0.1, "negzero": -0.0, "tiny": 5e-324, "inf": float("inf"),
    "ninf": float("-inf"), "nan": float("nan"), "t": True, "no": False, "none": None, "s": 'a "b" \\ \n\x00 é',
    "empty": "", "list": [1, 2.5, "x", None, [True, []]], "tuple": (1,), "tuple2": (1, (2, 3)), "dict": {"a": 1, "b c": {"": []}},
    "bytes": b"\x00\xff\"ab", "odd key!": 1, "none_word": "none", "123": "digits",
}


def test_attributes_round_trip():
    g = _graph([Node("n", "relu", "relu", ("x",), attrs=dict(ATTRS))])
    roundtrip(g)


ARRAYS = [
    np.arange(6, dtype=np.float32).reshape(2, 3) / 7, np.array(2.5, np.float64), np.zeros((0, 3), np.int64),
    np.array([True, False]), np.arange(-5, 5, dtype=np.int8), np.array([1e-8, 65504, -0.0], np.float16),
    np.random.default_rng(0).standard_normal((40, 40)).astype(np.float32),  # hex
    np.array([np.nan, np.inf, -np.inf, 0.1], np.float32),
    np.frombuffer(b"\x01\x00\xc0\x7f\x00\x00\xc0\xff", np.float32),  # NaNs with payload / sign: hex
    np.array([2**63 - 1, -(2**63)], np.int64), np.array([2**64 - 1], np.uint64),
    np.array([[b"ab", b"\x00"], [b"", b"z"]], dtype=object), np.array(["é", 'q"'], dtype=object),
    np.array([1 + 2j], np.complex64),
]


@pytest.mark.parametrize("k", range(len(ARRAYS)))
def test_constants_round_trip_exactly(k):
    a = ARRAYS[k]
    g = _graph([Node("n", "identity", "Identity", ("w",), attrs={"value": a})],
               inputs=[Value("w", TensorType(a.shape, "float32"), data=a)])
    roundtrip(g)


def test_types_round_trip():
    types = [TensorType(), TensorType(None, "float32"), TensorType((2, "batch"), None), TensorType((), "int64"),
             TensorType(("?",), "float32"), TensorType(("?", 3), "float32"), TensorType(("a b", "3", ""), "bool"),
             TensorType((1,), "weird-dtype"), TensorType((4,), "bfloat16"), TensorType((1,), "float8_e4m3fn")]
    inputs = [Value(f"x{i}", t) for i, t in enumerate(types)]
    nodes = [Node("o", "opaque_thing", "opaque_thing", tuple(v.name for v in inputs), outputs=types[:4]),
             Node("z", "relu", "relu", ("x0",), outputs=[])]
    g = _graph(nodes, inputs=inputs, outputs=["o:3", "z"], dims={"batch": 8, "seq": 0})
    text = roundtrip(g)
    assert "f32[?]" in text and '["?"]' in text and "f32[?,3]" in text and "[dims={batch=8, seq=0}]" in text


def test_node_fields_round_trip():
    nodes = [Node("a", "relu", "Relu", ("x",), device="/gpu:0", scope="blk/1", compile=False),
             Node("b", "relu", "relu", ("a",), ("a",), compile=True),
             Node("c", "Weird", "Weird", ("b", ""), note="custom op com.x::Weird", outputs=[TensorType(), TensorType()])]
    g = _graph(nodes, outputs=["c:1"])
    text = roundtrip(g)
    assert g.nodes[2].known is False
    assert '[device="/gpu:0", scope="blk/1", compile=false, op_type="Relu"]' in text
    assert "relu(%a, ^%a) [compile=true]" in text and "Weird(%b, none)" in text


def test_empty_graph_round_trips():
    roundtrip(prepare(Graph("empty")))


# ---- loading .xcir -------------------------------------------------------------------------------------
SMALL = """# a comment before the graph
graph small(%x: f32[2,3]) {
  %r: f32[2,3] = relu(%x)   # cluster_0
  %s: ? = sigmoid(%r)
  return %s
}
"""


def test_xcir_loads_by_suffix_and_by_content(write_graph):
    for name in ("g.xcir", "g.txt"):
        g = load(write_graph(SMALL, name))
        assert [n.op for n in g.nodes] == ["relu", "sigmoid"] and g.nodes[1].outputs == (TensorType((2, 3), "float32"),)


def test_shapes_are_inferred_and_checked(write_graph):
    g = load(write_graph(SMALL, "g.xcir"))
    assert g.nodes[1].out().shape == (2, 3)
    with pytest.raises(XcvizError) as e:
        load(write_graph(SMALL.replace("%r: f32[2,3]", "%r: f32[2,4]"), "g.xcir"))
    assert e.value.where.endswith("g.xcir:3:3") and "declared" in e.value.message


def test_unknown_ops_need_a_note_or_allow_unknown(write_graph):
    path = write_graph(SMALL.replace("relu(", "rleu("), "g.xcir")
    with pytest.raises(XcvizError) as e:
        load(path)
    assert e.value.where.endswith("g.xcir:3:3") and "relu" in (e.value.hint or "")
    g = load(path, allow_unknown=True)
    assert not g.nodes[0].known and g.nodes[0].note == "unknown op rleu"
    noted = SMALL.replace("relu(%x)", 'rleu(%x) [note="vendor op"]')
    assert load(write_graph(noted, "n.xcir")).nodes[0].note == "vendor op"


BAD = [
    ("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%x\n  return %a\n}\n", "3:3", "expected ',' or ')'"),
    ("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%x) {k=\"open}\n  return %a\n}\n", "2:28", "unexpected character"),
    ("graph g(%x: f32[2]) {\n  %a: f33[2] = relu(%x)\n  return %a\n}\n", "2:7", "unknown dtype 'f33'"),
    ("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%x) {k=yes}\n  return %a\n}\n", "2:28", "unexpected word 'yes'"),
    ("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%x) [colour=1]\n  return %a\n}\n", "2:26", "unknown field 'colour'"),
    ("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%x)\n}\n", "3:1", "expected a node"),
    ("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%x)\n  return %a\n", "4:1", "expected '}' closing"),
    ("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%x) {v=\"\\q\"}\n  return %a\n}\n", "2:28", "unknown escape"),
    ("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%x) {v=dense<f32[3] [1, 2]>}\n  return %a\n}\n", "2:28", "2 values"),
    ("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%x) {v=" + "[" * 200 + "]" * 200 + "}\n  return %a\n}\n", "2:", "deeper"),
    ("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%ghost)\n  return %a\n}\n", "2:3", "not defined"),
    ("graph g(%x: f32[2]) {\n  %a: f32[2] = relu(%x)\n  %a: f32[2] = relu(%x)\n  return %a\n}\n", "3:3", "duplicate node"),
    ("graph g(%x: f32[2], %x: f32[2]) {\n  return %x\n}\n", "1:21", "duplicate graph input"),
]


@pytest.mark.parametrize("text,at,message", BAD)
def test_syntax_errors_say_file_line_col(write_graph, text, at, message):
    path = write_graph(text, "bad.xcir")
    with pytest.raises(XcvizError) as e:
        load(path)
    assert e.value.where.startswith(f"{path}:{at}"), e.value.where
    assert message in str(e.value) and e.value.hint


def test_parse_graph_names_its_source():
    with pytest.raises(XcvizError) as e:
        parse_graph("graph g() {\n  retrun\n}")
    assert e.value.where == "<text>:2:3"
    with pytest.raises(XcvizError) as e:
        parse_graph("graph g() {\n  retrun\n}", "mine.xcir")
    assert e.value.where == "mine.xcir:2:3"


def test_cli_print_and_its_errors(run_cli, write_graph, tmp_path):
    code, out, err = run_cli("print", os.path.join(GRAPHS, "seed_demo.yaml"), "--min-cluster-size", "1")
    assert code == 0 and "# cluster_0" in out and "# fallback: forced off" in out
    code, plain, _ = run_cli("print", os.path.join(GRAPHS, "seed_demo.yaml"), "--plain")
    assert code == 0 and "#" not in plain and plain == print_graph(load(os.path.join(GRAPHS, "seed_demo.yaml")))
    target = str(tmp_path / "s.xcir")
    code, _, err = run_cli("print", os.path.join(GRAPHS, "seed_demo.yaml"), "-o", target)
    assert code == 0 and "wrote" in err
    code, out, _ = run_cli("stats", target, "--json")
    assert code == 0 and '"nodes": 6' in out
    code, out, err = run_cli("cluster", write_graph(BAD[0][0], "bad.xcir"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "bad.xcir:3:3" in err


# ---- window ----------------------------------------------------------------------------------------------
def test_window_shows_the_nodes_around_one():
    g = load(os.path.join(GRAPHS, "transformer_block.yaml"))
    w = window(g, 5)
    lines = w.splitlines()
    assert lines[0] == "  ..." and lines[-1] == "  ..." and len(lines) == 7
    assert lines[3].startswith("> %k_heads: f32[batch,seq,4,64] = reshape(%k)")
    assert all(line.startswith("  %") for line in lines[1:3] + lines[4:6])
    assert window(g, 0, radius=1).splitlines()[0].startswith("> %ln1:")
    assert window(g, len(g.nodes) - 1, radius=0) == "  ...\n> " + print_graph(g).splitlines()[-3].strip()


def test_window_on_a_half_built_graph_never_raises():
    big = Node("big", "const", "Const", (), attrs={"value": list(range(1000)), "bad": object()})
    g = Graph("g", nodes=[Node("a", "relu", "relu", ("x",)), big])
    w = window(g, 1)
    assert w.splitlines()[1].startswith("> %big = const(...)")
    g = Graph("g", nodes=[Node("a", "relu", "relu", ("x",)), Node("b", "const", "Const", (), attrs={"v": list(range(1000))})])
    assert len(window(g, 1).splitlines()[1]) == 160
    g = Graph("g", nodes=[Node("c", "const", "Const", (), attrs={"v": np.zeros((10, 10), np.int64)})])
    assert window(g, 0) == "> %c: () = const() {v=dense<i64[10,10] [ …"


# ---- hostile text: any edit of a valid file loads or fails with one XcvizError --------------------------
SEED = print_graph(_graph([Node("n", "relu", "Relu", ("w",), attrs=dict(ATTRS, a=ARRAYS[0], h=ARRAYS[8])),
                           Node("o", "add", "add", ("n", "x"), ("n",), device="gpu", scope="s")],
                          inputs=[Value("x", TensorType((2, 3), "float32")),
                                  Value("w", TensorType((2, 3), "float32"), data=ARRAYS[0])]))


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(edits=st.lists(st.tuples(st.integers(0, len(SEED)), st.integers(0, 3),
                                st.sampled_from(list('%"\\:^()[]{}<>,=#?\n x0-.') + ["\ud800", "é", "dense<", "0x"])),
                      min_size=1, max_size=4))
@pytest.mark.slow
def test_edited_text_loads_or_fails_cleanly(edits):
    text = SEED
    for at, cut, insert in edits:
        text = text[:at] + insert + text[at + cut:]
    try:
        parse_graph(text, "edited.xcir", allow_unknown=True)
    except XcvizError as e:
        assert e.where and e.where.startswith("edited.xcir")


def test_long_blank_runs_fail_in_linear_time():
    import time

    start = time.perf_counter()
    for text in ("graph g() {" + " " * 200_000 + "@", "graph g() {" + "# c\n" * 50_000 + "@"):
        with pytest.raises(XcvizError, match="unexpected character '@'"):
            parse_graph(text)
    assert time.perf_counter() - start < 20  # a lexer that retried at every offset took minutes
