"""The one options object of an analysis: how to load, how to cluster (ClusterOptions), which hardware."""
from __future__ import annotations

import dataclasses
import os
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Mapping

from ..errors import XcvizError

if TYPE_CHECKING:
    from ..clustering import ClusterOptions

# Defaults of the limits (docs/limits.md). Written out rather than imported from the loaders, so that
# importing the options (as the CLI does for its --help) loads nothing heavy.
DEFAULT_MAX_NODES = 5_000_000
DEFAULT_MAX_FILE_BYTES = 2 * 1024**3
DEFAULT_MAX_DEPTH = 100                  # = loaders.parse.DEFAULT_MAX_DEPTH
DEFAULT_MAX_ALIAS_EXPANSION = 1_000_000  # = loaders.parse.DEFAULT_MAX_ALIAS_EXPANSION

# ClusterOptions' fields that are flags of their own (record is the pipeline's, hardware is AnalysisOptions')
CLUSTER_FIELDS = ("strategy", "device", "min_cluster_size", "max_cluster_size", "allow", "deny", "supported_ops")


@dataclass(frozen=True)
class LoadOptions:
    """How a graph file is read: each field is the flag of the same name. A Graph passed in is used as it
    is, except for `dims` and `inputs`, which the pipeline's binding step applies to it."""

    allow_unknown: bool = False           # load ops the registry does not know as opaque fallback nodes
    dims: Mapping[str, int] = field(default_factory=dict)  # symbolic dimension bindings
    inputs: str | None = None             # an .npz file whose arrays' shapes bind symbolic dimensions (win over dims)
    max_nodes: int = DEFAULT_MAX_NODES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH
    max_alias_expansion: int = DEFAULT_MAX_ALIAS_EXPANSION
    max_elements: int | None = None       # refuse a tensor of more elements (over 64 bits: always)
    signature: str | None = None          # SavedModel: the signature to load (None: serving_default)
    trust_pickle: bool = False            # .pt2: let torch.export.load read what xcviz's reader does not (runs code from the file)

    def __post_init__(self) -> None:
        for name, value in self.dims.items():
            if not isinstance(name, str) or not name.strip() or isinstance(value, bool) \
                    or not isinstance(value, int) or value < 1:
                raise XcvizError(f"bad --dim {f'{name}={value}'!r}", hint="sizes are positive integers: write --dim batch=8")
        object.__setattr__(self, "dims", types.MappingProxyType(dict(self.dims)))

    def __hash__(self) -> int:  # dims is a (read-only) mapping: hash its items
        return hash(tuple(frozenset(v.items()) if isinstance(v, Mapping) else v
                          for v in (getattr(self, f.name) for f in dataclasses.fields(self))))


LOAD_FIELDS = tuple(f.name for f in dataclasses.fields(LoadOptions))


@dataclass(frozen=True, init=False)
class AnalysisOptions:
    """Everything an analysis depends on besides the graph: `load` (LoadOptions), `cluster` (ClusterOptions,
    which validates the clustering fields for the CLI and the API alike), `hardware` (profile name or YAML
    file; None: the device's default) and `tf_xla_flags` (TF_XLA_FLAGS as one string; its sizes fill the
    cluster sizes not given).

    Made from the parts (`AnalysisOptions(load=LoadOptions(...), cluster=ClusterOptions(...))`) or from the
    flags' names flat (`AnalysisOptions(min_cluster_size=1, deny={"matmul"})`), which read back flat too
    (`options.deny`); from the command line's strings with `AnalysisOptions.from_flags(...)`. Invalid
    values raise XcvizError naming the parameter as the object is made."""

    load: LoadOptions
    cluster: ClusterOptions
    hardware: str | None
    tf_xla_flags: str | None

    def __init__(self, *, load: LoadOptions | None = None, cluster: ClusterOptions | None = None,
                 hardware: str | None = None, tf_xla_flags: str | None = None, **flat) -> None:
        unknown = sorted(set(flat) - set(LOAD_FIELDS) - set(CLUSTER_FIELDS))
        if unknown:
            raise TypeError(f"AnalysisOptions got an unexpected keyword argument {unknown[0]!r}")
        load_flat = {k: v for k, v in flat.items() if k in LOAD_FIELDS}
        cluster_flat = {k: v for k, v in flat.items() if k in CLUSTER_FIELDS}
        load = dataclasses.replace(load, **load_flat) if load is not None else LoadOptions(**load_flat)
        if tf_xla_flags:  # an explicit --min/--max-cluster-size wins over the TF flag
            from ..clustering.tf_flags import parse_tf_xla_flags

            given = {**({k: getattr(cluster, k) for k in CLUSTER_FIELDS} if cluster is not None else {}), **cluster_flat}
            for name, value in parse_tf_xla_flags(tf_xla_flags).items():
                if given.get(name) is None:
                    cluster_flat[name] = value
        cluster = self._cluster(cluster, cluster_flat, load.allow_unknown, hardware)
        for name, value in (("load", load), ("cluster", cluster), ("hardware", hardware), ("tf_xla_flags", tf_xla_flags)):
            object.__setattr__(self, name, value)

    @staticmethod
    def _cluster(cluster: ClusterOptions | None, changes: dict, allow_unknown: bool, hardware: str | None) -> ClusterOptions:
        """The ClusterOptions (made or changed: either way validated by it). With --allow-unknown an op name
        may be one of the file's own, which is not loaded yet: not checked."""
        from ..clustering import ClusterOptions

        base = {k: getattr(cluster, k) for k in (*CLUSTER_FIELDS, "record")} if cluster is not None else {}
        fields = {**base, **changes}
        fields["hardware"] = hardware if fields.get("strategy", "mark") == "cost" else None
        kept = cluster.op_names if cluster is not None and cluster.op_names != "any" else "registry"
        fields["op_names"] = "any" if allow_unknown else kept
        return ClusterOptions(**fields)

    def __hash__(self) -> int:
        return hash((self.load, self.cluster, self.hardware, self.tf_xla_flags))

    @classmethod
    def flat_names(cls) -> tuple[str, ...]:
        """The options' names as flags, in the order of the command line's shared flags."""
        return _FLAT

    def flat(self) -> dict:
        """The options as plain picklable flag values (a worker process rebuilds them with `AnalysisOptions(**flat)`)."""
        return {name: (dict(v) if name == "dims" else v) for name in _FLAT for v in [getattr(self, name)]}

    @classmethod
    def from_flags(cls, *, allow: Iterable[str] | None = None, deny: Iterable[str] | None = None,
                   supported_ops: str | None = None, dims: Iterable[str] | None = None, **fields) -> AnalysisOptions:
        """From the command line's values: comma-separated --allow/--deny, a --supported-ops file path,
        NAME=VALUE --dim strings; the other fields as they are."""
        supported = read_supported_ops(supported_ops)
        return cls(allow=split_list(allow), deny=split_list(deny), supported_ops=supported,
                   dims=parse_dims(dims), **fields)

    @property
    def cluster_options(self) -> ClusterOptions:
        """The clustering's own options (= `cluster`)."""
        return self.cluster

    def replace(self, **changes) -> AnalysisOptions:
        """A copy with some fields changed, by part (load=, cluster=) or flat (min_cluster_size=...)."""
        parts = {"load": self.load, "cluster": self.cluster, "hardware": self.hardware, "tf_xla_flags": self.tf_xla_flags}
        return AnalysisOptions(**{**parts, **changes})


# the flat names, in the order of the command line's shared flags (cli.base.ANALYSIS_OPTIONS)
_FLAT = ("strategy", "device", "min_cluster_size", "max_cluster_size", "allow", "deny", "supported_ops", "allow_unknown",
         "hardware", "dims", "inputs", "max_nodes", "max_file_bytes", "max_depth", "max_alias_expansion", "max_elements",
         "signature", "tf_xla_flags", "trust_pickle")


def _flat_property(part: str, name: str) -> property:
    return property(lambda self: getattr(getattr(self, part), name), doc=f"= {part}.{name}")


for _name in CLUSTER_FIELDS:
    setattr(AnalysisOptions, _name, _flat_property("cluster", _name))
for _name in LOAD_FIELDS:
    setattr(AnalysisOptions, _name, _flat_property("load", _name))
del _name


def split_list(values: Iterable[str] | None) -> frozenset[str]:
    """'a,b' 'c' -> {a, b, c}: repeatable, comma-separated flag values."""
    return frozenset(v.strip() for item in values or [] for v in item.split(",") if v.strip())


def parse_dims(values: Iterable[str] | None) -> dict[str, int]:
    """['batch=8', 'seq=128'] -> {'batch': 8, 'seq': 128}; the last binding of a name wins (sizes are
    checked by LoadOptions)."""
    import re

    dims = {}
    for item in values or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not re.fullmatch(r"\s*-?[0-9]+\s*", value):
            raise XcvizError(f"bad --dim {item!r}", hint="write --dim batch=8")
        dims[name.strip()] = int(value)
    return dims


def read_supported_ops(path: str | None) -> frozenset[str] | None:
    """The op names in a --supported-ops file: one per line (# comments), or a YAML list."""
    if path is None:
        return None
    import yaml

    from ..fileio import protect

    if not os.path.isfile(path):
        raise XcvizError("supported-ops file not found", where=path)
    protect(path)
    text = open(path, encoding="utf-8", errors="replace").read()
    stripped = text.lstrip()
    if stripped.startswith(("-", "[")):
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise XcvizError(f"malformed YAML list: {e}", where=path) from None
        if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
            raise XcvizError("supported-ops YAML must be a list of op names", where=path)
        return frozenset(x.strip() for x in data if x.strip())
    return frozenset(line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip())
