"""TensorFlow's ops under their TF names, and its XLA kernel registry (tf2xla); xcviz.ops imports the modules in
registration order."""
