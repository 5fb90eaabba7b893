"""Export small torch.nn models to ONNX with both of torch's exporters, as reference data for issue 12.

    python3 -m venv /tmp/torchenv
    /tmp/torchenv/bin/pip install torch==2.13.0 onnx onnxruntime numpy onnxscript   # the CPU wheel
    /tmp/torchenv/bin/python tools/make_exports.py [OUT_DIR]          # default: tests/data/exports

Nothing is downloaded: every model is built from torch.nn with seeded weights. Models:
  bert           BERT-style encoder: token + position embeddings, padding mask, 2 post-LN layers, GELU, pooler
  gpt            GPT-style decoder: arange positions, causal mask (triu), 2 pre-LN layers, tied LM head
  tagger         sequence tagger: embedding, bidirectional LSTM, GRU, linear head
  unet           UNet: Conv-BN-ReLU, MaxPool down, ConvTranspose up, Concat skips
  detect         detection head: conv backbone, box/score heads, TopK + gathered boxes, NonMaxSuppression
                 (a torch.library custom op, translated to ONNX NonMaxSuppression by both exporters)
  greedy_decode  greedy decoding with an early stop on EOS: a scripted while loop -> ONNX Loop (TorchScript
                 exporter); the dynamo exporter gets the eager module (it takes no ScriptModule)
  greedy_whileloop  the same decoder written with torch's while_loop higher-order op -> ONNX Loop (dynamo
                 exporter); tokens in a fixed EOS-padded buffer

Each model is exported with the dynamo exporter (dynamo=True) and the TorchScript exporter (dynamo=False).
For each export that works, OUT_DIR gets <model>_<exporter>.onnx, .inputs.npz (the example inputs),
.ort.npz (onnxruntime's outputs) and .eager.npz (torch eager's outputs), keyed by the ONNX graph's own input
and output names, and manifest.json lists every export (opset, node count, op histogram with and without
subgraph bodies, ORT-vs-eager max relative error) and every export that failed, with its first error line.

Determinism: torch, numpy and onnxruntime run on one thread with fixed seeds; the .npz files are written
with fixed zip timestamps; the exporters' per-node debugging metadata (stack traces naming this file's
path, which differ between checkouts) is dropped. Semantics are untouched. Re-running gives identical
files with the same torch/onnx/onnxscript/onnxruntime versions.
"""

import io
import json
import math
import os
import sys
import traceback
import warnings
import zipfile
from collections import Counter

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "exports")
TOL = 1e-4  # ORT vs eager, relative to each output's scale (integer/bool outputs must be equal)


def _torch():
    import torch

    torch.set_num_threads(1)
    return torch


# --------------------------------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------------------------------
def build_models():
    torch = _torch()
    import torch.nn as nn
    import torch.nn.functional as F

    class BertLayer(nn.Module):
        def __init__(self, d, heads, ffn):
            super().__init__()
            self.h, self.dh = heads, d // heads
            self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
            self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-12), nn.LayerNorm(d, eps=1e-12)
            self.fc1, self.fc2 = nn.Linear(d, ffn), nn.Linear(ffn, d)

        def forward(self, x, ext_mask):
            b, s, d = x.shape
            q = self.q(x).view(b, s, self.h, self.dh).transpose(1, 2)
            k = self.k(x).view(b, s, self.h, self.dh).transpose(1, 2)
            v = self.v(x).view(b, s, self.h, self.dh).transpose(1, 2)
            att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + ext_mask
            ctx = torch.matmul(att.softmax(-1), v).transpose(1, 2).reshape(b, s, d)
            x = self.ln1(x + self.o(ctx))
            return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))

    class Bert(nn.Module):
        """BERT-style: positions from a registered buffer sliced to the sequence (as HF BERT does)."""

        def __init__(self, vocab=64, d=32, heads=4, layers=2, ffn=64, max_pos=32):
            super().__init__()
            self.word, self.pos, self.typ = nn.Embedding(vocab, d), nn.Embedding(max_pos, d), nn.Embedding(2, d)
            self.register_buffer("position_ids", torch.arange(max_pos).unsqueeze(0), persistent=False)
            self.ln = nn.LayerNorm(d, eps=1e-12)
            self.layers = nn.ModuleList(BertLayer(d, heads, ffn) for _ in range(layers))
            self.pool = nn.Linear(d, d)

        def forward(self, input_ids, attention_mask):
            s = input_ids.shape[1]
            x = self.word(input_ids) + self.pos(self.position_ids[:, :s]) + self.typ(torch.zeros_like(input_ids))
            x = self.ln(x)
            ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
            for layer in self.layers:
                x = layer(x, ext)
            return x, torch.tanh(self.pool(x[:, 0]))

    class GptBlock(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.h, self.dh = heads, d // heads
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x, causal):
            b, s, d = x.shape
            q, k, v = self.attn(self.ln1(x)).split(d, dim=2)
            q, k, v = (t.view(b, s, self.h, self.dh).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.dh))
            att = att.masked_fill(causal, float("-inf")).softmax(-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class Gpt(nn.Module):
        """GPT-style: positions by arange, the causal mask by triu over a ones matrix of the sequence length."""

        def __init__(self, vocab=64, d=32, heads=4, layers=2, max_pos=32):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(max_pos, d)
            self.blocks = nn.ModuleList(GptBlock(d, heads) for _ in range(layers))
            self.ln = nn.LayerNorm(d)

        def forward(self, input_ids):
            s = input_ids.shape[1]
            pos = torch.arange(s, dtype=torch.long, device=input_ids.device)
            causal = torch.triu(torch.ones(s, s, dtype=torch.bool, device=input_ids.device), diagonal=1)
            x = self.wte(input_ids) + self.wpe(pos)
            for block in self.blocks:
                x = block(x, causal)
            return self.ln(x) @ self.wte.weight.t()

    class Tagger(nn.Module):
        def __init__(self, vocab=50, emb=16, hidden=24, tags=5):
            super().__init__()
            self.emb = nn.Embedding(vocab, emb)
            self.lstm = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
            self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
            self.head = nn.Linear(hidden, tags)

        def forward(self, input_ids):
            h, _ = self.lstm(self.emb(input_ids))
            h, _ = self.gru(h)
            return self.head(h)

    def cbr(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                             nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self, cin=3, classes=2, c=8):
            super().__init__()
            self.e1, self.e2, self.mid = cbr(cin, c), cbr(c, 2 * c), cbr(2 * c, 4 * c)
            self.up2, self.d2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2), cbr(4 * c, 2 * c)
            self.up1, self.d1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2), cbr(2 * c, c)
            self.head = nn.Conv2d(c, classes, 1)

        def forward(self, x):
            e1 = self.e1(x)
            e2 = self.e2(F.max_pool2d(e1, 2))
            m = self.mid(F.max_pool2d(e2, 2))
            d2 = self.d2(torch.cat([self.up2(m), e2], 1))
            d1 = self.d1(torch.cat([self.up1(d2), e1], 1))
            return self.head(d1)

    class Detect(nn.Module):
        """Anchor-free head on an 8x8 grid: 64 boxes (y1, x1, y2, x2), 3 class scores each."""

        def __init__(self, classes=3, c=16, k=16, max_out=8, iou=0.5, score=0.3):
            super().__init__()
            self.backbone = nn.Sequential(nn.Conv2d(3, c, 3, stride=2, padding=1), nn.ReLU(),
                                          nn.Conv2d(c, c, 3, stride=2, padding=1), nn.ReLU())
            self.box, self.cls = nn.Conv2d(c, 4, 1), nn.Conv2d(c, classes, 1)
            self.k, self.max_out, self.iou, self.score = k, max_out, iou, score
            ys, xs = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
            self.register_buffer("centers", torch.stack([ys, xs], -1).reshape(1, 64, 2) + 0.5, persistent=False)

        def forward(self, image):
            f = self.backbone(image)
            b = f.shape[0]
            r = self.box(f).reshape(b, 4, 64).transpose(1, 2)                    # [B, 64, 4]
            half = torch.exp(r[..., 2:].clamp(max=2.0)) * 0.5
            ctr = self.centers + torch.tanh(r[..., :2])
            boxes = torch.cat([ctr - half, ctr + half], -1) / 8.0                # [B, 64, 4]
            scores = torch.sigmoid(self.cls(f).reshape(b, -1, 64))               # [B, classes, 64]
            best, _ = scores.max(1)
            top_scores, top_idx = torch.topk(best, self.k, dim=1)                # [B, k]
            top_boxes = torch.gather(boxes, 1, top_idx.unsqueeze(-1).expand(b, self.k, 4))
            selected = torch.ops.xcviz_exports.nms(boxes, scores, self.max_out, self.iou, self.score)
            return top_scores, top_boxes, selected

    class GreedyDecode(nn.Module):
        """Greedy decoding: at most `steps` tokens, stopping early once every sequence has produced EOS
        (a data-dependent loop condition, so TorchScript keeps it as a loop: ONNX Loop)."""

        def __init__(self, vocab: int = 20, d: int = 16, steps: int = 8, eos: int = 0):
            super().__init__()
            self.emb, self.w, self.u, self.out = nn.Embedding(vocab, d), nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, vocab)
            self.steps, self.eos = steps, eos

        def forward(self, h, start):
            tok = start
            tokens = start.unsqueeze(1)
            done = start == self.eos
            i = 0
            while i < self.steps and not bool(done.all()):
                h = torch.tanh(self.w(self.emb(tok)) + self.u(h))
                tok = torch.where(done, torch.full_like(tok, self.eos), torch.argmax(self.out(h), dim=-1))
                done = done | (tok == self.eos)
                tokens = torch.cat([tokens, tok.unsqueeze(1)], dim=1)
                i += 1
            return tokens, h

    class GreedyDecodeWhileLoop(GreedyDecode):
        """The same decoder written with torch's while_loop higher-order op (what torch.export can capture):
        tokens go into a fixed [B, steps + 1] buffer padded with EOS."""

        def forward(self, h, start):
            from torch._higher_order_ops.while_loop import while_loop

            tokens = torch.cat([start.unsqueeze(1), torch.full((start.shape[0], self.steps), self.eos,
                                                                dtype=start.dtype)], dim=1)

            def cond(i, tok, done, h, tokens):
                return (i < self.steps) & ~done.all()

            def body(i, tok, done, h, tokens):
                h = torch.tanh(self.w(self.emb(tok)) + self.u(h))
                tok = torch.where(done, torch.full_like(tok, self.eos), torch.argmax(self.out(h), dim=-1))
                tokens = tokens.index_copy(1, (i + 1).reshape(1), tok.unsqueeze(1))
                return i + 1, tok, done | (tok == self.eos), h, tokens

            i0 = torch.zeros((), dtype=torch.int64)
            _, _, _, h, tokens = while_loop(cond, body, (i0, start, start == self.eos, h, tokens))
            return tokens, h

    return {"Bert": Bert, "Gpt": Gpt, "Tagger": Tagger, "UNet": UNet, "Detect": Detect, "GreedyDecode": GreedyDecode,
            "GreedyDecodeWhileLoop": GreedyDecodeWhileLoop}


# --------------------------------------------------------------------------------------------------
# NonMaxSuppression: a torch.library custom op with ONNX's semantics, and its translation for both exporters
# --------------------------------------------------------------------------------------------------
_NMS_REGISTERED = False


def register_nms():
    """torch.ops.xcviz_exports.nms(boxes [B,N,4] y1x1y2x2, scores [B,C,N], max_out, iou, score) -> [K, 3] int64.

    Eager: ONNX NonMaxSuppression (center_point_box=0) as onnxruntime implements it: per batch and class,
    candidates with score > score_threshold by descending score, a candidate is dropped when its IoU with
    a kept box is > iou_threshold, at most max_out per class; rows (batch, class, box)."""
    global _NMS_REGISTERED
    torch = _torch()
    if _NMS_REGISTERED:
        return
    _NMS_REGISTERED = True

    @torch.library.custom_op("xcviz_exports::nms", mutates_args=())
    def nms(boxes: torch.Tensor, scores: torch.Tensor, max_out: int, iou: float, score: float) -> torch.Tensor:
        rows = []
        for b in range(scores.shape[0]):
            bx = boxes[b]
            y1 = torch.minimum(bx[:, 0], bx[:, 2]); y2 = torch.maximum(bx[:, 0], bx[:, 2])
            x1 = torch.minimum(bx[:, 1], bx[:, 3]); x2 = torch.maximum(bx[:, 1], bx[:, 3])
            area = (y2 - y1) * (x2 - x1)
            for c in range(scores.shape[1]):
                s = scores[b, c]
                order = sorted((i for i in range(s.shape[0]) if float(s[i]) > score), key=lambda i: (-float(s[i]), i))
                kept = []
                for i in order:
                    if len(kept) >= max_out:
                        break
                    ok = True
                    for j in kept:
                        ih = float(torch.clamp(torch.minimum(y2[i], y2[j]) - torch.maximum(y1[i], y1[j]), min=0))
                        iw = float(torch.clamp(torch.minimum(x2[i], x2[j]) - torch.maximum(x1[i], x1[j]), min=0))
                        inter = ih * iw
                        union = float(area[i]) + float(area[j]) - inter
                        if inter > 0 and union > 0 and inter / union > iou:
                            ok = False
                            break
                    if ok:
                        kept.append(i)
                rows += [[b, c, i] for i in kept]
        return torch.tensor(rows, dtype=torch.int64).reshape(-1, 3)

    @nms.register_fake
    def _(boxes, scores, max_out, iou, score):
        n = torch.library.get_ctx().new_dynamic_size()
        return boxes.new_empty((n, 3), dtype=torch.int64)

    # TorchScript exporter
    from torch.onnx import symbolic_helper

    @symbolic_helper.parse_args("v", "v", "i", "f", "f")
    def nms_symbolic(g, boxes, scores, max_out, iou, score):
        return g.op("NonMaxSuppression", boxes, scores,
                    g.op("Constant", value_t=torch.tensor([max_out], dtype=torch.int64)),
                    g.op("Constant", value_t=torch.tensor([iou], dtype=torch.float32)),
                    g.op("Constant", value_t=torch.tensor([score], dtype=torch.float32)), center_point_box_i=0)

    torch.onnx.register_custom_op_symbolic("xcviz_exports::nms", nms_symbolic, 11)


def nms_translation():
    """The dynamo exporter's translation of torch.ops.xcviz_exports.nms (an onnxscript-traced function)."""
    import onnx
    from onnxscript import opset18 as op

    def nms_onnx(boxes, scores, max_out: int, iou: float, score: float):
        return op.NonMaxSuppression(
            boxes, scores, op.Constant(value=onnx.helper.make_tensor("m", onnx.TensorProto.INT64, [1], [max_out])),
            op.Constant(value=onnx.helper.make_tensor("i", onnx.TensorProto.FLOAT, [1], [iou])),
            op.Constant(value=onnx.helper.make_tensor("s", onnx.TensorProto.FLOAT, [1], [score])), center_point_box=0)

    torch = _torch()
    return {torch.ops.xcviz_exports.nms.default: nms_onnx}


# --------------------------------------------------------------------------------------------------
# specs: how each model is built, its example inputs, names and dynamic axes
# --------------------------------------------------------------------------------------------------
def specs():
    torch = _torch()
    classes = build_models()
    g = torch.Generator().manual_seed(1234)
    b, s = 2, 7
    ids = torch.randint(1, 64, (b, s), generator=g)
    mask = torch.ones(b, s, dtype=torch.int64)
    mask[1, 5:] = 0
    batch, seq = torch.export.Dim("batch", min=1, max=64), torch.export.Dim("seq", min=2, max=32)
    return [
        dict(name="bert", cls=classes["Bert"], args=(ids, mask), inputs=["input_ids", "attention_mask"],
             outputs=["last_hidden_state", "pooler_output"],
             dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}},
             dynamic_shapes={"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}),
        dict(name="gpt", cls=classes["Gpt"], args=(ids,), inputs=["input_ids"], outputs=["logits"],
             dynamic_axes={"input_ids": {0: "batch", 1: "seq"}}, dynamic_shapes={"input_ids": {0: batch, 1: seq}}),
        dict(name="tagger", cls=classes["Tagger"], args=(torch.randint(0, 50, (b, s), generator=g),),
             inputs=["input_ids"], outputs=["logits"],
             dynamic_axes={"input_ids": {0: "batch", 1: "seq"}}, dynamic_shapes={"input_ids": {0: batch, 1: seq}}),
        dict(name="unet", cls=classes["UNet"], args=(torch.randn(1, 3, 32, 32, generator=g),), inputs=["image"],
             outputs=["mask_logits"], dynamic_axes=None, dynamic_shapes=None),
        dict(name="detect", cls=classes["Detect"], args=(torch.randn(1, 3, 32, 32, generator=g),), inputs=["image"],
             outputs=["top_scores", "top_boxes", "selected_indices"], dynamic_axes=None, dynamic_shapes=None),
        dict(name="greedy_decode", cls=classes["GreedyDecode"],
             args=(torch.randn(2, 16, generator=g), torch.tensor([1, 3], dtype=torch.int64)), inputs=["h0", "start"],
             outputs=["tokens", "h"], dynamic_axes=None, dynamic_shapes=None, script=True),
        dict(name="greedy_whileloop", cls=classes["GreedyDecodeWhileLoop"],
             args=(torch.randn(2, 16, generator=g), torch.tensor([1, 3], dtype=torch.int64)), inputs=["h0", "start"],
             outputs=["tokens", "h"], dynamic_axes=None, dynamic_shapes=None),
    ]


def make_model(spec, seed):
    torch = _torch()
    torch.manual_seed(seed)
    m = spec["cls"]()
    # BatchNorm running statistics that are not the identity, so eval mode does real work
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            with torch.no_grad():
                mod.running_mean.uniform_(-0.2, 0.2)
                mod.running_var.uniform_(0.5, 1.5)
    return m.eval()


# --------------------------------------------------------------------------------------------------
# export, run, compare
# --------------------------------------------------------------------------------------------------
def export(spec, exporter, path, model):
    torch = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "torchscript":
            target = torch.jit.script(model) if spec.get("script") else model
            torch.onnx.export(target, spec["args"], path, dynamo=False, input_names=spec["inputs"],
                              output_names=spec["outputs"], dynamic_axes=spec["dynamic_axes"])
            return "scripted loop (torch.jit.script)" if spec.get("script") else ""
        extra = {}
        if spec["name"] == "detect":
            extra["custom_translation_table"] = nms_translation()
        prog = torch.onnx.export(model, spec["args"], dynamo=True, input_names=spec["inputs"],
                                 output_names=spec["outputs"], dynamic_shapes=spec["dynamic_shapes"],
                                 external_data=False, **extra)
        prog.save(path, external_data=False)
        return ""


def strip_debug_metadata(path):
    import onnx

    m = onnx.load(path)

    def clean(graph):
        for n in graph.node:
            del n.metadata_props[:]
            n.doc_string = ""
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    clean(a.g)
                for sub in a.graphs:
                    clean(sub)
        for vi in list(graph.value_info) + list(graph.input) + list(graph.output) + list(graph.initializer):
            del vi.metadata_props[:]
        del graph.metadata_props[:]

    clean(m.graph)
    for f in m.functions:
        for n in f.node:
            del n.metadata_props[:]
    with open(path, "wb") as fh:
        fh.write(m.SerializeToString(deterministic=True))
    return m


def histograms(model):
    top = Counter(n.op_type for n in model.graph.node)
    body = Counter()

    def walk(graph):
        for n in graph.node:
            for a in n.attribute:
                subs = ([a.g] if a.HasField("g") else []) + list(a.graphs)
                for sg in subs:
                    for bn in sg.node:
                        body[bn.op_type] += 1
                    walk(sg)

    walk(model.graph)
    return dict(sorted(top.items())), dict(sorted(body.items()))


def rel_err(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape:
        return float("inf")
    if ref.dtype.kind in "biu":
        return 0.0 if np.array_equal(got, ref) else float("inf")
    if ref.size == 0:
        return 0.0
    scale = float(np.max(np.abs(ref)))
    return float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64)))) / (scale if scale > 0 else 1.0)


def save_npz(path, arrays):
    """np.savez with fixed zip timestamps, so identical arrays give identical bytes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, arr in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, buf.getvalue())


def run_one(spec, exporter, out_dir, seed):
    import onnx
    import onnxruntime as ort

    torch = _torch()
    stem = f"{spec['name']}_{exporter}"
    path = os.path.join(out_dir, stem + ".onnx")
    model = make_model(spec, seed)
    with torch.no_grad():
        eager = model(*spec["args"])
    eager = eager if isinstance(eager, tuple) else (eager,)
    note = export(spec, exporter, path, model)
    m = strip_debug_metadata(path)
    onnx.checker.check_model(m)
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.log_severity_level = 3  # Loop outputs that grow per iteration make ORT warn about the inferred shape
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    by_arg = dict(zip(spec["inputs"], (a.numpy() for a in spec["args"])))
    in_names = [i.name for i in sess.get_inputs()]
    missing = [n for n in in_names if n not in by_arg]
    if missing:
        raise RuntimeError(f"ONNX inputs {missing} do not match the model's arguments {spec['inputs']}")
    feeds = {n: by_arg[n] for n in in_names}
    out_names = [o.name for o in sess.get_outputs()]
    ort_out = sess.run(None, feeds)
    eager_np = [t.numpy() for t in eager]
    if len(eager_np) != len(ort_out):
        raise RuntimeError(f"{len(ort_out)} ONNX outputs, {len(eager_np)} eager outputs")
    errs = {n: rel_err(o, e) for n, o, e in zip(out_names, ort_out, eager_np)}
    save_npz(os.path.join(out_dir, stem + ".inputs.npz"), feeds)
    save_npz(os.path.join(out_dir, stem + ".ort.npz"), dict(zip(out_names, ort_out)))
    save_npz(os.path.join(out_dir, stem + ".eager.npz"), dict(zip(out_names, eager_np)))
    top, body = histograms(m)
    opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
    max_err = max(errs.values())
    return {
        "model": spec["name"], "exporter": exporter, "status": "ok" if max_err <= TOL else "mismatch",
        "file": stem + ".onnx", "bytes": os.path.getsize(path), "opset": opset,
        "other_domains": sorted(f"{o.domain}:{o.version}" for o in m.opset_import if o.domain not in ("", "ai.onnx")),
        "functions": len(m.functions), "nodes": len(m.graph.node), "nodes_in_bodies": sum(body.values()),
        "initializers": len(m.graph.initializer),
        "inputs": {i.name: [d if isinstance(d, int) else str(d) for d in i.shape] for i in sess.get_inputs()},
        "input_shapes_used": {k: list(v.shape) for k, v in feeds.items()},
        "outputs": {n: [list(o.shape), str(o.dtype)] for n, o in zip(out_names, ort_out)},
        "ops": top, "ops_in_bodies": body,
        "ort_vs_eager_max_rel": max_err, "ort_vs_eager_rel_per_output": errs, "note": note,
    }


def describe_failure(exc):
    """The exception's first line and, when it wraps another, the root cause's first line (ANSI codes removed)."""
    import re

    def first(e):
        lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln).strip() for ln in str(e).strip().splitlines()]
        lines = [ln for ln in lines if ln]
        return f"{type(e).__name__}: {lines[0] if lines else ''}"

    root = exc
    while root.__cause__ is not None or (root.__context__ is not None and not root.__suppress_context__):
        root = root.__cause__ or root.__context__
    return first(exc) if root is exc else f"{first(exc)} <- caused by {first(root)}"


def main(out_dir=DEFAULT_OUT, only=None):
    import onnx
    import onnxruntime
    import onnxscript

    torch = _torch()
    register_nms()
    os.makedirs(out_dir, exist_ok=True)
    entries, failures = [], []
    for i, spec in enumerate(specs()):
        if only and spec["name"] not in only:
            continue
        for exporter in ("dynamo", "torchscript"):
            stem = f"{spec['name']}_{exporter}"
            print(f"[make_exports] {stem} ...", file=sys.stderr, flush=True)
            try:
                e = run_one(spec, exporter, out_dir, seed=100 + i)
                entries.append(e)
                print(f"  {e['status']}: {e['nodes']} nodes (+{e['nodes_in_bodies']} in bodies), opset {e['opset']}, "
                      f"{e['bytes']} bytes, ORT vs eager {e['ort_vs_eager_max_rel']:.2e}", file=sys.stderr)
            except Exception as exc:  # record why, keep going
                first = describe_failure(exc)
                failures.append({"model": spec["name"], "exporter": exporter, "error": first[:600]})
                print(f"  FAILED: {first[:600]}", file=sys.stderr)
                if os.environ.get("MAKE_EXPORTS_DEBUG"):
                    traceback.print_exc()
                for ext in (".onnx", ".inputs.npz", ".ort.npz", ".eager.npz"):
                    if os.path.exists(os.path.join(out_dir, stem + ext)):
                        os.remove(os.path.join(out_dir, stem + ext))
    manifest = {
        "generator": "tools/make_exports.py",
        "versions": {"torch": torch.__version__, "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
                     "onnxscript": onnxscript.__version__, "numpy": np.__version__},
        "tolerance": f"ORT vs torch eager: max |ort - eager| / max |eager| <= {TOL} per output; integer outputs equal",
        "exports": entries, "failed": failures,
    }
    with open(os.path.join(out_dir, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=False)
        fh.write("\n")
    bad = [e for e in entries if e["status"] != "ok"]
    print(f"[make_exports] {len(entries)} exported, {len(failures)} failed, {len(bad)} mismatched -> {out_dir}",
          file=sys.stderr)
    return 1 if bad else 0



# --------------------------------------------------------------------------------------------------
# survey: xcviz (this checkout) on the exports, graphs/*.onnx and the onnx wheel's model-zoo models
# run with the Python that has xcviz's dependencies and onnxruntime (no torch):
#     python tools/make_exports.py --survey [OUT.json]
# --------------------------------------------------------------------------------------------------
# ONNX ops xcviz refuses today that TensorFlow's XLA compiles, with the TensorFlow op and the tf2xla kernel
# registration (tensorflow/compiler/tf2xla/kernels/) that makes it compilable. The survey re-clusters each model
# with --allow for those it contains, to show the split XLA would make.
XLA_EQUIVALENT = {
    "Range": "Range (sequence_ops.cc; start/limit/delta compile-time constants)",
    "Trilu": "MatrixBandPart (matrix_band_part_op.cc)",
    "ConstantOfShape": "Fill (fill_op.cc; dims compile-time constant)",
    "ConvTranspose": "Conv2DBackpropInput (conv_ops.cc; input_sizes compile-time constant)",
    "LRN": "LRN (lrn_ops.cc)",
    "GatherND": "GatherNd (gather_op.cc)",
    "GatherElements": "no one TF op; GatherNd / XLA Gather (gather_op.cc)",
    "ScatterND": "TensorScatterUpdate (scatter_nd_op.cc)",
    "TopK": "TopKV2 (topk_op.cc; k compile-time constant)",
    "Loop": "While / StatelessWhile (while_op.cc) when its body compiles",
    "If": "If / StatelessIf (if_op.cc) when both branches compile",
    "Dropout": "Identity at inference",
    "LSTM": "no fused-RNN XLA kernel; Keras' non-cuDNN LSTM is a While loop of MatMul/Sigmoid/Tanh, which compiles",
    "GRU": "no fused-RNN XLA kernel; Keras' non-cuDNN GRU is a While loop of MatMul/Sigmoid/Tanh, which compiles",
}
SURVEY_DIMS = {"B": 2, "S": 7, "N": 1, "batch": 2, "seq": 7}


def _first_error(text):
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    errs = [ln for ln in lines if ln.startswith("error") or "Error" in ln.split(":")[0]]
    return (errs[0] if errs else (lines[-1] if lines else "")).strip()[:500]


def _xcviz(args, timeout):
    import subprocess
    import time

    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.time()
    try:
        p = subprocess.run(["nice", "-n", "19", sys.executable, "-m", "xcviz", *args], capture_output=True, text=True,
                           timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s", time.time() - t0
    if p.returncode != 0:
        return None, _first_error(p.stderr or p.stdout), time.time() - t0
    try:
        return json.loads(p.stdout), None, time.time() - t0
    except ValueError:
        return {"text": p.stdout}, None, time.time() - t0


def _ort_run(path, feeds):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def _seeded_inputs(path):
    import onnx

    m = onnx.load(path)
    inits = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(7)
    feeds = {}
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else SURVEY_DIMS.get(d.dim_param, 1) for d in t.shape.dim]
        dt = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        feeds[vi.name] = (rng.standard_normal(shape).astype(dt) if dt.kind == "f"
                          else rng.integers(0, 8, shape).astype(dt))
    return feeds


def survey_models():
    import glob

    import onnx

    out = []
    manifest = os.path.join(DEFAULT_OUT, "manifest.json")
    for e in (json.load(open(manifest))["exports"] if os.path.exists(manifest) else []):
        stem = os.path.join(DEFAULT_OUT, e["file"][:-5])
        out.append(("export", e["file"][:-5], stem + ".onnx", stem + ".inputs.npz", stem + ".ort.npz"))
    for p in sorted(glob.glob(os.path.join(ROOT, "graphs", "*.onnx"))):
        out.append(("graphs", os.path.basename(p)[:-5], p, None, None))
    zoo = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    for p in sorted(glob.glob(os.path.join(zoo, "*.onnx"))):
        out.append(("zoo", os.path.basename(p)[:-5], p, None, None))
    for p in sorted(glob.glob(os.path.join(zoo, "*.onnx"))):  # weights folded: what runs once ConstantOfShape does
        out.append(("zoo-folded", os.path.basename(p)[:-5] + "_folded", p, None, None))
    return out


def fold_constant_of_shape(path, out_path):
    """The light zoo models make every weight with ConstantOfShape(initializer shape, 0.02): replace each such
    node by an initializer, so the rest of the model can be tried without ConstantOfShape. Weights of rank >= 2
    get seeded random values (normal, std sqrt(2 / fan_in)): with every weight equal to 0.02 the classifiers
    output the same probability for all 1,000 classes, and agreeing with onnxruntime would prove little.
    Rank-1 weights (biases, BatchNorm statistics) keep the constant."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    rng = np.random.default_rng(0)
    keep, new = [], []
    for n in m.graph.node:
        if n.op_type == "ConstantOfShape" and n.input and n.input[0] in inits:
            value = next((numpy_helper.to_array(a.t) for a in n.attribute if a.name == "value"), np.zeros(1, np.float32))
            shape = [int(d) for d in inits[n.input[0]]]
            if len(shape) >= 2 and value.dtype.kind == "f":
                w = rng.standard_normal(shape) * np.sqrt(2.0 / max(int(np.prod(shape[1:])), 1))
            else:
                w = np.full(shape, value.reshape(-1)[0])
            new.append(numpy_helper.from_array(w.astype(value.dtype), n.output[0]))
        else:
            keep.append(n)
    del m.graph.node[:]
    m.graph.node.extend(keep)
    m.graph.initializer.extend(new)
    used = {i for n in keep for i in n.input}
    kept_inits = [i for i in m.graph.initializer if i.name in used or i.name in {o.name for o in m.graph.output}]
    del m.graph.initializer[:]
    m.graph.initializer.extend(kept_inits)
    onnx.save(m, out_path)
    return out_path


def survey_one(kind, name, path, inputs, ort_ref, work):
    import onnx

    if kind == "zoo-folded":
        path = fold_constant_of_shape(path, os.path.join(work, name + ".onnx"))

    m = onnx.load(path)
    top, body = histograms(m)
    r = {"kind": kind, "model": name, "path": os.path.relpath(path, ROOT) if path.startswith(ROOT) else path,
         "nodes": len(m.graph.node), "nodes_in_bodies": sum(body.values()), "ops": top, "ops_in_bodies": body,
         "opset": next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None)}
    if inputs is None:
        feeds = _seeded_inputs(path)
        inputs = os.path.join(work, name + ".inputs.npz")
        save_npz(inputs, feeds)
        ref = _ort_run(path, feeds)
    else:
        ref = dict(np.load(ort_ref))
    r["input_shapes"] = {k: list(v.shape) for k, v in np.load(inputs).items()}
    dims = []
    # cluster (retry with --allow-unknown when the loader refuses an op it does not know)
    c, err, t = _xcviz(["cluster", path, "--json"], 300)
    r["cluster_error"] = err
    extra = []
    if err and "unknown op" in err:
        extra = ["--allow-unknown"]
        c, err2, t = _xcviz(["cluster", path, "--json", *extra], 300)
        r["cluster_error_allow_unknown"] = err2
    r["flags"] = extra
    r["cluster_s"] = round(t, 2)
    if c is not None:
        st = c["stats"]
        r["xcviz_nodes"], r["clusters"], r["clustered"] = st["nodes"], st["clusters"], st["clustered_nodes"]
        r["cluster_sizes"] = [len(cl["nodes"]) for cl in c["clusters"]]
        fb = Counter()
        for node in c["nodes"].values():
            if node["cluster"] is None:
                fb[(node["op_type"], node["reason_code"] or "", node["reason"] or "")] += 1
        r["fallback"] = [{"op": k[0], "code": k[1], "reason": k[2], "count": v} for k, v in sorted(fb.items())]
        allow = sorted({f["op"] for f in r["fallback"] if f["op"] in XLA_EQUIVALENT
                        and f["reason"].startswith("no XLA lowering in xcviz")})
        if allow:
            a, err, _ = _xcviz(["cluster", path, "--json", "--allow", ",".join(allow), *extra], 300)
            r["allowed"] = allow
            r["cluster_allowed_error"] = err
            if a is not None:
                r["clusters_allowed"], r["clustered_allowed"] = a["stats"]["clusters"], a["stats"]["clustered_nodes"]
                r["fallback_allowed"] = dict(Counter(n["op_type"] for n in a["nodes"].values() if n["cluster"] is None))
    s, err, _ = _xcviz(["stats", path, "--json", *extra], 300)
    r["stats_error"] = err
    v, err, t = _xcviz(["validate", path, "--inputs", inputs, "--json", "--repeats", "1", *extra], 600)
    r["validate_error"], r["validate_s"] = err, round(t, 1)
    if v is not None:
        r["validate_ok"] = v.get("ok")
        r["validate_clusters"] = [{"id": cl["id"], "status": cl.get("status"), "max_rel_error": cl.get("max_rel_error"),
                                   "error": cl.get("error")} for cl in v.get("clusters", [])]
    outp = os.path.join(work, name + ".hybrid.npz")
    if os.path.exists(outp):
        os.remove(outp)
    h, err, t = _xcviz(["run", path, "--mode", "hybrid", "--inputs", inputs, "--json", "--repeats", "1",
                        "-o", outp, *extra], 600)
    r["run_error"], r["run_s"] = err, round(t, 1)
    if h is not None:
        r["run_median_ms"] = h.get("median_ms")
        r["run_first_ms"] = h.get("first_run_ms")
        got = dict(np.load(outp)) if os.path.exists(outp) else {}
        errs = {}
        for k, want in ref.items():
            errs[k] = rel_err(got[k], want) if k in got else "missing"
        r["run_vs_ort_rel"] = errs
        nums = [x for x in errs.values() if isinstance(x, float)]
        r["run_vs_ort_max_rel"] = max(nums) if nums and len(nums) == len(errs) else None
    return r


def survey(out_json, only=None):
    import tempfile

    work = tempfile.mkdtemp(prefix="xcviz_survey_")
    results = []
    if os.path.exists(out_json):
        results = [r for r in json.load(open(out_json)) if not only or r["model"] not in only]
    done = {r["model"] for r in results}
    for kind, name, path, inputs, ort_ref in survey_models():
        if (only and name not in only) or (not only and name in done):
            continue
        print(f"[survey] {name} ...", file=sys.stderr, flush=True)
        try:
            r = survey_one(kind, name, path, inputs, ort_ref, work)
        except Exception as exc:
            r = {"kind": kind, "model": name, "survey_error": f"{type(exc).__name__}: {exc}"[:500]}
        print("  " + json.dumps({k: r.get(k) for k in ("clusters", "cluster_error", "validate_error", "run_error",
                                                       "run_vs_ort_max_rel")}), file=sys.stderr, flush=True)
        results.append(r)
        with open(out_json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


def _short(err, path):
    import re

    return re.sub(r"^error: \S+\.onnx: ", "error: ", err or "").replace("|", "\\|")


def _registry_names():
    """Every op spelling xcviz's registry knows (canonical names and aliases), from `xcviz ops --json`."""
    ops, err, _ = _xcviz(["ops", "--json"], 120)
    if ops is None:
        raise RuntimeError(err)
    names = set()
    for o in ops["ops"]:
        names.add(o["name"])
        names.update(o.get("aliases") or [])
    return names


def render_manifest():
    m = json.load(open(os.path.join(DEFAULT_OUT, "manifest.json")))
    out = ["### Files and op histograms", "", "| export | opset | nodes (+ in bodies) | KiB | inputs | ORT vs eager (max rel) | ops |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for e in m["exports"]:
        body = f" (+{e['nodes_in_bodies']})" if e["nodes_in_bodies"] else ""
        ins = ", ".join(f"{k} [{', '.join(map(str, v))}]" for k, v in e["inputs"].items())
        ops = ", ".join(f"{k} {v}" for k, v in e["ops"].items())
        if e["ops_in_bodies"]:
            ops += "; in bodies: " + ", ".join(f"{k} {v}" for k, v in e["ops_in_bodies"].items())
        out.append(f"| {e['file'][:-5]} | {e['opset']} | {e['nodes']}{body} | {e['bytes'] / 1024:.0f} | {ins} | "
                   f"{e['ort_vs_eager_max_rel']:.1e} | {ops} |")
    out += ["", "### Exports that fail", "", "| failed export | error (first line, and the root cause) |", "| --- | --- |"]
    for f in m["failed"]:
        out.append(f"| {f['model']}_{f['exporter']} | `{f['error']}` |")
    return "\n".join(out) + "\n\n"


def render_survey(survey_json):
    """Markdown tables for docs/real-models.md from the survey's JSON."""
    rows = json.load(open(survey_json))
    out = ["### Per model", "", "| model | source | nodes (+ in bodies) | distinct ops | clusters (sizes) | coverage | falls back (nodes) "
           "| validate | run hybrid | max rel vs ORT | hybrid ms |", "|" + " --- |" * 11]
    missing, missing_models = Counter(), {}
    for r in rows:
        if "survey_error" in r:
            out.append(f"| {r['model']} | {r['kind']} | survey failed: {r['survey_error']} |" + " |" * 8)
            continue
        fb = Counter()
        for f in r.get("fallback", []):
            if f["code"] != "min-size":
                fb[f["op"]] += f["count"]
            if f["reason"].startswith("no XLA lowering in xcviz"):
                missing[f["op"]] += f["count"]
                missing_models.setdefault(f["op"], set()).add(r["model"])
        small = sum(f["count"] for f in r.get("fallback", []) if f["code"] == "min-size")
        fb_txt = ", ".join(f"{k} {v}" for k, v in sorted(fb.items()))
        if small:
            fb_txt += (", " if fb_txt else "") + f"below min size {small}"
        cov = (f"{r['clustered']}/{r['xcviz_nodes']} ({100 * r['clustered'] / max(r['xcviz_nodes'], 1):.0f} %)"
               if "clustered" in r else "—")
        clusters = f"{r['clusters']} ({', '.join(map(str, r['cluster_sizes']))})" if "clusters" in r else \
            "does not load"
        val = "ok" if r.get("validate_ok") else ("FAILS" if r.get("validate_error") else
                                                  ("mismatch" if "validate_ok" in r else "—"))
        err = r.get("run_vs_ort_max_rel")
        run = "FAILS" if r.get("run_error") else ("—" if "run_vs_ort_max_rel" not in r else
                                                  ("ok" if err is not None and err <= TOL else "WRONG vs ORT"))
        err_txt = f"{err:.1e}" if isinstance(err, float) else "—"
        bodies = f" (+{r['nodes_in_bodies']})" if r.get("nodes_in_bodies") else ""
        ms = f"{r['run_median_ms']:.1f}" if "run_median_ms" in r and r.get("run_median_ms") else "—"
        out.append(f"| {r['model']} | {r['kind']} | {r['nodes']}{bodies} | {len(r['ops'])} | {clusters} | {cov} | "
                   f"{fb_txt or '—'} | {val} | {run} | {err_txt} | {ms} |")
    out += ["", "### First error of `cluster`, `validate` and `run`, where they fail", ""]
    for r in rows:
        if r.get("cluster_error"):
            out.append(f"- {r['model']} (`cluster`, `stats`): `{_short(r['cluster_error'], r['path'])}`")
        v, h = r.get("validate_error"), r.get("run_error")
        if v and v == h:
            out.append(f"- {r['model']} (`validate` and `run`): `{_short(v, r['path'])}`")
        else:
            for key, err in (("validate", v), ("run", h)):
                if err:
                    out.append(f"- {r['model']} (`{key}`): `{_short(err, r['path'])}`")
    reasons = {}
    for r in rows:
        for f in r.get("fallback", []):
            if f["code"] != "min-size":
                reasons.setdefault((f["op"], f["code"], f["reason"]), set()).add(r["model"])
    out += ["", "### Fallback reasons xcviz gives (min-size fallbacks left out)", "",
            "| op | code | reason xcviz gives | models |", "| --- | --- | --- | --- |"]
    for (op, code, reason), models in sorted(reasons.items()):
        out.append(f"| {op} | {code} | {reason} | {len(models)}: {', '.join(sorted(models))} |")
    # ops the registry does not know, counted from the ONNX files themselves (Loop bodies and models that fail
    # to load included), plus Loop/If: known by name, but neither compiled nor executed today
    known = _registry_names()
    missing, missing_models = Counter(), {}
    for r in rows:
        if r["kind"] == "zoo-folded":  # the same models as the zoo rows
            continue
        for hist in (r.get("ops", {}), r.get("ops_in_bodies", {})):
            for op, n in hist.items():
                if op not in known or op in ("Loop", "If"):
                    missing[op] += n
                    missing_models.setdefault(op, set()).add(r["model"])
    out += ["", "### Ops xcviz cannot compile or run (counted in the ONNX files, Loop bodies included, folded rows not)", "",
            "| op xcviz cannot compile or run | nodes | models | TensorFlow/XLA |", "| --- | --- | --- | --- |"]
    for op, n in sorted(missing.items(), key=lambda kv: (-kv[1], kv[0])):
        out.append(f"| {op} | {n} | {len(missing_models[op])}: {', '.join(sorted(missing_models[op]))} | "
                   f"{XLA_EQUIVALENT.get(op, '?')} |")
    out += ["", "### Re-clustered with `--allow` for the ops TensorFlow's XLA compiles", "",
            "| model | allowed | clusters | clustered | still falls back (any reason) |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        if r.get("allowed"):
            out.append(f"| {r['model']} | {', '.join(r['allowed'])} | {r.get('clusters_allowed', '—')} | "
                       f"{r.get('clustered_allowed', '—')}/{r.get('xcviz_nodes')} | "
                       f"{', '.join(f'{k} {v}' for k, v in sorted(r.get('fallback_allowed', {}).items())) or '—'} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only = next((a.split("=", 1)[1].split(",") for a in sys.argv[1:] if a.startswith("--only=")), None)
    if "--survey-md" in sys.argv[1:]:
        sys.stdout.write(render_manifest() + render_survey(args[0] if args else "xcviz_survey.json"))
        sys.exit(0)
    if "--survey" in sys.argv[1:]:
        sys.exit(survey(args[0] if args else "xcviz_survey.json", only))
    sys.exit(main(args[0] if args else DEFAULT_OUT, only))
