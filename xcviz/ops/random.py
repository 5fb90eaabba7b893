"""ONNX Bernoulli: one seeded draw per element (native only: auto-clustering refuses stateful RNG ops)."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType, canonical_dtype
from . import rules as r
from .arrays import Unsupported, np_dtype
from .registry import Entries
from .rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def bernoulli(xp, a, p):
    if p.dtype.kind != "f":
        raise Unsupported(f"Bernoulli of {p.dtype}: the probabilities must be float16/32/64")
    seed = a.get("seed")
    # seeded (0 when the node names none) so that runs, and validate's comparisons, repeat
    rng = np.random.default_rng(int(seed) if seed is not None else 0)
    dt = p.dtype if a.get("dtype") is None else np_dtype(int(a["dtype"]))
    # u in [0, 1): P(u < p) = p, and p = 0 never draws 1, p = 1 always does
    return (rng.random(p.shape) < np.asarray(p, np.float64)).astype(dt)


def infer_bernoulli(ctx: Ctx) -> list[TensorType]:
    dt = ctx.dtype(0) if ctx.attrs.get("dtype") is None else canonical_dtype(str(np_dtype(int(ctx.attrs["dtype"]))))
    return [TensorType(ctx.shape(0), dt)]


op("bernoulli", "Bernoulli", infer=infer_bernoulli, flops=r.output_flops(2), devices=frozenset(), jax_ok=False,
   min_inputs=1, max_inputs=1, attrs={"dtype": None, "seed": None}, impl=bernoulli,
   doc="a 0/1 draw per element with the input's probability; seeded by its seed attribute (else 0)")
