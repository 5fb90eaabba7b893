"""numba's cache of xcviz's kernels is keyed to every module of the kernel's folder (fastpath.track_sources):
numba's own stamp covers only the entry function's file, so with an editable install a change to a helper
module alone would run the stale compiled code. And the background compiles run at the lowest priority."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("numba", reason="pip install numba")

from xcviz import fastpath  # noqa: E402

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


def _dispatchers():
    from xcviz.loaders import json_scan
    from xcviz.passes import infer_fast

    return [json_scan.scan, json_scan.intern] + [
        v for v in vars(infer_fast).values() if hasattr(v, "_cache") and hasattr(v, "py_func")]


def test_every_cached_kernel_is_stamped_by_its_whole_folder():
    ds = _dispatchers()
    assert len(ds) > 2
    for d in ds:
        locator = d._cache._impl.locator
        assert getattr(type(locator), "xcviz", False), d
        folder = os.path.dirname(os.path.abspath(d.py_func.__code__.co_filename))
        assert d._cache._cache_file._source_stamp == fastpath.sources_stamp(folder)


def test_the_stamp_follows_any_module_of_the_folder(tmp_path):
    (tmp_path / "entry.py").write_text("x = 1\n")
    (tmp_path / "helper.py").write_text("def f():\n    return 1\n")
    (tmp_path / "notes.txt").write_text("not a module")
    before = fastpath.sources_stamp(str(tmp_path))
    (tmp_path / "notes.txt").write_text("still not a module")
    assert fastpath.sources_stamp(str(tmp_path)) == before
    (tmp_path / "helper.py").write_text("def f():\n    return 2\n")
    changed = fastpath.sources_stamp(str(tmp_path))
    assert changed != before
    (tmp_path / "helper.py").write_text("def f():\n    return 1\n")
    assert fastpath.sources_stamp(str(tmp_path)) == before  # (by content, not by time)


def test_functions_outside_xcviz_keep_numbas_own_locator():
    from numba import njit

    @njit(cache=True)
    def plain(x):
        return x + 1

    assert not getattr(type(plain._cache._impl.locator), "xcviz", False)


def test_background_compiles_run_at_the_lowest_priority(tmp_path, monkeypatch):
    """A background compile (fastpath.warm_in_background) runs at nice 19, its session's scheduling group too:
    on 2 cores the first `stats` of a fresh install starts up to three, and at normal priority they slowed the
    command itself."""
    import sys
    import time

    (tmp_path / "probe_priority.py").write_text(
        "import os, sys\n"
        "lock = sys.argv[1]\n"
        "try:\n"
        "    group = open('/proc/self/autogroup').read().split()[-1]\n"
        "except OSError:\n"
        "    group = 'none'\n"
        "open(lock + '.out', 'w').write(f'{os.nice(0)} {group}')\n"
        "os.remove(lock)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    folder = tmp_path / "cache"
    assert fastpath.warm_in_background(str(folder), "probe_priority")
    out = folder / "xcviz-compiling.lock.out"
    for _ in range(200):
        if out.exists() and not (folder / "xcviz-compiling.lock").exists():
            break
        time.sleep(0.05)
    nice, group = out.read_text().split()
    assert int(nice) == 19
    assert group in ("19", "none") or not sys.platform.startswith("linux")
