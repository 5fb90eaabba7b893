"""aten.lstm and aten.gru as torch.export leaves them (no decomposition): multi-layer, bidirectional,
batch_first, without biases, with given initial states; run natively and under jit against torch eager."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the torch extra: pip install -e '.[torch]'")
import xcviz  # noqa: E402

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

nn = torch.nn

# name -> (module factory, input shape, pass initial states)
CASES = {
    "lstm_2layer_bidir_batch_first": (lambda: nn.LSTM(6, 5, num_layers=2, bidirectional=True, batch_first=True),
                                      (3, 4, 6), False),
    "lstm_one_layer": (lambda: nn.LSTM(6, 5), (4, 3, 6), False),
    "lstm_no_bias_given_states": (lambda: nn.LSTM(6, 5, num_layers=2, bias=False), (4, 3, 6), True),
    "gru_2layer_bidir": (lambda: nn.GRU(6, 5, num_layers=2, bidirectional=True), (4, 3, 6), False),
    "gru_batch_first_given_state": (lambda: nn.GRU(6, 5, batch_first=True), (3, 4, 6), True),
}


class WithStates(nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, *states):
        y, s = self.rnn(x, *([states] if len(states) > 1 else states))
        return (y, *s) if isinstance(s, tuple) else (y, s)


def _case(name):
    factory, shape, given = CASES[name]
    torch.manual_seed(0)
    rnn = factory().eval()
    x = torch.randn(*shape)
    if not given:
        return WithStates(rnn).eval(), (x,)
    dirs, layers, n = 2 if rnn.bidirectional else 1, rnn.num_layers, shape[0 if rnn.batch_first else 1]
    states = [torch.randn(dirs * layers, n, rnn.hidden_size) for _ in range(2 if isinstance(rnn, nn.LSTM) else 1)]
    return WithStates(rnn).eval(), (x, *states)


@pytest.mark.parametrize("mode", ["native", "jit"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_recurrent_aten_op_matches_torch(name, mode):
    module, args = _case(name)
    graph = xcviz.from_torch(module, args)
    kind = "lstm" if "lstm" in name else "gru"
    assert [n.op for n in graph.nodes if n.op.startswith("torch_")] == [f"torch_{kind}"]
    feeds = {v.name: a.numpy() for v, a in zip([v for v in graph.inputs if v.data is None], args)}
    got = list(xcviz.run(graph, feeds, mode=mode).values())
    with torch.no_grad():
        want = [w.numpy() for w in module(*args)]
    assert len(got) == len(want) == (3 if kind == "lstm" else 2)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.shape == b.shape, (name, k)
        assert float(np.abs(a - b).max()) <= 1e-4 * max(1.0, float(np.abs(b).max())), (name, k)


def test_recurrent_op_compiles_and_has_flops():
    from xcviz.pipeline import AnalysisOptions, analyse

    module, args = _case("lstm_2layer_bidir_batch_first")
    a = analyse(xcviz.from_torch(module, args), AnalysisOptions(min_cluster_size=1))
    i = a.graph.index["lstm"]
    assert a.clustering.cluster_of[i] >= 0
    # per layer and direction: steps × rows × 4 gates × hidden × (2 (in + hidden) + 4)
    want = 2 * 4 * 3 * 4 * 5 * (2 * (6 + 5) + 4) + 2 * 4 * 3 * 4 * 5 * (2 * (10 + 5) + 4)
    assert a.stats.clusters_detail[a.clustering.cluster_of[i]].flops >= want


def test_packed_sequences_and_training_dropout_load_opaque():
    lstm = nn.LSTM(6, 5, num_layers=2, dropout=0.5).train()
    graph = xcviz.from_torch(WithStates(lstm).train(), (torch.randn(4, 3, 6),))
    notes = [n.note for n in graph.nodes if not n.known]
    assert notes == ["aten.lstm: aten.lstm in training mode with dropout=0.5"]
