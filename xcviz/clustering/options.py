"""Clustering options (the pass's fields) and the support set they define."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from operator import attrgetter

import numpy as np

from ..errors import XcvizError
from ..ops import DEVICES, REGISTRY

STRATEGIES = ("mark", "greedy", "cost")
DEFAULT_MIN_CLUSTER_SIZE = 4


@dataclass(frozen=True)
class ClusterOptions:
    strategy: str = "mark"
    device: str = "cpu"
    min_cluster_size: int | None = None   # None: 4 for mark (TF default), 0 for the seed greedy (keeps every run)
    max_cluster_size: int | None = None   # None: unlimited
    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    supported_ops: frozenset[str] | None = None  # replaces the built-in support set
    record: bool = True                   # keep every merge attempt (explain, frames)
    hardware: str | None = None           # the cost strategy's profile (name or YAML file); None: the device's

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise XcvizError(f"unknown strategy {self.strategy!r}", hint="use --strategy mark, greedy or cost")
        if self.device not in DEVICES:
            raise XcvizError(f"unknown device {self.device!r}", hint="use --device cpu, gpu or tpu")
        for key in ("min_cluster_size", "max_cluster_size"):
            v = getattr(self, key)
            if v is not None and v < 0:
                raise XcvizError(f"{key.replace('_', '-')} must be >= 0, got {v}")
        object.__setattr__(self, "allow", _canon(self.allow))
        object.__setattr__(self, "deny", _canon(self.deny))
        if self.supported_ops is not None:
            object.__setattr__(self, "supported_ops", _canon(self.supported_ops, keep_raw=True))

    @property
    def min_size(self) -> int:
        if self.min_cluster_size is not None:
            return self.min_cluster_size
        return DEFAULT_MIN_CLUSTER_SIZE if self.strategy == "mark" else 0

    @property
    def max_size(self) -> float:
        return float("inf") if self.max_cluster_size is None else self.max_cluster_size


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


@dataclass
class Candidates:
    """Per node: candidate or the first reason it is not (code for styling, text for people)."""

    ok: list[bool] = field(default_factory=list)
    code: list[str | None] = field(default_factory=list)
    reason: list[str | None] = field(default_factory=list)
    device: list[str] = field(default_factory=list)
    # Per node, which distinct decision it got (an int array indexing `kinds`: (device, op, known, ok,
    # compile)); lets the fast pass code devices and ops from a few table rows instead of per node.
    kind_of: np.ndarray | None = field(default=None, compare=False, repr=False)
    kinds: list[tuple] | None = field(default=None, compare=False, repr=False)


def find_candidates(graph, opts: ClusterOptions) -> Candidates:
    c = Candidates()
    supported = opts.supported_ops
    # The decision depends on a handful of node fields only; memoised, 10^6 nodes take ~0.4 s, not ~2.5 s.
    # op_type matters only through a supported-ops file, --allow/--deny, or the message of an unknown op
    # without a note: otherwise the key leaves it out (each node has its own op_type string; hashing 10^6
    # of them costs a cache miss each) and only such unknown ops look it up, under a second key.
    typed = supported is not None or bool(opts.allow) or bool(opts.deny)
    key_of = _KEY_FIELDS if typed else _KEY_FIELDS_UNTYPED
    memo: dict = {}
    get = memo.get
    kinds: list[tuple] = []
    rows: list[tuple] = []  # per kind: (device, ok, code, reason)
    kind_of: list[int] = []
    add = kind_of.append
    # the key fields, read at C speed; const nodes add "is the value a string"
    for node, key in zip(graph.nodes, map(key_of, graph.nodes)):
        if key[1] == "const":
            key = (*key, isinstance(node.attrs.get("value"), str))
        k = get(key)
        if k is None:
            k = memo[key] = _decide(node, opts, supported, typed, kinds, rows)
        if k < 0:
            tkey = (key, node.op_type)
            k = get(tkey)
            if k is None:
                k = memo[tkey] = _decide(node, opts, supported, True, kinds, rows)
        add(k)
    c.kind_of = np.array(kind_of, np.int64)
    c.kinds = kinds
    if rows:  # the columns at C speed: each kind's value, taken per node
        cols = np.empty((len(rows), 4), object)
        cols[:] = rows
        c.device, c.ok, c.code, c.reason = (cols[:, j][c.kind_of].tolist() for j in range(4))
    return c


def _decide(node, opts: ClusterOptions, supported, typed: bool, kinds: list, rows: list) -> int:
    """A new kind for `node`'s decision: its index, or -1 when the decision names the node's op_type and
    the key (untyped) does not hold it."""
    kind, dev = normalize_device(node.device, opts.device)
    code, why = _reject(node, kind, opts, supported)
    if not typed and code == "unknown" and not node.note:
        return -1
    kinds.append((dev, node.op, node.known, code is None, node.compile))
    rows.append((dev, code is None, code, why))
    return len(kinds) - 1


_KEY_FIELDS = attrgetter("device", "op", "op_type", "known", "compile", "note")
_KEY_FIELDS_UNTYPED = attrgetter("device", "op", "known", "compile", "note")


def _reject(node, kind: str, opts: ClusterOptions, supported) -> tuple[str | None, str | None]:
    if node.compile is False:
        return "forced", "forced off (compile: false)"
    opdef = REGISTRY.ops.get(node.op) if node.known else None
    if opdef is not None and "source" in opdef.groups and not opdef.devices:
        return "argument", opdef.reason
    if opdef is not None and opdef.name == "const" and isinstance(node.attrs.get("value"), str):
        return "unsupported", "string constant (XLA has no string type)"
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
