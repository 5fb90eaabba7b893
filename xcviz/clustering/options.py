"""Clustering options (the pass's fields) and the support set they define."""
from __future__ import annotations

import numbers
import re
from dataclasses import dataclass, field
from itertools import repeat
from typing import NamedTuple

import numpy as np

from ..errors import XcvizError
from ..cost.keys import group_ids
from ..ops import DEVICES, REGISTRY
from .deferred import Deferred, lazy_lists, stored

STRATEGIES = ("mark", "greedy", "cost")
DEFAULT_MIN_CLUSTER_SIZE = 4


@dataclass(frozen=True)
class ClusterOptions:
    """The clustering's options, validated here once for the command line and the API: each error names
    its parameter (XcvizError.param), which the command line spells as a flag and the API as a keyword."""

    strategy: str = "mark"
    device: str = "cpu"
    min_cluster_size: int | None = None   # None: 4 for mark (TF default), 0 for the seed greedy (keeps every run)
    max_cluster_size: int | None = None   # None: unlimited
    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    supported_ops: frozenset[str] | None = None  # replaces the built-in support set
    record: bool = True                   # keep every merge attempt (explain, frames)
    hardware: str | None = None           # the cost strategy's profile (name or YAML file); None: the device's
    # What an --allow/--deny name may be: "registry" an op (or alias) the registry knows, checked as the options
    # are made; "graph" that or an opaque op of the clustered graph's own, checked when clustering (the API's
    # xcviz.cluster); "any" not checked (--allow-unknown: an op of a file not loaded yet). With supported_ops
    # every name is the file's to decide.
    op_names: str = field(default="registry", compare=False)

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise XcvizError(f"unknown strategy {self.strategy!r}", hint="use --strategy mark, greedy or cost",
                             param="strategy")
        if self.device not in DEVICES:
            raise XcvizError(f"unknown device {self.device!r}", hint="use --device cpu, gpu or tpu", param="device")
        for key in ("min_cluster_size", "max_cluster_size"):
            v = getattr(self, key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0):
                raise XcvizError(f"must be a whole number >= 0, got {v!r}", param=key)
        if self.op_names not in ("registry", "graph", "any"):
            raise ValueError(f"op_names={self.op_names!r}: 'registry', 'graph' or 'any'")
        for key in ("allow", "deny"):  # (canonical names are the registry's: the check below reads them as well)
            object.__setattr__(self, key, _canon(_names(getattr(self, key), key)))
        if self.supported_ops is not None:
            object.__setattr__(self, "supported_ops", _canon(_names(self.supported_ops, "supported_ops"), keep_raw=True))
        if self.op_names == "registry":
            self.check_op_names()

    def check_op_names(self, graph=None) -> None:
        """Each allow/deny name is an op (or alias) the registry knows, or (`graph` given, op_names "graph") an
        opaque op of the graph's own; else an error naming the parameter, with a did-you-mean."""
        if self.supported_ops is not None or self.op_names == "any":
            return
        for param in ("allow", "deny"):
            check_op_names(param, getattr(self, param), (lambda: {node.op for node in graph.nodes})
                           if graph is not None and self.op_names == "graph" else None)

    @property
    def min_size(self) -> int:
        if self.min_cluster_size is not None:
            return self.min_cluster_size
        return DEFAULT_MIN_CLUSTER_SIZE if self.strategy == "mark" else 0

    @property
    def max_size(self) -> float:
        return float("inf") if self.max_cluster_size is None else self.max_cluster_size


def _names(names, param: str) -> frozenset[str]:
    """A set of op names from any iterable of them (a bare string is one name, not its letters)."""
    if isinstance(names, str):
        names = [names]
    try:
        return frozenset(str(n).strip() for n in names if str(n).strip())
    except TypeError:
        raise XcvizError(f"expected op names, got {names!r}", param=param, hint="give a list of op names") from None


def check_op_names(param: str, names, graph_ops=None) -> None:
    """Each name must be an op (or alias) the registry knows, or (`graph_ops`, a callable giving the graph's op
    names) an opaque op of the graph's own; else one line naming `param` (allow, deny), with a did-you-mean."""
    from ..errors import did_you_mean

    unknown = sorted(n for n in names if REGISTRY.get(n) is None)
    if unknown and graph_ops is not None:
        own = set(graph_ops())
        unknown = [n for n in unknown if n not in own]
    if unknown:
        every = [n for opdef in REGISTRY for n in (opdef.name, *opdef.aliases)]
        hint = did_you_mean(unknown[0], every)
        raise XcvizError(f"unknown op {unknown[0]!r}", param=param, hint=(hint + " " if hint else "") +
                         "see `xcviz ops`; an op the registry does not know needs --allow-unknown")


def _canon(names, keep_raw: bool = False) -> frozenset[str]:
    out = set()
    for n in names:
        n = str(n).strip()
        if not n:
            continue
        opdef = REGISTRY.get(n)
        if opdef is not None:
            out.add(opdef.name)
        if opdef is None or keep_raw:
            out.add(n)
    return frozenset(out)


_DEVICE_RE = re.compile(r"(?:/?(?:job:[^/]*/)?(?:replica:\d+/)?(?:task:\d+/)?device:)?([A-Za-z_]+)(?::(\d+))?$")


def normalize_device(spec: str | None, default: str) -> tuple[str, str]:
    """('gpu', 'gpu:0') from 'gpu', 'GPU:0', '/device:GPU:0', 'cuda:1'; the default when None."""
    if not spec:
        return default, f"{default}:0"
    m = _DEVICE_RE.match(spec.strip())
    kind = (m.group(1) if m else spec).lower()
    kind = {"cuda": "gpu", "xla_gpu": "gpu", "xla_cpu": "cpu", "xla_tpu": "tpu"}.get(kind, kind)
    idx = m.group(2) if m and m.group(2) else "0"
    return kind, f"{kind}:{idx}"


@lazy_lists("ok", "code", "reason", "device")
@dataclass
class Candidates:
    """Per node: candidate or the first reason it is not (code for styling, text for people). find_candidates
    hands the lists over as a table per kind of node, made into lists on first read (see deferred.py)."""

    ok: list[bool] = field(default_factory=list)
    code: list[str | None] = field(default_factory=list)
    reason: list[str | None] = field(default_factory=list)
    device: list[str] = field(default_factory=list)
    # Per node, which distinct decision it got (an int array indexing `kinds`: (device, op, known, ok,
    # compile)); lets the fast pass code devices and ops from a few table rows instead of per node.
    kind_of: np.ndarray | None = field(default=None, compare=False, repr=False)
    kinds: list[tuple] | None = field(default=None, compare=False, repr=False)

    def values(self, name: str) -> np.ndarray:
        """A per-node list as an object array, without making the list when it is not made yet."""
        v = stored(self, name)
        if type(v) is Deferred:
            return v.array()
        out = np.empty(len(v), object)
        out[:] = v
        return out


def find_candidates(graph, opts: ClusterOptions) -> Candidates:
    """Each node's decision, made once per distinct kind of node: the decision reads only the node's op,
    device, compile flag (and for a few nodes its op_type, note, a constant's value, its tensors' dtypes),
    so the nodes are grouped by those columns as integer codes with numpy, and each group decided once."""
    cols = graph.columns
    n = len(cols.op)
    c = Candidates()
    supported = opts.supported_ops
    typed = supported is not None or bool(opts.allow) or bool(opts.deny)
    op_id, op_names = cols.codes("op")
    known_id, known_vals = cols.codes("known")
    # (op, known) pairs: ids into `pairs`; the registry entry of each
    pair_id, pairs = _pairs(op_id, op_names, known_id, known_vals)
    opdefs = [REGISTRY.ops.get(op) if known else None for op, known in pairs]
    device_id, devices = cols.codes("device")
    compile_id, compiles = cols.codes("compile")
    keys = [(pair_id, len(pairs)), (device_id, len(devices)), (compile_id, len(compiles))]
    # op_type: through --allow/--deny/--supported-ops for every node, else in an unknown op's reason
    if typed:
        type_id, op_types = cols.codes("op_type")
        keys.append((type_id, len(op_types)))
    unknown = np.flatnonzero(np.array([d is None for d in opdefs] + [False])[pair_id])
    if len(unknown):
        notes, op_types, ids = cols.column("note"), cols.column("op_type"), {}
        detail = np.zeros(n, np.int64)
        detail[unknown] = [ids.setdefault((notes[j], op_types[j]), len(ids) + 1) for j in unknown.tolist()]
        keys.append((detail, len(ids) + 1))
    flags = _string_flags(graph, cols, pairs, pair_id)
    keys.append((flags, 4))
    kind_of, m = group_ids(keys, n)
    rep = np.zeros(m, np.int64)
    rep[kind_of] = np.arange(n)  # any node of a kind: they all get the same decision
    kinds: list[tuple] = []
    rows: list[tuple] = []  # per kind: (device, ok, code, reason)
    for j in rep.tolist():
        op, known = pairs[pair_id[j]]
        device, compile_ = devices[device_id[j]], compiles[compile_id[j]]
        kind, dev = normalize_device(device, opts.device)
        f = int(flags[j])
        row = _Row(device, op, cols.column("op_type")[j] if typed or opdefs[pair_id[j]] is None else None,
                   known, compile_, cols.column("note")[j] if opdefs[pair_id[j]] is None else None,
                   bool(f & 1), bool(f & 2))
        code, why = _reject(row, opdefs[pair_id[j]], kind, opts, supported)
        kinds.append((dev, op, known, code is None, compile_))
        rows.append((dev, code is None, code, why))
    c.kind_of, c.kinds = kind_of, kinds
    if rows:  # the columns at C speed: each kind's value, taken per node, when first read
        table = np.empty((len(rows), 4), object)
        table[:] = rows
        of = kind_of.copy()  # (refine_candidates renumbers c.kind_of where it edits the lists)
        c.device, c.ok, c.code, c.reason = (Deferred(lambda k=k: table[of, k].tolist(), lambda k=k: table[of, k])
                                            for k in range(4))
    return c


class _Row(NamedTuple):
    """What a node's decision reads (op_type and note only where they enter it)."""

    device: str | None
    op: str
    op_type: str | None
    known: bool
    compile: bool | None
    note: str | None
    string_const: bool   # a const whose value is a string
    string_tensor: bool  # it reads or writes a string tensor


def _pairs(op_id: np.ndarray, op_names: list, known_id: np.ndarray, known_vals: list) -> tuple[np.ndarray, list]:
    """Per node, an id of its (op, known) pair, and the pairs."""
    if len(known_vals) <= 1:
        return op_id, [(op, bool(known_vals[0])) for op in op_names]
    both = op_id * 2 + known_id
    ids, pair_of = np.unique(both, return_inverse=True)
    return pair_of.reshape(-1), [(op_names[b // 2], bool(known_vals[b % 2])) for b in ids.tolist()]


def _string_flags(graph, cols, pairs: list, pair_id: np.ndarray) -> np.ndarray:
    """Per node: 1 for a const holding a string value, 2 for a node that reads or writes a string tensor
    (XLA has no string type), from the dtypes of the shared results mapped through the edges."""
    n = len(pair_id)
    flags = np.zeros(n, np.int64)
    const = [k for k, (op, known) in enumerate(pairs) if op == "const" and known]
    if const:
        at = np.flatnonzero(np.isin(pair_id, const)).tolist()
        values = list(map(dict.get, map(cols.attrs.__getitem__, at), repeat("value")))
        if any(issubclass(t, str) for t in set(map(type, values))):  # (one look per type, not per node)
            flags[at] = [isinstance(v, str) for v in values]
    res_string = [[getattr(t, "dtype", None) == "string" for t in r] for r in cols.results]
    inputs = [getattr(v.type, "dtype", None) == "string" for v in graph.inputs]
    if not any(inputs) and not any(map(any, res_string)):
        return flags
    # one flag per output of each result, and per graph input
    res_len = np.array([len(r) for r in res_string], np.int64)
    res_at = np.cumsum(res_len) - res_len
    flat = np.array([f for r in res_string for f in r] + [False], bool)
    writes = np.array([any(r) for r in res_string], bool)[cols.rid]
    src, port = cols.src, cols.port
    edge = np.zeros(len(src), bool)
    node_src = (src >= 0) & (src < n)
    s = src[node_src]
    r = cols.rid[s]
    p = port[node_src]
    edge[node_src] = np.where(p < res_len[r], flat[np.minimum(res_at[r] + p, len(flat) - 1)], False)
    from_input = src >= n
    if from_input.any():
        edge[from_input] = np.array(inputs, bool)[src[from_input] - n]
    dst = np.repeat(np.arange(n, dtype=np.int64), cols.lens)
    reads = np.bincount(dst[edge], minlength=n) > 0
    return flags | np.where(writes | reads, 2, 0)


def _reject(node: _Row, opdef, kind: str, opts: ClusterOptions, supported) -> tuple[str | None, str | None]:
    if node.compile is False:
        return "forced", "forced off (compile: false)"
    if opdef is not None and "source" in opdef.groups and not opdef.devices:
        return "argument", opdef.reason
    if node.string_const:
        return "unsupported", "string constant (XLA has no string type)"
    if node.string_tensor:
        return "unsupported", "string tensor (XLA has no string type)"
    if kind not in DEVICES:
        return "device", f"no XLA device for {node.device!r}"
    if supported is not None:
        if node.op in supported or node.op_type in supported:
            return None, None
        return "unsupported", f"not in the supported-ops file ({node.op_type})"
    if node.op in opts.deny or node.op_type in opts.deny:
        return "denied", f"denied by --deny ({node.op_type})"
    if node.op in opts.allow or node.op_type in opts.allow:
        return None, None
    if opdef is None:
        return "unknown", node.note or f"unknown op {node.op_type}"
    if not opdef.compilable_on(kind):
        return "unsupported", f"unsupported on {kind}: {opdef.why_not(kind)}"
    return None, None
