"""Regenerate docs/node_tests.md: ONNX backend node tests vs xcviz's native and JAX implementations and onnxruntime,
and a fixed sample of them through the command line (`xcviz run` with .npz inputs and outputs).

    python docs/make_node_tests.py      (about two minutes; the cases are cached in ~/.cache/xcviz)
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xcviz.conformance import collect, has_ort, render_markdown, run_all  # noqa: E402
from xcviz.cli.node_tests import render_cli, run_sample, sample  # noqa: E402

if __name__ == "__main__":
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node_tests.md")
    cases = collect()
    ort = has_ort()
    version = __import__("onnxruntime").__version__ if ort else None
    # computed first: an interrupted run leaves the old file
    text = render_markdown(run_all(cases)) + render_cli(run_sample(sample(cases), ort=ort), version)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path}")
