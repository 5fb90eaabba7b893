"""samples/ must be exactly what `python -m xcviz.samples` writes today (byte-identical, deterministic)."""
import pytest
import os

from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


def test_samples_are_current():
    from xcviz.samples import generate, stale

    wanted = generate(ROOT)
    assert generate(ROOT) == wanted   # deterministic within a run
    bad = stale(ROOT, wanted)
    assert not bad, f"stale samples: {bad}; run `python -m xcviz.samples` and commit samples/"


def test_samples_cover_every_graph_without_absolute_paths():
    from xcviz.samples import generate, graph_files

    wanted = generate(ROOT)
    for name in graph_files(ROOT):
        stem = os.path.splitext(os.path.basename(name))[0]
        assert f"{stem}.txt" in wanted and f"{stem}.report.html" in wanted, name
    for name, data in wanted.items():
        assert ROOT.encode() not in data, name
        assert os.path.expanduser("~").encode() + b"/" not in data or os.path.expanduser("~") == "/", name
