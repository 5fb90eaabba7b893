"""The model table of the PyTorch test models: ops, clusters, coverage, max error of the hybrid run against eager,
and the differences from torch.fx's CapabilityBasedPartitioner with their rules. Prints markdown.

    PYTHONPATH=. python tools/make_torch_models_table.py > benchmarks/torch_models.md"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    warnings.filterwarnings("ignore")
    import xcviz
    from xcviz.clustering.fx_compare import compare
    from xcviz.pipeline import AnalysisOptions, analyse

    from tests.torch.test_models import MODELS, build, eager

    print("| model | aten nodes | xcviz ops | clusters (min size 4) | coverage | max error vs eager (rel. to scale) "
          "| FX partitions | differences from FX (rules) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name in sorted(MODELS):
        model, args, ep = build(name)
        g = xcviz.from_torch(ep)
        a = analyse(g, AnalysisOptions())
        feeds = {v.name: x.numpy() for v, x in zip([v for v in g.inputs if v.data is None], args)}
        got = list(xcviz.run(g, feeds, mode="hybrid", clustering=a.clustering).values())
        err = max(float(np.abs(o.astype(np.float64) - w).max()) / max(float(np.abs(w).max()), 1e-6)
                  for o, w in zip(got, eager(model, args)))
        cmp = compare(ep, a.graph, a.clustering)
        aten = sum(1 for n in ep.graph.nodes if n.op == "call_function")
        ops = [n for n in g.nodes if n.op != "const"]
        covered = sum(1 for j, n in enumerate(g.nodes) if n.op != "const" and a.clustering.cluster_of[j] >= 0)
        rules = ", ".join(f"{d.rule} ({len(d.nodes)})" for d in cmp.differences) or "none"
        print(f"| {name} | {aten} | {len(ops)} | {len(a.clustering.clusters)} | {covered}/{len(ops)} | {err:.1e} "
              f"| {len(cmp.fx_partitions)} | {rules} |")


if __name__ == "__main__":
    main()
