"""ONNX backend node tests (generated from onnx.backend.test.case.node, cached) vs native and JAX impls."""
from __future__ import annotations

import os

import pytest

from xcviz.conformance import collect, has_ort, render_markdown, run_all, xla_typed
from xcviz.conformance_doc import jax_shares
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

# Ops the registry claims but that fail some node tests. Empty: every claimed op is green; a new failure
# must be fixed or the op un-claimed, never listed here silently.
KNOWN_GAPS: set[str] = set()  # every op the registry claims passes all its node tests
# Ops whose native reference passes fewer cases than onnxruntime's CPU provider: none since opset-8 Scan
# runs. A new entry means a regression.
NATIVE_BEHIND_ORT: set[str] = set()


@pytest.fixture(scope="session")
def node_table(tmp_path_factory):
    cache = os.environ.get("XCVIZ_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "xcviz")
    return run_all(collect(cache))


def test_every_claimed_op_outside_known_gaps_is_green(node_table):
    assert len(node_table) >= 80
    red = {op for op, r in node_table.items() if r["native"].get("fail", 0) + r["jax"].get("fail", 0)}
    assert red <= KNOWN_GAPS, sorted(red - KNOWN_GAPS)
    fixed = KNOWN_GAPS - red
    assert not fixed, f"remove {sorted(fixed)} from KNOWN_GAPS: they pass now"


def test_models_ops_pass_their_node_tests(node_table):
    for op in ("conv2d", "relu", "batchnorm", "global_avgpool", "gemm", "flatten", "clip", "add", "matmul", "mul",
               "layernorm", "softmax", "transpose", "reshape", "erf", "concat", "sigmoid", "tanh", "gather", "nms"):
        r = node_table[op]
        assert r["native"].get("pass", 0) >= 1 and not r["failures"], (op, r["failures"][:3])


def test_table_in_docs_is_current(node_table):
    if not has_ort():
        pytest.skip("the table has an onnxruntime column: pip install onnxruntime to check it")
    from xcviz.cli.node_tests import CLI_HEADING

    with open(os.path.join(ROOT, "docs", "node_tests.md"), encoding="utf-8") as f:
        table, _, cli = f.read().partition("\n" + CLI_HEADING)
    # (the command line's section is measured apart: tests/cli/test_node_tests.py)
    assert table == render_markdown(node_table) and cli, "rerun python docs/make_node_tests.py"


SEQUENCE_OPS = {"sequence_empty", "sequence_construct", "sequence_insert", "sequence_at", "sequence_erase",
                "sequence_length", "split_to_sequence", "concat_from_sequence", "optional", "optional_has_element",
                "optional_get_element", "sequence_map"}


def test_sequence_and_optional_cases_pass_natively(node_table):
    """Every generated case of a sequence/optional op, and those of Identity/If/Loop over such values."""
    ran = {op: r for op, r in node_table.items() if op in SEQUENCE_OPS}
    assert sum(r["cases"] for r in ran.values()) >= 22, sorted(ran)  # the generators of onnx 1.23 make 22
    for op, r in ran.items():
        assert r["native"].get("pass", 0) == r["cases"], (op, r["failures"])
    for op in ("identity", "if", "loop"):
        assert not node_table[op]["native"].get("unsupported", 0) and not node_table[op]["failures"], op


def test_native_passes_as_many_cases_as_onnxruntime(node_table):
    """The issue's bar, per op, on the same cases; the exceptions are listed in docs/node_tests.md."""
    if not has_ort():
        pytest.skip("pip install onnxruntime to compare with it")
    behind = {op for op, r in node_table.items() if r["known"] and r["native"].get("pass", 0) < r["ort"].get("pass", 0)}
    assert behind == NATIVE_BEHIND_ORT, (sorted(behind - NATIVE_BEHIND_ORT), sorted(NATIVE_BEHIND_ORT - behind))


def test_jax_passes_95_percent_of_the_native_cases_of_every_claimed_op(node_table):
    """Issue 12's bar, per claimed op, over the cases whose tensors XLA can type (docs/node_tests.md lists the
    string-typed cases of claimed ops apart: no XLA compiles them)."""
    shares = jax_shares(node_table)
    assert len(shares) >= 150, len(shares)
    low = {op: (j, n) for op, (j, n) in shares.items() if j < 0.95 * n}
    assert not low, f"JAX passes < 95 % of the native cases (JAX, native): {low}"
    assert shares["equal"] == (8, 8)
    assert set(node_table["equal"]["untyped"]) == {"test_equal_string", "test_equal_string_broadcast"}


def test_string_cases_of_claimed_ops_are_left_out_of_jax_and_listed():
    """A small table (Equal's 10 cases, 2 of them on strings, and StringConcat's): the JAX column counts the 8
    cases XLA can type, and the doc names the other 2 in their own section; unclaimed ops list nothing there."""
    cases = [c for c in collect() if c.onnx_op in ("Equal", "StringConcat")]
    assert sorted(c.name for c in cases if not xla_typed(c) and c.onnx_op == "Equal") == [
        "test_equal_string", "test_equal_string_broadcast"]
    table = run_all(cases, ort=False)
    eq = table["equal"]
    assert eq["claimed"] and eq["cases"] == 10 and eq["jax"] == {"pass": 8} and eq["native"] == {"pass": 10}
    text = render_markdown(table)
    assert "| equal | yes | 10 | 10/0/0 | 8/0/0 | green |" in text
    assert "JAX 8 pass (of 8 cases of claimed ops without string tensors)" in text
    section = text.split("## Cases of claimed ops with string tensors: not compilable by any XLA")[1]
    assert "- equal: test_equal_string (pass), test_equal_string_broadcast (pass)" in section
    assert "string_concat" not in section
