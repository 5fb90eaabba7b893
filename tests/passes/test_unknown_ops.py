"""Unknown ops: every one in the file named in one error, each with its did-you-mean, and the --allow-unknown way out."""
from __future__ import annotations

import pytest

import xcviz
from xcviz.errors import XcvizError

from tests.cli.test_diff import run

DOC = """inputs: [{name: x, shape: [4], dtype: float32}]
nodes:
  - {name: a, op: rleu, inputs: [x]}
  - {name: b, op: FancyTfOp, inputs: [a], shape: [4], dtype: float32}
  - {name: c, op: FancyTfOp, inputs: [b], shape: [4], dtype: float32}
  - {name: d, op: relu, inputs: [c]}
  - {name: e, op: concatt, inputs: [d]}
"""


def test_every_unknown_op_in_one_error(tmp_path, capsys):
    path = tmp_path / "g.yaml"
    path.write_text(DOC)
    with pytest.raises(XcvizError) as e:
        xcviz.load(str(path))
    msg = str(e.value)
    assert "unknown op 'rleu' (node 'a'; did you mean 'relu'" in msg and "and 2 more unknown ops: " in msg
    assert "'rleu' (node 'a'; did you mean 'relu'" in msg
    assert "'FancyTfOp' (2 nodes: 'b', 'c')" in msg
    assert "'concatt' (node 'e'; did you mean 'concat'" in msg
    assert "allow_unknown=True" in e.value.hint  # through the API the hint names the parameter
    code, _, err = run(capsys, "cluster", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--allow-unknown" in err


def test_one_unknown_op_keeps_its_did_you_mean_and_names_allow_unknown(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text(DOC.replace("FancyTfOp", "relu").replace("concatt", "relu"))
    with pytest.raises(XcvizError) as e:
        xcviz.load(str(path))
    assert e.value.message == "unknown op 'rleu'"
    assert e.value.hint.startswith("did you mean 'relu'") and "allow_unknown=True" in e.value.hint


def test_allow_unknown_loads_them_all_as_fallbacks(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text(DOC)
    g = xcviz.load(str(path), allow_unknown=True)
    assert [n.known for n in g.nodes] == [False, False, False, True, False]
    assert [n.note for n in g.nodes if not n.known] == ["unknown op rleu", "unknown op FancyTfOp",
                                                        "unknown op FancyTfOp", "unknown op concatt"]


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_later_node_of_the_same_name_does_not_hide_the_unknown_op(tmp_path, capsys, suffix):
    """A duplicate name (refused later) once sent the search for unknown ops to the wrong node: an internal
    IndexError instead of the one-line error (found by hypothesis in test_json_scan)."""
    import json
    doc = {"inputs": [{"name": "x", "shape": [2, 3], "dtype": "float32"}],
           "nodes": [{"name": "s", "op": "nosuch", "inputs": []}, {"name": "n1", "op": "relu", "inputs": []},
                     {"name": "s", "op": "relu", "inputs": []}]}
    path = tmp_path / f"g{suffix}"
    path.write_text(json.dumps(doc))
    with pytest.raises(XcvizError) as e:
        xcviz.load(str(path))
    assert e.value.message == "unknown op 'nosuch'"
    code, _, err = run(capsys, "stats", str(path))
    assert code == 2 and err.strip().splitlines() == [err.strip()] and "unknown op 'nosuch'" in err
