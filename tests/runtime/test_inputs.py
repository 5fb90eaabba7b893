"""`run --inputs`: wrong names, shapes, ranks or dtypes, and `--max-elements`, are one XcvizError line (exit 2)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import xcviz
from xcviz.errors import XcvizError
from xcviz.runtime.inputs import DEFAULT_MAX_ELEMENTS, bind_inputs
from tests.support.paths import ROOT

SEED = os.path.join(ROOT, "graphs", "seed_demo.yaml")
BLOCK = os.path.join(ROOT, "graphs", "transformer_block.yaml")
ENCODER = os.path.join(ROOT, "graphs", "transformer_encoder.onnx")


def seed_arrays(**override):
    rng = np.random.default_rng(0)
    arrays = {"x": rng.standard_normal((1, 3, 32, 32)).astype(np.float32),
              "w1": rng.standard_normal((8, 3, 3, 3)).astype(np.float32),
              "w": rng.standard_normal((32, 32)).astype(np.float32), "b": rng.standard_normal(32).astype(np.float32)}
    arrays.update(override)
    return {k: v for k, v in arrays.items() if v is not None}


def one_error_line(code, err, *needles):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:"), (code, err)
    assert "Traceback" not in err and "internal error" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.mark.parametrize("override, needles", [
    ({"X": np.zeros((1, 3, 32, 32), np.float32), "x": None}, ["unknown input 'X'", "did you mean 'x'"]),
    ({"x": np.zeros((1, 3, 16, 16), np.float32)}, ["input 'x' has shape [1,3,16,16], expected float32[1,3,32,32]"]),
    ({"x": np.zeros((3, 32, 32), np.float32)}, ["rank 3", "expected rank 4"]),
    ({"x": np.zeros((1, 3, 32, 32), np.complex64)}, ["input 'x' has dtype complex64, expected float32", "astype('float32')"]),
    ({"b": np.array(["a"] * 32)}, ["input 'b' has dtype <U1, expected float32"]),
], ids=["name", "shape", "rank", "dtype", "strings"])
def test_bad_npz_inputs_are_one_line_naming_the_file(tmp_path, run_cli, override, needles):
    path = tmp_path / "in.npz"
    np.savez(path, **seed_arrays(**override))
    code, out, err = run_cli("run", SEED, "--inputs", str(path), "--repeats", "1")
    line = one_error_line(code, err, *needles)
    assert str(path) in line and out == ""


def test_compatible_dtypes_convert_and_missing_inputs_are_seeded(tmp_path, run_cli):
    path = tmp_path / "in.npz"
    np.savez(path, x=np.zeros((1, 3, 32, 32), np.float64), w=np.eye(32, dtype=np.int64))  # w1, b: from --seed
    code, out, err = run_cli("run", SEED, "--inputs", str(path), "--repeats", "1", "--json")
    assert code == 0 and '"dtype": "float32"' in out, err


def test_symbolic_dims_must_agree_between_given_inputs():
    g = xcviz.load(ENCODER)
    feeds = bind_inputs(g, {"x": np.zeros((2, 5, 64), np.float32)})
    assert feeds["x"].shape == (2, 5, 64)
    assert feeds.dims["B"] == 2 and feeds.dims["S"] == 5 and "B" not in g.dims  # (the graph stays as it is)
    with pytest.raises(XcvizError, match="expected rank 3"):
        bind_inputs(g, {"x": np.zeros((5, 64), np.float32)})


def test_max_elements_refuses_huge_random_inputs(run_cli):
    code, _, err = run_cli("run", BLOCK, "--dim", "seq=100000000", "--repeats", "1")
    one_error_line(code, err, "25,600,000,000 elements", f"limit of {DEFAULT_MAX_ELEMENTS:,}", "input 'x'",
                   "--max-elements")
    code, _, err = run_cli("run", BLOCK, "--max-elements", "1000", "--repeats", "1")
    one_error_line(code, err, "over the limit of 1,000")
    for command in (("validate", BLOCK), ("hlo", BLOCK, "--cluster", "0")):
        code, _, err = run_cli(*command, "--dim", "seq=100000000")
        one_error_line(code, err, "over the limit")
    g = xcviz.load(BLOCK)
    assert bind_inputs(g, seed=0, max_elements=None)["x"].shape == (1, 128, 256)


def test_max_elements_default_is_documented(run_cli):
    code, out, _ = run_cli("run", "--help")
    assert code == 0 and "--max-elements" in out and "50000000" in out


@pytest.mark.slow
def test_run_binds_symbolic_dims_and_checks(run_cli):
    code, out, err = run_cli("run", BLOCK, "--dim", "seq=16", "--check", "--repeats", "1", "--json")
    assert code == 0, err
    res2 = json.loads(out)["outputs"]["res2"]
    assert res2["shape"] == [1, 16, 256] and res2["check"]["ok"]
