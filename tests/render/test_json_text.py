"""render/json_text.py writes exactly what json.dumps(indent=2, ensure_ascii=False, allow_nan=False) writes."""
import json
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcviz.render.json_text import NoFloats, NoFloatsList, dumps_indented
from tests.support.paths import ROOT



def reference(data) -> bytes:
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8")


scalars = (st.none() | st.booleans() | st.integers(min_value=-2**80, max_value=2**80)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
           | st.sampled_from([1e16, 1e-05, 1e-7, 2.5e-05, 1e22, 5e-324, -0.0, 1.7976931348623157e308, 0.1]))
keys = st.text(max_size=6) | st.integers(min_value=-10**6, max_value=10**6) | st.booleans() | st.none() | st.floats(allow_nan=False)
documents = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                         | st.dictionaries(keys, inner, max_size=4), max_leaves=25)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(documents)
def test_same_bytes_as_json_dumps(data):
    def outcome(write):
        try:
            return write(data)
        except ValueError as e:  # (an infinite float key)
            return type(e), str(e)

    assert outcome(dumps_indented) == outcome(reference)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), [1, {"a": -float("inf")}]])
def test_non_finite_floats_raise_as_json_does(bad):
    with pytest.raises(ValueError) as mine:
        dumps_indented(bad)
    with pytest.raises(ValueError) as theirs:
        reference(bad)
    assert str(mine.value) == str(theirs.value)


def test_what_msgspec_cannot_write_goes_the_way_of_json():
    import enum

    import numpy as np

    class Color(enum.IntEnum):
        RED = 1

    for data in ({"a": Color.RED}, {Color.RED: 1}, {"x": np.float64(0.1)}, {(1, 2): 3} , {"s": "\ud800"}):
        try:
            want = reference(data)
        except (TypeError, UnicodeEncodeError) as e:
            with pytest.raises(type(e)):
                dumps_indented(data)
        else:
            assert dumps_indented(data) == want
    assert dumps_indented({"x": np.float64(0.1)}) == reference({"x": 0.1})


def test_marked_parts_are_written_unwalked_and_equal():
    table = NoFloats({"n1": {"op": "add", "outputs": [{"shape": [1, "B"], "dtype": "float32"}]}})
    data = {"nodes": table, "edges": NoFloatsList([{"bytes": 4}]), "speedup": 1e-05}
    assert dumps_indented(data) == reference(data)


def test_every_example_cluster_report_takes_the_marked_path():
    """The node table and the boundary edges of each example's report are marked (so 10^6-node reports are
    never walked), and its text equals json.dumps's."""
    import xcviz
    from xcviz.render.report_json import cluster_report

    for name in sorted(os.listdir(os.path.join(ROOT, "graphs"))):
        g = xcviz.load(os.path.join(ROOT, "graphs", name))
        c = xcviz.cluster(g)
        report = cluster_report(g, c, xcviz.stats(g, c))
        assert type(report["nodes"]) is NoFloats, name
        assert type(report["boundary_edges"]) is NoFloatsList, name
        assert dumps_indented(report) == reference(report), name
        assert not any(isinstance(v, float) and not math.isfinite(v) for v in report["stats"].values())
