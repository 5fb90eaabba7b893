"""`cluster --sort` orders the clusters table; fallbacks grouped by reason and op count what the JSON report lists."""
from __future__ import annotations

import json
import os
import re
from collections import Counter

import pytest

from tests.cli.test_diff import run
from tests.support.paths import ROOT

GRAPH = os.path.join(ROOT, "graphs", "transformer_block.yaml")
FLAGS = ["--strategy", "greedy", "--min-cluster-size", "1", "--deny", "MatMul"]


def report(capsys) -> dict:
    code, out, err = run(capsys, "cluster", GRAPH, *FLAGS, "--json")
    assert code == 0, err
    return json.loads(out)


def listed_ids(out: str) -> list[str]:
    return re.findall(r"^│ (cluster_\d+) ", out, flags=re.M) or re.findall(r"^(cluster_\d+)$", out, flags=re.M)


@pytest.mark.parametrize("sort", ["file", "size", "bytes", "speedup", "name"])
def test_sort_orders_the_clusters(capsys, monkeypatch, sort):
    monkeypatch.setenv("COLUMNS", "200")
    r = report(capsys)
    clusters = r["clusters"]
    assert len(clusters) >= 3
    key = {"file": lambda c: 0, "size": lambda c: -len(c["nodes"]),
           "bytes": lambda c: -(c["boundary_bytes_in"] + c["boundary_bytes_out"]),
           "speedup": lambda c: -c["speedup_estimate"], "name": lambda c: c["nodes"][0]}[sort]
    expected = [c["id"] for c in sorted(clusters, key=key)]  # sorted() is stable: ties stay in file order
    code, out, _ = run(capsys, "cluster", GRAPH, *FLAGS, "--sort", sort)
    assert code == 0 and listed_ids(out) == expected


def test_fallbacks_grouped_by_reason_and_op(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    nodes = report(capsys)["nodes"]
    groups = Counter((d["reason"], d["op_type"]) for d in nodes.values() if d["cluster"] is None)
    code, out, _ = run(capsys, "cluster", GRAPH, *FLAGS, "--fallbacks", "grouped")
    assert code == 0 and "Fallback by reason and op" in out
    rows = [line for line in out.splitlines() if line.startswith("│") and "denied" in line]
    (reason, op), n = next((k, v) for k, v in groups.items() if k[0] and "denied" in k[0])
    assert len(rows) == 1 and f"│ {op} " in rows[0] and f"│ {n:>5} │" in rows[0].replace("  ", "  ")
    code, out, _ = run(capsys, "cluster", GRAPH, *FLAGS, "--fallbacks", "nodes")
    assert "Fallback (runs natively)" in out and out.count("denied") == n


def test_bad_sort_is_an_error_with_did_you_mean(capsys):
    code, _, err = run(capsys, "cluster", GRAPH, "--sort", "sise")
    assert code == 2 and "did you mean 'size'" in err
