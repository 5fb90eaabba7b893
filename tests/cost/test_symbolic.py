"""Symbolic sizes: D and FLOPs as formulas in the free dims equal the bound numbers; lower bounds hold."""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.goldens import check_golden
from xcviz.cost.symbolic import symbolic_cost
from xcviz.ops import REGISTRY
from xcviz.ops.rules import Ctx
from xcviz.pipeline import AnalysisOptions, analyse
from tests.support.paths import TESTS

HERE = TESTS
ROOT = os.path.dirname(HERE)
MODELS = ["tests/data/exports/bert_dynamo.onnx", "tests/data/exports/gpt_torchscript.onnx",
          "tests/data/exports/tagger_torchscript.onnx", "graphs/transformer_encoder.onnx", "graphs/resnet_mini.onnx"]


def _total_flops(graph) -> int:
    """Every node's FLOPs from its op's rule on the bound types: the numbers the formula must give."""
    total = 0
    types = {v.name: v.type for v in graph.inputs}
    for node in graph.nodes:
        for k, t in enumerate(node.outputs):
            types[node.name if k == 0 else f"{node.name}:{k}"] = t
    for node in graph.nodes:
        opdef = REGISTRY.ops.get(node.op) if node.known else None
        ins = [types[r].bind(graph.dims) for r in node.inputs if r]
        outs = [t.bind(graph.dims) for t in node.outputs]
        f = opdef.flops(Ctx(ins, {**opdef.attrs, **node.attrs}, [], outs, len(outs)), outs) if opdef and opdef.flops else None
        total += f or 0
    return total


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
@pytest.mark.parametrize("bind", [1, 3, 64])
def test_formulas_evaluated_equal_the_bound_numbers(path, bind):
    path = os.path.join(ROOT, path)
    free = analyse(path)
    s = symbolic_cost(free.graph, free.clustering)
    assert s.free_dims and s.unknown_edges == 0
    dims = {d: bind + i for i, d in enumerate(s.free_dims)}
    bound = analyse(path, AnalysisOptions(dims=dims))
    assert s.boundary_bytes.evaluate(dims) == bound.stats.boundary_bytes
    assert s.flops.evaluate(dims) == _total_flops(bound.graph)
    assert s.boundary_bytes_min <= bound.stats.boundary_bytes


UNKNOWN = """
inputs:
  - {name: x, shape: [batch, 8], dtype: float32}
nodes:
  - {name: a, op: relu, inputs: [x]}
  - {name: b, op: tanh, inputs: [a]}
  - {name: f, op: py_func, inputs: [b], outputs: [{shape: [rows, 8], dtype: float32}]}
  - {name: c, op: relu, inputs: [f]}
  - {name: d, op: exp, inputs: [c]}
outputs: [d]
"""


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 512), rows=st.integers(0, 512))
def test_lower_bound_holds_and_unknown_edges_are_named(tmp_path_factory, batch, rows):
    p = tmp_path_factory.mktemp("g") / "g.yaml"
    p.write_text(UNKNOWN)
    opts = AnalysisOptions(min_cluster_size=1)
    free = analyse(str(p), opts)
    s = symbolic_cost(free.graph, free.clustering)
    assert s.unknown_edges == 2 and s.unknown_edge_names == ["f", "d"]  # rows-sized: into and out of c, d
    assert s.free_dims == ["batch"]
    truth = analyse(str(p), opts.replace(dims={"batch": batch, "rows": max(rows, 1)})).stats.boundary_bytes
    assert truth is not None and s.boundary_bytes_min <= truth
    half = analyse(str(p), opts.replace(dims={"batch": batch}))
    hs = symbolic_cost(half.graph, half.clustering)
    assert hs.free_dims == [] and hs.boundary_bytes_min <= truth and hs.unknown_edges == 2


def test_json_keys_and_table_rows(tmp_path):
    from xcviz.render.report_json import stats_report
    from xcviz.render.tables import stats_table
    from rich.console import Console

    a = analyse(os.path.join(ROOT, "graphs/transformer_encoder.onnx"))
    st_ = stats_report(a.graph, a.clustering, a.stats)["stats"]
    assert st_["boundary_bytes"] is None and st_["boundary_bytes_expr"] == "768*B*S+400656"
    assert st_["unknown_edges"] == {"count": 0, "first": []} and st_["free_dims"] == ["B", "S"]
    bound = analyse(os.path.join(ROOT, "graphs/transformer_encoder.onnx"), AnalysisOptions(dims={"B": 2, "S": 3}))
    sb = stats_report(bound.graph, bound.clustering, bound.stats)["stats"]
    assert sb["boundary_bytes_expr"] == str(sb["boundary_bytes"]) == str(768 * 6 + 400656)
    assert json.dumps(st_)  # plain JSON
    console = Console(width=100, record=True, color_system=None)
    console.print(stats_table(a.graph, a.clustering, a.stats))
    p = tmp_path / "u.yaml"
    p.write_text(UNKNOWN)
    u = analyse(str(p), AnalysisOptions(min_cluster_size=1, dims={"batch": 4}))
    console.print(stats_table(u.graph, u.clustering, u.stats))
    check_golden(os.path.join(HERE, "golden", "symbolic_stats.txt"), console.export_text(), __file__)


def test_inputs_bind_dims_for_cluster_and_stats(run_cli, tmp_path):
    """`stats/cluster --inputs X.npz` report what `--dim` with the arrays' sizes reports; a shape that
    disagrees with the graph is one clear error."""
    import numpy as np

    model = os.path.join(ROOT, "tests/data/exports/bert_dynamo.onnx")
    npz = model.replace(".onnx", ".inputs.npz")
    for cmd in ("stats", "cluster"):
        code, out, err = run_cli(cmd, model, "--inputs", npz, "--json")
        assert code == 0, err
        code, ref, err = run_cli(cmd, model, "--dim", "batch=2", "--dim", "seq=7", "--json")
        assert code == 0, err
        got, want = json.loads(out)["stats"], json.loads(ref)["stats"]
        assert got["boundary_bytes"] == want["boundary_bytes"] == 88336 and got["free_dims"] == []
    bad = tmp_path / "bad.npz"
    np.savez(bad, input_ids=np.zeros((2, 7), np.int64), attention_mask=np.zeros((2, 8), np.int64))
    code, _, err = run_cli("stats", model, "--inputs", str(bad))
    assert code == 2 and "dimension 'seq' is 8 here but 7" in err and "Traceback" not in err
