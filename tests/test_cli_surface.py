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
