"""The compiled kernel's first use: the cache check, the line on stderr while compiling, the warm-up process."""
from __future__ import annotations

import pytest

pytest.importorskip("numba")

from xcviz import progress  # noqa: E402
from xcviz.clustering import _kernel as K  # noqa: E402
from xcviz.clustering._kernel import first_use, warm  # noqa: E402


def test_notice_says_when_it_starts_and_how_long_it_took(capsys):
    with progress.notice("compiling", "compiled", enabled=True):
        pass
    assert capsys.readouterr().err.splitlines() == ["compiling", "compiled (0 s)"]
    with progress.notice("compiling", "compiled", enabled=False):
        pass
    assert capsys.readouterr().err == ""


def test_a_cold_first_call_is_announced_once(monkeypatch):
    seen = []

    class Notice:
        def __init__(self, start, done=""):
            seen.append(start)

        def __enter__(self):
            seen.append("enter")

        def __exit__(self, *exc):
            seen.append("exit")

    monkeypatch.setattr(progress, "notice", Notice)
    monkeypatch.setattr(first_use, "cached", lambda: False)
    monkeypatch.setattr(first_use.Announced, "_checked", False)
    entry = first_use.Announced(lambda x: seen.append("run") or x + 1)
    assert entry(1) == 2 and entry(2) == 3
    assert seen[0].startswith("xcviz: compiling the clustering kernel")
    assert seen[1:] == ["enter", "run", "exit", "run"]  # the line around the first call only


def test_warm_up_compiles_and_removes_its_lock(tmp_path):
    lock = tmp_path / "xcviz-compiling.lock"
    lock.write_text("1")
    warm.main(str(lock))
    assert not lock.exists()
    assert first_use.cached()       # the warm-up used the very argument types of the real pass
    assert K.run_pass.__name__ == "run_pass" and first_use.cache_dir()
