"""Every TensorFlow kernel an op entry cites as its XLA source ("tf2xla: A, B") is registered for XLA on CPU and GPU
in TensorFlow's own kernel list (tests/data/tf_suite/tf2xla_kernels.json)."""
from __future__ import annotations

import json
import os
import re

from xcviz.ops import REGISTRY
from tests.support.paths import ROOT



def _cited() -> dict[str, list[str]]:
    out = {}
    for o in REGISTRY:
        m = re.search(r"tf2xla: ([^;)]*)", o.doc)
        if m:
            out[o.name] = re.findall(r"\b[A-Z][A-Za-z0-9]+\b", m.group(1))
    return out


def test_cited_xla_kernels_exist_on_cpu_and_gpu():
    with open(os.path.join(ROOT, "tests", "data", "tf_suite", "tf2xla_kernels.json"), encoding="utf-8") as f:
        kernels = json.load(f)["ops"]
    cited = _cited()
    assert {"constant_of_shape", "range", "trilu", "lrn", "conv_transpose", "gather_nd", "scatter_nd",
            "one_hot", "mod"} <= set(cited)
    for op, names in cited.items():
        assert names, op
        assert REGISTRY.ops[op].devices, f"{op} cites an XLA kernel but is not claimed"
        for k in names:
            assert {"XLA_CPU_JIT", "XLA_GPU_JIT"} <= set(kernels.get(k, ())), (op, k)
