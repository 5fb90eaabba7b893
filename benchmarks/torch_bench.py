"""Load + cluster time of exported deep MLPs (10^4 and 10^5 nodes) next to torch.fx's CapabilityBasedPartitioner
on the same program and support set. Writes benchmarks/torch_results.json and torch_results.md.

    python benchmarks/torch_bench.py [--sizes 10000,100000] [--repeats 3] [--fx-bound 600]

Each xcviz step runs `repeats` times (median, min, max); the partitioner runs once per size in a child process
stopped at the bound (it is the slow side)."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))


def _spread(times: list[float]) -> dict:
    return {"median_s": round(statistics.median(times), 4), "min_s": round(min(times), 4),
            "max_s": round(max(times), 4), "runs": len(times)}


def _timed(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, _spread(times)


def xcviz_side(nodes: int, repeats: int, file_limit: int) -> dict:
    import torch

    import xcviz
    from xcviz.clustering import ClusterOptions, run_clustering
    from torch_mlp import deep_mlp

    ep = deep_mlp(nodes // 2)
    graph, convert = _timed(lambda: xcviz.from_torch(ep), repeats)
    clustering, cluster = _timed(lambda: run_clustering(graph, ClusterOptions()), repeats)
    out = {"nodes": len(graph.nodes), "fx_nodes": len(ep.graph.nodes), "clusters": len(clustering.clusters),
           "steps": {"from_torch": convert, "cluster": cluster}}
    if nodes <= file_limit:  # torch.export.save/load themselves take minutes past this size
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "mlp.pt2")
            t = time.perf_counter()
            torch.export.save(ep, path)
            out["save_s"] = round(time.perf_counter() - t, 3)
            out["pt2_bytes"] = os.path.getsize(path)
            # torch's own load, then xcviz's whole .pt2 load (the archive's JSON read directly, the graph, finalize)
            _, out["steps"]["torch_export_load"] = _timed(lambda: torch.export.load(path), repeats)
            _, out["steps"]["load_pt2"] = _timed(lambda: xcviz.load(path), repeats)
    out["load_avg"] = round(os.getloadavg()[0], 1)
    return out


def fx_child(nodes: int) -> None:
    from xcviz.pipeline import AnalysisOptions, analyse
    from xcviz.clustering.fx_compare import fx_partitions
    import xcviz
    from torch_mlp import deep_mlp

    ep = deep_mlp(nodes // 2)
    a = analyse(xcviz.from_torch(ep), AnalysisOptions())
    t = time.perf_counter()
    parts = fx_partitions(ep, a.graph, a.clustering, {"allows_single_node_partition": False,
                                                      "skip_horizontal_fusion": False})
    print(json.dumps({"partition_s": round(time.perf_counter() - t, 3), "partitions": len(parts)}))


def fx_side(nodes: int, bound: float) -> dict:
    cmd = [sys.executable, __file__, "--fx-child", str(nodes)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=bound)
    except subprocess.TimeoutExpired:
        return {"finished": False, "bound_s": bound}
    if p.returncode:
        return {"finished": False, "error": p.stderr.strip().splitlines()[-1][:300] if p.stderr.strip() else "?"}
    return {"finished": True, **json.loads(p.stdout.strip().splitlines()[-1])}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--fx-bound", type=float, default=600)
    ap.add_argument("--file-limit", type=int, default=10000)
    ap.add_argument("--fx-child", type=int)
    args = ap.parse_args()
    if args.fx_child:
        return fx_child(args.fx_child)
    import torch

    results = {"torch": torch.__version__, "cpu_count": os.cpu_count(), "sizes": []}
    fx_done = True
    for n in (int(s) for s in args.sizes.split(",")):
        row = xcviz_side(n, args.repeats, args.file_limit)
        row["fx"] = fx_side(n, args.fx_bound) if fx_done else {"finished": False, "skipped": "a smaller size ran past the bound"}
        fx_done = row["fx"].get("finished", False)
        results["sizes"].append(row)
        print(json.dumps(row), flush=True)
    with open(os.path.join(HERE, "torch_results.json"), "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    with open(os.path.join(HERE, "torch_results.md"), "w") as f:
        f.write(markdown(results))


def markdown(results: dict) -> str:
    lines = [f"# Exported deep MLPs: xcviz vs CapabilityBasedPartitioner (torch {results['torch']}, "
             f"{results['cpu_count']} cores, shared machine)", "",
             "| xcviz nodes | FX nodes | load avg | from_torch (median [min-max]) | cluster | torch.export.load "
             "| xcviz load .pt2 | FX propose_partitions |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results["sizes"]:
        s = r["steps"]
        cell = lambda k: (f"{s[k]['median_s']:.3f} s [{s[k]['min_s']:.3f}-{s[k]['max_s']:.3f}]" if k in s else "—")
        fx = r["fx"]
        fxc = f"{fx['partition_s']:.1f} s" if fx.get("finished") else (f"> {fx['bound_s']:.0f} s (stopped)" if "bound_s" in fx
                                                                        else fx.get("skipped") or fx.get("error", "?"))
        lines.append(f"| {r['nodes']:,} | {r['fx_nodes']:,} | {r.get('load_avg', '—')} | {cell('from_torch')} | {cell('cluster')} | {cell('torch_export_load')} "
                     f"| {cell('load_pt2')} | {fxc} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
