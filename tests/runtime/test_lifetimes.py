"""The runtime frees each value after its last use (as torch.fx's Interpreter does), and a failing node is named."""
from __future__ import annotations

import tracemalloc
import weakref

import numpy as np
import pytest

import xcviz
from xcviz.errors import XcvizError
from xcviz.runtime import execute as execute_mod
from xcviz.runtime.execute import execute, lifetimes
from xcviz.runtime.node import NodeFailed

OPS = ("Relu", "Neg", "Sigmoid", "Abs")


def _chain(tmp_path, depth: int, shape=(1, 4, 256, 256), skip: bool = False):
    """x -> n0 -> n1 -> ... -> n{depth-1} (the output); with `skip`, the last node also adds x back."""
    lines = ["name: chain", "inputs:", f"  - {{name: x, shape: {list(shape)}, dtype: float32}}", "nodes:"]
    prev = "x"
    for i in range(depth):
        lines.append(f"  - {{name: n{i}, op: {OPS[i % len(OPS)]}, inputs: [{prev}]}}")
        prev = f"n{i}"
    if skip:
        lines.append(f"  - {{name: out, op: Add, inputs: [{prev}, x]}}")
        prev = "out"
    lines.append(f"outputs: [{prev}]")
    path = tmp_path / "chain.yaml"
    path.write_text("\n".join(lines) + "\n")
    return xcviz.load(str(path))


def test_an_intermediate_is_freed_once_its_last_reader_ran(tmp_path, monkeypatch):
    g = _chain(tmp_path, 6, shape=(2, 8), skip=True)
    made: dict[str, weakref.ref] = {}
    alive_at: dict[str, set] = {}
    real = execute_mod.run_node

    def spy(node, args):  # the real run_node; records which earlier results are still alive when each node starts
        alive_at[node.name] = {n for n, r in made.items() if r() is not None}
        outs = real(node, args)
        made[node.name] = weakref.ref(outs[0])
        return outs

    monkeypatch.setattr(execute_mod, "run_node", spy)
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
    result = execute(g, {"x": x}, "native", cache=None)
    # n0 is read by n1 only: by the time n2 runs it is gone; each node sees only its own input alive
    for i in range(2, 6):
        assert alive_at[f"n{i}"] == {f"n{i - 1}"}, (i, alive_at[f"n{i}"])
    assert alive_at["out"] == {"n5"}
    assert made["n0"]() is None and made["n4"]() is None
    assert result.env is None


def test_freeing_changes_no_value_and_keep_all_keeps_every_tensor(tmp_path):
    g = _chain(tmp_path, 5, shape=(3, 4), skip=True)
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    # n0 Relu, n1 Neg, n2 Sigmoid, n3 Abs, n4 Relu, out = n4 + x
    want = np.maximum(np.abs(1 / (1 + np.exp(np.maximum(x, 0)))), 0) + x
    lean = execute(g, {"x": x}, "native")
    full = execute(g, {"x": x}, "native", keep_all=True)
    np.testing.assert_allclose(lean.outputs["out"], want, rtol=1e-6)
    np.testing.assert_array_equal(lean.outputs["out"], full.outputs["out"])
    assert {"n0", "n1", "n2", "n3", "n4", "out"} <= set(full.env)
    plan = next(iter(execute_mod.graph_cache(g).plans.values()))
    env = execute_mod._run_units(g, {"x": x}, plan, None)
    assert set(env) == {"out"}   # what the run hands back once every reader ran: the outputs alone


def test_lifetimes_release_each_ref_at_its_last_reader(tmp_path):
    g = _chain(tmp_path, 3, shape=(2, 2), skip=True)
    units = [("node", i) for i in range(len(g.nodes))]
    life = lifetimes(g, units, {})
    released = {r: p for p, refs in enumerate(life.release) for r in refs}
    order = [g.nodes[i].name for i in range(len(g.nodes))]
    assert released == {"x": order.index("out"), "n0": order.index("n1"), "n1": order.index("n2"),
                        "n2": order.index("out")}
    assert "out" in life.read and "out" not in released   # an output is never released


def test_peak_memory_of_a_deep_chain_is_bounded(tmp_path):
    g = _chain(tmp_path, 24)   # 24 intermediates of 1 MiB each
    x = np.ones((1, 4, 256, 256), np.float32)
    execute(g, {"x": x}, "native")   # (plan and imports outside the measurement)

    def peak(keep_all: bool) -> int:
        tracemalloc.start()
        try:
            execute(g, {"x": x}, "native", keep_all=keep_all)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    mib = 1 << 20
    assert peak(True) > 20 * mib        # every intermediate held to the end
    assert peak(False) < 4 * mib        # about two at a time


def test_a_failing_node_is_named_and_its_cause_chained(tmp_path):
    path = tmp_path / "mm.yaml"
    path.write_text("name: mm\ninputs:\n  - {name: a, shape: [2, 3], dtype: float32}\n"
                    "  - {name: b, shape: [3, 4], dtype: float32}\nnodes:\n"
                    "  - {name: first, op: Relu, inputs: [a]}\n"
                    "  - {name: product, op: MatMul, inputs: [first, b]}\noutputs: [product]\n")
    g = xcviz.load(str(path))
    feeds = {"a": np.ones((2, 3), np.float32), "b": np.ones((5, 4), np.float32)}   # b does not fit
    with pytest.raises(NodeFailed, match=r"while executing node 'product' \(MatMul\): ValueError") as info:
        execute(g, feeds, "native")
    assert isinstance(info.value.__cause__, ValueError) and info.value.node == "product"


def test_an_xcviz_error_keeps_its_message_with_the_node_as_where(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("name: p\ninputs:\n  - {name: x, shape: [2, 3], dtype: float32}\n"
                    "  - {name: slope, shape: [3], dtype: float32}\nnodes:\n"
                    "  - {name: act, op: PRelu, inputs: [x, slope]}\noutputs: [act]\n")
    g = xcviz.load(str(path))
    feeds = {"x": np.ones((2, 3), np.float32), "slope": np.ones((4,), np.float32)}   # slope does not broadcast
    with pytest.raises(XcvizError) as info:
        execute(g, feeds, "native")
    assert not isinstance(info.value, NodeFailed)
    assert str(info.value) == "node 'act' (PRelu): PRelu slope of shape (4,) does not broadcast to X (2, 3)"


def test_xcviz_run_names_the_failing_node_in_its_one_line(tmp_path, run_cli):
    graph = tmp_path / "r.yaml"
    graph.write_text("name: r\ninputs:\n  - {name: a, shape: [2, 3], dtype: float32}\n"
                     "  - {name: s, shape: [2], dtype: int64}\nnodes:\n"
                     "  - {name: shape_it, op: Reshape, inputs: [a, s]}\noutputs: [shape_it]\n")
    inputs = tmp_path / "in.npz"
    np.savez(inputs, a=np.ones((2, 3), np.float32), s=np.array([7, 7], np.int64))   # 6 elements into 49
    code, out, err = run_cli("run", str(graph), "--inputs", str(inputs), "--mode", "native", "--native", "numpy",
                             "--repeats", "1")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 1 and out == "" and len(lines) == 1 and "Traceback" not in err, (code, err)
    assert "while executing node 'shape_it' (Reshape): ValueError: cannot reshape array of size 6" in lines[0]


def test_the_hybrid_program_releases_each_entry_after_its_last_step():
    import os

    from xcviz.runtime.inputs import bind_inputs
    from xcviz.runtime.jit import CompileCache
    from xcviz.runtime.native import OnnxRuntime
    from xcviz.runtime.wholemodel import Hybrid
    from tests.support.paths import GRAPHS

    g = xcviz.load(os.path.join(GRAPHS, "detector_mini.onnx"))   # clusters and an onnxruntime segment
    c = xcviz.cluster(g)
    feeds = bind_inputs(g, None, 0)
    env = execute(g, feeds, "native", keep_all=True).env
    h = Hybrid(g, c, OnnxRuntime(1), env, CompileCache())
    last = {}
    for p, (kind, spec, _) in enumerate(h.steps):
        for r in (spec.entries if kind in ("segment", "control", "cluster") else ()):
            last[r] = p
    released = [r for refs in h.release for r in refs]
    assert len(released) == len(set(released)) and not set(released) & set(g.outputs)
    assert {r: p for p, refs in enumerate(h.release) for r in refs} == \
        {r: p for r, p in last.items() if r not in g.outputs}
    assert len(h.steps) >= 2 and released
    out = h(feeds)
    for r in g.outputs:
        np.testing.assert_allclose(out[r], env[r], rtol=1e-5, atol=1e-5)


def test_the_numpy_runtime_frees_each_value_after_its_last_reader(tmp_path):
    """The NumPy fallback runtime (native.NumpyRuntime, what a part runs on when no production runtime takes it)
    frees as execute does: a deep chain of 1 MiB tensors peaks at a few of them, not at every one."""
    from xcviz.runtime.native import NumpyRuntime

    depth = 24
    g = _chain(tmp_path, depth, shape=(1, 4, 256, 256))   # f32: 1 MiB per value
    members = list(range(len(g.nodes)))
    x = np.linspace(-1, 1, 4 * 256 * 256, dtype=np.float32).reshape(1, 4, 256, 256)
    run = NumpyRuntime(1).prepare(g, members, ["x"], [f"n{depth - 1}", "n5"], {})
    tracemalloc.start()
    try:
        out, n5 = run({"x": x})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    want = execute(g, {"x": x}, "native", keep_all=True).env
    np.testing.assert_array_equal(out, want[f"n{depth - 1}"])
    np.testing.assert_array_equal(n5, want["n5"])   # an exit read by later nodes is kept for the caller
    mib = 1 << 20
    assert peak < 6 * mib, f"traced peak {peak / mib:.1f} MiB: intermediates are kept ({depth} of 1 MiB)"


def test_the_numpy_runtime_drops_a_value_once_read(tmp_path, monkeypatch):
    from xcviz.runtime import native

    g = _chain(tmp_path, 5, shape=(2, 8))
    made: dict[str, weakref.ref] = {}
    alive_at: dict[str, set] = {}
    real = native.eval_node

    def spy(node, args):  # the real eval_node; records which earlier results are alive when each node starts
        alive_at[node.name] = {n for n, r in made.items() if r() is not None}
        outs = real(node, args)
        made[node.name] = weakref.ref(outs[0])
        return outs

    monkeypatch.setattr(native, "eval_node", spy)
    run = native.NumpyRuntime(1).prepare(g, list(range(5)), ["x"], ["n4"], {})
    [out] = run({"x": np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)})
    assert [alive_at[f"n{i}"] for i in range(1, 5)] == [{"n0"}, {"n1"}, {"n2"}, {"n3"}]
    assert made["n4"]() is out
