"""Check that `xcviz --strategy mark` forms exactly the clusters TensorFlow forms, on random graphs.

TensorFlow is too big to be a test dependency, so this runs on demand with a Python that has it:

    python -m venv /tmp/tfenv && /tmp/tfenv/bin/pip install tensorflow-cpu==2.20.0
    python tools/tf_fidelity.py --tf-python /tmp/tfenv/bin/python --graphs 300

For each seeded random graph (elementwise ops, Shape -> Reshape for phase 0, py_function as the op XLA
cannot compile, fan-out and residual joins that provoke cycle refusals) TensorFlow's own
MarkForCompilationPass runs (tools/tf_mark_worker.py, min cluster size 1, grappler off) and dumps the
graph it clustered; xcviz then clusters *that same graph* (TF's node order, its _Arg/_Retval/NoOp
nodes, its control edges) and the two partitions are compared cluster by cluster.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xcviz.clustering import ClusterOptions, run_clustering  # noqa: E402
from xcviz.passes.prepare import prepare  # noqa: E402
from xcviz.loaders.schema import graph_from_mapping  # noqa: E402

UNARY = ["Relu", "Sigmoid", "Identity"]
BINARY = ["AddV2", "Mul"]


def random_spec(rng: random.Random, index: int) -> dict:
    n = rng.randint(3, 30)
    nodes: list[dict] = []
    tensors = ["x", "w"]
    for i in range(n):
        name = f"n{i}"
        r = rng.random()
        recent = tensors[-6:]
        if r < 0.15:
            op, inputs = "EagerPyFunc", [rng.choice(recent)]
        elif r < 0.22 and len(tensors) > 2:
            shp = f"n{i}_shape"
            nodes.append({"name": shp, "op": "Shape", "inputs": [rng.choice(recent)]})
            op, inputs = "Reshape", [rng.choice(tensors), shp]
        elif r < 0.6:
            op, inputs = rng.choice(BINARY), [rng.choice(recent), rng.choice(tensors)]
        else:
            op, inputs = rng.choice(UNARY), [rng.choice(recent)]
        nodes.append({"name": name, "op": op, "inputs": inputs})
        tensors.append(name)
    return {"name": f"g{index}", "nodes": nodes}


def xcviz_partition(tf_nodes: list[dict]) -> tuple[list[list[str]], int]:
    nodes = []
    for nd in tf_nodes:
        data = [i for i in nd["inputs"] if not i.startswith("^")]
        ctrl = [i[1:] for i in nd["inputs"] if i.startswith("^")]
        nodes.append({"name": nd["name"], "op": nd["op"], "inputs": data, "control_inputs": ctrl})
    graph = prepare(graph_from_mapping({"name": "tf", "nodes": nodes}, "tf"), allow_unknown=True)
    c = run_clustering(graph, ClusterOptions(min_cluster_size=1))
    cycles = sum(1 for a in c.attempts if a.code == "cycle")
    return sorted(sorted(graph.nodes[v].name for v in members) for members in c.clusters), cycles


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tf-python", required=True, help="a Python interpreter with tensorflow installed")
    ap.add_argument("--graphs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=3, help="mismatches to print in full")
    ap.add_argument("--record", help="also save TF's graphs and clusters to this JSON file (a test fixture)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    specs = [random_spec(rng, i) for i in range(args.graphs)]
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_mark_worker.py")
    out = subprocess.run([args.tf_python, worker], input=json.dumps(specs), capture_output=True, text=True, check=True)
    results = json.loads(out.stdout)
    if args.record:
        compact = [{"name": r["name"], "clusters": r["clusters"],
                    "nodes": [[n["name"], n["op"], n["inputs"]] for n in r["nodes"]]} for r in results if "error" not in r]
        with open(args.record, "w", encoding="utf-8") as f:
            f.write("[\n" + ",\n".join(json.dumps(r, separators=(",", ":")) for r in compact) + "\n]\n")
    same = merges = refusals = 0
    shown = 0
    for res in results:
        if "error" in res:
            print(res["name"], res["error"])
            continue
        ours, cycles = xcviz_partition(res["nodes"])
        refusals += cycles
        merges += sum(len(c) - 1 for c in res["clusters"])
        if ours == res["clusters"]:
            same += 1
        elif shown < args.show:
            shown += 1
            print(f"MISMATCH {res['name']}:\n  tf:    {res['clusters']}\n  xcviz: {ours}")
            for nd in res["nodes"]:
                print("   ", nd)
    total = len(results)
    print(f"identical partitions: {same}/{total} graphs ({merges} TF merges, {refusals} merges refused for a cycle), "
          f"seed {args.seed}")
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())
