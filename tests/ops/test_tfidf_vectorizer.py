"""TfIdfVectorizer (ops/strings.py) on random pools, skips and modes against onnxruntime, and its fallback from
XLA on strings."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.conformance import Case, run_case
from xcviz.ops import REGISTRY

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime", reason="pip install -e '.[dev]' to compare with onnxruntime")
from onnx import numpy_helper  # noqa: E402

from tests.support.onnx_op import check_op, op_model  # noqa: E402


def _tfidf_attrs(rng, strings: bool):
    lo = int(rng.integers(1, 3))
    hi = int(rng.integers(lo, 4))
    counts, pool, n_grams = [], [], 0
    for size in (1, 2, 3):  # distinct n-grams (onnxruntime refuses a repeated one), at least one of size lo
        counts.append(len(pool))
        grams = {tuple(int(v) for v in rng.integers(0, 4, size)) for _ in range(int(rng.integers(size == lo, 4)))}
        for g in sorted(grams):
            pool += list(g)
            n_grams += 1
    attrs = dict(mode=str(rng.choice(["TF", "IDF", "TFIDF"])), min_gram_length=lo, max_gram_length=hi,
                 max_skip_count=int(rng.integers(0, 4)), ngram_counts=counts,
                 ngram_indexes=[int(v) for v in rng.permutation(n_grams)])
    if rng.random() < 0.6:  # onnxruntime takes one weight per n-gram
        attrs["weights"] = [float(w) for w in rng.random(n_grams).round(3)]
    attrs["pool_strings" if strings else "pool_int64s"] = [f"w{v}" for v in pool] if strings else pool
    return attrs


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(16))
def test_tfidf_random_pools_skips_and_modes(seed):
    rng = np.random.default_rng(seed)
    strings = seed % 4 == 3
    attrs = _tfidf_attrs(rng, strings)
    shape = (int(rng.integers(1, 4)), int(rng.integers(1, 9))) if seed % 2 else (int(rng.integers(1, 12)),)
    x = rng.integers(0, 4, shape)
    x = np.array([f"w{v}" for v in x.reshape(-1)], dtype=object).reshape(shape) if strings else \
        x.astype(np.int32 if seed % 3 else np.int64)
    # onnx's reference weighs by output coordinate, the spec and onnxruntime by n-gram: it agrees where the
    # pool's order is the output's; it cannot run IDF/TFIDF without weights nor string pools
    ordered = attrs["ngram_indexes"] == sorted(attrs["ngram_indexes"])
    check_op("TfIdfVectorizer", [x], reference=not strings and ordered and ("weights" in attrs or attrs["mode"] == "TF"),
           **attrs)


def test_tfidf_strings_fall_back_from_xla(tmp_path):
    """A string-pool TfIdfVectorizer is never an XLA candidate (no XLA has a string type): clustering refuses
    it with that reason, and the compiled path runs it natively, with the native result."""
    import xcviz

    attrs = dict(mode="TF", min_gram_length=1, max_gram_length=1, ngram_counts=[0], ngram_indexes=[0, 1],
                 pool_strings=["a", "b"])
    x = np.array(["a", "b", "a"], dtype=object)
    path = tmp_path / "tfidf.onnx"
    path.write_bytes(op_model("TfIdfVectorizer", [x], **attrs))
    g = xcviz.load(str(path))
    c = xcviz.cluster(g, min_cluster_size=1)
    j = next(i for i, nd in enumerate(g.nodes) if nd.op_type == "TfIdfVectorizer")
    assert not c.candidate[j] and "string tensor" in c.reason[j]
    case = Case(REGISTRY.get("TfIdfVectorizer").name, "TfIdfVectorizer", path.read_bytes(),
                [numpy_helper.from_array(x)], [numpy_helper.from_array(np.array([2.0, 1.0], np.float32))], 0, 0,
                "TfIdfVectorizer")
    assert run_case(case, "jit") == ("pass", None)
