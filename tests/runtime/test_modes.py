"""Whole-graph execution: native == hybrid == jit on the example graphs, inputs, dims, npz output, CLI."""
from __future__ import annotations

import os

import numpy as np
import pytest

import xcviz
from xcviz.errors import XcvizError
from xcviz.runtime.execute import bind_inputs, execute
from xcviz.runtime.measure import compare
from tests.support.paths import ROOT

SEED = os.path.join(ROOT, "graphs", "seed_demo.yaml")


@pytest.mark.slow
def test_seed_demo_modes_agree():
    g = xcviz.load(SEED)
    c = xcviz.cluster(g, min_cluster_size=1)
    ref = xcviz.run(g, seed=3, mode="native")
    for mode in ("hybrid", "jit"):
        out = xcviz.run(g, seed=3, mode=mode, clustering=c if mode == "hybrid" else None)
        assert set(out) == {"a1", "p1"}
        for k in ref:
            assert out[k].shape == ref[k].shape and out[k].dtype == ref[k].dtype
            assert compare(out[k], ref[k])["ok"], (mode, k)


def test_custom_nms_keeps_only_3x3_peaks():
    g = xcviz.load(SEED)
    feeds = bind_inputs(g, seed=1)
    env = execute(g, feeds, "native", keep_all=True).env
    m, l1 = env["m1"], env["l1"]
    assert l1.shape == m.shape
    kept = l1 != 0
    assert kept.any() and (~kept).any()
    i, j = np.argwhere(kept[0, 0])[0]
    window = m[0, 0, max(i - 1, 0):i + 2, max(j - 1, 0):j + 2]
    assert m[0, 0, i, j] == window.max()


def test_inputs_are_checked_and_dims_bound():
    g = xcviz.load(SEED)
    with pytest.raises(XcvizError, match="unknown input"):
        bind_inputs(g, {"nope": np.zeros(1)})
    with pytest.raises(XcvizError, match="shape"):
        bind_inputs(g, {"x": np.zeros((1, 3, 8, 8), np.float32)})
    with pytest.raises(XcvizError, match="missing input"):
        bind_inputs(g, {"x": np.zeros((1, 3, 32, 32), np.float32)})


def test_cli_run_check_writes_npz(tmp_path, run_cli):
    out = tmp_path / "out.npz"
    code, stdout, _ = run_cli("run", SEED, "--mode", "jit", "--check", "-o", str(out), "--repeats", "1", "--json")
    assert code == 0 and '"ok": true' in stdout
    data = np.load(out)
    assert sorted(data.files) == ["a1", "p1"] and data["a1"].shape == (1, 8, 32, 32)
    inputs = tmp_path / "in.npz"
    rng = np.random.default_rng(0)
    np.savez(inputs, x=rng.standard_normal((1, 3, 32, 32)).astype(np.float32),
             w1=rng.standard_normal((8, 3, 3, 3)).astype(np.float32),
             w=rng.standard_normal((32, 32)).astype(np.float32), b=rng.standard_normal(32).astype(np.float32))
    code, stdout, _ = run_cli("run", SEED, "--inputs", str(inputs), "--check", "--repeats", "1")
    assert code == 0 and "ok" in stdout


def test_cli_run_bad_mode_is_one_line_error(run_cli):
    code, _, err = run_cli("run", SEED, "--mode", "fast")
    assert code == 2 and "unknown mode" in err and "Traceback" not in err
