"""xcviz: see how XLA auto-clustering splits a model, why ops fall back, and what crosses each boundary."""
from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["load", "from_torch", "cluster", "stats", "analyse", "AnalysisOptions", "Analysis", "run", "validate", "print_graph",
           "parse_graph", "XcvizError"]

from .errors import XcvizError
from .pipeline import Analysis, AnalysisOptions, analyse


def load(path, **kw):
    """Load a graph file (.yaml, .json, ONNX JSON, .onnx) into a verified Graph."""
    from .loaders import load as _load

    return _load(path, **kw)


def from_torch(module_or_program, example_args=None, dynamic_shapes=None, **kw):
    """A torch.nn.Module (exported with torch.export) or an ExportedProgram as a verified Graph (needs the
    `torch` extra); keywords: example_kwargs, decompose (run_decompositions first), dims."""
    from .loaders.torch_export import from_torch as _from_torch

    return _from_torch(module_or_program, example_args, dynamic_shapes, **kw)


def cluster(graph, **kw):
    """Cluster a graph; keyword arguments are ClusterOptions fields. Returns a Clustering."""
    from .clustering import ClusterOptions, run_clustering

    return run_clustering(graph, ClusterOptions(**kw))


def stats(graph, clustering, hardware=None):
    """Coverage, boundary bytes, launches and estimated speedup of a clustering."""
    from .cost import compute_stats, load_hardware

    return compute_stats(graph, clustering, load_hardware(hardware, clustering.options.device))


def run(graph, inputs=None, mode="hybrid", **kw):
    """Execute a graph (hybrid | native | jit); returns {output name: numpy array}."""
    from .runtime.execute import run_graph

    return run_graph(graph, inputs, mode=mode, **kw)


def validate(graph, **kw):
    """JIT-compile every kept cluster with JAX and compare it with the native reference."""
    from .runtime.validate import validate_graph

    return validate_graph(graph, **kw)


def print_graph(graph, clustering=None):
    """The graph as text (.xcir); with a Clustering, each node's cluster or fallback reason as a comment."""
    from .ir.text_print import print_graph as _print

    return _print(graph, clustering)


def parse_graph(text, source=None, **kw):
    """Text from print_graph (or a .xcir file's) -> a verified Graph; keyword arguments as for load."""
    from .loaders.xcir import parse_graph as _parse

    return _parse(text, source, **kw)
