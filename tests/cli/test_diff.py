"""`xcviz diff`: the seed demo's greedy -> mark change, self-diffs, two model versions, reports, what-ifs, ARI."""
from __future__ import annotations

import itertools
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcviz.cli import main
from xcviz.analysis.diff import adjusted_rand_index
from tests.support.paths import ROOT

SEED = os.path.join(ROOT, "graphs", "seed_demo.yaml")


def run(capsys, *args) -> tuple[int, str, str]:
    code = 0
    try:
        main(list(args))
    except SystemExit as e:
        code = e.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def diff_json(capsys, *args) -> dict:
    code, out, err = run(capsys, "diff", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_seed_demo_greedy_to_mark_merges_m1_into_c1_r1(capsys):
    r = diff_json(capsys, SEED, "--a", "strategy=greedy,min_cluster_size=1", "--b", "strategy=mark,min_cluster_size=1")
    changes = [c for c in r["clusters"] if c["kind"] != "same"]
    assert changes == [{"kind": "merged", "a": ["cluster_0", "cluster_1"], "b": ["cluster_0"]}]
    assert [(m["node"], m["a"], m["b"]) for m in r["moved"]] == [("m1", "cluster_1", "cluster_0")]
    assert r["moved"][0]["b_decision"].startswith("in cluster_0: merged r1 → m1")
    assert r["delta"]["clusters"] == -1 and r["b"]["stats"]["clusters"] == 2
    assert r["delta"]["boundary_bytes"] == r["b"]["stats"]["boundary_bytes"] - r["a"]["stats"]["boundary_bytes"]
    assert 0 < r["ari"] < 1 and not r["same"]
    assert r["a"]["options"]["strategy"] == "greedy" and r["b"]["options"]["strategy"] == "mark"


def test_table_names_the_change_and_the_reason(capsys):
    code, out, _ = run(capsys, "diff", SEED, "--a", "strategy=greedy", "--b", "strategy=mark,min_cluster_size=1")
    assert code == 0
    assert "merged" in out and "{c1 r1} + {m1}" in out and "{c1 r1 m1}" in out
    assert "partition similarity (ARI)" in out


def test_self_diff_is_the_same_with_ari_1_and_exit_0(capsys):
    args = [SEED, SEED, "--min-cluster-size", "1"]
    r = diff_json(capsys, *args)
    assert r["same"] and r["ari"] == 1 and r["moved"] == []
    assert {c["kind"] for c in r["clusters"]} == {"same"}
    assert all(v in (0, None) for v in r["delta"].values())
    assert run(capsys, "diff", *args, "--exit-code")[0] == 0


def test_exit_code_1_when_different_2_on_bad_input(capsys):
    assert run(capsys, "diff", SEED, "--b", "strategy=greedy", "--exit-code")[0] == 1
    assert run(capsys, "diff", SEED, "--b", "strategy=greedy")[0] == 0
    code, _, err = run(capsys, "diff", SEED, "--b", "stratgy=greedy", "--exit-code")
    assert code == 2 and "unknown setting 'stratgy'" in err and "strategy" in err
    assert run(capsys, "diff", "nope.yaml", "--b", "strategy=greedy", "--exit-code")[0] == 2
    code, _, err = run(capsys, "diff", SEED)
    assert code == 2 and "nothing to compare" in err


def test_what_if_deny_moves_the_node_to_fallback_with_its_reason(capsys):
    r = diff_json(capsys, SEED, "--min-cluster-size", "1", "--what-if-deny", "relu")
    moved = {m["node"]: m for m in r["moved"]}
    assert moved["r1"]["b"] is None and "denied" in moved["r1"]["b_decision"]
    assert r["b"]["options"]["deny"] == ["relu"]
    back = diff_json(capsys, SEED, "--min-cluster-size", "1", "--deny", "relu", "--what-if-allow", "relu")
    assert back["b"]["options"]["deny"] == [] and back["moved"] and back["b"]["stats"]["clusters"] == 2


def test_reports_diff_like_the_analyses(capsys, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run(capsys, "cluster", SEED, "-s", "greedy", "--min-cluster-size", "1", "-o", str(a))[0] == 0
    assert run(capsys, "cluster", SEED, "--min-cluster-size", "1", "-o", str(b))[0] == 0
    r = diff_json(capsys, "--a-report", str(a), "--b-report", str(b))
    live = diff_json(capsys, SEED, "--a", "strategy=greedy,min_cluster_size=1", "--b", "min_cluster_size=1")
    assert r["clusters"] == live["clusters"] and r["ari"] == live["ari"] and r["delta"] == live["delta"]
    assert [(m["node"], m["a"], m["b"]) for m in r["moved"]] == [(m["node"], m["a"], m["b"]) for m in live["moved"]]
    code, _, err = run(capsys, "diff", "--a-report", str(a), "--b-report", SEED)
    assert code == 2 and "not a cluster report" in err


def test_two_versions_match_nodes_by_name(capsys, tmp_path):
    text = open(SEED, encoding="utf-8").read()
    assert "compile: false" in text
    v2 = tmp_path / "v2.yaml"
    v2.write_text(text.replace("compile: false", "compile: true"))  # p1 may now compile
    r = diff_json(capsys, SEED, str(v2), "--min-cluster-size", "1")
    moved = {m["node"]: m for m in r["moved"]}
    assert moved["p1"]["a"] is None and moved["p1"]["b"] is not None
    assert r["nodes_only_in_a"] == r["nodes_only_in_b"] == []
    assert r["delta"]["clusters"] is not None


def test_sweep_min_gives_one_row_per_value(capsys):
    code, out, _ = run(capsys, "diff", SEED, "--sweep-min", "0..3", "--json")
    rows = json.loads(out)["sweep"]
    assert [r["min_cluster_size"] for r in rows] == [0, 1, 2, 3]
    assert rows[-1]["stats"]["clusters"] <= rows[0]["stats"]["clusters"]
    assert run(capsys, "diff", SEED, "--sweep-min", "x..y")[0] == 2


def _ari_by_pairs(a: list, b: list) -> float:
    """The ARI's definition over pairs (Hubert & Arabie): independent of the contingency-table formula."""
    la = [x if x is not None else f"solo{i}" for i, x in enumerate(a)]
    lb = [x if x is not None else f"solo{i}" for i, x in enumerate(b)]
    tp = fp = fn = tn = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        sa, sb = la[i] == la[j], lb[i] == lb[j]
        tp += sa and sb
        fp += sb and not sa
        fn += sa and not sb
        tn += not sa and not sb
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([None, 0, 1, 2]), st.sampled_from([None, 0, 1, 2, 3])), min_size=2, max_size=12))
def test_ari_equals_the_pair_counting_definition(labels):
    a, b = [x for x, _ in labels], [y for _, y in labels]
    assert adjusted_rand_index(a, b) == pytest.approx(_ari_by_pairs(a, b), abs=1e-9)
    assert adjusted_rand_index(a, a) == 1.0
