"""Cluster -> JAX function; jit, lower (StableHLO), compile (optimized HLO), fusion count, memory, cache.

A cluster's function takes its entry tensors (produced outside it) and returns its exit tensors. Entry
tensors that decide shapes (a reshape target, slice bounds: the op's `static` inputs) or that are
integer graph constants are baked in as compile-time constants, like TF's must-be-constant inputs, and
become part of the cache key by value. Everything else is an argument, so structurally identical
clusters (same ops, attributes, wiring, shapes and dtypes) share one executable, as XLA's cache does.
"""
from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import XcvizError
from ..ir import Graph, format_ref, parse_ref
from ..ops import REGISTRY, SHAPE_CONSUMER, TYPE_VALUE
from .node import eval_node


@dataclass
class ClusterSpec:
    members: list[int]
    entries: list[str]      # refs read from outside, in order of first use
    exits: list[str]        # refs produced inside and read outside (or graph outputs)


def cluster_spec(graph: Graph, members: list[int]) -> ClusterSpec:
    inside = {graph.nodes[i].name for i in members}
    entries: list[str] = []
    for i in members:
        for ref, parsed in zip(graph.nodes[i].inputs, graph.input_refs(i)):
            if ref and parsed.node not in inside and ref not in entries:
                entries.append(ref)
    member_set = set(members)
    used_outside = set(graph.outputs)
    for j, node in enumerate(graph.nodes):
        if j not in member_set:
            used_outside.update(r for r in node.inputs if r)
    exits = [format_ref(graph.nodes[i].name, k) for i in members for k in range(len(graph.nodes[i].outputs))
             if format_ref(graph.nodes[i].name, k) in used_outside]
    return ClusterSpec(list(members), entries, exits)


def cluster_specs(graph: Graph, clusters: list[list[int]]) -> list[ClusterSpec]:
    """cluster_spec for every cluster in one pass over the graph (not one pass per cluster)."""
    idx = graph.index
    owner = {}
    for k, members in enumerate(clusters):
        for i in members:
            owner[i] = k
    entries: list[list[str]] = [[] for _ in clusters]
    seen: list[set[str]] = [set() for _ in clusters]
    exported: list[set[str]] = [set() for _ in clusters]
    for r, parsed in zip(graph.outputs, graph.output_refs):
        k = owner.get(idx.get(parsed.node, -1))
        if k is not None:
            exported[k].add(r)
    for j, node in enumerate(graph.nodes):
        kj = owner.get(j)
        for ref, src in zip(node.inputs, graph.input_sources(j)):
            if not ref:
                continue
            ki = owner.get(src)
            if ki is not None and ki != kj:
                exported[ki].add(ref)
            if kj is not None and ki != kj and ref not in seen[kj]:
                seen[kj].add(ref)
                entries[kj].append(ref)
    specs = []
    for k, members in enumerate(clusters):
        exits = [format_ref(graph.nodes[i].name, o) for i in members for o in range(len(graph.nodes[i].outputs))
                 if format_ref(graph.nodes[i].name, o) in exported[k]]
        specs.append(ClusterSpec(list(members), entries[k], exits))
    return specs


def baked_entries(graph: Graph, spec: ClusterSpec) -> set[str]:
    from ..ops import REGISTRY

    """The entries compiled in as values (XLA's compile-time constants): integer constants, and every entry a
    must-be-constant input (a Slice's ends, a Reshape's shape, ...) is computed from inside the cluster, as
    TF's backwards constant analysis finds them: the walk goes back through the producers in the cluster and
    stops at shape-only ops (Shape, Size), whose values XLA knows from the static shapes."""
    consts = {v.name for v in graph.inputs if v.data is not None and np.asarray(v.data).dtype.kind != "f"}
    entries = set(spec.entries)
    baked = {r for r in entries if r in consts}
    local = {graph.nodes[i].name: i for i in spec.members}
    todo: list[str] = []
    for i in spec.members:
        node = graph.nodes[i]
        opdef = REGISTRY.ops.get(node.op) if node.known else None
        for slot in const_slots(node, opdef):
            if slot < len(node.inputs) and node.inputs[slot]:
                todo.append(node.inputs[slot])
    seen: set[str] = set()
    while todo:
        ref = todo.pop()
        if ref in seen:
            continue
        seen.add(ref)
        if ref in entries:
            baked.add(ref)
            continue
        i = local.get(parse_ref(ref).node)
        if i is None or graph.nodes[i].op in _SHAPE_ONLY:
            continue
        todo.extend(r for r in graph.nodes[i].inputs if r)
    return baked


# their value is their input's (static) shape, never its values: ONNX's Shape/Size/Rank and TF's (tf.Shape, ...,
# TF's shape consumers): the walk stops there, or a Flatten's Reshape(x, Pack(Shape(x)[0], -1)) bakes in x itself
_SHAPE_ONLY = REGISTRY.names(TYPE_VALUE) | REGISTRY.names(SHAPE_CONSUMER)


def const_slots(node, opdef) -> list[int]:
    """A node's must-be-constant inputs: its op's static inputs and, for a Loop / If / Scan, the outer-scope
    values (inputs appended by the loader) from which its bodies compute a must-be-constant input (a TopK's k
    from a shape outside the loop): TF's backwards constant analysis looks into the bodies of While / If too."""
    slots = list(opdef.static_inputs) if opdef is not None else []
    outer = node.attrs.get("_outer")
    if outer:
        from ..clustering.bodies import node_bodies

        need: set[str] = set()
        for _, sub in node_bodies(node):
            need |= _body_const_inputs(sub)
        own = len(node.inputs) - len(outer)
        slots += [own + j for j, name in enumerate(outer) if name in need]
    return slots


_BODY_CONSTS: dict[str, frozenset] = {}


def _body_const_inputs(sub) -> frozenset[str]:
    """The body's graph inputs (outer-scope names among them) that its must-be-constant inputs are computed from."""
    if sub in _BODY_CONSTS:
        return _BODY_CONSTS[sub]
    from ..ops import REGISTRY

    g = sub.body()
    names = {v.name for v in g.inputs}
    todo = [node.inputs[k] for node in g.nodes for k in const_slots(node, REGISTRY.ops.get(node.op) if node.known
                                                                     else None) if k < len(node.inputs) and node.inputs[k]]
    found, seen = set(), set()
    while todo:
        ref = todo.pop()
        if ref in seen:
            continue
        seen.add(ref)
        if ref in names:
            found.add(ref)
            continue
        i = g.index.get(parse_ref(ref).node)
        if i is not None and g.nodes[i].op not in _SHAPE_ONLY:
            todo.extend(r for r in g.nodes[i].inputs if r)
    if len(_BODY_CONSTS) > 256:
        _BODY_CONSTS.pop(next(iter(_BODY_CONSTS)))
    _BODY_CONSTS[sub] = frozenset(found)
    return _BODY_CONSTS[sub]


def build_function(graph: Graph, spec: ClusterSpec, arg_refs: list[str], baked: dict[str, np.ndarray]):
    nodes = [graph.nodes[i] for i in spec.members]

    def fn(*args):
        env = dict(baked)
        env.update(zip(arg_refs, args))
        for node in nodes:
            outs = eval_node(node, [env[r] if r else None for r in node.inputs], use_jax=True)
            for k, v in enumerate(outs):
                env[format_ref(node.name, k)] = v
        return tuple(env[r] for r in spec.exits)
    return fn


def _hash(arr: np.ndarray) -> str:
    a = np.ascontiguousarray(arr)
    return f"{a.dtype}{a.shape}:" + hashlib.sha1(a.tobytes()).hexdigest()[:16]


def structural_key(graph: Graph, spec: ClusterSpec, values: dict, baked: set[str]) -> tuple:
    """Ops, attributes, internal wiring (by position), entry shapes/dtypes and baked values; never names."""
    local = {graph.nodes[i].name: p for p, i in enumerate(spec.members)}
    entry_pos = {r: p for p, r in enumerate(spec.entries)}
    parts = []
    for i in spec.members:
        n = graph.nodes[i]
        wires = []
        for r, parsed in zip(n.inputs, graph.input_refs(i)):
            if not r:
                wires.append(None)
            elif r in entry_pos:
                wires.append(("in", entry_pos[r]))
            else:
                wires.append(("node", local[parsed.node], parsed.index))
        attrs = tuple(sorted((k, _hash(np.asarray(v)) if isinstance(v, np.ndarray) else repr(v))
                             for k, v in n.attrs.items()))
        parts.append((n.op, n.op_type, attrs, tuple(wires), len(n.outputs)))
    sig = tuple((tuple(np.shape(values[r])), str(np.asarray(values[r]).dtype) if r in baked else str(values[r].dtype),
                 _hash(np.asarray(values[r])) if r in baked else None) for r in spec.entries)
    exits = tuple((local[r.node], r.index) for r in map(parse_ref, spec.exits))
    return tuple(parts), sig, exits


@dataclass
class Compiled:
    executable: object
    arg_pos: list[int]          # positions in the spec's entries (not names: a cache hit is another cluster)
    lowered_text: str
    compiled_text: str
    compile_seconds: float
    memory: dict
    kernels: int
    fusions: int
    uses: int = 1

    def __call__(self, values: dict, spec: ClusterSpec) -> list:
        outs = self.executable(*[values[spec.entries[p]] for p in self.arg_pos])
        return [np.asarray(o) for o in outs]


@dataclass(frozen=True)
class NotCompiled:
    """A cluster bound to native execution for an input signature: XLA could not compile it (`error`)."""

    error: str


@dataclass
class CompileCache:
    """Executables by structural key; `hits` counts reuses (12 identical layers -> 1 compile, 11 hits)."""

    entries: dict = field(default_factory=dict)
    hits: int = 0
    misses: int = 0
    compile_seconds: float = 0.0
    plans: dict = field(default_factory=dict, repr=False)   # execute.Plan by (mode, clustering): no re-clustering
    failures: list = field(default_factory=list)   # clusters that did not compile and ran natively: {cluster, graph, error}

    def get(self, graph: Graph, spec: ClusterSpec, values: dict, baked: set[str] | None = None) -> tuple[Compiled, bool]:
        baked = baked_entries(graph, spec) if baked is None else baked
        for r in spec.entries:  # a sequence or an empty optional (ops.values) has no XLA type
            if not isinstance(values[r], (np.ndarray, np.generic)):
                from ..ops.arrays import Unsupported

                raise Unsupported(f"{r!r} is a sequence or an empty optional: it cannot enter an XLA cluster")
        key = structural_key(graph, spec, values, baked)
        hit = self.entries.get(key)
        if isinstance(hit, Exception):  # the same computation failed to compile before: it fails again
            raise hit
        if hit is not None:
            self.hit(hit)
            return hit, True
        self.misses += 1
        try:
            comp = compile_cluster(graph, spec, values, baked)
        except Exception as e:  # noqa: BLE001 - remembered, so an identical cluster does not compile again
            self.entries[key] = e
            raise
        self.compile_seconds += comp.compile_seconds
        self.entries[key] = comp
        return comp, False

    def hit(self, comp: Compiled) -> None:
        """Count a reuse found without the structural key (execute's per-plan signature lookup)."""
        self.hits += 1
        comp.uses += 1

    def failed(self, graph: Graph, cluster: str, error: Exception) -> "NotCompiled":
        """Record that `cluster` of `graph` did not compile (or its executable failed): the run goes on natively."""
        text = f"{error}" if isinstance(error, XcvizError) else f"{error.__class__.__name__}: {error}"
        line = next((ln.strip() for ln in text.splitlines() if ln.strip()), error.__class__.__name__)[:300]
        entry = {"cluster": cluster, "graph": graph.name, "error": line}
        if entry not in self.failures:  # (a body's cluster fails once per iteration otherwise)
            self.failures.append(entry)
        return NotCompiled(line)

    def stats(self) -> dict:
        return {"compiles": self.misses, "hits": self.hits, "distinct": len(self.entries),
                "compile_seconds": self.compile_seconds}


def compile_cluster(graph: Graph, spec: ClusterSpec, values: dict, baked: set[str]) -> Compiled:
    from ..ops.arrays import jnp

    jnp()
    import jax

    arg_refs = [r for r in spec.entries if r not in baked]
    consts = {r: np.asarray(values[r]) for r in baked}
    fn = build_function(graph, spec, arg_refs, consts)
    shapes = [jax.ShapeDtypeStruct(np.shape(values[r]), np.asarray(values[r]).dtype) for r in arg_refs]
    t0 = time.perf_counter()
    lowered = jax.jit(fn).lower(*shapes)
    compiled = lowered.compile()
    seconds = time.perf_counter() - t0
    text = compiled.as_text() or ""
    kernels, fusions = count_kernels(text)
    return Compiled(compiled, [spec.entries.index(r) for r in arg_refs], lowered.as_text(), text, seconds, memory_analysis(compiled), kernels, fusions)


def memory_analysis(compiled) -> dict:
    try:
        m = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - not every backend reports it
        m = None
    keys = ("argument_size_in_bytes", "output_size_in_bytes", "temp_size_in_bytes", "alias_size_in_bytes")
    return {k.replace("_size_in_bytes", "_bytes"): (int(getattr(m, k)) if m is not None and hasattr(m, k) else None)
            for k in keys}


_TRIVIAL = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}
_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.*)$")


def _opcode(rhs: str) -> str | None:
    i = 0
    if rhs.startswith("("):  # tuple shape: skip to its closing paren
        depth = 0
        for i, ch in enumerate(rhs):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                break
        rhs = rhs[i + 1:]
    else:
        rhs = rhs.split(" ", 1)[1] if " " in rhs else ""
    m = re.match(r"\s*([a-z][\w\-]*)\(", rhs)
    return m.group(1) if m else None


def count_kernels(hlo_text: str) -> tuple[int, int]:
    """(kernels, fusions) in the ENTRY computation of optimized HLO: every instruction that does work."""
    kernels = fusions = 0
    in_entry = False
    for line in hlo_text.splitlines():
        if line.startswith("ENTRY "):
            in_entry = True
            continue
        if in_entry:
            if line.startswith("}"):
                break
            m = _INSTR.match(line)
            op = _opcode(m.group(1)) if m else None
            if op is None or op in _TRIVIAL:
                continue
            kernels += 1
            fusions += op == "fusion"
    return kernels, fusions
