"""BitCast, Det, MelWeightMatrix and the string ops (ops/bitwise.py, linalg.py, signal.py, strings.py) beyond ONNX's
node tests (TfIdfVectorizer, StringConcat and RegexFullMatch among them) on seeded inputs and attributes the node
tests leave out, through the whole pipeline (loader, natively and, for the ops XLA compiles, under jax.jit) against
onnxruntime, which runs RE2 itself, and onnx's reference evaluator; what xcviz cannot run is refused with a clear
error, never a wrong number."""
from __future__ import annotations

import re

import numpy as np
import pytest

from xcviz.conformance import Case, run_case
from xcviz.ops import REGISTRY

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime", reason="pip install -e '.[dev]' to compare with onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

RNG = np.random.default_rng(31)
OPSET = {"BitCast": 26, "Det": 22, "MelWeightMatrix": 17, "TfIdfVectorizer": 9, "StringConcat": 20,
         "RegexFullMatch": 20}


def _model(op_type: str, inputs: list[np.ndarray], **attrs) -> bytes:
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, ["y"], **attrs)
    vis = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for n, a in zip(names, inputs)]
    out = {"BitCast": attrs.get("to"), "MelWeightMatrix": TensorProto.FLOAT, "TfIdfVectorizer": TensorProto.FLOAT,
           "StringConcat": TensorProto.STRING, "RegexFullMatch": TensorProto.BOOL}
    out = out.get(op_type, vis[0].type.tensor_type.elem_type)
    graph = helper.make_graph([node], op_type.lower(), vis, [helper.make_tensor_value_info("y", out, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET[op_type])]).SerializeToString()


def _ort(model: bytes, inputs: list[np.ndarray]):
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {f"x{i}": a for i, a in enumerate(inputs)})[0]


def _check(op_type: str, inputs: list[np.ndarray], rtol=1e-5, atol=1e-6, reference=True, use_ort=True, modes=None,
           **attrs):
    """xcviz natively (and under jit where the op is claimed) against onnxruntime; onnx's reference agrees (and
    decides alone where onnxruntime has no kernel: float64 Det)."""
    model = _model(op_type, inputs, **attrs)
    want = np.asarray(_ort(model, inputs) if use_ort else
                      ReferenceEvaluator(model).run(None, {f"x{i}": a for i, a in enumerate(inputs)})[0])
    if reference and use_ort:
        ref = ReferenceEvaluator(model).run(None, {f"x{i}": a for i, a in enumerate(inputs)})[0]
        assert np.asarray(ref).tolist() == want.tolist() if want.dtype.kind in "OUb" else \
            np.allclose(ref, want, rtol=rtol, atol=atol, equal_nan=True)
    case = Case(REGISTRY.get(op_type).name, op_type, model, [numpy_helper.from_array(a) for a in inputs],
                [numpy_helper.from_array(want)], rtol, atol, op_type)
    strings = any(a.dtype.kind == "O" for a in inputs)  # XLA has no string type: native only (refused under jit)
    modes = modes or (["native", "jit"] if REGISTRY.get(op_type).devices and not strings else ["native"])
    for mode in modes:
        assert run_case(case, mode) == ("pass", None), (mode, attrs)
    return want


def _refused(op_type: str, inputs: list[np.ndarray], run: str = "native", **attrs) -> str:
    case = Case(REGISTRY.get(op_type).name, op_type, _model(op_type, inputs, **attrs),
                [numpy_helper.from_array(a) for a in inputs], [], 0, 0, op_type)
    status, why = run_case(case, run)
    assert status == "unsupported", (status, why)
    return why


# ---- BitCast ---------------------------------------------------------------------------------------------
_WIDTHS = {1: (np.int8, np.uint8), 2: (np.float16, np.int16, np.uint16), 4: (np.float32, np.int32, np.uint32),
           8: (np.float64, np.int64, np.uint64)}


@pytest.mark.parametrize("src,dst", [(s, d) for ts in _WIDTHS.values() for s in ts for d in ts if s != d])
def test_bitcast_every_same_width_pair_keeps_the_bits(src, dst):
    raw = RNG.integers(0, 256, size=(2, 3, 4) if src != np.int8 else (5,), dtype=np.uint8)
    x = np.frombuffer(raw.tobytes()[: raw.size // np.dtype(src).itemsize * np.dtype(src).itemsize], src)
    x = x.reshape(-1, 2) if x.size % 2 == 0 else x  # NaN payloads, -0.0 and subnormals included
    _check("BitCast", [x.copy()], to=helper.np_dtype_to_tensor_dtype(np.dtype(dst)))


def test_bitcast_refuses_what_has_no_same_width_meaning():
    assert "bit width" in _refused("BitCast", [np.ones(3, np.float32)], to=TensorProto.INT64)
    assert "bool" in _refused("BitCast", [np.ones(3, np.uint8)], to=TensorProto.BOOL)
    assert "bit width" in _refused("BitCast", [np.ones(3, np.float32)], run="jit", to=TensorProto.FLOAT16)
    z = np.array([1 + 2j, -0.5j], np.complex64)  # natively a view; XLA's BitcastConvert takes no complex
    _check("BitCast", [z], reference=True, use_ort=False, to=TensorProto.DOUBLE, modes=("native",))
    assert "complex" in _refused("BitCast", [z], run="jit", to=TensorProto.DOUBLE)


# ---- Det -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 5), (2, 3, 3), (2, 2, 4, 4), (0, 3, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_det_batched_matches_onnxruntime(shape, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    _check("Det", [x], rtol=1e-4, atol=1e-5, use_ort=dtype == np.float32)  # onnxruntime: float32 only


def test_det_singular_and_permuted_matrices():
    a = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], np.float32)  # rank 2: exactly 0
    p = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], np.float32)  # a swap: -1 (pivoting's sign)
    got = _check("Det", [np.stack([a, p, 3 * np.eye(3, dtype=np.float32)])], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, [0, -1, 27], atol=1e-5)


def test_det_refusals_and_xla_verdict():
    assert "[..., M, M]" in _refused("Det", [np.ones((2, 3), np.float32)])
    det = REGISTRY.get("Det")
    assert not det.devices and "MatrixDeterminant" in det.reason and det.source.startswith("XLA")


# ---- MelWeightMatrix -----------------------------------------------------------------------------------
@pytest.mark.parametrize("bins,dft,rate,low,high", [(8, 16, 8192, 0.0, 4096.0), (20, 512, 16000, 20.0, 8000.0),
                                                    (40, 400, 22050, 0.0, 11025.0), (3, 64, 1000, 100.0, 300.0)])
def test_mel_weight_matrix_configs(bins, dft, rate, low, high):
    xs = [np.array(bins, np.int64), np.array(dft, np.int64), np.array(rate, np.int64), np.array(low, np.float32),
          np.array(high, np.float32)]
    y = _check("MelWeightMatrix", xs)
    assert y.shape == (dft // 2 + 1, bins)


def test_mel_weight_matrix_past_nyquist_is_refused():
    xs = [np.array(8, np.int64), np.array(16, np.int64), np.array(8000, np.int64), np.array(0.0, np.float32),
          np.array(9000.0, np.float32)]
    assert "past the" in _refused("MelWeightMatrix", xs)


# ---- TfIdfVectorizer ----------------------------------------------------------------------------------
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
    _check("TfIdfVectorizer", [x], reference=not strings and ordered and ("weights" in attrs or attrs["mode"] == "TF"),
           **attrs)


def test_tfidf_strings_fall_back_from_xla(tmp_path):
    """A string-pool TfIdfVectorizer is never an XLA candidate (no XLA has a string type): clustering refuses
    it with that reason, and the compiled path runs it natively, with the native result."""
    import xcviz

    attrs = dict(mode="TF", min_gram_length=1, max_gram_length=1, ngram_counts=[0], ngram_indexes=[0, 1],
                 pool_strings=["a", "b"])
    x = np.array(["a", "b", "a"], dtype=object)
    path = tmp_path / "tfidf.onnx"
    path.write_bytes(_model("TfIdfVectorizer", [x], **attrs))
    g = xcviz.load(str(path))
    c = xcviz.cluster(g, min_cluster_size=1)
    j = next(i for i, nd in enumerate(g.nodes) if nd.op_type == "TfIdfVectorizer")
    assert not c.candidate[j] and "string tensor" in c.reason[j]
    case = Case(REGISTRY.get("TfIdfVectorizer").name, "TfIdfVectorizer", path.read_bytes(),
                [numpy_helper.from_array(x)], [numpy_helper.from_array(np.array([2.0, 1.0], np.float32))], 0, 0,
                "TfIdfVectorizer")
    assert run_case(case, "jit") == ("pass", None)


# ---- StringConcat ---------------------------------------------------------------------------------------
_WORDS = ["", "a", "héllo", "日本", "x y", "🙂", "tab\there", "END"]


def _strings(shape):
    return np.array(RNG.choice(_WORDS, size=int(np.prod(shape))).tolist(), dtype=object).reshape(shape)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 4)), ((), (2, 2)), ((0,), (1,))])
def test_string_concat_broadcasts_unicode(sa, sb):
    _check("StringConcat", [_strings(sa), _strings(sb)])


# ---- RegexFullMatch: RE2 (onnxruntime) and Python's re read these alike --------------------------------
TEXTS = ["abc", "ABC", "a1_b", "é", "www.x.com", "user@gmail.com", "", "a\nb", "42", "aaa", "ab ab", "x.y-z"]
SHARED = [r"[a-z]+", r"\w+", r"\d{2}", r"a*", r"(ab|cd)\s(ab)", r"[^a-z]*", r".*", r"(?s).*",
          r"\bwww\b\.\w+\.com", r"a.b", r"(?P<n>a)+", r"[\w.\-]+@(?:gmail|yahoo)\.com", r"x\.y-z\z", r"\Aabc",
          r"[]a]+", r"[^]a]+", r"a{1,2}a", r"a\.b", r"(?s)a.b"]


@pytest.mark.parametrize("pattern", SHARED)
def test_regex_full_match_agrees_with_onnxruntime_s_re2(pattern):
    _check("RegexFullMatch", [np.array(TEXTS, dtype=object).reshape(3, 4)], reference=False, pattern=pattern)


@pytest.mark.parametrize("pattern,what", [
    (r"(a)\1", "backreference"), (r"a(?=b)b", "lookahead"), (r"(?<=a)b", "lookbehind"), (r"a*+", "possessive"),
    (r"\p{Greek}", "Unicode class"), (r"[[:alpha:]]+", "POSIX"), (r"\Qa.b\E", "RE2 only"), (r"a\Z", "\\Z"),
    (r"a{,2}", "{,n}"), (r"(?x)a b", "flag"), (r"(?U)a+", "flag"), (r"(?<n>a)", "named group"), (r"(?>a)", "atomic")])
def test_regex_syntax_the_two_engines_read_differently_is_refused(pattern, what):
    assert what in _refused("RegexFullMatch", [np.array(["ab"], dtype=object)], pattern=pattern)


def test_regex_same_syntax_other_meaning_runs_as_re2_reads_it_or_is_refused_where_the_texts_show_it():
    """Python's $ also matches before a final newline: onnxruntime (RE2) says False where re (and so onnx's
    reference) says True; xcviz runs it as \\Z and agrees with RE2. A leading (?m) reads alike in both."""
    x = np.array(["a\n", "a", "a\nb\n"], dtype=object)
    assert _ort(_model("RegexFullMatch", [x], pattern="a$\n"), [x]).tolist() == [False, False, False]
    assert re.fullmatch("a$\n", "a\n")
    for pattern in ("a$\n", "a$", "(?m)a$\nb$\n?", "(?m)^a$\n^b\n", "a\\b\n?", "^*a$?"):
        _check("RegexFullMatch", [x], reference=False, pattern=pattern)
    assert "scoped m flag" in _refused("RegexFullMatch", [x], pattern="(?m:a$)\n")
    assert "vertical tab" in _refused("RegexFullMatch", [np.array(["a\vb"], dtype=object)], pattern=r"a\sb")
    texts = np.array(["abc", "ABC", "aBd", "àbc"], dtype=object)
    _check("RegexFullMatch", [texts], reference=False, pattern="(?i)abc")
    kelvin = np.array(["\u212a", "k"], dtype=object)  # RE2 folds KELVIN SIGN into k; Python's ASCII mode does not
    assert _ort(_model("RegexFullMatch", [kelvin], pattern="(?i)k"), [kelvin]).tolist() == [True, True]
    assert re.fullmatch("(?i)k", "\u212a", re.ASCII) is None
    assert "Unicode case" in _refused("RegexFullMatch", [kelvin], pattern="(?i)k")
    assert "Unicode case" in _refused("RegexFullMatch", [np.array(["É"], dtype=object)], pattern="(?i)é")
    assert "Python only" in _refused("RegexFullMatch", [np.array(["é"], dtype=object)], pattern="\\u00e9")


def test_string_ops_are_native_only_for_the_reason_xla_gives():
    for name in ("StringConcat", "RegexFullMatch"):
        o = REGISTRY.get(name)
        assert not o.devices and o.reason.startswith("string tensors"), name


@pytest.mark.slow
def test_regex_random_patterns_never_differ_from_onnxruntime_s_re2():
    """Seeded random patterns over atoms both engines know (classes, anchors, \\b, flags, lazy and counted
    quantifiers) on texts with newlines, tabs and non-ASCII: each either agrees with RE2 on every text or is
    refused; never a different answer."""
    atoms = ["a", "b", ".", r"\w", r"\W", r"\d", r"\s", r"\S", r"\b", "^", "$", "[ab]", "[^a]", "[a-c]", r"\.", "é",
             r"[\w-]", "(a|b)", "(?:ab)", r"\z", r"\A", "[]a]", "x"]
    quant = ["", "", "*", "+", "?", "{2}", "{1,3}", "*?", "+?", "{2,}"]
    texts = np.array(["", "a", "ab", "aab", "b a", "é", "aé", "a\nb", "x.y", "a1_", "ab ab", "\t", "AB", "a-b"],
                     dtype=object)
    rng = np.random.default_rng(5)
    agreed = 0
    for _ in range(300):
        p = "".join(rng.choice(atoms) + rng.choice(quant) for _ in range(rng.integers(1, 4)))
        p = "".join(f for f in ("(?i)", "(?s)", "(?m)") if rng.random() < 0.15) + p
        case = Case("regex_full_match", p, _model("RegexFullMatch", [texts], pattern=p),
                    [numpy_helper.from_array(texts)], [numpy_helper.from_array(np.asarray(
                        _ort(_model("RegexFullMatch", [texts], pattern=p), [texts])))], 0, 0, "RegexFullMatch")
        status, why = run_case(case, "native")
        assert status in ("pass", "unsupported"), (p, why)
        agreed += status == "pass"
    assert agreed >= 120, agreed  # most patterns run; the rest are refused by name


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
