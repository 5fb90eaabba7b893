"""PyTorch models built from torch.nn, exported with torch.export: they load, and xcviz's hybrid run matches
the module's eager output. The models are also what test_fx_partitioner.py compares with torch.fx's partitioner."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

torch = pytest.importorskip("torch", reason="needs the torch extra: pip install -e '.[torch]'")
nn = torch.nn
F = torch.nn.functional


class ResBlock(nn.Module):
    """conv-bn-relu-conv-bn plus the skip, then a pooled classifier."""

    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4)
        self.conv2, self.bn2 = nn.Conv2d(4, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4)
        self.stem = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        x = F.relu(self.stem(x))
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        h = F.relu(h + x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1))


class Encoder(nn.Module):
    """Two nn.TransformerEncoderLayers."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x):
        return self.enc(x)


class GPT(nn.Module):
    """Token and position embeddings, one pre-norm block with a causal-mask SDPA, and the LM head."""

    def __init__(self, vocab=40, d=16, heads=2, ctx=8):
        super().__init__()
        self.heads = heads
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.ln1, self.ln2, self.lnf = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx, dtype=torch.bool)))

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(t))
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=-1)
        q, k, v = (y.view(b, t, self.heads, -1).transpose(1, 2) for y in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask[:t, :t])
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, -1))
        x = x + self.out(F.gelu(self.fc(self.ln2(x))))
        return self.head(self.lnf(x))


class Tagger(nn.Module):
    """Embedding, LSTM, per-token tag scores."""

    def __init__(self):
        super().__init__()
        self.emb, self.lstm, self.tags = nn.Embedding(30, 8), nn.LSTM(8, 12, batch_first=True), nn.Linear(12, 5)

    def forward(self, idx):
        h, _ = self.lstm(self.emb(idx))
        return F.log_softmax(self.tags(h), dim=-1)


class DeepTagger(nn.Module):
    """Embedding, a two-layer bidirectional LSTM and a GRU left as aten.lstm / aten.gru (not decomposed)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 8)
        self.lstm = nn.LSTM(8, 12, num_layers=2, bidirectional=True, batch_first=True)
        self.gru, self.tags = nn.GRU(24, 10, batch_first=True), nn.Linear(10, 5)

    def forward(self, idx):
        h, _ = self.lstm(self.emb(idx))
        h, _ = self.gru(h)
        return F.log_softmax(self.tags(h), dim=-1)


class DataDependent(nn.Module):
    """Two compute blocks with topk between them, and nonzero beside: neither has a static-shape kernel."""

    def __init__(self):
        super().__init__()
        self.a1, self.a2 = nn.Linear(8, 16), nn.Linear(16, 16)
        self.b1, self.b2 = nn.Linear(4, 8), nn.Linear(8, 3)

    def forward(self, x):
        h = torch.tanh(self.a2(F.relu(self.a1(x))))
        top, _ = torch.topk(h, 4, dim=-1)
        y = self.b2(F.relu(self.b1(top)))
        return y, torch.nonzero(x > 0.5)


class TwoBranch(nn.Module):
    """Two independent branches joined at the end."""

    def __init__(self):
        super().__init__()
        self.a1, self.a2, self.b1, self.b2 = nn.Linear(8, 8), nn.Linear(8, 4), nn.Linear(8, 8), nn.Linear(8, 4)

    def forward(self, x):
        a = self.a2(F.relu(self.a1(x)))
        b = self.b2(torch.sigmoid(self.b1(x)))
        return torch.cat([a, b * 2.0], dim=-1)


def _ints(*shape, high):
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(1))


def _floats(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(1))


# name -> (module factory, example inputs, decompose before loading)
MODELS = {
    "resnet_block": (ResBlock, lambda: (_floats(2, 3, 8, 8),), False),
    "transformer_encoder": (Encoder, lambda: (_floats(2, 5, 16),), False),
    "gpt": (GPT, lambda: (_ints(2, 6, high=40),), False),
    "lstm_tagger": (Tagger, lambda: (_ints(2, 5, high=30),), True),
    "rnn_tagger": (DeepTagger, lambda: (_ints(2, 5, high=30),), False),
    "data_dependent": (DataDependent, lambda: (_floats(3, 8),), False),
    "two_branch": (TwoBranch, lambda: (_floats(3, 8),), False),
}


def build(name: str):
    """(eval-mode module, example inputs, exported program)."""
    factory, inputs, decompose = MODELS[name]
    torch.manual_seed(0)
    model = factory().eval()
    args = inputs()
    ep = torch.export.export(model, args, strict=False)
    return model, args, ep.run_decompositions() if decompose else ep


def eager(model, args) -> list[np.ndarray]:
    with torch.no_grad():
        out = model(*args)
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_export_loads_and_hybrid_run_matches_eager(name, tmp_path, run_cli):
    model, args, ep = build(name)
    path = str(tmp_path / f"{name}.pt2")
    torch.export.save(ep, path)
    feeds = {s.arg.name: a.numpy() for s, a in zip(
        [s for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"], args)}
    np.savez(tmp_path / "in.npz", **feeds)
    code, out, err = run_cli("run", path, "--inputs", str(tmp_path / "in.npz"), "-o", str(tmp_path / "out.npz"),
                             "--min-cluster-size", "1")
    assert code == 0, err
    with np.load(tmp_path / "out.npz") as got:
        outs = [got[k] for k in got.files]
    want = eager(model, args)
    assert len(outs) == len(want)
    for g, w in zip(outs, want):
        assert g.shape == w.shape
        scale = max(float(np.abs(w).max()), 1e-6)
        assert float(np.abs(g.astype(np.float64) - w).max()) <= 1e-4 * scale, name


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_aten_op_of_the_models_is_in_the_table(name):
    import xcviz

    _, _, ep = build(name)
    g = xcviz.from_torch(ep)
    assert [n.note for n in g.nodes if not n.known] == []
    compute = [n for n in ep.graph.nodes if n.op == "call_function" and "getitem" not in n.name]
    names = {n.name for n in g.nodes}
    assert {n.name for n in compute if hasattr(n.meta.get("val"), "shape")} <= names


def test_validate_compiles_each_cluster_of_a_program(tmp_path, run_cli):
    _, _, ep = build("gpt")
    path = str(tmp_path / "gpt.pt2")
    torch.export.save(ep, path)
    code, out, err = run_cli("validate", path, "--json")
    assert code == 0, err
    report = json.loads(out)
    clusters = report["clusters"]
    assert clusters and all(c["status"] == "ok" for c in clusters)
