"""xcviz.memory: for big graphs glibc's malloc keeps freed memory for reuse (fewer page faults), and the
user can opt out. Each case runs in a fresh interpreter: the tuning is process-wide and once only."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

glibc = pytest.mark.skipif(sys.platform != "linux" or platform.libc_ver()[0] != "glibc",
                           reason="the tuning applies to glibc's malloc only")

ROUNDS = """
import json, resource, sys, numpy as np

{setup}
def faults(): return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def rss_mib():
    with open("/proc/self/statm") as f: return int(f.read().split()[1]) * 4096 / 2**20
base = rss_mib()
arrays = [np.ones(1 << 20) for _ in range(24)]   # 24 blocks of 8 MiB, touched, then freed
del arrays
kept = rss_mib() - base   # what the process still holds of the 192 MiB
f0 = faults()
arrays = [np.ones(1 << 20) for _ in range(24)]   # the same again: reused, or faulted in anew
print(json.dumps({{"tuned": tuned, "kept_mib": kept, "faults": faults() - f0}}))
"""


def _run(setup: str, **env) -> dict:
    clean = {k: v for k, v in os.environ.items() if not (k.startswith("MALLOC_") or k in ("GLIBC_TUNABLES", "XCVIZ_MALLOC"))}
    out = subprocess.run([sys.executable, "-c", ROUNDS.format(setup=setup)], env={**clean, **env},
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


@glibc
def test_freed_memory_is_reused_not_faulted_in_again():
    tuned = _run("from xcviz.memory import keep_freed_memory\ntuned = keep_freed_memory()")
    plain = _run("tuned = False")
    assert tuned["tuned"] is True
    # without the tuning glibc hands the freed 192 MiB back, and the same arrays made again fault it in anew
    # (counted in pages: fewer where the kernel maps bigger ones, so only compared)
    assert plain["kept_mib"] < 64 and tuned["kept_mib"] > 160
    assert tuned["faults"] < plain["faults"] / 10


@glibc
@pytest.mark.parametrize("env", [{"XCVIZ_MALLOC": "system"}, {"MALLOC_TRIM_THRESHOLD_": "1000000"}, {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}])
def test_the_users_choice_leaves_malloc_alone(env):
    r = _run("from xcviz.memory import keep_freed_memory\ntuned = keep_freed_memory()", **env)
    assert r["tuned"] is False and r["kept_mib"] < 64


@glibc
def test_loading_a_big_file_tunes_and_a_small_one_does_not(tmp_path):
    from xcviz.memory import BIG_FILE_BYTES

    small = tmp_path / "small.yaml"
    small.write_text("inputs: [{name: x, shape: [4], dtype: float32}]\nnodes:\n  - {name: a, op: relu, inputs: [x]}\n")
    big = tmp_path / "big.yaml"
    big.write_text(small.read_text() + "#" * BIG_FILE_BYTES + "\n")
    check = "import xcviz, xcviz.memory as m\nxcviz.load({path!r})\ntuned = m._tuned is True"
    assert _run(check.format(path=str(small)))["tuned"] is False
    assert _run(check.format(path=str(big)))["tuned"] is True
