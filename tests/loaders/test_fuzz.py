"""Fuzzing (issue 6): hostile bytes and corrupted graphs end in a result or an XcvizError, never anything else.

Targets: raw bytes as YAML/JSON/ONNX/unknown files; structure-aware YAML/JSON graphs (valid-looking, then
randomly corrupted); mutated ONNX protobufs. Each loaded graph goes through every pass: clustering (mark and
greedy), stats, explain, the JSON reports and the rich tables.

CI runs 200 examples per target. Run long with, e.g.:  XCVIZ_FUZZ_EXAMPLES=10000 pytest tests/loaders/test_fuzz.py
"""
from __future__ import annotations

import pytest
import io
import json
import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.strategies import corrupted_mappings, dump, fuzz_mappings
from xcviz.errors import XcvizError

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

EXAMPLES = int(os.environ.get("XCVIZ_FUZZ_EXAMPLES", "200"))
settings.register_profile("xcviz-fuzz", max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 200,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                 HealthCheck.filter_too_much], database=None)
FUZZ = settings.get_profile("xcviz-fuzz")
DIR = tempfile.mkdtemp(prefix="xcviz-fuzz-")
LIMITS = dict(max_nodes=2_000, max_file_bytes=1_000_000)


def pipeline(path: str, device: str = "cpu") -> None:
    """Load, then every pass the CLI runs; only results or XcvizError may come out."""
    from rich.console import Console

    from xcviz.cli.output import emit_renderable  # noqa: F401 - same sanitising path as the CLI
    from xcviz.clustering import ClusterOptions, run_clustering
    from xcviz.clustering.explain import story
    from xcviz.cost import compute_stats, load_hardware
    from xcviz.pipeline import load_file as load
    from xcviz.render.safe_text import sanitize
    from xcviz.render.tables import cluster_view, explain_view, stats_table
    from xcviz.render.report_json import cluster_report, stats_report

    graph = load(path, **LIMITS)
    hw = load_hardware(None, device)
    console = Console(file=io.StringIO(), width=100, color_system=None)
    for strategy, min_size in (("mark", None), ("greedy", 1), ("mark", 1)):
        c = run_clustering(graph, ClusterOptions(strategy=strategy, device=device, min_cluster_size=min_size))
        s = compute_stats(graph, c, hw)
        json.dumps(cluster_report(graph, c, s), allow_nan=False)
        json.dumps(stats_report(graph, c, s), allow_nan=False)
        console.print(sanitize(cluster_view(graph, c, s, limit=50)))
        console.print(sanitize(stats_table(graph, c, s)))
        if graph.nodes:
            console.print(sanitize(explain_view(story(graph, c, len(graph.nodes) // 2))))


def check(data: bytes, suffix: str) -> str:
    path = os.path.join(DIR, "g" + suffix)
    with open(path, "wb") as f:
        f.write(data)
    try:
        pipeline(path)
    except XcvizError as e:
        assert str(e)
        return "error"
    return "ok"


# ---- raw bytes --------------------------------------------------------------------------------------
SUFFIXES = st.sampled_from([".yaml", ".json", ".onnx", ".txt", ""])


@FUZZ
@given(data=st.binary(max_size=2048), suffix=SUFFIXES)
def test_fuzz_raw_bytes(data, suffix):
    check(data, suffix)


@FUZZ
@given(text=st.lists(st.sampled_from(list("{}[]:,-&*!|>'\"#?% \n\tab01.e+") + ["nodes", "name", "op", "inputs",
                                                                                  "relu", "add", "!!", "<<", "..."]),
                     max_size=300).map("".join),
       suffix=st.sampled_from([".yaml", ".json"]))
def test_fuzz_yaml_json_syntax(text, suffix):
    check(text.encode("utf-8"), suffix)


# ---- structure-aware: valid-looking graphs (strategies.FUZZ), then corruptions (strategies.corrupt) -----
@FUZZ
@given(g=corrupted_mappings(), fmt=st.sampled_from(["yaml", "json"]), cut=st.integers(0, 40), flips=st.integers(0, 2),
       data=st.data())
def test_fuzz_structured_graphs(g, fmt, cut, flips, data):
    raw = bytearray(dump(g, fmt))
    if cut == 1:  # truncated file
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    for _ in range(flips if cut == 2 else 0):  # a few byte flips
        if raw:
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    check(bytes(raw), "." + fmt)


def test_structured_graphs_mostly_load():
    """The generator is useful only if plenty of its uncorrupted graphs pass every stage."""
    from hypothesis import find  # noqa: F401

    outcomes = []

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(g=fuzz_mappings())
    def run(g):
        outcomes.append(check(dump(g, "yaml"), ".yaml"))

    run()
    assert outcomes.count("ok") >= len(outcomes) // 4, outcomes.count("ok")


# ---- ONNX: mutate a valid model ----------------------------------------------------------------------
def _onnx_seed() -> bytes:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    w = helper.make_tensor("w", TensorProto.FLOAT, [2, 3], [1.0] * 6)
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="r"), helper.make_node("Add", ["r", "w"], ["a"], name="a"),
             helper.make_node("Tanh", ["a"], ["t"], name="t"), helper.make_node("Mul", ["t", "r"], ["y"], name="m")]
    g = helper.make_graph(nodes, "g", [x], [y], initializer=[w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


ONNX_SEED = _onnx_seed()


@FUZZ
@given(data=st.data())
def test_fuzz_onnx_mutations(data):
    raw = bytearray(ONNX_SEED)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
        i = data.draw(st.integers(0, max(len(raw) - 1, 0)))
        if op == "flip" and raw:
            raw[i] = data.draw(st.integers(0, 255))
        elif op == "cut":
            raw = raw[:i]
        elif op == "insert":
            raw[i:i] = data.draw(st.binary(min_size=1, max_size=8))
        elif op == "delete":
            del raw[i:i + data.draw(st.integers(1, 8))]
    check(bytes(raw), ".onnx")
