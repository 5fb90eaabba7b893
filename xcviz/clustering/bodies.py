"""Control-flow bodies in clustering: a Loop/If/Scan node is one candidate when its whole body compiles, and its bodies are clustered too.

TensorFlow does the same with functional While/If (compilability_check_util.cc, IsCompilableWhile/If):
the node is a single candidate, compilable only when every op of its cond/body (or then/else) functions
is, recursively; XLA lowers it to one While/Conditional. Here the bodies are the Graphs the loader built
once (ir.Body.graph); the clustering pass clusters them with its own options, recursively, and
its result carries them (`Clustering.bodies`), for cost, runtime and renderers to read.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..ir import Body
from ..ops import BODY_CONTROL, REGISTRY
from .options import Candidates, ClusterOptions, find_candidates, normalize_device

CONTROL_OPS = REGISTRY.names(BODY_CONTROL)
BODY_ATTRS = ("body", "then_branch", "else_branch")


def node_bodies(node) -> list[tuple[str, object]]:
    """(attribute, ir.Body) of each body the node keeps (Body.kept), in a fixed order."""
    return [(k, v) for k in BODY_ATTRS for v in (node.attrs.get(k),) if isinstance(v, Body) and v.kept]


def body_graph(sub):
    """The body's Graph, as the loader built it (its outer-scope names are extra graph inputs); the loader's
    error when it did not load."""
    return sub.body()


def refine_candidates(graph, cands: Candidates, opts: ClusterOptions) -> None:
    """Turn candidate control-flow nodes whose bodies do not compile into fallbacks, with the reason."""
    if not cands.kinds or not any(k[1] in CONTROL_OPS and k[3] for k in cands.kinds):
        return
    cf_kinds = [i for i, k in enumerate(cands.kinds) if k[1] in CONTROL_OPS and k[3]]
    for j in np.flatnonzero(np.isin(cands.kind_of, cf_kinds)).tolist():
        node = graph.nodes[j]
        kind, _ = normalize_device(node.device, opts.device)
        why = refusal(graph, node, opts, kind)
        if why is None:
            continue
        cands.ok[j], cands.code[j], cands.reason[j] = False, "unsupported", why
        dev, op, known, _, compile_ = cands.kinds[cands.kind_of[j]]
        cands.kinds.append((dev, op, known, False, compile_))
        cands.kind_of[j] = len(cands.kinds) - 1


def body_candidates(g, opts: ClusterOptions) -> Candidates:
    cands = find_candidates(g, opts)
    refine_candidates(g, cands, opts)
    return cands


def refusal(graph, node, opts: ClusterOptions, kind: str) -> str | None:
    """Why XLA could not compile this control-flow node as one While/Conditional; None when it can."""
    bodies = node_bodies(node)
    if not bodies:
        return f"its body was not kept ({node.op_type} read without its subgraph), so it cannot be compiled"
    for _, sub in bodies:
        try:
            g = body_graph(sub)
        except Exception as e:  # noqa: BLE001 - a body that does not load is a reason, not a crash
            return f"its body does not load: {str(e).splitlines()[0][:120]}"
        cands = body_candidates(g, opts)
        for i, ok in enumerate(cands.ok):
            if not ok:
                inner = g.nodes[i]
                return f"body op {inner.name!r} ({inner.op_type}) cannot be compiled: {cands.reason[i]}"
    from .bodies_static import static_refusal

    return static_refusal(graph, node, [body_graph(s) for _, s in bodies])


@dataclass
class BodyClustering:
    """One body of a control-flow node, clustered with the outer graph's options; nested bodies in `children`."""

    node: str                      # the control-flow node's name (in its own graph)
    op_type: str
    attr: str                      # body, then_branch or else_branch
    graph: object
    clustering: object
    children: list["BodyClustering"] = field(default_factory=list)
    compiled_in: str | None = None  # the cluster its node joined: the body then runs inside it, compiled whole

    @property
    def label(self) -> str:
        return f"{self.op_type} {self.node!r} {self.attr.replace('_branch', '')}"

    @property
    def compiled_note(self) -> str:
        """'compiled whole inside cluster_0 (an XLA While)'; empty when the node runs natively."""
        if self.compiled_in is None:
            return ""
        return f"compiled whole inside {self.compiled_in} (an XLA {'Conditional' if self.op_type == 'If' else 'While'})"

    @property
    def clustered(self) -> int:
        return sum(len(c) for c in self.clustering.clusters)


def body_clusterings(graph, opts: ClusterOptions, clustering, depth: int = 0) -> list[BodyClustering]:
    """Every body of every control-flow node in `graph` (in node order), clustered with `opts`, recursively:
    run_clustering calls this once per result (`Clustering.bodies`); `clustering` (graph's own) tells which
    nodes run compiled, their bodies with them."""
    from . import cluster_with_bodies

    out: list[BodyClustering] = []
    if depth > 16 or not has_control_flow(graph):  # (a body nests itself only in a malformed file)
        return out
    for j, node in enumerate(graph.nodes):
        if node.op not in CONTROL_OPS:
            continue
        k = clustering.cluster_of[j]
        for attr, sub in node_bodies(node):
            if sub.graph is None:  # the node's own reason already says its body does not load
                continue
            g = _outer_typed(sub.graph, graph, node)
            c = cluster_with_bodies(g, opts, depth + 1)
            out.append(BodyClustering(node.name, node.op_type, attr, g, c, c.bodies,
                                      clustering.cluster_id(k) if k >= 0 else None))
    return out


def _outer_typed(body, graph, node):
    """The body as its node sees it: its inputs for the outer-scope values it reads take the outer graph's type
    (and a weight's data), which the body's own file does not declare (they would draw as `?[?] unknown`). The
    node lists the outer names it reads (`_outer`) after its own inputs, where the loader rewrote each into the
    outer graph's ref. A copy: the loader's body stays as built (cost retypes it from the node's own types)."""
    import dataclasses

    names = node.attrs.get("_outer") or ()
    at = node.attrs.get("_n_inputs")
    refs = dict(zip(names, node.inputs[at:])) if isinstance(at, int) else {}
    outer = {v.name: v for v in graph.inputs}
    inputs = []
    for v in body.inputs:
        if v.data is None and v.type.shape is None and v.type.dtype is None:
            ref = refs.get(v.name, v.name)
            source = outer.get(ref)
            if source is not None:
                v = dataclasses.replace(v, type=source.type, data=source.data)
            elif ref.split(":", 1)[0] in graph.index:
                v = dataclasses.replace(v, type=graph.tensor_type(ref))
        inputs.append(v)
    return dataclasses.replace(body, inputs=inputs, dims=dict(body.dims))


def has_control_flow(graph) -> bool:
    """Any Loop/If/Scan node (read at C speed: renderers ask this of 10^6-node graphs)."""
    
    return not _CONTROL_SET.isdisjoint(graph.columns.op)


_CONTROL_SET = frozenset(CONTROL_OPS)
