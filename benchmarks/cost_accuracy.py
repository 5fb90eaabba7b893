"""How well the cost model predicts what XLA does: per cluster, estimated vs measured speedup, and the
predicted kernel count vs the kernels in XLA's optimized HLO. A benchmark, not a test.

    python benchmarks/cost_accuracy.py --hardware my.yaml          # writes cost_accuracy_results.{json,md}
    python benchmarks/cost_accuracy.py --kernels-only              # kernel counts only (no timing)
    python benchmarks/cost_accuracy.py --models graphs/resnet_mini.onnx --runs 3

Models: every .onnx in graphs/ and the small models of the onnx wheel's zoo (onnx/backend/test/data/light),
clustered with `mark` at minimum size 1 (whole models, mostly one cluster each) and again with
`--max-cluster-size 6` (many small clusters of every kind), inputs seeded random (seed 0), batch dims bound to 1, other symbolic dims (sequence lengths) to 16.
Per cluster, `validate` times the native nodes and the XLA executable (median of `--repeats`); the whole
validation is repeated `--runs` times and each cluster's measured speedup is the median over runs, with its
spread (min-max). The machine is shared and noisy: the spread says how much to trust a number.
Spearman's rank correlation and the share of clusters whose estimate is within 2x of the measurement are
computed over clusters whose measured time is at least 0.02 ms (below that, the timer's noise dominates).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
# the zoo's models small enough to run natively, 7 times, on a 2-core machine (vgg19, resnet50, densenet121,
# inception_v2 and zfnet512 take minutes per native run there)
ZOO_SMALL = ("squeezenet", "shufflenet", "inception_v1", "bvlc_alexnet")


def zoo_models(names=ZOO_SMALL) -> list[str]:
    import onnx

    base = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    return [p for n in names for p in [os.path.join(base, f"light_{n}.onnx")] if os.path.exists(p)]


def default_models() -> list[str]:
    return sorted(glob.glob(os.path.join(ROOT, "graphs", "*.onnx"))) + zoo_models()


def _dims(path: str) -> dict[str, int]:
    from xcviz.loaders import load

    g = load(path)
    # batch 1; any other free dimension (a sequence length) 16, so that no axis degenerates to size 1
    return {d: 1 if d.lower() in ("n", "b", "batch", "batch_size") else 16
            for v in g.inputs if v.type.shape for d in v.type.shape if isinstance(d, str)}


def measure_model(path: str, hardware: str | None, runs: int, repeats: int, kernels_only: bool,
                  max_size: int | None = None) -> dict:
    from xcviz.pipeline import AnalysisOptions, analyse
    from xcviz.runtime.execute import execute
    from xcviz.runtime.inputs import bind_inputs
    from xcviz.runtime.jit import CompileCache
    from xcviz.runtime.validate import check_clusters

    opts = AnalysisOptions(min_cluster_size=1, max_cluster_size=max_size, hardware=hardware, dims=_dims(path))
    a = analyse(path, opts)
    env = execute(a.graph, bind_inputs(a.graph, None, 0), "native", keep_all=True).env
    cache = CompileCache()  # one compile per cluster, reused by every run
    rows: dict[str, dict] = {}
    for _ in range(1 if kernels_only else runs):
        checks = check_clusters(a.graph, a.clustering, env, a.stats, cache, 1 if kernels_only else repeats)
        for c, d in zip(checks, a.stats.clusters_detail):
            r = rows.setdefault(c.id, {"id": c.id, "ops": c.ops, "size": len(c.nodes), "kernels_predicted": d.kernels,
                                       "kernels_xla": c.kernels_after, "fusions_xla": c.fusions,
                                       "estimate": d.speedup_estimate, "status": c.status,
                                       "measured": [], "native_ms": [], "xla_ms": []})
            if c.speedup_measured is not None and not kernels_only:
                r["measured"].append(c.speedup_measured)
                r["native_ms"].append(c.native_ms)
                r["xla_ms"].append(c.xla_ms)
    for r in rows.values():
        m = r.pop("measured")
        r["measured_median"] = statistics.median(m) if m else None
        r["measured_spread"] = [min(m), max(m)] if m else None
        xla, native = r.pop("xla_ms"), r.pop("native_ms")
        r["xla_ms_median"] = statistics.median(xla) if xla else None
        r["native_ms_median"] = statistics.median(native) if native else None
    name = os.path.relpath(path, ROOT) if path.startswith(ROOT) else os.path.basename(path)
    return {"model": name + (f" (max size {max_size})" if max_size else ""), "nodes": a.stats.nodes,
            "clusters": list(rows.values()), "estimate_whole": a.stats.speedup_estimate}


def spearman(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 3:
        return None

    def ranks(v):
        order = sorted(range(len(v)), key=v.__getitem__)
        r = [0.0] * len(v)
        i = 0
        while i < len(v):
            j = i
            while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else None


def summarise(models: list[dict]) -> dict:
    rows = [r for m in models for r in m["clusters"] if r["status"] == "ok"]
    k = [r for r in rows if r["kernels_xla"] is not None]
    timed = [r for r in rows if r["measured_median"] and r["estimate"] and (r["xla_ms_median"] or 0) >= 0.02]
    est, meas = [r["estimate"] for r in timed], [r["measured_median"] for r in timed]
    within = [0.5 <= e / m <= 2.0 for e, m in zip(est, meas)]
    multi = [r for r in k if r["size"] > 1]
    return {"clusters": len(rows), "kernels_compared": len(k),
            "kernels_multi_node": len(multi),
            "kernels_multi_node_exact": sum(r["kernels_predicted"] == r["kernels_xla"] for r in multi),
            "kernels_multi_node_within_25pct": sum(abs(r["kernels_predicted"] - r["kernels_xla"]) <= 0.25 * r["kernels_xla"]
                                                   for r in multi),
            "kernels_exact": sum(r["kernels_predicted"] == r["kernels_xla"] for r in k),
            "kernels_exact_share": (sum(r["kernels_predicted"] == r["kernels_xla"] for r in k) / len(k)) if k else None,
            "kernels_within_25pct_share": (sum(abs(r["kernels_predicted"] - r["kernels_xla"]) <= 0.25 * r["kernels_xla"]
                                               for r in k) / len(k)) if k else None,
            "timed_clusters": len(timed), "spearman": spearman(est, meas),
            "within_2x_share": sum(within) / len(within) if within else None}


def markdown(result: dict) -> str:
    s = result["summary"]
    lines = [f"# Cost model accuracy ({result['machine']}, hardware {result['hardware']})", "",
             f"Clusters: {s['clusters']}. Kernel count exact on {s['kernels_exact']}/{s['kernels_compared']} "
             f"({_pct(s['kernels_exact_share'])}), within 25 % on {_pct(s['kernels_within_25pct_share'])}; "
             f"of the {s['kernels_multi_node']} clusters of two or more nodes, exact on "
             f"{s['kernels_multi_node_exact']}, within 25 % on {s['kernels_multi_node_within_25pct']}.",
             f"Speedup, over {s['timed_clusters']} clusters timed above the noise floor: Spearman "
             f"{_f(s['spearman'])}, within 2x: {_pct(s['within_2x_share'])}.", "",
             "| model | cluster | ops | kernels pred. | kernels XLA | est. | measured (median) | spread |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for m in result["models"]:
        for r in m["clusters"]:
            sp = r["measured_spread"]
            lines.append(f"| {m['model']} | {r['id']} | {r['size']} | {r['kernels_predicted']} | {r['kernels_xla']} | "
                         f"{_f(r['estimate'])} | {_f(r['measured_median'])} | "
                         f"{'' if sp is None else f'{sp[0]:.2f}-{sp[1]:.2f}'} |")
    return "\n".join(lines) + "\n"


def _f(x):
    return "-" if x is None else f"{x:.2f}"


def _pct(x):
    return "-" if x is None else f"{100 * x:.0f} %"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=None)
    ap.add_argument("--hardware", default=None, help="profile name or YAML (from `xcviz calibrate`)")
    ap.add_argument("--runs", type=int, default=7, help="validations per model (median and spread over them)")
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats inside one validation")
    ap.add_argument("--kernels-only", action="store_true")
    ap.add_argument("--max-sizes", type=int, nargs="*", default=[6],
                    help="also cluster each model with these --max-cluster-size values (more, smaller clusters)")
    ap.add_argument("--out", default=os.path.join(HERE, "cost_accuracy_results"))
    ap.add_argument("--from-json", default=None, help="re-summarise a results JSON instead of measuring")
    args = ap.parse_args()
    if args.from_json:
        with open(args.from_json, encoding="utf-8") as f:
            result = json.load(f)
        result["summary"] = summarise(result["models"])
        _write(result, args.out)
        return
    models = []
    for path in args.models or default_models():
        for max_size in (None, *args.max_sizes):
            try:
                models.append(measure_model(path, args.hardware, args.runs, args.repeats, args.kernels_only, max_size))
            except Exception as e:  # noqa: BLE001 - a benchmark lists what it could not run
                print(f"skipped {path}: {e.__class__.__name__}: {str(e)[:200]}", file=sys.stderr)
                continue
            print(f"{models[-1]['model']}: {len(models[-1]['clusters'])} clusters", file=sys.stderr, flush=True)
            if args.out:  # as it goes: a long run cut short keeps what it measured
                with open(args.out + ".partial.json", "w", encoding="utf-8") as f:
                    json.dump({"models": models}, f)
    result = {"machine": f"{platform.machine()} {os.cpu_count()} cpus (shared, noisy)",
              "hardware": args.hardware or "cpu", "runs": args.runs, "repeats": args.repeats,
              "kernels_only": args.kernels_only, "models": models, "summary": summarise(models)}
    _write(result, args.out)


def _write(result: dict, out: str | None) -> None:
    print(json.dumps(result["summary"], indent=1))
    if out:
        with open(out + ".json", "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, sort_keys=True)
        with open(out + ".md", "w", encoding="utf-8") as f:
            f.write(markdown(result))


if __name__ == "__main__":
    main()
