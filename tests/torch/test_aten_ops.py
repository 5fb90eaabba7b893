"""The aten op table against torch itself: one small program per mapping, run by xcviz natively (NumPy) and
under jit (JAX/XLA), compared with torch's eager output."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the torch extra: pip install -e '.[torch]'")
import xcviz  # noqa: E402
from tests.support.aten_recipes import Fn  # noqa: E402

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

F = torch.nn.functional
g = torch.Generator().manual_seed(0)


def r(*shape):
    return torch.randn(*shape, generator=g)


# constants made here, not inside the traced functions (a generator would be traced as a custom object)
W4, W8, LN_W, LN_B, BIAS5, M45, M42, MASK55, EMB = (r(6, 4, 3, 3), r(4, 2, 3, 3), r(4, 5), r(4, 5), r(5), r(4, 5),
                                                    r(4, 2), r(5, 5), r(10, 3))
CASES = {
    "conv2d_stride_pad": (lambda x: F.conv2d(x, W4, stride=2, padding=1), (r(1, 4, 7, 7),)),
    "conv2d_groups_same": (lambda x: F.conv2d(x, W8, padding="same", groups=2), (r(1, 4, 6, 6),)),
    "conv1d": (lambda x: F.conv1d(x, W4[:, :, 0], padding=2, dilation=2), (r(2, 4, 9),)),
    "conv_transpose2d": (lambda x: F.conv_transpose2d(x, W8.transpose(0, 1).contiguous(), stride=2, padding=1,
                                                       output_padding=1), (r(1, 2, 4, 4),)),
    "max_pool_ceil": (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (r(1, 2, 8, 8),)),
    "avg_pool_include_pad": (lambda x: F.avg_pool2d(x, 3, 2, 1), (r(1, 2, 7, 7),)),
    "avg_pool_exclude_pad": (lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (r(1, 2, 7, 7),)),
    "adaptive_avg": (lambda x: F.adaptive_avg_pool2d(x, 1), (r(2, 3, 5, 5),)),
    "activations": (lambda x: F.gelu(x, approximate="tanh") + F.silu(x) + F.hardswish(x) + F.hardsigmoid(x)
                    + F.leaky_relu(x, 0.2) + F.elu(x) + F.hardtanh(x, -0.5, 0.5) + torch.clamp(x, max=0.3)
                    + F.relu6(x * 4) + torch.sigmoid(x) * torch.tanh(x), (r(3, 5),)),
    "unary": (lambda x: torch.exp(x) + torch.log(x.abs() + 1) + torch.rsqrt(x.abs() + 1) + torch.erf(x)
              + torch.floor(x) + torch.ceil(x) + torch.sign(x) + torch.reciprocal(x.abs() + 1), (r(3, 5),)),
    "softmaxes": (lambda x: F.softmax(x, dim=1) + F.log_softmax(x, dim=0), (r(3, 5),)),
    "layer_norm": (lambda x: F.layer_norm(x, (4, 5), LN_W, LN_B, 1e-3), (r(2, 4, 5),)),
    "reductions": (lambda x: (x.sum(1, keepdim=True) + x.mean(dim=(0, 1)) + x.amax(1, keepdim=True)
                              - x.amin(dim=1, keepdim=True), x.argmax(-1), x.sum()), (r(3, 4, 5),)),
    "topk": (lambda x: torch.topk(x, 2, dim=1, largest=False), (r(3, 6),)),
    "views": (lambda x: (x.view(4, 15).t().reshape(3, 20), x.permute(2, 0, 1).flatten(1), x.transpose(0, 2),
                         x.unsqueeze(1).squeeze(1), x[:, :1].squeeze(1), x.expand(2, 4, 3, 5)), (r(4, 3, 5),)),
    "slicing": (lambda x: (x[1:, ::2], x[:, 2], x[-1], torch.index_select(x, 1, torch.tensor([3, 0])),
                           torch.gather(x, 1, torch.tensor([[0, 1], [2, 3], [4, 4]]))), (r(3, 5),)),
    "split_cat": (lambda x: (torch.cat(torch.split(x, 2, dim=1)[::-1], dim=1), torch.cat(x.chunk(2, 0)[::-1], 0)),
                  (r(4, 5),)),
    "masks": (lambda x: (torch.where(x > 0, x, 0.5 * x), x.masked_fill(x < -0.5, -1.0), torch.tril(x, -1),
                         torch.triu(x), (x >= 0.1) & (x <= 0.8), x == x.floor()), (r(4, 4),)),
    "arithmetic": (lambda x: (x ** 2 - 1 / (x.abs() + 1) + torch.remainder(x * 3, 2.0) + torch.fmod(x * 3, 2.0)
                              + (2 - x) + torch.maximum(x, x * 0.5) + torch.minimum(x, -x)), (r(4, 4),)),
    "pad_repeat": (lambda x: (F.pad(x, (1, 2, 0, 1), value=0.5), F.pad(x[None], (2, 1), mode="reflect"),
                              F.pad(x[None], (1, 2), mode="replicate"), x.repeat(2, 1), torch.cumsum(x, 1)),
                   (r(3, 4),)),
    "sources": (lambda x: (x + torch.arange(4.0) + torch.full((3, 4), 2.0) + torch.zeros_like(x)
                           + torch.ones(3, 4)), (r(3, 4),)),
    "matmuls": (lambda x: (torch.addmm(BIAS5, x[0], M45, beta=0.5, alpha=2.0), torch.bmm(x, x.transpose(1, 2)),
                           x @ M42), (r(2, 3, 4),)),
    "sdpa_causal": (lambda q: F.scaled_dot_product_attention(q, q * 0.5, q + 1, is_causal=True), (r(2, 2, 5, 4),)),
    "sdpa_float_mask_scale": (lambda q: F.scaled_dot_product_attention(q, q, q, attn_mask=MASK55, scale=0.3),
                              (r(1, 2, 5, 4),)),
    "embedding": (lambda i: F.embedding(i, EMB), (torch.tensor([[1, 2, 9], [0, 0, 4]]),)),
}


@pytest.mark.parametrize("mode", ["native", "jit"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_aten_mapping_matches_torch(name, mode):
    fn, args = CASES[name]
    module = Fn(fn).eval()
    graph = xcviz.from_torch(module, args)
    assert [n.note for n in graph.nodes if not n.known] == []
    feeds = {v.name: a.numpy() for v, a in zip([v for v in graph.inputs if v.data is None], args)}
    got = list(xcviz.run(graph, feeds, mode=mode).values())
    with torch.no_grad():
        want = module(*args)
    want = [w.numpy() for w in (want if isinstance(want, tuple) else (want,))]
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.shape == b.shape, (name, k)
        if b.dtype == np.bool_ or b.dtype.kind in "iu":
            np.testing.assert_array_equal(a, b, err_msg=f"{name} output {k}")
        else:
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(b).max())),
                                       err_msg=f"{name} output {k}")
