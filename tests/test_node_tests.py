"""ONNX backend node tests (generated from onnx.backend.test.case.node, cached) vs native and JAX impls."""
from __future__ import annotations

import os

import pytest

from xcviz.conformance import collect, render_markdown, run_all

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Ops the registry claims but that fail some node tests. Empty: every claimed op is green; a new failure
# must be fixed or the op un-claimed, never listed here silently.
KNOWN_GAPS: set[str] = set()  # every op the registry claims passes all its node tests


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
    with open(os.path.join(ROOT, "docs", "node_tests.md"), encoding="utf-8") as f:
        assert f.read() == render_markdown(node_table), "rerun python docs/make_node_tests.py"
