"""ONNX backend node tests against xcviz: each case's model runs natively and under jax.jit, vs expected outputs.

The onnx wheel ships the generators (onnx.backend.test.case.node), not the data folder, so the cases are
produced from them once and cached on disk (pickle keyed by the onnx version). A case whose attribute or
dtype an implementation explicitly does not cover (ops.arrays.Unsupported) is counted as `unsupported`, not
as a pass; any wrong number or other exception is a `fail`. Used by tests/test_node_tests.py and by
docs/make_node_tests.py, which writes the per-op table docs/node_tests.md.
"""
from __future__ import annotations

import os
import pickle
from dataclasses import dataclass

import numpy as np


@dataclass
class Case:
    op: str            # canonical xcviz op
    name: str
    model: bytes
    inputs: list
    outputs: list
    rtol: float
    atol: float


def collect(cache_dir: str | None = None) -> list[Case]:
    import onnx

    from .ops import REGISTRY

    cache_dir = cache_dir or os.path.join(os.path.expanduser("~"), ".cache", "xcviz")
    import hashlib

    # the cases carry canonical op names: key the cache by the registry's name mapping too
    mapping = sorted((n, REGISTRY.get(n).name) for n in REGISTRY._by_name)
    key = hashlib.sha256(repr(mapping).encode()).hexdigest()[:12]
    path = os.path.join(cache_dir, f"onnx-node-cases-{onnx.__version__}-{key}.pkl")
    if os.path.exists(path):
        with open(path, "rb") as f:
            return pickle.load(f)
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = collect_testcases(None)
    cases = []
    for c in raw:
        nodes = c.model.graph.node
        if c.kind != "node" or "_expanded" in c.name or len(nodes) != 1 or nodes[0].domain not in ("", "ai.onnx"):
            continue
        opdef = REGISTRY.get(nodes[0].op_type)
        if opdef is None or opdef.name == "placeholder":
            continue
        for k, (ins, outs) in enumerate(c.data_sets):
            cases.append(Case(opdef.name, c.name + (f"#{k}" if k else ""), c.model.SerializeToString(),
                              list(ins), list(outs), float(c.rtol), float(c.atol)))
    os.makedirs(cache_dir, exist_ok=True)
    tmp = path + f".{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        pickle.dump(cases, f)
    os.replace(tmp, path)
    return cases


def _array(v):
    import onnx
    from onnx import numpy_helper

    return numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else np.asarray(v)


def run_case(case: Case, mode: str) -> tuple[str, str | None]:
    """('pass' | 'fail' | 'unsupported', why) for one case in mode native or jit."""
    import onnx

    from .errors import XcvizError
    from .runtime.execute import execute
    from .loaders.build import finalize
    from .loaders.onnx_model import graph_from_model
    from .ops.arrays import Unsupported

    try:
        model = onnx.ModelProto()
        model.ParseFromString(case.model)
        _fold_static_inputs(model, [_array(v) for v in case.inputs])
        g = finalize(graph_from_model(model, case.name), onnx=True)
        names = [i.name for i in onnx.load_from_string(case.model).graph.input]
        feeds = {v.name: np.asarray(v.data) for v in g.inputs if v.data is not None}
        feeds.update({n: _array(a) for n, a in zip(names, case.inputs) if n not in feeds})
        for v in g.inputs:
            if v.name not in feeds:  # an optional input the case leaves out
                return "unsupported", f"input {v.name!r} not given"
        res = execute(g, feeds, mode)
    except Unsupported as e:
        return "unsupported", str(e)[:160]
    except XcvizError as e:
        return "fail", f"{e}"[:160]
    except Exception as e:  # noqa: BLE001 - the table records every failure
        return "fail", f"{e.__class__.__name__}: {e}".splitlines()[0][:160]
    got = list(res.outputs.values())
    for k, exp in enumerate(case.outputs):
        if k >= len(got):
            return "fail", f"missing output {k}"
        exp = _array(exp)
        a = np.asarray(got[k])
        if a.shape != exp.shape:
            return "fail", f"output {k}: shape {a.shape} != {exp.shape}"
        if a.dtype != exp.dtype:
            return "fail", f"output {k}: dtype {a.dtype} != {exp.dtype}"
        if exp.dtype.kind in "fc":
            if not np.allclose(a, exp, rtol=case.rtol, atol=case.atol, equal_nan=True):
                err = float(np.nanmax(np.abs(a.astype(np.float64) - exp.astype(np.float64)))) if a.size else 0.0
                return "fail", f"output {k}: max abs error {err:.3g}"
        elif exp.dtype.kind == "O":
            if a.tolist() != exp.tolist():
                return "fail", f"output {k}: values differ"
        elif exp.dtype.kind == "V":  # ml_dtypes (bfloat16, float8, int4, ...): exact values, NaN equal to NaN
            if not np.array_equal(a.astype(np.float64), exp.astype(np.float64), equal_nan=True):
                return "fail", f"output {k}: values differ"
        elif not np.array_equal(a, exp):
            return "fail", f"output {k}: values differ"
    return "pass", None


def _fold_static_inputs(model, values: list) -> None:
    """Shape-deciding inputs (reshape target, axes, split sizes, ...) become constants, as XLA requires."""
    from onnx import numpy_helper

    from .ops import REGISTRY

    inits = {t.name for t in model.graph.initializer}
    graph_inputs = [i.name for i in model.graph.input if i.name not in inits]
    static = set()
    for node in model.graph.node:
        opdef = REGISTRY.get(node.op_type)
        for slot in opdef.static_inputs if opdef else ():
            if slot < len(node.input) and node.input[slot] in graph_inputs:
                static.add(node.input[slot])
    for name in static:
        model.graph.initializer.append(numpy_helper.from_array(np.asarray(values[graph_inputs.index(name)]), name))


def run_all(cases: list[Case]) -> dict[str, dict]:
    """Per op: counts per mode and the failing cases (jax only for ops the registry calls compilable)."""
    from .ops import REGISTRY

    table: dict[str, dict] = {}
    for case in cases:
        opdef = REGISTRY.ops[case.op]
        row = table.setdefault(case.op, {"claimed": bool(opdef.devices), "cases": 0, "native": {}, "jax": {},
                                         "failures": []})
        row["cases"] += 1
        modes = ("native", "jit") if opdef.devices else ("native",)
        for mode in modes:
            status, why = run_case(case, mode)
            key = "jax" if mode == "jit" else "native"
            row[key][status] = row[key].get(status, 0) + 1
            if status == "fail":
                row["failures"].append(f"{case.name} [{key}]: {why}")
    return table


def render_markdown(table: dict[str, dict]) -> str:
    import onnx

    lines = ["# ONNX backend node tests", "",
             f"Generated by `python docs/make_node_tests.py` from the node-test generators of onnx {onnx.__version__}",
             "(`onnx.backend.test.case.node`). *pass / unsupported / fail* per implementation; unsupported = an",
             "attribute value or dtype the implementation refuses with a clear error (never a wrong number).",
             "An op is **claimed** (compilable in the registry) only if its JAX lowering has no failing case.", "",
             "| op | claimed | cases | native pass/unsup/fail | JAX pass/unsup/fail | status |",
             "|---|---|---:|---|---|---|"]
    for op in sorted(table):
        r = table[op]

        def cell(d):
            return f"{d.get('pass', 0)}/{d.get('unsupported', 0)}/{d.get('fail', 0)}"
        failed = r["native"].get("fail", 0) + r["jax"].get("fail", 0)
        jax = cell(r["jax"]) if r["claimed"] else "not claimed"
        lines.append(f"| {op} | {'yes' if r['claimed'] else 'no'} | {r['cases']} | {cell(r['native'])} | {jax} | "
                     f"{'green' if not failed else 'FAIL'} |")
    fails = [f for op in sorted(table) for f in table[op]["failures"]]
    if fails:
        lines += ["", "## Failing cases", ""] + [f"- {f}" for f in fails]
    return "\n".join(lines) + "\n"
