"""Tables for the execution commands: `validate` (one row per cluster) and `run` (one row per output)."""
from __future__ import annotations


def _fmt(v, spec: str = ".2f", none: str = "-") -> str:
    return none if v is None else format(v, spec)


def ops_summary(ops: dict[str, int], width: int = 28) -> str:
    """'Conv×8, Add×3 …+4': most frequent first, as many as fit in `width`, then how many kinds are left."""
    items = sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))
    parts: list[str] = []
    for k, (name, n) in enumerate(items):
        part = f"{name}×{n}" if n > 1 else name
        rest = len(items) - k - 1
        if len(", ".join(parts + [part])) + (len(f" …+{rest}") if rest else 0) > width:
            break
        parts.append(part)
    if not parts and items:  # even the first op is too long: cut its name
        name, n = items[0]
        tail = (f"×{n}" if n > 1 else "") + (f" …+{len(items) - 1}" if len(items) > 1 else "")
        return name[:max(1, width - len(tail) - 1)] + "…" + tail
    text = ", ".join(parts) if parts else "-"
    return text + (f" …+{len(items) - len(parts)}" if len(parts) < len(items) else "")


VALIDATE_COLUMNS = ("cluster", "ops", "kernels", "pred.", "temp", "compile", "native", "XLA", "speedup", "est.",
                    "max err", "status")


def validate_table(report, width: int = 120):
    """One row per cluster, fitting `width` columns (100-120 and up): the ops column gets what the numbers
    leave, numbers are right-aligned, times in ms; failures are spelled out under the table."""
    from rich import box
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    from .units import fmt_bytes as human_bytes

    rows, problems = [], []
    for c in report.clusters:
        temp = c.memory.get("temp_bytes") if c.memory else None
        rows.append([c.id, c.ops, f"{c.kernels_before}→{_fmt(c.kernels_after, 'd')}", _fmt(c.kernels_predicted, "d"),
                     "-" if temp is None else human_bytes(temp),
                     "cached" if c.cache_hit else _fmt(c.compile_ms, ".0f"), _ms(c.native_ms), _ms(c.xla_ms),
                     "constant" if getattr(c, "constant", False) else
                     _fmt(c.speedup_measured, ".2f") + ("×" if c.speedup_measured else ""),
                     "constant" if getattr(c, "constant", False) else
                     _fmt(c.speedup_estimate, ".2f") + ("×" if c.speedup_estimate else ""),
                     _fmt(c.max_rel_error, ".1e"), _status(c)])
        if c.status != "ok" or getattr(c, "undefined", None):  # (an ok cluster says what it left out)
            problems.append(f"{c.id} {c.status}{f' ({c.reason})' if c.reason else ''}: {c.message}")
    gap = 2 if width >= 110 else 1
    columns = VALIDATE_COLUMNS
    if width < 110:  # the predicted kernels (also in --json) give way to the ops on a narrow terminal
        columns = tuple(c for c in columns if c != "pred.")
        rows = [r[:3] + r[4:] for r in rows]
    others = sum(max([cell_len(h)] + [cell_len(r[i]) for r in rows]) for i, h in enumerate(columns) if i != 1)
    ops_width = max(12, min(40, width - others - gap * (len(columns) - 1)))
    ok = sum(c.status == "ok" for c in report.clusters)
    nothing = " · nothing checked" if getattr(report, "status", "") == "nothing_checked" else ""
    t = Table(title=Text(f"validate {report.graph}: {ok}/{len(report.clusters)} clusters ok{nothing} · {report.cache['compiles']}"
                         f" compiles, {report.cache['hits']} cache hits · times in ms (median after warm-up)"),
              title_justify="left", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False,
              padding=(0, gap - 1 if gap > 1 else 0), collapse_padding=True, show_edge=False)
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i in (0, 1, len(columns) - 1) else "right", no_wrap=True,
                     overflow="ellipsis")
    for r in rows:
        r[1] = ops_summary(r[1], ops_width)
        t.add_row(*r[:-1], Text(r[-1], style=None if r[-1].startswith("ok") else "red"))
    lines = problems + ([f"--auto-fallback denied: {', '.join(report.denied)} ({report.rounds} rounds)"]
                        if report.denied else [])
    missing = getattr(report, "cannot_execute", None)
    if missing:
        lines.append("cannot execute: " + ", ".join(f"{op} ×{n} (node {first!r})" for op, (n, first, _) in
                                                    sorted(missing.items(), key=lambda kv: (-kv[1][0], kv[0]))))
    if any(getattr(c, "inputs", "real") == "synthetic" for c in report.clusters):
        lines.append("* synthetic entry tensors (seeded, of the inferred types): their producers cannot run natively")
    native = getattr(report, "native", None) or None
    text = native_words(native)
    for other, label in (("onnxruntime", "onnxruntime"), ("numpy", "NumPy")):
        rows = [c.id for c in report.clusters if getattr(c, "native_runtime", None) == other]
        if rows and native and native.get("runtime") != other:   # (the row's runtime, where it is not the one named)
            text += f"; on {label} ({native['runtime']} cannot take them): {', '.join(rows)}"
    lines.append(text)
    whole = model_line(getattr(report, "model", None))
    if whole:
        lines.append(whole)
    note = report.timing_note() if hasattr(report, "timing_note") else None
    if note:
        lines.append(f"note: {note}")
    lines.append("kernels: ops → XLA's (optimized HLO); pred.: the cost model's fusion model. "
                 "max err = max |XLA - NumPy reference| / max |reference|; --json has every op and the absolute error")
    t.caption = Text("\n".join(lines))
    t.caption_justify = "left"
    return t


NUMPY_WORDS = "native = xcviz's NumPy reference, not a production runtime"   # = runtime.native.NUMPY_NOTE


def native_words(native: dict | None, ran_on: str | None = None) -> str:
    """The runtime speedups are measured against, in words: 'native = onnxruntime 1.32.0 (CPU, op by op,
    2 threads; XLA 2 threads)', or the NumPy reference said as such."""
    if not native:
        return NUMPY_WORDS
    if (ran_on or native.get("runtime")) == "numpy":
        why = "" if native.get("runtime") == "numpy" else f" ({native['runtime']} could not take it)"
        return NUMPY_WORDS + why
    xla = native.get("xla_threads")
    text = (f"native = {native['runtime']} {native['version']} (CPU, {native['mode'].replace('-', ' ')}, "
            f"{native['threads']} thread{'s' if native['threads'] != 1 else ''}; XLA "
            + (f"{xla} thread{'s' if xla != 1 else ''})" if xla else "threads as JAX was loaded)"))
    if ran_on and ran_on != native["runtime"]:
        text += f"; parts it cannot take run on {ran_on.replace(native['runtime'] + '+', '')}"
    return text + (f"; {native['note']}" if native.get("note") else "")


def model_line(model) -> str | None:
    """The whole model, all-native against hybrid, and against the runtime's own optimizations."""
    if model is None:
        return None
    if model.hybrid_ms is None or model.native_ms is None:
        return f"whole model: not timed ({model.why})" if model.why else None
    sp, est = model.speedup, model.est_speedup
    text = (f"whole model: native {_ms(model.native_ms)} ms, hybrid {_ms(model.hybrid_ms)} ms → {sp:.2f}× "
            f"measured, {_fmt(est, '.2f')}× estimated")
    est_native = getattr(model, "est_native", None)
    if est is not None and est_native and est_native != model.runtime:   # (said next to the estimate it qualifies)
        text += f" (against {est_native}: the {model.est_hardware} profile's runtime)"
    t = getattr(model, "timing", None)
    if t and t.get("speedup_quartiles", {}).get("p25") is not None:
        q = t["speedup_quartiles"]
        text += (f" (medians of {t['rounds']} interleaved runs, per-run speedup {q['p25']:.2f}–{q['p75']:.2f}×"
                 + ("" if t.get("stable", True) else ", not settled in the time budget") + ")")
    if model.native_optimized_ms is not None:
        text += (f"; {model.runtime} optimized {_ms(model.native_optimized_ms)} ms → "
                 f"{model.speedup_vs_optimized:.2f}× vs optimized")
    elif getattr(model, "optimized_note", None):
        text += f"; {model.runtime} optimized not timed (--json: native_optimized_note)"
    if model.runtime == "numpy":
        text += f" ({NUMPY_WORDS})"
    worst = min(sp, model.speedup_vs_optimized or sp)
    if worst < 1:
        text += ": XLA is slower here"
    if model.segments:
        text += f" · {model.segments} fallback segment(s) on " + ", ".join(sorted(model.segments_on))
    return text


def _status(c) -> str:
    """ok | mismatch | compile_failed | skipped, with '*' when the cluster ran on synthetic entry tensors."""
    return c.status + ("*" if getattr(c, "inputs", "real") == "synthetic" else "")


def _ms(v: float | None) -> str:
    """Milliseconds with 3-4 significant digits: 0.0123, 0.294, 20.87, 1899."""
    if v is None:
        return "-"
    return f"{v:.4f}" if v < 0.1 else f"{v:.3f}" if v < 10 else f"{v:.2f}" if v < 100 else f"{v:.0f}"



def run_table(name: str, result: dict, check: bool):
    from rich.table import Table

    cache = result["cache"]
    t = Table(title=f"run {name} · mode {result['mode']} · median {result['median_ms']:.3f} ms"
              f" (first run {result['first_run_ms']:.1f} ms incl. {result['compile_ms']:.0f} ms compile;"
              f" {cache['compiles']} compiles, {cache['hits']} cache hits)", title_justify="left",
              caption=native_words(result.get("native"), (result.get("native") or {}).get("ran_on"))
              if result["mode"] != "jit" else None, caption_justify="left")
    for col in ("output", "shape", "dtype", "min", "max", "mean") + (("vs native (abs / rel)",) if check else ()):
        t.add_column(col, justify="left" if col in ("output", "dtype") else "right")
    for out, info in result["outputs"].items():
        row = [out, "x".join(map(str, info["shape"])) or "scalar", info["dtype"], _fmt(info.get("min"), ".4g"),
               _fmt(info.get("max"), ".4g"), _fmt(info.get("mean"), ".4g")]
        if check:
            c = info["check"]
            row.append(("ok " if c["ok"] else "[red]MISMATCH[/red] ") + (f"{c['max_abs']:.1e} / {c['max_rel']:.1e}"
                                                                       if c["max_abs"] is not None else c["why"]))
        t.add_row(*row)
    notes = [f"{out}: {info['check']['note']}" for out, info in result["outputs"].items()
             if check and info.get("check", {}).get("note")]
    if notes:  # elements left out of the comparison, and why
        t.caption, t.caption_justify = "\n".join(notes), "left"
    return t
