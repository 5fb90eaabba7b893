"""`xcviz census`: rows, resume after an interruption, Dask against the local pool, the ranking of blocking ops."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from xcviz.census import census, comparable, ranking, read_rows, sort_rows, summary
from xcviz.pipeline import AnalysisOptions
from tests.support.paths import ROOT

EXPORTS = os.path.join(ROOT, "tests", "data", "exports")
# a small corpus of real exports: torch's two ONNX exporters and the hand-made examples
CORPUS = [os.path.join(ROOT, "graphs", f) for f in ("resnet_mini.onnx", "mobilenet_mini.onnx", "transformer_encoder.onnx",
                                                     "unet_mini.onnx", "detector_mini.onnx", "seed_demo.yaml")] \
    + [os.path.join(EXPORTS, f) for f in ("bert_dynamo.onnx", "gpt_torchscript.onnx", "unet_dynamo.onnx", "detect_dynamo.onnx")]
HF_SMALL = ["hf:bert", "hf:gpt2", "hf:llama", "hf:t5", "hf:vit", "hf:distilbert"]


def _same(a: list[dict], b: list[dict]) -> None:
    assert [comparable(r) for r in sort_rows(a)] == [comparable(r) for r in sort_rows(b)]


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


# ---- fast: no worker processes ------------------------------------------------------------------------------
def test_cut_short_last_line_is_dropped_and_other_bad_lines_refused(tmp_path):
    from xcviz.errors import XcvizError

    p = tmp_path / "r.jsonl"
    good = {"source": "a", "model": "m", "status": "ok"}
    p.write_text(json.dumps(good) + "\n" + '{"source": "a", "mod', encoding="utf-8")   # killed mid-write
    assert read_rows(str(p)) == [good]
    p.write_text('{"source": "a", "mod\n' + json.dumps(good) + "\n", encoding="utf-8")
    with pytest.raises(XcvizError, match="line 1 is not JSON"):
        read_rows(str(p))


def test_resume_keeps_finished_rows_and_reruns_crashed_ones(tmp_path):
    from xcviz.census.results import ResultsFile

    p = tmp_path / "r.jsonl"
    rows = [{"source": "s", "model": m, "status": st} for m, st in (("a", "ok"), ("b", "timeout"), ("c", "crashed"), ("d", "error"))]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    f = ResultsFile(str(p), resume=True)
    f.close()
    assert f.done == {("s", "a"), ("s", "b"), ("s", "d")} and [r["model"] for r in read_rows(str(p))] == ["a", "b", "d"]
    f = ResultsFile(str(p), resume=True, retry_failed=True)
    f.write({"source": "s", "model": "b", "status": "ok"})
    f.close()
    assert [(r["model"], r["status"]) for r in read_rows(str(p))] == [("a", "ok"), ("b", "ok")]


def test_cli_refuses_an_existing_results_file_without_resume(tmp_path, run_cli):
    out = tmp_path / "r.jsonl"
    out.write_text("", encoding="utf-8")
    code, _, err = run_cli("census", CORPUS[0], "-o", str(out))
    assert code == 2 and "the results file exists" in err and "--resume" in err


@pytest.mark.parametrize("args,message", [
    (["nope/missing.onnx"], "no such file or folder"),
    (["timm:"], "timm: needs a pattern"),
    ([CORPUS[0], "--executor", "spark"], "not one of local, dask"),
    ([CORPUS[0], "--scheduler", "tcp://127.0.0.1:1"], "--scheduler needs --executor dask"),
])
def test_cli_bad_input_is_one_line_exit_2(tmp_path, run_cli, args, message):
    code, _, err = run_cli("census", *args, "-o", str(tmp_path / "r.jsonl"))
    assert code == 2 and message in err and "Traceback" not in err


def test_ranking_orders_by_architectures_then_gain():
    rows = [{"source": "s", "model": m, "status": "ok", "coverage": 0.5, "est_speedup": 1.0, "blocking_ops": b,
             "what_if": {op: {"coverage": c, "est_speedup": 1.5, "clusters": 1} for op, c in w.items()}}
            for m, b, w in [("a", {"x": 1, "y": 2}, {"x": 0.6, "y": 1.0}), ("b", {"y": 1}, {"y": 0.9}),
                            ("c", {"z": 5}, {"z": 1.0})]]
    rows.append({"source": "s", "model": "d", "status": "error", "blocking_ops": {}, "error": "boom"})
    r = ranking(rows)
    assert [e["op"] for e in r] == ["y", "z", "x"]        # y blocks two; z gains more than x
    assert r[0]["models"] == 2 and r[0]["nodes"] == 3 and r[0]["whole_if_supported"] == 1
    assert r[0]["coverage_gain"] == pytest.approx((0.5 + 0.4) / 2) and r[0]["blocked"] == ["a", "b"]
    s = summary(rows)
    assert s["models"] == 4 and s["ok"] == 3 and s["statuses"] == {"error": 1, "ok": 3} and s["blocked"] == 3


# ---- slow: worker processes ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_planted_op_denied_rises_to_the_top(tmp_path):
    """Deny an op the corpus is full of: it must top the ranking, blocking exactly the models that hold it,
    and allowing it back must restore each model's own partition."""
    from xcviz import load

    with_add = sorted(os.path.basename(p) for p in CORPUS if any(n.op_type == "Add" for n in load(p).nodes))
    assert len(with_add) >= 5
    free = sort_rows(census(CORPUS, str(tmp_path / "free.jsonl"), jobs=2))
    denied = sort_rows(census(CORPUS, str(tmp_path / "deny.jsonl"), jobs=2, options=AnalysisOptions(deny={"add"})))
    assert all(r["status"] == "ok" for r in free + denied), [r["error"] for r in free + denied if r["error"]]
    assert "Add" not in [e["op"] for e in ranking(free)]
    top = ranking(denied)[0]
    assert top["op"] == "Add" and top["blocked"] == with_add and top["models"] == len(with_add)
    assert top["why"] == ["denied"]
    assert top["coverage_gain"] > 0
    for f, d in zip(free, denied):   # the what-if of the denied op is the partition without the denial
        if "Add" in d["blocking_ops"]:
            assert d["what_if"]["Add"] == {"coverage": f["coverage"], "clusters": f["clusters"], "est_speedup": f["est_speedup"]}
            assert any(x["code"] == "denied" and x["op"] == "Add" for x in d["fallback_reasons"])


@pytest.mark.slow
def test_interrupted_census_resumes_to_the_same_results(tmp_path):
    """Ctrl-C after 3 rows (KeyboardInterrupt out of the collector), then --resume: the rows of an
    uninterrupted census, none run twice."""
    full = census(CORPUS, str(tmp_path / "full.jsonl"), jobs=1)
    out = str(tmp_path / "r.jsonl")
    seen: list[str] = []

    def stop(row: dict) -> None:
        seen.append(row["model"])
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        census(CORPUS, out, jobs=2, on_row=stop)
    time.sleep(0.5)
    children = subprocess.run(["ps", "--ppid", str(os.getpid()), "-o", "args="], capture_output=True, text=True).stdout
    assert "spawn_main" not in children   # the workers busy with the next models were stopped, not orphaned
    first = read_rows(out)
    assert len(first) == 3
    started: list[int] = []
    rows = census(CORPUS, out, jobs=1, resume=True, on_start=lambda todo, done: started.append((todo, done)))
    assert started == [(len(CORPUS) - 3, 3)]
    _same(rows, full)
    _same(read_rows(out), full)
    assert len({(r["source"], r["model"]) for r in read_rows(out)}) == len(CORPUS)


@pytest.mark.slow
def test_killed_census_process_resumes(tmp_path):
    """The census process killed outright (SIGKILL, as by OOM or a closed session) after two rows; the
    rerun with --resume completes the same results file as an uninterrupted one."""
    pytest.importorskip("transformers", reason="the census extra is not installed: pip install -e '.[census]'")
    sources = HF_SMALL[:4] + CORPUS[:2]
    out = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-m", "xcviz", "census", *sources, "-o", str(out), "--jobs", "1"]
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if out.exists() and out.read_text(encoding="utf-8").count("\n") >= 2:
            break
        time.sleep(0.1)
    assert proc.poll() is None, "the census ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = read_rows(str(out))
    assert 2 <= len(partial) < len(sources)
    done = subprocess.run(cmd + ["--resume", "--json"], env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"resuming: {len(partial)} models done" in done.stderr
    full = census(sources, str(tmp_path / "full.jsonl"), jobs=1)
    _same(read_rows(str(out)), full)
    assert json.loads(done.stdout)["summary"]["models"] == len(sources)


@pytest.mark.slow
def test_dask_local_cluster_gives_the_local_pool_rows(tmp_path):
    """Ten architectures (six transformers model types, shrunk, and four real exports) on a Dask
    LocalCluster of two workers and on the local pool: the same rows."""
    pytest.importorskip("distributed", reason="the census extra is not installed: pip install -e '.[census]'")
    pytest.importorskip("transformers", reason="the census extra is not installed: pip install -e '.[census]'")
    sources = HF_SMALL + CORPUS[:4]
    # every aten op of these models is in the table now: deny Softmax so the rankings have something to rank
    options = AnalysisOptions(deny={"Softmax"})
    local = census(sources, str(tmp_path / "local.jsonl"), jobs=2, options=options)
    dask = census(sources, str(tmp_path / "dask.jsonl"), jobs=2, executor="dask", options=options)
    assert len(local) == 10 and [r["status"] for r in local].count("ok") >= 9, [r["error"] for r in local]
    _same(dask, local)
    assert ranking(dask) == ranking(local)
    assert any(r["blocking_ops"] for r in local)


def _profiling(client) -> list[bool]:
    from xcviz.census.dask_plugin import profiling

    return [v for _, v in sorted(client.run(profiling).items())]


@pytest.mark.slow
def test_dask_census_turns_the_workers_profiler_off_while_it_runs(tmp_path):
    """A Dask worker's statistical profiler holds the task thread's frames, and torch.export fails now and then
    while another thread does (xcviz/census/dask_plugin.py). A census on a shared cluster runs with the
    profiler off on its workers, a worker that joins meanwhile included, and gives it back at the end."""
    distributed = pytest.importorskip("distributed", reason="the census extra is not installed: pip install -e '.[census]'")
    from xcviz.census.dask_plugin import NoProfiler

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        assert _profiling(client) == [True]
        during = []
        rows = census([CORPUS[5], CORPUS[0]], str(tmp_path / "r.jsonl"), executor="dask",
                      scheduler=cluster.scheduler_address, on_row=lambda row: during.append(_profiling(client)))
        assert [r["status"] for r in rows] == ["ok", "ok"] and during == [[False], [False]]
        assert _profiling(client) == [True]
        # the plugin alone: a worker that starts after it was registered starts without the profiler
        client.register_plugin(NoProfiler(), name="a")
        client.register_plugin(NoProfiler(), name="b")   # two censuses on one cluster
        cluster.scale(2)
        client.wait_for_workers(2, timeout=60)
        assert _profiling(client) == [False, False]
        client.unregister_worker_plugin("a")
        assert _profiling(client) == [False, False]   # still held by the other census
        client.unregister_worker_plugin("b")
        assert _profiling(client) == [True, True]


@pytest.mark.slow
def test_report_page_is_self_contained_and_deterministic(tmp_path, run_cli):
    out, page = tmp_path / "r.jsonl", tmp_path / "c.html"
    sources = CORPUS[:3] + [CORPUS[5]]
    code, stdout, err = run_cli("census", *sources, "-o", str(out), "--jobs", "1", "--report", str(page), "--deny", "Relu",
                                "--model-reports")
    assert code == 0, err
    pages = sorted(os.listdir(tmp_path / "c.models"))
    assert len(pages) == 4 and all(f'href="c.models/{p}"' in page.read_text(encoding="utf-8") for p in pages)
    for p in pages:   # each is the model's own interactive report
        assert "<meta name=\"generator\" content=\"xcviz report\">" in (tmp_path / "c.models" / p).read_text(encoding="utf-8")
    text = page.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in text and "http://" not in text.replace("http://www.w3.org", "")
    assert "<script src" not in text and "<link" not in text
    rows = sort_rows(read_rows(str(out)))
    for r in rows:   # every model has its drill-down section
        assert f'<h3>{r["model"]} <small>' in text
    assert "Relu" in text and "Ops that block XLA" in text and "architectures blocked" in text
    assert "4/4 models analysed" in stdout
    page2 = tmp_path / "c2.html"   # the same rows in another order give the same page
    lines = out.read_text(encoding="utf-8").splitlines()
    (tmp_path / "r2.jsonl").write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    (tmp_path / "c2.models").symlink_to(tmp_path / "c.models")   # the same pages, linked by the same names
    code, _, err = run_cli("census", *sources, "-o", str(tmp_path / "r2.jsonl"), "--resume", "--report", str(page2), "--deny", "Relu",
                           "--model-reports")
    assert code == 0, err
    assert page2.read_text(encoding="utf-8") == text.replace("c.models/", "c2.models/")
    page3 = tmp_path / "c3.html"   # --resume alone: the file's rows as they are, nothing run
    code, _, err = run_cli("census", "-o", str(out), "--resume", "--report", str(page3))
    assert code == 0 and "resuming" not in err, err
    from xcviz.render.census_html import census_page

    assert page3.read_text(encoding="utf-8") == census_page(rows, ranking(rows), summary(rows))
    assert page3.read_text(encoding="utf-8").count("<h3>") == 4


@pytest.mark.slow
def test_timeout_kills_a_model_stuck_in_native_code_and_the_pool_goes_on(tmp_path, monkeypatch):
    """A model whose library blocks in C (time.sleep on import: no Python bytecode runs, which no exception
    raised in the thread can interrupt) is killed at --timeout by the pool (pebble), its row a timeout at the
    stage it reached, its process gone; the other model of the census is ok."""
    from xcviz.census import executors
    from xcviz.census.sources import Task
    from xcviz.census.worker import Settings

    libs = tmp_path / "libs"
    (libs / "transformers").mkdir(parents=True)
    (libs / "transformers" / "__init__.py").write_text(
        "import os, time\n"
        f"open({str(tmp_path / 'pid')!r}, 'w').write(str(os.getpid()))\n"
        "time.sleep(300)\n")
    monkeypatch.syspath_prepend(str(libs))   # (the spawned workers get this process's sys.path)
    tasks = [Task("hf:bert", "bert", "hf", "bert"), Task(CORPUS[5], "seed_demo.yaml", "file", CORPUS[5])]
    rows: list[dict] = []
    t = time.perf_counter()
    executors.run(tasks, Settings(timeout_s=30), rows.append, jobs=2)
    took = time.perf_counter() - t
    by = {r["model"]: r for r in rows}
    assert by["bert"]["status"] == "timeout" and by["bert"]["stage"] == "create", by["bert"]
    assert by["bert"]["error"] == "took longer than 30 s (--timeout)"
    assert by["seed_demo.yaml"]["status"] == "ok"
    assert took < 200, took
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_from_torch_reads_meta_weights_as_zeros_that_take_no_memory():
    """A model built on the meta device (as the census builds big timm models) exports and loads; its
    weights are zeros of the right shape and dtype, broadcast from one element."""
    torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]'")
    import numpy as np

    import xcviz

    with torch.device("meta"):
        model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 8)).eval()
        x = torch.empty(2, 4096)
    graph = xcviz.from_torch(torch.export.export(model, (x,), strict=False))
    weights = {v.name: v.data for v in graph.inputs if v.data is not None}
    w = weights["0.weight"]
    assert w.shape == (4096, 4096) and w.dtype == np.float32 and w.strides == (0, 0) and not w.any()
    a = xcviz.analyse(graph, xcviz.AnalysisOptions(min_cluster_size=1))
    assert a.stats.coverage == 1.0
