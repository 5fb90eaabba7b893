"""End-to-end time of every example model in graphs/: native vs hybrid vs jit on CPU, per-cluster measured vs
estimated speedup, compile time and cache hits; plus a generated 12-layer transformer showing that each
distinct cluster compiles once. A benchmark, not a test.

    python benchmarks/models_bench.py             # writes benchmarks/models_results.json and models_results.md
    python benchmarks/models_bench.py --quick     # fewer repeats (a smoke run; results not written)

Method: inputs are seeded random (seed 0) of the graph's declared shapes (symbolic dims at the file's
bindings). Each mode gets a fresh CompileCache; its first run (clustering, tracing and compiling included) is
reported as "first run", then after one warm-up run the median of `--repeats` runs (at least 0.3 s of them).
Per cluster, `xcviz.validate` times the cluster alone, native nodes vs its XLA executable (median after
warm-up), and the cost model's estimate sits beside it. Graphs that cannot execute are listed with why.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
MODES = ("native", "hybrid", "jit")


def median_ms(fn, repeats: int, min_seconds: float) -> float:
    fn()  # warm-up
    times, start = [], time.perf_counter()
    while len(times) < repeats or (time.perf_counter() - start < min_seconds and len(times) < 200):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def bench_graph(g, label: str, repeats: int, min_seconds: float) -> dict:
    import xcviz
    from xcviz.runtime.execute import bind_inputs, execute
    from xcviz.runtime.jit import CompileCache
    from xcviz.runtime.measure import compare

    clustering = xcviz.cluster(g)
    feeds = bind_inputs(g, seed=0)
    row: dict = {"graph": label, "nodes": len(g.nodes), "clusters": len(clustering.clusters), "modes": {}}
    ref = None
    for mode in MODES:
        cache = CompileCache()
        first = execute(g, feeds, mode, clustering, cache)
        ms = median_ms(lambda: execute(g, feeds, mode, clustering, cache), repeats, min_seconds)
        stats = cache.stats()
        ok = True
        if ref is None:
            ref = first.outputs
        else:
            ok = all(compare(first.outputs[k], ref[k])["ok"] for k in ref)
        row["modes"][mode] = {"median_ms": ms, "first_run_ms": first.seconds * 1e3,
                              "compile_ms": first.compile_seconds * 1e3, "compiles": stats["compiles"],
                              "cache_hits_first_run": first.cache["hits"], "matches_native": ok}
    row["jit_executables"] = row["modes"]["jit"]["compiles"]
    if clustering.clusters:
        report = xcviz.validate(g, clustering=clustering, repeats=max(5, repeats // 2))
        row["validate_cache"] = report.cache
        row["per_cluster"] = [{"id": c.id, "ops": sum(c.ops.values()), "status": c.status,
                               "compile_ms": c.compile_ms, "cache_hit": c.cache_hit, "native_ms": c.native_ms,
                               "xla_ms": c.xla_ms, "measured": c.speedup_measured, "estimated": c.speedup_estimate,
                               "kernels": [c.kernels_before, c.kernels_after]} for c in report.clusters]
    else:
        row["per_cluster"] = []
    return row


def deep_transformer(layers: int = 12):
    """tools/make_models.py's encoder, 12 layers split by CheckNumerics: 12 identical layer clusters."""
    import importlib.util

    from xcviz.passes.prepare import prepare
    from xcviz.loaders.onnx_model import graph_from_model

    spec = importlib.util.spec_from_file_location("make_models", os.path.join(ROOT, "tools", "make_models.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = mod.transformer(layers=layers, d=64, heads=4, check_numerics=True, name=f"transformer_{layers}_layers")
    g = prepare(graph_from_model(model, f"transformer_{layers}_layers.onnx"), onnx=True)
    g.dims.update({"B": 1, "S": 32})
    return g


def example_graphs():
    files = sorted(glob.glob(os.path.join(ROOT, "graphs", "*.onnx")) + glob.glob(os.path.join(ROOT, "graphs", "*.yaml"))
                   + glob.glob(os.path.join(ROOT, "graphs", "*.json")))
    return [os.path.relpath(f, ROOT) for f in files]


def run(repeats: int, min_seconds: float) -> dict:
    import jax

    import xcviz
    from xcviz.errors import XcvizError

    rows, skipped = [], []
    load_before = os.getloadavg()
    for path in example_graphs():
        try:
            g = xcviz.load(os.path.join(ROOT, path))
            rows.append(bench_graph(g, path, repeats, min_seconds))
        except XcvizError as e:
            skipped.append({"graph": path, "why": str(e)})
        print(f"  {path}: " + (f"{rows[-1]['modes']['hybrid']['median_ms']:.3f} ms hybrid" if rows and rows[-1]["graph"] == path
                               else "skipped: " + skipped[-1]["why"]), file=sys.stderr)
    deep = bench_graph(deep_transformer(12), "generated: transformer, 12 layers (d 64, 4 heads, B 1, S 32)", repeats,
                       min_seconds)
    rows.append(deep)
    return {"schema_version": 1, "command": "python benchmarks/models_bench.py",
            "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
                        "jax": jax.__version__, "backend": jax.default_backend(),
                        "load_average_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)]},
            "method": {"repeats": repeats, "min_seconds": min_seconds, "inputs": "seeded random (seed 0)"},
            "graphs": rows, "skipped": skipped}


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _f(v, spec=".3f", none="-"):
    return none if v is None else format(v, spec)


def markdown(res: dict) -> str:
    m = res["machine"]
    out = ["# Example models: native vs hybrid vs jit (CPU)", "",
           f"Reproduce: `{res['command']}` (writes this file and models_results.json). Machine: {m['cpus']} CPUs, "
           f"{m['platform']}, Python {m['python']}, JAX {m['jax']} ({m['backend']}); 1-minute load average "
           f"{m['load_average_before_after'][0]} before, {m['load_average_before_after'][1]} after (other work on a shared "
           "machine makes the NumPy/OpenBLAS native times the noisiest column: compare ratios, rerun before quoting).", "",
           "End-to-end time of one `execute` of the whole graph, median of at least "
           f"{res['method']['repeats']} runs after a warm-up (ms). *first run* includes clustering, tracing and "
           "compiling (a fresh compile cache per mode); *compiles* counts XLA executables built. hybrid = kept "
           "clusters compiled, every other node NumPy; jit = everything JAX can lower, min cluster size 1. "
           "Every mode's outputs matched native within the dtype-aware tolerances unless marked.", "",
           "| graph | nodes | clusters | native ms | hybrid ms | jit ms | hybrid × | jit × | first run hybrid / jit ms "
           "| compile ms hybrid / jit | compiles hybrid / jit (cache hits) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in res["graphs"]:
        n, h, j = (r["modes"][k] for k in MODES)
        bad = [k for k in MODES if not r["modes"][k]["matches_native"]]
        out.append(f"| {r['graph']}{' (MISMATCH: ' + ', '.join(bad) + ')' if bad else ''} | {r['nodes']} | {r['clusters']} "
                   f"| {n['median_ms']:.3f} | {h['median_ms']:.3f} | {j['median_ms']:.3f} "
                   f"| {n['median_ms'] / h['median_ms']:.2f} | {n['median_ms'] / j['median_ms']:.2f} "
                   f"| {h['first_run_ms']:.0f} / {j['first_run_ms']:.0f} | {h['compile_ms']:.0f} / {j['compile_ms']:.0f} "
                   f"| {h['compiles']} ({h['cache_hits_first_run']}) / {j['compiles']} ({j['cache_hits_first_run']}) |")
    out += ["", "## Per cluster: measured vs estimated speedup", "",
            "`xcviz validate` on the default clustering: the cluster's nodes run natively vs its XLA executable "
            "(median after warm-up); *estimated* is the cost model's (default CPU profile). *compile* is 'cached' "
            "when a structurally identical cluster was compiled before; *estimated* '-' means the cost model has no "
            "estimate (a boundary tensor whose shape the loader could not infer).", "",
            "| graph | cluster | ops | kernels before → after | compile ms | native ms | XLA ms | measured × | estimated × "
            "| status |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in res["graphs"]:
        clusters = r["per_cluster"]
        if len(clusters) > 4:  # identical layers: show the first two and a summary of the rest
            rest = clusters[2:]
            clusters = clusters[:2] + [{"id": f"… {len(rest)} more", "ops": sum(c["ops"] for c in rest), "status": "ok" if all(
                c["status"] == "ok" for c in rest) else "see json", "compile_ms": None, "cache_hit": all(c["cache_hit"] for c in rest),
                "native_ms": None, "xla_ms": None, "measured": _median([c["measured"] for c in rest]),
                "estimated": _median([c["estimated"] for c in rest]), "kernels": ["", ""]}]
        for c in clusters:
            kern = f"{c['kernels'][0]} → {c['kernels'][1]}" if c["kernels"][0] != "" else ""
            comp = "cached" if c["cache_hit"] else _f(c["compile_ms"], ".0f")
            out.append(f"| {r['graph']} | {c['id']} | {c['ops']} | {kern} | {comp} | {_f(c['native_ms'])} | "
                       f"{_f(c['xla_ms'])} | {_f(c['measured'], '.2f')} | {_f(c['estimated'], '.2f')} | {c['status']} |")
        if not r["per_cluster"]:
            out.append(f"| {r['graph']} | (no kept cluster) | | | | | | | | |")
    deep = res["graphs"][-1]
    vc = deep.get("validate_cache", {})
    out += ["", "## 12 identical layers compile once", "",
            f"{deep['graph']}: {deep['clusters']} kept clusters (the layers, split by CheckNumerics); hybrid built "
            f"{deep['modes']['hybrid']['compiles']} executable(s) with {deep['modes']['hybrid']['cache_hits_first_run']} "
            f"cache hits on its first run; validate: {vc.get('compiles')} compile(s), {vc.get('hits')} hits. "
            "jit mode splits at the CheckNumerics fallbacks too and reuses the same way "
            f"({deep['modes']['jit']['compiles']} executables).", ""]
    if res["skipped"]:
        out += ["## Not run", ""] + [f"- {s['graph']}: {s['why']}" for s in res["skipped"]] + [""]
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--min-seconds", type=float, default=0.3)
    ap.add_argument("--quick", action="store_true", help="3 repeats, nothing written")
    args = ap.parse_args(argv)
    res = run(3 if args.quick else args.repeats, 0.0 if args.quick else args.min_seconds)
    text = markdown(res)
    if args.quick:
        print(text)
        return
    with open(os.path.join(HERE, "models_results.json"), "w") as f:
        json.dump(res, f, indent=1, allow_nan=False)
        f.write("\n")
    with open(os.path.join(HERE, "models_results.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
