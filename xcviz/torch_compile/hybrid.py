"""Run one captured graph hybrid: each kept cluster as one JAX executable, every other aten call with torch, in
an order that respects both (the clusters contracted into the FX graph); tensors cross through DLPack."""
from __future__ import annotations

import heapq
import operator
from dataclasses import dataclass, field

import numpy as np

from ..ir import format_ref, parse_ref


@dataclass
class Unit:
    kind: str                 # "node" (torch) or "cluster" (JAX)
    nodes: list               # FX nodes: the node, or the cluster's members then the getitems read from them
    cluster: int = -1
    order: int = 0            # the FX position of its first node (ties go to the program's own order)


@dataclass
class HybridPlan:
    units: list[Unit]
    notes: list[str] = field(default_factory=list)   # clusters run in torch instead, and why


def _mutates(node) -> bool:
    schema = getattr(node.target, "_schema", None)
    return bool(schema is not None and schema.is_mutable)


def plan(captured, clustering) -> HybridPlan:
    """Units (a cluster, or one aten call) in a topological order of the contracted graph. A cluster holding an
    in-place aten op runs in torch: XLA's functional clusters cannot write the mutation back."""
    ep, graph = captured.program, captured.graph
    fx = [n for n in ep.graph.nodes if n.op == "call_function"]
    pos = {n.name: i for i, n in enumerate(fx)}
    cluster_of = {}
    for k, members in enumerate(clustering.clusters):
        for j in members:
            cluster_of[graph.nodes[j].name] = k
    seen = set(graph.index)
    for n in reversed(fx):   # a call xcviz's graph does without (a view a fill's value replaced) read only inside
        users = {cluster_of.get(u.name, -1) for u in n.users}   # one cluster: part of that cluster's unit
        if n.name not in seen and n.name not in cluster_of and len(users) == 1 and -1 not in users \
                and n.target is not operator.getitem and not _mutates(n):
            cluster_of[n.name] = users.pop()
    notes, demoted = [], set()
    for n in fx:
        k = cluster_of.get(n.name)
        if k is not None and _mutates(n) and k not in demoted:
            demoted.add(k)
            notes.append(f"{clustering.cluster_id(k)} runs in torch: it holds the in-place {captured.aten.get(n.name, n.name)}")
    unit_of: dict[str, int] = {}
    units: list[Unit] = []
    by_cluster: dict[int, int] = {}
    for n in fx:
        k = cluster_of.get(n.name)
        if n.target is operator.getitem and n.args[0].name in cluster_of and cluster_of[n.args[0].name] not in demoted:
            k = cluster_of[n.args[0].name]   # read from the cluster's outputs, after it runs
        if k is None or k in demoted:
            unit_of[n.name] = len(units)
            units.append(Unit("node", [n], order=pos[n.name]))
            continue
        if k not in by_cluster:
            by_cluster[k] = len(units)
            units.append(Unit("cluster", [], k, pos[n.name]))
        units[by_cluster[k]].nodes.append(n)
        unit_of[n.name] = by_cluster[k]
    deps: list[set[int]] = [set() for _ in units]
    for u, unit in enumerate(units):
        for n in unit.nodes:
            for a in n.all_input_nodes:
                v = unit_of.get(a.name)
                if v is not None and v != u:
                    deps[u].add(v)
    users: list[list[int]] = [[] for _ in units]
    for u, ds in enumerate(deps):
        for v in ds:
            users[v].append(u)
    waiting = [len(ds) for ds in deps]
    ready = [(units[u].order, u) for u in range(len(units)) if not waiting[u]]
    heapq.heapify(ready)
    order = []
    while ready:
        _, u = heapq.heappop(ready)
        order.append(units[u])
        for w in users[u]:
            waiting[w] -= 1
            if not waiting[w]:
                heapq.heappush(ready, (units[w].order, w))
    if len(order) != len(units):  # a cycle through calls xcviz's graph does without: all in torch
        stuck = sorted({n.name for u, unit in enumerate(units) if waiting[u] for n in unit.nodes
                        if n.name not in cluster_of}, key=pos.__getitem__)
        return HybridPlan([Unit("node", [n], order=pos[n.name]) for n in fx],
                          ["every cluster runs in torch: contracting them would make a cycle through calls outside "
                           f"xcviz's graph ({', '.join(stuck[:5]) or 'shape arithmetic'})"])
    return HybridPlan(order, notes)


def _exits(plan_: HybridPlan, specs: list, graph) -> list:
    """Each cluster's spec with an exit for every value of it that torch reads: xcviz's graph drops what it does
    not need (calls whose only readers are shape arithmetic or dead code, a mutated buffer's new value), but the
    FX program around the cluster reads it all."""
    from ..runtime.jit import ClusterSpec

    out = list(specs)
    unit_of = {n: u for u, unit in enumerate(plan_.units) for n in unit.nodes}
    readers: dict[int, set[str]] = {}
    for u, unit in enumerate(plan_.units):
        for n in unit.nodes:
            for user in n.users:
                if unit.kind == "cluster" and unit_of.get(user) != u:
                    readers.setdefault(u, set()).add(n.name)
    for u, names in readers.items():
        unit = plan_.units[u]
        spec, refs = out[unit.cluster], []
        for n in unit.nodes:
            if n.name not in names:
                continue
            if n.target is operator.getitem:
                refs.append(format_ref(n.args[0].name, int(n.args[1])))
            elif n.name in graph.index:
                refs += [format_ref(n.name, k) for k in range(len(graph.nodes[graph.index[n.name]].outputs))]
        extra = [r for r in dict.fromkeys(refs) if r not in spec.exits]
        if extra:
            out[unit.cluster] = ClusterSpec(spec.members, spec.entries, spec.exits + extra)
    return out


def _dtypes(ep) -> dict:
    """Each tensor value's torch dtype by xcviz ref, to give torch back the dtype its graph promised."""
    import torch

    out = {}
    for n in ep.graph.nodes:
        val = n.meta.get("val")
        vals = val if isinstance(val, (list, tuple)) else [val]
        for k, v in enumerate(vals):
            if isinstance(v, torch.Tensor):
                out[format_ref(n.name, k)] = v.dtype
    return out


class HybridRunner:
    """Called with Dynamo's flat arguments; returns what Dynamo's graph returns. `info` (the entry's `hybrid`)
    says how it ran: `ran` is "hybrid" once a call ran a cluster under JAX, else "torch", and `calls` counts
    both; `notes` (planned) and `errors` (at run time) say why a part ran in torch."""

    AUTOGRAD = ("ran in torch: autograd is on and this graph writes buffers back (its recomputation for the "
                "backward pass would write them twice)")

    def __init__(self, captured, clustering, fallback=None) -> None:
        from ..runtime.jit import CompileCache, baked_entries, cluster_specs

        self.captured, self.clustering = captured, clustering
        self.plan = plan(captured, clustering)
        graph = captured.graph
        self.specs = _exits(self.plan, cluster_specs(graph, clustering.clusters), graph)
        self.baked = [baked_entries(graph, s) for s in self.specs]
        self.cache = CompileCache()
        self.outputs_of = {graph.nodes[j].name: len(graph.nodes[j].outputs) for j in range(len(graph.nodes))}
        self.consts = {nd.name: np.asarray(nd.attrs["value"]) for nd in graph.nodes if nd.op == "const"}
        self.errors: list[str] = []
        self.fallback = fallback   # Dynamo's graph as it gave it
        self.clusters = clusters = sum(1 for u in self.plan.units if u.kind == "cluster")
        self.dtypes = _dtypes(captured.program)
        self.info = {"ran": "torch" if not clusters else "not called yet", "notes": list(self.plan.notes),
                     "errors": self.errors, "calls": {"hybrid": 0, "torch": 0}}
        if not clusters:
            self.info["notes"].append("no cluster to run under JAX (each call's reason is in fallback_ops): every "
                                      "aten call runs in torch")

    def _note(self, msg: str) -> None:
        if msg not in self.errors:
            self.errors.append(msg)

    def __call__(self, *args):
        import torch

        from .autograd import hybrid_with_grad, why_not

        if torch.is_grad_enabled() and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
            if not self.clusters and self.fallback is not None:
                return self._torch(args)
            why = self.AUTOGRAD if self.captured.mutated else why_not(self)
            if why is not None:
                self._note(why)
                return self._torch(args)
            return hybrid_with_grad(self, args)
        return self.forward(args)

    def _torch(self, args):
        self.info["calls"]["torch"] += 1
        if self.info["ran"] != "hybrid":
            self.info["ran"] = "torch"
        return self.fallback(*args)

    def forward(self, args):
        """One call without autograd: the clusters under JAX; if the hybrid run itself fails (an aten call that
        fails here but not in Dynamo's graph), Dynamo's graph runs instead and the error says why."""
        import torch

        try:
            with torch.no_grad():
                out, jax_runs = self._run(args)
        except Exception as e:  # noqa: BLE001 - the graph still runs, in torch, and the entry says why
            if self.fallback is None:
                raise
            self._note(f"{self.captured.graph.name} ran in torch: the hybrid run raised {type(e).__name__}: {e}"
                       .splitlines()[0][:300])
            return self._torch(args)
        self.info["calls"]["hybrid" if jax_runs else "torch"] += 1
        if jax_runs:
            self.info["ran"] = "hybrid"
        elif self.info["ran"] != "hybrid":
            self.info["ran"] = "torch"
        return out

    def _run(self, args):
        import torch
        from torch.utils import _pytree

        ep, cap = self.captured.program, self.captured
        env: dict = {}
        for n in ep.graph.nodes:
            if n.op == "placeholder":
                env[n.name] = args[cap.feeds[n.name]] if n.name in cap.feeds else cap.constants.get(n.name)
        jax_runs = 0
        for unit in self.plan.units:
            if unit.kind == "cluster" and self._cluster(unit, env):
                jax_runs += 1
                continue
            for n in unit.nodes:
                a, kw = torch.fx.node.map_arg((n.args, n.kwargs), lambda x: env[x.name])
                env[n.name] = n.target(*a, **kw)
        out_node = next(n for n in ep.graph.nodes if n.op == "output")
        flat = out_node.args[0] if isinstance(out_node.args[0], (list, tuple)) else [out_node.args[0]]
        user = []
        for v, spec in zip(flat, ep.graph_signature.output_specs):
            value = env[v.name] if isinstance(v, torch.fx.Node) else v
            kind = spec.kind.name
            if kind == "USER_OUTPUT":
                user.append(value)
            elif kind in ("BUFFER_MUTATION", "USER_INPUT_MUTATION", "PARAMETER_MUTATION"):
                args[cap.mutated[spec.target]].copy_(value)
        return _pytree.tree_unflatten(user, ep.call_spec.out_spec), jax_runs

    def _value(self, ref: str, env: dict, xname: dict):
        name, k = parse_ref(ref)
        if name in self.consts and name not in xname:
            return self.consts[name]
        v = env[xname.get(name, name)]
        return v[k] if isinstance(v, (list, tuple)) else v

    def _cluster(self, unit: Unit, env: dict) -> bool:
        """Run the cluster under JAX; False (and the reason kept) when it cannot, so the caller runs it in torch."""
        import jax
        import torch

        from ..ops.arrays import jnp

        jnp()
        spec, graph = self.specs[unit.cluster], self.captured.graph
        xname = self.captured.xname
        try:
            live = {r: self._value(r, env, xname) for r in spec.entries}
            host = {r: (v.detach().numpy() if isinstance(v, torch.Tensor) else np.asarray(v)) for r, v in live.items()}
            comp, _ = self.cache.get(graph, spec, host, self.baked[unit.cluster])
            feed = [live[spec.entries[p]] for p in comp.arg_pos]
            outs = comp.executable(*[jax.dlpack.from_dlpack(t.detach().contiguous()) if isinstance(t, torch.Tensor)
                                     else t for t in feed])
        except Exception as e:  # noqa: BLE001 - a cluster XLA cannot run falls back to torch, and says why
            self._note(f"{self.clustering.cluster_id(unit.cluster)} ran in torch: {type(e).__name__}: {e}"
                       .splitlines()[0][:300])
            return False
        for ref, o in zip(spec.exits, outs):
            name, k = parse_ref(ref)
            t = torch.from_dlpack(o)
            if ref in self.dtypes and t.dtype != self.dtypes[ref]:   # (JAX without x64: int32 for int64)
                t = t.to(self.dtypes[ref])
            if self.outputs_of.get(name, 1) > 1:
                env.setdefault(name, [None] * self.outputs_of[name])[k] = t
            else:
                env[name] = t
        for n in unit.nodes:  # the getitems read from the cluster's outputs
            if n.target is operator.getitem:
                src = env.get(n.args[0].name)
                env[n.name] = src[n.args[1]] if isinstance(src, (list, tuple)) else None
        return True
