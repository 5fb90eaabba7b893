"""`xcviz check`: a CI gate (placeholder until written)."""
