"""`xcviz render` wall time on big models, load included: each run is a fresh `python -m xcviz render` process.

    python benchmarks/render_scopes_bench.py --model llama32.pt2 --model mnv3s_savedmodel:png --generated 15000 \
        -o benchmarks/render_results_scopes

A `--generated N` graph is benchmarks/generate.py's N-op graph with its nodes named into layers of ~50 ops
(`model/blocks.K/nI`), so render draws it by scope. Each model is rendered `--repeat` times; the results (min,
median, max wall seconds, user+sys CPU seconds of the child, the picture's size, the 1-minute load average before
each run) go to OUT.json and OUT.md."""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import generate, to_json  # noqa: E402


def scoped(n: int, block: int = 50) -> dict:
    """generate(n) with every node named into a layer of `block` ops: model/blocks.K/<name>."""
    g = generate(n)
    rename = {nd["name"]: f"model/blocks.{k // block}/{nd['name']}" for k, nd in enumerate(g["nodes"])}
    for nd in g["nodes"]:
        nd["name"] = rename[nd["name"]]
        nd["inputs"] = [rename.get(r, r) for r in nd["inputs"]]
    g["outputs"] = [rename.get(r, r) for r in g["outputs"]]
    return g


def _size(path: str) -> str:
    with open(path, "rb") as f:
        head = f.read(4096)
    if head[:8] == b"\x89PNG\r\n\x1a\n":
        return f"{int.from_bytes(head[16:20], 'big')} × {int.from_bytes(head[20:24], 'big')} px"
    import re

    m = re.search(rb'<svg width="([0-9.]+)pt" height="([0-9.]+)pt"', head)
    return f"{float(m.group(1)):.0f} × {float(m.group(2)):.0f} pt" if m else "?"


def run(path: str, fmt: str, repeat: int, extra: list[str]) -> dict:
    walls, cpus, loads = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, f"picture.{fmt}")
        note = ""
        for _ in range(repeat):
            loads.append(os.getloadavg()[0])
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "xcviz", "render", path, "-o", out, *extra],
                                  capture_output=True, text=True, check=False)
            walls.append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if proc.returncode != 0:
                return {"model": os.path.basename(path.rstrip("/")), "format": fmt, "error": proc.stderr.strip()[-300:]}
            note = " ".join(ln for ln in proc.stderr.splitlines() if ln.startswith("note:") or ln.startswith(" "))
        size = _size(out)
    walls.sort()
    return {"model": os.path.basename(path.rstrip("/")), "format": fmt, "args": extra, "runs": repeat,
            "wall_s": {"min": round(walls[0], 2), "median": round(walls[len(walls) // 2], 2), "max": round(walls[-1], 2)},
            "cpu_s_median": round(sorted(cpus)[len(cpus) // 2], 2), "load_1min": [round(x, 1) for x in loads],
            "picture": size, "note": note}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", default=[], help="PATH[:png|svg] (svg by default)")
    ap.add_argument("--generated", action="append", type=int, default=[], help="a generated scoped graph of N ops")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("-o", "--output", required=True, help="OUT: writes OUT.json and OUT.md")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in a.generated:
            path = os.path.join(tmp, f"scoped_{n}.json")
            with open(path, "w") as f:
                f.write(to_json(scoped(n)))
            rows.append(run(path, "svg", a.repeat, []))
        for spec in a.model:
            path, _, fmt = spec.partition(":")
            rows.append(run(path, fmt or "svg", a.repeat, []))
    with open(a.output + ".json", "w") as f:
        json.dump({"python": sys.version.split()[0], "cpus": os.cpu_count(), "results": rows}, f, indent=1)
        f.write("\n")
    lines = ["# `xcviz render` on big models (load included)", "",
             f"`python benchmarks/render_scopes_bench.py` ({os.cpu_count()} CPUs, shared; the 1-minute load average before each run is given)",
             "", "| model | format | wall s (min / median / max) | CPU s | picture | load | what render said |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['format']} | failed: {r['error']} | | | | |")
            continue
        w = r["wall_s"]
        lines.append(f"| {r['model']} | {r['format']} | {w['min']} / {w['median']} / {w['max']} | {r['cpu_s_median']} | "
                     f"{r['picture']} | {', '.join(map(str, r['load_1min']))} | {r['note'][:160]} |")
    with open(a.output + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
