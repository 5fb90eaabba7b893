"""`torch.compile(model, backend=xcviz.torch_backend(...))`: every graph Dynamo hands over is captured as aten,
clustered, costed and recorded (recompilations as new entries), then run as Dynamo gave it (eager) or hybrid."""
from __future__ import annotations

import os
from typing import Any

from ..errors import XcvizError

MODES = ("eager", "hybrid")


class XcvizBackend:
    """A Dynamo backend that records what it is handed. `entries` (one per graph, in the order Dynamo compiles
    them: execution order on a first call), `breaks` (each after the graph it ended), `report()` the dict."""

    def __init__(self, report: str | os.PathLike | None = None, mode: str = "eager", options=None,
                 openxla: bool = True) -> None:
        from ..pipeline import AnalysisOptions

        if mode not in MODES:
            raise XcvizError(f"unknown mode {mode!r}", hint="mode='eager' (analysis only) or mode='hybrid' (clusters under JAX)")
        self.mode = mode
        self.report_path = os.fspath(report) if report is not None else None
        self.options = options if options is not None else AnalysisOptions()
        self.openxla = openxla
        self.entries: list[dict] = []
        self.breaks: list[dict] = []
        self.runners: list[Any] = []
        self.no_grad = False    # the CLI calls the model under torch.no_grad() in hybrid mode, and says so

    def __call__(self, gm, example_inputs):
        from ..pipeline import analyse
        from .breaks import break_record, compile_info
        from .capture import capture
        from .entry import graph_entry

        index = len(self.entries)
        compile_id, recompile_reason = compile_info()
        runner = gm.forward
        try:
            cap = capture(gm, list(example_inputs), name=f"graph_{index}")
            analysis = analyse(cap.graph, self.options)
            xla = None
            if self.openxla:
                from .openxla import compare_openxla

                xla = compare_openxla(cap, analysis.clustering)
            entry = graph_entry(index, cap, analysis, compile_id, recompile_reason, xla)
            entry["mode"] = self.mode
            if self.mode == "hybrid":
                runner, entry["hybrid"] = self._hybrid(gm, cap, analysis)
        except Exception as e:  # noqa: BLE001 - the model still runs as Dynamo gave it; the entry says why
            error = str(e) if isinstance(e, XcvizError) else (
                f"graph_{index}: xcviz could not analyse this graph: {type(e).__name__}: {e}".splitlines()[0][:300]
                + " (a bug in xcviz: please report it)")
            runner = gm.forward
            entry = {"index": index, "compile_id": compile_id, "error": error, "nodes": 0, "clustered": 0,
                     "coverage": 0.0, "clusters": [], "fallback_ops": [], "est_speedup": None,
                     "boundary_bytes": None, "boundary_bytes_activations": None, "parameter_bytes": None,
                     "time_before_s": None, "time_after_s": None,
                     "recompile": compile_id.partition("/")[2] not in ("", "0"), "recompile_reason": recompile_reason,
                     "mode": "eager", **({"hybrid": {"ran": "torch", "notes": [f"not analysed: {error}"], "errors": [],
                                                      "calls": {}}} if self.mode == "hybrid" else {})}
        entry["dynamo_ops"] = sum(1 for n in gm.graph.nodes if n.op == "call_function")
        self.entries.append(entry)
        self.runners.append(runner)
        reason = getattr(gm, "compile_subgraph_reason", None)
        if reason is not None and getattr(reason, "graph_break", False):
            self.breaks.append(break_record(reason, index))
        if self.report_path is not None:
            self.write(self.report_path)
        return runner

    def _hybrid(self, gm, cap, analysis):
        from .hybrid import HybridRunner

        if cap.symbolic:
            note = ("symbolic sizes (a dynamic recompilation): hybrid needs the static shapes it clusters at; "
                    "use torch.compile(dynamic=False)")
            return gm.forward, {"ran": "torch", "notes": [note], "errors": [], "calls": {}}
        run = HybridRunner(cap, analysis.clustering, gm.forward)
        return run, run.info   # (filled in as it runs: how each call ran, and why a part ran in torch)

    def report(self) -> dict:
        from ..render.report_json import SCHEMA_VERSION
        from .entry import summary

        return {"schema_version": SCHEMA_VERSION, "kind": "torch.compile", "mode": self.mode,
                **({"no_grad": True} if self.no_grad else {}),
                "graphs": self.entries, "breaks": self.breaks, "summary": summary(self.entries, self.breaks)}

    def write(self, path: str, title: str = "torch.compile") -> str:
        """The HTML report at `path` (a directory gets compile-report.html and compile-report.json)."""
        from ..fileio import write_atomic
        from ..render.compile_html import compile_page

        data = self.report()
        if path.lower().endswith(".html"):
            target = path
        else:
            os.makedirs(path, exist_ok=True)
            target = os.path.join(path, "compile-report.html")
            import json

            write_atomic(os.path.join(path, "compile-report.json"), json.dumps(data, indent=1, sort_keys=True) + "\n")
        write_atomic(target, compile_page(data, title))
        return target


def torch_backend(report: str | os.PathLike | None = None, mode: str = "eager", *, strategy: str = "mark",
                  device: str = "cpu", min_cluster_size: int | None = None, allow=(), deny=(),
                  hardware: str | None = None, openxla: bool = True) -> XcvizBackend:
    """A torch.compile backend: `torch.compile(model, backend=xcviz.torch_backend(report="xcviz-compile/"))`."""
    from ..pipeline import AnalysisOptions

    options = AnalysisOptions(strategy=strategy, device=device, min_cluster_size=min_cluster_size,
                              allow=frozenset(allow), deny=frozenset(deny), hardware=hardware)
    return XcvizBackend(report, mode, options, openxla)
