"""Boundary edges of the clusters as arrays, and each cluster's details (ClusterCost), built on request."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from operator import getitem

import numpy as np

from ..ir import Graph
from .params import parameter_masks
from .results import OUTPUT, ClusterCost, Edge
from .sums import exact_ints
from .view import CostView, inputs_negative

_KEY_LIMIT = 2**62   # (tensor, cluster) pairs numbered below this are one int64 key


class Boundary:
    """The boundary edges as arrays: data edges with a kept cluster on exactly one side, then cluster
    results that are graph outputs (the order results list them). Edge objects are built on request."""

    def __init__(self, graph: Graph, flat: CostView, cluster_of: np.ndarray) -> None:
        self.graph, self.flat, self.cluster_of = graph, flat, cluster_of
        self._cols: tuple | None = None
        dims = graph.dims
        # per edge of flat, the clusters of its two ends (-1: none; a graph input, src n + i, reads the
        # -1 padding after the nodes)
        # (as int32: half the memory of two per-edge arrays; cluster numbers are below the node count)
        small = cluster_of.astype(np.int32)
        cs = np.concatenate((small, np.full(len(graph.inputs), -1, np.int32)))[flat.src]
        cd = flat.at_consumer(small)
        self.inner = (cs == cd) & (cd >= 0)  # both ends in one cluster
        self.e = np.flatnonzero(cs != cd)  # edge numbers in flat (unclustered is -1 on both sides)
        cs, cd = cs[self.e], cd[self.e]   # (the per-edge arrays let go before the next are made: a lower peak)
        del small
        tids = flat.tid_of[self.e]
        self.bound: dict[int, tuple] = {}  # type id -> (bound type, bytes)
        nbytes: list = [None] * len(flat.types)
        for t in np.flatnonzero(np.bincount(tids, minlength=len(flat.types))).tolist():
            bt = flat.types[t].bind(dims)
            self.bound[t] = (bt, bt.nbytes())
            nbytes[t] = self.bound[t][1]
        self.outputs: list[Edge] = []
        out_src: list[int] = []
        out_port: list[int] = []
        in_names = {v.name for v in graph.inputs}
        for r, (name, k) in zip(graph.outputs, graph.output_refs):  # an input name first, then 'name:k'
            if r in in_names:
                continue  # a graph input is in no cluster
            i = graph.position(name)
            if i is None:  # (the loader checked every output names a node or an input)
                raise KeyError(name)
            c = int(cluster_of[i])
            if c >= 0:
                t = flat.nodes[i].out(k).bind(dims)
                self.outputs.append(Edge(name, OUTPUT, r, t, t.nbytes(), c, -1))
                out_src.append(i)
                out_port.append(k)
        # per-edge bytes: a table over types, then the output edges' own
        table = nbytes + [e.bytes for e in self.outputs]
        at = np.concatenate((tids, np.arange(len(nbytes), len(table))), dtype=np.int64)
        self.known = np.array([b is not None for b in table], bool)[at]
        self.bytes = exact_ints([b or 0 for b in table], len(at))[at]
        del at, tids
        k = len(self.outputs)
        # (each taken straight into its array, the output edges after: no copy made to concatenate; cluster
        # and output numbers as int32, positions as int64 for the look-ups they index)
        out_src = np.array(out_src, np.int64)
        self.src_cluster = np.concatenate((cs, np.array([e.src_cluster for e in self.outputs], np.int32)))
        self.dst_cluster = np.concatenate((cd, np.full(k, -1, np.int32)))
        del cs, cd
        self.src_pos = inputs_negative(_taken(flat.src, self.e, out_src, np.int64), len(cluster_of))
        # the value each edge carries (producer, output number): one tensor is handed over once per cluster
        self.port = _taken(flat.port, self.e, out_port, np.int32)
        self._dst_pos: np.ndarray | None = None
        # which edges carry parameters (resident weights and constants) rather than activations, among all
        # edges of flat (edge_param) and among the boundary edges (param)
        _, self.p_node, self.edge_param = parameter_masks(graph, flat)
        self.param = np.concatenate((self.edge_param[self.e], self.p_node[out_src]), dtype=bool)
        for o, p in zip(self.outputs, self.param[len(self.e):].tolist()):
            o.parameter = p

    def __len__(self) -> int:
        return len(self.known)

    @property
    def dst_pos(self) -> np.ndarray:
        """Per boundary edge, its consumer (-1 for a graph output), made on first use (the details read it)."""
        if self._dst_pos is None:
            # (node j's edges start at edge_start[j]: an edge's consumer is the last node starting at or before
            # it, found for the boundary edges only; no per-edge array of every consumer is made and kept)
            self._dst_pos = np.concatenate((np.searchsorted(self.flat.edge_start, self.e, "right") - 1,
                                            np.full(len(self.outputs), -1, np.int64)), dtype=np.int64)
        return self._dst_pos

    def handoffs(self, nc: int) -> tuple[np.ndarray, int]:
        """Activation hand-offs between the runtimes: per cluster, the distinct tensors it takes in plus those
        it gives out; and in all, the distinct (tensor, from, to) crossings. Parameters stay resident, and a
        tensor read by several nodes of one cluster (or of the fallback) crosses once."""
        into, out, pairs = self._crossings(~self.param, nc)
        return into + out, pairs

    def arguments(self, nc: int) -> tuple[np.ndarray, np.ndarray]:
        """Per cluster, the distinct tensors its compiled call is handed (activations and parameters alike)
        and those it gives back."""
        into, out, _ = self._crossings(np.ones(len(self.param), bool), nc)
        return into, out

    def _crossings(self, sel: np.ndarray, nc: int) -> tuple[np.ndarray, np.ndarray, int]:
        """Over the boundary edges `sel`: per cluster, the distinct tensors it takes in and those it gives out;
        and the distinct (tensor, to) pairs in all."""
        src, port = self.src_pos[sel], self.port[sel]
        cs, cd = self.src_cluster[sel], self.dst_cluster[sel]
        into, out = np.zeros(nc, np.int64), np.zeros(nc, np.int64)
        if not len(src):
            return into, out, 0
        # each tensor as one number (producer then output; graph inputs first), joined with the consumer's
        # cluster: the producer's is the tensor's own, so distinct (tensor, to) pairs are the crossings
        lo, ports = int(src.min()), int(port.max()) + 1
        span = (int(src.max()) - lo + 1) * ports
        v = src   # (src is this call's own copy: the keys are made in it, in place, with no temporaries)
        v -= lo
        v *= ports
        v += port
        if span * (nc + 1) >= _KEY_LIMIT:  # (too many for one int64: rows of keys)
            for side, per in ((cd, into), (cs, out)):
                inside = side >= 0
                per += np.bincount(side[inside][_first(v[inside], side[inside])], minlength=nc)
            return into, out, int(_first(v, cs, cd).sum())
        v *= nc + 1
        v += cd
        v += 1
        v.sort()   # (then its distinct values: _distinct without its copy)
        pairs = v[np.concatenate(([True], v[1:] != v[:-1]))]
        del v, src
        to = pairs % (nc + 1) - 1
        into += np.bincount(to[to >= 0], minlength=nc)   # the tensors each cluster takes in
        tensor = pairs // (nc + 1)
        first = np.concatenate(([True], tensor[1:] != tensor[:-1]))   # (pairs are sorted by tensor)
        producer = tensor[first] // ports + lo
        from_ = np.where(producer >= 0, self.cluster_of[np.maximum(producer, 0)], -1)
        out += np.bincount(from_[from_ >= 0], minlength=nc)   # and those it gives out
        return into, out, len(pairs)

    def _lists(self) -> tuple[list, ...]:
        """Per boundary edge: tensor (ref text), producer, consumer, type id and the two clusters, as lists
        (made on first use, at C speed: reading numpy scalars or refs one by one is slow)."""
        if self._cols is None:
            flat, e = self.flat, self.e
            dst = self.dst_pos[:len(e)]
            slot = ((e if flat.ref is None else flat.ref[e]) - flat.in_start[dst]).tolist()
            dst = dst.tolist()
            refs = list(map(getitem, map(flat.columns.column("inputs").__getitem__, dst), slot))
            refs += [o.tensor for o in self.outputs]
            self._cols = (refs, self.src_pos.tolist(), self.dst_pos.tolist(), flat.tid_of[e].tolist(),
                          self.src_cluster.tolist(), self.dst_cluster.tolist())
        return self._cols

    def edge(self, k: int) -> Edge:
        if k >= len(self.e):
            return self.outputs[k - len(self.e)]
        refs, src, dst, tid, cs, cd = self._lists()
        names = self.flat.columns.column("name")
        ref, s = refs[k], src[k]
        bt, nb = self.bound[tid[k]]
        return Edge(names[s] if s >= 0 else ref, names[dst[k]], ref, bt, nb, cs[k], cd[k], bool(self.param[k]))


def _taken(values: np.ndarray, at: np.ndarray, tail, dtype=None) -> np.ndarray:
    """values[at] then tail, as one array (of values' dtype unless given)."""
    out = np.empty(len(at) + len(tail), dtype or values.dtype)
    if values.dtype == out.dtype:  # (positions are valid: "raise" would buffer a copy)
        np.take(values, at, out=out[:len(at)], mode="clip")
    else:
        out[:len(at)] = values[at]
    out[len(at):] = tail
    return out


def _distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct values of an int64 array, sorted (np.unique hashes, which is far slower on many values)."""
    s = np.sort(keys)
    return s[np.concatenate(([True], s[1:] != s[:-1]))] if len(s) else s


def _first(*keys: np.ndarray) -> np.ndarray:
    """A mask of the first row of each distinct combination of the keys."""
    out = np.zeros(len(keys[0]), bool)
    if len(out):
        order = np.lexsort(keys[::-1])
        diff = np.zeros(len(out), bool)
        diff[0] = True
        for k in keys:
            s = k[order]
            diff[1:] |= s[1:] != s[:-1]
        out[order[diff]] = True
    return out


def _by_cluster(cluster: np.ndarray, nc: int) -> tuple[np.ndarray, np.ndarray]:
    """Edge numbers grouped by cluster (edge order kept within one), and each cluster's start in them."""
    order = np.flatnonzero(cluster >= 0)
    order = order[np.argsort(cluster[order], kind="stable")]
    counts = np.bincount(cluster[order], minlength=nc)
    return order, np.concatenate(([0], np.cumsum(counts)))


class Details:
    """Builds one cluster's ClusterCost from the per-cluster numbers and the boundary edges."""

    def __init__(self, graph: Graph, clustering, edges: Boundary, numbers: Callable[[], dict[str, list]]) -> None:
        self.graph, self.clustering, self.edges, self._numbers = graph, clustering, edges, numbers
        self.columns: dict[str, list] | None = None

    def make(self, k: int) -> ClusterCost:
        if self.columns is None:  # first use: the numbers and each cluster's edges, as lists
            nc = len(self.clustering.clusters)
            edges = self.edges
            self.ein, self.ein_at = (a.tolist() for a in _by_cluster(edges.dst_cluster, nc))
            self.eout, self.eout_at = (a.tolist() for a in _by_cluster(edges.src_cluster, nc))
            self.refs, self.src, self.dst = edges._lists()[:3]
            self.columns = self._numbers()
            self.param = edges.param.tolist()
        refs, src, dst, c, param = self.refs, self.src, self.dst, self.columns, self.param
        name = self.edges.flat.columns.column("name").__getitem__
        members = self.clustering.clusters[k]
        ein = self.ein[self.ein_at[k]:self.ein_at[k + 1]]
        eout = self.eout[self.eout_at[k]:self.eout_at[k + 1]]
        return ClusterCost(
            id=self.clustering.cluster_id(k), nodes=list(map(name, members)),
            ops=dict(sorted(Counter(map(self.edges.flat.columns.column("op_type").__getitem__, members)).items())),
            # (a member whose only outside input is a weight is no entry point: 41 of them in ResNet-18)
            entry_points=list(map(name, sorted({dst[e] for e in ein if not param[e]}))),
            exit_points=list(map(name, sorted(set(map(src.__getitem__, eout))))),
            inputs=list(dict.fromkeys(map(refs.__getitem__, ein))),
            outputs=list(dict.fromkeys(map(refs.__getitem__, eout))),
            boundary_bytes_in=c["boundary_bytes_in"][k], boundary_bytes_out=c["boundary_bytes_out"][k],
            parameter_bytes_in=c["parameter_bytes_in"][k], kernels=c["kernels"][k],
            edges_in=len(ein), edges_out=len(eout), flops=c["flops"][k], effective_size=c["effective_size"][k],
            time_unfused=c["time_unfused"][k], time_fused=c["time_fused"][k],
            speedup_estimate=c["speedup_estimate"][k], constant=c["constant"][k])
