"""Tables at any width: goldens for narrow and piped output, no word ever broken, no trailing spaces,
COLUMNS honoured when piped, refused merges one row per pair with a count."""
from __future__ import annotations

import dataclasses
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

import xcviz
from xcviz.pipeline import AnalysisOptions
from xcviz.render.tables import cluster_view, stats_table

from tests.support.goldens import check_golden
from tests.cli.test_diff import run
from tests.support.paths import ROOT

GOLDEN = os.path.join(ROOT, "tests", "golden", "tables")


def render(renderable, width: int) -> str:
    c = Console(record=True, width=width, file=open(os.devnull, "w"), color_system=None, soft_wrap=False)
    c.print(renderable)
    return c.export_text()


@pytest.fixture(scope="module")
def analyses():
    out = {}
    for name, opts in (("resnet_mini.onnx", AnalysisOptions()), ("cycle_refused.yaml", AnalysisOptions(min_cluster_size=1)),
                       ("seed_demo.yaml", AnalysisOptions(min_cluster_size=1)), ("detection_head.yaml", AnalysisOptions())):
        out[name] = xcviz.analyse(os.path.join(ROOT, "graphs", name), opts)
    return out


@pytest.mark.parametrize("columns", [60, 100])
@pytest.mark.parametrize("graph, flags", [("resnet_mini.onnx", []), ("cycle_refused.yaml", ["--min-cluster-size", "1"])])
def test_piped_output_follows_columns_golden(capsys, monkeypatch, graph, flags, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run(capsys, "cluster", os.path.join(ROOT, "graphs", graph), *flags)
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= columns
    check_golden(os.path.join(GOLDEN, f"{graph.split('.')[0]}.{columns}.txt"), out, __file__)


def test_piped_without_columns_is_120_wide(capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    code, out, _ = run(capsys, "cluster", os.path.join(ROOT, "graphs", "seed_demo.yaml"), "--min-cluster-size", "1")
    assert code == 0 and 80 < max(len(line) for line in out.splitlines()) <= 120  # not an 80-column default


def _words(a) -> set[str]:
    """Every word the cluster and fallback tables hold (names, ops, reasons)."""
    g, c, s = a.graph, a.clustering, a.stats
    words = set()
    for d in s.clusters_detail:
        words |= set(d.nodes[:8]) | {f"{op}×{n}" if n > 1 else op for op, n in d.ops.items()}
    for node, k, reason in zip(g.nodes, c.cluster_of, c.reason):
        if k < 0:
            words |= {node.name, node.op_type, *(reason or "").split()}
    return words


@settings(max_examples=40, deadline=None)
@given(width=st.integers(30, 170), name=st.sampled_from(["resnet_mini.onnx", "cycle_refused.yaml", "seed_demo.yaml",
                                                          "detection_head.yaml"]))
@pytest.mark.slow
def test_no_word_broken_no_trailing_space_at_any_width(analyses, width, name):
    a = analyses[name]
    for view in (cluster_view(a.graph, a.clustering, a.stats), stats_table(a.graph, a.clustering, a.stats)):
        text = render(view, width)
        lines = text.splitlines()
        assert all(line == line.rstrip() for line in lines)
        assert all(len(line) <= width for line in lines)
    tokens = set(re.split(r"[\s│┃]+", render(cluster_view(a.graph, a.clustering, a.stats), width)))
    for word in _words(a):
        # whole, or (a word longer than a record's value column) cut with an ellipsis, never split over lines
        assert word in tokens or (len(word) > width - 16 and any(t.endswith("…") and word.startswith(t[:-1]) for t in tokens)), word


def test_narrow_terminal_gives_one_record_per_cluster(analyses):
    a = analyses["seed_demo.yaml"]
    text = render(cluster_view(a.graph, a.clustering, a.stats), 60)
    lines = text.splitlines()
    assert "cluster_0" in lines and "cluster_1" in lines  # each record's heading on its own line
    assert any(line.split() == ["nodes", "c1", "r1", "m1"] for line in lines)
    assert "┃ id" not in text


def test_refused_merges_one_row_per_pair_with_a_count(analyses):
    a = analyses["cycle_refused.yaml"]
    refused = a.clustering.refused()
    assert refused
    twice = dataclasses.replace(a.clustering, attempts=list(refused) * 2 + list(refused[:1]))
    text = render(cluster_view(a.graph, twice, a.stats), 120)
    rows = [line for line in text.splitlines() if "→" in line and "cycle" in line]
    assert len(rows) == len(refused)
    assert "×3" in rows[0] and all("×2" in r for r in rows[1:])
    once = render(cluster_view(a.graph, a.clustering, a.stats), 120)
    assert "times" not in once  # no count column when no pair repeats
