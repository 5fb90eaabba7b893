"""Passes over a built graph: shape inference (infer.py; one node's rule in node_rule.py, the compiled walk in infer_fast.py)."""
