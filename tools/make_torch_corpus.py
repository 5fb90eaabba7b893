"""The PyTorch corpus: transformers architectures (random-initialised from tiny configs, nothing downloaded) and
modules written as timm writes its layers, each saved as a torch.export program (.pt2) and as its ONNX export
(torch.onnx.export, dynamo), with inputs and eager outputs; then what xcviz does with each pair (load, cluster,
hybrid run against eager, validate, coverage of the .pt2 against its ONNX twin) as a markdown table.

    python3 -m venv --system-site-packages /work/venvs/aten && /work/venvs/aten/bin/pip install transformers onnxscript
    PYTHONPATH=. /work/venvs/aten/bin/python tools/make_torch_corpus.py OUT_DIR            # export + table
    PYTHONPATH=. /work/venvs/aten/bin/python tools/make_torch_corpus.py OUT_DIR --fixtures tests/data/torch_corpus
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import warnings
import zipfile

import numpy as np

# the pairs committed under tests/data/torch_corpus (about 300 KB together): one of each pattern the issue names
FIXTURES = ("timm_vit", "timm_gn_weightnorm", "hf_bert", "hf_t5_encoder", "hf_wav2vec2")


def save_npz(path, arrays):
    """np.savez with fixed zip timestamps, so identical arrays give identical bytes."""
    import io

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(arrays):
            buf = io.BytesIO()
            np.save(buf, np.asarray(arrays[name]), allow_pickle=False)
            z.writestr(zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0)), buf.getvalue())


# ---- the models -----------------------------------------------------------------------------------------------
def timm_like():
    import torch
    from torch import nn

    F = nn.functional

    class Attention(nn.Module):
        """timm.models.vision_transformer.Attention: one qkv projection, `q, k, v = qkv.unbind(0)`."""

        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.qkv, self.proj = heads, nn.Linear(dim, dim * 3), nn.Linear(dim, dim)

        def forward(self, x):
            b, n, c = x.shape
            qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
            q, k, v = qkv.unbind(0)
            x = F.scaled_dot_product_attention(q, k, v)
            return self.proj(x.transpose(1, 2).reshape(b, n, c))

    class Block(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.norm1, self.attn, self.norm2 = nn.LayerNorm(dim), Attention(dim, heads), nn.LayerNorm(dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    class ViT(nn.Module):
        """timm's VisionTransformer, small: conv patch embedding, class token, learned positions, 2 blocks."""

        def __init__(self, dim=16, heads=2, patch=4, img=16, classes=5):
            super().__init__()
            self.patch = nn.Conv2d(3, dim, patch, patch)
            self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
            self.pos = nn.Parameter(torch.randn(1, (img // patch) ** 2 + 1, dim) * 0.02)
            self.blocks = nn.Sequential(Block(dim, heads), Block(dim, heads))
            self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2)
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
            return self.head(self.norm(self.blocks(x))[:, 0])

    class GNConvNet(nn.Module):
        """timm's GroupNorm stages (nf-nets, resnetv2 with GroupNorm) and a weight-normed conv (as Wav2Vec2's
        positional conv), SiLU, global pooling and a classifier."""

        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, 2, 1)
            self.gn1 = nn.GroupNorm(2, 8)
            self.conv = nn.utils.weight_norm(nn.Conv2d(8, 8, 3, padding=1, groups=2), dim=2)
            self.gn2 = nn.GroupNorm(4, 8)
            self.pool = nn.AdaptiveAvgPool2d((2, 2))
            self.fc = nn.Linear(32, 5)

        def forward(self, x):
            x = F.silu(self.gn1(self.stem(x)))
            x = x + F.silu(self.gn2(self.conv(x)))
            return self.fc(self.pool(x).flatten(1))

    img = torch.randn(2, 3, 16, 16)
    return {"timm_vit": (ViT(), {"x": img}), "timm_gn_weightnorm": (GNConvNet(), {"x": img})}


def hf_models():
    import torch
    import transformers as tf

    tiny = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    ids = torch.randint(3, 60, (2, 7))
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[1, 5:] = 0  # a padded row: the padding mask is built (transformers 5: mask[b, None, None, kv] indexing)
    out = {}

    def add(name, cls, config, inputs, keys):
        out[name] = (Wrapper(cls(config).eval(), keys, list(inputs)), inputs)

    class Wrapper(torch.nn.Module):
        """Positional inputs in, the named tensors out (HF models take keywords and return ModelOutputs)."""

        def __init__(self, model, keys, names):
            super().__init__()
            self.model, self.keys, self.names = model, keys, names

        def forward(self, *args, **kw):
            o = self.model(**dict(zip(self.names, args)), **kw)
            return tuple(o[k] for k in self.keys)

    attn = {"attn_implementation": "sdpa"}
    add("hf_bert", tf.BertModel, tf.BertConfig(vocab_size=64, max_position_embeddings=16, **tiny, **attn),
        {"input_ids": ids, "attention_mask": mask}, ["last_hidden_state", "pooler_output"])
    add("hf_gpt2", tf.GPT2Model, tf.GPT2Config(vocab_size=64, n_positions=16, n_embd=16, n_layer=1, n_head=2, **attn),
        {"input_ids": ids, "attention_mask": mask}, ["last_hidden_state"])
    add("hf_t5_encoder", tf.T5EncoderModel, tf.T5Config(vocab_size=64, d_model=16, d_kv=8, d_ff=32, num_layers=1,
                                                        num_heads=2, relative_attention_num_buckets=8, **attn),
        {"input_ids": ids, "attention_mask": mask}, ["last_hidden_state"])
    add("hf_whisper", tf.WhisperModel, tf.WhisperConfig(
        vocab_size=64, d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, num_mel_bins=8, max_source_positions=8,
        max_target_positions=16, pad_token_id=0, decoder_start_token_id=1, **attn),
        {"input_features": torch.randn(1, 8, 16), "decoder_input_ids": torch.tensor([[1, 5, 9, 0]])},
        ["last_hidden_state"])
    add("hf_wav2vec2", tf.Wav2Vec2Model, tf.Wav2Vec2Config(
        conv_dim=(8, 8), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=4,
        num_conv_pos_embedding_groups=2, feat_extract_norm="group", vocab_size=32, **tiny, **attn),
        {"input_values": torch.randn(1, 400)}, ["last_hidden_state"])
    add("hf_t5", tf.T5Model, tf.T5Config(vocab_size=64, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2,
                                         relative_attention_num_buckets=8, decoder_start_token_id=0, **attn),
        {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": ids[:, :4]}, ["last_hidden_state"])
    add("hf_bart", tf.BartModel, tf.BartConfig(
        vocab_size=64, d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=16, **attn),
        {"input_ids": ids, "attention_mask": mask}, ["last_hidden_state"])
    add("hf_distilbert", tf.DistilBertModel, tf.DistilBertConfig(
        vocab_size=64, dim=16, n_layers=1, n_heads=2, hidden_dim=32, max_position_embeddings=16, **attn),
        {"input_ids": ids, "attention_mask": mask}, ["last_hidden_state"])
    img = torch.randn(2, 3, 32, 32)
    add("hf_resnet", tf.ResNetModel, tf.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                                                     layer_type="basic"),
        {"pixel_values": img}, ["last_hidden_state", "pooler_output"])
    add("hf_convnext", tf.ConvNextModel, tf.ConvNextConfig(hidden_sizes=[8, 16], depths=[1, 1], num_stages=2),
        {"pixel_values": img}, ["last_hidden_state", "pooler_output"])
    add("hf_swin", tf.SwinModel, tf.SwinConfig(image_size=32, patch_size=4, embed_dim=8, depths=[1, 1],
                                               num_heads=[1, 2], window_size=4),
        {"pixel_values": img}, ["last_hidden_state", "pooler_output"])
    add("hf_vit", tf.ViTModel, tf.ViTConfig(image_size=16, patch_size=4, num_channels=3, **tiny, **attn),
        {"pixel_values": torch.randn(2, 3, 16, 16)}, ["last_hidden_state", "pooler_output"])
    return out


def build_all():
    import torch

    torch.manual_seed(0)
    models = timm_like()
    torch.manual_seed(0)
    models.update(hf_models())
    return models


# ---- export ------------------------------------------------------------------------------------------------------
def export_one(name, model, inputs, out_dir):
    import onnx
    import torch

    model.eval()
    with torch.no_grad():
        eager = model(**inputs)
    eager = eager if isinstance(eager, tuple) else (eager,)
    save_npz(os.path.join(out_dir, f"{name}.inputs.npz"), {k: v.numpy() for k, v in inputs.items()})
    save_npz(os.path.join(out_dir, f"{name}.eager.npz"),
             {f"out{k}": t.detach().numpy() for k, t in enumerate(eager)})
    ep = torch.export.export(model, (), kwargs=inputs, strict=False)
    torch.export.save(ep, os.path.join(out_dir, f"{name}.pt2"))
    compact_pt2(os.path.join(out_dir, f"{name}.pt2"))
    onnx_path = os.path.join(out_dir, f"{name}.onnx")
    try:
        torch.onnx.export(model, (), onnx_path, kwargs=inputs, dynamo=True, external_data=False)
        exporter = "dynamo"
    except Exception:  # noqa: BLE001 - T5's relative buckets fail the dynamo exporter's decomposition step
        names = list(inputs)
        torch.onnx.export(model, tuple(inputs[k] for k in names), onnx_path, input_names=names, dynamo=False)
        exporter = "torchscript"
    m = onnx.load(onnx_path)
    for node in m.graph.node:  # the exporter's stack traces name this script's path: not part of the model
        del node.metadata_props[:]
    onnx.save(m, onnx_path)
    return {"onnx_exporter": exporter, "onnx_outputs": [o.name for o in m.graph.output]}


def compact_pt2(path):
    """The archive without the per-node stack traces (they name this script's and the libraries' paths, so
    they change between checkouts; nothing reads them), a serialization id that is a digest of the rest (torch
    draws one at random), entries deflated: a sixth of the size, the same bytes from the same models.
    xcviz's reader and torch.export.load read it as before."""
    import hashlib
    import json

    with zipfile.ZipFile(path) as z:
        items = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    out = []
    for name, data in items:
        if name.endswith(".json") and "/models/" in name:
            program = json.loads(data)
            for node in program["graph_module"]["graph"]["nodes"]:
                node.get("metadata", {}).pop("stack_trace", None)
            data = json.dumps(program, sort_keys=True).encode()
        out.append((name, data))
    digest = hashlib.sha256(b"".join(d for n, d in out if not n.endswith("/.data/serialization_id"))).hexdigest()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in out:
            if name.endswith("/.data/serialization_id"):
                data = str(int(digest[:32], 16)).encode()
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data, compress_type=zipfile.ZIP_DEFLATED)


# ---- what xcviz does with each pair --------------------------------------------------------------------------------
def coverage(graph, clustering):
    """(ops clustered, ops) with constants left out (an ONNX Constant is a node, a .pt2 constant is not)."""
    ops = [j for j, n in enumerate(graph.nodes) if n.op not in ("const", "identity")]
    return sum(1 for j in ops if clustering.cluster_of[j] >= 0), len(ops)


def survey_one(name, out_dir):
    import xcviz

    base = os.path.join(out_dir, name)
    inputs = dict(np.load(base + ".inputs.npz"))
    eager = np.load(base + ".eager.npz")
    want = [eager[f"out{k}"] for k in range(len(eager.files))]
    row = {"model": name}
    try:
        g = xcviz.load(base + ".pt2")
        row["load"] = "ok"
        unknown = sorted({n.op for n in g.nodes if not n.known})
        row["unknown"] = unknown
        c = xcviz.cluster(g)
        row["clusters"], row["coverage"] = len(c.clusters), coverage(g, c)
        got = list(xcviz.run(g, inputs, mode="hybrid", clustering=c).values())
        row["max_err"] = max(float(np.abs(a.astype(np.float64) - b).max() / max(float(np.abs(b).max()), 1e-6))
                             for a, b in zip(got, want))
        row["hybrid"] = "ok" if row["max_err"] < 1e-4 and len(got) == len(want) else "mismatch"
        v = xcviz.validate(g, c, inputs=inputs, repeats=1)
        row["validate"] = "ok" if v.ok else "fail"
    except Exception as e:  # noqa: BLE001 - the table records the first failure of each step
        row["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:160]
    try:
        go = xcviz.load(base + ".onnx")
        co = xcviz.cluster(go)
        row["onnx_clusters"], row["onnx_coverage"] = len(co.clusters), coverage(go, co)
    except Exception as e:  # noqa: BLE001
        row["onnx_error"] = f"{type(e).__name__}: {e}".splitlines()[0][:160]
    return row


def table(rows) -> str:
    def pct(cov):
        return f"{cov[0]}/{cov[1]} ({100 * cov[0] / max(cov[1], 1):.0f} %)" if cov else "–"

    lines = ["| model | load | clusters .pt2 / ONNX | coverage .pt2 | coverage ONNX | hybrid vs eager (max rel. err) "
             "| validate |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        err = f"{r['hybrid']} ({r['max_err']:.1e})" if "max_err" in r else r.get("error", "–")
        lines.append(f"| {r['model']} | {r.get('load', 'fail')} | {r.get('clusters', '–')} / "
                     f"{r.get('onnx_clusters', '–')} | {pct(r.get('coverage'))} | {pct(r.get('onnx_coverage'))} | "
                     f"{err} | {r.get('validate', '–')} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--fixtures", help="copy the FIXTURES models' files here (for the tests)")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--survey-only", action="store_true")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    os.makedirs(args.out_dir, exist_ok=True)
    import torch

    torch.set_num_threads(1)
    manifest = {}
    if not args.survey_only:
        for name, (model, inputs) in build_all().items():
            if args.only and name not in args.only:
                continue
            print("export", name, file=sys.stderr)
            try:
                manifest[name] = export_one(name, model, inputs, args.out_dir)
            except Exception as e:  # noqa: BLE001
                manifest[name] = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:200]}
                print("  failed:", manifest[name]["error"], file=sys.stderr)
    names = sorted(n[:-4] for n in os.listdir(args.out_dir) if n.endswith(".pt2"))
    rows = [survey_one(n, args.out_dir) for n in names if not args.only or n in args.only]
    with open(os.path.join(args.out_dir, "survey.json"), "w") as f:
        json.dump({"manifest": manifest, "rows": rows}, f, indent=1, sort_keys=True)
    print(table(rows))
    if args.fixtures:
        os.makedirs(args.fixtures, exist_ok=True)
        for n in FIXTURES:
            for ext in (".pt2", ".onnx", ".inputs.npz", ".eager.npz"):
                shutil.copy(os.path.join(args.out_dir, n + ext), os.path.join(args.fixtures, n + ext))


if __name__ == "__main__":
    main()
