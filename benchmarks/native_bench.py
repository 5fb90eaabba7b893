"""xcviz's native whole-model time against onnxruntime timed directly, and the estimate against the measured speedup.

For every model (graphs/*.onnx, tests/data/exports/*.onnx with the exporter's inputs beside them, the onnx
wheel's light zoo models, whose stripped weights get xcviz's seeded values in both runs): cluster with the defaults, then `--rounds` rounds of
  - xcviz native: the whole model on onnxruntime through xcviz (runtime.wholemodel, graph optimizations off),
  - direct: the same file in onnxruntime.InferenceSession, optimizations off, same threads, its own defaults
    otherwise (spinning on), as a user would time it,
  - hybrid: XLA clusters + fallback segments on onnxruntime,
each a median of `--repeats` runs after a warm-up; the est. speedup is the cost model's with `--hardware`.
Reports per model the median over rounds and the spread (min-max), the 1-minute load average before each
model, and the targets of issue 28: native within 1.3x of direct; est within 1.5x of measured on >= 80 %,
and on the right side of 1 wherever measured is outside [0.8, 1.25].

    python3 benchmarks/native_bench.py --threads 1 --hardware cpu --out benchmarks/native_results

`--corpus` (benchmarks/native_corpus.py) instead runs the ONNX set, the torch corpus and the TF corpus each on
its own runtime through `xcviz stats` and `xcviz validate`, three fresh reruns each, into the same files
(the JSON's `corpus` key, the page's last section):

    python3 benchmarks/native_bench.py --corpus --tf-python /work/venv-tf/bin/python --out benchmarks/native_results
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)


def models() -> list[str]:
    import onnx

    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    return (sorted(glob.glob(os.path.join(ROOT, "graphs", "*.onnx")))
            + sorted(glob.glob(os.path.join(ROOT, "tests", "data", "exports", "*.onnx")))
            + sorted(glob.glob(os.path.join(light, "light_*.onnx"))))


def direct_session(path: str, feeds: dict, threads: int, optimized: bool):
    """onnxruntime on the file itself (stripped weights filled with the values xcviz feeds), as a user runs it."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    model = onnx.load(path)
    for i, t in enumerate(model.graph.initializer):
        if t.name in feeds and not t.raw_data and not t.float_data and not t.int64_data and not t.int32_data:
            model.graph.initializer[i].CopyFrom(numpy_helper.from_array(np.asarray(feeds[t.name]), t.name))
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimized
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    inits = {t.name for t in model.graph.initializer}
    names = [i.name for i in sess.get_inputs() if i.name not in inits]
    feed = {n: feeds[n] for n in names}
    return lambda: sess.run(None, feed)


def bench(path: str, threads: int, hardware: str, rounds: int, repeats: int) -> dict:
    import xcviz
    from xcviz.cost import compute_stats, load_hardware
    from xcviz.runtime.inputs import bind_inputs
    from xcviz.runtime.jit import CompileCache
    from xcviz.runtime.measure import median_ms
    from xcviz.runtime.native import OnnxRuntime
    from xcviz.runtime.partial import execute_tolerant
    from xcviz.runtime.wholemodel import model_feeds, native_program, time_model

    import numpy as np

    load = os.getloadavg()[0]
    g = xcviz.load(path)
    c = xcviz.cluster(g)
    # the exporter's own inputs where the export ships them (real token ids, the sequence length the export
    # was traced at), else seeded values; either way the symbolic dims get bound: the cost model needs the shapes
    given = path.replace(".onnx", ".inputs.npz")
    feeds = bind_inputs(g, dict(np.load(given)) if os.path.exists(given) else None, 0)
    stats = compute_stats(g, c, load_hardware(hardware, "cpu"))
    est = stats.speedup_estimate
    run = execute_tolerant(g, feeds)
    rt, cache = OnnxRuntime(threads), CompileCache()
    direct, direct_opt = direct_session(path, feeds, threads, False), direct_session(path, feeds, threads, True)
    def timed(fn):
        try:
            return median_ms(fn, repeats)
        except Exception:  # noqa: BLE001 - onnxruntime refusing the file on these inputs: no direct time
            return None

    try:   # xcviz's native program (the one validate times) and the file in onnxruntime, timed turn about
        native_fn0, _, _ = native_program(g, rt, run.env)
        fed = model_feeds(g, run.env)
        native_fn = lambda: native_fn0(fed)   # noqa: E731
    except Exception:  # noqa: BLE001 - no native program: no paired time
        native_fn = None
    rows = []
    for _ in range(rounds):
        # direct first: XLA's threads run on briefly after the hybrid's last call, and with --cpu-time the process
        # would charge that to whatever is timed next; a pause, then direct, then xcviz's programs (native first)
        time.sleep(0.1)
        d, d_opt = timed(direct), timed(direct_opt)
        time.sleep(0.1)
        t, _ = time_model(g, c, rt, run.env, cache, repeats, est)
        pair = paired(native_fn, direct) if d is not None and native_fn is not None else None
        rows.append({"paired_ratio": pair, "native_ms": t.native_ms, "optimized_ms": t.native_optimized_ms, "hybrid_ms": t.hybrid_ms,
                     "direct_ms": d, "direct_optimized_ms": d_opt,
                     "runtime": t.runtime, "segments": t.segments_on, "why": t.why})
    med = {k: statistics.median(r[k] for r in rows if r[k] is not None) if any(r[k] is not None for r in rows) else None
           for k in ("native_ms", "optimized_ms", "hybrid_ms", "direct_ms", "direct_optimized_ms")}
    speedups = [r["native_ms"] / r["hybrid_ms"] for r in rows if r["native_ms"] and r["hybrid_ms"]]
    return {"model": os.path.relpath(path, ROOT) if path.startswith(ROOT) else "onnx wheel: " + os.path.basename(path),
            "nodes": len(g.nodes), "clusters": len(c.clusters), "fallback_nodes": sum(k < 0 for k in c.cluster_of),
            "load_1min": round(load, 2), **{k: v for k, v in med.items()},
            "native_over_direct": (statistics.median(r["paired_ratio"] for r in rows if r["paired_ratio"])
                                   if any(r["paired_ratio"] for r in rows) else None),
            "native_over_direct_unpaired": med["native_ms"] / med["direct_ms"] if med["native_ms"] and med["direct_ms"] else None,
            "speedup": statistics.median(speedups) if speedups else None,
            "speedup_min": min(speedups) if speedups else None, "speedup_max": max(speedups) if speedups else None,
            "native_spread": _spread(rows, "native_ms"), "hybrid_spread": _spread(rows, "hybrid_ms"),
            "est_speedup": est, "est_native_ms": stats.time_before * 1e3 if stats.time_before else None,
            "est_hybrid_ms": stats.time_after * 1e3 if stats.time_after else None, "runtime": rows[0]["runtime"], "segments": rows[0]["segments"], "why": rows[0]["why"]}


def paired(a, b, n: int = 41) -> float | None:
    """Median of a's time over b's, each pair run back to back in alternating order: transient load on a
    shared machine hits both sides of a pair alike, where two medians taken a second apart may see it once."""
    from xcviz.runtime.measure import clock

    try:
        a(), b()
    except Exception:  # noqa: BLE001 - onnxruntime refusing these inputs: no ratio
        return None
    ratios = []
    for k in range(n):
        first, second = (a, b) if k % 2 == 0 else (b, a)
        t0 = clock(); first(); t1 = clock(); second(); t2 = clock()   # noqa: E702
        ta, tb = (t1 - t0, t2 - t1) if k % 2 == 0 else (t2 - t1, t1 - t0)
        ratios.append(ta / tb)
    return statistics.median(ratios)


def _spread(rows: list[dict], key: str) -> list:
    got = [r[key] for r in rows if r[key] is not None]
    return [min(got), max(got)] if got else [None, None]


def verdicts(r: dict) -> dict:
    m, e = r["speedup"], r["est_speedup"]
    within = m is not None and e is not None and max(m / e, e / m) <= 1.5
    outside = m is not None and not (0.8 <= m <= 1.25)
    side = (not outside) or (e is not None and (m > 1) == (e > 1))
    return {"native_ok": r["native_over_direct"] is not None and 1 / 1.3 <= r["native_over_direct"] <= 1.3,
            "est_within_1_5": within, "needs_side": outside, "right_side": side}


def table(results: list[dict], args) -> str:
    def f(v, spec=".3g"):
        return "-" if v is None else format(v, spec)

    lines = ["| model | nodes | clusters | load | xcviz native ms | direct ms | ratio | ORT optimized ms | hybrid ms "
             "(spread) | speedup (spread) | est. | within 1.5× | side |", "|" + " --- |" * 13]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['model']} | error: {r['error']} |" + " |" * 11)
            continue
        v = verdicts(r)
        lines.append(f"| {r['model']} | {r['nodes']} | {r['clusters']} | {r['load_1min']} | {f(r['native_ms'])} "
                     f"| {f(r['direct_ms'])} | {f(r['native_over_direct'], '.2f')}{'' if v['native_ok'] else ' ✗'} "
                     f"| {f(r['optimized_ms'])} | {f(r['hybrid_ms'])} ({f(r['hybrid_spread'][0])}-{f(r['hybrid_spread'][1])}) "
                     f"| {f(r['speedup'], '.2f')}× ({f(r['speedup_min'], '.2f')}-{f(r['speedup_max'], '.2f')}) "
                     f"| {f(r['est_speedup'], '.2f')}× | {'yes' if v['est_within_1_5'] else 'no'} "
                     f"| {'ok' if v['right_side'] else 'WRONG'}{'' if v['needs_side'] else ' (n/a)'} |")
    ok = [r for r in results if "error" not in r]
    vs = [verdicts(r) for r in ok]
    lines += ["", f"threads {args.threads} (XLA and onnxruntime), {'process CPU time' if args.cpu_time else 'wall time'}, "
              f"hardware profile `{args.hardware}`, {args.rounds} rounds × "
              f"median of {args.repeats or 'adaptive (3-50)'} runs; {len(ok)} models",
              f"- native within 1.3× of onnxruntime direct: {sum(v['native_ok'] for v in vs)}/{len(vs)}",
              f"- est. within 1.5× of measured: {sum(v['est_within_1_5'] for v in vs)}/{len(vs)} "
              f"({100 * sum(v['est_within_1_5'] for v in vs) / max(len(vs), 1):.0f} %)",
              f"- right side of 1 where measured is outside [0.8, 1.25]: "
              f"{sum(v['right_side'] and v['needs_side'] for v in vs)}/{sum(v['needs_side'] for v in vs)}"]
    return "\n".join(lines) + "\n"


def model_path(name: str) -> str:
    import onnx

    if name.startswith("onnx wheel: "):
        return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", name[len("onnx wheel: "):])
    return os.path.join(ROOT, name)


def reestimate(results: list[dict], hardware: str) -> None:
    """The estimates again with another profile (a calibration made after the timings): the cost model
    needs no run, only the shapes."""
    import xcviz
    from xcviz.cost import compute_stats, load_hardware
    from xcviz.runtime.inputs import bind_inputs

    hw = load_hardware(hardware, "cpu")
    for r in results:
        if "error" in r:
            continue
        g = xcviz.load(model_path(r["model"]))
        c = xcviz.cluster(g)
        bind_inputs(g, None, 0)
        s = compute_stats(g, c, hw)
        r["est_speedup"] = s.speedup_estimate
        r["est_native_ms"] = s.time_before * 1e3 if s.time_before else None
        r["est_hybrid_ms"] = s.time_after * 1e3 if s.time_after else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--hardware", default="cpu")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=0, help="runs per median; 0: adaptive (~0.2 s, 3 to 50 runs)")
    ap.add_argument("--models", nargs="*")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time with the process's CPU time, not wall time: on a shared, loaded machine a run then is "
                         "not stretched by waiting for a core (XLA hands each call to a thread of its own, which "
                         "waits a scheduler slice at load ~20 on 2 cores; onnxruntime at 1 thread runs in the caller)")
    ap.add_argument("--out", default=os.path.join(HERE, "native_results"))
    ap.add_argument("--reestimate", action="store_true",
                    help="no timing: read OUT.json, recompute est. with --hardware, rewrite OUT.json and OUT.md")
    ap.add_argument("--corpus", action="store_true", help="each program on its own runtime (native_corpus.py)")
    ap.add_argument("--reruns", type=int, default=3, help="--corpus: fresh validate runs per model")
    ap.add_argument("--tf-python", default="/work/venv-tf/bin/python",
                    help="--corpus: a Python with TensorFlow for the TF corpus (skipped when absent)")
    args = ap.parse_args()
    if args.corpus:
        sys.path.insert(0, HERE)
        import native_corpus

        native_corpus.run(args)
        return
    from xcviz.runtime.native import apply_threads

    if args.reestimate:
        with open(args.out + ".json", encoding="utf-8") as f:
            data = json.load(f)
        reestimate(data["results"], args.hardware)
        data["hardware"] = args.hardware
        for k in ("threads", "rounds", "repeats"):
            setattr(args, k, data[k])
        args.cpu_time = data.get("clock") == "process CPU time"
        with open(args.out + ".json", "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
        with open(args.out + ".md", "w", encoding="utf-8") as f:
            f.write(table(data["results"], args))
        return

    apply_threads(args.threads)   # before JAX loads
    if args.cpu_time:
        from xcviz.runtime import measure

        measure.clock = time.process_time
    results = []
    for path in [os.path.abspath(p) for p in args.models] if args.models else models():
        t0 = time.time()
        try:
            r = bench(path, args.threads, args.hardware, args.rounds, args.repeats or None)
        except Exception as e:  # noqa: BLE001 - one model failing is a row, not the end of the run
            r = {"model": os.path.basename(path), "error": f"{e.__class__.__name__}: {e}".splitlines()[0][:200]}
        r["seconds"] = round(time.time() - t0, 1)
        results.append(r)
        print(json.dumps(r), flush=True)
        with open(args.out + ".json", "w", encoding="utf-8") as f:
            json.dump({"threads": args.threads, "hardware": args.hardware, "rounds": args.rounds,
                       "clock": "process CPU time" if args.cpu_time else "wall time",
                       "repeats": args.repeats, "results": results}, f, indent=1)
    with open(args.out + ".md", "w", encoding="utf-8") as f:
        f.write(table(results, args))


if __name__ == "__main__":
    main()
