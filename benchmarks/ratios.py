"""Issue 11's targets, measured as ratios to Python's own `json.load` of the same file in the same run.

The graph is benchmarks/generate.py's ML-like graph with what exported models carry: every node declares
`shape` and `dtype`, and about 10 % carry `attrs` (a small pool of values, as real layers repeat them).

    python benchmarks/ratios.py --nodes 1000000 --repeats 3        # writes benchmarks/ratios_results.{json,md}

Rows (median of the repeats, each in a fresh process so nothing is warm but the OS file cache):
- `json.load` with the garbage collector off: the yardstick;
- `xcviz stats GRAPH --json` end to end (process start to exit) and its peak RSS;
- load alone, `mark` clustering alone, cost alone (inside one process, after a warm-up load);
each also in process CPU seconds (`*_cpu`; `stats` by its children's rusage), with the 1-minute load
average before and after each repeat: on a shared machine the wall clock measures the other processes too.
Also (each its own table):
- growth from `--growth-from` nodes (10^4) to `--nodes`, for load, `mark`, cost and `stats` end to end
  (the small graph's rows are the minimum of at least 5 repeats: they are short and the noise is not);
- the untyped graph (generate.py's, no `shape`/`dtype`) beside the typed one: the same fast path;
- where the memory of `stats` is: RSS as each step of `xcviz.analyse` starts (what the command runs);
- with `--cold`, the first use after a fresh install: `stats --json` with an empty NUMBA_CACHE_DIR
  (stderr on a terminal, so the compile's progress line shows) beside
  XCVIZ_INFER=reference, the pure-Python paths the compiled ones must never be slower than.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from generate import H, generate, to_json  # noqa: E402
from ratios_more import cold_rows, growth_rows, markdown_more, memory_rows, untyped_rows  # noqa: E402

ATTR_POOL = [{"approximate": "tanh"}, {"approximate": "none"}, {"epsilon": 1e-5}, {"epsilon": 1e-6},
             {"alpha": 0.1}, {"keepdims": 1}, {"axis": -1}]


def typed(n: int, seed: int = 0) -> dict:
    """generate(n) with a declared type on every node and attrs on ~10 % of them (seeded)."""
    g = generate(n, seed)
    rng = random.Random(seed + 1)
    for nd in g["nodes"]:
        op = nd["op"]
        if op == "shape":
            nd["shape"], nd["dtype"] = [2], "int64"
        elif op == "const":
            nd["shape"], nd["dtype"] = [], "float32"
        else:
            nd["shape"], nd["dtype"] = ["B", H], "float32"
        if "attrs" not in nd and rng.random() < 0.10:
            pick = ATTR_POOL[rng.randrange(len(ATTR_POOL))]
            if op == "gelu" or "approximate" not in pick:
                nd["attrs"] = dict(pick)
    return g


CHILD = r"""
import gc, json, sys, time
path, what = sys.argv[1], sys.argv[2]
def clock(): return time.perf_counter(), time.process_time()
def since(t): return [b - a for a, b in zip(t, clock())]  # [wall, CPU] seconds
if what == "json":
    gc.disable(); t = clock()
    with open(path, "rb") as f: json.load(f)
    print(json.dumps({"json_load": since(t)}))
else:
    import xcviz
    xcviz.load(path)  # warm-up: imports, lazily built tables
    t = clock(); g = xcviz.load(path); t_load = since(t)
    t = clock(); c = xcviz.cluster(g); t_mark = since(t)
    t = clock(); xcviz.stats(g, c); t_cost = since(t)
    print(json.dumps({"load": t_load, "mark": t_mark, "cost": t_cost}))
"""


def child_out(script: str, *args: str) -> str:
    return subprocess.run([sys.executable, "-c", script, *args], check=True, capture_output=True, text=True).stdout


def child(path: str, what: str) -> dict[str, list[float]]:
    """Each step's [wall, process CPU] seconds (on a shared, loaded machine the wall clock measures the
    other processes as much as this one)."""
    return json.loads(child_out(CHILD, path, what))


PEAK = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
subprocess.run([sys.executable, "-m", "xcviz", "stats", sys.argv[1], "--json"], check=True, stdout=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.perf_counter() - t, r.ru_maxrss, r.ru_utime + r.ru_stime)
"""


def end_to_end(path: str) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds of `xcviz stats PATH --json` as a user runs it (a parent
    of its own, so that the peak is this command's alone)."""
    wall, peak_kb, cpu = child_out(PEAK, path).split()
    return float(wall), int(peak_kb) / 1024, float(cpu)


def graph_file(n: int, workdir: str, kind: str = "typed") -> str:
    """The generated graph of n nodes (typed: ratios.typed; plain: generate.py's), written once."""
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, f"{kind}_{n}.json")
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(to_json(typed(n) if kind == "typed" else generate(n)))
    return path


def run(n: int, repeats: int, workdir: str) -> dict:
    path = graph_file(n, workdir)
    names = ("json_load", "stats_e2e", "stats_peak_mb", "load", "mark", "cost")
    rows: dict[str, list[float]] = {k: [] for k in names + tuple(k + "_cpu" for k in names if k != "stats_peak_mb")}
    load_avg = [os.getloadavg()[0]]
    for _ in range(repeats):
        wall, peak, cpu = end_to_end(path)
        rows["stats_e2e"].append(wall)
        rows["stats_e2e_cpu"].append(cpu)
        rows["stats_peak_mb"].append(peak)
        for k, (wall, cpu) in (child(path, "json") | child(path, "xcviz")).items():
            rows[k].append(wall)
            rows[k + "_cpu"].append(cpu)
        load_avg.append(os.getloadavg()[0])
    med = {k: statistics.median(v) for k, v in rows.items()}
    return {"nodes": n, "repeats": repeats, "file_mb": round(os.path.getsize(path) / 2**20, 1), "load_avg": load_avg,
            "ratio_stats_e2e_cpu": med["stats_e2e_cpu"] / med["json_load_cpu"],
            "ratio_load_cpu": med["load_cpu"] / med["json_load_cpu"],
            "median": med, "min": {k: min(v) for k, v in rows.items()}, "max": {k: max(v) for k, v in rows.items()},
            "ratio_stats_e2e": med["stats_e2e"] / med["json_load"], "ratio_load": med["load"] / med["json_load"]}


def markdown(res: dict) -> str:
    m, lo, hi = res["median"], res["min"], res["max"]
    out = [f"Typed ML-like graph, {res['nodes']:,} nodes ({res['file_mb']} MB JSON), median of {res['repeats']} "
           "(min–max):", "", "| measure | seconds | ratio to json.load | target |", "| --- | ---: | ---: | --- |"]
    j = m["json_load"]
    out.append(f"| `json.load` (GC off) | {j:.2f} ({lo['json_load']:.2f}–{hi['json_load']:.2f}) | 1.0× | yardstick |")
    out.append(f"| `xcviz stats --json` end to end | {m['stats_e2e']:.2f} ({lo['stats_e2e']:.2f}–{hi['stats_e2e']:.2f}) "
               f"| {m['stats_e2e'] / j:.1f}× | ≤ 2.5× |")
    out.append(f"| load alone | {m['load']:.2f} ({lo['load']:.2f}–{hi['load']:.2f}) | {m['load'] / j:.1f}× | ≤ 1.5× |")
    out.append(f"| `mark` clustering | {m['mark']:.2f} ({lo['mark']:.2f}–{hi['mark']:.2f}) | | ≤ 1.2 s |")
    out.append(f"| cost | {m['cost']:.2f} ({lo['cost']:.2f}–{hi['cost']:.2f}) | | ≤ 0.3 s |")
    out.append(f"| peak RSS of `stats` | {m['stats_peak_mb']:.0f} MB | | ≤ 1 GB |")
    c = m["json_load_cpu"]
    out += ["", "The same in process CPU seconds (a shared machine's wall clock also measures the other processes; "
            f"1-minute load average {', '.join(f'{x:.1f}' for x in res['load_avg'])} during the run):", "",
            "| measure | CPU seconds | ratio to json.load |", "| --- | ---: | ---: |",
            f"| `json.load` (GC off) | {c:.2f} | 1.0× |",
            f"| `xcviz stats --json` end to end | {m['stats_e2e_cpu']:.2f} | {m['stats_e2e_cpu'] / c:.1f}× |",
            f"| load alone | {m['load_cpu']:.2f} | {m['load_cpu'] / c:.1f}× |",
            f"| `mark` clustering | {m['mark_cpu']:.2f} | |", f"| cost | {m['cost_cpu']:.2f} | |"]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=lambda s: int(float(s)), default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workdir", default="/tmp/xcviz-bench")
    ap.add_argument("--output", default=os.path.join(HERE, "ratios_results"), help="results file stem")
    ap.add_argument("--growth-from", type=lambda s: int(float(s)), default=10_000, metavar="N",
                    help="the small graph of the growth rows (0: none)")
    ap.add_argument("--no-untyped", action="store_true", help="skip the untyped graph's rows")
    ap.add_argument("--cold", action="store_true", help="also the first use with an empty numba cache (minutes)")
    a = ap.parse_args()
    res = run(a.nodes, a.repeats, a.workdir)
    res["memory"] = memory_rows(graph_file(a.nodes, a.workdir))
    if a.growth_from:
        res["growth"] = growth_rows(res, graph_file(a.growth_from, a.workdir), a.growth_from, max(a.repeats, 5))
    if not a.no_untyped:
        res["untyped"] = untyped_rows(res, graph_file(a.nodes, a.workdir, "plain"), a.repeats)
    if a.cold:
        res["cold"] = cold_rows(graph_file(a.nodes, a.workdir))
    md = markdown(res) + markdown_more(res)
    with open(a.output + ".json", "w", encoding="utf-8") as f:
        json.dump(res, f, indent=2, sort_keys=True)
    with open(a.output + ".md", "w", encoding="utf-8") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
