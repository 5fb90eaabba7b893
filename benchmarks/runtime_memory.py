"""Peak memory of one native run: every tensor kept to the end (`keep_all=True`, the runtime before issue 39)
against each value freed after its last use (the default since).

    python benchmarks/runtime_memory.py [--json FILE]

Each (input, variant) runs in a fresh process: a warm-up run (plan, imports), then one measured run, for
tracemalloc's peak over that run (NumPy's allocations are traced) and the process's peak RSS (ru_maxrss, a
high-water mark: imports and the warm-up included). Inputs: a generated deep chain (a skip add every 4 nodes, as
a ResNet's) and two example models with large dims. Results: benchmarks/runtime_memory_results.json."""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS = ("Relu", "Neg", "Sigmoid", "Abs")


def chain_yaml(depth: int, shape: tuple) -> str:
    """x -> n0 -> ... -> n{depth-1}; every 4th node adds the value from 4 nodes back (a skip connection)."""
    lines = ["name: deep_chain", "inputs:", f"  - {{name: x, shape: {list(shape)}, dtype: float32}}", "nodes:"]
    prev, names = "x", ["x"]
    for i in range(depth):
        if i % 4 == 3:
            lines.append(f"  - {{name: n{i}, op: Add, inputs: [{prev}, {names[-4]}]}}")
        else:
            lines.append(f"  - {{name: n{i}, op: {OPS[i % len(OPS)]}, inputs: [{prev}]}}")
        prev = f"n{i}"
        names.append(prev)
    lines.append(f"outputs: [{prev}]")
    return "\n".join(lines) + "\n"


def cases(tmp: str) -> list[tuple[str, str, dict]]:
    chain = os.path.join(tmp, "deep_chain.yaml")
    with open(chain, "w") as f:
        f.write(chain_yaml(200, (1, 8, 256, 256)))   # 2 MiB per tensor
    return [("deep chain, 200 nodes, 2 MiB tensors", chain, {}),
            ("graphs/resnet_mini.onnx, N=256", os.path.join(ROOT, "graphs", "resnet_mini.onnx"), {"N": 256}),
            ("graphs/transformer_encoder.onnx, B=16, S=512", os.path.join(ROOT, "graphs", "transformer_encoder.onnx"),
             {"B": 16, "S": 512})]


def measure(path: str, dims: dict, keep_all: bool) -> dict:
    """(in the child) one warm-up run, then the measured one."""
    import time
    import tracemalloc

    import xcviz
    from xcviz.runtime.execute import execute
    from xcviz.runtime.inputs import bind_inputs

    g = xcviz.load(path, dims=dims or None)
    feeds = bind_inputs(g, None, 0, None)
    execute(g, feeds, "native", keep_all=keep_all)
    rss_warm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    t = time.perf_counter()
    execute(g, feeds, "native", keep_all=keep_all)
    seconds = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    feed_bytes = sum(getattr(v, "nbytes", 0) for v in feeds.values())
    return {"nodes": len(g.nodes), "traced_peak_mb": peak / 2**20, "peak_rss_mb": rss / 1024,
            "rss_after_warmup_mb": rss_warm / 1024, "feeds_mb": feed_bytes / 2**20, "seconds": seconds}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--child", nargs=3, metavar=("PATH", "DIMS", "KEEP_ALL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        path, dims, keep = args.child
        print(json.dumps(measure(path, json.loads(dims), keep == "1")))
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, path, dims in cases(tmp):
            row = {"input": label}
            for variant, keep in (("keep_all", "1"), ("freed", "0")):
                out = subprocess.run([sys.executable, __file__, "--child", path, json.dumps(dims), keep],
                                     capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": ROOT})
                row[variant] = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            k, f = row["keep_all"], row["freed"]
            print(f"{label}: {k['nodes']} nodes; traced peak {k['traced_peak_mb']:.1f} -> {f['traced_peak_mb']:.1f} MiB; "
                  f"process peak RSS {k['peak_rss_mb']:.0f} -> {f['peak_rss_mb']:.0f} MiB; "
                  f"run {k['seconds'] * 1e3:.0f} -> {f['seconds'] * 1e3:.0f} ms", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"load": os.getloadavg(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
