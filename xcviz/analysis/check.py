"""CI expectations on one analysis (coverage, bytes, clusters, co-clustered nodes, banned fallbacks, a baseline): each a Result with the reason it fails."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..errors import XcvizError
from ..render.units import fmt_bytes, fmt_pct, fmt_speedup

UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1024, "mib": 1024**2, "gib": 1024**3}


def parse_bytes(text: str, flag: str) -> int:
    """'1MiB' -> 1048576, '500kB' -> 500000, '4096' -> 4096."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).lower() not in UNITS:
        raise XcvizError(f"{flag} {text!r}: not a size", hint=f"write {flag} 1MiB (B, kB, MB, GB, KiB, MiB, GiB)")
    return int(float(m.group(1)) * UNITS[m.group(2).lower()])


def parse_fraction(text: str, flag: str) -> float:
    """'0.8' or '80%' -> 0.8."""
    t = text.strip()
    try:
        value = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise XcvizError(f"{flag} {text!r}: not a fraction", hint=f"write {flag} 0.8 or {flag} 80%")
    return value


@dataclass
class Expectations:
    min_coverage: float | None = None
    max_boundary_bytes: int | None = None     # activations crossing per call (the summary line's number)
    max_parameter_bytes: int | None = None    # resident parameters read across a boundary (reported apart)
    max_clusters: int | None = None
    together: list[list[str]] = field(default_factory=list)   # --expect-cluster a,b,c
    no_fallback_ops: list[str] = field(default_factory=list)
    baseline: object | None = None                           # a diff Side from a report
    baseline_label: str = ""
    max_regression: float = 0.0


@dataclass
class Result:
    name: str          # the expectation as the user wrote it
    ok: bool
    message: str       # the measured value, and when failing the reason


def _largest(stats, parameter: bool) -> str:
    """The three largest boundary crossings of activations (or of parameters), as `src → dst bytes`."""
    top = sorted((x for x in stats.edges if x.bytes and x.parameter == parameter), key=lambda x: -x.bytes)[:3]
    return ", ".join(f"{x.src} → {x.dst} {fmt_bytes(x.bytes)}" for x in top)


def _fallback_reasons(graph, clustering, limit: int = 3) -> str:
    by_code = Counter(c or "other" for c, k in zip(clustering.code, clustering.cluster_of) if k < 0)
    parts = []
    for code, n in by_code.most_common(limit):
        i = next(i for i, (c, k) in enumerate(zip(clustering.code, clustering.cluster_of)) if k < 0 and (c or "other") == code)
        parts.append(f"{code} ×{n} (e.g. {graph.nodes[i].name}: {clustering.reason[i]})")
    return ", ".join(parts)


def _refused_between(graph, clustering, wanted: set[int] | None, limit: int = 2) -> str:
    """The refused merges whose two sides ended in different kept clusters (of `wanted`, when given)."""
    of = clustering.cluster_of
    names = [n.name for n in graph.nodes]
    found = []
    for a in clustering.refused():
        ka, kb = of[a.src], of[a.dst]
        if ka >= 0 and kb >= 0 and ka != kb and (wanted is None or (ka in wanted and kb in wanted)):
            found.append(f"{names[a.src]} → {names[a.dst]} refused: {a.reason}")
            if len(found) == limit:
                break
    return "; ".join(found)


def evaluate(graph, clustering, stats, e: Expectations) -> list[Result]:
    """Every expectation given, in a fixed order, each with what was measured and why it fails."""
    out: list[Result] = []
    if e.min_coverage is not None:
        ok = stats.coverage >= e.min_coverage
        msg = f"coverage {fmt_pct(stats.coverage)} {'≥' if ok else '<'} {fmt_pct(e.min_coverage)}"
        out.append(Result(f"min-coverage {e.min_coverage:g}", ok, msg if ok else f"{msg}; falling back: {_fallback_reasons(graph, clustering)}"))
    if e.max_boundary_bytes is not None:
        # activations only, as the summary line counts them: parameters stay resident (never handed over)
        d = stats.boundary_bytes_activations
        ok = d is not None and d <= e.max_boundary_bytes
        msg = f"activations crossing boundaries {fmt_bytes(d)} {'≤' if ok else '>'} {fmt_bytes(e.max_boundary_bytes)}"
        if d is None:
            msg += " (unknown while symbolic dimensions are unbound: bind them with --dim NAME=SIZE)"
        elif not ok:
            msg += "; largest crossings: " + _largest(stats, parameter=False)
        if stats.parameter_bytes:
            msg += f" (+ {fmt_bytes(stats.parameter_bytes)} resident parameters, not counted: --max-parameter-bytes gates them)"
        out.append(Result(f"max-boundary-bytes {fmt_bytes(e.max_boundary_bytes)}", ok, msg))
    if e.max_parameter_bytes is not None:
        p = stats.parameter_bytes
        ok = p is not None and p <= e.max_parameter_bytes
        msg = f"resident parameters read across boundaries {fmt_bytes(p)} {'≤' if ok else '>'} {fmt_bytes(e.max_parameter_bytes)}"
        if p is None:
            msg += " (unknown: some parameter's size is not known)"
        elif not ok:
            msg += "; largest: " + _largest(stats, parameter=True)
        out.append(Result(f"max-parameter-bytes {fmt_bytes(e.max_parameter_bytes)}", ok, msg))
    if e.max_clusters is not None:
        ok = stats.clusters <= e.max_clusters
        msg = f"{stats.clusters} clusters {'≤' if ok else '>'} {e.max_clusters}"
        if not ok:
            why = _refused_between(graph, clustering, None)
            msg += f"; {why}" if why else "; no merge between them was tried (fallback nodes separate them)"
        out.append(Result(f"max-clusters {e.max_clusters}", ok, msg))
    for group in e.together:
        out.append(_together(graph, clustering, group))
    for op in e.no_fallback_ops:
        out.append(_no_fallback(graph, clustering, op))
    if e.baseline is not None:
        out.append(_baseline(graph, clustering, stats, e))
    return out


def _together(graph, clustering, group: list[str]) -> Result:
    name = "expect-cluster " + ",".join(group)
    idx = [graph.index[n] for n in group]
    of = clustering.cluster_of
    out = [graph.nodes[i].name for i in idx if of[i] < 0]
    if out:
        i = graph.index[out[0]]
        return Result(name, False, f"{out[0]} falls back: {clustering.reason[i]}")
    ks = sorted({of[i] for i in idx})
    if len(ks) == 1:
        return Result(name, True, f"all in {clustering.cluster_id(ks[0])}")
    where = ", ".join(f"{graph.nodes[i].name} in {clustering.cluster_id(of[i])}" for i in idx)
    why = _refused_between(graph, clustering, set(ks))
    return Result(name, False, f"split: {where}; " + (why or "no merge between them was tried (fallback nodes separate them)"))


def _no_fallback(graph, clustering, op: str) -> Result:
    from ..ops import REGISTRY

    d = REGISTRY.get(op)
    names = {op} | ({d.name} if d is not None else set())  # as written, or any alias of the same op
    hits = [i for i, (n, k) in enumerate(zip(graph.nodes, clustering.cluster_of))
            if k < 0 and (n.op_type in names or n.op in names)]
    if not hits:
        return Result(f"no-fallback-op {op}", True, f"no {op} node falls back")
    i = hits[0]
    more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
    return Result(f"no-fallback-op {op}", False,
                  f"{len(hits)} {op} node{'s fall' if len(hits) > 1 else ' falls'} back: {graph.nodes[i].name}: {clustering.reason[i]}{more}")


# (stats key, larger is better, how it reads)
REGRESSIONS = [("coverage", True, fmt_pct), ("coverage_flops", True, fmt_pct), ("boundary_bytes", False, fmt_bytes),
               ("kernel_launches_after", False, str), ("speedup_estimate", True, fmt_speedup)]


def _baseline(graph, clustering, stats, e: Expectations) -> Result:
    from .diff import diff_report, side_from_analysis

    name = f"baseline {e.baseline_label} max-regression {e.max_regression:.0%}"
    current = side_from_analysis("current", graph, clustering, stats)
    report = diff_report(e.baseline, current)
    worse = []
    for key, up, fmt in REGRESSIONS:
        old, new = report["a"]["stats"].get(key), report["b"]["stats"].get(key)
        if old is None or new is None:
            continue
        loss = (old - new) if up else (new - old)
        if loss > 0 and (old == 0 or loss / abs(old) > e.max_regression):
            worse.append(f"{key} {fmt(old)} → {fmt(new)}" + (f" ({loss / abs(old):.1%} worse)" if old else ""))
    if not worse:
        return Result(name, True, f"no metric regressed by more than {e.max_regression:.0%}")
    moved = "; ".join(f"{m['node']}: {m['b_decision']}" for m in report["moved"][:3])
    return Result(name, False, ", ".join(worse) + (f"; moved: {moved}" if moved else ""))
