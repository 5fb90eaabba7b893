"""xcviz's clusters against torch.fx's CapabilityBasedPartitioner on the same support set: every difference
carries a named rule, and each rule goes away when the option behind it is switched off."""
from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch", reason="needs the torch extra: pip install -e '.[torch]'")
import xcviz  # noqa: E402
from xcviz.clustering.fx_compare import RULES, compare  # noqa: E402
from xcviz.pipeline import AnalysisOptions, analyse  # noqa: E402

from tests.torch.test_models import MODELS, build  # noqa: E402

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

# model -> the rules that explain every difference, with TensorFlow's defaults and FX's defaults
EXPECTED = {
    "resnet_block": set(),
    "transformer_encoder": set(),
    "gpt": {"fx-getitem"},                                # split's three outputs
    "lstm_tagger": {"fx-getitem"},                        # the unrolled cell's splits
    "rnn_tagger": {"fx-getitem"},                         # aten.lstm's and aten.gru's outputs
    "data_dependent": {"fx-getitem", "tf-min-cluster-size"},  # topk's outputs; `x > 0.5` alone before nonzero
    "two_branch": set(),
}


def _compare(name, fx=None, **options):
    _, _, ep = build(name)
    g = xcviz.from_torch(ep)
    a = analyse(g, AnalysisOptions(**options))
    return g, a, compare(ep, a.graph, a.clustering, fx)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_difference_is_explained_by_a_named_rule(name):
    g, a, cmp = _compare(name)
    assert cmp.rules == EXPECTED[name]
    assert cmp.rules <= set(RULES)
    # outside the named differences, a node is in an FX partition exactly when it is in a cluster
    explained = {n for d in cmp.differences for n in d.nodes}
    in_fx = {n for names in cmp.fx_partitions.values() for n in names} - explained
    in_xla = {n for names in cmp.clusters.values() for n in names} - explained
    assert in_fx == in_xla


def test_horizontal_fusion_is_the_difference_and_goes_with_the_fx_option():
    # concat denied: two independent branches. FX fuses them horizontally; TensorFlow contracts only edges.
    _, a, cmp = _compare("two_branch", deny={"concat"}, min_cluster_size=1)
    assert cmp.rules == {"fx-horizontal-fusion"}
    (d,) = cmp.differences
    assert len(d.fx) == 1 and len(d.xla) == 2
    _, _, cmp = _compare("two_branch", {"skip_horizontal_fusion": True}, deny={"concat"}, min_cluster_size=1)
    assert cmp.differences == []
    assert sorted(map(sorted, cmp.fx_partitions.values())) == sorted(map(sorted, cmp.clusters.values()))


def test_min_size_and_single_node_rules_follow_their_options():
    _, a, cmp = _compare("data_dependent")
    (small,) = [d for d in cmp.differences if d.rule == "tf-min-cluster-size"]
    assert small.nodes == ["gt"] and a.clustering.code[a.graph.index["gt"]] == "min-size"
    _, _, cmp = _compare("data_dependent", {"skip_horizontal_fusion": True}, min_cluster_size=1)
    assert cmp.rules == {"fx-getitem", "fx-single-node"}
    assert [d.nodes for d in cmp.differences if d.rule == "fx-single-node"] == [["gt"]]
    _, _, cmp = _compare("data_dependent", {"skip_horizontal_fusion": True, "allows_single_node_partition": True},
                         min_cluster_size=1)
    assert cmp.rules == {"fx-getitem"}


def test_compare_fx_command(tmp_path, run_cli):
    _, _, ep = build("two_branch")
    path = str(tmp_path / "two_branch.pt2")
    torch.export.save(ep, path)
    code, out, err = run_cli("compare-fx", path, "--deny", "concat", "--min-cluster-size", "1", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert [d["rule"] for d in report["differences"]] == ["fx-horizontal-fusion"]
    assert report["fx_options"] == {"allows_single_node_partition": False, "skip_horizontal_fusion": False}
    code, out, err = run_cli("compare-fx", path, "--deny", "concat", "--min-cluster-size", "1",
                             "--fx-options", "skip_horizontal_fusion=true,allows_single_node_partition=false")
    assert code == 0, err
    assert "0 differences, none" in out and "CapabilityBasedPartitioner" in out
    code, _, err = run_cli("compare-fx", path, "--fx-options", "fuse=yes")
    assert code == 2 and "bad --fx-options item 'fuse=yes'" in err
    code, _, err = run_cli("compare-fx", "graphs/seed_demo.yaml")
    assert code == 2 and "not a torch.export program" in err


def test_ops_aten_lists_the_table(run_cli):
    from xcviz.ops import REGISTRY
    from xcviz.ops.aten.adapters import ADAPTERS, TARGETS

    code, out, err = run_cli("ops", "--aten", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["aten"] for r in rows] == sorted(f"aten.{n}" for n in ADAPTERS)
    for r in rows:
        assert REGISTRY.get(TARGETS[r["aten"][5:]]).name == r["op"]
    by_name = {r["aten"]: r for r in rows}
    assert by_name["aten.linear"]["op"] == "torch_linear" and by_name["aten.nonzero"]["cpu"] is False
