"""Regenerate docs/node_tests.md: ONNX backend node tests vs xcviz's native and JAX implementations and onnxruntime,
and every case through the command line (`xcviz run` with .npz inputs and outputs) vs onnxruntime on the same
cases, with docs/node_tests_cli.tsv (each case's result, for diffing two runs).

    python docs/make_node_tests.py             (a few minutes; the cases are cached in ~/.cache/xcviz)
    python docs/make_node_tests.py --cli-only  (the command-line section and the .tsv alone)
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xcviz.conformance import collect, has_ort, render_markdown, run_all  # noqa: E402
from xcviz.cli.node_tests import CLI_HEADING, collect_all, render_cli, run_suite, suite_tsv  # noqa: E402

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    path, tsv = os.path.join(here, "node_tests.md"), os.path.join(here, "node_tests_cli.tsv")
    cases = collect()
    ort = has_ort()
    version = __import__("onnxruntime").__version__ if ort else None
    # computed first: an interrupted run leaves the old files
    if "--cli-only" in sys.argv:
        with open(path, encoding="utf-8") as f:
            table = f.read().partition("\n" + CLI_HEADING)[0]
    else:
        table = render_markdown(run_all(cases))
    result = run_suite(collect_all(), ort=ort)   # every case: the expanded and other-domain ones too
    with open(path, "w", encoding="utf-8") as f:
        f.write(table + render_cli(result, version))
    with open(tsv, "w", encoding="utf-8") as f:
        f.write(suite_tsv(result))
    print(f"wrote {path} and {tsv}: xcviz {result['cli']}, onnxruntime {result['ort']}")
