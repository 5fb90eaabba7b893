"""How well the cost model predicts what XLA does: per cluster, estimated vs measured speedup; per model,
estimated vs measured hybrid time; and the predicted kernel count vs the kernels in XLA's optimized HLO.
A benchmark, not a test.

    python benchmarks/cost_accuracy.py --calibrate benchmarks/cpu_calibrated.yaml   # measure the profile, then
    python benchmarks/cost_accuracy.py --hardware my.yaml          # writes cost_accuracy_results.{json,md}
    python benchmarks/cost_accuracy.py --kernels-only              # kernel counts only (no timing)
    python benchmarks/cost_accuracy.py --models graphs/resnet_mini.onnx --runs 3
    python benchmarks/cost_accuracy.py --from-json A.json B.json --hardware my.yaml --compare cpu
        # several measured parts as one table, costed (again) with my.yaml and compared with cpu

The checked-in table: part graphs/ (`--models graphs/*.onnx --runs 15 --repeats 5`, cost_accuracy_part_graphs.json)
and part zoo (`--models <the nine> --max-sizes --runs 7 --repeats 1 --budget 2000`, cost_accuracy_part_zoo.json),
merged with `--from-json ... --hardware cpu_calibrated.yaml --compare cpu cost_roofline_calibrated.yaml
cpu_calibrated_r4.yaml cpu_calibrated_before_narrow.yaml`; the profile was calibrated (`--calibrate`) just
before the graphs part was measured.

Models: every .onnx in graphs/ and the models of the onnx wheel's zoo (onnx/backend/test/data/light),
clustered with `mark` at minimum size 1 (whole models, mostly one cluster each) and again with
`--max-cluster-size 6` (many small clusters of every kind), inputs seeded random (seed 0), batch dims bound
to 1, other symbolic dims (sequence lengths) to 16.

Timing: the machine is shared (2 cores, other jobs running), so
- native code and XLA run on one thread each (OPENBLAS_NUM_THREADS=1, XLA without its Eigen thread pool,
  set below before NumPy or JAX load; `--all-threads` keeps the defaults), and times are the CPU time of
  this process (time.process_time): a busy machine then neither stalls a thread pool for milliseconds nor
  stretches a run by taking the core away; the profile is calibrated the same way (`--calibrate`);
- the runs are interleaved: run 1 of every model, then run 2 of every model, ..., so a busy minute touches
  every model alike; each run times each cluster `--repeats` times (median), and a cluster's measured
  speedup is the median over runs with its spread (min-max) and the best (min time) ratio beside it;
- the load average is recorded at each run; `--budget` seconds stops starting new runs (the runs done are
  reported).
Whole model: the hybrid run (each cluster one compiled call, parameters resident, the rest native) and the
all-native run, one call each per run, against the stats' time_after and time_before.
Spearman's rank correlation and the share of clusters whose estimate is within 2x of the measurement are
computed over clusters whose measured XLA time is at least 0.02 ms (below that, the timer's noise dominates).
"""
from __future__ import annotations

import os
import sys

if "--all-threads" not in sys.argv:  # before NumPy and JAX load their thread pools
    for _k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_k] = "1"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1").strip()


import argparse
import glob
import json
import platform
import statistics
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
# the zoo's models small enough to run natively, 7 times, on a 2-core machine (vgg19, resnet50, densenet121,
# inception_v2 and zfnet512 take minutes per native run there)
ZOO_SMALL = ("squeezenet", "shufflenet", "inception_v1", "bvlc_alexnet")
ZOO_ALL = ZOO_SMALL + ("vgg19", "resnet50", "densenet121", "inception_v2", "zfnet512")


def zoo_models(names=ZOO_SMALL) -> list[str]:
    import onnx

    base = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    return [p for n in names for p in [os.path.join(base, f"light_{n}.onnx")] if os.path.exists(p)]


def default_models() -> list[str]:
    return sorted(glob.glob(os.path.join(ROOT, "graphs", "*.onnx"))) + zoo_models()


def _dims(path: str) -> dict[str, int]:
    from xcviz.pipeline import load_file as load

    g = load(path)
    # batch 1; any other free dimension (a sequence length) 16, so that no axis degenerates to size 1
    return {d: 1 if d.lower() in ("n", "b", "batch", "batch_size") else 16
            for v in g.inputs if v.type.shape for d in v.type.shape if isinstance(d, str)}


def _analyse(path: str, hardware: str | None, max_size: int | None, need_run: bool = True):
    """(analysis, feeds, native run) of a model with the dims of `_dims`; a size only a run knows (a
    data-dependent output, NonMaxSuppression's K in detector_mini) is then bound to its size in the native
    run with these inputs, as `--dim K=...` would: the estimate is costed at the sizes that are measured.
    Without `need_run`, a model with no such size is not run (feeds and run None)."""
    from xcviz.ir import format_ref
    from xcviz.pipeline import AnalysisOptions, analyse
    from xcviz.runtime.inputs import bind_inputs
    from xcviz.runtime.partial import execute_tolerant

    dims = _dims(path)

    def run(d, native=True):
        a = analyse(path, AnalysisOptions(min_cluster_size=1, max_cluster_size=max_size, hardware=hardware, dims=d))
        if not native:
            return a, None, None
        feeds = bind_inputs(a.graph, None, 0)
        return a, feeds, execute_tolerant(a.graph, feeds)

    a, feeds, env = run(dims, native=need_run)
    if env is None:
        if not any(isinstance(d, str) and d not in dims for node in a.graph.nodes for t in node.outputs
                   for d in t.shape or ()):
            return a, None, None
        a, feeds, env = run(dims)
    seen = {}
    for node in a.graph.nodes:
        for k, t in enumerate(node.outputs):
            value = env.env.get(format_ref(node.name, k))
            for d, size in zip(t.shape or (), getattr(value, "shape", ())):
                if isinstance(d, str) and d not in dims:
                    seen.setdefault(d, int(size))
    return run({**dims, **seen}) if seen else (a, feeds, env)


class Model:
    """One model under one clustering, analysed and compiled once; `run()` times it once more."""

    def __init__(self, path: str, hardware: str | None, max_size: int | None, kernels_only: bool,
                 compare: tuple[str, ...] = ()) -> None:
        from xcviz.cost import compute_stats, load_hardware
        from xcviz.runtime.jit import CompileCache

        from cost_hybrid import WholeModel

        a, feeds, self.env = _analyse(path, hardware, max_size)
        self.a = a
        self.cache = CompileCache()  # one compile per cluster, reused by every run
        name = os.path.relpath(path, ROOT) if path.startswith(ROOT) else os.path.basename(path)
        self.name = name + (f" (max size {max_size})" if max_size else "")
        self.rows: dict[str, dict] = {}
        self.kernels_only = kernels_only
        self.whole = {"hybrid_s": [], "native_s": [], "why": None}
        self.runner = None
        # the same clusters costed with other profiles (the model before calibration), to compare
        self.others = {p: compute_stats(a.graph, a.clustering, load_hardware(p, "cpu")) for p in compare}
        if not kernels_only:
            try:
                self.runner = WholeModel(a.graph, a.clustering, feeds, self.cache)
            except Exception as e:  # noqa: BLE001 - a model some node of which cannot run natively
                self.whole["why"] = f"{e.__class__.__name__}: {str(e)[:120]}"

    def run(self, repeats: int) -> None:
        from xcviz.runtime.validate import check_clusters

        checks = check_clusters(self.a.graph, self.a.clustering, self.env, self.a.stats, self.cache, repeats)
        for k, (c, d) in enumerate(zip(checks, self.a.stats.clusters_detail)):
            r = self.rows.setdefault(c.id, {
                "id": c.id, "ops": c.ops, "size": len(c.nodes), "kernels_predicted": d.kernels,
                "kernels_xla": c.kernels_after, "fusions_xla": c.fusions, "estimate": d.speedup_estimate,
                "status": c.status, "est_native_ms": _ms(d.time_unfused),
                "est_xla_ms": _ms(d.time_unfused / d.speedup_estimate if d.speedup_estimate and d.time_unfused else None),
                "measured": [], "native_ms": [], "xla_ms": [],
                "estimate_other": {p: st.clusters_detail[k].speedup_estimate for p, st in self.others.items()}})
            if c.speedup_measured is not None and not self.kernels_only:
                r["measured"].append(c.speedup_measured)
                r["native_ms"].append(c.native_ms)
                r["xla_ms"].append(c.xla_ms)
        if self.runner is not None and not self.kernels_only:
            from xcviz.runtime.measure import median_ms

            self.whole["hybrid_s"].append(median_ms(self.runner.hybrid, repeats) / 1e3)
            self.whole["native_s"].append(median_ms(self.runner.native, repeats) / 1e3)

    def result(self) -> dict:
        for r in self.rows.values():
            m, xla, native = r.pop("measured"), r.pop("xla_ms"), r.pop("native_ms")
            r["runs"] = len(m)
            r["measured_median"] = statistics.median(m) if m else None
            r["measured_spread"] = [min(m), max(m)] if m else None
            r["xla_ms_median"] = statistics.median(xla) if xla else None
            r["native_ms_median"] = statistics.median(native) if native else None
            r["xla_ms_min"], r["native_ms_min"] = (min(xla), min(native)) if xla else (None, None)
            r["measured_best"] = r["native_ms_min"] / r["xla_ms_min"] if xla and r["xla_ms_min"] else None
        s, h, nat = self.a.stats, self.whole["hybrid_s"], self.whole["native_s"]
        whole = {"estimate_hybrid_ms": _ms(s.time_after), "estimate_native_ms": _ms(s.time_before),
                 "hybrid_ms_median": _ms(statistics.median(h)) if h else None,
                 "hybrid_ms_spread": [_ms(min(h)), _ms(max(h))] if h else None,
                 "native_ms_median": _ms(statistics.median(nat)) if nat else None,
                 "native_ms_spread": [_ms(min(nat)), _ms(max(nat))] if nat else None, "why": self.whole["why"],
                 "estimate_hybrid_ms_other": {p: _ms(st.time_after) for p, st in self.others.items()}}
        return {"model": self.name, "nodes": s.nodes, "clusters": list(self.rows.values()),
                "estimate_whole": s.speedup_estimate, "whole": whole}


def reestimate(models: list[dict], hardware: str, compare: list[str]) -> None:
    """Cost the measured clusters again with `hardware` (and `compare`): the estimates are pure functions of
    the graph, the clustering and the profile, so a new profile or model needs no new measurement."""
    from xcviz.cost import compute_stats, load_hardware

    zoo = {os.path.basename(p): p for p in zoo_models(ZOO_ALL)}
    for m in models:
        name, _, size = m["model"].partition(" (max size ")
        path = zoo.get(name) or next((q for q in (os.path.join(ROOT, name), os.path.join(ROOT, "graphs", name))
                                      if os.path.exists(q)), name)
        max_size = int(size.rstrip(")")) if size else None
        a = _analyse(path, hardware, max_size, need_run=False)[0]
        others = {p: compute_stats(a.graph, a.clustering, load_hardware(p, "cpu")) for p in compare}
        for k, (r, d) in enumerate(zip(m["clusters"], a.stats.clusters_detail)):
            assert r["id"] == d.id and r["size"] == len(d.nodes), (m["model"], r["id"])
            r.update(estimate=d.speedup_estimate, kernels_predicted=d.kernels, est_native_ms=_ms(d.time_unfused),
                     est_xla_ms=_ms(d.time_unfused / d.speedup_estimate if d.speedup_estimate and d.time_unfused
                                    else None),
                     estimate_other={p: st.clusters_detail[k].speedup_estimate
                                     for p, st in others.items()})
        m["whole"].update(estimate_hybrid_ms=_ms(a.stats.time_after), estimate_native_ms=_ms(a.stats.time_before),
                          estimate_hybrid_ms_other={p: _ms(st.time_after) for p, st in others.items()})
        m["estimate_whole"] = a.stats.speedup_estimate


def _ms(seconds):
    return None if seconds is None else seconds * 1e3


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


def _agreement(est: list[float], meas: list[float]) -> dict:
    within = [0.5 <= e / m <= 2.0 for e, m in zip(est, meas)]
    return {"spearman": spearman(est, meas), "within_2x_share": sum(within) / len(within) if within else None}


def summarise(models: list[dict]) -> dict:
    """The accuracy numbers, for the profile measured with and (under "other") each profile compared."""
    rows = [r for m in models for r in m["clusters"] if r["status"] == "ok"]
    others = sorted({p for r in rows for p in r.get("estimate_other", {})})
    other = {}
    for p in others:
        alt = [dict(r, estimate=r["estimate_other"][p]) for r in rows]
        alt_models = [dict(m, whole=dict(m["whole"], estimate_hybrid_ms=m["whole"]["estimate_hybrid_ms_other"][p]))
                      for m in models if m.get("whole", {}).get("estimate_hybrid_ms_other")]
        other[p] = _speedups(alt, alt_models)
    return {**_kernels(rows), **_speedups(rows, models), "other": other}


def _kernels(rows: list[dict]) -> dict:
    k = [r for r in rows if r["kernels_xla"] is not None]
    multi = [r for r in k if r["size"] > 1]
    return {"clusters": len(rows), "kernels_compared": len(k),
            "kernels_multi_node": len(multi),
            "kernels_multi_node_exact": sum(r["kernels_predicted"] == r["kernels_xla"] for r in multi),
            "kernels_multi_node_within_25pct": sum(abs(r["kernels_predicted"] - r["kernels_xla"]) <= 0.25 * r["kernels_xla"]
                                                   for r in multi),
            "kernels_exact": sum(r["kernels_predicted"] == r["kernels_xla"] for r in k),
            "kernels_exact_share": (sum(r["kernels_predicted"] == r["kernels_xla"] for r in k) / len(k)) if k else None,
            "kernels_within_25pct_share": (sum(abs(r["kernels_predicted"] - r["kernels_xla"]) <= 0.25 * r["kernels_xla"]
                                               for r in k) / len(k)) if k else None}


def _speedups(rows: list[dict], models: list[dict]) -> dict:
    timed = [r for r in rows if r.get("measured_median") and r["estimate"] and (r["xla_ms_median"] or 0) >= 0.02]
    best = _agreement([r["estimate"] for r in timed], [r.get("measured_best") or r["measured_median"] for r in timed])
    wholes = [m["whole"] for m in models if m.get("whole", {}).get("hybrid_ms_median") and m["whole"]["estimate_hybrid_ms"]]
    ratios = [w["estimate_hybrid_ms"] / w["hybrid_ms_median"] for w in wholes]
    return {"timed_clusters": len(timed),
            **_agreement([r["estimate"] for r in timed], [r["measured_median"] for r in timed]),
            "spearman_best": best["spearman"], "within_2x_share_best": best["within_2x_share"],
            "whole_models": len(ratios),
            "whole_within_1_5x": sum(1 / 1.5 <= x <= 1.5 for x in ratios),
            "whole_ratio_range": [min(ratios), max(ratios)] if ratios else None}


def markdown(result: dict) -> str:
    s = result["summary"]
    loads = result.get("load_average") or []
    lines = [f"# Cost model accuracy ({result['machine']}, hardware {result['hardware']})", "",
             f"Runs: {result.get('runs')} interleaved, {result.get('repeats')} timed repeats each, threads: "
             f"{result.get('threads', 'all')}; load average at each run: "
             f"{', '.join(f'{x:.1f}' for x in loads) or '-'} (2 cores); {result.get('seconds', '-')} s.", "",
             f"Clusters: {s['clusters']}. Kernel count exact on {s['kernels_exact']}/{s['kernels_compared']} "
             f"({_pct(s['kernels_exact_share'])}), within 25 % on {_pct(s['kernels_within_25pct_share'])}; "
             f"of the {s['kernels_multi_node']} clusters of two or more nodes, exact on "
             f"{s['kernels_multi_node_exact']}, within 25 % on {s['kernels_multi_node_within_25pct']}.",
             f"Speedup, over {s['timed_clusters']} clusters timed above the noise floor: Spearman "
             f"{_f(s['spearman'])}, within 2x: {_pct(s['within_2x_share'])} (median over runs); against the best "
             f"times: Spearman {_f(s.get('spearman_best'))}, within 2x: {_pct(s.get('within_2x_share_best'))}.",
             f"Whole model, estimated / measured hybrid time: within 1.5x on {s.get('whole_within_1_5x', '-')} of "
             f"{s.get('whole_models', '-')}" + (f" (ratios {s['whole_ratio_range'][0]:.2f}-{s['whole_ratio_range'][1]:.2f})"
                                                 if s.get("whole_ratio_range") else "") + ".", "",
             "| profile | Spearman | within 2x | Spearman (best) | within 2x (best) | whole model within 1.5x | ratios |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for name, x in [(result["hardware"], s), *sorted(s.get("other", {}).items())]:
        rr = x.get("whole_ratio_range")
        lines.append(f"| {name} | {_f(x['spearman'])} | {_pct(x['within_2x_share'])} | {_f(x.get('spearman_best'))} | "
                     f"{_pct(x.get('within_2x_share_best'))} | {x.get('whole_within_1_5x')} of {x.get('whole_models')} | "
                     f"{'' if not rr else f'{rr[0]:.2f}-{rr[1]:.2f}'} |")
    lines += ["", "Rows: the profile measured with (per-op-class numbers, `xcviz calibrate`), then the same clusters and "
              "the same measurements costed with the previous session's calibration (`cpu_calibrated_r4.yaml`: "
              "the same model, numbers measured in another session), this session's calibration at load ~7.7 "
              "(`cpu_calibrated_load7.yaml`, an hour earlier, while other jobs ran), the profile of before the narrow-"
              "convolution class (`cpu_calibrated_before_narrow.yaml`), the four-number roofline profile "
              "(`cost_roofline_calibrated.yaml`, measured) and the built-in `cpu` (derived): the model before. "
              "The previous round's own run (old model, wall-clock medians on all threads, parameters copied in "
              "per call) gave Spearman 0.45 and 50 % within 2x over 30 clusters of graphs/*.onnx."]
    spreads = sorted(r["measured_spread"][1] / r["measured_spread"][0] for m in result["models"] for r in m["clusters"]
                     if r.get("measured_spread") and r["measured_spread"][0] > 0)
    if spreads:
        lines += ["", f"Noise: a cluster's measured speedup varied between runs by a median factor of "
                      f"{spreads[len(spreads) // 2]:.2f} (max-min over runs), {spreads[-1]:.1f} at most. Two "
                      "calibrations of this machine half an hour apart, at the same load, gave native fixed costs up to "
                      "3x apart (the profile used was measured in the session of the graphs/ part): both the "
                      "estimates and the measurements move with the load, their ratio much less; a profile from "
                      "another session can be off by 2x (see its row)."]
    for part in result.get("parts", []):
        lines.append("")
        lines.append(f"Part: {', '.join(part['models'])}: {part['runs']} runs x {part['repeats']} repeats, load average "
                     f"{', '.join(f'{x:.1f}' for x in part['load_average'] or [])}, {part['seconds']} s.")
    lines += ["",
             "| model | est. hybrid ms | measured hybrid ms (median) | spread | ratio | est. native ms | measured native ms |",
             "| --- | ---: | ---: | --- | ---: | ---: | ---: |"]
    for m in result["models"]:
        w = m.get("whole") or {}
        if not w.get("hybrid_ms_median"):
            continue
        sp = w["hybrid_ms_spread"]
        lines.append(f"| {m['model']} | {_f(w['estimate_hybrid_ms'])} | {_f(w['hybrid_ms_median'])} | "
                     f"{sp[0]:.2f}-{sp[1]:.2f} | {_f(w['estimate_hybrid_ms'] and w['estimate_hybrid_ms'] / w['hybrid_ms_median'])} | "
                     f"{_f(w['estimate_native_ms'])} | {_f(w['native_ms_median'])} |")
    lines += ["", "| model | cluster | ops | kernels pred. | kernels XLA | est. | measured (median) | spread | best |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for m in result["models"]:
        for r in m["clusters"]:
            sp = r["measured_spread"]
            lines.append(f"| {m['model']} | {r['id']} | {r['size']} | {r['kernels_predicted']} | {r['kernels_xla']} | "
                         f"{_f(r['estimate'])} | {_f(r['measured_median'])} | "
                         f"{'' if sp is None else f'{sp[0]:.2f}-{sp[1]:.2f}'} | {_f(r.get('measured_best'))} |")
    return "\n".join(lines) + "\n"


def _f(x):
    return "-" if x is None else f"{x:.2f}"


def _pct(x):
    return "-" if x is None else f"{100 * x:.0f} %"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="*", default=None)
    ap.add_argument("--hardware", default=None, help="profile name or YAML (from `xcviz calibrate`)")
    ap.add_argument("--calibrate", default=None, metavar="OUT.yaml",
                    help="first measure this machine as `xcviz calibrate` does, write OUT.yaml, and use it")
    ap.add_argument("--runs", type=int, default=7, help="interleaved runs (median and spread over them)")
    ap.add_argument("--repeats", type=int, default=5, help="timed repeats inside one run")
    ap.add_argument("--budget", type=float, default=1500.0, help="seconds; no new run starts after them")
    ap.add_argument("--kernels-only", action="store_true")
    ap.add_argument("--all-threads", action="store_true", help="keep NumPy's and XLA's thread pools")
    ap.add_argument("--max-sizes", type=int, nargs="*", default=[6],
                    help="also cluster each model with these --max-cluster-size values (more, smaller clusters)")
    ap.add_argument("--out", default=os.path.join(HERE, "cost_accuracy_results"))
    ap.add_argument("--compare", nargs="*", default=[], metavar="PROFILE",
                    help="also cost the same clusters with these profiles (the model before), to compare")
    ap.add_argument("--from-json", nargs="*", default=None,
                    help="re-summarise results JSONs (their models together) instead of measuring")
    args = ap.parse_args()
    if args.from_json:
        parts = []
        for path in args.from_json:
            with open(path, encoding="utf-8") as f:
                parts.append(json.load(f))
        result = dict(parts[0], models=[m for p in parts for m in p["models"]],
                      parts=[{k: p.get(k) for k in ("runs", "repeats", "load_average", "seconds", "threads")}
                             | {"models": [m["model"] for m in p["models"]]} for p in parts])
        if args.hardware:  # the same measurements, costed with this profile
            reestimate(result["models"], args.hardware, args.compare)
            result["hardware"] = os.path.relpath(args.hardware, ROOT) if os.path.isfile(args.hardware) else args.hardware
        result["summary"] = summarise(result["models"])
        _write(result, args.out)
        return
    if not args.all_threads:  # one thread each: CPU time is the work, whoever else shares the cores
        from xcviz.runtime import measure

        measure.clock = time.process_time
    if args.calibrate:
        from xcviz.runtime.calibrate import calibrate

        cal = calibrate(progress=lambda step: print(f"calibrate: {step}", file=sys.stderr, flush=True))
        with open(args.calibrate, "w", encoding="utf-8") as f:
            f.write(cal.profile_yaml(os.path.splitext(os.path.basename(args.calibrate))[0]))
        args.hardware = args.calibrate
    start = time.perf_counter()
    models, loads = [], []
    for path in args.models or default_models():
        for max_size in (None, *args.max_sizes):
            try:
                models.append(Model(path, args.hardware, max_size, args.kernels_only, tuple(args.compare)))
            except Exception as e:  # noqa: BLE001 - a benchmark lists what it could not run
                print(f"skipped {path}: {e.__class__.__name__}: {str(e)[:200]}", file=sys.stderr)
    runs = 1 if args.kernels_only else args.runs
    for k in range(runs):
        if k and time.perf_counter() - start > args.budget:
            print(f"budget spent: {k} runs of {runs}", file=sys.stderr)
            break
        loads.append(os.getloadavg()[0])
        for m in models:
            m.run(1 if args.kernels_only else args.repeats)
        print(f"run {k + 1}/{runs} done ({time.perf_counter() - start:.0f} s, load {loads[-1]:.1f})",
              file=sys.stderr, flush=True)
    results = [m.result() for m in models]
    result = {"machine": f"{platform.machine()} {os.cpu_count()} cpus (shared, noisy)",
              "threads": "all (wall time)" if args.all_threads else "one (native and XLA; CPU time)",
              "hardware": os.path.relpath(args.hardware, ROOT) if args.hardware and os.path.isfile(args.hardware)
              else args.hardware or "cpu", "runs": len(loads), "repeats": args.repeats,
              "load_average": [round(x, 2) for x in loads], "seconds": round(time.perf_counter() - start),
              "kernels_only": args.kernels_only, "models": results, "summary": summarise(results)}
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
