"""The cost model's shortcuts give what the plain rule gives: attribute keys per distinct dict (and per loader
code), hand-offs from one sort of (tensor, cluster) keys, parameters by runs of edges, reductions per group,
sums a block of nodes at a time, boundary consumers by the nodes' edge starts."""
import glob
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import xcviz
from xcviz.cost import boundary as boundary_mod
from xcviz.cost import compute_stats, load_hardware
from xcviz.cost.boundary import Boundary
from xcviz.cost.keys import attribute_codes
from xcviz.cost.params import VOLATILE_OPS, parameter_masks
from xcviz.cost.view import CostView
from xcviz.ir.attrs import attrs_key
from xcviz.passes.columns import attr_codes
from tests.support.paths import ROOT

ROOT = Path(ROOT)
GRAPHS = sorted(glob.glob(os.path.join(ROOT, "graphs", "*.onnx")) + glob.glob(os.path.join(ROOT, "graphs", "*.yaml"))
                + glob.glob(os.path.join(ROOT, "tests", "data", "exports", "*_torchscript.onnx")))

# values that compare equal across types (1, 1.0, True), floats whose == hides a difference (0.0, -0.0, NaN),
# and containers (no attrs_key)
VALUES = st.sampled_from([0, 1, 1.0, True, False, 0.0, -0.0, math.nan, 2.5, "a", "b", None, (1,), [1], [1.0]])
DICTS = st.dictionaries(st.sampled_from(["axis", "alpha", "mode"]), VALUES, max_size=3)


def _expected(dicts: list[dict]) -> tuple[list, list[bool]]:
    keys = [attrs_key(d) for d in dicts]
    return keys, [k is None for k in keys]


def _check(dicts: list[dict], code: np.ndarray, alone: np.ndarray) -> None:
    keys, want_alone = _expected(dicts)
    assert alone.tolist() == want_alone
    for i in range(len(dicts)):
        for j in range(len(dicts)):
            if not want_alone[i] and not want_alone[j]:
                assert (code[i] == code[j]) == (keys[i] == keys[j]), (dicts[i], dicts[j])


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(DICTS, min_size=1, max_size=12).flatmap(
    lambda ds: st.lists(st.sampled_from(ds), min_size=len(ds), max_size=3 * len(ds))))
@pytest.mark.slow
@example([{"a": 0.0}, {"a": -0.0}, {"a": 0.0}, {"a": 1}, {"a": 1.0}, {"a": True}, {"a": True}])
@example([{"a": float("nan")}, {"a": float("nan")}, {"a": 2.5}, {"a": 2.5}])
@example([{"a": (1,)}, {"a": (1.0,)}, {"a": (1,)}, {"a": [1]}, {}, {}])
def test_attribute_codes_group_as_attrs_key_does(dicts):
    """Shared and repeated dicts, by C-speed items, or by the loader's codes: equal codes iff equal attrs_key."""
    rows = list(range(len(dicts)))
    alone = np.zeros(len(dicts), bool)
    code, _ = attribute_codes(dicts, rows, alone)
    _check(dicts, code, alone)
    alone = np.zeros(len(dicts), bool)
    loaded = attr_codes(dicts, [i for i, d in enumerate(dicts) if d])
    code, _ = attribute_codes(dicts, rows, alone, loaded)
    _check(dicts, code, alone)


def _analysed(path: str):
    g = xcviz.load(path, allow_unknown=True)
    c = xcviz.cluster(g, min_cluster_size=1)
    cluster_of, _, _ = c.arrays()
    return g, c, CostView(g), cluster_of


@pytest.mark.parametrize("path", GRAPHS, ids=os.path.basename)
def test_hand_offs_count_distinct_tensors(path, monkeypatch):
    """Per cluster the distinct activation tensors in plus out, and the distinct (tensor, from, to) in all,
    counted with Python sets; the rows-of-keys fallback (huge graphs) agrees too."""
    g, c, flat, cluster_of = _analysed(path)
    edges = Boundary(g, flat, cluster_of)
    nc = len(c.clusters)
    ins: list[set] = [set() for _ in range(nc)]
    outs: list[set] = [set() for _ in range(nc)]
    crossings = set()
    for k in np.flatnonzero(~edges.param).tolist():
        tensor = (int(edges.src_pos[k]), int(edges.port[k]))
        cs, cd = int(edges.src_cluster[k]), int(edges.dst_cluster[k])
        if cd >= 0:
            ins[cd].add(tensor)
        if cs >= 0:
            outs[cs].add(tensor)
        crossings.add((tensor, cs, cd))
    per, total = edges.handoffs(nc)
    assert per.tolist() == [len(a) + len(b) for a, b in zip(ins, outs)] and total == len(crossings)
    monkeypatch.setattr(boundary_mod, "_KEY_LIMIT", 1)  # as if the keys did not fit one int64
    per2, total2 = edges.handoffs(nc)
    assert per2.tolist() == per.tolist() and total2 == total


@pytest.mark.parametrize("path", GRAPHS, ids=os.path.basename)
def test_parameters_by_runs_of_edges(path):
    """A node is a parameter iff it is a constant, or has inputs, is not volatile and reads parameters only
    (a topological pass over the nodes); each edge carries its producer's flag."""
    g, _, flat, _ = _analysed(path)
    inp, node, edge_param = parameter_masks(g, flat)
    want = {v.name for v in g.inputs if v.is_param}
    expect = []
    for nd in g.nodes:  # topological
        ins = [r.split(":")[0] if r not in want else r for r in nd.inputs if r]
        p = (nd.op == "const" and nd.known) or (bool(ins) and nd.op not in VOLATILE_OPS
                                                  and all(r in want for r in ins))
        expect.append(p)
        if p:
            want.add(nd.name)
    assert node.tolist() == expect
    table = np.concatenate((node, inp))   # (graph input i is producer n + i)
    assert np.array_equal(edge_param, table[flat.src])


@pytest.mark.parametrize("path", GRAPHS, ids=os.path.basename)
def test_same_stats_without_the_loaders_attribute_codes(path):
    """The loader's attribute codes only save reading dicts: without them every number is the same."""
    g, c, _, _ = _analysed(path)
    hw = load_hardware("benchmarks/cpu_calibrated.yaml" if "mini" in path else None, "cpu")
    a = compute_stats(g, c, hw)
    g.columns.extra.pop(("attrs", "codes"), None)
    assert CostView(g).attr_codes is None
    b = compute_stats(g, c, hw)
    assert repr(a) == repr(b)


def _stats_fields(s) -> list:
    """Every number of a Stats, each cluster's details and each boundary edge included."""
    return [repr(getattr(s, f)) for f in s.__dataclass_fields__ if f not in ("clusters_detail", "edges")] + \
        [repr(list(s.clusters_detail)), repr(list(s.edges))]


@pytest.mark.parametrize("path", GRAPHS, ids=os.path.basename)
def test_blocks_of_nodes_change_nothing(path, monkeypatch):
    """XLA's per-cluster compute time and the FLOP sums go a block of nodes at a time (a 10^6-node graph has 16
    blocks, these graphs one): with blocks of 3 nodes every number, detail and edge is the same, to the bit."""
    from xcviz.cost import calibrated, stats
    g, c, _, _ = _analysed(path)
    hw = load_hardware(None, "cpu")
    assert hw.calibrated is not None   # (the calibrated model: xla_compute runs)
    whole = _stats_fields(compute_stats(g, c, hw))
    monkeypatch.setattr(calibrated, "_BLOCK", 3)
    monkeypatch.setattr(stats, "_BLOCK", 3)
    assert _stats_fields(compute_stats(g, c, hw)) == whole


def test_xla_compute_adds_as_bincount_did():
    """The per-cluster sums, a block of nodes at a time, equal np.bincount's over every node (the form before
    the blocks) bit for bit: the same additions in node order. Random keys, kernels and clusters."""
    from xcviz.cost import calibrated
    from xcviz.cost.classes import LIBRARY_CLASSES
    cal = load_hardware(None, "cpu").calibrated
    rng = np.random.default_rng(3)
    names = sorted(cal.classes)
    key_names = [names[k % len(names)] for k in range(40)]
    key_costs = [(None if k % 7 == 0 else int(rng.integers(0, 10**9)), 0, 0) for k in range(40)]
    key_scale = rng.uniform(0.5, 2.0, 40).tolist()
    n, nc = 10_000, 300
    key_of = rng.integers(0, 40, n)
    kernels = rng.integers(0, 4, n).astype(np.int32)
    cluster_of = np.where(rng.random(n) < 0.2, -1, rng.integers(0, nc, n))
    # the form before the blocks
    loop = cal.classes["elementwise"].xla_launch
    key_class = [cal.classes[c] for c in key_names]
    launch_k = np.array([c.xla_launch for c in key_class])[key_of]
    library_k = np.array([c in LIBRARY_CLASSES for c in key_names])[key_of]
    compute_k = np.array([(f or 0) * k / c.xla_flops for c, (f, _, _), k in zip(key_class, key_costs, key_scale)])[key_of]
    launch = np.where(kernels > 0, launch_k + np.where(library_k, (kernels - 1) * loop, 0.0), 0.0)
    inside = cluster_of >= 0
    want = cal.call_overhead + np.bincount(cluster_of[inside], weights=(launch + compute_k)[inside], minlength=nc)
    for block in (1 << 16, 1000, 7):
        calibrated._BLOCK, saved = block, calibrated._BLOCK
        try:
            xla_keys = ([c.xla_launch for c in key_class], [c in LIBRARY_CLASSES for c in key_names],
                        [(f or 0) * k / c.xla_flops for c, (f, _, _), k in zip(key_class, key_costs, key_scale)])
            got = calibrated.xla_compute(cal, xla_keys, key_of, kernels, cluster_of, nc)
        finally:
            calibrated._BLOCK = saved
        assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("path", GRAPHS, ids=os.path.basename)
def test_boundary_consumers_by_edge_starts(path):
    """Each boundary edge's consumer, found by the nodes' edge starts, is the node whose run of edges holds
    it (CostView.dst: a node per edge, nodes without inputs skipped)."""
    g, _, flat, cluster_of = _analysed(path)
    edges = Boundary(g, flat, cluster_of)
    assert np.array_equal(edges.dst_pos[:len(edges.e)], flat.dst[edges.e])
    assert (edges.dst_pos[len(edges.e):] == -1).all()
