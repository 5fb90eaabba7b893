"""Trust (issue 26): opening a model file never runs its code or exhausts the machine.

The files are tests/hostile/ (written by tools/make_hostile.py; their one-line verdicts per command are in
cases.yaml, run by test_hostile.py). Here: every pickle payload (it creates MARKER in the current folder when
unpickled) stays inert through every command unless the user opts in with --trust-pickle, and each hostile
file ends in one line and exit 2 in a subprocess held to 1.5 GiB of address space and a time limit, with
nothing written to its -o target. Then outputs that stay data: JUnit XML and CSV cells built from names."""
from __future__ import annotations

import csv
import io
import json
import os
import resource
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from tests.loaders.test_hostile import COMMANDS, HOSTILE, ROOT, argv_for, assert_one_error_line

MARKER = "xcviz-pickle-ran"  # = tools/make_hostile.MARKER
PICKLED = ["pt2_pickled_weight.pt2", "pt2_pickled_constant.pt2", "pt2_legacy_weights.pt2", "pt2_sample_inputs.pt2"]
ADDRESS_SPACE = 3 * 1024**3 // 2  # 1.5 GiB: every file here declares more than that


def _argv(command: str, path: str, tmp) -> list[str]:
    argv = argv_for(command, path, "relu")
    if command == "check":
        argv += ["--min-coverage", "0", "--junit", str(tmp / "out.xml")]
    if command == "export":
        argv += ["--model-explorer", str(tmp / "me")]
    return argv


@pytest.mark.slow  # (needs torch)
@pytest.mark.parametrize("command", [*COMMANDS, "sweep", "diff-files"])
def test_pickle_never_runs_without_the_opt_in(command, run_cli, monkeypatch, tmp_path):
    """Every command that reads a .pt2, on every file holding a pickle: the payload never runs; without the
    opt-in, XCVIZ_PT2=torch (torch.export.load for every file) is refused too."""
    pytest.importorskip("torch", reason="reading a .pt2 needs torch")
    monkeypatch.chdir(tmp_path)  # (the payload writes MARKER into the current folder)
    for name in PICKLED:
        path = os.path.join(HOSTILE, name)
        for env in (None, "torch"):
            if env:
                monkeypatch.setenv("XCVIZ_PT2", env)
            else:
                monkeypatch.delenv("XCVIZ_PT2", raising=False)
            if command == "sweep":
                argv = ["sweep", path, "--json"]
            elif command == "diff-files":
                argv = ["diff", path, path]
            else:
                argv = _argv(command, path, tmp_path)
            code, out, err = run_cli(*argv)
            assert not os.path.exists(MARKER), f"{command} {name} XCVIZ_PT2={env}: the pickle ran"
            if env or name != "pt2_sample_inputs.pt2":
                if command == "sweep":  # (a sweep reports a failed model as a row, and exits 1)
                    assert code == 1 and "--trust-pickle" in json.loads(out)["rows"][0]["error"]
                    continue
                line = assert_one_error_line(err)
                if "needs JAX" in line:  # (refused before reading the file: nothing to prove here)
                    continue
                assert code == 2 and "--trust-pickle" in line, line
                if env:
                    assert "XCVIZ_PT2=torch" in line, line


@pytest.mark.slow  # (needs torch)
def test_export_model_explorer_ids_come_from_xcviz_reader(run_cli, monkeypatch, tmp_path):
    """`export --model-explorer` of a .pt2 xcviz reads: the overlays are written, keyed by the fx names, and the
    file's pickle (its sample inputs) is never read."""
    pytest.importorskip("torch", reason="reading a .pt2 needs torch")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("export", os.path.join(HOSTILE, "pt2_sample_inputs.pt2"), "--model-explorer", "me",
                           "--min-cluster-size", "1")
    assert code == 0, err
    with open(os.path.join("me", "pt2_sample_inputs.cluster.json"), encoding="utf-8") as f:
        overlay = json.load(f)
    assert set(json.dumps(overlay).split('"')) >= {"add", "relu"}
    assert not os.path.exists(MARKER)


@pytest.mark.slow  # (needs torch)
def test_the_opt_in_is_the_only_way_the_payload_runs(run_cli, monkeypatch, tmp_path):
    """With --trust-pickle (trust_pickle=True) torch.export.load reads what xcviz's reader refuses, and the
    payload runs: the corpus's pickles are live, and the opt-in is the path that reaches them."""
    pytest.importorskip("torch", reason="reading a .pt2 needs torch")
    import xcviz
    from xcviz.errors import XcvizError

    monkeypatch.chdir(tmp_path)
    path = os.path.join(HOSTILE, "pt2_pickled_weight.pt2")
    with pytest.raises(XcvizError, match="is a pickle"):
        xcviz.load(path)
    assert not os.path.exists(MARKER)
    with pytest.raises(XcvizError):  # (the payload returns a file, not a tensor: torch then fails, in one line)
        xcviz.load(path, trust_pickle=True)
    assert os.path.exists(MARKER)
    os.unlink(MARKER)
    code, _, err = run_cli("cluster", path, "--trust-pickle")
    assert code == 2 and "torch.export.load failed" in assert_one_error_line(err)
    assert os.path.exists(MARKER)
    os.unlink(MARKER)
    monkeypatch.setenv("XCVIZ_PT2", "torch")  # torch for every file: even the sample inputs are unpickled
    run_cli("cluster", os.path.join(HOSTILE, "pt2_sample_inputs.pt2"), "--trust-pickle")
    assert os.path.exists(MARKER)


with open(os.path.join(HOSTILE, "cases.yaml"), encoding="utf-8") as _f:
    _ALL = yaml.safe_load(_f)
CASES = [c for c in _ALL
         if c["exit"] == 2 and c["file"].startswith(("pt2_", "tf_", "sm_", "xcir_")) and not c.get("args")]


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_bounded_one_line_nothing_written(case, tmp_path):
    """In a subprocess held to 1.5 GiB of address space and 120 s: exit 2, exactly one line on stderr (no
    warning of torch's or TF's before it), the -o target never written, the pickle marker never made."""
    if case.get("needs"):
        pytest.importorskip(case["needs"], reason=f"reading {case['file']} needs {case['needs']}")
    out = tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("XCVIZ_PT2", None)
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "xcviz", "cluster", os.path.join(HOSTILE, case["file"]), "-o", str(out)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
                       preexec_fn=_limit_address_space)
    seconds = time.monotonic() - start
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    line = assert_one_error_line(r.stderr)
    for fragment in case.get("error", []):
        assert fragment in line, line
    assert sorted(os.listdir(tmp_path)) == [], "something was written"
    assert seconds < 60, f"{seconds:.0f} s"


# ---- outputs that stay data ----------------------------------------------------------------------------------
HOSTILE_NAMES = ["ctl\x01\x02\x08", "esc\x1b[31m", "nul\x00byte", "bom\ufeff\ufffe\uffff", "<tag a='1'>&amp;",
                 "]]>", "=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1)", "\tlead", "\rlead"]


def _names_graph(tmp_path) -> str:
    nodes, prev = [], "x"
    for name in HOSTILE_NAMES:
        nodes.append({"name": name, "op": "custom_nms", "inputs": [prev], "shape": [2], "dtype": "float32"})
        prev = name
    graph = {"name": "=evil", "inputs": [{"name": "x", "shape": [2], "dtype": "float32"}], "nodes": nodes,
             "outputs": [prev]}
    path = tmp_path / "names.json"
    path.write_text(json.dumps(graph), encoding="utf-8")
    return str(path)


def test_junit_is_valid_xml_for_any_name(run_cli, tmp_path):
    path = _names_graph(tmp_path)
    junit = tmp_path / "out.xml"
    # (a NUL cannot pass the command line; the flag's names are stripped of blanks and split at commas)
    expect = ",".join(n for n in HOSTILE_NAMES if "\x00" not in n and n == n.strip() and "," not in n)
    code, _, err = run_cli("check", path, "--min-coverage", "0.5", "--expect-cluster", expect, "--no-fallback-op",
                           "custom_nms", "--junit", str(junit))
    assert code == 1, err
    root = ET.parse(junit).getroot()  # raises on any character XML cannot hold
    text = ET.tostring(root, encoding="unicode")
    cases = root.findall(".//testcase")
    assert len(cases) == 3 and len(root.findall(".//failure")) == 3
    assert "\\x1b[31m" in text and "\\x01" in text and "\\uffff" in text  # escaped visibly, not dropped
    values = " ".join(v for e in root.iter() for v in (e.text or "", *e.attrib.values()))
    assert "<tag a='1'>&amp;" in values and "]]>" in values  # markup stays text


def test_sweep_csv_cells_never_start_a_formula(run_cli, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    names = ["=HYPERLINK(1).json", "+1.json", "-1.json", "@A1.json"]
    graph = Path(_names_graph(tmp_path)).read_text(encoding="utf-8")
    for name in names:
        (tmp_path / name).write_text(graph, encoding="utf-8")
    (tmp_path / "=bad.yaml").write_text("nodes: [", encoding="utf-8")
    code, out, err = run_cli("sweep", "--csv", "--set", "strategy=greedy", "--set", "strategy=mark", "--",
                             *names, "=bad.yaml")
    assert code == 1, err
    rows = list(csv.reader(io.StringIO(out)))
    cells = [c for row in rows[1:] for c in row]
    assert cells and not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r") or
                          (c[:1] == "-" and not c.lstrip("-").replace(".", "", 1).isdigit())]
    assert "'=HYPERLINK(1).json" in cells and "'=bad.yaml" in cells
    error = next(row[rows[0].index("error")] for row in rows if row[0] == "'=bad.yaml")
    assert error.startswith("'=bad.yaml:") and "malformed YAML" in error
    assert [float(c) for c in (row[4] for row in rows[1:] if row[4])], "numbers stay numbers"


def test_npz_inputs_declaring_more_than_they_hold(run_cli, tmp_path):
    """An --inputs .npz is a zip of .npy files; numpy allocates an array from its header alone, so a header
    declaring 10^12 elements is refused before np.load sees it."""
    import zipfile

    import numpy as np

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (10**12,)})
    evil = tmp_path / "evil.npz"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("x.npy", buf.getvalue() + b"\0" * 16)
    code, _, err = run_cli("cluster", os.path.join(ROOT, "graphs", "seed_demo.yaml"), "--inputs", str(evil))
    line = assert_one_error_line(err)
    assert code == 2 and "array 'x' declares 1,000,000,000,000 elements" in line, line
