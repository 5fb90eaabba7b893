"""TensorFlow's own candidate and cycle-graph rules, for graphs read from TensorFlow (op types `tf.<Op>`).

What MarkForCompilationPass does beyond the generic pass (tensorflow/compiler/jit/mark_for_compilation_pass.cc,
xla_cluster_util.cc, resource_operation_safety_analysis.cc): candidates come from TF's XLA kernel registry
(ops/tf/kernels.py) and its auto-clustering filters (no stateful random ops, no Assert/CheckNumerics, no
variant tensors, no string constants, functional ops only when their bodies compile); the cycle graph lifts
edges into Enter and out of Exit to one node per loop frame and drops NextIteration back edges; clusters
holding resource operations that must not share one (a write reaching a read) are not merged; clusters
merge only under equal deadness predicates (tf_deadness.py)."""
from __future__ import annotations

from dataclasses import dataclass

from ..ops.tf.kernels import registry, type_refusal, xla_devices
from .options import Candidates, ClusterOptions, normalize_device
from .tf_deadness import deadness, describe
from .tf_filter import body_refusal, filter_refusal

PREFIX = "tf."
CONTROL_FLOW = {"Enter", "Exit", "Switch", "Merge", "NextIteration", "LoopCond", "RefEnter", "RefExit",
                "RefSwitch", "RefMerge", "RefNextIteration"}
FUNCTIONAL = {"While", "StatelessWhile", "If", "StatelessIf", "Case", "StatelessCase", "PartitionedCall",
              "StatefulPartitionedCall"}
# resource operation kinds (XlaResourceOpInfo): reads, writes, read-modify-writes
READS = {"ReadVariableOp", "ResourceGather", "ResourceGatherNd", "VariableShape"}
WRITES = {"AssignVariableOp"}
READ_WRITES = {"AssignAddVariableOp", "AssignSubVariableOp", "ResourceApplyGradientDescent", "RngReadAndSkip",
               "ResourceScatterAdd", "ResourceScatterUpdate", "StatefulUniform", "StatefulStandardNormalV2",
               "StatefulUniformInt", "StatefulUniformFullInt", "StatefulTruncatedNormal", "RngSkip"}


def is_tf_graph(graph) -> bool:
    return bool(len(graph.nodes)) and graph.nodes.row(0).op_type.startswith(PREFIX)  # (node 0 alone)


def base_op(node) -> str:
    return node.op_type[len(PREFIX):] if node.op_type.startswith(PREFIX) else node.op_type


@dataclass
class TFInfo:
    """What the generic pass needs from TF's rules (node positions index the lists)."""

    extra_nodes: int
    edges: list[tuple[int, int]]      # over ids: 0 source, 1 sink, 2.. graph inputs, then nodes, then frames
    deadness: list[object]
    dead_text: list[str]
    resource_op: list[bool]           # touches a resource or may call a function: checked against `unsafe`
    unsafe: set[tuple[int, int]]      # (a, b): a reaches b and XLA cannot keep their order in one cluster
    keep: list[bool]                  # a cluster holding it is kept whatever its size (_XlaCompile, While/If)
    no_phase1_from: list[bool]        # a lone scalar integer AssignAdd/SubVariableOp: not merged from in phase 1


def op_refusal(op: str, attrs: dict, kind: str, in_body: bool = False) -> tuple[str, str] | None:
    """(code, TF-worded reason) when TF would not compile an op of this type on `kind`; None: a candidate.
    The checks run in IsCompilableNode's order: arguments, kernels (and a string Const), bodies of functional
    ops, then the OperationFilter's flags (tf_filter.py)."""
    if op in ("_Arg", "_Retval", "Placeholder"):
        if in_body and op != "Placeholder":
            return None
        return "argument", f"{op}: a function argument or result, never clustered"
    if op in CONTROL_FLOW:
        return "control-flow", f"{op}: v1 control flow has no XLA kernel"
    if op == "Const" and attrs.get("dtype") == "string":
        return "unsupported", "string constant (XLA has no string type)"
    if op in FUNCTIONAL or attrs.get("_body_ops") is not None:
        if op in FUNCTIONAL and not attrs.get("_body_ops") and op not in registry()["ops"]:
            return "unsupported", f"no XLA kernel for {op}"
        inner = body_refusal(attrs)
        if inner is not None:
            return "unsupported", f"{op} calls a function that runs {inner[0]}: {inner[1]}"
        for inner_op in attrs.get("_body_ops") or ():
            why = op_refusal(inner_op, {}, kind, True)
            if why is not None and inner_op != "NoOp":
                return "unsupported", f"{op} calls a function that runs {inner_op}: {why[1]}"
        if op not in FUNCTIONAL:  # a call of a library function by its name: no kernel of its own (IsFunctionCall)
            return filter_refusal_coded(op, attrs, in_body)
    if kind not in xla_devices(op):
        return "unsupported", f"unsupported op {op}: no {kind.upper()} XLA kernel registered (tf2xla)"
    bad = type_refusal(op, kind, attrs)
    if bad:
        return "unsupported", f"unsupported op {op}: {bad}"
    return filter_refusal_coded(op, attrs, in_body)


def filter_refusal_coded(op: str, attrs: dict, in_body: bool) -> tuple[str, str] | None:
    why = filter_refusal(op, attrs, in_body)
    return None if why is None else ("unsupported", f"{op}: {why} (TF's auto-clustering filter)")


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
    ops = [base_op(nd) for nd in graph.nodes]
    extra, edges, in_nodes = _cycle_edges(graph)
    for j in _identities_driving_loop_consts(graph, ops):
        if c.ok[j]:
            c.ok[j], c.code[j] = False, "loop"
            c.reason[j] = ("including it can create dependencies between while loop condition and body "
                           "computations with runtime overhead")
    res = _resource_nodes(graph, ops)
    c.tf = TFInfo(extra, edges, preds, [describe(p) for p in preds], res,
                  set(_unsafe_resource_pairs(graph.nodes, ops, in_nodes)),
                  [n.must_compile or op in _KEEP
                   for n, op in zip(graph.nodes, ops)],
                  [_scalar_int_assign(graph, n, op) for n, op in zip(graph.nodes, ops)])
    return c


def _functional_tf_ops() -> frozenset[str]:
    """has_functional_control_flow's ops by their TF names: the entries of the ops group result.keeps_cluster asks."""
    from ..ops import FUNCTIONAL, REGISTRY

    return frozenset(o.name[3:] for o in REGISTRY if FUNCTIONAL in o.groups and o.name.startswith("tf."))


_KEEP = _functional_tf_ops()  # While, StatelessWhile, If, StatelessIf


def _identities_driving_loop_consts(graph, ops) -> list[int]:
    """IsIdentityDrivingConstsInLoop: an Identity on a loop Switch's true output with control edges to Consts."""
    idx = graph.index
    drives: set[int] = set()
    for j, node in enumerate(graph.nodes):
        if ops[j] == "Const":
            drives.update(idx[c] for c in node.control_inputs if c in idx)
    out = []
    for j in sorted(drives):
        node = graph.nodes[j]
        if ops[j] != "Identity":
            continue
        for ref in node.inputs:
            name, _, k = ref.partition(":")
            i = idx.get(name)
            if i is not None and ops[i] == "Switch" and k == "1" and len(graph.nodes[i].inputs) > 1:
                cond = idx.get(graph.nodes[i].inputs[1].partition(":")[0])
                if cond is not None and ops[cond] == "LoopCond":
                    out.append(j)
                    break
    return out


def _resource_nodes(graph, ops) -> list[bool]:
    """HasResourceInputOrOutput or MayCallFunction, per node."""
    idx = graph.index
    resource_out = [op == "VarHandleOp" or (op in ("_Arg", "Identity", "Placeholder") and
                                             (n.attrs.get("T") == "resource" or n.attrs.get("dtype") == "resource"))
                    for n, op in zip(graph.nodes, ops)]
    out = []
    for j, (n, op) in enumerate(zip(graph.nodes, ops)):
        reads = any(resource_out[idx[r.partition(":")[0]]] for r in n.inputs if r and r.partition(":")[0] in idx)
        out.append(resource_out[j] or reads or _kind(op, n.attrs) is not None)
    return out


def _scalar_int_assign(graph, node, op) -> bool:
    if op not in ("AssignAddVariableOp", "AssignSubVariableOp") or node.attrs.get("dtype") not in (
            "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        return False
    for ref in node.inputs:
        src = graph.nodes[graph.index[ref.partition(":")[0]]] if ref.partition(":")[0] in graph.index else None
        if src is not None and base_op(src) == "Const":
            v = src.attrs.get("value")
            return getattr(v, "ndim", 1) == 0
    return False


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


def _cycle_edges(graph) -> tuple[int, list[tuple[int, int]], list[list[int]]]:
    """CreateCycleDetectionGraph as a list of edges (and each node's producers, back edges left out)."""
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
    return extra, edges, preds


def _kind(op: str, attrs: dict) -> str | None:
    """XlaResourceOpKind: R, W or RW; a node that may call a function counts as RW (TF assumes the worst)."""
    if op in READS:
        return "R"
    if op in WRITES:
        return "W"
    if op in READ_WRITES or op in FUNCTIONAL or "_body_ops" in attrs:
        return "RW"
    return None


def _unsafe_resource_pairs(nodes, ops, preds) -> list[tuple[int, int]]:
    """ComputeIncompatibleResourceOperationPairs: (a, b) when a reaches b (back edges left out) and the edge is
    not safe (XLA runs a cluster's reads before its writes: only Read -> anything and anything -> Write are)."""
    kinds = [_kind(op, nd.attrs) for op, nd in zip(ops, nodes)]
    if not any(kinds):
        return []
    reaching: list[set[int]] = [set() for _ in nodes]  # non-read resource ops reaching each node
    pairs: set[tuple[int, int]] = set()
    for j in range(len(nodes)):
        acc: set[int] = set()
        for i in preds[j]:
            acc |= reaching[i]
        if kinds[j]:
            pairs.update((a, j) for a in acc if a != j and kinds[j] != "W")
            if kinds[j] != "R":
                acc.add(j)
        reaching[j] = acc
    return sorted(pairs)
