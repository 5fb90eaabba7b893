"""The analysis pipeline as named steps: load (parse, build, passes) -> bind dims -> cluster -> cost -> reference."""
from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from .dims import bind_input_arrays, bind_load_dims, bind_present_dims, graph_dim_names  # noqa: F401
from .options import (DEFAULT_MAX_ALIAS_EXPANSION, DEFAULT_MAX_DEPTH, DEFAULT_MAX_FILE_BYTES,  # noqa: F401
                      DEFAULT_MAX_NODES, AnalysisOptions, LoadOptions, parse_dims, read_supported_ops, split_list)

if TYPE_CHECKING:
    from ..clustering import Clustering, ClusterOptions
    from ..cost import Hardware, Stats
    from ..ir import Graph


@dataclass(frozen=True, eq=False, repr=False)
class Analysis:
    """One analysed graph: the graph, its clustering, the cost model's stats, and the hardware they assume."""

    graph: Graph
    clustering: Clustering
    stats: Stats
    hardware: Hardware

    @functools.cached_property
    def reference(self) -> dict | None:
        """The comparison with a partition the graph carries (TF's `_XlaCluster` attributes), or None
        (the last step, made when first read: it walks every node)."""
        return compare_reference(self.graph, self.clustering)

    def _repr_html_(self) -> str:
        """In a notebook: the summary, the largest clusters and the fallback reasons as compact tables."""
        from ..render.notebook_tables import analysis_html

        return analysis_html(self.graph, self.clustering, self.stats)

    def __repr__(self) -> str:  # the fields may hold millions of nodes
        return f"<Analysis of {self.graph.name!r}: {len(self.graph.nodes):,} nodes, {self.stats.clusters} clusters>"


def analyse(source: str | os.PathLike | Graph, options: AnalysisOptions | None = None, *,
            progress: Callable[[str], None] | None = None, freeze: bool = False, record: bool = True) -> Analysis:
    """The steps of every command: load (a path) -> bind dims -> cluster -> cost; the reference comparison
    is `Analysis.reference`.

    `progress(step)` is called as each step starts (the CLI draws it; the library stays silent).
    `record=False`: keep no merge attempts (for numbers only: ~40 MB less at 10^6 nodes; same clusters).
    `freeze`: for a process that ends without freeing its objects (the `xcviz` command): right after
    loading, the graph moves out of the cyclic GC's reach, so later full collections do not rescan it.
    A Graph passed in is used as it is: the loading options (dims, inputs) apply to files."""
    from ..cost import hardware_for, load_hardware

    options = options or AnalysisOptions()
    say = progress or _silent
    if options.hardware:
        load_hardware(options.hardware, options.device)  # a bad --hardware is said before the file is read
    if isinstance(source, (str, os.PathLike)):
        say(f"loading {os.fspath(source)}")
        graph = load_graph(os.fspath(source), options)
        if freeze:
            from ..ir import freeze_for_process

            freeze_for_process()
    else:
        graph = source
    hardware = hardware_for(graph, options.hardware, options.device)  # follows the program's native runtime
    say(f"clustering {len(graph.nodes):,} nodes")
    clustering = cluster(graph, options.cluster if record else dataclasses.replace(options.cluster, record=False))
    say("cost model")
    return Analysis(graph, clustering, cost(graph, clustering, hardware), hardware)


def load_graph(path: str, options: AnalysisOptions | LoadOptions | None = None) -> Graph:
    """Steps 1-3: read a graph file (loaders: parse and build), make it whole (passes: resolve, verify,
    infer), then bind its dimensions (--dim, --inputs): a verified, shape-inferred Graph."""
    o = options.load if isinstance(options, AnalysisOptions) else options or LoadOptions()
    if isinstance(options, AnalysisOptions) and options.supported_ops is not None:
        o = dataclasses.replace(o, allow_unknown=True)  # a support file names ops of the file's own: load them
    graph = load(path, o)
    return bind_load_dims(graph, o, path)


def load(path: str, o: LoadOptions | None = None) -> Graph:
    """Steps 1-2: read the file with the loading options' limits (loaders.read: parse and build), then the
    passes that make the graph whole (passes.prepare: resolve ops, check references, order, infer shapes)."""
    from ..fileio import protect
    from ..loaders import read

    o = o or LoadOptions()
    protect(path)
    r = read(path, allow_unknown=o.allow_unknown, max_nodes=o.max_nodes, max_file_bytes=o.max_file_bytes,
             max_depth=o.max_depth, max_alias_expansion=o.max_alias_expansion, max_elements=o.max_elements,
             signature=o.signature, trust_pickle=o.trust_pickle)
    return prepare(r, o)


def prepare(r, o: LoadOptions) -> Graph:
    """Step 2: passes.prepare on what a loader read (a loaders.Read); its errors say where in the file."""
    from ..errors import XcvizError
    from ..ir import gc_paused
    from ..passes.prepare import prepare as whole

    with gc_paused():
        try:
            return whole(r.graph, allow_unknown=r.allow_unknown, onnx=r.onnx, dims=dict(o.dims),
                         max_elements=o.max_elements, gathered=r.gathered)
        except XcvizError as e:
            if r.again is not None:  # a fast read: read again the generic way, whose errors say where
                return prepare(r.again(), o)
            raise r.locate(e) if r.locate is not None else e


def load_file(path: str, **options) -> Graph:
    """Steps 1-2 with the loading options as keywords (LoadOptions' fields: allow_unknown, dims, max_nodes,
    ...): a verified, shape-inferred Graph."""
    return load(path, LoadOptions(**options))


def cluster(graph: Graph, options: ClusterOptions) -> Clustering:
    """Step 3: the clustering pass."""
    from ..clustering import run_clustering

    return run_clustering(graph, options)


def cost(graph: Graph, clustering: Clustering, hardware: Hardware) -> Stats:
    """Step 4: the cost model's numbers."""
    from ..cost import compute_stats

    return compute_stats(graph, clustering, hardware)


def compare_reference(graph: Graph, clustering: Clustering) -> dict | None:
    """Step 5: {source, identical, differing_nodes} against the partition the graph carries, or None."""
    from ..clustering.tf_reference import compare_with_reference

    return compare_with_reference(graph, clustering)


def _silent(step: str) -> None:
    pass
