"""`native_bench.py --corpus`: each program against the runtime its users run, through the commands users run.

The corpus: the ONNX set (graphs/*.onnx, tests/data/exports/*.onnx) on onnxruntime, the torch corpus
(tests/data/torch_corpus/*.pt2) on torch eager, and the Keras SavedModels and frozen graphs of the TF corpus
(tests/data/tf_keras) on TensorFlow, run under the Python that has TensorFlow (--tf-python, /work/venv-tf).
Per model: validate `--reruns` times (in one process, so TF and JAX load once, each run a fresh compile
cache: the whole-model speedup, with the interleaved timing's runs and spread), `xcviz stats --json` with the
same options (the inputs given, else `--dim` at the sizes validate bound its random inputs at), and
the estimate of the runtime's own profile where one ships (`stats --hardware cpu_tf` for TF programs),
with the load average before each. Reports: stats' estimate = validate's (issue 36: one estimate per
program), the measured speedup's median and spread over the reruns, and the targets: estimate within 1.5x
of the measurement on >= 90 % of models, and on the right side of 1 wherever the measurement is outside
[0.8, 1.25]."""
from __future__ import annotations

import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RUNTIME_PROFILE = {"tf-frozen": "cpu_tf", "tf-savedmodel": "cpu_tf", "torch": "cpu_torch"}


def corpus(tf_python: str | None) -> list[dict]:
    """{model, format, inputs (an .npz or None), python} for every program of the corpus."""
    onnx, torch, tfs = [], [], []
    for p in sorted(glob.glob(os.path.join(ROOT, "graphs", "*.onnx"))) + \
            sorted(glob.glob(os.path.join(ROOT, "tests", "data", "exports", "*.onnx"))):
        given = p.replace(".onnx", ".inputs.npz")
        onnx.append({"model": p, "format": "onnx", "inputs": given if os.path.exists(given) else None})
    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "torch_corpus", "*.pt2"))):
        torch.append({"model": p, "format": "torch", "inputs": p.replace(".pt2", ".inputs.npz")})
    if tf_python:
        tf = os.path.join(ROOT, "tests", "data", "tf_keras")
        for io in sorted(glob.glob(os.path.join(tf, "*_io.npz"))):
            name = os.path.basename(io)[:-len("_io.npz")]
            frozen = next(iter(glob.glob(os.path.join(tf, f"{name}_frozen.pb*"))), None)
            saved = os.path.join(tf, f"{name}_savedmodel")
            for path, fmt in ((saved, "tf-savedmodel"), (frozen, "tf-frozen")):
                if path and os.path.exists(path):
                    tfs.append({"model": path, "format": fmt, "inputs": io, "python": tf_python})
    out = tfs + torch + onnx   # (the new runtimes first: a run cut short still has them)
    return out


def _inputs(entry: dict, tmp: str) -> str | None:
    """The model's inputs as an .npz keyed by input name (the TF corpus stores `in_NAME` beside `out_NAME`)."""
    if not entry["inputs"]:
        return None
    if not entry["format"].startswith("tf"):
        return entry["inputs"]
    import numpy as np

    d = np.load(entry["inputs"])
    path = os.path.join(tmp, os.path.basename(entry["model"]) + ".inputs.npz")
    np.savez(path, **{k[3:]: d[k] for k in d.files if k.startswith("in_")})
    return path


CLOCK: dict = {}   # {"XCVIZ_CLOCK": "cpu"} under --cpu-time: validate times with the process's CPU time


def xcviz_json(python: str, args: list[str], timeout: int = 600) -> tuple[dict | None, str | None]:
    env = {**os.environ, "PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "3", **CLOCK}
    try:
        p = subprocess.run([python, "-m", "xcviz", *args, "--json"], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    try:
        return json.loads(p.stdout), None
    except json.JSONDecodeError:
        return None, (p.stderr.strip().splitlines() or ["no output"])[-1][:200]


def bench_one(entry: dict, reruns: int, threads: int) -> dict:
    py = entry.get("python") or sys.executable
    rel = os.path.relpath(entry["model"], ROOT)
    row = {"model": rel, "format": entry["format"]}
    with tempfile.TemporaryDirectory() as tmp:
        given = _inputs(entry, tmp)
        runs, why = worker_runs(py, entry["model"], given, reruns, threads)
        row["validate_error"] = why
        # stats with the same options as validate: the inputs given, else the sizes validate bound its random
        # inputs at (a symbolic batch N=1): `--dim`, as stats' own hint says
        bound = next((r.get("dims") for r in runs if r.get("dims")), None) or {}
        extra = ["--inputs", given] if given else [a for k, v in sorted(bound.items()) for a in ("--dim", f"{k}={v}")]
        stats, why = xcviz_json(py, ["stats", entry["model"], *extra])
        s = (stats or {}).get("stats") or {}
        row.update(est_stats=s.get("speedup_estimate"), stats_hardware=s.get("hardware"), stats_native=s.get("native"),
                   stats_error=why)
        prof = RUNTIME_PROFILE.get(entry["format"])
        if prof:
            own, _ = xcviz_json(py, ["stats", entry["model"], *extra, "--hardware", prof])
            row[f"est_{prof}"] = ((own or {}).get("stats") or {}).get("speedup_estimate")
    sp = [r["speedup"] for r in runs if r["speedup"]]
    row.update(runs=runs, speedup=statistics.median(sp) if sp else None, speedup_min=min(sp) if sp else None,
               speedup_max=max(sp) if sp else None, est_validate=next((r["est"] for r in runs if r["est"]), None),
               native_runtime=next((r["native_runtime"] for r in runs if r["native_runtime"]), None),
               est_native=next((r["est_native"] for r in runs if r["est_native"]), None))
    return row


def worker_runs(python: str, model: str, inputs: str | None, reruns: int, threads: int) -> tuple[list, str | None]:
    """`reruns` validations of the model in one process (`--worker`: JAX and TF imported once), each with a
    fresh compile cache: [{load_1m, speedup, est, ...}], or why none ran."""
    env = {**os.environ, "PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "3", **CLOCK}
    try:
        p = subprocess.run([python, os.path.abspath(__file__), "--worker", model, inputs or "-", str(reruns), str(threads)],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    except subprocess.TimeoutExpired:
        return [], "timed out"
    try:
        return json.loads(p.stdout.strip().splitlines()[-1]), None
    except (json.JSONDecodeError, IndexError):
        return [], (p.stderr.strip().splitlines() or ["no output"])[-1][:200]


def worker(model: str, inputs: str, reruns: int, threads: int) -> None:
    """validate_graph `reruns` times, as `xcviz validate --threads N --inputs F` runs it; prints the runs as JSON."""
    from xcviz.runtime.native import apply_threads

    apply_threads(threads)   # before JAX loads
    import numpy as np

    from xcviz.pipeline import LoadOptions, load_graph
    from xcviz.runtime.validate import validate_graph

    given = dict(np.load(inputs)) if inputs != "-" else None
    runs = []
    for _ in range(reruns):
        load = os.getloadavg()[0]
        try:
            # loaded as `validate --inputs F` loads it: the arrays bind the graph's symbolic dimensions
            graph = load_graph(model, LoadOptions(inputs=None if inputs == "-" else inputs))
            r = validate_graph(graph, inputs=given, threads=threads)
            m = r.model.to_json() if r.model is not None else {}
            dims = {k: v for k, v in r.dims.items() if isinstance(v, int)}
            why = None
        except Exception as e:  # noqa: BLE001 - a failing run is a row
            m, dims, why = {}, {}, f"{e.__class__.__name__}: {e}".splitlines()[0][:200]
        t = m.get("timing") or {}
        runs.append({"load_1m": round(load, 2), "dims": dims, "speedup": m.get("speedup"), "est": m.get("est_speedup"),
                     "native_runtime": m.get("native_runtime"), "est_hardware": m.get("est_hardware"),
                     "est_native": m.get("est_native"), "native_ms": m.get("native_ms"),
                     "hybrid_ms": m.get("hybrid_ms"), "rounds": t.get("rounds"), "stable": t.get("stable"),
                     "hybrid_spread": (t.get("hybrid") or {}).get("spread"),
                     "native_spread": (t.get("native") or {}).get("spread"),
                     "error": why or (None if m.get("speedup") else m.get("note"))})
    print(json.dumps(runs))


def verdict(r: dict, est_key: str = "est_validate") -> dict:
    m, e = r.get("speedup"), r.get(est_key)
    within = bool(m and e and max(m / e, e / m) <= 1.5)
    outside = m is not None and not (0.8 <= m <= 1.25)
    side = (not outside) or (e is not None and (m > 1) == (e > 1))
    a, b = r.get("est_stats"), r.get("est_validate")
    same = a is not None and b is not None and abs(a - b) <= 5e-4 * max(abs(a), abs(b))  # (stats --json rounds to 4 digits)
    rerun = bool(r.get("speedup_min") and r["speedup_max"] / r["speedup_min"] <= 1.25)
    return {"within_1_5": within, "needs_side": outside, "right_side": side, "stats_eq_validate": same,
            "rerun_within_1_25": rerun, "measured": m is not None and e is not None}


def table(rows: list[dict], meta: dict) -> str:
    def f(v, spec=".2f"):
        return "-" if v is None else format(v, spec)

    lines = ["| model | format | native runtime | est. stats (profile, vs) | est. validate (vs) | est. runtime profile "
             "| measured (min-max over reruns) | loads | est/measured | within 1.5× | side |", "|" + " --- |" * 11]
    for r in rows:
        v = verdict(r)
        own = next((r[k] for k in r if k.startswith("est_cpu_")), None)
        ratio = r["est_validate"] / r["speedup"] if r.get("est_validate") and r.get("speedup") else None
        lines.append(
            f"| {r['model']} | {r['format']} | {r.get('native_runtime') or '-'} | {f(r.get('est_stats'))}× "
            f"({r.get('stats_hardware') or '-'}, {r.get('stats_native') or '-'}) | {f(r.get('est_validate'))}× "
            f"({r.get('est_native') or '-'}){'' if v['stats_eq_validate'] else ' ≠'} | {f(own)}{'×' if own else ''} "
            f"| {f(r.get('speedup'))}× ({f(r.get('speedup_min'))}-{f(r.get('speedup_max'))}) "
            f"| {', '.join(f(x['load_1m'], '.1f') for x in r['runs'])} | {f(ratio)} "
            f"| {'yes' if v['within_1_5'] else 'no'} | {'ok' if v['right_side'] else 'WRONG'}"
            f"{'' if v['needs_side'] else ' (n/a)'} |")
    lines += ["", summary(rows, meta)]
    return "\n".join(lines) + "\n"


def summary(rows: list[dict], meta: dict) -> str:
    vs = [verdict(r) for r in rows]
    timed = [v for v in vs if v["measured"]]
    own = [verdict(r, next(k for k in r if k.startswith("est_cpu_"))) for r in rows
           if any(k.startswith("est_cpu_") for k in r) and r.get("speedup")]
    n = max(len(timed), 1)
    return "\n".join([
        f"{meta['reruns']} validate runs per model (one process, fresh compile caches), threads {meta['threads']}, {meta['clock']}; "
        f"load average {meta['load_before']} before, {meta['load_after']} after on {meta['cores']} CPUs "
        f"(shared: read the spreads with it); {len(rows)} models, {len(timed)} measured with an estimate.",
        f"- stats' estimate = validate's: {sum(v['stats_eq_validate'] for v in vs)}/{len(vs)}",
        f"- est. (validate's) within 1.5× of measured: {sum(v['within_1_5'] for v in timed)}/{len(timed)} "
        f"({100 * sum(v['within_1_5'] for v in timed) / n:.0f} %; target ≥ 90 %)",
        f"- right side of 1 where measured is outside [0.8, 1.25]: "
        f"{sum(v['right_side'] and v['needs_side'] for v in timed)}/{sum(v['needs_side'] for v in timed)}",
        f"- reruns within 1.25× of each other (max/min of the measured speedup): "
        f"{sum(v['rerun_within_1_25'] for v in timed)}/{len(timed)}",
        f"- with the runtime's own profile (cpu_tf, cpu_torch: `stats --hardware`): within 1.5× on "
        f"{sum(v['within_1_5'] for v in own)}/{len(own)}, right side {sum(v['right_side'] and v['needs_side'] for v in own)}"
        f"/{sum(v['needs_side'] for v in own)}"])


def reestimate(args) -> None:
    """No timing: the runtime-profile estimates again (`stats --hardware cpu_tf|cpu_torch`, a profile recalibrated
    after the timings), into OUT.json's `corpus` and the page's last section."""
    path = args.out + ".json"
    data = json.load(open(path, encoding="utf-8"))
    meta = data["corpus"]
    tf_python = meta.get("tf_python")
    with tempfile.TemporaryDirectory() as tmp:
        for row, entry in ((r, e) for r in meta["results"] for e in corpus(tf_python) if os.path.relpath(e["model"], ROOT) == r["model"]):
            prof = RUNTIME_PROFILE.get(entry["format"])
            if not prof:
                continue
            given = _inputs(entry, tmp)
            own, _ = xcviz_json(entry.get("python") or sys.executable,
                                ["stats", entry["model"], *(["--inputs", given] if given else []), "--hardware", prof])
            row[f"est_{prof}"] = ((own or {}).get("stats") or {}).get("speedup_estimate")
    meta["reestimated"] = "the runtime-profile column (est_cpu_tf, est_cpu_torch) recomputed after the timings"
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    _page(args.out, meta["results"], meta)


def _page(out: str, rows: list, meta: dict) -> None:
    md = out + ".md"
    old = open(md, encoding="utf-8").read() if os.path.exists(md) else ""
    head = old.split(CORPUS_HEADING)[0].rstrip("\n")
    with open(md, "w", encoding="utf-8") as f:
        f.write((head + "\n\n" if head else "") + CORPUS_HEADING + "\n\n" + table(rows, meta))


def run(args) -> None:
    if args.reestimate:
        return reestimate(args)
    tf_python = args.tf_python if args.tf_python and os.path.exists(args.tf_python) else None
    if args.cpu_time:
        CLOCK["XCVIZ_CLOCK"] = "cpu"
    entries = corpus(tf_python)
    if args.models:
        entries = [e for e in entries if any(m in e["model"] for m in args.models)]
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    meta = {"reruns": args.reruns, "threads": args.threads, "clock": "process CPU time" if args.cpu_time else "wall time", "load_before": round(os.getloadavg()[0], 2),
            "cores": cores, "tf_python": tf_python}
    rows = []
    path = args.out + ".json"
    data = json.load(open(path, encoding="utf-8")) if os.path.exists(path) else {}
    for e in entries:
        rows.append(bench_one(e, args.reruns, args.threads))
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "runs"}), flush=True)
        meta["load_after"] = round(os.getloadavg()[0], 2)
        data["corpus"] = {**meta, "results": rows}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
    _page(args.out, rows, meta)


if __name__ == "__main__" and len(sys.argv) == 6 and sys.argv[1] == "--worker":
    sys.path.insert(0, ROOT)
    worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))

CORPUS_HEADING = "## Issue 36: each program on its own runtime (`native_bench.py --corpus`)"
