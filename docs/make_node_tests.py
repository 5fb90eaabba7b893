"""Regenerate docs/node_tests.md: ONNX backend node tests vs xcviz's native and JAX implementations and onnxruntime.

    python docs/make_node_tests.py      (about a minute; the cases are cached in ~/.cache/xcviz)
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xcviz.conformance import collect, render_markdown, run_all  # noqa: E402

if __name__ == "__main__":
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node_tests.md")
    text = render_markdown(run_all(collect()))  # computed first: an interrupted run leaves the old table
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path}")
