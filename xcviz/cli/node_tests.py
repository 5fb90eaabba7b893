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


def run_case_cli(case, mode: str = "hybrid") -> tuple[str, str | None]:
    """('pass' | 'fail' | 'unsupported', why) for one case run by `xcviz run` in this process."""
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
        # --native numpy: the conformance of xcviz's own implementations (onnxruntime's DFT, say, is less exact)
        argv = ["run", path, "--inputs", feeds, "-o", out, "--mode", mode, "--native", "numpy", "--json", "--debug"]
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                main(argv)
        except Unsupported as e:
            return "unsupported", str(e)[:160]
        except XcvizError as e:
            return "fail", f"{e}"[:160]
        except SystemExit as e:
            return ("fail", f"exit {e.code}") if e.code else ("pass", None)
        except Exception as e:  # noqa: BLE001 - the table records every failure
            return "fail", f"{e.__class__.__name__}: {e}".splitlines()[0][:160]
        try:
            got = read_outputs(out)
        except (ValueError, TypeError, OSError) as e:  # an .npz numpy cannot read back is the command's failure
            return "fail", f"outputs.npz unreadable: {e.__class__.__name__}: {e}"[:160]
    for k, (o, exp) in enumerate(zip(model.graph.output, case.outputs)):
        why = check_output(case, _as_read(got, o.name, case_array(exp)), case_array(exp), f"output {k}")
        if why:
            return "fail", why
    return "pass", None


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


def run_sample(cases: list, mode: str = "hybrid", ort: bool = True) -> dict:
    """Counts per runner over the cases: {'cli': {...}, 'api': {...}, 'ort': {...}} and the CLI-only failures
    (cases the API passes and the command line does not)."""
    from ..conformance import run_case, run_case_ort

    counts: dict = {"cli": {}, "api": {}, "ort": {}}
    behind: list[str] = []
    for case in cases:
        api = run_case(case, "native")[0] if case.op else "unsupported"
        cli, why = run_case_cli(case, mode) if case.op else ("unsupported", "unknown op")
        for key, status in (("cli", cli), ("api", api)) + ((("ort", run_case_ort(case)[0]),) if ort else ()):
            counts[key][status] = counts[key].get(status, 0) + 1
        if api == "pass" and cli != "pass":
            behind.append(f"{case.name}: {cli}: {why}")
    return {"cases": len(cases), **counts, "cli_behind_api": behind}


CLI_HEADING = "## Through the command line"


def render_cli(result: dict, ort_version: str | None = None) -> str:
    """The section of docs/node_tests.md on the command line: run_sample's counts, and the cases it trails the API on."""
    rows = [("`xcviz run` (CLI, .npz in and out)", result["cli"]), ("xcviz API, native (conformance.run_case)", result["api"])]
    if result.get("ort"):
        rows.append((f"onnxruntime {ort_version or ''} CPU".replace("  ", " "), result["ort"]))
    behind = result["cli_behind_api"]
    lines = ["", CLI_HEADING, "",
             f"A fixed sample of {result['cases']} cases (`xcviz.cli.node_tests.sample`: every case ordered by name, "
             "taken at even steps), each run as a user runs it: the model as an `.onnx` file, its inputs in an `.npz` "
             "written by xcviz (bfloat16, float8 and int4 tensors keep their ml_dtypes names; a sequence as numbered "
             "tensors `s[0]`, `s[1]`, ...), `xcviz run model.onnx --inputs inputs.npz -o outputs.npz` in-process "
             "(mode hybrid), and the outputs read back from the `.npz` by numpy with ml_dtypes. Nothing is folded "
             "beforehand: shape-deciding inputs (Reduce axes, Split sizes, ...) arrive as arrays.", "",
             "| runner | pass | unsupported | fail |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {c.get('pass', 0)} | {c.get('unsupported', 0)} | {c.get('fail', 0)} |" for name, c in rows]
    lines += ["", "Cases the API passes and the command line does not: " + (", ".join(behind) if behind else "none") + "."]
    return "\n".join(lines) + "\n"
