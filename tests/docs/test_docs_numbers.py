"""The deterministic figures of README.md and docs/ come back when their commands run again (tools/docs_numbers.py:
estimates, bytes and counts exactly; timings are checked by the tool with a tolerance band, not here)."""
from __future__ import annotations

import importlib.util
import os

import pytest
from tests.support.paths import ROOT

spec = importlib.util.spec_from_file_location("docs_numbers", os.path.join(ROOT, "tools", "docs_numbers.py"))
docs_numbers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(docs_numbers)

EXACT = [b for p in docs_numbers.pages() for b in docs_numbers.blocks(p) if b["kind"] == "exact"]
NEEDS = {"compile-report": "torch"}


def test_the_docs_have_checked_command_blocks():
    assert {b["page"] for b in EXACT} >= {"README.md", "docs/pytorch.md"}
    kinds = {b["kind"] for p in docs_numbers.pages() for b in docs_numbers.blocks(p)}
    assert {"exact", "example", "python"} <= kinds


@pytest.mark.parametrize("k", range(len(EXACT)), ids=[f"{b['page']}:{b['command'].split()[1]}" for b in EXACT])
def test_exact_figures_are_what_the_command_prints(k):
    b = EXACT[k]
    need = NEEDS.get(b["command"].split()[1])
    if need and importlib.util.find_spec(need) is None:
        pytest.skip(f"needs {need}")
    problems, _ = docs_numbers.check_block(b, 1.0)
    assert not problems, "\n".join(problems) + "\n(regenerate: python tools/docs_numbers.py --write)"


def test_a_stale_figure_is_found_and_written(tmp_path, monkeypatch):
    """A page whose estimate differs from the command's by one digit fails, and --write mends it."""
    (tmp_path / "docs").mkdir()
    real = [b for b in EXACT if b["page"] == "README.md"][0]
    stale = real["body"].replace("0.23×", "0.93×")
    assert stale != real["body"]
    (tmp_path / "README.md").write_text(f"intro\n\n```\n{stale}```\n", encoding="utf-8")
    monkeypatch.setattr(docs_numbers, "ROOT", str(tmp_path))
    [b] = docs_numbers.blocks("README.md")
    monkeypatch.setattr(docs_numbers, "ROOT", ROOT)   # (the command runs in the repository)
    problems, fixes = docs_numbers.check_block(b, 1.0)
    assert len(problems) == 1 and "says 0.93 where it prints 0.23" in problems[0]
    monkeypatch.setattr(docs_numbers, "ROOT", str(tmp_path))
    docs_numbers.write("README.md", fixes)
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == f"intro\n\n```\n{real['body']}```\n"


def test_timings_compare_within_the_band():
    assert docs_numbers._close("0.62", "1.2", 4.0) and not docs_numbers._close("0.62", "3.0", 4.0)
    assert not docs_numbers._close("1.32.0", "1.33.0", 4.0)


def test_every_prose_speedup_names_its_source():
    """A speedup figure outside the command blocks names a benchmark page or a dated example run."""
    found = [line for page in docs_numbers.pages() for line in docs_numbers.unsourced(page)]
    assert not found, "\n".join(found)


def test_a_bare_figure_is_unsourced(tmp_path, monkeypatch):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("XLA is 2.5× faster here.\n\nShapes like W ‹64×64› are not figures.\n",
                                        encoding="utf-8")
    monkeypatch.setattr(docs_numbers, "ROOT", str(tmp_path))
    assert [x.split(" in:")[0] for x in docs_numbers.unsourced("README.md")] == ["README.md: unsourced figure 2.5×"]


def test_example_blocks_say_example_run_and_date():
    for p in docs_numbers.pages():
        for b in docs_numbers.blocks(p):
            if b["kind"] == "example":
                assert "example run" in b["before"] and docs_numbers.re.search(r"\d{4}-\d{2}-\d{2}", b["before"]), b["command"]
