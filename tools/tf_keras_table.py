"""The TF corpus table of docs/real-models.md: what xcviz does with each model of tests/data/tf_keras (no TF needed).

    python3 tools/tf_keras_table.py [--json out.json] [--data DIR]     # the markdown table on stdout

Per model and form (SavedModel, frozen .pb): load, cluster (clusters, op coverage), hybrid run and native run
against TensorFlow's outputs (max absolute error over every output; strings compared exactly), and validate
(cluster statuses). The inputs and TF's outputs are the model's NAME_io.npz; a frozen graph's outputs are
the signature's keys in sorted order.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "tf_keras")


def _err(got: dict, ref: dict) -> float:
    worst = 0.0
    for k, want in ref.items():
        have = np.asarray(got[k])
        if want.dtype.kind == "U":
            if [str(s) for s in have.reshape(-1)] != list(want.reshape(-1)):
                return float("inf")
            continue
        if have.shape != want.shape:
            return float("inf")
        worst = max(worst, float(np.max(np.abs(have.astype(np.float64) - want), initial=0.0)))
    return worst


def _short(e: Exception) -> str:
    text = str(e).splitlines()[0].replace(DATA + os.sep, "").replace("|", "/")
    return text[:110]


def row(name: str, form: str, tmp: str, data: str = DATA) -> dict:
    import xcviz

    DATA = data  # noqa: N806 - the folder this row reads
    with np.load(os.path.join(DATA, f"{name}_lowered_io.npz" if form == "lowered" else f"{name}_io.npz")) as z:
        feeds = {k[3:]: z[k] for k in z.files if k.startswith("in_")}
        ref = {k[4:]: z[k] for k in z.files if k.startswith("out_")}
    path = os.path.join(DATA, f"{name}_savedmodel" if form == "savedmodel" else f"{name}_{form}.pb")
    if form == "frozen" and not os.path.exists(path) and os.path.exists(path + ".gz"):
        with open(path + ".gz", "rb") as f:
            data = gzip.decompress(f.read())
        path = os.path.join(tmp, f"{name}_frozen.pb")
        with open(path, "wb") as f:
            f.write(data)
    elif not os.path.exists(path):
        return {"model": name, "form": form, "load": "not committed (over 1 MB)"}
    out = {"model": name, "form": form}
    t0 = time.perf_counter()
    try:
        g = xcviz.load(path)
    except Exception as e:  # noqa: BLE001 - a table row, not a crash
        return {**out, "load": f"fails: {_short(e)}"}
    out["load"] = f"ok ({len(g.nodes)} nodes)"
    if form != "savedmodel" and len(feeds) == 1 and list(feeds) != [v.name for v in g.inputs]:
        feeds = {g.inputs[0].name: next(iter(feeds.values()))}
    c = xcviz.cluster(g)
    clustered = sum(len(m) for m in c.clusters)
    out["cluster"] = f"{len(c.clusters)} clusters, {clustered}/{len(g.nodes)} nodes"
    for mode in ("native", "hybrid"):
        try:
            got = xcviz.run(g, feeds, mode=mode, clustering=c if mode == "hybrid" else None)
            got = got if form == "savedmodel" else dict(zip(sorted(ref), got.values()))
            out[mode] = _err(got, ref)
        except Exception as e:  # noqa: BLE001
            out[mode] = f"fails: {_short(e)}"
    try:
        rep = xcviz.validate(g, c, inputs=feeds, repeats=1)
        counts = rep.counts()
        checked = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
        out["validate"] = ("ok" if rep.ok else "FAIL") + f" ({checked})" if checked else "no cluster to check"
    except Exception as e:  # noqa: BLE001
        out["validate"] = f"fails: {_short(e)}"
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def markdown(rows: list[dict]) -> str:
    lines = ["| model | form | load | cluster (TF rules, min size 4) | native: max err vs TF | hybrid: max err vs TF "
             "| validate |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        cells = [r["model"], r["form"], r.get("load", "")]
        for k in ("cluster", "native", "hybrid", "validate"):
            v = r.get(k, "")
            cells.append(f"{v:.1e}" if isinstance(v, float) else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json")
    ap.add_argument("--data", default=DATA, help="a folder made by tf_keras_corpus.py (--big ones elsewhere)")
    args = ap.parse_args()
    index = json.load(open(os.path.join(args.data, "index.json"), encoding="utf-8"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(index):
            for form in ("savedmodel", "frozen", "lowered"):  # lowered: frozen with TF's default lowering
                if form == "lowered" and not os.path.exists(os.path.join(args.data, f"{name}_lowered.pb")):
                    continue
                if form == "frozen" and "frozen_nodes" not in index[name]:  # (a Keras export: no frozen form)
                    continue
                rows.append(row(name, form, tmp, args.data))
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    print(markdown(rows))


if __name__ == "__main__":
    main()
