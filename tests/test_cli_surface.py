"""The command line's surface: Ctrl-C, --version, completion, help, flag validation, the README's quick start."""
import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join("graphs", "seed_demo.yaml")

# Runs `xcviz ARGS...` as the console script does, holding still at the first cluster's compile step
# (touching FLAG there) so that the test's SIGINT lands inside the work, never before or after it.
_HELD_XCVIZ = """
import sys, time
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


def test_shell_completion_is_offered_and_completes():
    top = _xcviz("-h").stdout
    assert "--install-completion" in top and "--show-completion" in top
    script = _xcviz("--show-completion", "bash")
    assert script.returncode == 0 and "_XCVIZ_COMPLETE=complete_bash" in script.stdout
    words = {"COMP_CWORD": "1", "_XCVIZ_COMPLETE": "complete_bash"}
    assert _xcviz(env={**words, "COMP_WORDS": "xcviz clu"}).stdout.split() == ["cluster"]
    words = {"COMP_CWORD": "4", "_XCVIZ_COMPLETE": "complete_bash"}
    assert _xcviz(env={**words, "COMP_WORDS": f"xcviz cluster {SEED} --strategy "}).stdout.split() == ["mark", "greedy"]


def test_help_shows_choices_metavars_limits_and_whole_summaries(run_cli):
    import xcviz.cli as cli

    code, top, _ = run_cli("-h")
    assert code == 0 and "..." not in top.split("\nCommands:\n")[1]
    for info in cli.app.registered_commands:  # each summary in full, however it is wrapped
        first = info.callback.__doc__.split("\n\n")[0]
        assert "".join(first.split()) in "".join(top.split())  # the wrapping may break at a hyphen
    code, out, _ = run_cli("cluster", "--help")
    assert code == 0
    for text in ("Usage: xcviz cluster [OPTIONS] GRAPH\n", "--strategy [mark|greedy]", "--device [cpu|gpu|tpu]",
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
