"""`xcviz sweep`: many models (placeholder until written)."""
