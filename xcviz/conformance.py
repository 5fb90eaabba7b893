"""ONNX backend node tests against xcviz: each case's model runs natively and under jax.jit, vs expected outputs.

The onnx wheel ships the generators (onnx.backend.test.case.node), not the data folder, so the cases are
produced from them once and cached on disk as data (conformance_cache: an .npz, keyed by the onnx version). A case whose attribute or
dtype an implementation explicitly does not cover (ops.arrays.Unsupported) is counted as `unsupported`, not
as a pass; any wrong number or other exception is a `fail`. Used by tests/ops/test_onnx_node_tests.py and by
docs/make_node_tests.py, which writes the per-op table docs/node_tests.md.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np


@dataclass
class Case:
    op: str            # canonical xcviz op ("" when xcviz does not know the op: onnxruntime alone runs it)
    name: str
    model: bytes
    inputs: list
    outputs: list
    rtol: float
    atol: float
    onnx_op: str = ""  # the ONNX op type


def collect(cache_dir: str | None = None) -> list[Case]:
    import onnx

    from . import conformance_cache
    from .ops import REGISTRY

    cache_dir = cache_dir or os.path.join(os.path.expanduser("~"), ".cache", "xcviz")
    import hashlib

    # the cases carry canonical op names: key the cache by the registry's name mapping too
    mapping = sorted((n, REGISTRY.get(n).name) for n in REGISTRY._by_name)
    key = hashlib.sha256(repr(("v2", mapping)).encode()).hexdigest()[:12]  # v2: unknown ops kept
    path = os.path.join(cache_dir, f"onnx-node-cases-{onnx.__version__}-{key}.npz")
    cached = conformance_cache.load(path) if os.path.exists(path) else None
    if cached is not None:
        return [Case(**fields) for fields in cached]
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
        if opdef is not None and opdef.name == "placeholder":
            continue
        for k, (ins, outs) in enumerate(c.data_sets):
            cases.append(Case(opdef.name if opdef else "", c.name + (f"#{k}" if k else ""), c.model.SerializeToString(),
                              list(ins), list(outs), float(c.rtol), float(c.atol), nodes[0].op_type))
    os.makedirs(cache_dir, exist_ok=True)
    conformance_cache.save(path, cases)
    return cases


def case_array(v):
    """A case's value as xcviz runs it: a list is an ONNX sequence (ops.sequence.Seq), None an empty optional."""
    import onnx
    from onnx import numpy_helper

    from .ops.values import Seq

    if v is None:
        return None
    if isinstance(v, list):
        return Seq([case_array(x) for x in v])
    return numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else np.asarray(v)


def run_case(case: Case, mode: str) -> tuple[str, str | None]:
    """('pass' | 'fail' | 'unsupported', why) for one case in mode native or jit."""
    import onnx

    from .errors import XcvizError
    from .runtime.execute import execute
    from .passes.prepare import prepare
    from .loaders.onnx_model import graph_from_model
    from .ops.arrays import Unsupported

    try:
        model = onnx.ModelProto()
        model.ParseFromString(case.model)
        _fold_static_inputs(model, [case_array(v) for v in case.inputs])
        g = prepare(graph_from_model(model, case.name), onnx=True)
        names = [i.name for i in onnx.load_from_string(case.model).graph.input]
        feeds = {v.name: np.asarray(v.data) for v in g.inputs if v.data is not None}
        feeds.update({n: case_array(a) for n, a in zip(names, case.inputs) if n not in feeds})
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
        why = check_output(case, got[k], case_array(exp), f"output {k}")
        if why:
            return "fail", why
    return "pass", None


# Random ops: the expected values are one draw of NumPy's unseeded generator, which no implementation can
# reproduce; a case checks what every draw shares (shape, dtype, values in the support, and the outcomes the
# probabilities force), for xcviz and onnxruntime alike.
RANDOM_SUPPORT = {"Bernoulli": (0, 1)}


# Cast from floating point to a fixed-point type is "undefined if OOR" (the ONNX Cast spec). The cases' expected
# values for those elements are whatever the generating ml_dtypes did (it wrapped before 0.7, gives 0 since), so
# only the elements the spec defines are compared.
_SUB_BYTE_INTS = ("int4", "uint4", "int2", "uint2")


def _spec_defined(case: Case, exp) -> np.ndarray | None:
    """Mask of the output elements the spec defines, or None when all are."""
    if case.onnx_op not in ("Cast", "CastLike") or getattr(exp, "dtype", None) is None \
            or exp.dtype.name not in _SUB_BYTE_INTS:
        return None
    x = case_array(case.inputs[0])
    if not isinstance(x, np.ndarray) or x.dtype.kind not in "fV" or x.dtype.name in _SUB_BYTE_INTS:
        return None
    import ml_dtypes

    info = ml_dtypes.iinfo(exp.dtype)
    with np.errstate(invalid="ignore"):
        t = np.trunc(x.astype(np.float64))
    return (t >= info.min) & (t <= info.max)


def check_output(case: Case, got, exp, what: str) -> str | None:
    if case.onnx_op not in RANDOM_SUPPORT:
        defined = _spec_defined(case, exp)
        if defined is not None and np.shape(got) == exp.shape and not defined.all():
            got, exp = np.asarray(got)[defined], exp[defined]
        return compare(got, exp, case.rtol, case.atol, what)
    got = np.asarray(got)
    if got.shape != exp.shape or got.dtype != exp.dtype:
        return f"{what}: {got.dtype}{list(got.shape)} where the case has {exp.dtype}{list(exp.shape)}"
    if not np.isin(got, RANDOM_SUPPORT[case.onnx_op]).all():
        return f"{what}: values outside {RANDOM_SUPPORT[case.onnx_op]}"
    p = np.asarray(case_array(case.inputs[0]))
    sure = (p == 0) | (p == 1)
    if not np.array_equal(got[sure], p[sure].astype(got.dtype)):
        return f"{what}: a probability of 0 or 1 drew the other value"
    return None


def compare(a, exp, rtol: float, atol: float, what: str) -> str | None:
    """None when `a` matches the expected value (sequences element by element), else what differs."""
    from .ops.values import Seq

    if exp is None or a is None:
        return None if a is exp else f"{what}: {'empty' if a is None else 'a value'} where the case has " \
            f"{'nothing' if exp is None else 'a value'}"
    if isinstance(exp, Seq) or isinstance(a, Seq):
        if not (isinstance(exp, Seq) and isinstance(a, Seq)):
            return f"{what}: a sequence and a tensor"
        if len(a.items) != len(exp.items):
            return f"{what}: sequence of {len(a.items)} tensors, expected {len(exp.items)}"
        for j, (x, y) in enumerate(zip(a.items, exp.items)):
            why = compare(x, y, rtol, atol, f"{what}[{j}]")
            if why:
                return why
        return None
    a = np.asarray(a)
    if a.shape != exp.shape:
        return f"{what}: shape {a.shape} != {exp.shape}"
    if a.dtype != exp.dtype:
        return f"{what}: dtype {a.dtype} != {exp.dtype}"
    if exp.dtype.kind in "fc":
        if not np.allclose(a, exp, rtol=rtol, atol=atol, equal_nan=True):
            err = float(np.nanmax(np.abs(a.astype(np.float64) - exp.astype(np.float64)))) if a.size else 0.0
            return f"{what}: max abs error {err:.3g}"
    elif exp.dtype.kind == "O":
        if a.tolist() != exp.tolist():
            return f"{what}: values differ"
    elif exp.dtype.name == "bfloat16":  # as ONNX's own runner (backend.test.runner): rtol at least two bfloat16 ulps
        a32, e32 = a.astype(np.float32), exp.astype(np.float32)
        if not np.allclose(a32, e32, rtol=max(rtol, 2.0 ** -6), atol=atol, equal_nan=True):
            return f"{what}: max abs error {float(np.nanmax(np.abs(a32 - e32))):.3g} (bfloat16)"
    elif exp.dtype.kind == "V":  # ml_dtypes (float8, int4, ...): exact values, NaN equal to NaN
        if not np.array_equal(a.astype(np.float64), exp.astype(np.float64), equal_nan=True):
            return f"{what}: values differ"
    elif not np.array_equal(a, exp):
        return f"{what}: values differ"
    return None


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


def run_case_ort(case: Case) -> tuple[str, str | None]:
    """The same case under onnxruntime's CPU provider: 'unsupported' when it refuses the model or its inputs
    (not implemented, a type its Python API cannot take), 'fail' when it runs and differs from the case."""
    import onnx
    import onnxruntime as ort

    try:
        opts = ort.SessionOptions()
        opts.log_severity_level = 4  # its refusals are counted, not logged
        sess = ort.InferenceSession(case.model, opts, providers=["CPUExecutionProvider"])
        names = [i.name for i in onnx.load_from_string(case.model).graph.input]
        feeds = {n: _ort_value(v) for n, v in zip(names, case.inputs) if v is not None}
        got = sess.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - every refusal is counted as such
        return "unsupported", f"{e.__class__.__name__}: {e}".strip().splitlines()[0][:160]
    for k, exp in enumerate(case.outputs):
        if k >= len(got):
            return "fail", f"missing output {k}"
        exp, out = case_array(exp), case_array(got[k])
        if isinstance(out, np.ndarray) and out.dtype == np.uint8 and exp.dtype.kind == "V" and exp.dtype.itemsize == 1:
            out = out.view(exp.dtype)  # its Python API hands 8-bit floats back as their bytes
        why = check_output(case, out, exp, f"output {k}")
        if why:
            return "fail", why
    return "pass", None


def _ort_value(v):
    """A case value as onnxruntime's Python API takes it: arrays, lists of arrays for sequences."""
    from onnx import numpy_helper

    if isinstance(v, list):
        return [_ort_value(x) for x in v]
    return numpy_helper.to_array(v) if hasattr(v, "raw_data") else np.asarray(v)


def has_ort() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def xla_typed(case) -> bool:
    """Whether XLA has a type for every tensor of a case (inputs and outputs, inside sequences too): not a string
    one (XLA has no string type; TF's XLA kernels register no DT_STRING). Only such cases count for JAX."""
    from onnx import TensorProto

    def typed(v) -> bool:
        if v is None:
            return True
        if isinstance(v, list):
            return all(typed(x) for x in v)
        if isinstance(v, TensorProto):
            return v.data_type != TensorProto.STRING
        return getattr(v, "dtype", None) is None or v.dtype.kind not in "OSU"

    return all(typed(v) for v in (*case.inputs, *case.outputs))


def run_all(cases: list[Case], ort: bool | None = None) -> dict[str, dict]:
    """Per op: counts per mode and the failing cases (jax only for the cases of ops the registry calls compilable
    whose every tensor XLA can type; onnxruntime, when installed or `ort`, for every case). Ops xcviz does not know
    get rows keyed `onnx:<OpType>`."""
    from .ops import REGISTRY


    ort = has_ort() if ort is None else ort
    table: dict[str, dict] = {}
    for case in cases:
        opdef = REGISTRY.ops.get(case.op)
        key_op = case.op if opdef is not None else f"onnx:{case.onnx_op}"
        row = table.setdefault(key_op, {"claimed": bool(opdef and opdef.devices), "known": opdef is not None,
                                        "cases": 0, "native": {}, "jax": {}, "ort": {}, "failures": [],
                                        "untyped": {}})  # case -> native status, for cases no XLA can type
        row["cases"] += 1
        typed = xla_typed(case)  # a string tensor: no XLA compiles the case, whatever the op
        runs = [] if opdef is None else ["native", "jit"] if opdef.devices and typed else ["native"]
        for mode in runs + (["ort"] if ort else []):
            status, why = run_case_ort(case) if mode == "ort" else run_case(case, mode)
            key = "jax" if mode == "jit" else mode
            row[key][status] = row[key].get(status, 0) + 1
            if mode == "native" and not typed:
                row["untyped"][case.name] = status
            if status == "fail":
                row["failures"].append(f"{case.name} [{key}]: {why}")
    return table


def render_markdown(table: dict[str, dict]) -> str:
    from .conformance_doc import render

    return render(table)
