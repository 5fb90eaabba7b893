"""Model Explorer overlays: built through Model Explorer's own dataclasses (strict about field names), keyed by
the node ids its ONNX adapter gives the same file, and a golden node-data file.

Needs the `[me]` extra (pip install -e '.[me]'): ai-edge-model-explorer and model-explorer-onnx."""
import dataclasses
import glob
import json
import os

import pytest

from tests.support.paths import GRAPHS, ROOT
from tests.support.goldens import check_golden

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

GOLDEN = os.path.join(ROOT, "tests", "golden")


def _me():
    try:
        from model_explorer import graph_builder, node_data_builder
        from model_explorer_onnx.main import ONNXAdapter
    except ImportError as e:
        pytest.skip(f"Model Explorer not installed ({e}); enable with pip install -e '.[me]'")
    return graph_builder, node_data_builder, ONNXAdapter


def _analyse(path, **kw):
    from xcviz.pipeline import AnalysisOptions, analyse

    return analyse(path, AnalysisOptions(**kw))


def _strict(cls, data: dict, nested: dict):
    """cls(**data), recursively through `nested` {field: (cls, is_list)}; an unknown field is a TypeError."""
    kw = dict(data)
    for name, (sub, is_list) in nested.items():
        if name in kw:
            kw[name] = [sub(**x) for x in kw[name]] if is_list else {k: sub(**v) for k, v in kw[name].items()}
    return cls(**kw)


def _node_data(ndb, doc: dict):
    return _strict(ndb.GraphNodeData, doc, {"results": (ndb.NodeDataResult, False),
                                            "thresholds": (ndb.ThresholdItem, True),
                                            "gradient": (ndb.GradientItem, True)})


def _adapter_ids(adapter_cls, path: str) -> set[str]:
    graphs = adapter_cls().convert(path, {})["graphs"]
    return {node.id for node in graphs[0].nodes}


# torch exports (dynamo and torchscript) that xcviz loads without --dim; the others need bound dimensions
EXPORTS = ["detect_dynamo", "detect_torchscript", "gpt_dynamo", "gpt_torchscript", "greedy_decode_torchscript",
           "greedy_whileloop_dynamo", "tagger_dynamo", "unet_dynamo", "unet_torchscript"]


def _onnx_models() -> list[str]:
    import onnx

    zoo = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    exports = [os.path.join(ROOT, "tests", "data", "exports", f"{name}.onnx") for name in EXPORTS]
    return sorted(glob.glob(os.path.join(GRAPHS, "*.onnx"))) + sorted(glob.glob(os.path.join(zoo, "*.onnx"))) + exports


@pytest.mark.parametrize("path", _onnx_models(), ids=os.path.basename)
def test_overlays_match_the_onnx_adapter(path):
    _, ndb, adapter = _me()
    from xcviz.render.model_explorer import overlays

    a = _analyse(path, min_cluster_size=1, allow_unknown=True)
    docs = overlays(a, source=path)
    ids = _adapter_ids(adapter, path)
    assert set(docs) == {"cluster", "fallback_reason", "boundary_bytes", "speedup_estimate"}
    for name, doc in docs.items():
        data = _node_data(ndb, doc)
        # through Model Explorer's own writer: the same document comes back, plus its defaults
        full = json.loads(data.to_json_string())
        assert {k: full[k] for k in doc} == doc, name
        missing = set(doc["results"]) - ids
        assert not missing, (name, sorted(missing)[:5])
    # every node has a cluster value; one colour per distinct value, the SVG's palette
    assert len(docs["cluster"]["results"]) == len(a.graph.nodes)
    colours = {}
    for r in docs["cluster"]["results"].values():
        colours.setdefault(r["value"], set()).add(r["bgColor"])
    assert all(len(c) == 1 for c in colours.values())


def test_unnamed_onnx_nodes_use_the_adapters_names(tmp_path):
    """Unnamed and repeated names map onto node, node_1, n_1 as the adapter (its NameFixPass) names them."""
    _, ndb, adapter = _me()
    import onnx
    from onnx import TensorProto, helper

    from xcviz.render.model_explorer import overlays

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["b"], name="n"),
             helper.make_node("Relu", ["b"], ["c"]), helper.make_node("Abs", ["c"], ["y"], name="n")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])
    path = str(tmp_path / "unnamed.onnx")
    onnx.save(model, path)
    docs = overlays(_analyse(path, min_cluster_size=1), source=path)
    keys = set(docs["cluster"]["results"])
    ops = {n for n in _adapter_ids(adapter, path) if not n.startswith("[value] ")}
    assert keys == {"node", "n", "node_1", "n_1"} == ops


def test_graph_json_through_model_explorer_dataclasses():
    gb, ndb, _ = _me()
    from xcviz.render.model_explorer import overlays
    from xcviz.render.model_explorer_graph import graph_json

    path = os.path.join(GRAPHS, "seed_demo.yaml")
    a = _analyse(path, min_cluster_size=1)
    doc = graph_json(a)
    g = doc["graphs"][0]
    nodes = [_strict(gb.GraphNode, n, {"attrs": (gb.KeyValue, True), "incomingEdges": (gb.IncomingEdge, True),
                                       "outputsMetadata": (gb.MetadataItem, True)}) for n in g["nodes"]]
    for n, raw in zip(nodes, g["nodes"]):
        if "style" in raw:
            n.style = gb.GraphNodeStyle(**raw["style"])
    configs = [gb.GroupNodeConfig(**c) for c in g["groupNodeConfigs"]]
    pane = g["tasksData"]["edgeOverlaysDataListLeftPane"][0]
    overlay = gb.EdgeOverlay(**{**pane["overlays"][0], "edges": [gb.Edge(**e) for e in pane["overlays"][0]["edges"]]})
    gb.GraphCollection(label=doc["label"], graphs=[gb.Graph(id=g["id"], nodes=nodes, groupNodeAttributes=g["groupNodeAttributes"],
                                                            groupNodeConfigs=configs)])
    ids = {n.id for n in nodes}
    by_id = {n.id: n for n in nodes}
    # clusters are layers, fallbacks top level in red; every edge points at a node
    assert {by_id[m.name].namespace for k, ms in enumerate(a.clustering.clusters) for m in [a.graph.nodes[i] for i in ms]} \
        == {a.clustering.cluster_id(k) for k in range(len(a.clustering.clusters))}
    assert by_id["p1"].namespace == "" and by_id["p1"].style.borderColor == "#D62728"
    assert len(configs) == len(a.clustering.clusters)
    assert all(e.sourceNodeId in ids for n in nodes for e in n.incomingEdges)
    assert len(overlay.edges) == a.stats.boundary_edges
    for doc in overlays(a, source=path).values():
        assert set(doc["results"]) <= ids


def test_node_data_golden():
    from xcviz.render.model_explorer import overlays

    path = os.path.join(GRAPHS, "seed_demo.yaml")
    docs = overlays(_analyse(path, min_cluster_size=1), source=path)
    check_golden(os.path.join(GOLDEN, "seed_demo.model_explorer.json"),
                 json.dumps(docs, indent=1, ensure_ascii=False, sort_keys=True) + "\n", __file__)


def test_export_cli_writes_one_file_per_overlay(tmp_path, run_cli):
    out = tmp_path / "me"
    code, _, err = run_cli("export", os.path.join(GRAPHS, "resnet_mini.onnx"), "--model-explorer", str(out),
                           "--model-explorer-graph", str(tmp_path / "g.json"))
    assert code == 0, err
    assert sorted(os.listdir(out)) == [f"resnet_mini.{n}.json" for n in
                                       ("boundary_bytes", "cluster", "fallback_reason", "speedup_estimate")]
    assert json.loads((tmp_path / "g.json").read_text())["graphs"][0]["nodes"]
    (tmp_path / "f").write_text("x")
    code, _, err = run_cli("export", os.path.join(GRAPHS, "resnet_mini.onnx"), "--model-explorer", str(tmp_path / "f"))
    assert code == 2 and "needs a folder" in err


def test_validation_overlays(tmp_path, run_cli):
    """--validate adds the measured speedup and max error per cluster member, in the same strict form."""
    _, ndb, _ = _me()
    out = tmp_path / "me"
    code, _, err = run_cli("export", os.path.join(GRAPHS, "seed_demo.yaml"), "--min-cluster-size", "1",
                           "--model-explorer", str(out), "--validate")
    assert code == 0, err
    a = _analyse(os.path.join(GRAPHS, "seed_demo.yaml"), min_cluster_size=1)
    members = {a.graph.nodes[i].name for ms in a.clustering.clusters for i in ms}
    for name in ("speedup_measured", "max_error"):
        doc = json.loads((out / f"seed_demo.{name}.json").read_text())
        _node_data(ndb, doc)
        assert set(doc["results"]) == members, name
    errors = json.loads((out / "seed_demo.max_error.json").read_text())["results"]
    assert all(0 <= r["value"] < 1e-3 for r in errors.values())
    code, _, err = run_cli("export", os.path.join(GRAPHS, "seed_demo.yaml"), "--validate")
    assert code == 2 and "--model-explorer DIR" in err


def test_overlays_match_the_exported_program_adapter(tmp_path):
    """torch.export programs: keys are fx node names, as Model Explorer's ExportedProgram adapter names them;
    nodes xcviz adds for scalar arguments (`<name>_const`) have no overlay entry."""
    _, ndb, _ = _me()
    try:
        import torch
        from model_explorer.builtin_pytorch_exportedprogram_adapter import BuiltinPytorchExportedProgramAdapter
    except ImportError as e:
        pytest.skip(f"torch not installed ({e}); enable with pip install torch (CPU wheel)")
    from xcviz.render.model_explorer import overlays

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn, self.fc = torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.Linear(8, 4)

        def forward(self, x):
            y = torch.relu(self.bn(self.conv(x))) * 0.5
            return self.fc(y.mean(dim=(2, 3)))

    path = str(tmp_path / "net.pt2")
    torch.export.save(torch.export.export(Net().eval(), (torch.randn(1, 3, 8, 8),)), path)
    a = _analyse(path, min_cluster_size=1)
    docs = overlays(a, source=path)
    graphs = BuiltinPytorchExportedProgramAdapter().convert(path, {"const_element_count_limit": 16})["graphs"]
    ids = {node.id for g in graphs for node in g.nodes}
    assert docs["cluster"]["results"]
    for name, doc in docs.items():
        _node_data(ndb, doc)
        assert set(doc["results"]) <= ids, (name, sorted(set(doc["results"]) - ids)[:5])
    fx_ops = {n.name for n in a.graph.nodes if n.op != "const"}
    assert fx_ops <= set(docs["cluster"]["results"])
