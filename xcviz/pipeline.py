"""The analysis pipeline: options (one field per shared command-line flag) and analyse = load + cluster + cost."""
from __future__ import annotations

import dataclasses
import os
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from .errors import XcvizError

if TYPE_CHECKING:
    from .clustering import Clustering, ClusterOptions
    from .cost import Hardware, Stats
    from .ir import Graph

# Defaults of the limits (docs/limits.md). Written out rather than imported from the loaders, so that
# importing the options (as the CLI does for its --help) loads nothing heavy.
DEFAULT_MAX_NODES = 5_000_000
DEFAULT_MAX_FILE_BYTES = 2 * 1024**3
DEFAULT_MAX_DEPTH = 100                  # = loaders.parse.DEFAULT_MAX_DEPTH
DEFAULT_MAX_ALIAS_EXPANSION = 1_000_000  # = loaders.parse.DEFAULT_MAX_ALIAS_EXPANSION


@dataclass(frozen=True)
class AnalysisOptions:
    """Everything an analysis depends on besides the graph; each field is the flag of the same name.

    Built from Python values (`AnalysisOptions(min_cluster_size=1, deny={"matmul"})`) or from the
    command line's strings (`AnalysisOptions.from_flags(...)`). Invalid values raise XcvizError with a
    hint as the object is made. The loading fields (allow_unknown, dims, the limits) apply when
    `analyse` reads a file; a Graph passed in is used as it is."""

    strategy: str = "mark"
    device: str = "cpu"
    min_cluster_size: int | None = None   # None: 4 for mark (TensorFlow's default), 0 for greedy
    max_cluster_size: int | None = None   # None: unlimited
    allow: frozenset[str] = frozenset()   # ops added to the support set
    deny: frozenset[str] = frozenset()    # ops removed from it
    supported_ops: frozenset[str] | None = None  # replaces the built-in support set (and loads unknown ops)
    allow_unknown: bool = False           # load ops the registry does not know as opaque fallback nodes
    hardware: str | None = None           # profile name or YAML file; None: the device's default
    dims: Mapping[str, int] = field(default_factory=dict)  # symbolic dimension bindings
    inputs: str | None = None             # an .npz file whose arrays' shapes bind symbolic dimensions (win over dims)
    max_nodes: int = DEFAULT_MAX_NODES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH
    max_alias_expansion: int = DEFAULT_MAX_ALIAS_EXPANSION
    max_elements: int | None = None       # refuse a tensor of more elements (over 64 bits: always)
    signature: str | None = None          # SavedModel: the signature to load (None: serving_default)
    tf_xla_flags: str | None = None       # TF_XLA_FLAGS as one string: sizes map onto the fields above
    trust_pickle: bool = False            # .pt2: let torch.export.load read what xcviz's reader does not (runs code from the file)

    def __post_init__(self) -> None:
        for name in ("allow", "deny"):
            object.__setattr__(self, name, frozenset(getattr(self, name)))
        if self.supported_ops is not None:
            object.__setattr__(self, "supported_ops", frozenset(self.supported_ops))
        for name, value in self.dims.items():
            if not isinstance(name, str) or not name.strip() or isinstance(value, bool) \
                    or not isinstance(value, int) or value < 1:
                raise XcvizError(f"bad --dim {f'{name}={value}'!r}", hint="sizes are positive integers: write --dim batch=8")
        object.__setattr__(self, "dims", types.MappingProxyType(dict(self.dims)))
        if self.tf_xla_flags:  # an explicit --min/--max-cluster-size wins over the TF flag
            from .clustering.tf_flags import parse_tf_xla_flags

            for name, value in parse_tf_xla_flags(self.tf_xla_flags).items():
                if getattr(self, name) is None:
                    object.__setattr__(self, name, value)
        if not self.allow_unknown and self.supported_ops is None:  # else a name may be an op of the file's own
            from .clustering.options import check_op_names

            for flag, names in (("--allow", self.allow), ("--deny", self.deny)):
                check_op_names(flag, names)
        # validates strategy, device and sizes, canonicalises op names (done once, here)
        object.__setattr__(self, "_cluster_options", self._make_cluster_options())

    def __hash__(self) -> int:  # dims is a (read-only) mapping: hash its items
        return hash(tuple(frozenset(v.items()) if isinstance(v, Mapping) else v
                          for v in (getattr(self, f.name) for f in dataclasses.fields(self))))

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
        """The clustering's own options (strategy, device, sizes, support set)."""
        return self._cluster_options  # type: ignore[attr-defined]

    def replace(self, **changes) -> AnalysisOptions:
        return dataclasses.replace(self, **changes)

    def _make_cluster_options(self) -> ClusterOptions:
        from .clustering import ClusterOptions

        return ClusterOptions(strategy=self.strategy, device=self.device, min_cluster_size=self.min_cluster_size,
                              max_cluster_size=self.max_cluster_size, allow=self.allow, deny=self.deny,
                              supported_ops=self.supported_ops,
                              hardware=self.hardware if self.strategy == "cost" else None)


@dataclass(frozen=True, eq=False, repr=False)
class Analysis:
    """One analysed graph: the graph, its clustering, the cost model's stats, and the hardware they assume."""

    graph: Graph
    clustering: Clustering
    stats: Stats
    hardware: Hardware

    def __repr__(self) -> str:  # the fields may hold millions of nodes
        return f"<Analysis of {self.graph.name!r}: {len(self.graph.nodes):,} nodes, {self.stats.clusters} clusters>"


def analyse(source: str | os.PathLike | Graph, options: AnalysisOptions | None = None, *,
            progress: Callable[[str], None] | None = None, freeze: bool = False, record: bool = True) -> Analysis:
    """Load (when `source` is a path), cluster and cost: the common path of every command.

    `progress(step)` is called as each step starts (the CLI draws it; the library stays silent).
    `record=False`: keep no merge attempts (for numbers only: less memory on a big graph; same clusters).
    `freeze`: for a process that ends without freeing its objects (the `xcviz` command): right after
    loading, the graph moves out of the cyclic GC's reach, so later full collections do not rescan it."""
    from .clustering import run_clustering
    from .cost import compute_stats, load_hardware

    options = options or AnalysisOptions()
    say = progress or _silent
    hardware = load_hardware(options.hardware, options.device)
    if isinstance(source, (str, os.PathLike)):
        say(f"loading {os.fspath(source)}")
        graph = load_graph(os.fspath(source), options)
        if freeze:
            from .ir import freeze_for_process

            freeze_for_process()
    else:
        graph = source
    say(f"clustering {len(graph.nodes):,} nodes")
    cluster_options = options.cluster_options if record else dataclasses.replace(options.cluster_options, record=False)
    clustering = run_clustering(graph, cluster_options)
    say("cost model")
    return Analysis(graph, clustering, compute_stats(graph, clustering, hardware), hardware)


def load_graph(path: str, options: AnalysisOptions | None = None) -> Graph:
    """Load a graph file with the options' loading fields (allow_unknown, dims, limits)."""
    from .fileio import protect
    from .loaders import load

    o = options or AnalysisOptions()
    protect(path)
    graph = load(path, allow_unknown=o.allow_unknown or o.supported_ops is not None, dims=dict(o.dims),
                 max_nodes=o.max_nodes, max_file_bytes=o.max_file_bytes, max_depth=o.max_depth,
                 max_alias_expansion=o.max_alias_expansion, max_elements=o.max_elements,
                 signature=o.signature, trust_pickle=o.trust_pickle)
    if o.dims:
        _check_dims(graph, o.dims, path)
    if o.inputs is not None:
        bind_input_arrays(graph, o.inputs)
    return graph


def bind_input_arrays(graph: Graph, path: str) -> dict[str, int]:
    """`--inputs FILE.npz`: bind the symbolic dims the arrays' shapes give (they win over --dim, as in
    `validate`); the bindings made. Arrays are only read for their shapes here."""
    from .cost.symbolic import dims_from_arrays
    from .ir import bind_dims
    from .runtime.npz import read_npz

    dims = dims_from_arrays(graph, read_npz(path), path)
    bind_dims(graph, dims)
    return dims


def graph_dim_names(graph: Graph) -> tuple[set[str], dict[str, str]]:
    """(the symbolic dimension names the graph's tensors use, INPUT.AXIS -> the symbol at that axis)."""
    import re

    known = {w for t in [v.type for v in graph.inputs] + [t for node in graph.nodes for t in node.outputs]
             if t.shape for d in t.shape if isinstance(d, str) for w in re.findall(r"[A-Za-z_]\w*", d)}
    at = {f"{v.name}.{k}": d for v in graph.inputs if v.type.shape for k, d in enumerate(v.type.shape)
          if isinstance(d, str) and d.isidentifier()}
    return known, at


def bind_present_dims(graph: Graph, dims: Mapping[str, int]) -> list[str]:
    """Bind each of `dims` the graph has (by name or INPUT.AXIS); the names it does not have (sweep: one
    --dim for a folder of models, each bound where it applies)."""
    known, at = graph_dim_names(graph)
    skipped = []
    for name, size in dims.items():
        if name in at and name not in known:
            graph.dims[at[name]] = size
        elif name in known:
            graph.dims[name] = size
        else:
            skipped.append(name)
    return skipped


def _check_dims(graph: Graph, dims: Mapping[str, int], path: str) -> None:
    """Every bound dimension must be one the graph has: a typo would otherwise be silently ignored."""
    import re

    def names(types_) -> set[str]:
        return {w for t in types_ if t.shape for d in t.shape if isinstance(d, str) for w in re.findall(r"[A-Za-z_]\w*", d)}

    known = names(v.type for v in graph.inputs)
    if all(name in known for name in dims):
        return
    # INPUT.AXIS names the symbol at that axis of a graph input (a saved torch program keeps `s77`, not `batch`)
    at = {f"{v.name}.{k}": d for v in graph.inputs if v.type.shape for k, d in enumerate(v.type.shape)
          if isinstance(d, str) and d.isidentifier()}
    for name in [n for n in dims if n not in known and n in at]:
        graph.dims[at[name]] = graph.dims.pop(name, dims[name])
    known |= names(t for node in graph.nodes for t in node.outputs)  # only when the inputs do not name them all
    for name in dims:
        if name not in known and name not in at:
            from .errors import did_you_mean

            first = {}
            for where_, d in at.items():
                first.setdefault(d, where_)
            listed = ", ".join(f"{d} ({first[d]})" if d in first else d for d in sorted(known)[:10])
            raise XcvizError(f"--dim {name}: the graph has no dimension {name!r}", where=path,
                             hint=did_you_mean(name, known) or (f"its dimensions: {listed}; bind one by name or as "
                                                                "INPUT.AXIS" if known else
                                                                "the graph has no symbolic dimension"))


def _silent(step: str) -> None:
    pass


def split_list(values: Iterable[str] | None) -> frozenset[str]:
    """'a,b' 'c' -> {a, b, c}: repeatable, comma-separated flag values."""
    return frozenset(v.strip() for item in values or [] for v in item.split(",") if v.strip())


def parse_dims(values: Iterable[str] | None) -> dict[str, int]:
    """['batch=8', 'seq=128'] -> {'batch': 8, 'seq': 128}; the last binding of a name wins (sizes are
    checked by AnalysisOptions)."""
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

    from .fileio import protect

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
