"""Gzipped graph files (`model.pb.gz`, as TF's frozen graphs are often shipped): read as the file inside, the
unpacked size bounded by --max-file-bytes while unpacking."""
from __future__ import annotations

import gzip
import json
import os

from tests.support.paths import ROOT

from xcviz.pipeline import load_file

MOBILENET = os.path.join(ROOT, "tests", "data", "tf_keras", "mobilenet_v2_frozen.pb.gz")


def test_a_gzipped_graphdef_reads_as_the_graphdef_inside(tmp_path):
    plain = tmp_path / "mobilenet_v2_frozen.pb"
    with gzip.open(MOBILENET, "rb") as f:
        plain.write_bytes(f.read())
    a, b = load_file(MOBILENET), load_file(str(plain))
    assert len(a.nodes) == len(b.nodes) > 100
    assert [n.op for n in a.nodes] == [n.op for n in b.nodes]
    assert [n.name for n in a.nodes] == [n.name for n in b.nodes]


def test_a_gzipped_yaml_graph_reads_too(tmp_path):
    src = os.path.join(ROOT, "graphs", "seed_demo.yaml")
    gz = tmp_path / "seed_demo.yaml.gz"
    with open(src, "rb") as f:
        gz.write_bytes(gzip.compress(f.read()))
    assert [n.name for n in load_file(str(gz)).nodes] == [n.name for n in load_file(src).nodes]


def test_a_gzip_bomb_stops_at_the_limit(tmp_path, run_cli):
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(json.dumps({"nodes": []}).encode() + b" " * (8 << 20)))
    code, out, err = run_cli("stats", str(bomb), "--max-file-bytes", str(1 << 20))
    assert code == 2 and out == ""
    assert "gzip file unpacks to over the limit of 1048576 bytes" in err and "Traceback" not in err


def test_a_truncated_gzip_is_one_line(tmp_path, run_cli):
    cut = tmp_path / "cut.pb.gz"
    with open(MOBILENET, "rb") as f:
        cut.write_bytes(f.read()[:5000])
    code, out, err = run_cli("stats", str(cut))
    assert code == 2 and "gzip file ends early" in err and "Traceback" not in err
