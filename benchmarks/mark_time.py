"""Wall time of the clustering call alone (`xcviz.cluster` on a loaded graph) in a fresh process: the first call and the best of the next.

    python benchmarks/mark_time.py graphs/seed_demo.yaml [--repeats 5]
    python benchmarks/mark_time.py --typed 1000 [--repeats 5]      # ratios.typed(n), written to a temporary file

Prints one JSON line: nodes, the first call's seconds (imports of the pass included), the best and median
of the repeats, and mark's own seconds (the pass on candidates found beforehand, best of the repeats).
Run it under PYTHONPATH=<checkout> to time that checkout's code (issue 27: numba before, Cython after).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph", nargs="?")
    ap.add_argument("--typed", type=int, help="time ratios.typed(N) instead of a file")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    path = args.graph
    if args.typed:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from generate import to_json
        from ratios import typed

        path = os.path.join(tempfile.mkdtemp(), f"typed{args.typed}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(to_json(typed(args.typed)))
    import xcviz
    from xcviz.clustering import ClusterOptions, find_candidates
    from xcviz.clustering.mark import mark_for_compilation

    g = xcviz.load(path)
    t = time.perf_counter()
    xcviz.cluster(g)
    first = time.perf_counter() - t
    calls, marks = [], []
    for _ in range(args.repeats):
        t = time.perf_counter()
        xcviz.cluster(g)
        calls.append(time.perf_counter() - t)
        opts = ClusterOptions()
        cands = find_candidates(g, opts)
        t = time.perf_counter()
        mark_for_compilation(g, cands, opts)
        marks.append(time.perf_counter() - t)
    print(json.dumps({"graph": os.path.basename(path), "nodes": len(g.nodes), "first_s": round(first, 6),
                      "best_s": round(min(calls), 6), "median_s": round(statistics.median(calls), 6),
                      "mark_best_s": round(min(marks), 6)}))


if __name__ == "__main__":
    main()
