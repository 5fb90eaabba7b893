"""GRAPH `-` reads the graph from stdin: every format sniffed (or named by --format), reports and errors call it <stdin>."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from tests.cli.test_diff import run
from tests.support.paths import GRAPHS, ROOT



def feed(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


@pytest.mark.parametrize("name", ["seed_demo.yaml", "tiny_mlp_onnx.json", "resnet_mini.onnx"])
def test_stdin_equals_the_file(capsys, monkeypatch, name):
    path = os.path.join(GRAPHS, name)
    code, from_file, _ = run(capsys, "cluster", path, "--json", "--min-cluster-size", "1")
    assert code == 0
    feed(monkeypatch, open(path, "rb").read())
    code, from_stdin, err = run(capsys, "cluster", "-", "--json", "--min-cluster-size", "1")
    assert code == 0, err
    a, b = json.loads(from_file), json.loads(from_stdin)
    assert b["graph"]["source"] == "<stdin>"
    a["graph"]["source"] = b["graph"]["source"]
    if name.endswith(".yaml"):  # a YAML graph without `name:` is named after its file
        a["graph"]["name"] = b["graph"]["name"]
    assert a == b


def test_xcir_text_from_stdin(capsys, monkeypatch):
    code, text, _ = run(capsys, "print", os.path.join(GRAPHS, "seed_demo.yaml"), "--plain")
    assert code == 0
    feed(monkeypatch, text.encode())
    code, out, err = run(capsys, "stats", "-", "--json")
    assert code == 0, err
    assert json.loads(out)["stats"]["nodes"] == 6


def test_errors_name_stdin_not_a_temporary_file(capsys, monkeypatch):
    feed(monkeypatch, b"nodes: [\n")
    code, _, err = run(capsys, "cluster", "-")
    assert code == 2 and err.startswith("error: <stdin>:2") and "tmp" not in err
    feed(monkeypatch, open(os.path.join(GRAPHS, "seed_demo.yaml"), "rb").read())
    code, _, err = run(capsys, "cluster", "-", "--format", "onnx")
    assert code == 2 and "<stdin>" in err and "ONNX" in err
    code, _, err = run(capsys, "cluster", os.path.join(GRAPHS, "seed_demo.yaml"), "--format", "yaml")
    assert code == 2 and "--format is for a graph read from stdin" in err


@pytest.mark.slow
def test_real_pipe():
    with open(os.path.join(GRAPHS, "seed_demo.yaml"), "rb") as f:
        out = subprocess.run([sys.executable, "-m", "xcviz", "check", "-", "--min-cluster-size", "1", "--expect-cluster", "c1,m1"],
                             stdin=f, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    assert "1/1 expectations hold" in out.stdout
