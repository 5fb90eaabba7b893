"""Size and build time of `xcviz report` pages: a benchmark, not a test.

    python benchmarks/report.py      # writes benchmarks/report_results.json and report_results.md

Cases: the largest example graph (target: under 5 MB, built in under 5 s), and generated layer chains
(benchmarks/render_bench.py's generator) of 300, 1,000 and 3,000 nodes expanded, and 3,000 and 10,000 collapsed.
Each case times analyse (load + cluster + cost) and the report (layout + page) separately and counts the
replay's frames: frames are stored as attempt indices, so a few hundred merges cost kilobytes, not megabytes."""
from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

ENGINE = "graphviz-pure"   # what samples/ and a machine without Graphviz use


def largest_example() -> str:
    from xcviz.pipeline import load_file as load

    folder = os.path.join(ROOT, "graphs")
    sizes = {}
    for f in sorted(os.listdir(folder)):
        try:
            sizes[f] = len(load(os.path.join(folder, f)).nodes)
        except Exception:   # an example that needs options to load is not the largest one
            continue
    return os.path.join(folder, max(sizes, key=lambda f: (sizes[f], f)))


def case(label: str, path: str, collapse: bool | None) -> dict:
    from xcviz.pipeline import analyse
    from xcviz.render.report_html import report_data, page

    t0 = time.perf_counter()
    a = analyse(path)
    t1 = time.perf_counter()
    data = report_data(a.graph, a.clustering, a.stats, collapse=collapse, engine=ENGINE)
    text = page(data)
    t2 = time.perf_counter()
    frames = data["frames"] or []
    return {"case": label, "nodes": len(a.graph.nodes), "clusters": len(a.clustering.clusters),
            "collapsed": data["collapsed"], "frames": len(frames), "attempts": len(a.clustering.attempts),
            "analyse_s": round(t1 - t0, 3), "report_s": round(t2 - t1, 3), "total_s": round(t2 - t0, 3),
            "bytes": len(text.encode("utf-8"))}


def main() -> None:
    from render_bench import generate

    rows = []
    load = os.getloadavg()[0]   # the build shares the CPUs: read times against the load they ran under
    big = largest_example()
    rows.append(case(f"largest example ({os.path.basename(big)})", big, None))
    with tempfile.TemporaryDirectory() as tmp:
        for n, collapse in ((300, False), (1000, False), (3000, False), (3000, True), (10000, True)):
            path = os.path.join(tmp, f"bench_{n}.json")
            with open(path, "w") as f:
                json.dump(generate(n), f)
            rows.append(case(f"generated {n:,} {'collapsed' if collapse else 'expanded'}", path, collapse))
            print(rows[-1], flush=True)
    meta = {"python": platform.python_version(), "machine": platform.machine(), "engine": ENGINE,
            "cpus": os.cpu_count(), "load_at_start": round(load, 1)}
    with open(os.path.join(HERE, "report_results.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
        f.write("\n")
    lines = ["# `xcviz report`: page size and build time", "",
             f"python {meta['python']} on {meta['machine']} ({meta['cpus']} CPUs, load average {meta['load_at_start']} at "
             f"the start), layout by {ENGINE}; `python benchmarks/report.py`. Targets: the largest example's page "
             "under 5 MB, built in under 5 s. The layout is almost all of `report s`; it is the same Graphviz "
             "run `xcviz render` makes (see render_results.md), done once: the replay's frames reuse it.", "",
             "| case | nodes | clusters | frames | analyse s | report s | total s | page |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['nodes']:,} | {r['clusters']:,} | {r['frames']:,} | {r['analyse_s']} | "
                     f"{r['report_s']} | {r['total_s']} | {r['bytes'] / 1024:,.0f} KiB |")
    with open(os.path.join(HERE, "report_results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
