"""RegexFullMatch on a hostile pattern (ops/regex_re2.py, regex_linear.py): google-re2 (the `re2` extra) runs it in
linear time and agrees with onnxruntime (RE2 itself); without google-re2, a pattern Python's backtracking `re` could
take exponential time on is refused with one line, and the patterns it runs still agree with onnxruntime."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from xcviz.conformance import Case, run_case
from xcviz.ops import REGISTRY, regex_re2
from xcviz.ops.regex_linear import why_not_linear

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime", reason="pip install -e '.[dev]' to compare with onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

HOSTILE = "(a+)+$"
TEXTS = np.array(["a" * 32 + "!", "a" * 32, "", "!"], dtype=object)


def _model(pattern: str) -> bytes:
    node = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern=pattern)
    graph = helper.make_graph([node], "regex", [helper.make_tensor_value_info("x", TensorProto.STRING, [None])],
                              [helper.make_tensor_value_info("y", TensorProto.BOOL, [None])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]).SerializeToString()


def _ort(pattern: str, texts) -> list:
    return ort.InferenceSession(_model(pattern), providers=["CPUExecutionProvider"]).run(None, {"x": texts})[0].tolist()


def _case(pattern: str, texts) -> Case:
    return Case(REGISTRY.get("RegexFullMatch").name, pattern, _model(pattern), [numpy_helper.from_array(texts)],
                [numpy_helper.from_array(np.array(_ort(pattern, texts)))], 0, 0, "RegexFullMatch")


@pytest.fixture
def without_re2(monkeypatch):
    """As installed without the `re2` extra: `import re2` fails."""
    monkeypatch.setitem(sys.modules, "re2", None)
    regex_re2._compiled_re2.cache_clear()
    yield
    regex_re2._compiled_re2.cache_clear()


def test_the_hostile_pattern_runs_fast_on_re2_and_agrees_with_onnxruntime():
    pytest.importorskip("re2", reason="pip install -e '.[re2]'")
    regex_re2._compiled_re2.cache_clear()
    start = time.perf_counter()
    assert run_case(_case(HOSTILE, TEXTS), "native") == ("pass", None)
    assert time.perf_counter() - start < 10  # (Python's re: > 60 s on the first text)
    assert _ort(HOSTILE, TEXTS) == [False, True, False, False]


def test_xcviz_run_on_the_hostile_model_returns(tmp_path):
    """The issue's case end to end: `xcviz run` answers in seconds (re2) or refuses in one line (without it)."""
    (tmp_path / "m.onnx").write_bytes(_model(HOSTILE))
    np.savez(tmp_path / "x.npz", x=TEXTS.astype(str))  # (a str array: .npz files with objects are refused)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))}
    cmd = [sys.executable, "-m", "xcviz", "run", str(tmp_path / "m.onnx"), "--inputs", str(tmp_path / "x.npz"),
           "--mode", "native", "--native", "numpy", "-o", str(tmp_path / "y.npz")]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert time.perf_counter() - start < 60
    try:
        import re2  # noqa: F401
    except ImportError:
        assert proc.returncode == 2 and "xcviz[re2]" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        assert np.load(tmp_path / "y.npz", allow_pickle=False)["y"].tolist() == [False, True, False, False]


def test_without_re2_a_pattern_not_provably_linear_is_refused_in_one_line(without_re2):
    start = time.perf_counter()
    for pattern in (HOSTILE, "(a|a)*", "(a*b){9}", "a*a*a*b", "a?" * 30 + "a" * 30):
        status, why = run_case(_case(pattern, TEXTS), "native")
        assert status == "unsupported" and "xcviz[re2]" in why and "\n" not in why, (pattern, why)
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize("pattern", [r"[a-z]+", r"\w+", r"a*!", r"(?:ab)*", r"(ab|cd)\s(ab)", r"a{1,2}a", r"\Aa+!\z"])
def test_without_re2_the_linear_patterns_run_on_python_re_as_onnxruntime_does(without_re2, pattern):
    texts = np.array(["abc", "a" * 32 + "!", "ab ab", "aa", "", "é", "cd ab"], dtype=object)
    assert why_not_linear(pattern) is None
    assert run_case(_case(pattern, texts), "native") == ("pass", None)


@pytest.mark.parametrize("pattern,why", [
    ("(a+)+$", "group holding a quantifier"), ("(a|b)*", "alternation"), ("((a|b)c){3}", "alternation"),
    (r"\d+\.\d+", "more than one"), ("(?:a*){2}", "group holding a quantifier"), ("[(]+a*", "more than one")])
def test_the_linearity_proof_names_what_it_cannot_prove(pattern, why):
    assert why in why_not_linear(pattern)
    assert why_not_linear(r"[)(*+|]+x\(a\)") is None  # (classes and escapes are single atoms)
