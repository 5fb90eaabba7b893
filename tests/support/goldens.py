"""Golden files: compare a rendered text with its file, or rewrite the file with XCVIZ_UPDATE_GOLDEN=1."""
from __future__ import annotations

import os

UPDATE = os.environ.get("XCVIZ_UPDATE_GOLDEN") == "1"


def check_golden(path: str, text: str, test_file: str) -> None:
    if UPDATE:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    assert os.path.exists(path), f"missing golden {path}: run XCVIZ_UPDATE_GOLDEN=1 pytest {test_file}"
    with open(path, encoding="utf-8", newline="") as f:
        assert text == f.read(), f"{path} differs: rerun with XCVIZ_UPDATE_GOLDEN=1 and review the diff"
