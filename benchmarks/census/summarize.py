"""The census benchmark's numbers as Markdown: per library counts by status, model time, the ranking's head,
and (given two results files) whether the local pool and the Dask LocalCluster agree row for row.

    python benchmarks/census/summarize.py benchmarks/census/results_local.jsonl [benchmarks/census/results_dask.jsonl]
"""
from __future__ import annotations

import sys
from collections import Counter
from statistics import median

from xcviz.census import comparable, ranking, read_rows, sort_rows, summary


def main(paths: list[str]) -> None:
    rows = read_rows(paths[0])
    s = summary(rows)
    print(f"{s['models']} models: {s['ok']} analysed, statuses {s['statuses']}, {s['whole']} compile whole, "
          f"{s['blocked']} blocked by an op, mean coverage {s['mean_coverage']:.1%}, mean est. speedup {s['mean_est_speedup']:.2f}x\n")
    print("| library | models | ok | error | timeout | crashed | compile whole | median s per model (ok) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind in ("timm", "hf", "file"):
        mine = [r for r in rows if r.get("kind") == kind]
        if not mine:
            continue
        st = Counter(r["status"] for r in mine)
        whole = sum(r["status"] == "ok" and r["coverage"] >= 1 - 1e-9 for r in mine)
        secs = [r["timings"].get("total_s", 0) for r in mine if r["status"] == "ok"]
        print(f"| {kind} | {len(mine)} | {st['ok']} | {st['error']} | {st['timeout']} | {st['crashed']} | {whole} | "
              f"{median(secs):.1f} |" if secs else "| |")
    print("\n| rank | op | why | architectures | nodes | Δ coverage (mean) | Δ est. speedup (mean) | then whole |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for e in ranking(rows)[:15]:
        cov = "" if e["coverage_gain"] is None else f"+{100 * e['coverage_gain']:.1f} pp"
        spd = "" if e["speedup_gain"] is None else f"{e['speedup_gain']:+.2f}x"
        print(f"| {e['rank']} | `{e['op']}` | {', '.join(e['why'])} | {e['models']} | {e['nodes']} | {cov} | {spd} | "
              f"{e['whole_if_supported']} |")
    errors = Counter((r.get("stage"), (r.get("error") or "").split(":")[0]) for r in rows if r["status"] != "ok")
    print("\nfailures by stage and kind:", ", ".join(f"{st}/{k} {n}" for (st, k), n in errors.most_common()))
    if len(paths) > 1:
        other = {(r["source"], r["model"]): comparable(r) for r in read_rows(paths[1])}
        common = [comparable(r) for r in sort_rows(rows) if (r["source"], r["model"]) in other]
        same = sum(r == other[(r["source"], r["model"])] for r in common)
        print(f"\n{paths[1]}: {len(other)} rows, {len(common)} in common with {paths[0]}, {same} identical (timings aside)")


if __name__ == "__main__":
    main(sys.argv[1:])
