"""The command line's surface: Ctrl-C, --version, completion, help, flag validation, the README's quick start."""
import os
import signal
import subprocess
import sys
import time

import pytest
from tests.support.paths import ROOT

SEED = os.path.join("graphs", "seed_demo.yaml")

# Runs `xcviz ARGS...` as the console script does, holding still at the first cluster's compile step
# (touching FLAG there) so that the test's SIGINT lands inside the work, never before or after it.
_HELD_XCVIZ = """
import signal, sys, time
# Ctrl-C as at a terminal: a shell without job control starts background jobs with SIGINT ignored, and a
# child inherits that (Python then installs no KeyboardInterrupt handler)
signal.signal(signal.SIGINT, signal.default_int_handler)
import xcviz.cli.running as running

flag = sys.argv[1]

class Held(running.LazyProgress):
    def __call__(self, done, total, what):
        open(flag, "w").close()
        end = time.monotonic() + 120
        while time.monotonic() < end:
            time.sleep(0.01)

running.LazyProgress = Held
sys.argv = ["xcviz", *sys.argv[2:]]
from xcviz.cli.entry import run
run()
"""


@pytest.mark.slow
def test_sigint_during_validate_exits_130_and_writes_nothing(tmp_path):
    flag, out = tmp_path / "inside", tmp_path / "report.json"
    env = {**os.environ, "PYTHONPATH": ROOT}
    p = subprocess.Popen([sys.executable, "-c", _HELD_XCVIZ, str(flag), "validate", SEED, "--min-cluster-size", "1",
                          "--json", "-o", str(out)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        deadline = time.monotonic() + 180
        while not flag.exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert flag.exists(), p.communicate(timeout=5)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == "error: interrupted" and "Traceback" not in stderr
    assert stdout == "" and sorted(os.listdir(tmp_path)) == ["inside"]  # no report, no temp file


def test_interrupt_in_process_is_130(run_cli, monkeypatch):
    import xcviz.cli.analysis as analysis

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(analysis, "analyse", interrupted)
    code, out, err = run_cli("cluster", SEED)
    assert code == 130 and err.strip() == "error: interrupted" and out == ""


def _xcviz(*args, env=None):
    return subprocess.run([sys.executable, "-m", "xcviz", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": ROOT, "COLUMNS": "100", **(env or {})})


def test_version(run_cli):
    import xcviz

    for flag in ("--version", "-V"):
        code, out, err = run_cli(flag)
        assert code == 0 and out == f"xcviz {xcviz.__version__}\n" and err == ""


@pytest.mark.slow
def test_shell_completion_is_offered_and_completes():
    top = _xcviz("-h").stdout
    assert "--install-completion" in top and "--show-completion" in top
    script = subprocess.run(["bash", "-c", f"'{sys.executable}' -m xcviz --show-completion; exit $?"], capture_output=True,
                            text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})  # the shell is the parent's
    assert script.returncode == 0 and "_XCVIZ_COMPLETE=complete_bash" in script.stdout
    words = {"COMP_CWORD": "1", "_XCVIZ_COMPLETE": "complete_bash"}
    assert _xcviz(env={**words, "COMP_WORDS": "xcviz clu"}).stdout.split() == ["cluster"]
    words = {"COMP_CWORD": "4", "_XCVIZ_COMPLETE": "complete_bash"}
    assert _xcviz(env={**words, "COMP_WORDS": f"xcviz cluster {SEED} --strategy "}).stdout.split() == ["mark", "greedy", "cost"]


def test_help_shows_choices_metavars_limits_and_whole_summaries(run_cli):
    import xcviz.cli as cli

    code, top, _ = run_cli("-h")
    assert code == 0 and "..." not in top.split("\nCommands:\n")[1]
    for info in cli.app.registered_commands:  # each summary in full, however it is wrapped
        first = info.callback.__doc__.split("\n\n")[0]
        assert "".join(first.split()) in "".join(top.split())  # the wrapping may break at a hyphen
    code, out, _ = run_cli("cluster", "--help")
    assert code == 0
    for text in ("Usage: xcviz cluster [OPTIONS] GRAPH\n", "--strategy [mark|greedy|cost]", "--device [cpu|gpu|tpu]",
                 "--dim NAME=SIZE", "--allow OP[,OP...]", "-o, --output FILE"):
        assert text in out, text
    for text in ("<str>", "<int>", "<list[str]>", "{graph}", "{GRAPH}"):
        assert text not in out, text
    options, limits = out.split("\nLimits:\n")
    assert not any(f in options for f in ("--max-nodes", "--max-depth", "--max-elements"))
    assert all(f in limits for f in ("--max-nodes", "--max-file-bytes", "--max-depth", "--max-alias-expansion",
                                     "--max-elements"))
    code, out, _ = run_cli("run", "--help")
    assert "--mode [hybrid|native|jit]" in out and "--max-elements N" in out.split("\nLimits:\n")[1]


BLOCK = os.path.join("graphs", "transformer_block.yaml")  # symbolic batch and seq


@pytest.mark.parametrize("args, text", [
    ([BLOCK, "--dim", "seqq=4"], "transformer_block.yaml: --dim seqq: the graph has no dimension 'seqq' "
                                 "(hint: did you mean 'seq'?)"),
    ([SEED, "--dim", "batch=1"], "--dim batch: the graph has no dimension 'batch'"),
    ([BLOCK, "--dim", "seq=0"], "bad --dim 'seq=0' (hint: sizes are positive integers"),
    ([BLOCK, "--dim", "seq=-3"], "bad --dim 'seq=-3'"),
    ([SEED, "--allow", "Frob"], "--allow: unknown op 'Frob' (hint: see `xcviz ops`; an op the registry does not "
                                "know needs --allow-unknown)"),
    ([SEED, "--deny", "relu,Convv"], "--deny: unknown op 'Convv' (hint: did you mean"),
])
def test_every_flag_is_validated(run_cli, monkeypatch, args, text):
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli("cluster", *args)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("error: ") and text in err, err


def test_valid_dims_and_op_names_still_work(run_cli, monkeypatch):
    from xcviz import AnalysisOptions, XcvizError

    monkeypatch.chdir(ROOT)
    assert run_cli("cluster", BLOCK, "--dim", "seq=16", "--dim", "batch=2", "--json")[0] == 0
    # aliases in any spelling; with --allow-unknown a name may be an op of the file's own
    assert run_cli("cluster", SEED, "--allow", "Conv,RELU", "--deny", "MatMul", "--json")[0] == 0
    assert run_cli("cluster", SEED, "--allow", "Frob", "--allow-unknown", "--json")[0] == 0
    with pytest.raises(XcvizError, match="unknown op 'Frob'"):
        AnalysisOptions(deny={"Frob"})
    with pytest.raises(XcvizError, match="bad --dim"):
        AnalysisOptions(dims={"n": 0})


@pytest.mark.parametrize("args, text", [
    (["render", SEED, "-o", "out.pdf"], "out.pdf: xcviz render does not write .pdf files (hint: name the file .svg, "
                                       ".png, .dot, .gv"),
    (["render", SEED, "--png", "-o", "out.svg"], "out.svg: --png does not write a .svg file"),
    (["run", SEED, "-o", "out.txt"], "out.txt: xcviz run writes its outputs as an .npz file (hint: name it .npz)"),
])
def test_output_suffix_must_name_the_format(run_cli, monkeypatch, tmp_path, args, text):
    monkeypatch.chdir(tmp_path)
    args = [os.path.join(ROOT, a) if a == SEED else a for a in args]
    code, out, err = run_cli(*args, "--min-cluster-size", "1")
    assert code == 2 and text in err and len(err.strip().splitlines()) == 1
    assert os.listdir(tmp_path) == []


def test_render_format_follows_the_suffix(run_cli, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    seed = os.path.join(ROOT, SEED)
    assert run_cli("render", seed, "--min-cluster-size", "1", "-o", "seed.png")[0] == 0
    assert run_cli("render", seed, "--min-cluster-size", "1", "-o", "seed.gv")[0] == 0
    assert (tmp_path / "seed.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "seed.gv").read_text().startswith(("digraph", "strict digraph"))


def _readme() -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


def test_readme_quick_start_shows_clusters_as_printed(run_cli, monkeypatch):
    import re
    import shlex

    monkeypatch.chdir(ROOT)
    text = _readme()
    first = re.search(r"```bash\n(.*?)\n", text).group(1)
    command = shlex.split(first.split("&&", 1)[1].split("#")[0])
    shown = re.search(r"```\n\$ (xcviz [^\n]*)\n(.*?)```", text, re.S)
    assert command == shlex.split(shown.group(1)) and command[0] == "xcviz"
    code, out, _ = run_cli(*command[1:])
    assert code == 0 and "No cluster kept" not in out and "cluster_0" in out
    # the block is what the command prints (titles' trailing padding aside)
    assert [line.rstrip() for line in out.splitlines()] == shown.group(2).rstrip("\n").splitlines()


def test_docs_render_example_draws_clusters(run_cli, monkeypatch, tmp_path):
    import shlex

    with open(os.path.join(ROOT, "docs", "pictures-and-report.md"), encoding="utf-8") as f:
        page = f.read()
    line = next(x for x in page.splitlines() if x.startswith("xcviz render") and "seed.png" in x)
    args = shlex.split(line.split("#")[0])[1:]
    args = [os.path.join(ROOT, a) if a.startswith("graphs/") else a for a in args]
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(*args)
    assert code == 0 and err.startswith("2 clusters") and (tmp_path / "seed.png").read_bytes()[:4] == b"\x89PNG"


def test_report_format_follows_the_suffix(run_cli, monkeypatch, tmp_path):
    import json

    seed = os.path.join(ROOT, SEED)
    monkeypatch.chdir(tmp_path)
    assert run_cli("cluster", seed, "-o", "r.json")[0] == 0  # JSON without --json: the suffix says so
    assert json.loads((tmp_path / "r.json").read_text())["schema_version"] == 1
    assert run_cli("stats", seed, "-o", "r.txt")[0] == 0 and "Stats" in (tmp_path / "r.txt").read_text()
    code, _, err = run_cli("explain", seed, "c1", "--json", "-o", "r.md")
    assert code == 2 and "r.md: --json does not write a .md file (hint: name it .json" in err
    assert sorted(os.listdir(tmp_path)) == ["r.json", "r.txt"]
