"""Progress bars go to stderr only, and only when asked (a terminal); stdout stays clean for --json."""
from __future__ import annotations

import time

from xcviz import progress


def test_disabled_progress_is_silent(capsys):
    with progress.steps(["a", "b"], enabled=False) as advance:
        advance("a")
        advance("b")
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_progress_never_writes_stdout(capsys, monkeypatch):
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    with progress.steps(["load", "cluster"], enabled=True) as advance:
        advance("load")
        time.sleep(0.2)
        advance("cluster")
    out, _ = capsys.readouterr()
    assert out == ""
