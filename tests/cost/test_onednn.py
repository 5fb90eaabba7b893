"""Which convolutions torch eager runs on oneDNN (cost.classes.torch_onednn), against torch's own choice as its
profiler records it, and what that costs in the cpu_torch profile (its native_onednn_conv_overhead floor)."""
from __future__ import annotations

import dataclasses
import os

import pytest

from tests.support.paths import ROOT
from xcviz.cost import load_hardware
from xcviz.cost.calibrated import CalibratedModel, _onednn
from xcviz.cost.classes import ONEDNN_NUMEL, torch_onednn
from xcviz.cost.stats import CostView, node_costs
from xcviz.pipeline import load_file

# (input shape, filter shape, stride, dilation, groups): both sides of every clause of ATen's rule
CASES = [
    ((1, 8, 8, 8), (8, 8, 3, 3), 1, 1, 1),        # batch 1, small, 3x3: ATen's own path
    ((2, 8, 8, 8), (8, 8, 3, 3), 1, 1, 1),        # batch 2
    ((1, 8, 8, 8), (8, 4, 3, 3), 1, 1, 2),        # groups
    ((1, 32, 8, 8), (32, 1, 3, 3), 1, 1, 32),     # depthwise
    ((1, 4, 8, 8), (4, 4, 5, 5), 1, 1, 1),        # kernels over 3 both ways
    ((1, 4, 8, 8), (4, 4, 5, 3), 1, 1, 1),        # over 3 one way only
    ((1, 5, 64, 64), (5, 5, 3, 3), 1, 1, 1),      # over ONEDNN_NUMEL elements
    ((1, 5, 64, 64), (5, 5, 1, 1), 1, 1, 1),      # 1x1, unstrided, one thread: ATen's GEMM whatever the size
    ((1, 5, 64, 64), (5, 5, 1, 1), 2, 1, 1),      # 1x1 strided
    ((1, 5, 64, 64), (5, 5, 3, 3), 1, 2, 1),      # dilated
    ((16, 2, 4, 4), (2, 2, 1, 1), 1, 1, 1),       # 1x1 at batch 16
    ((1, 1, 400), (8, 1, 10), 5, 1, 1),           # conv1d (wav2vec2's feature extractor): [N, C, 1, L]
    ((1, 16, 39), (16, 8, 4), 1, 1, 2),           # conv1d, groups
    ((1, 8, 4000), (8, 8, 3), 1, 1, 1),           # conv1d over ONEDNN_NUMEL elements
]


def test_the_rule_is_torchs_own_choice():
    torch = pytest.importorskip("torch", reason="needs the torch extra: pip install -e '.[torch]'")
    torch.set_num_threads(1)
    F = torch.nn.functional
    seen = set()
    for shape, wshape, stride, dilation, groups in CASES:
        x, w = torch.randn(*shape), torch.randn(*wshape)
        conv = F.conv1d if len(shape) == 3 else F.conv2d
        with torch.inference_mode(), torch.profiler.profile() as prof:
            conv(x, w, None, stride, 0, dilation, groups)
        ran = "aten::mkldnn_convolution" in {e.name for e in prof.events()}
        attrs = {"strides": [stride] * (len(shape) - 2), "dilations": [dilation] * (len(shape) - 2), "group": groups}
        assert torch_onednn(attrs, wshape, shape) == ran, (shape, wshape, stride, dilation, groups)
        seen.add(ran)
    assert seen == {True, False}
    assert ONEDNN_NUMEL == 20480


def test_symbolic_or_missing_shapes_say_no():
    assert not torch_onednn({}, (8, 8, 3, 3), ("N", 8, 8, 8))
    assert not torch_onednn({}, None, (2, 8, 8, 8)) and not torch_onednn({}, (8, 8, 3, 3), None)


def _native(path: str, profile: str, **change) -> dict:
    g = load_file(os.path.join(ROOT, path))
    flat = CostView(g)
    costs, _ = node_costs(g, flat)
    cal = dataclasses.replace(load_hardware(profile).calibrated, **change)
    model = CalibratedModel(cal, g, flat.nodes, costs.representatives)
    times = model.node_times(costs)
    return {n.name: (float(times[j]), _onednn(g, n)) for j, n in enumerate(flat.nodes) if n.op == "conv2d"}


def test_a_convolution_on_onednn_costs_at_least_its_floor_on_torch():
    pytest.importorskip("torch", reason="reading a .pt2 needs the torch extra: pip install -e '.[torch]'")
    cal = load_hardware("cpu_torch").calibrated
    assert cal.onednn_overhead > 0
    # timm_gn_weightnorm: batch 2, and 2 groups: both on oneDNN (torch: 50-70 us each here, not ~20)
    gn = _native("tests/data/torch_corpus/timm_gn_weightnorm.pt2", "cpu_torch")
    assert all(on for _, on in gn.values()) and all(t >= cal.onednn_overhead for t, _ in gn.values())
    # wav2vec2's feature extractor: its two ungrouped batch-1 convolutions on ATen's path, the grouped one not
    wav = _native("tests/data/torch_corpus/hf_wav2vec2.pt2", "cpu_torch")
    assert [on for _, on in wav.values()] == [False, False, True]
    assert wav["conv1d"][0] < cal.onednn_overhead <= wav["conv1d_2"][0]
    # without the floor (a profile that did not measure it, as onnxruntime's), the class alone: ~20 us each
    assert load_hardware("cpu").calibrated.onednn_overhead == 0
    bare = _native("tests/data/torch_corpus/timm_gn_weightnorm.pt2", "cpu_torch", onednn_overhead=0.0)
    assert all(bare[k][0] < cal.onednn_overhead / 2 < gn[k][0] for k in gn)
