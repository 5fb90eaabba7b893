"""docs/cost-model.md quotes the built-in profiles' fixed costs per op: they are the profiles' own numbers."""
from __future__ import annotations

import os
import re

from tests.support.paths import ROOT
from xcviz.cost import load_hardware


def test_the_quoted_fixed_costs_are_the_profiles():
    text = open(os.path.join(ROOT, "docs", "cost-model.md"), encoding="utf-8").read()
    text = " ".join(text.split())
    m = re.search(r"an elementwise op ([\d.]+) µs inside one onnxruntime session \(`cpu`\), ([\d.]+) µs in "
                  r"TensorFlow's executor \(`cpu_tf`\), ([\d.]+) µs as a torch eager call \(`cpu_torch`\); "
                  r"a convolution ([\d.]+), ([\d.]+) and ([\d.]+) µs", text)
    assert m, "the sentence quoting the profiles' fixed costs moved"
    quoted = [float(v) for v in m.groups()]
    names = ("cpu", "cpu_tf", "cpu_torch")
    actual = [load_hardware(n).calibrated.classes[c].native_overhead * 1e6 for c in ("elementwise", "conv") for n in names]
    for q, a in zip(quoted, actual):
        assert abs(q - a) <= 0.05 * a + 0.01, (q, a)
