"""A fresh `xcviz calibrate` against the corpus's measured speedups: per program, the estimate of the built-in
profile of its runtime and of profiles measured now on this machine, against the speedup native_bench.py
--corpus measured (benchmarks/native_results.json, `corpus`). No timing here: the measurements are the
recorded ones, so the profiles are compared on the same numbers.

    xcviz calibrate --threads 1 -o /tmp/ort.yaml
    xcviz calibrate --native torch --threads 1 -o /tmp/torch.yaml
    /work/venv-tf/bin/python -m xcviz calibrate --native tensorflow --threads 1 -o /tmp/tf.yaml
    python benchmarks/fresh_calibration.py --onnx /tmp/ort.yaml --torch /tmp/torch.yaml --tf /tmp/tf.yaml

Writes benchmarks/fresh_calibration_results.{json,md} (--out): per model the two estimates and the measured
speedup, and per runtime how many are within 1.5x and on the right side of 1 (issue 36's targets)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from native_corpus import ROOT, _inputs, corpus, xcviz_json  # noqa: E402

BUILT_IN = {"onnx": "cpu", "tf": "cpu_tf", "torch": "cpu_torch"}


def kind(fmt: str) -> str:
    return "tf" if fmt.startswith("tf") else fmt


def estimate(entry: dict, given: str | None, profile: str) -> float | None:
    out, _ = xcviz_json(sys.executable, ["stats", entry["model"], *(["--inputs", given] if given else []),
                                         *[a for k, v in (entry.get("dims") or {}).items() for a in ("--dim", f"{k}={v}")],
                                         "--hardware", profile])
    return ((out or {}).get("stats") or {}).get("speedup_estimate")


def verdict(est: float | None, measured: float) -> tuple[bool, bool]:
    within = bool(est and max(est / measured, measured / est) <= 1.5)
    side = 0.8 <= measured <= 1.25 or (est is not None and (est > 1) == (measured > 1))
    return within, side


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for k in BUILT_IN:
        ap.add_argument(f"--{k}", help=f"a profile measured for the {k} programs")
    ap.add_argument("--results", default=os.path.join(HERE, "native_results.json"))
    ap.add_argument("--out", default=os.path.join(HERE, "fresh_calibration_results"))
    args = ap.parse_args()
    fresh = {k: getattr(args, k) for k in BUILT_IN if getattr(args, k)}
    recorded = json.load(open(args.results, encoding="utf-8"))["corpus"]
    measured = {r["model"]: r for r in recorded["results"] if r.get("speedup")}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for e in corpus(recorded.get("tf_python")):
            rel, k = os.path.relpath(e["model"], ROOT), kind(e["format"])
            if k not in fresh or rel not in measured:
                continue
            m = measured[rel]
            e["dims"] = None if e.get("inputs") else (m["runs"][0].get("dims") or {})
            given = _inputs(e, tmp)
            row = {"model": rel, "runtime": k, "measured": m["speedup"],
                   "built_in": estimate(e, given, BUILT_IN[k]), "fresh": estimate(e, given, fresh[k])}
            rows.append(row)
            print(json.dumps(row), flush=True)
    tally = {}
    for k in fresh:
        mine = [r for r in rows if r["runtime"] == k]
        tally[k] = {p: {"within_1_5": sum(verdict(r[p], r["measured"])[0] for r in mine),
                        "right_side": sum(verdict(r[p], r["measured"])[1] for r in mine), "programs": len(mine)}
                    for p in ("built_in", "fresh")}
    data = {"profiles": {k: {"built_in": BUILT_IN[k], "fresh": os.path.basename(v)} for k, v in fresh.items()},
            "measured_at": recorded.get("load_before"), "results": rows, "tally": tally}
    with open(args.out + ".json", "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    f2 = lambda v: "-" if v is None else f"{v:.2f}"   # noqa: E731
    lines = ["| model | runtime | measured | built-in profile | fresh calibration |", "|" + " --- |" * 5]
    lines += [f"| {r['model']} | {r['runtime']} | {f2(r['measured'])}× | {f2(r['built_in'])}× | {f2(r['fresh'])}× |"
              for r in rows]
    lines += ["", *(f"- {k}: within 1.5× built-in {t['built_in']['within_1_5']}/{t['built_in']['programs']}, fresh "
                    f"{t['fresh']['within_1_5']}/{t['fresh']['programs']}; right side of 1 built-in "
                    f"{t['built_in']['right_side']}, fresh {t['fresh']['right_side']}" for k, t in tally.items())]
    with open(args.out + ".md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[-len(tally):]))


if __name__ == "__main__":
    main()
