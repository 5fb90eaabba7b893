"""Running graphs: native execution, JAX compilation of clusters, and validation against the native reference.

Modules import one way: inputs, measure, node <- jit <- execute <- validate. JAX is imported only when a
cluster is compiled, so importing this package stays cheap."""
