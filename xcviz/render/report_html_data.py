"""The HTML report's data: nodes, drawn items and edges, clusters, fallbacks and the summary, as plain JSON-able values.

Parameters (graph inputs that hold constant data: initializers, weights) are not drawn: they fold into their
consumers' labels (`W ⟨64×64⟩ f32`), so the picture shows the computation, not the weights."""
from __future__ import annotations

from ..clustering import Clustering
from ..cost import Stats
from ..ir import Graph
from .tables import BOUNDARY, CLUSTER_COLORS, FALLBACK, cluster_color
from .units import fmt_bytes, fmt_pct, fmt_speedup

MAX_ATTRS = 30
MAX_TEXT = 200
LABEL_PARAMS = 2      # parameter lines in a node's label; the rest are in its details
SHORT_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int64": "i64",
                "int32": "i32", "int8": "i8", "uint8": "u8", "bool": "bool"}


def short(s: object, limit: int = MAX_TEXT) -> str:
    s = str(s)
    return s if len(s) <= limit else s[:limit - 1] + "…"


def param_text(name: str, t) -> str:
    """`W ⟨64×64⟩ f32`: a folded parameter, as labels show it."""
    shape = "?" if t.shape is None else "×".join(str(d) for d in t.shape) or "scalar"
    return f"{short(name, 40)} ⟨{shape}⟩ {SHORT_DTYPES.get(t.dtype, t.dtype)}"


def summary(graph: Graph, clustering: Clustering, stats: Stats) -> list[list[str]]:
    """The summary's (label, value) rows, formatted with units."""
    o = clustering.options
    rows = [
        ["graph", f"{graph.name} · {len(graph.nodes):,} ops"],
        ["options", f"{o.strategy}, {o.device}, min size {o.min_size}, hardware {stats.hardware}"],
        ["clusters", f"{stats.clusters:,} kept · {stats.fallback_nodes:,} fallback nodes"],
        ["η by ops", f"{fmt_pct(stats.coverage)} ({stats.clustered_nodes:,}/{stats.nodes:,})"],
        ["η by FLOPs", fmt_pct(stats.coverage_flops)],
        ["D (boundary bytes)", f"{fmt_bytes(stats.boundary_bytes)} over {stats.boundary_edges:,} edges"],
    ]
    params = getattr(stats, "parameter_bytes", None)
    acts = getattr(stats, "boundary_bytes_activations", None)
    if params is not None or acts is not None:   # the cost model's split, where it has one
        rows.append(["D split", f"activations {fmt_bytes(acts)} · parameters {fmt_bytes(params)}"])
    native = getattr(stats, "native", None)
    rows += [
        ["S (est. speedup)", f"{fmt_speedup(stats.speedup_estimate)} ({stats.hardware}"
                             + (f", vs {'NumPy reference' if native == 'numpy' else native})" if native else ")")],
        ["kernels", f"{stats.kernel_launches_before:,} → {stats.kernel_launches_after:,} launches"],
    ]
    return rows


def node_records(graph: Graph, clustering: Clustering) -> list[dict]:
    """One record per op node: what the details panel and the search read. Read from the graph's columns,
    each distinct type written once: a 100,000-op graph's records take a fraction of a second."""
    from ..ir import TensorType

    dims = graph.dims
    consts = {v.name: v for v in graph.inputs if v.is_param}  # weights (Value.is_param), as pictures and the cost model
    cols, nodes, n = graph.columns, graph.nodes, len(graph.nodes)
    src, port, rid = cols.src.tolist(), cols.port.tolist(), cols.rid.tolist()
    written: dict = {}

    def text(t) -> str:   # by identity: equal types are shared objects, and hashing one costs more
        got = written.get(id(t))
        if got is None:
            got = written[id(t)] = (str(t.bind(dims)), t)   # (the type kept: its id stays its own)
        return got[0]

    def type_of(s: int, k: int):
        if s < 0:
            return TensorType()
        if s >= n:
            return graph.inputs[s - n].type
        outs = cols.results[rid[s]]
        return outs[k] if k < len(outs) else TensorType()

    params_of: dict = {}
    out = []
    at = 0
    cluster_of, device, candidate, code, reason = (clustering.cluster_of, clustering.device, clustering.candidate,
                                                   clustering.code, clustering.reason)
    for i, (name, op, op_type, refs, outs, attrs) in enumerate(zip(
            nodes.column("name"), nodes.column("op"), nodes.column("op_type"), nodes.column("inputs"),
            nodes.column("outputs"), nodes.column("attrs"))):
        k = cluster_of[i]
        ins = []
        for j, r in enumerate(refs):
            ins.append(f"{r}: {text(type_of(src[at + j], port[at + j]))}" if r else "(absent)")
        at += len(refs)
        params = []
        for r in refs:
            if r in consts:
                got = params_of.get(r)
                if got is None:
                    got = params_of[r] = param_text(r, consts[r].type.bind(dims))
                params.append(got)
        rec = {
            "name": name, "op": op, "t": op_type, "g": k, "d": device[i], "cand": bool(candidate[i]),
            "in": ins, "out": [text(t) for t in outs],
            "attrs": [[key, short(attrs[key])] for key in sorted(attrs)[:MAX_ATTRS]] if attrs else [],
            "params": params,
        }
        if k < 0:
            rec["c"] = code[i] or "fallback"
            rec["r"] = reason[i] or rec["c"]
        out.append(rec)
    return out


def node_lines(rec: dict) -> list[str]:
    """The text drawn in a node's box (and sized by the layout)."""
    lines = [short(rec["name"], 40), short(rec["t"], 40)]
    if rec["g"] < 0 and "c" in rec:
        lines.append(short(rec["r"], 48))
    lines += rec["params"][:LABEL_PARAMS]
    if len(rec["params"]) > LABEL_PARAMS:
        lines.append(f"+{len(rec['params']) - LABEL_PARAMS} parameters")
    return lines


def cluster_records(clustering: Clustering, stats: Stats, validation=None) -> list[dict]:
    checks = {c.id: c for c in validation.clusters} if validation is not None else {}
    out = []
    for k, c in enumerate(stats.clusters_detail):
        rec = {"id": c.id, "color": cluster_color(k), "members": list(clustering.clusters[k]),
               "ops": " ".join(f"{op}×{n}" if n > 1 else op for op, n in c.ops.items()), "flops": c.flops,
               "bin": c.boundary_bytes_in, "bout": c.boundary_bytes_out,
               "s": None if c.speedup_estimate is None else round(c.speedup_estimate, 4)}
        v = checks.get(c.id)
        if validation is not None:
            rec["v"] = None if v is None else {
                "status": v.status, "native_ms": _r(v.native_ms), "xla_ms": _r(v.xla_ms),
                "speedup": _r(v.speedup_measured), "err": _r(v.max_abs_error, 9), "compile_ms": _r(v.compile_ms),
                "message": short(v.message or "")}
        out.append(rec)
    return out


def _r(x: float | None, digits: int = 4) -> float | None:
    import math

    return None if x is None or not math.isfinite(x) else round(float(x), digits)


def attempt_rows(graph: Graph, clustering: Clustering, limit: int) -> tuple[list, list[str]] | None:
    """Every merge attempt as [src, dst, merged, phase, reason index, path], with the interned reasons;
    None above `limit` attempts (the page then tells the user to run `xcviz explain`)."""
    if len(clustering.attempts) > limit:
        return None
    reasons: dict[str, int] = {}
    rows = []
    log = clustering.attempts
    table = getattr(log, "table", None)
    if table is not None:   # the compiled pass's log: merges straight from its table, refusals made with their text
        refused = iter(log.refused())
        for phase, src, dst, merged, *_ in table.tolist():
            if merged:
                rows.append([src, dst, 1, phase, -1, []])
            else:
                a = next(refused)
                rows.append([a.src, a.dst, 0, a.phase, reasons.setdefault(a.reason, len(reasons)), list(a.path)])
        return rows, list(reasons)
    for a in log:
        r = -1 if a.reason is None else reasons.setdefault(a.reason, len(reasons))
        rows.append([a.src, a.dst, int(a.merged), a.phase, r, list(a.path)])
    return rows, list(reasons)


def input_uses(graph: Graph) -> list[int]:
    """How many nodes (and graph outputs) read each graph input."""
    pos = {v.name: k for k, v in enumerate(graph.inputs)}
    uses = [0] * len(graph.inputs)
    for ref in [r for node in graph.nodes for r in dict.fromkeys(node.inputs)] + list(graph.outputs):
        if ref in pos:
            uses[pos[ref]] += 1
    return uses


def drawn_expanded(graph: Graph, clustering: Clustering, records: list[dict]):
    """Items (id, label, shape), edges {s, t, k, b, tip} and the clusters' member ids, every node drawn.

    An input read by more than SHARED_FANOUT nodes is drawn once per reader (`i<k>_<j>`), as render/dot.py does:
    one node with hundreds of rank-spanning edges costs the layout O(uses × depth) virtual nodes."""
    from .dot_parts import SHARED_FANOUT

    dims = graph.dims
    inputs = {v.name: k for k, v in enumerate(graph.inputs) if not v.is_param}
    consts = {v.name for v in graph.inputs if v.is_param}  # weights (Value.is_param), as pictures and the cost model
    shared = {k for k, n in enumerate(input_uses(graph)) if n > SHARED_FANOUT}
    group = clustering.cluster_of
    label = {k: f"{v.name}\n{v.type.bind(dims)}" for k, v in enumerate(graph.inputs) if not v.is_param}
    items = [(f"i{k}", label[k], "box") for k in sorted(label) if k not in shared]
    copies = []
    items += [(f"n{i}", "\n".join(node_lines(rec)), "box") for i, rec in enumerate(records)]
    items += [(f"o{k}", f"output {ref}", "box") for k, ref in enumerate(graph.outputs)]
    edges: dict[tuple[str, str], dict] = {}

    def add(ref: str, dst: str, dst_group: int) -> None:
        if not ref or ref in consts:
            return
        if ref in inputs:
            src, src_group = f"i{inputs[ref]}", -1
            if inputs[ref] in shared:
                src = f"{src}_{dst}"
                copies.append((src, label[inputs[ref]], "box"))
        else:
            p = graph.producer(ref)
            src, src_group = f"n{p}", group[p]
        t = graph.tensor_type(ref).bind(dims)
        kind = "b" if src_group != dst_group and (src_group >= 0 or dst_group >= 0) else "i" if src_group >= 0 else "p"
        e = edges.setdefault((src, dst), {"s": src, "t": dst, "k": kind, "b": 0, "tip": []})
        nbytes = t.nbytes()
        e["b"] = None if nbytes is None or e["b"] is None else e["b"] + nbytes
        e["tip"].append(f"{ref}: {t} · {fmt_bytes(nbytes)}")

    for j, node in enumerate(graph.nodes):
        for ref in dict.fromkeys(node.inputs):
            add(ref, f"n{j}", group[j])
        for ref in node.control_inputs:
            edges.setdefault((f"n{graph.index[ref]}", f"n{j}"), {"s": f"n{graph.index[ref]}", "t": f"n{j}", "k": "c",
                                                                  "b": None, "tip": [f"control: {ref} → {node.name}"]})
    for k, ref in enumerate(graph.outputs):
        add(ref, f"o{k}", -1)
    members = {f"c{k}": [f"n{i}" for i in m] for k, m in enumerate(clustering.clusters)}
    return items + copies, list(edges.values()), members


def drawn_collapsed(graph: Graph, clustering: Clustering, records: list[dict], clusters: list[dict]):
    """Items and edges with each cluster drawn as one item `g<k>`; edges between the same two items merge, and
    an input drawn per reader is drawn once per collapsed reader."""
    items, edges, _ = drawn_expanded(graph, clustering, records)
    item_of = {f"n{i}": f"g{k}" for k, c in enumerate(clusters) for i in c["members"]}
    label = {i: lab for i, lab, _ in items}
    kept = {i: (i, lab, shape) for i, lab, shape in items if i not in item_of and "_" not in i}
    kept.update({f"g{k}": (f"g{k}", f"{c['id']}\n{len(c['members'])} ops · est. {fmt_speedup(c['s'])}\n"
                           f"{short(c['ops'], 48)}", "box") for k, c in enumerate(clusters)})
    merged: dict[tuple[str, str], dict] = {}
    for e in edges:
        s, t = item_of.get(e["s"], e["s"]), item_of.get(e["t"], e["t"])
        if "_" in s:   # a per-reader input copy: one per collapsed reader
            s = s.split("_")[0] + "_" + t
            kept.setdefault(s, (s, label[e["s"]], "box"))
        if s == t:
            continue
        m = merged.setdefault((s, t), {"s": s, "t": t, "k": e["k"], "b": 0, "tip": []})
        m["b"] = None if e["b"] is None or m["b"] is None else m["b"] + e["b"]
        m["tip"] += e["tip"]
        if e["k"] == "b":
            m["k"] = "b"
    return list(kept.values()), list(merged.values())


COLORS = {"fallback": FALLBACK, "boundary": BOUNDARY, "clusters": CLUSTER_COLORS}
