"""TensorFlow's ops under their TF names, and its XLA kernel registry (tf2xla); each module lists its entries in its
OPS; xcviz.ops.build_registry puts them in the table."""
