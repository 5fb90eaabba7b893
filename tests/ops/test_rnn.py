"""LSTM, GRU and RNN against onnxruntime on the cases the node tests leave out: ragged sequence_lens in both
directions, initial states, clip, non-default activations with alpha/beta, linear_before_reset, input_forget,
peepholes, every output; native (NumPy) and jit (lax.scan) alike."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from xcviz.passes.prepare import prepare
from xcviz.loaders.onnx_model import graph_from_model
from xcviz.runtime.execute import execute
from xcviz.runtime.inputs import bind_inputs
from xcviz.runtime.jit import CompileCache

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

T, N, I, H = 5, 3, 4, 6
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _model(kind, direction, attrs, lens, states, peep):
    D = 2 if direction == "bidirectional" else 1
    G = GATES[kind]
    rng = np.random.default_rng(hash((kind, direction, lens, states, peep, tuple(sorted(attrs)))) % 2**32)
    feeds = {"X": rng.standard_normal((T, N, I)).astype(np.float32)}
    inits = [helper.make_tensor(n, TensorProto.FLOAT, a.shape, a.reshape(-1).tolist()) for n, a in (
        ("W", rng.standard_normal((D, G * H, I)).astype(np.float32) * 0.5),
        ("R", rng.standard_normal((D, G * H, H)).astype(np.float32) * 0.5),
        ("B", rng.standard_normal((D, 2 * G * H)).astype(np.float32) * 0.3))]
    ins = ["X", "W", "R", "B", "", "", ""]
    if lens:
        feeds["L"] = np.array([5, 2, 4], np.int32)
        ins[4] = "L"
    if states:
        feeds["h0"] = rng.standard_normal((D, N, H)).astype(np.float32)
        ins[5] = "h0"
        if kind == "LSTM":
            feeds["c0"] = rng.standard_normal((D, N, H)).astype(np.float32)
            ins[6] = "c0"
    if kind == "LSTM" and peep:
        inits.append(helper.make_tensor("P", TensorProto.FLOAT, (D, 3 * H),
                                        (rng.standard_normal(D * 3 * H) * 0.3).tolist()))
        ins.append("P")
    ins = ins[:len(ins) if kind == "LSTM" else 6]
    while ins and ins[-1] == "":
        ins.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    node = helper.make_node(kind, ins, outs, hidden_size=H, direction=direction, **attrs)
    g_in = [helper.make_tensor_value_info(k, TensorProto.INT32 if k == "L" else TensorProto.FLOAT, v.shape)
            for k, v in feeds.items()]
    g_out = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs]
    model = helper.make_model(helper.make_graph([node], "rnn", g_in, g_out, inits),
                              opset_imports=[helper.make_opsetid("", 14)])
    return model, feeds


ACTS = {"LSTM": {"activations": ["HardSigmoid", "LeakyRelu", "ScaledTanh"], "activation_alpha": [0.3, 0.05, 1.5],
                 "activation_beta": [0.4, 0.8]},
        "GRU": {"activations": ["HardSigmoid", "Softsign"], "activation_alpha": [0.25], "activation_beta": [0.45]},
        "RNN": {"activations": ["Elu"], "activation_alpha": [0.7]}}
EXTRA = {"LSTM": {"input_forget": 1}, "GRU": {"linear_before_reset": 1}, "RNN": {"clip": 0.8}}
# every (lens, states) pair meets every kind, direction and variant once across the grid (27 cases, not 81)
PAIRS = ((True, True), (True, False), (False, True))
DIRECTIONS = ("forward", "reverse", "bidirectional")
CASES = [(k, d, *PAIRS[(i + j) % 3], variant) for k in GATES for i, d in enumerate(DIRECTIONS)
         for j, variant in enumerate(("plain", "acts", "extra"))]


@pytest.mark.parametrize("kind,direction,lens,states,variant", CASES, ids=lambda v: str(v))
def test_recurrent_matches_onnxruntime(kind, direction, lens, states, variant):
    attrs = {"plain": {"clip": 2.5}, "acts": ACTS[kind], "extra": EXTRA[kind]}[variant]
    if variant == "acts" and direction == "bidirectional":
        attrs = {k: v * 2 for k, v in attrs.items()}
    model, feeds = _model(kind, direction, attrs, lens, states, peep=variant == "plain")
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    g = prepare(graph_from_model(model, "rnn"), onnx=True)
    for mode in ("native", "jit"):
        got = list(execute(g, bind_inputs(g, feeds), mode, cache=CompileCache()).outputs.values())
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=f"{mode}")


def test_layout_1_is_layout_0_transposed():
    model, feeds = _model("LSTM", "bidirectional", {}, True, True, True)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    node = model.graph.node[0]
    node.attribute.append(helper.make_attribute("layout", 1))
    feeds1 = {**feeds, "X": feeds["X"].transpose(1, 0, 2).copy(), "h0": feeds["h0"].transpose(1, 0, 2).copy(),
              "c0": feeds["c0"].transpose(1, 0, 2).copy()}
    for vi in model.graph.input:
        if vi.name in ("X", "h0", "c0"):
            dims = vi.type.tensor_type.shape.dim
            dims[0].dim_value, dims[1].dim_value = dims[1].dim_value, dims[0].dim_value
    g = prepare(graph_from_model(model, "rnn"), onnx=True)
    for mode in ("native", "jit"):
        y, yh, yc = execute(g, bind_inputs(g, feeds1), mode, cache=CompileCache()).outputs.values()
        np.testing.assert_allclose(y, want[0].transpose(2, 0, 1, 3), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(yh, want[1].transpose(1, 0, 2), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(yc, want[2].transpose(1, 0, 2), rtol=1e-5, atol=1e-5)
    assert [t.shape for t in g.nodes[0].outputs] == [(N, T, 2, H), (N, 2, H), (N, 2, H)]
