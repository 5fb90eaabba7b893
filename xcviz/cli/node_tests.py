"""ONNX backend node tests through the command line: `xcviz run MODEL --inputs x.npz -o out.npz`, vs expected outputs.

The same cases as conformance.py, run as a user runs them: the model as an `.onnx` file, the inputs in an `.npz`
written with xcviz's own writer (bfloat16, float8 and int4 tensors as ml_dtypes reads them back), the command
in-process, and the outputs read back from the `.npz` the command wrote. Nothing is folded beforehand: a
shape-deciding input arrives as an array, as it would from a user. Classified as conformance.run_case does.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile

import numpy as np

SAMPLE_SIZE = 200


def sample(cases: list, size: int = SAMPLE_SIZE) -> list:
    """A fixed sample: every case ordered by name, then `size` of them spread evenly over the list."""
    ordered = sorted(cases, key=lambda c: c.name)
    if len(ordered) <= size:
        return ordered
    step = len(ordered) / size
    return [ordered[int(k * step)] for k in range(size)]


def run_case_cli(case, mode: str = "hybrid", native: str | None = None) -> tuple[str, str | None]:
    """('pass' | 'fail' | 'unsupported', why) for one case run by `xcviz run` in this process, with the native
    runtime a user gets (`native` None: onnxruntime for an ONNX file) unless `native` names one. 'fail' is either
    a wrong number with exit 0 (why starts "wrong:") or another error (why starts "error:")."""
    import onnx

    from ..conformance import case_array, check_output
    from ..errors import XcvizError
    from ..fileio import write_npz
    from ..ops.arrays import Unsupported
    from .entry import main

    model = onnx.load_from_string(case.model)
    inits = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    values = {}
    for n, v in zip(names, case.inputs):
        v = case_array(v)
        if type(v).__name__ == "Seq":  # a sequence as numbered tensors, as `run` writes one
            if not v.items:  # the empty sequence: one array with no tensor along its first axis
                values[n] = np.zeros((0,), np.float32)
                continue
            values.update({f"{n}[{k}]": x for k, x in enumerate(v.items)})
        elif v is not None:
            values[n] = v
    with contextlib.ExitStack() as stack:
        work = stack.enter_context(tempfile.TemporaryDirectory(prefix="xcviz-node-"))
        path, feeds, out = (os.path.join(work, f) for f in ("model.onnx", "inputs.npz", "outputs.npz"))
        with open(path, "wb") as f:
            f.write(case.model)
        write_npz(feeds, values)
        # the default native runtime, as a user runs it: a part xcviz hands to onnxruntime is checked too
        argv = ["run", path, "--inputs", feeds, "-o", out, "--mode", mode, "--json", "--debug"]
        argv += ["--native", native] if native else []
        def said(e: BaseException) -> str:   # the message without this run's temporary folder
            return str(e).replace(work + os.sep, "")

        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                main(argv)
        except Unsupported as e:
            return "unsupported", said(e)[:160]
        except XcvizError as e:
            return "fail", f"error: {said(e)}"[:160]
        except SystemExit as e:
            if e.code:
                return "fail", f"error: exit {e.code}"
        except Exception as e:  # noqa: BLE001 - the table records every failure
            return "fail", f"error: {e.__class__.__name__}: {said(e)}".splitlines()[0][:160]
        try:
            got = read_outputs(out)
        except (ValueError, TypeError, OSError) as e:  # an .npz numpy cannot read back is the command's failure
            return "fail", f"wrong: outputs.npz unreadable: {e.__class__.__name__}: {e}"[:160]
    for k, (o, exp) in enumerate(zip(model.graph.output, case.outputs)):
        why = check_output(case, _as_read(got, o.name, case_array(exp)), case_array(exp), f"output {k}")
        if why:
            return "fail", f"wrong: {why}"
    return "pass", None


def verdict(status: str, why: str | None) -> str:
    """The published class of a command-line result: pass, unsupported (refused with a clear error), wrong (exit 0
    and numbers the case does not accept) or error (any other non-zero exit)."""
    if status != "fail":
        return status
    return "wrong" if (why or "").startswith("wrong:") else "error"


def _as_read(got: dict, name: str, exp):
    """Output `name` as the .npz gives it back, in the form the case holds: a sequence from its numbered tensors
    (`s[0]`, `s[1]`, ...), an empty optional as nothing, text as Python strings (the .npz holds fixed-width text)."""
    from ..ops.values import Seq

    if isinstance(exp, Seq):
        items, k = [], 0
        while f"{name}[{k}]" in got:
            items.append(got[f"{name}[{k}]"])
            k += 1
        return Seq(items)
    value = got.get(name)
    if value is not None and value.dtype.kind in "US" and getattr(exp, "dtype", None) == object:
        return value.astype(object)
    return value


def read_outputs(path: str) -> dict:
    """The arrays of an .npz `xcviz run` wrote, read by numpy alone (with ml_dtypes imported for its names)."""
    import ml_dtypes  # noqa: F401 - registers bfloat16, float8_*, int4, ... with numpy, as a user would

    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def collect_all() -> list:
    """Every case ONNX's node-test generators make (onnx.backend.test.case.node: the same models and data as the
    onnx repository's backend/test/data/node folder, which the wheel does not ship): the single-op cases
    conformance.collect keeps, and also the `_expanded` ones (the op's function body, several nodes) and those of
    the ai.onnx.ml / preview domains. A case whose model is one op xcviz knows carries its name in `op`; any other
    carries "*" (the command runs the whole model, or refuses it)."""
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    from ..conformance import Case
    from ..ops import REGISTRY

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        raw = collect_testcases(None)
    raw = [c for c in raw if c.kind == "node"]
    # an expanded case checks the op it expands (its twin without "_expanded"): Bernoulli's draws, Cast's ranges
    twin = {c.name: c.model.graph.node[0].op_type for c in raw if len(c.model.graph.node) == 1}
    cases = []
    for c in raw:
        nodes = c.model.graph.node
        opdef = REGISTRY.get(nodes[0].op_type) if len(nodes) == 1 and nodes[0].domain in ("", "ai.onnx") else None
        op = opdef.name if opdef is not None else "*"
        onnx_op = twin.get(c.name) or twin.get(re.sub(r"_expanded(_ver\d+)?", "", c.name), "")
        for k, (ins, outs) in enumerate(c.data_sets):
            cases.append(Case(op, c.name + (f"#{k}" if k else ""), c.model.SerializeToString(), list(ins), list(outs),
                              float(c.rtol), float(c.atol), onnx_op))
    return sorted(cases, key=lambda c: c.name)


def run_suite(cases: list, mode: str = "hybrid", ort: bool = True, progress=None) -> dict:
    """Every case through the command line and, on the same cases, onnxruntime: {'cases': n, 'cli': counts,
    'ort': counts, 'rows': [(name, onnx op, cli verdict, why, ort status), ...] by name}. Counts are of
    verdict(): pass, unsupported, wrong, error; onnxruntime's of pass, unsupported (refused), wrong."""
    from ..conformance import run_case_ort

    counts: dict = {"cli": {}, "ort": {}}
    rows = []
    for case in sorted(cases, key=lambda c: c.name):
        cli, why = run_case_cli(case, mode)
        cli = verdict(cli, why)
        o = run_case_ort(case)[0] if ort else None
        o = "wrong" if o == "fail" else o
        counts["cli"][cli] = counts["cli"].get(cli, 0) + 1
        if o:
            counts["ort"][o] = counts["ort"].get(o, 0) + 1
        rows.append((case.name, case.onnx_op, cli, why or "", o or ""))
        if progress:
            progress(rows[-1])
    return {"cases": len(cases), **counts, "rows": rows}


def suite_tsv(result: dict) -> str:
    """One line per case (name, op, xcviz verdict, onnxruntime status, why): the file two runs are diffed by."""
    lines = ["case\top\txcviz\tonnxruntime\twhy"]
    lines += [f"{n}\t{op}\t{v}\t{o}\t{' '.join(why.split())}" for n, op, v, why, o in result["rows"]]
    return "\n".join(lines) + "\n"


CLI_HEADING = "## Through the command line"


def render_cli(result: dict, ort_version: str | None = None) -> str:
    """The section of docs/node_tests.md on the command line: run_suite's counts, every case that is not a pass,
    and the cases onnxruntime passes that xcviz does not."""
    cli, ort = result["cli"], result.get("ort") or {}
    lines = ["", CLI_HEADING, "",
             f"Every case of ONNX's backend node tests ({result['cases']}: `xcviz.cli.node_tests.collect_all`, the "
             "generators in `onnx.backend.test.case.node`, which make the models and data of the onnx repository's "
             "`backend/test/data/node`; the `_expanded` function bodies and the ai.onnx.ml and preview domains "
             "included), each run as a user runs it: the model "
             "as an `.onnx` file, its inputs in an `.npz` written by xcviz (bfloat16, float8 and int4 tensors keep "
             "their ml_dtypes names; a sequence as numbered tensors `s[0]`, `s[1]`, ...), `xcviz run model.onnx "
             "--inputs inputs.npz -o outputs.npz` in-process (mode hybrid, the default native runtime: onnxruntime "
             "for the parts outside XLA clusters), and the outputs read back from the `.npz` by numpy with "
             "ml_dtypes, checked with the case's own tolerances. Nothing is folded beforehand: shape-deciding inputs "
             "(Reduce axes, Split sizes, ...) arrive as arrays. *wrong* is exit 0 with numbers the case does not "
             "accept; *unsupported* a refusal with one line and a non-zero exit; *error* any other non-zero exit. "
             "onnxruntime runs the same models on its CPU provider (*unsupported*: it refuses the model or the "
             "inputs). Every case's result is in `docs/node_tests_cli.tsv`, for diffing two runs.", "",
             "| runner | pass | unsupported | wrong | error |", "|---|---:|---:|---:|---:|",
             f"| `xcviz run` (CLI, .npz in and out) | {cli.get('pass', 0)} | {cli.get('unsupported', 0)} | "
             f"{cli.get('wrong', 0)} | {cli.get('error', 0)} |"]
    if ort:
        lines.append(f"| onnxruntime {ort_version or ''} CPU | {ort.get('pass', 0)} | {ort.get('unsupported', 0)} | "
                     f"{ort.get('wrong', 0)} | 0 |".replace("  ", " "))
    rows = result["rows"]
    behind = [r for r in rows if r[4] == "pass" and r[2] != "pass"]
    lines += ["", "Cases onnxruntime passes and `xcviz run` does not: "
              + (", ".join(f"`{r[0]}` ({r[2]})" for r in behind) if behind else "none") + ".", "",
              "Cases `xcviz run` does not pass (the ops it has no implementation of count as unsupported):", "",
              "| case | xcviz | why | onnxruntime |", "|---|---|---|---|"]
    lines += [f"| {n} | {v} | {' '.join(why.split()).replace('|', '/')[:120]} | {o} |"
              for n, _, v, why, o in rows if v != "pass"]
    ops = {}
    for n, op, v, _, o in rows:   # per op (an expanded case counts for the op it expands)
        c = ops.setdefault(op or "?", {"cases": 0, "xcviz": 0, "ort": 0})
        c["cases"] += 1
        c["xcviz"] += v == "pass"
        c["ort"] += o == "pass"
    lines += ["", "Ops whose cases `xcviz run` passes fewer of than onnxruntime: "
              + (", ".join(f"{op} ({c['xcviz']} vs {c['ort']} of {c['cases']})" for op, c in sorted(ops.items())
                           if c["xcviz"] < c["ort"]) or "none") + "."]
    return "\n".join(lines) + "\n"
