"""Cluster formation frames: merges + 1 frames, phase-boundary flags, captions, and an offline HTML page."""
import json
import os
import re
import xml.etree.ElementTree as ET

import pytest

from tests.support.paths import GRAPHS

SEED = os.path.join(GRAPHS, "seed_demo.yaml")


def _frames(path, **kw):
    from xcviz.pipeline import AnalysisOptions, analyse
    from xcviz.render.frames import build_frames, count_merges

    a = analyse(path, AnalysisOptions(**kw))
    g, c, s = a.graph, a.clustering, a.stats
    return g, c, build_frames(g, c, s), count_merges(c)


@pytest.mark.parametrize("opts", [dict(strategy="mark"), dict(strategy="mark", min_cluster_size=1),
                                  dict(strategy="greedy")])
def test_seed_frames_are_merges_plus_one(opts):
    g, c, frames, merges = _frames(SEED, **opts)
    assert merges >= 1
    assert len(frames) == merges + 1
    assert [f.kind for f in frames] == ["merge"] * merges + ["final"]
    # phase boundaries flag the first merge frame of each phase; they add no frame of their own
    phases = [f.phase for f in frames if f.kind == "merge"]
    assert [f.phase_start for f in frames[:-1]] == [k == 0 or phases[k] != phases[k - 1] for k in range(merges)]
    # the final frame is the render of the result
    assert len(frames[-1].view.groups) == len(c.clusters)


def test_seed_mark_captions():
    g, c, frames, merges = _frames(SEED, strategy="mark", min_cluster_size=1)
    assert frames[0].decision == "phase 1: merged r1 into cluster of m1"
    assert frames[0].view.caption.startswith("frame 1/3 · phase 1 begins")
    assert frames[1].decision == "phase 1: merged c1 into cluster of r1"
    assert sorted(frames[1].view.groups[0].members) == [0, 1, 3]
    assert frames[-1].decision.startswith("final, after the minimum-size filter (min 1): kept 2 clusters")
    g, c, frames, merges = _frames(SEED, strategy="mark")
    assert "dropped {c1, r1, m1}" in frames[-1].decision and not frames[-1].view.groups


def test_cycle_refusal_in_caption():
    g, c, frames, merges = _frames(os.path.join(GRAPHS, "cycle_refused.yaml"), min_cluster_size=1)
    refused = [line for f in frames for line in f.refused]
    assert refused and all("refused" in r for r in refused)
    assert any("would create a cycle via tokenize_hook" in r for r in refused)
    assert len(frames) == merges + 1


def test_steps_and_animate_cli(tmp_path, run_cli):
    steps, page = tmp_path / "steps", tmp_path / "seed.html"
    code, _, err = run_cli("render", SEED, "--min-cluster-size", "1", "--steps", str(steps), "--animate", str(page))
    assert code == 0, err
    names = sorted(os.listdir(steps))
    assert names == ["seed_demo.step_001.svg", "seed_demo.step_002.svg", "seed_demo.step_003.svg"]
    for name in names:
        ET.parse(steps / name)
    text = page.read_text(encoding="utf-8")
    # self-contained: no external scripts, styles, images or fetches (SVG/XLink namespaces are names, not loads)
    for pattern in (r"<script[^>]+src=", r"<link\b", r"<img\b", r"@import", r"\bfetch\(", r"XMLHttpRequest",
                    r"(?:src|href)\s*=\s*[\"']?(?:https?:)?//"):
        assert not re.search(pattern, text, re.I), pattern
    urls = set(re.findall(r"https?://[^\s\"'<>\\]+", text))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    data = re.search(r'<script id="frames" type="application/json">(.*?)</script>', text, re.S).group(1)
    frames = json.loads(data)
    assert len(frames) == 3
    assert "phase 1: merged r1 into cluster of m1" in frames[0]["text"]
    assert all(f["svg"].startswith("<svg") for f in frames)
    for needle in ('id="play"', 'id="slider"', 'type="range"', 'max="2"', 'id="decision"'):
        assert needle in text


def test_animate_into_the_steps_folder(tmp_path, run_cli):
    """--animate DIR/index.html with --steps DIR: the folder is made before the page's target is checked."""
    steps = tmp_path / "new"
    code, _, err = run_cli("render", SEED, "--min-cluster-size", "1", "--steps", str(steps),
                           "--animate", str(steps / "index.html"))
    assert code == 0, err
    assert sorted(os.listdir(steps)) == ["index.html", "seed_demo.step_001.svg", "seed_demo.step_002.svg",
                                         "seed_demo.step_003.svg"]


def test_max_frames(tmp_path, run_cli):
    code, _, err = run_cli("render", SEED, "--min-cluster-size", "1", "--animate", str(tmp_path / "a.html"),
                           "--max-frames", "2")
    assert code == 2 and "exceed --max-frames 2" in err
    assert not (tmp_path / "a.html").exists()


def test_hostile_script_cannot_close_the_data_block():
    from xcviz.render.html import frames_page

    page = frames_page("</script><script>alert(1)</script>", [("<svg><text>&lt;/script&gt;</text></svg>",
                                                               "</script><!-- x")])
    assert page.count("</script>") == 2   # the data block's and the player's, nothing injected
    data = re.search(r'<script id="frames" type="application/json">(.*?)</script>', page, re.S).group(1)
    assert json.loads(data)[0]["text"] == "</script><!-- x"
