"""A census beside a broken or missing optional library: only the rows that need it fail, each with one line
naming the library and the fix; the other sources run. The broken library is real Python on sys.path: a
torchvision whose import raises what a torchvision built for another torch raises, and a timm that imports it
(as timm does)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from xcviz.census.libraries import LibraryUnavailable, load
from xcviz.census.sources import expand
from tests.support.paths import ROOT

NMS = "operator torchvision::nms does not exist"


@pytest.fixture
def broken_libs(tmp_path, monkeypatch):
    """A folder with timm (imports torchvision) and a torchvision whose import raises, first on sys.path."""
    libs = tmp_path / "libs"
    (libs / "torchvision").mkdir(parents=True)
    (libs / "torchvision" / "__init__.py").write_text(
        "from torchvision import _meta_registrations  # noqa: F401\n")
    (libs / "torchvision" / "_meta_registrations.py").write_text(f"raise RuntimeError({NMS!r})\n")
    (libs / "timm").mkdir()
    (libs / "timm" / "__init__.py").write_text("import torchvision  # noqa: F401\n\ndef list_models(p):\n    return []\n")
    monkeypatch.syspath_prepend(str(libs))
    for name in ("timm", "torchvision", "torchvision._meta_registrations"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return libs


def test_a_library_whose_import_raises_is_named_with_its_fix(broken_libs):
    with pytest.raises(LibraryUnavailable) as e:
        load("timm")
    line = str(e.value)
    assert "\n" not in line and line.startswith("torchvision does not import (RuntimeError: " + NMS + "), and timm imports it")
    assert "torchvision built for another torch" in line and "pip install torchvision" in line


def test_expand_keeps_the_source_of_a_broken_library_as_one_failing_task(broken_libs):
    tasks = expand(["timm:resnet*", os.path.join(ROOT, "graphs", "seed_demo.yaml")])
    assert [(t.source, t.model, t.kind) for t in tasks] == [("timm:resnet*", "resnet*", "timm"),
                                                            (os.path.join(ROOT, "graphs", "seed_demo.yaml"), "seed_demo.yaml", "file")]
    assert tasks[0].unavailable.startswith("torchvision does not import") and not tasks[1].unavailable


def test_a_missing_library_is_one_row_not_a_refused_census(monkeypatch):
    monkeypatch.setitem(sys.modules, "timm", None)   # what Python does for a module that is not there: ImportError
    tasks = expand(["timm:resnet*"])
    assert len(tasks) == 1 and tasks[0].unavailable.startswith("timm is not installed: pip install -e '.[census]'")


@pytest.mark.slow
def test_census_beside_a_broken_torchvision_runs_its_other_sources(broken_libs, tmp_path):
    """The whole command in a fresh process (its workers spawned with the same sys.path): the timm source is one
    error row at stage import, the transformers and file sources are ok, exit 0, no internal error."""
    pytest.importorskip("transformers")
    pytest.importorskip("torch")
    out = tmp_path / "r.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(broken_libs), ROOT, os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-m", "xcviz", "census", "timm:resnet*", "hf:bert",
                        os.path.join(ROOT, "graphs", "seed_demo.yaml"), "-o", str(out), "--jobs", "1", "--json"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "internal error" not in p.stderr
    rows = {r["model"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["resnet*"]["status"] == "error" and rows["resnet*"]["stage"] == "import"
    assert rows["resnet*"]["error"].startswith("torchvision does not import (RuntimeError: " + NMS)
    assert rows["bert"]["status"] == "ok" and rows["bert"]["coverage"] is not None
    assert rows["seed_demo.yaml"]["status"] == "ok"


@pytest.mark.slow
def test_a_config_the_shrinking_breaks_is_built_from_a_safer_one_not_blamed_on_export():
    """Reformer's axial position embeddings must sum to its hidden size, which the shrunk width breaks: the model
    is built with its layer counts alone shrunk (checked by running it eagerly), exported and analysed."""
    pytest.importorskip("transformers")
    pytest.importorskip("torch")
    from xcviz.census.sources import Task
    from xcviz.census.worker import Settings, census_one

    row = census_one(Task("hf:reformer", "reformer", "hf", "reformer"), Settings())
    assert row["status"] == "ok", row["error"]
    assert row["config"] == "layers shrunk" and row["coverage"] is not None
