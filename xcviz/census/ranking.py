"""Across a census: the ops that block XLA, ranked by how many architectures each blocks and what supporting it buys."""
from __future__ import annotations

from collections import defaultdict
from statistics import fmean

from .worker import BLOCKING

WHOLE = 1.0 - 1e-9   # coverage counted as "compiles whole"


def ok_rows(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r.get("status") == "ok"]


def ranking(rows: list[dict]) -> list[dict]:
    """One entry per blocking op: the architectures it blocks (it is unsupported, unknown or denied in them:
    `why` lists which; unknown means xcviz's op table lacks it, unsupported that XLA does),
    its nodes there, and what allowing it alone gains in each (re-clustered by the worker with allow=[op]):
    mean and total coverage gain, mean estimated-speedup gain, and how many would then compile whole.
    Ordered by architectures blocked, then mean coverage gain, then nodes, then name: deterministic."""
    by_op: dict[str, list[tuple[dict, int]]] = defaultdict(list)
    for r in ok_rows(rows):
        for op, n in r.get("blocking_ops", {}).items():
            by_op[op].append((r, n))
    out = []
    for op, hits in by_op.items():
        cov, spd, whole = [], [], 0
        codes = sorted({x["code"] for r, _ in hits for x in r.get("fallback_reasons", [])
                        if x["op"] == op and x["code"] in BLOCKING})
        for r, _ in hits:
            w = r.get("what_if", {}).get(op)
            if w is None:
                continue
            if w.get("coverage") is not None and r.get("coverage") is not None:
                cov.append(w["coverage"] - r["coverage"])
                whole += w["coverage"] >= WHOLE
            if w.get("est_speedup") is not None and r.get("est_speedup") is not None:
                spd.append(w["est_speedup"] - r["est_speedup"])
        out.append({
            "op": op, "why": codes, "models": len(hits), "nodes": sum(n for _, n in hits),
            "coverage_gain": _r(fmean(cov)) if cov else None, "coverage_gain_total": _r(sum(cov)) if cov else None,
            "speedup_gain": _r(fmean(spd)) if spd else None, "whole_if_supported": whole,
            "measured": len(cov), "blocked": sorted(_name(r) for r, _ in hits),
        })
    out.sort(key=lambda e: (-e["models"], -(e["coverage_gain"] or 0.0), -e["nodes"], e["op"]))
    for k, e in enumerate(out, 1):
        e["rank"] = k
    return out


def summary(rows: list[dict]) -> dict:
    """The census in a few numbers: models, finished, failed by status, compiled whole, blocked, means."""
    ok = ok_rows(rows)
    statuses: dict[str, int] = defaultdict(int)
    for r in rows:
        statuses[r.get("status") or "none"] += 1
    covs = [r["coverage"] for r in ok if r.get("coverage") is not None]
    spds = [r["est_speedup"] for r in ok if r.get("est_speedup") is not None]
    meas = [r["measured_speedup"] for r in ok if r.get("measured_speedup") is not None]
    return {
        "models": len(rows), "ok": len(ok), "statuses": dict(sorted(statuses.items())),
        "whole": sum(c >= WHOLE for c in covs), "blocked": sum(bool(r.get("blocking_ops")) for r in ok),
        "mean_coverage": _r(fmean(covs)) if covs else None, "mean_est_speedup": _r(fmean(spds)) if spds else None,
        "mean_measured_speedup": _r(fmean(meas)) if meas else None,
        "sources": sorted({r["source"] for r in rows}),
    }


def _name(r: dict) -> str:
    return r["model"]


def _r(v: float) -> float:
    return round(v, 6)
