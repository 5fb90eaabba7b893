"""Hostile and broken input (issue 6): every bad file gets exactly one clear error, from every command.

The corpus lives in tests/hostile/ with its expectations in tests/hostile/cases.yaml. The commands are
discovered from the typer app, so a new command that takes a GRAPH argument is covered automatically.
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
import typer
import yaml

from xcviz.cli import app
from tests.support.paths import ROOT

HOSTILE = os.path.join(ROOT, "tests", "hostile")
CASES = yaml.safe_load(open(os.path.join(HOSTILE, "cases.yaml"), encoding="utf-8"))


def graph_commands() -> dict:
    """Every registered command with a GRAPH argument (cluster, stats, explain, render, validate, run, hlo, ...)."""
    import xcviz.cli  # noqa: F401 - registers every command module on the app

    group = typer.main.get_command(app)
    return {name: cmd for name, cmd in sorted(group.commands.items())
            if any(p.name == "graph" and p.param_type_name == "argument" for p in cmd.params)}


COMMANDS = graph_commands()


def argv_for(command: str, graph: str, node: str = "a") -> list[str]:
    """The command with its required arguments and options filled with placeholders."""
    argv = [command]
    for p in COMMANDS[command].params:
        if p.param_type_name == "argument":  # typer may vendor its own click: compare by kind, not class
            argv.append(graph if p.name == "graph" else node)
        elif p.required and p.param_type_name == "option":
            argv += [p.opts[0], "0"]  # e.g. hlo --cluster 0
    return argv


def _id(case: dict) -> str:
    return case["file"].rsplit("/", 1)[-1] + ("+" + "".join(case["args"]) if case.get("args") else "")


def _takes(command: str, args: list[str]) -> bool:
    """Whether the command has every --flag a case passes (a limit not yet wired into a new command is skipped)."""
    opts = {o for p in COMMANDS[command].params for o in getattr(p, "opts", [])}
    return all(a in opts for a in args if a.startswith("--"))


# commands that read one kind of file only (compare-fx: torch.export programs) refuse every corpus file
# with one line naming it (test_one_kind_only), instead of the case's own verdict
ONE_KIND_ONLY = {"compare-fx"}
# (a case whose reader needs an extra, torch, is in the slow tier with every other test that needs one)
PARAMS = [pytest.param(case, command, id=f"{_id(case)}-{command}", marks=[pytest.mark.slow] if case.get("needs") else [])
          for case in CASES for command in (case.get("commands") or COMMANDS)
          if command in COMMANDS and command not in ONE_KIND_ONLY and _takes(command, case.get("args", []))]


def assert_one_error_line(err: str, max_len: int = 1500) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected exactly one error line, got:\n{err}"
    line = lines[0]
    assert line.startswith("error: "), line
    assert "Traceback" not in err and "internal error" not in line, line
    assert len(line) <= max_len, f"error line of {len(line)} characters"
    return line


# commands that refuse to run without being told what to do (before reading the file): the least choice
_NEEDS_A_CHOICE = {
    "check": lambda tmp: ["--min-coverage", "0"],
    "export": lambda tmp: ["--model-explorer-graph", str(tmp / "me.json")],
}


@pytest.mark.parametrize("case,command", PARAMS)
def test_corpus(case, command, run_cli, monkeypatch, tmp_path):
    if case.get("needs"):
        pytest.importorskip(case["needs"], reason=f"reading {case['file']} needs {case['needs']}")
    monkeypatch.chdir(ROOT)
    path = os.path.relpath(os.path.normpath(os.path.join(HOSTILE, case["file"])), ROOT)
    extra = _NEEDS_A_CHOICE.get(command, lambda _: [])(tmp_path)
    code, out, err = run_cli(*argv_for(command, path, case.get("node", "a")), *extra, *case.get("args", []))
    if case["exit"] == 0:
        assert code == 0, err
        for fragment in case.get("stdout", []) if command in ("cluster", "explain") else []:
            assert fragment in out, f"{fragment!r} not printed literally"
        return
    line = assert_one_error_line(err, case.get("max_len", 1500))
    assert code == case["exit"], line
    assert path in line, f"the error does not name the file: {line}"
    for fragment in case.get("error", []):
        assert fragment in line, line
    if case.get("error_any"):
        assert any(fragment in line for fragment in case["error_any"]), line
    if case.get("where"):
        assert case["where"] in line, line
    if case.get("hint"):
        assert "(hint: " in line, line
    assert out == "" or command not in ("cluster", "stats", "explain"), "nothing on stdout after an error"


def test_commands_discovered():
    assert {"cluster", "stats", "explain"} <= set(COMMANDS)
    assert "ops" not in COMMANDS


def test_python_tags_never_execute(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    if os.path.exists("/tmp/xcviz-pwned"):
        os.unlink("/tmp/xcviz-pwned")
    code, _, _ = run_cli("cluster", "tests/hostile/python_tag.yaml")
    assert code == 2 and not os.path.exists("/tmp/xcviz-pwned")


@pytest.mark.slow
def test_debug_shows_traceback(monkeypatch):
    r = subprocess.run([sys.executable, "-m", "xcviz", "cluster", "tests/hostile/cycle.yaml", "--debug"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "Traceback" in r.stderr and "XcvizError" in r.stderr
    r = subprocess.run([sys.executable, "-m", "xcviz", "cluster", "tests/hostile/cycle.yaml"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1


# ---- ONNX external data: symlinks out of the folder -------------------------------------------
def test_onnx_external_symlink_out_of_folder(run_cli, tmp_path):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.zeros(6, np.float32).tobytes())
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    os.symlink(secret, model_dir / "weights.bin")
    t = numpy_helper.from_array(np.zeros((2, 3), np.float32), "w")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "weights.bin"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g", [x], [y], initializer=[t])
    path = model_dir / "m.onnx"
    onnx.save(helper.make_model(g), str(path))
    code, _, err = run_cli("cluster", str(path))
    line = assert_one_error_line(err)
    assert code == 2 and "points outside the model's folder" in line and "'weights.bin'" in line
    # the same model with the weights really inside the folder loads
    os.unlink(model_dir / "weights.bin")
    (model_dir / "weights.bin").write_bytes(np.zeros(6, np.float32).tobytes())
    code, _, err = run_cli("stats", str(path))
    assert code == 0, err


# ---- size: deep chains load, a million junk nodes fail fast ------------------------------------
def _chain(n: int) -> str:
    lines = ["inputs: [{name: x, shape: [4, 8], dtype: float32}]", "nodes:"]
    prev = "x"
    for i in range(n):
        lines.append(f"  - {{name: n{i}, op: {'relu' if i % 7 else 'custom_nms'}, inputs: [{prev}], shape: [4, 8], dtype: float32}}")
        prev = f"n{i}"
    return "\n".join(lines + [f"outputs: [{prev}]", ""])


@pytest.mark.slow
def test_10000_deep_chain_succeeds(run_cli, write_graph):
    path = write_graph(_chain(10_000), "chain.yaml")
    for command in ("cluster", "stats"):
        code, out, err = run_cli(command, path, "--json", "--strategy", "greedy" if command == "stats" else "mark")
        assert code == 0, err
        json.loads(out)
    code, out, err = run_cli("explain", path, "n9999")
    assert code == 0, err


@pytest.mark.slow
def test_million_junk_nodes_fail_fast_with_bounded_memory(tmp_path):
    """10^6 nodes: refused by --max-nodes before any node is built, and junk refused at the first node."""
    junk = tmp_path / "junk.json"
    with open(junk, "w") as f:
        f.write('{"nodes": [')
        f.write(",".join(['{"name": "n", "op": 7}'] * 1_000_000))
        f.write("]}")
    script = (
        "import resource, sys, time\n"
        "from xcviz.cli import main\n"
        "t = time.time()\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit as e:\n"
        "    code = e.code\n"
        "rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024\n"
        "print(f'code={code} seconds={time.time() - t:.1f} rss_mib={rss}', file=sys.stderr)\n"
    )
    for extra, expected in (([], "node 'n': node `op` must be a string"), (["--max-nodes", "100000"], "over the limit of 100000")):
        r = subprocess.run([sys.executable, "-c", script, "cluster", str(junk), *extra], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 2, r.stderr
        assert lines[0].startswith("error: ") and expected in lines[0], lines[0]
        stats = dict(kv.split("=") for kv in lines[1].split())
        assert stats["code"] == "2"
        assert float(stats["seconds"]) < 30
        assert int(stats["rss_mib"]) < 1500, stats  # the file is 24 MB; parsed JSON ~ 0.5 GB at most


# ---- output paths -------------------------------------------------------------------------------
def _output_commands() -> list[str]:
    return [n for n, c in COMMANDS.items() if any(p.name == "output" for p in c.params) and n in ("cluster", "stats", "explain")]


@pytest.mark.parametrize("command", _output_commands())
def test_output_path_refusals(command, run_cli, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    seed = os.path.join(tmp_path, "seed.yaml")
    with open(os.path.join(ROOT, "graphs", "seed_demo.yaml"), "rb") as src, open(seed, "wb") as dst:
        dst.write(src.read())
    before = open(seed, "rb").read()
    base = argv_for(command, seed, "c1")
    for target, fragment in ((str(tmp_path), "output path is a directory"), (seed, "refusing to write over an input file"),
                             (str(tmp_path / "no" / "such" / "dir.json"), "output folder does not exist")):
        for fmt in ([], ["--json"]):
            code, _, err = run_cli(*base, *fmt, "-o", target)
            line = assert_one_error_line(err)
            assert code == 2 and fragment in line, line
    assert open(seed, "rb").read() == before
    if os.geteuid() != 0:  # root ignores permissions
        locked = tmp_path / "locked"
        locked.mkdir()
        os.chmod(locked, stat.S_IRUSR | stat.S_IXUSR)
        try:
            code, _, err = run_cli(*base, "-o", str(locked / "out.json"))
            assert code == 2 and "not writable" in assert_one_error_line(err)
        finally:
            os.chmod(locked, stat.S_IRWXU)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".xcviz-")]


def test_unwritable_output_folder(monkeypatch, tmp_path):
    """A folder the user may not write to (simulated: os.access says no, as for a non-root user)."""
    from xcviz import fileio
    from xcviz.errors import XcvizError

    monkeypatch.setattr(fileio.os, "access", lambda *a, **k: False)
    with pytest.raises(XcvizError, match="not writable"):
        fileio.write_atomic(str(tmp_path / "out.json"), "{}")


def test_failed_write_leaves_nothing(monkeypatch, tmp_path):
    from xcviz import fileio

    target = tmp_path / "out.json"
    target.write_text("old")

    class Boom(Exception):
        pass

    real_fdopen = os.fdopen

    def fdopen(fd, mode):
        f = real_fdopen(fd, mode)
        orig = f.write

        def write(data):
            orig(data[: len(data) // 2])
            raise Boom("disk full")

        f.write = write
        return f

    monkeypatch.setattr(fileio.os, "fdopen", fdopen)
    with pytest.raises(Boom):
        fileio.write_atomic(str(target), "x" * 1000)
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.json"]


# ---- markup injection -----------------------------------------------------------------------------
def test_markup_is_literal_in_tables_and_valid_in_json(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    data = yaml.safe_load(open("tests/hostile/markup.yaml", encoding="utf-8"))
    names = [n["name"] for n in data["nodes"]]
    code, out, err = run_cli("cluster", "tests/hostile/markup.yaml", "--json", "--min-cluster-size", "1")
    assert code == 0, err
    report = json.loads(out)
    assert set(names) <= set(report["nodes"])
    code, out, err = run_cli("cluster", "tests/hostile/markup.yaml", "--min-cluster-size", "1")
    assert code == 0, err
    assert "[bold]boom[/bold]" in out and "[link=" not in out  # attrs are not shown; names are, literally
    assert "\x1b[31m" not in out and "\x07" not in out  # control characters never reach the terminal raw
    code, out, err = run_cli("explain", "tests/hostile/markup.yaml", "[bold]boom[/bold]", "--json")
    assert code == 0 and json.loads(out)
    # error messages quote hostile names instead of interpreting them
    code, _, err = run_cli("explain", "tests/hostile/markup.yaml", "[red]nope[/red]\x1b[2J")
    line = assert_one_error_line(err)
    assert code == 2 and "[red]nope[/red]" in line and "\x1b" not in err


@pytest.mark.parametrize("case", [pytest.param(c, id=_id(c), marks=[pytest.mark.slow] if c.get("needs") else [])
                                  for c in CASES])
@pytest.mark.parametrize("command", sorted(ONE_KIND_ONLY & set(COMMANDS)))
def test_one_kind_only(case, command, run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    if case.get("needs"):
        pytest.importorskip(case["needs"], reason=f"reading {case['file']} needs {case['needs']}")
    path = os.path.relpath(os.path.normpath(os.path.join(HOSTILE, case["file"])), ROOT)
    code, out, err = run_cli(*argv_for(command, path), *case.get("args", []))
    if case["file"].endswith(".pt2") and case["exit"] == 0:  # its own kind: compared, as any other program
        assert code == 0, err
        return
    line = assert_one_error_line(err)
    assert code == 2 and path in line, line
