"""ratios.py's further rows: growth with size, the untyped graph, where the memory of `stats` is, the first use.

Each function measures in fresh processes (the helpers ratios.py hands over) and returns plain data for the
results JSON; markdown_more renders them."""
from __future__ import annotations

import json
import os
import pty
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

STEPS = ("load", "mark", "cost")

MEMORY = r"""
import json, resource, sys, time
import xcviz
from xcviz.memory import keep_freed_memory
keep_freed_memory()  # as the command does
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20
marks = [("start", rss())]
a = xcviz.analyse(sys.argv[1], progress=lambda step: marks.append((step.split()[0], rss())), record=False)
marks.append(("end", rss()))
print(json.dumps({"marks": marks, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _helpers():
    ratios = sys.modules.get("ratios") or sys.modules["__main__"]
    return ratios.child, ratios.end_to_end, ratios.child_out


def memory_rows(path: str) -> dict:
    """RSS (MB) as each step of `xcviz.analyse(path, record=False)` starts (what `stats` runs), and at its end."""
    child_out = _helpers()[2]
    return json.loads(child_out(MEMORY, path))


def _steps(path: str, repeats: int, reduce=statistics.median) -> dict[str, list[float]]:
    """[wall, CPU] seconds of load, mark, cost (in-process, after a warm-up load) and `stats` end to end."""
    child, end_to_end, _ = _helpers()
    rows: dict[str, list] = {k: [] for k in (*STEPS, "stats_e2e")}
    for _ in range(repeats):
        wall, _peak, cpu = end_to_end(path)
        rows["stats_e2e"].append((wall, cpu))
        for k, v in child(path, "xcviz").items():
            rows[k].append(tuple(v))
    return {k: [reduce(w for w, _ in v), reduce(c for _, c in v)] for k, v in rows.items()}


def growth_rows(res: dict, small_path: str, small_n: int, repeats: int) -> dict:
    """Each step's time at `small_n` nodes (minimum of the repeats) and the growth to res's graph (median)."""
    small = _steps(small_path, repeats, reduce=min)
    big = {k: [res["median"][k], res["median"][k + "_cpu"]] for k in (*STEPS, "stats_e2e")}
    return {"from_nodes": small_n, "to_nodes": res["nodes"], "small": small, "big": big,
            "growth": {k: big[k][0] / small[k][0] for k in big}, "growth_cpu": {k: big[k][1] / small[k][1] for k in big}}


def untyped_rows(res: dict, plain_path: str, repeats: int) -> dict:
    """The same steps on generate.py's graph (no declared types), median of the repeats."""
    plain = _steps(plain_path, repeats)
    typed = {k: [res["median"][k], res["median"][k + "_cpu"]] for k in (*STEPS, "stats_e2e")}
    return {"plain": plain, "typed": typed, "file_mb": round(os.path.getsize(plain_path) / 2**20, 1)}


def _on_terminal(argv: list[str], env: dict) -> tuple[float, float, str]:
    """Run argv with stderr on a pseudo-terminal (as a user at a shell sees it): wall and CPU seconds, and
    what stderr showed."""
    import resource

    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=slave, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    os.close(slave)
    reader.join(timeout=5)
    os.close(master)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, b"".join(chunks).decode("utf-8", "replace")


def _wait_for_background(folder: str, limit_s: float = 900) -> None:
    """A cold run may leave a background compile (its lock file in the cache folder): let it finish, so
    that it does not slow the next measurement."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        locks = [os.path.join(d, f) for d, _, files in os.walk(folder) for f in files if f == "xcviz-compiling.lock"]
        if not locks:
            return
        time.sleep(2)


def cold_rows(path: str) -> dict:
    """`xcviz stats PATH --json` with an empty numba cache, against the pure-Python paths (each in its own
    empty cache folder, so that neither finds the other's compiled code)."""
    out = {}
    argv = [sys.executable, "-m", "xcviz", "stats", path, "--json"]
    for name, extra in (("cold", {}), ("reference", {"XCVIZ_INFER": "reference"})):
        with tempfile.TemporaryDirectory(prefix="xcviz-numba-") as cache:
            env = {**os.environ, **extra, "NUMBA_CACHE_DIR": cache}
            wall, cpu, shown = _on_terminal(argv, env)
            plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).replace("\r", "\n")  # (the bar's escapes)
            lines = [line[line.index("xcviz:"):].strip() for line in plain.splitlines() if "xcviz:" in line]
            out[name] = {"wall": wall, "cpu": cpu, "notices": sorted(set(lines))}
            _wait_for_background(cache)
    return out


def markdown_more(res: dict) -> str:
    out = []
    mem = res.get("memory")
    if mem:
        marks = " -> ".join(f"{name} {mb:.0f}" for name, mb in mem["marks"])
        out += ["", f"Resident memory (MB) of `xcviz.analyse` as `stats` runs it, as each step starts: {marks}; "
                f"peak {mem['peak_mb']:.0f} MB."]
    g = res.get("growth")
    if g:
        out += ["", f"Growth from {g['from_nodes']:,} to {g['to_nodes']:,} nodes (target <= 110x; the small graph: "
                "minimum of the repeats):", "", "| measure | small (s) | big (s) | growth | growth, CPU |",
                "| --- | ---: | ---: | ---: | ---: |"]
        for k in (*STEPS, "stats_e2e"):
            out.append(f"| {k} | {g['small'][k][0]:.3f} | {g['big'][k][0]:.2f} | {g['growth'][k]:.0f}x "
                       f"| {g['growth_cpu'][k]:.0f}x |")
    u = res.get("untyped")
    if u:
        out += ["", f"The untyped graph (generate.py, {u['file_mb']} MB) beside the typed one (median seconds, "
                "wall / CPU):", "", "| measure | typed | untyped | untyped / typed (CPU) |", "| --- | ---: | ---: | ---: |"]
        for k in (*STEPS, "stats_e2e"):
            t, p = u["typed"][k], u["plain"][k]
            out.append(f"| {k} | {t[0]:.2f} / {t[1]:.2f} | {p[0]:.2f} / {p[1]:.2f} | {p[1] / t[1]:.2f} |")
    c = res.get("cold")
    if c:
        out += ["", "First use after a fresh install (`stats --json`, empty NUMBA_CACHE_DIR, stderr a terminal):", "",
                "| run | wall (s) | CPU (s) | what stderr said |", "| --- | ---: | ---: | --- |"]
        for k in ("cold", "reference"):
            notes = "; ".join(c[k]["notices"]) or "(nothing)"
            out.append(f"| {k} | {c[k]['wall']:.1f} | {c[k]['cpu']:.1f} | {notes} |")
    return "\n".join(out) + ("\n" if out else "")
