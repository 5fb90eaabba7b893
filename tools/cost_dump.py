"""Dump `xcviz stats` and `xcviz cluster` (JSON, and the stats table) for a fixed sample of graphs under several
hardware profiles, one file per (graph, options, command), to check that a change to the cost model's code
leaves every number byte-identical.

    python tools/cost_dump.py OUT_DIR            # dump
    diff -r BEFORE_DIR AFTER_DIR                 # compare two dumps

The sample: every graph in graphs/, and from tests/data ONNX exports, torch .pt2 (and their ONNX), TF 1.x and
Keras GraphDefs (.pb), a SavedModel with a constant cluster once --inputs binds its batch. The options: the
default profile (calibrated, per program runtime), gpu, tpu, cpu_torch, a calibrated profile without session
overhead (benchmarks/cpu_calibrated_r4.yaml) and a measured roofline profile
(benchmarks/cost_roofline_calibrated.yaml). Runs the CLI in-process (one interpreter: no start-up per call)."""
from __future__ import annotations

import contextlib
import glob
import io
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

OPTIONS = {
    "default": [],
    "gpu": ["--hardware", "gpu"],
    "tpu": ["--hardware", "tpu"],
    "cpu_torch": ["--hardware", "cpu_torch"],
    "cal_r4": ["--hardware", os.path.join(ROOT, "benchmarks", "cpu_calibrated_r4.yaml")],
    "roofline_measured": ["--hardware", os.path.join(ROOT, "benchmarks", "cost_roofline_calibrated.yaml")],
}


def sample() -> list[tuple[str, list[str]]]:
    """(graph path, extra args) pairs."""
    d = lambda *p: os.path.join(ROOT, *p)  # noqa: E731
    paths = sorted(glob.glob(d("graphs", "*")))
    paths += sorted(glob.glob(d("tests", "data", "exports", "*.onnx")))
    paths += sorted(glob.glob(d("tests", "data", "torch_corpus", "*.onnx")))
    paths += sorted(glob.glob(d("tests", "data", "torch_corpus", "*.pt2")))
    paths += [d("tests", "data", "llama", "llama32.pt2")]
    paths += sorted(glob.glob(d("tests", "data", "tf1", "*.pb")))
    paths += sorted(glob.glob(d("tests", "data", "tf_keras", "*_frozen.pb")))[:8]
    paths += sorted(glob.glob(d("tests", "data", "tf_keras", "*_lowered.pb")))
    out = [(p, []) for p in paths]
    # with their inputs bound (--inputs): static shapes, so the times are numbers rather than unknown
    exports = sorted(glob.glob(d("tests", "data", "exports", "*.onnx")))
    out += [(p, ["--inputs", p[:-len(".onnx")] + ".inputs.npz"]) for p in exports]
    out.append((d("tests", "data", "tf_keras", "shape_chain_savedmodel"), []))
    return out


def shape_chain_inputs() -> str:
    """The shape chain's input as --inputs wants it, at a fixed path (the path may appear in the output)."""
    import numpy as np
    io_ = np.load(os.path.join(ROOT, "tests", "data", "tf_keras", "shape_chain_io.npz"))
    path = os.path.join(tempfile.gettempdir(), "xcviz_cost_dump_shape_chain_x.npz")
    np.savez(path, x=io_["in_x"])
    return path


def run(args: list[str]) -> str:
    from xcviz.cli import main
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return f"exit {code}\n--- stdout\n{out.getvalue()}--- stderr\n{err.getvalue()}"


def main(folder: str) -> None:
    os.makedirs(folder, exist_ok=True)
    cases = sample()
    cases.append((cases[-1][0], ["--inputs", shape_chain_inputs()]))
    n = 0
    for path, extra in cases:
        name = os.path.relpath(path, ROOT).replace(os.sep, "__") + ("__inputs" if extra else "")
        for opt, args in OPTIONS.items():
            for cmd in (["stats", "--json"], ["cluster", "--json"]) + ((["stats"],) if opt == "default" else ()):
                text = run([cmd[0], path, *extra, *args, *cmd[1:]])
                with open(os.path.join(folder, f"{name}.{opt}.{'_'.join(cmd)}.txt"), "w", encoding="utf-8") as f:
                    f.write(text)
                n += 1
    print(f"{len(cases)} graphs x {len(OPTIONS)} options: {n} outputs in {folder}")


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: python tools/cost_dump.py OUT_DIR")
    main(sys.argv[1])
