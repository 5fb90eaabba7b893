"""A 32-layer Llama as a torch.export .pt2, the transformer of issue 37's targets (report and render at scale).

    python tools/make_llama_pt2.py [OUT.pt2]     # default: tests/data/llama/llama32.pt2

transformers' LlamaForCausalLM from a LlamaConfig (hidden 64, MLP 64, 32 layers, 4 heads, 2 KV heads, vocabulary 256),
random weights from torch.manual_seed(0), exported with torch.export on a (1, 16) token batch. Nothing is
downloaded. Every node keeps its nn_module_stack, so the scopes are the model's own (model/layers.7/self_attn).
Needs torch and transformers (the versions used: see the .json written next to the file)."""
from __future__ import annotations

import json
import os
import sys


def build():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(hidden_size=64, intermediate_size=64, num_hidden_layers=32, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=256, max_position_embeddings=64, tie_word_embeddings=False,
                      attn_implementation="eager")
    model = LlamaForCausalLM(cfg).eval()
    model.config.use_cache = False
    tokens = torch.randint(0, cfg.vocab_size, (1, 16))

    class Logits(torch.nn.Module):   # the logits alone: a tensor out, no ModelOutput dict
        def __init__(self, m):
            super().__init__()
            self.model = m

        def forward(self, input_ids):
            return self.model(input_ids=input_ids, use_cache=False).logits

    return torch.export.export(Logits(model), (tokens,)), cfg


def _drop_traces(x):
    """The nodes' stack traces name this checkout's paths: dropped, so that a rerun elsewhere gives the same file."""
    if isinstance(x, dict):
        return {k: _drop_traces(v) for k, v in x.items() if k != "stack_trace"}
    if isinstance(x, list):
        return [_drop_traces(v) for v in x]
    return x


def _repack(path: str) -> None:
    """The archive again, deflated (its graph JSON is most of it), with fixed timestamps and no stack traces."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        entries = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            if name.endswith("models/model.json"):
                data = json.dumps(_drop_traces(json.loads(data)), separators=(",", ":")).encode("utf-8")
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)


def main() -> None:
    import torch
    import transformers

    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "data", "llama",
                                                               "llama32.pt2")
    ep, cfg = build()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    torch.export.save(ep, out)
    _repack(out)
    nodes = sum(1 for n in ep.graph.nodes if n.op == "call_function")
    meta = {"torch": torch.__version__, "transformers": transformers.__version__, "layers": cfg.num_hidden_layers,
            "hidden": cfg.hidden_size, "ops": nodes, "bytes": os.path.getsize(out)}
    with open(os.path.splitext(out)[0] + ".json", "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
