"""Generate tests/data/tf_suite/: TensorFlow's own MarkForCompilationPass dumps on a suite of real TF graphs.

Run once by a developer with a Python that has TensorFlow (CI never runs this; it only reads the data):

    python3 -m venv /tmp/tfenv && /tmp/tfenv/bin/pip install tensorflow-cpu==2.21.0
    python3 tools/tf_suite.py --tf-python /tmp/tfenv/bin/python

For every case (MLP, conv+BN, residual, attention, transformer, LSTMs, while/cond in v1 and functional
form, resource variables, random, strings, check_numerics/Assert, two devices, jit_compile inside an
auto-clustered graph, XLA scopes) and every variant (Grappler on/off x --tf_xla_min_cluster_size 0/1/4),
tools/tf_suite_worker.py runs the case's graph once under

    TF_XLA_FLAGS="--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit --tf_xla_min_cluster_size=K --tf_xla_clustering_debug"

with TF_DUMP_GRAPH_PREFIX set, and keeps what TensorFlow writes: <case>/<variant>/
before_mark_for_compilation.pbtxt (the graph the pass saw), mark_for_compilation.pbtxt (the same graph
with `_XlaCluster` on members) and mark_for_compilation_annotated.pbtxt (members renamed
"<cluster>/<name>"), plus expected.json (the partition read from the annotated dump). It also writes
tf2xla_kernels.json (the XLA_CPU_JIT/XLA_GPU_JIT kernel registrations) and models/ (a frozen .pb and a
SavedModel of a small Keras CNN and transformer, with inputs and TF's outputs).

`--table` prints the markdown table of docs/tf-suite.md from the data already there (no TF needed).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(ROOT, "tools", "tf_suite_worker.py")
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "tf_suite")

CASES = ["mlp", "conv_bn", "conv_fused_bn", "residual", "attention", "transformer", "lstm", "lstm_unrolled",
         "while_v1", "while_functional", "while_functional_kept", "while_v2_session", "cond_v1",
         "cond_functional", "cond_functional_kept", "resource_vars", "resource_vars_v1",
         "random", "strings", "check_numerics", "jit_compile_inner", "xla_scope", "xla_scope_v1"]
TWO_CPU_CASES = ["two_devices"]
# one graph per RecursiveCompilabilityChecker / OperationFilter check, into tests/data/tf_rules (--rules)
RULE_CASES = ["rule_resource_in_call", "rule_unique", "rule_where", "rule_slow_inaccurate", "rule_variant",
              "rule_stack_tensor_array_v1", "rule_control_trigger", "rule_case", "rule_collective"]
RULES_OUT = os.path.join(ROOT, "tests", "data", "tf_rules")  # run in a process with two logical CPU devices
SIZES = [0, 1, 4]


def worker(python: str, out: str, *args: str) -> None:
    cmd = [python, WORKER, "--out", out, *args]
    print("+", " ".join(cmd[1:]), file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    for line in proc.stderr.splitlines():  # the worker's own progress lines, not TF's log noise
        if line.startswith("{") or " ops; " in line or " nodes" in line or "Error" in line:
            print("  ", line, file=sys.stderr)
    if proc.returncode:
        sys.exit(f"worker failed ({proc.returncode}):\n{proc.stderr[-3000:]}")


def load_all(out: str) -> list[dict]:
    recs = []
    for path in sorted(glob.glob(os.path.join(out, "*", "*", "expected.json"))):
        with open(path, encoding="utf-8") as f:
            recs.append(json.load(f))
    return recs


def write_index(out: str) -> None:
    """index.json: one line per case x variant, so a test can walk the suite without globbing."""
    rows = []
    for r in load_all(out):
        g = r.get("graphs") or []
        rows.append({
            "case": r["case"], "variant": r["variant"], "dir": f"{r['case']}/{r['variant']}",
            "grappler": r["grappler"], "min_cluster_size": r["min_cluster_size"],
            "graphs": len(g), "nodes": [x["nodes"] for x in g], "clusters": [len(x["clusters"]) for x in g],
            "clustered_nodes": [x["clustered_nodes"] for x in g], "error": r.get("error"), "note": r.get("note"),
        })
    with open(os.path.join(out, "index.json"), "w", encoding="utf-8") as f:
        f.write("[\n" + ",\n".join(json.dumps(x, sort_keys=True) for x in rows) + "\n]\n")


def table(out: str) -> str:
    """Markdown: per case, nodes TF's pass saw and "clusters / clustered nodes" per variant; then what each
    case exercises."""
    recs = load_all(out)
    by_case: dict[str, dict[str, dict]] = {}
    what = {}
    for r in recs:
        by_case.setdefault(r["case"], {})[r["variant"]] = r
        what[r["case"]] = r["what"]

    def cell(r: dict | None) -> str:
        if r is None:
            return "-"
        if r.get("error"):
            return "error"
        text = "; ".join(f"{len(x['clusters'])} / {x['clustered_nodes']}" for x in r["graphs"])
        return text + (" *" if r.get("note") else "")

    def nodes(case: str, g: str) -> str:
        seen = {", ".join(str(x["nodes"]) for x in r.get("graphs") or [])
                for v, r in by_case[case].items() if v.startswith(f"grappler_{g}-")}
        return " or ".join(sorted(seen))

    lines = ["| case | nodes, Grappler off | K=0 | K=1 | K=4 | nodes, Grappler on | K=0 | K=1 | K=4 |",
             "|" + " --- |" * 9]
    for case in CASES + TWO_CPU_CASES:
        if case not in by_case:
            continue
        row = [f"`{case}`"]
        for g in ("off", "on"):
            row.append(nodes(case, g))
            row += [cell(by_case[case].get(f"grappler_{g}-min{k}")) for k in SIZES]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Cells: clusters TF formed / nodes in them (`*`: see the variant's expected.json note).")
    lines.append("")
    for case in CASES + TWO_CPU_CASES:
        if case in what:
            lines.append(f"- `{case}`: {what[case]}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tf-python", help="a Python interpreter with tensorflow installed")
    ap.add_argument("--kernels-python", action="append", default=[],
                    help="Python(s) whose TF registry is read for tf2xla_kernels.json (default: --tf-python); "
                         "give a GPU build too to get XLA_GPU_JIT, the registrations are merged")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--cases", nargs="*", help="only these cases (default: all)")
    ap.add_argument("--sizes", nargs="*", type=int, default=SIZES)
    ap.add_argument("--skip", nargs="*", default=[], choices=["suite", "kernels", "models"])
    ap.add_argument("--table", action="store_true", help="print the markdown table of the data in --out and stop")
    ap.add_argument("--rules", action="store_true",
                    help="make tests/data/tf_rules (the rule_* cases, min size 1 and 4, Grappler on/off) and stop")
    args = ap.parse_args()
    if args.rules and args.tf_python:
        for c in RULE_CASES:
            shutil.rmtree(os.path.join(RULES_OUT, c), ignore_errors=True)
        for k in (1, 4):
            worker(args.tf_python, RULES_OUT, "--min-cluster-size", str(k), *RULE_CASES)
        for path in glob.glob(os.path.join(RULES_OUT, "*", "*", "mark_for_compilation*.pbtxt")):
            os.remove(path)  # the tests read the graph the pass received and expected.json's partition
        return 0
    if args.table:
        print(table(args.out))
        return 0
    if not args.tf_python:
        ap.error("--tf-python is required (or --table)")
    os.makedirs(args.out, exist_ok=True)
    cases = args.cases or CASES + TWO_CPU_CASES
    if "suite" not in args.skip:
        for c in cases:
            if os.path.isdir(os.path.join(args.out, c)):
                shutil.rmtree(os.path.join(args.out, c))
        plain = [c for c in cases if c not in TWO_CPU_CASES]
        two = [c for c in cases if c in TWO_CPU_CASES]
        for k in args.sizes:
            if plain:
                worker(args.tf_python, args.out, "--min-cluster-size", str(k), *plain)
            if two:
                worker(args.tf_python, args.out, "--min-cluster-size", str(k), "--two-cpus", *two)
        write_index(args.out)
    if "kernels" not in args.skip:
        merged: dict = {}
        for py in args.kernels_python or [args.tf_python]:
            tmp = os.path.join(args.out, ".kernels-tmp")
            os.makedirs(tmp, exist_ok=True)
            worker(py, tmp, "--kernels")
            with open(os.path.join(tmp, "tf2xla_kernels.json"), encoding="utf-8") as f:
                part = json.load(f)
            shutil.rmtree(tmp)
            if not merged:
                merged = dict(part, ops={}, type_constraints={}, builds=[])
            merged["builds"].append({"package": part["package"], "tf_version": part["tf_version"],
                                     "device_types_in_registry": part["device_types_in_registry"],
                                     "ops": len(part["ops"])})
            for op, devs in part["ops"].items():
                merged["ops"][op] = sorted(set(merged["ops"].get(op, [])) | set(devs))
            for op, devs in part["type_constraints"].items():
                merged["type_constraints"].setdefault(op, {}).update(devs)
        for k in ("package", "device_types_in_registry"):
            merged.pop(k, None)
        with open(os.path.join(args.out, "tf2xla_kernels.json"), "w", encoding="utf-8") as f:
            big = ("ops", "type_constraints")
            f.write("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in merged.items()
                                       if k not in big))
            for k in big:  # one op a line: diffable
                f.write(f',\n"{k}": {{\n' + ",\n".join(f"{json.dumps(op)}: {json.dumps(d, sort_keys=True)}"
                                                       for op, d in sorted(merged[k].items())) + "\n}")
            f.write("\n}\n")
    if "models" not in args.skip:
        worker(args.tf_python, args.out, "--models")
    print(table(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
