"""TensorFlow's own candidate and cycle-graph rules, for graphs read from TensorFlow (op types `tf.<Op>`).

What MarkForCompilationPass does beyond the generic pass (tensorflow/compiler/jit/mark_for_compilation_pass.cc,
xla_cluster_util.cc, resource_operation_safety_analysis.cc): candidates come from TF's XLA kernel registry
(ops/tf_kernels.py) and its auto-clustering filters (no stateful random ops, no Assert/CheckNumerics, no
variant tensors, no string constants, functional ops only when their bodies compile); the cycle graph lifts
edges into Enter and out of Exit to one node per loop frame and drops NextIteration back edges; resource
operations that must not share a cluster (a write before a read) get a phantom path; clusters merge only
under equal deadness predicates (tf_deadness.py)."""
from __future__ import annotations

from dataclasses import dataclass

from ..ops.tf_kernels import registry, type_refusal, xla_devices
from .options import Candidates, ClusterOptions, normalize_device
from .tf_deadness import deadness, describe

PREFIX = "tf."
STATEFUL_RANDOM = {"RandomUniform", "RandomUniformInt", "RandomStandardNormal", "TruncatedNormal",
                   "Multinomial", "RandomShuffle", "RandomGamma", "RandomPoisson", "RandomPoissonV2"}
ASSERTS = {"Assert", "CheckNumerics"}
CONTROL_FLOW = {"Enter", "Exit", "Switch", "Merge", "NextIteration", "LoopCond", "RefEnter", "RefExit",
                "RefSwitch", "RefMerge", "RefNextIteration"}
FUNCTIONAL = {"While", "StatelessWhile", "If", "StatelessIf", "PartitionedCall", "StatefulPartitionedCall"}
# resource operation kinds (XlaResourceOpInfo): reads, writes, read-modify-writes
READS = {"ReadVariableOp", "ResourceGather", "ResourceGatherNd", "VariableShape"}
WRITES = {"AssignVariableOp"}
READ_WRITES = {"AssignAddVariableOp", "AssignSubVariableOp", "ResourceApplyGradientDescent", "RngReadAndSkip",
               "ResourceScatterAdd", "ResourceScatterUpdate", "StatefulUniform", "StatefulStandardNormalV2",
               "StatefulUniformInt", "StatefulUniformFullInt", "StatefulTruncatedNormal", "RngSkip"}


def is_tf_graph(graph) -> bool:
    return bool(graph.nodes) and graph.nodes[0].op_type.startswith(PREFIX)


def base_op(node) -> str:
    return node.op_type[len(PREFIX):] if node.op_type.startswith(PREFIX) else node.op_type


@dataclass
class TFInfo:
    """What the generic pass needs from TF's rules: the cycle-graph edges and each node's deadness."""

    extra_nodes: int
    edges: list[tuple[int, int]]      # over ids: 0 source, 1 sink, 2.. graph inputs, then nodes, then extra
    deadness: list[object]
    dead_text: list[str]


def op_refusal(op: str, attrs: dict, kind: str) -> tuple[str, str] | None:
    """(code, TF-worded reason) when TF would not compile an op of this type on `kind`; None: a candidate."""
    if op in ("_Arg", "_Retval", "Placeholder"):
        return "argument", f"{op}: a function argument or result, never clustered"
    if op in CONTROL_FLOW:
        return "control-flow", f"{op}: v1 control flow has no XLA kernel"
    if op in STATEFUL_RANDOM:
        return "unsupported", f"stateful random operation {op} (auto-clustering does not compile stateful RNG ops)"
    if op in ASSERTS:
        return "unsupported", f"{op} (auto-clustering keeps Assert and CheckNumerics out of clusters)"
    if op.startswith(("TensorList", "TensorArray")) or any(
            (isinstance(v, str) and v == "variant") or (isinstance(v, list) and "variant" in v) for v in attrs.values()):
        return "unsupported", f"{op} produces or consumes a variant tensor"
    if op == "Const" and attrs.get("dtype") == "string":
        return "unsupported", "string constant (XLA has no string type)"
    if op in FUNCTIONAL:
        for inner in attrs.get("_body_ops", ()):
            why = op_refusal(inner, {}, kind)
            if why is not None and inner not in ("NoOp",):
                return "unsupported", f"{op} calls a function that runs {inner}: {why[1]}"
        if op in FUNCTIONAL and not attrs.get("_body_ops") and op not in registry()["ops"]:
            return "unsupported", f"no XLA kernel for {op}"
    if kind not in xla_devices(op):
        return "unsupported", f"unsupported op {op}: no {kind.upper()} XLA kernel registered (tf2xla)"
    bad = type_refusal(op, kind, attrs)
    if bad:
        return "unsupported", f"unsupported op {op}: {bad}"
    return None


def tf_candidates(graph, opts: ClusterOptions) -> Candidates:
    c = Candidates()
    for node in graph.nodes:
        kind, dev = normalize_device(node.device, opts.device)
        op = base_op(node)
        if node.compile is False:
            why = ("forced", "forced off (_XlaCompile=false)")
        elif op in opts.deny or node.op_type in opts.deny:
            why = ("denied", f"denied by --deny ({op})")
        elif op in opts.allow or node.op_type in opts.allow:
            why = None
        else:
            why = op_refusal(op, node.attrs, kind)
        c.ok.append(why is None)
        c.code.append(why[0] if why else None)
        c.reason.append(why[1] if why else None)
        c.device.append(node.device or dev)
    preds = deadness(graph, base_op)
    c.tf = TFInfo(*_cycle_edges(graph), deadness=preds, dead_text=[describe(p) for p in preds])
    return c


def _frames(graph, ops: list[str]) -> tuple[list[str], dict[str, str]]:
    """Each node's frame name (BuildControlFlowInfo) and each frame's parent ('' is the root frame)."""
    idx = graph.index
    frame = [""] * len(graph.nodes)
    parent: dict[str, str] = {}
    for j, node in enumerate(graph.nodes):
        f = ""
        for ref in (*node.inputs, *node.control_inputs):
            i = idx.get(ref.partition(":")[0])
            if i is not None:
                f = parent.get(frame[i], "") if ops[i] == "Exit" else frame[i]
                break
        if ops[j] == "Enter":
            inner = str(node.attrs.get("frame_name", ""))
            parent.setdefault(inner, f)
            f = inner
        frame[j] = f
    return frame, parent


def _cycle_edges(graph) -> tuple[int, list[tuple[int, int]]]:
    """CreateCycleDetectionGraph + AdjustCycleDetectionGraphForResourceOps, as a list of edges."""
    nodes = graph.nodes
    n_in, n = len(graph.inputs), len(nodes)
    base = 2 + n_in
    ops = [base_op(nd) for nd in nodes]
    idx = graph.index
    input_id = {v.name: 2 + i for i, v in enumerate(graph.inputs)}
    frame, _ = _frames(graph, ops)
    frame_id: dict[str, int] = {}
    edges: list[tuple[int, int]] = []
    has_in = [False] * (base + n)
    has_out = [False] * (base + n)
    preds: list[list[int]] = [[] for _ in range(n)]
    extra = 0

    def frame_node(f: str) -> int:
        nonlocal extra
        if f not in frame_id:
            frame_id[f] = base + n + extra
            extra += 1
        return frame_id[f]

    for j, node in enumerate(nodes):
        dst = base + j
        refs = [r for r in node.inputs if r] + list(node.control_inputs)
        for ref in refs:
            src = input_id.get(ref)
            i = None if src is not None else idx[ref.partition(":")[0]]
            if src is None:
                src = base + i
                preds[j].append(i)
            has_out[src] = has_in[dst] = True
            if ops[j] == "Enter" or (i is not None and ops[i] == "Exit"):
                s = frame_node(frame[i]) if i is not None and ops[i] == "Exit" else src
                d = frame_node(frame[j]) if ops[j] == "Enter" else dst
                edges.append((s, d))
            elif i is not None and ops[i] == "NextIteration":
                continue
            else:
                edges.append((src, dst))
        for ref in node.attrs.get("_back_edges", ()):  # (dropped from the cycle graph, as TF does)
            i = idx[ref.partition(":")[0]]
            has_out[base + i] = has_in[dst] = True
    for v in range(2, base + n):
        if not has_in[v]:
            edges.append((0, v))
        if not has_out[v]:
            edges.append((v, 1))
    for a, b in _unsafe_resource_pairs(nodes, ops, preds):
        p = base + n + extra
        extra += 1
        edges += [(base + a, p), (p, base + b)]
    return extra, edges


def _resource_kind(op: str, attrs: dict) -> str | None:
    if op in READS:
        return "R"
    if op in WRITES:
        return "W"
    if op in READ_WRITES:
        return "RW"
    if op in FUNCTIONAL:
        body = set(attrs.get("_body_ops", ()))
        r, w = bool(body & READS), bool(body & (WRITES | READ_WRITES))
        return "RW" if (r and w) or body & READ_WRITES else "W" if w else "R" if r else None
    return None


def _unsafe_resource_pairs(nodes, ops, preds) -> list[tuple[int, int]]:
    """Pairs (a, b), b depending on a, with a writing and b reading a resource: XLA runs a cluster's reads
    before its writes, so they must not share one (safe only: Read -> anything, anything -> Write)."""
    kinds = [_resource_kind(op, nd.attrs) for op, nd in zip(ops, nodes)]
    if not any(kinds):
        return []
    before: list[set[int]] = [set() for _ in nodes]  # resource ops each node depends on
    pairs: set[tuple[int, int]] = set()
    for j in range(len(nodes)):
        acc: set[int] = set()
        for i in preds[j]:
            acc |= before[i]
            if kinds[i]:
                acc.add(i)
        before[j] = acc
        if kinds[j] in ("R", "RW"):
            pairs.update((a, j) for a in acc if kinds[a] in ("W", "RW"))
    return sorted(pairs)
