"""StringConcat and RegexFullMatch (ops/strings.py) against onnxruntime, which runs RE2 itself: unicode
broadcasting, the regex syntax Python's re and RE2 read alike, and what is refused where they differ."""
from __future__ import annotations

import re

import numpy as np
import pytest

from xcviz.conformance import Case, run_case
from xcviz.ops import REGISTRY

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime", reason="pip install -e '.[dev]' to compare with onnxruntime")
from onnx import numpy_helper  # noqa: E402

from tests.support.onnx_op import check_op, op_model, ort_output, refused  # noqa: E402

RNG = np.random.default_rng(31)


_WORDS = ["", "a", "héllo", "日本", "x y", "🙂", "tab\there", "END"]


def _strings(shape):
    return np.array(RNG.choice(_WORDS, size=int(np.prod(shape))).tolist(), dtype=object).reshape(shape)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 4)), ((), (2, 2)), ((0,), (1,))])
def test_string_concat_broadcasts_unicode(sa, sb):
    check_op("StringConcat", [_strings(sa), _strings(sb)])


# ---- RegexFullMatch: RE2 (onnxruntime) and Python's re read these alike --------------------------------
TEXTS = ["abc", "ABC", "a1_b", "é", "www.x.com", "user@gmail.com", "", "a\nb", "42", "aaa", "ab ab", "x.y-z"]
SHARED = [r"[a-z]+", r"\w+", r"\d{2}", r"a*", r"(ab|cd)\s(ab)", r"[^a-z]*", r".*", r"(?s).*",
          r"\bwww\b\.\w+\.com", r"a.b", r"(?P<n>a)+", r"[\w.\-]+@(?:gmail|yahoo)\.com", r"x\.y-z\z", r"\Aabc",
          r"[]a]+", r"[^]a]+", r"a{1,2}a", r"a\.b", r"(?s)a.b"]


@pytest.mark.parametrize("pattern", SHARED)
def test_regex_full_match_agrees_with_onnxruntime_s_re2(pattern):
    check_op("RegexFullMatch", [np.array(TEXTS, dtype=object).reshape(3, 4)], reference=False, pattern=pattern)


@pytest.mark.parametrize("pattern,what", [
    (r"(a)\1", "backreference"), (r"a(?=b)b", "lookahead"), (r"(?<=a)b", "lookbehind"), (r"a*+", "possessive"),
    (r"\p{Greek}", "Unicode class"), (r"[[:alpha:]]+", "POSIX"), (r"\Qa.b\E", "RE2 only"), (r"a\Z", "\\Z"),
    (r"a{,2}", "{,n}"), (r"(?x)a b", "flag"), (r"(?U)a+", "flag"), (r"(?<n>a)", "named group"), (r"(?>a)", "atomic")])
def test_regex_syntax_the_two_engines_read_differently_is_refused(pattern, what):
    assert what in refused("RegexFullMatch", [np.array(["ab"], dtype=object)], pattern=pattern)


def test_regex_same_syntax_other_meaning_runs_as_re2_reads_it_or_is_refused_where_the_texts_show_it():
    """Python's $ also matches before a final newline: onnxruntime (RE2) says False where re (and so onnx's
    reference) says True; xcviz runs it as \\Z and agrees with RE2. A leading (?m) reads alike in both."""
    x = np.array(["a\n", "a", "a\nb\n"], dtype=object)
    assert ort_output(op_model("RegexFullMatch", [x], pattern="a$\n"), [x]).tolist() == [False, False, False]
    assert re.fullmatch("a$\n", "a\n")
    for pattern in ("a$\n", "a$", "(?m)a$\nb$\n?", "(?m)^a$\n^b\n", "a\\b\n?", "^*a$?"):
        check_op("RegexFullMatch", [x], reference=False, pattern=pattern)
    assert "scoped m flag" in refused("RegexFullMatch", [x], pattern="(?m:a$)\n")
    assert "vertical tab" in refused("RegexFullMatch", [np.array(["a\vb"], dtype=object)], pattern=r"a\sb")
    texts = np.array(["abc", "ABC", "aBd", "àbc"], dtype=object)
    check_op("RegexFullMatch", [texts], reference=False, pattern="(?i)abc")
    kelvin = np.array(["\u212a", "k"], dtype=object)  # RE2 folds KELVIN SIGN into k; Python's ASCII mode does not
    assert ort_output(op_model("RegexFullMatch", [kelvin], pattern="(?i)k"), [kelvin]).tolist() == [True, True]
    assert re.fullmatch("(?i)k", "\u212a", re.ASCII) is None
    assert "Unicode case" in refused("RegexFullMatch", [kelvin], pattern="(?i)k")
    assert "Unicode case" in refused("RegexFullMatch", [np.array(["É"], dtype=object)], pattern="(?i)é")
    assert "Python only" in refused("RegexFullMatch", [np.array(["é"], dtype=object)], pattern="\\u00e9")


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
        case = Case("regex_full_match", p, op_model("RegexFullMatch", [texts], pattern=p),
                    [numpy_helper.from_array(texts)], [numpy_helper.from_array(np.asarray(
                        ort_output(op_model("RegexFullMatch", [texts], pattern=p), [texts])))], 0, 0, "RegexFullMatch")
        status, why = run_case(case, "native")
        assert status in ("pass", "unsupported"), (p, why)
        agreed += status == "pass"
    assert agreed >= 120, agreed  # most patterns run; the rest are refused by name
