"""GraphColumns.codes: integer codes of a column in order of first appearance, on every path it takes."""
from __future__ import annotations

import pytest

from hypothesis import given
from hypothesis import strategies as st

from xcviz.ir.columns import GraphColumns

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


class _Column:
    """Just what codes() reads: the column and the cache."""

    def __init__(self, col: list) -> None:
        self.col, self.extra = col, {}

    def column(self, name: str, keep: bool = True) -> list:
        return self.col


def _model(col: list) -> tuple[list[int], list]:
    seen: dict = {}
    return [seen.setdefault(v, len(seen)) for v in col], list(seen)


# mostly one value (the sparse path), evenly mixed (the dense path), equal values that are distinct objects
values = st.sampled_from([None, "gpu:0", "cpu:1", False, True, 0.5, 7, ("a", 1)])
columns = st.one_of(
    st.lists(values, max_size=40),
    st.tuples(values, st.lists(st.tuples(st.integers(0, 200), values), max_size=5), st.integers(1, 200)).map(
        lambda t: [dict(t[1]).get(i, t[0]) for i in range(t[2])]),
    st.lists(st.sampled_from(["x", "y"]), min_size=1, max_size=60).map(lambda c: ["".join(list(v)) for v in c]))


@given(columns)
def test_codes_follow_first_appearance(col):
    ids, vals = GraphColumns.codes(_Column(col), "device")
    want_ids, want_vals = _model(col)
    assert ids.tolist() == want_ids and vals == want_vals
