"""Passes over a built graph: shape inference (infer.py, its compiled walk infer_walk.pyx; one node's rule in node_rule.py)."""
