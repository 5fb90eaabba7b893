"""The Python API: real keyword parameters (no **kw), docstrings, hints that name parameters, the JAX extra named."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import xcviz

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join(ROOT, "graphs", "seed_demo.yaml")
API = ["load", "cluster", "stats", "explain", "render", "validate", "run", "calibrate", "diff", "parse_graph", "print_graph"]


@pytest.mark.parametrize("name", API)
def test_typed_keyword_parameters_and_a_docstring(name):
    fn = getattr(xcviz, name)
    sig = inspect.signature(fn)
    assert all(p.kind != p.VAR_KEYWORD for p in sig.parameters.values()), f"{name} takes **kw"
    assert all(p.annotation is not p.empty for p in sig.parameters.values())
    assert sig.return_annotation is not sig.empty and fn.__doc__
    assert name in xcviz.__all__


def test_hints_name_api_parameters_not_flags():
    g = xcviz.load(SEED)
    with pytest.raises(xcviz.XcvizError) as e:
        xcviz.run(g, {"x": np.ones((1, 3, 32, 32), np.float32)}, seed=None)
    assert "seed=0" in e.value.hint and "--" not in e.value.hint
    with pytest.raises(xcviz.XcvizError) as e:
        xcviz.load(os.path.join(ROOT, "graphs", "resnet_mini.onnx"), dims={"N": 0})
    assert "dims={" in e.value.hint and "--dim" not in e.value.hint
    with pytest.raises(xcviz.XcvizError) as e:
        xcviz.cluster(g, strategy="fast")
    assert "strategy='mark'" in e.value.hint


def test_the_calls_agree_with_the_commands():
    g = xcviz.load(SEED)
    c = xcviz.cluster(g, min_cluster_size=1)
    a = xcviz.analyse(SEED, xcviz.AnalysisOptions(min_cluster_size=1))
    assert c.clusters == a.clustering.clusters and xcviz.stats(g, c).boundary_bytes == a.stats.boundary_bytes
    assert xcviz.explain(g, c, "m1")["cluster"] == "cluster_0"
    assert xcviz.render(g, c, format="dot").startswith("digraph") and "<svg" in xcviz.render(g, c)
    assert xcviz.diff(a, a)["same"] is True
    out = xcviz.run(g, {"x": np.ones((1, 3, 32, 32), np.float32)}, mode="native")
    assert set(out) == set(g.outputs)


@pytest.mark.slow
def test_missing_jax_names_the_extra():
    code = ("import sys; sys.modules['jax'] = sys.modules['jaxlib'] = None\n"
            "import xcviz\n"
            "g = xcviz.load('graphs/seed_demo.yaml'); c = xcviz.cluster(g, min_cluster_size=1)\n"
            "print(xcviz.stats(g, c).clusters)\n"
            "try:\n    xcviz.validate(g, c)\nexcept xcviz.XcvizError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["2", "xcviz.validate needs JAX (hint: pip install 'xcviz[jax]')"]


@pytest.mark.slow
def test_commands_without_jax_say_which_extra():
    code = ("import sys; sys.modules['jax'] = sys.modules['jaxlib'] = None\n"
            "from xcviz.cli import main\n"
            "for args in (['validate', 'graphs/seed_demo.yaml'], ['run', 'graphs/seed_demo.yaml', '-o', sys.argv[1]],\n"
            "             ['run', 'graphs/seed_demo.yaml', '--mode', 'native', '-o', sys.argv[1]],\n"
            "             ['cluster', 'graphs/seed_demo.yaml', '--json', '-o', sys.argv[2]]):\n"
            "    try:\n        main(args)\n    except SystemExit as e:\n        print('EXIT', args[0], e.code)\n"
            "    else:\n        print('EXIT', args[0], 0)\n")
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([sys.executable, "-c", code, os.path.join(d, "o.npz"), os.path.join(d, "r.json")], cwd=ROOT,
                             capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": ROOT})
    assert [line for line in out.stdout.splitlines() if line.startswith("EXIT")] == \
        ["EXIT validate 2", "EXIT run 2", "EXIT run 0", "EXIT cluster 0"], out.stdout + out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("error")]
    assert errors == ["error: xcviz validate needs JAX (hint: pip install 'xcviz[jax]')",
                      "error: xcviz run needs JAX (hint: pip install 'xcviz[jax]')"]


def test_cluster_refuses_an_op_name_typo_as_the_command_line_does(tmp_path):
    import xcviz
    from xcviz.errors import XcvizError

    g = xcviz.load("graphs/seed_demo.yaml")
    with pytest.raises(XcvizError, match=r"^deny: unknown op 'reluu'") as e:
        xcviz.cluster(g, deny=["reluu"])
    assert "Relu" in e.value.hint
    assert xcviz.cluster(g, deny=["relu"], min_cluster_size=1).clusters  # a real op is taken
    # an op of the graph's own (opaque, loaded with allow_unknown) is a name the caller may use
    text = open("graphs/seed_demo.yaml", encoding="utf-8").read().replace("op: custom_nms", "op: my_nms")
    path = tmp_path / "own_op.yaml"
    path.write_text(text, encoding="utf-8")
    own = xcviz.load(str(path), allow_unknown=True)
    allowed = xcviz.cluster(own, allow=["my_nms"], min_cluster_size=1)
    assert allowed.cluster_of[[n.name for n in own.nodes].index("l1")] >= 0
    with pytest.raises(XcvizError, match="allow: unknown op 'my_nmz'"):
        xcviz.cluster(own, allow=["my_nmz"])
