"""The torch.compile report as one self-contained HTML page (no script, no network; CSP forbids both): the
summary, then Dynamo's graphs side by side in execution order with their clusters, the breaks between them."""
from __future__ import annotations

import html

from .tables import BOUNDARY, FALLBACK, cluster_color
from .units import fmt_bytes, fmt_pct, fmt_speedup

_CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 1em 2em; color: #222; }
table { border-collapse: collapse; margin: .4em 0; font-size: 13px; }
th, td { border-bottom: 1px solid #ddd; padding: 2px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
.flow { display: flex; gap: 1em; overflow-x: auto; align-items: flex-start; padding-bottom: 1em; }
.graph { flex: 0 0 auto; min-width: 22em; max-width: 44em; border: 1px solid #bbb; border-radius: 6px; padding: .6em; }
.break { flex: 0 0 auto; width: 16em; border-left: 5px solid %(fallback)s; background: #fff4f4; padding: .6em; }
.break code, .graph code { font-family: Menlo, Consolas, monospace; font-size: 12px; word-break: break-all; }
.swatch { display: inline-block; width: .9em; height: .9em; border-radius: 2px; margin-right: .3em; vertical-align: middle; }
.fallback { color: %(fallback)s; } .bytes { color: #8a6100; border-bottom: 2px solid %(boundary)s; }
.note { color: #555; font-size: 12px; } h2 { font-size: 16px; margin: .2em 0; }
details pre { white-space: pre-wrap; font-size: 11px; }
.graph p, .break p { font-size: 14px; margin: .4em 0; }
.ops { display: flex; flex-wrap: wrap; gap: 3px; margin: .4em 0; }
.op { font-family: Menlo, Consolas, monospace; font-size: 11px; padding: 1px 4px; border: 2px solid; border-radius: 3px; }
""" % {"fallback": FALLBACK, "boundary": BOUNDARY}


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _table(head: list[str], rows: list[list[str]]) -> str:
    """Cells arrive escaped (or built from escaped parts)."""
    out = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows]
    return "".join(out) + "</table>"


def _crossing(g: dict):
    """Activations handed between the runtimes per call (weights are resident); an older report: every byte."""
    return g["boundary_bytes_activations"] if "boundary_bytes_activations" in g else g["boundary_bytes"]


def _graph(g: dict) -> str:
    head = f"graph {g['index']}" + (f" · compile {_e(g['compile_id'])}" if g.get("compile_id") else "")
    parts = [f'<div class="graph" id="graph-{g["index"]}"><h2>{head}</h2>']
    if g.get("recompile"):
        parts.append(f'<p class="note">recompilation{": " + _e(g["recompile_reason"]) if g.get("recompile_reason") else ""}</p>')
    if g.get("error"):
        parts.append(f'<p class="fallback">not analysed: {_e(g["error"])}</p></div>')
        return "".join(parts)
    n = len(g["clusters"])
    parts.append(f"<p>{g['nodes']} aten ops · {n} cluster{'' if n == 1 else 's'} · coverage {_e(fmt_pct(g['coverage']))} · "
                 f'<span class="bytes">{_e(fmt_bytes(_crossing(g)))}</span> cross boundaries'
                 + (f' (+ {_e(fmt_bytes(g["parameter_bytes"]))} resident parameters)' if g.get("parameter_bytes") else "")
                 + f" · est. speedup {_e(fmt_speedup(g['est_speedup']))}</p>")
    shapes = [f"{_e(v['name'])}: {_e(v['dtype'])}{_e(v['shape'])}" for v in g.get("inputs", []) if v["kind"] == "input"]
    if shapes:
        parts.append(f'<p class="note">inputs: <code>{", ".join(shapes)}</code></p>')
    color = {c["id"]: cluster_color(k) for k, c in enumerate(g["clusters"])}
    chips = [f'<span class="op" style="border-color:{color.get(o["cluster"], FALLBACK)}" title="{_e(o["node"])}: '
             f'{_e(o["cluster"] or "fallback")}">{_e(o["op"].removeprefix("aten."))}</span>' for o in g.get("ops", [])]
    if chips:  # the graph's aten calls in order, framed in their cluster's colour (red: fallback)
        parts.append(f'<div class="ops">{"".join(chips)}</div>')
    rows = []
    for k, c in enumerate(g["clusters"]):
        ops = " ".join(f"{_e(op)}×{n}" if n > 1 else _e(op) for op, n in c["ops"].items())
        rows.append([f'<span class="swatch" style="background:{cluster_color(k)}"></span>{_e(c["id"])}', ops,
                     _e(fmt_bytes(c.get("activations_in", c["bytes_in"]))), _e(fmt_bytes(c["bytes_out"])),
                     _e(fmt_bytes(c.get("parameters_in"))),
                     "folds to a constant" if c.get("constant") else _e(fmt_speedup(c["est_speedup"]))])
    if rows:
        parts.append(_table(["cluster", "aten ops", "activations in", "activations out", "parameters (resident)", "est."], rows))
    rows = [[f'<span class="fallback">{_e(f["op"])}</span>', str(f["count"]), _e(f["reason"])] for f in g["fallback_ops"]]
    if rows:
        parts.append(_table(["fallback op", "n", "reason"], rows))
    xla = g.get("openxla")
    if xla is not None:
        parts.append(f'<p class="note">openxla partitioner: {len(xla["partitions"])} partitions; '
                     f'{len(xla.get("support_differs_ops", []))} ops ({len(xla["support_differs"])} calls) where its support differs from xcviz\'s</p>')
        rows = [[_e(d["op"]), str(d["count"]), _e(" ".join(d["nodes"])), "✓" if d["openxla"] else "✗",
                 "✓" if d["xcviz"] else "✗", _e(d["openxla_why"] if d["openxla"] else d["xcviz_why"])]
                for d in xla.get("support_differs_ops", [])]
        if rows:
            parts.append(_table(["op", "n", "nodes", "openxla", "xcviz", "why"], rows))
    hy = g.get("hybrid")
    if hy:
        parts.append(f'<p class="note">ran: {_e(hy.get("ran", ""))}</p>')
        for note in hy.get("notes", []) + hy.get("errors", []):
            parts.append(f'<p class="note">{_e(note)}</p>')
    parts.append("</div>")
    return "".join(parts)


def _break(b: dict, k: int) -> str:
    return (f'<div class="break" id="break-{k}"><h2>break {k + 1}</h2><p>{_e(b["summary"])}</p>'
            f'<p><code>{_e(b["user_frame"])}</code></p>' + (f"<p><code>{_e(b['line'])}</code></p>" if b["line"] else "")
            + f"<details><summary>Dynamo's reason</summary><pre>{_e(b['reason'])}</pre></details></div>")


def compile_page(data: dict, title: str = "torch.compile") -> str:
    """Deterministic: the same report, the same bytes."""
    s = data["summary"]
    summary = _table(["graphs", "breaks", "recompilations", "clusters", "coverage (eager segments native)",
                      "coverage in graphs", "bytes crossing (activations)", "resident parameters", "est. speedup (graphs)"],
                     [[str(s["graphs"]), str(s["breaks"]), str(s["recompilations"]), str(s["clusters"]),
                       _e(fmt_pct(s["coverage"])), _e(fmt_pct(s["coverage_in_graphs"])), _e(fmt_bytes(_crossing(s))),
                       _e(fmt_bytes(s.get("parameter_bytes"))),
                       _e(fmt_speedup(s["est_speedup"]))]])
    after: dict[int, list[int]] = {}
    for k, b in enumerate(data["breaks"]):
        after.setdefault(b["after_graph"], []).append(k)
    flow = []
    for g in data["graphs"]:
        flow.append(_graph(g))
        flow += [_break(data["breaks"][k], k) for k in after.get(g["index"], [])]
    t = _e(f"xcviz · {title}")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
            f"<meta name=\"generator\" content=\"xcviz compile-report\">\n<title>{t}</title>\n<style>{_CSS}</style>\n</head>\n"
            f"<body>\n<h1>{t}</h1>\n<section id=\"summary\">{summary}<p class=\"note\">Code Dynamo ran eagerly between "
            "graphs counts as one native op per break in the coverage; the estimate covers the captured graphs only.</p>"
            f"</section>\n<section class=\"flow\" id=\"flow\">{''.join(flow)}</section>\n</body>\n</html>\n")
