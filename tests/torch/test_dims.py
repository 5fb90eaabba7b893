"""Binding symbolic sizes when their names are gone: a saved .pt2 keeps torch's symbol (`s77`), not the
`Dim("batch")` name, so `--dim` also takes INPUT.AXIS, and a name the graph lacks lists the symbols with
the input axis each first appears at."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

YAML = """name: sym
inputs:
  - {name: x, shape: [n, 4], dtype: float32}
  - {name: w, shape: [4, 3], dtype: float32, param: true}
nodes:
  - {name: m, op: matmul, inputs: [x, w]}
  - {name: r, op: relu, inputs: [m]}
outputs: [r]
"""


def _dims(run_cli, path, *flags):
    code, out, err = run_cli("cluster", path, "--min-cluster-size", "1", "--json", *flags)
    assert code == 0, err
    report = json.loads(out)
    return report["graph"]["dims"], report["stats"]["boundary_bytes"]


def test_input_axis_binds_the_symbol_there(tmp_path, run_cli):
    path = tmp_path / "sym.yaml"
    path.write_text(YAML)
    assert _dims(run_cli, str(path), "--dim", "x.0=8") == _dims(run_cli, str(path), "--dim", "n=8")
    assert _dims(run_cli, str(path), "--dim", "x.0=8")[0] == {"n": 8}
    code, out, err = run_cli("cluster", str(path), "--dim", "batch=8")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "no dimension 'batch'" in err and "n (x.0)" in err
    code, out, err = run_cli("cluster", str(path), "--dim", "x.1=8")  # a static axis names no symbol
    assert code == 2 and "x.1" in err


def test_saved_program_binds_by_symbol_or_input_axis(tmp_path, run_cli):
    torch = pytest.importorskip("torch", reason="needs the torch extra: pip install -e '.[torch]'")
    from torch.export import Dim

    from tests.torch.test_models import TwoBranch

    ep = torch.export.export(TwoBranch().eval(), (torch.randn(3, 8),), dynamic_shapes={"x": {0: Dim("batch")}})
    path = str(tmp_path / "m.pt2")
    torch.export.save(ep, path)
    symbol = str(next(iter(torch.export.load(path).range_constraints)))
    assert symbol != "batch"  # torch 2.13 keeps no Dim name in the file: if it ever does, use it in the loader
    by_symbol = _dims(run_cli, path, "--dim", f"{symbol}=8")
    assert by_symbol[0] == {symbol: 8} and by_symbol[1] > 0
    assert _dims(run_cli, path, "--dim", "x.0=8") == by_symbol
    code, out, err = run_cli("cluster", path, "--dim", "batch=8")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{symbol} (x.0)" in err and "INPUT.AXIS" in err
