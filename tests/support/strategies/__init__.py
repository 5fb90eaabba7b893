"""Random graphs for every property test (hypothesis): one draw (core.graph_specs) of a graph description,
Profiles of what each test needs (profiles, typed), and adapters to what a test consumes (adapters, defects)."""
from .adapters import dump, mapping_to_graph, to_graph, to_mapping
from .core import GraphSpec, NodeSpec, Profile, Rule, graph_specs
from .defects import Pairs, corrupt, dumps, junk, repeat_a_key, to_pairs
from .profiles import (CLUSTERING_OPS, FINALIZE, FUZZ, INFER, JSON_DOC, clustering_profile, corrupted_mappings, dags,
                       finalized_dags, fuzz_mappings, infer_mappings, json_documents)
from .typed import typed_specs


def typed_mappings():
    """typed_specs as YAML mappings."""
    return typed_specs().map(to_mapping)


__all__ = ["GraphSpec", "NodeSpec", "Profile", "Rule", "graph_specs", "to_graph", "to_mapping", "mapping_to_graph", "dump",
           "Pairs", "corrupt", "dumps", "junk", "repeat_a_key", "to_pairs", "CLUSTERING_OPS", "FINALIZE", "FUZZ", "INFER",
           "JSON_DOC", "clustering_profile", "dags", "finalized_dags", "fuzz_mappings", "corrupted_mappings",
           "infer_mappings", "json_documents", "typed_specs", "typed_mappings"]
