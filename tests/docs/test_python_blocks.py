"""Every ```python block of the README and of the docs pages it sends newcomers to runs as written, from the
repository's root, in a fresh namespace."""
from __future__ import annotations

import importlib.util
import os
import re

import pytest
from tests.support.paths import ROOT

PAGES = ("README.md", "docs/python-api.md", "docs/pytorch.md")
BLOCKS = [block for page in PAGES
          for block in re.findall(r"^```python\n(.*?)^```", open(os.path.join(ROOT, page), encoding="utf-8").read(), re.M | re.S)]


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_readme_python_block_runs(k, monkeypatch, tmp_path, capsys):
    code = BLOCKS[k]
    if re.search(r"\bxcviz\.(validate|run)\(", code) and importlib.util.find_spec("jax") is None:
        pytest.skip("needs JAX: pip install -e '.[jax]'")
    if re.search(r"^import torch\b|^from torch\b", code, re.M) and importlib.util.find_spec("torch") is None:
        pytest.skip("needs torch: pip install -e '.[torch]'")
    # the README's paths are relative to the repository's root, but a block may write files (net.pt2):
    # run it in a scratch folder that sees the root's entries, so nothing lands in the checkout
    for entry in os.listdir(ROOT):
        if not entry.startswith("."):
            os.symlink(os.path.join(ROOT, entry), tmp_path / entry)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"python block {k + 1} of {PAGES}", "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    for comment in re.findall(r"print\(.*\)\s+# → (.+)$", code, re.M):  # a `# → result` after a print is checked
        assert comment.strip() in out, f"README says {comment.strip()!r}, the code printed {out!r}"
