"""`xcviz check`: each expectation passes and fails on real graphs, with the reason from the attempt log; JUnit XML."""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest

from xcviz.analysis.check import parse_bytes, parse_fraction
from xcviz.errors import XcvizError

from tests.cli.test_diff import run
from tests.support.paths import ROOT

SEED = os.path.join(ROOT, "graphs", "seed_demo.yaml")
CYCLE = os.path.join(ROOT, "graphs", "cycle_refused.yaml")


def test_all_hold_exit_0(capsys):
    code, out, _ = run(capsys, "check", SEED, "--min-cluster-size", "1", "--min-coverage", "60%",
                       "--max-clusters", "2", "--expect-cluster", "c1,r1,m1", "--max-boundary-bytes", "1MiB")
    assert code == 0, out
    assert "4/4 expectations hold" in out


def test_each_failure_is_one_line_with_its_reason(capsys):
    code, out, _ = run(capsys, "check", SEED, "--min-cluster-size", "1", "--min-coverage", "0.8",
                       "--max-boundary-bytes", "100KiB", "--no-fallback-op", "custom_nms")
    assert code == 1
    fails = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 3
    assert "coverage 67 % < 80 %" in fails[0] and "forced" in fails[0] and "p1" in fails[0]
    assert "145.0 KiB > 100.0 KiB" in fails[1]
    assert "l1: unsupported on cpu" in fails[2]


def test_split_cluster_names_the_refused_merge_and_its_cycle(capsys):
    code, out, _ = run(capsys, "check", CYCLE, "--min-cluster-size", "1", "--expect-cluster", "embed,dec_act")
    assert code == 1
    assert "split: embed in cluster_0, dec_act in cluster_1" in out
    assert "refused: would create a cycle via tokenize_hook" in out
    code, out, _ = run(capsys, "check", CYCLE, "--min-cluster-size", "1", "--max-clusters", "1")
    assert code == 1 and "cycle via tokenize_hook" in out


def test_planted_regression_against_a_baseline_names_the_denied_node(capsys, tmp_path):
    base = tmp_path / "base.json"
    assert run(capsys, "cluster", SEED, "--min-cluster-size", "1", "-o", str(base))[0] == 0
    assert run(capsys, "check", SEED, "--min-cluster-size", "1", "--baseline", str(base))[0] == 0
    code, out, _ = run(capsys, "check", SEED, "--min-cluster-size", "1", "--deny", "relu",
                       "--baseline", str(base), "--max-regression", "5%")
    assert code == 1
    line = next(line for line in out.splitlines() if line.startswith("FAIL baseline"))
    assert "coverage 67 % → 50 %" in line and "r1: falls back: denied" in line


def test_junit_file(capsys, tmp_path):
    junit = tmp_path / "check.xml"
    code, _, _ = run(capsys, "check", SEED, "--min-cluster-size", "1", "--max-clusters", "1",
                     "--min-coverage", "0.5", "--junit", str(junit))
    assert code == 1
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = suite.findall("testcase")
    assert [c.find("failure") is not None for c in cases] == [False, True]


@pytest.mark.parametrize("args, message", [
    (["--expect-cluster", "c1,mm1"], "no node named 'mm1'"),
    (["--no-fallback-op", "NonMaxSupression"], "unknown op"),
    (["--min-coverage", "1.5"], "not a fraction"),
    (["--max-boundary-bytes", "1 parsec"], "not a size"),
    ([], "nothing to check"),
    (["--baseline", "missing.json"], "report not found"),
])
def test_bad_input_exits_2(capsys, args, message):
    code, _, err = run(capsys, "check", SEED, *args)
    assert code == 2 and message in err


def test_units():
    assert parse_bytes("1MiB", "-x") == 1 << 20 and parse_bytes("500kB", "-x") == 500_000 and parse_bytes("7", "-x") == 7
    assert parse_fraction("80%", "-x") == pytest.approx(0.8) and parse_fraction("0.25", "-x") == 0.25
    with pytest.raises(XcvizError):
        parse_bytes("-3", "-x")
