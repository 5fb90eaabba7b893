"""MelWeightMatrix, BitCast, Det and TfIdfVectorizer in one model run hybrid as onnxruntime runs it: the compiled
clusters and the native Det together."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime", reason="pip install -e '.[dev]' to compare with onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def test_the_ops_in_one_model_run_hybrid_as_onnxruntime_does(tmp_path):
    """A mel filter bank applied by MatMul, BitCast of an input, batched Det and a TFIDF vectorizer with skips feeding
    a Relu, in one model: clusters compiled (MelWeightMatrix folded into its MatMul's cluster), Det native."""
    import xcviz

    nodes = [helper.make_node("MelWeightMatrix", ["nb", "dft", "sr", "lo", "hi"], ["mel"]),
             helper.make_node("MatMul", ["spec", "mel"], ["melspec"]),
             helper.make_node("BitCast", ["spec"], ["bits"], to=TensorProto.INT32),
             helper.make_node("Det", ["sq"], ["d"]),
             helper.make_node("TfIdfVectorizer", ["tok"], ["tf"], mode="TFIDF", min_gram_length=1, max_gram_length=2,
                              max_skip_count=1, ngram_counts=[0, 3], ngram_indexes=[2, 0, 1, 4, 3],
                              pool_int64s=[1, 2, 3, 1, 2, 3, 1], weights=[0.5, 1, 2, 3, 4]),
             helper.make_node("Relu", ["tf"], ["tfr"])]
    inits = [numpy_helper.from_array(np.array(v, dt), n) for n, v, dt in
             [("nb", 8, np.int64), ("dft", 32, np.int64), ("sr", 16000, np.int64), ("lo", 20.0, np.float32),
              ("hi", 7000.0, np.float32)]]
    vi = helper.make_tensor_value_info
    ins = [vi("spec", TensorProto.FLOAT, [4, 17]), vi("sq", TensorProto.FLOAT, [3, 4, 4]),
           vi("tok", TensorProto.INT64, [2, 9])]
    outs = [vi("melspec", TensorProto.FLOAT, [4, 8]), vi("bits", TensorProto.INT32, [4, 17]),
            vi("d", TensorProto.FLOAT, [3]), vi("tfr", TensorProto.FLOAT, [2, 5])]
    graph = helper.make_graph(nodes, "misc", ins, outs, initializer=inits)
    path = tmp_path / "misc.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)]).SerializeToString())
    rng = np.random.default_rng(3)
    feeds = {"spec": rng.random((4, 17)).astype(np.float32), "sq": rng.standard_normal((3, 4, 4)).astype(np.float32),
             "tok": rng.integers(0, 4, (2, 9))}
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    want = dict(zip(["melspec", "bits", "d", "tfr"], ort.InferenceSession(
        str(path), opts, providers=["CPUExecutionProvider"]).run(None, feeds)))
    g = xcviz.load(path)
    c = xcviz.cluster(g, min_cluster_size=1)
    by = {n.name: i for i, n in enumerate(g.nodes)}
    assert not c.candidate[by["Det_3"]] and all(c.candidate[by[n]] for n in ("MelWeightMatrix_0", "BitCast_2",
                                                                              "TfIdfVectorizer_4"))
    got = xcviz.run(g, feeds, mode="hybrid", min_cluster_size=1)
    np.testing.assert_allclose(got["melspec"], want["melspec"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["d"], want["d"], rtol=1e-5, atol=1e-6)
    for k in ("bits", "tfr"):
        assert got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k]), k
