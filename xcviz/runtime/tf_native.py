"""TensorFlow as the native runtime of a TF GraphDef file: a part's own NodeDefs run by TF's executor, op by op.

A part becomes a GraphDef of the file's NodeDefs for its members (as they are: attributes, devices cleared),
each value it reads fed through a Placeholder, control edges from outside it dropped; TF imports it
(`tf.graph_util.import_graph_def` inside `tf.compat.v1.wrap_function`, the fed values the function's
arguments through `input_map`) and runs it as a concrete function with Grappler off (`disable_meta_optimizer`:
no fusion, no constant folding; each node its kernel, the analogue of onnxruntime with its optimizations off),
`threads` intra-op threads, one inter-op.
A SavedModel directory is its signature's NodeDefs with the calls inlined, as xcviz loads it
(loaders.tensorflow.signature_graph); its variables are resources of TF's resource manager, each assigned the
value read from the bundle at load once (a call, a While or a Keras layer's function takes the handle
itself); a variable whose handle leaves the part is a Const of its value, and a ReadVariableOp of a fed or
constant variable an Identity. The file is read by a protobuf parser, nothing
executed from it but its ops.
"""
from __future__ import annotations

import hashlib
import itertools
import os

import numpy as np

from .onnx_emit import Unmappable

GRAPHDEF_SUFFIXES = (".pb", ".pbtxt", ".pbtext", ".pb.gz", ".pbtxt.gz")


def tf_runtime(graph, threads: int):
    """A TfRuntime for a graph loaded from a GraphDef file; None for any other graph."""
    src = graph.source or ""
    if not any(n.op_type.startswith("tf.") for n in graph.nodes):
        return None
    if src.lower().endswith(GRAPHDEF_SUFFIXES) and os.path.isfile(src):
        return TfRuntime(src, threads)
    if os.path.isdir(src) and os.path.isfile(os.path.join(src, "saved_model.pb")):
        sig = graph.name.rsplit(":", 1)[1] if ":" in (graph.name or "") else None
        return TfRuntime(src, threads, signature=sig)
    return None


def _saved_model_graph_def(path: str, signature: str | None):
    """The GraphDef of a SavedModel's signature as xcviz loads it: its NodeDefs, calls inlined, and the library."""
    import tensorflow as tf

    from ..loaders.tensorflow import signature_graph
    from ..loaders.tensorflow.protos import parse_binary

    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        sm = parse_binary("SavedModel", f.read())
    nodes, _, _, _ = signature_graph(sm, signature, path)
    meta = next((m for m in sm.meta_graphs if "serve" in m.meta_info_def.tags), sm.meta_graphs[0])
    gd = tf.compat.v1.GraphDef()
    gd.library.ParseFromString(meta.graph_def.library.SerializeToString())
    gd.versions.ParseFromString(meta.graph_def.versions.SerializeToString())
    for nd in nodes:
        gd.node.add().ParseFromString(nd.SerializeToString())
    return gd


def _variable_value(copy, node):
    value = node.attrs.get("value")
    if value is None:
        raise Unmappable(f"variable {copy.name!r} has no value (the SavedModel's variables were not read)")
    return np.asarray(value)


def _as_frozen(copy, node, tf) -> None:
    """A variable in a part as a frozen graph has it: VarHandleOp -> Const of its value."""
    dtype = copy.attr["dtype"].type
    value = _variable_value(copy, node)
    copy.op = "Const"
    copy.ClearField("attr")
    copy.attr["dtype"].type = dtype
    copy.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value))


def _read_as_identity(copy) -> None:
    """A ReadVariableOp whose variable's value is fed or a Const: an Identity of it."""
    dtype = copy.attr["dtype"].type
    copy.op = "Identity"
    copy.ClearField("attr")
    copy.attr["T"].type = dtype


def _node_of(ref: str) -> str:
    return ref.lstrip("^").split(":", 1)[0]


_VARIABLES = itertools.count()   # (each runtime's variables get shared names of their own in TF's resource manager)


def _graph_def(path: str):
    import tensorflow as tf
    from google.protobuf import text_format

    from ..loaders import DEFAULT_MAX_FILE_BYTES, read_graph_bytes

    data = read_graph_bytes(path, DEFAULT_MAX_FILE_BYTES)   # (gunzipped within the loader's bound, as xcviz read it)
    gd = tf.compat.v1.GraphDef()
    if path.lower().removesuffix(".gz").endswith(("txt", "text")):
        text_format.Parse(data.decode("utf-8", "replace"), gd)
    else:
        gd.ParseFromString(data)
    return gd


def _own_function_names(gd):
    """`gd` with its library's functions renamed after a digest of the library: TF keeps one definition per
    function name in the process, and two files (a model frozen and saved, say) may name different bodies
    alike (`cond_false_181`); the same library gets the same names."""
    if not gd.library.function:
        return gd
    tag = hashlib.sha1(gd.library.SerializeToString(deterministic=True)).hexdigest()[:10]
    names = {f.signature.name: f"{f.signature.name}_xcviz_{tag}" for f in gd.library.function}

    def rename(nodes) -> None:
        for nd in nodes:
            for value in nd.attr.values():
                if value.HasField("func") and value.func.name in names:
                    value.func.name = names[value.func.name]
                for f in value.list.func:
                    f.name = names.get(f.name, f.name)
            if nd.op in names:   # (a function called as an op by its name)
                nd.op = names[nd.op]

    rename(gd.node)
    for f in gd.library.function:
        f.signature.name = names[f.signature.name]
        rename(f.node_def)
    for grad in gd.library.gradient:
        grad.function_name = names.get(grad.function_name, grad.function_name)
        grad.gradient_func = names.get(grad.gradient_func, grad.gradient_func)
    return gd


class TfRuntime:
    """TensorFlow's executor on the file's own NodeDefs, a pruned function per part, Grappler off."""

    name, mode, note = "tensorflow", "op-by-op", None
    # Grappler on or off is process-wide in TF 2 (tf.config.optimizer): one setting per process, not a twin
    optimized_note = ("TensorFlow's Grappler setting is process-wide: the run keeps it off (op by op), and "
                      "native_optimized_ms is not measured")

    def __init__(self, source: str, threads: int, signature: str | None = None) -> None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")   # (TF's C++ start-up lines are not the user's business)
        import tensorflow as tf

        self.source, self.version, self.threads, self.signature = source, tf.__version__, threads, signature
        try:  # read once by TF's runtime when it starts; after that, what it has (read back below)
            tf.config.threading.set_intra_op_parallelism_threads(threads)
            tf.config.threading.set_inter_op_parallelism_threads(1)
        except RuntimeError:
            pass
        self.threads_seen = tf.config.threading.get_intra_op_parallelism_threads() or None
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
        self._gd = None
        self._variables: dict = {}   # variable node -> its shared name, assigned once

    def node_defs(self):
        if self._gd is None:
            self._gd = _own_function_names(_saved_model_graph_def(self.source, self.signature)
                                           if os.path.isdir(self.source) else _graph_def(self.source))
        return self._gd

    def _as_resource(self, copy, node) -> None:
        """A VarHandleOp NodeDef `copy` made the handle of the variable in TF's resource manager (_variable)."""
        copy.device, copy.attr["container"].s = "", b""
        copy.attr["shared_name"].s = self._variable(copy, node).encode()

    def _variable(self, copy, node) -> str:
        """The shared name of a SavedModel variable in TF's resource manager, its value assigned on first use: a
        part keeps its variables as resources where a call, a loop or a gather takes the handle itself."""
        name = self._variables.get(node.name)
        if name is None:
            import tensorflow as tf

            name = f"xcviz_{next(_VARIABLES)}/{node.name}"
            init = tf.compat.v1.GraphDef()
            handle = init.node.add(name="v", op="VarHandleOp")
            for k in ("dtype", "shape"):
                handle.attr[k].CopyFrom(copy.attr[k])
            handle.attr["shared_name"].s = name.encode()
            value = init.node.add(name="value", op="Const")
            value.attr["dtype"].type = copy.attr["dtype"].type
            value.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(_variable_value(copy, node)))
            assign = init.node.add(name="assign", op="AssignVariableOp", input=["v", "value"])
            assign.attr["dtype"].type = copy.attr["dtype"].type
            wrapped = tf.compat.v1.wrap_function(lambda: tf.graph_util.import_graph_def(init, name=""), [])
            wrapped.prune([], [wrapped.graph.get_operation_by_name("assign")])()
            self._variables[node.name] = name
        return name

    def prepare(self, graph, members, entries, exits, values):
        import tensorflow as tf

        gd = self.node_defs()
        by_name = {nd.name: nd for nd in gd.node}
        inside = {graph.nodes[i].name for i in members}
        sub = tf.compat.v1.GraphDef()
        sub.library.CopyFrom(gd.library)
        sub.versions.CopyFrom(gd.versions)
        feed_of, variables = {}, []
        for k, r in enumerate(entries):
            at = graph.position(_node_of(r))
            producer = graph.nodes[at] if at is not None else None
            if producer is not None and producer.op_type == "tf.VarHandleOp" and r in by_name:
                variables.append(producer)   # (a variable the part reads: its own handle, not a fed value)
                continue
            v = np.asarray(values[r])
            if v.dtype == object:
                raise Unmappable(f"{r!r} is not a plain tensor")
            ph = sub.node.add(name=f"xcviz_feed_{k}", op="Placeholder")
            ph.attr["dtype"].type = tf.as_dtype(v.dtype).as_datatype_enum
            feed_of[r] = ph.name
        for node in variables:
            copy = sub.node.add()
            copy.CopyFrom(by_name[node.name])
            self._as_resource(copy, node)
        entries = [r for r in entries if r in feed_of]
        feed_nodes = {_node_of(r) for r in feed_of}
        exit_nodes = {_node_of(r) for r in exits}
        # the variables whose handle leaves the part: Consts of their values (their ReadVariableOps: Identities)
        frozen = {graph.nodes[i].name for i in members
                  if graph.nodes[i].op_type == "tf.VarHandleOp" and graph.nodes[i].name in exit_nodes}
        for node in (graph.nodes[i] for i in members):
            nd = by_name.get(node.name)
            if nd is None:
                raise Unmappable(f"node {node.name!r} is not a NodeDef of {os.path.basename(self.source)}")
            if nd.op in ("_Arg", "_Retval"):   # (a function's own argument: TF aborts the process on one outside it)
                raise Unmappable(f"node {node.name!r} is a function's {nd.op} (a TF dump's), which TF runs only "
                                 "inside its function")
            copy = sub.node.add()
            copy.CopyFrom(nd)
            copy.device = ""
            if copy.op == "VarHandleOp":
                if node.name in frozen:   # (its value, as a frozen graph has it)
                    _as_frozen(copy, node, tf)
                else:
                    self._as_resource(copy, node)
            elif copy.op == "ReadVariableOp" and _node_of(nd.input[0]) in feed_nodes | frozen:
                _read_as_identity(copy)
            del copy.input[:]
            for ref in nd.input:
                if ref.startswith("^"):
                    if ref[1:] in inside:
                        copy.input.append(ref)
                    continue
                key = ref[:-2] if ref.endswith(":0") else ref
                copy.input.append(f"{feed_of[key]}:0" if key in feed_of else ref)
        fetch = [r if ":" in r else f"{r}:0" for r in exits]   # (a TF node name has no ':')

        # the fed values as the function's arguments (input_map), so a call binds its signature directly: a
        # pruned function's call fails that binding first and formats every argument's values into the error
        # it then drops (~1 ms a call for a few hundred floats, more than the part's ops)
        specs = [tf.TensorSpec(None, tf.as_dtype(np.asarray(values[r]).dtype)) for r in entries]

        def body(*args):
            return tf.graph_util.import_graph_def(sub, input_map={f"{feed_of[r]}:0": a for r, a in zip(entries, args)},
                                                  return_elements=fetch, name="")
        try:
            fn = tf.compat.v1.wrap_function(body, specs)
        except Exception as e:  # noqa: BLE001 - TF refusing a part is a fallback, not a crash
            raise Unmappable(f"TensorFlow refused it: {str(e).splitlines()[0][:200]}") from None

        def run(feed: dict) -> list:
            outs = fn(*[tf.constant(feed[r]) for r in entries])
            return [o.numpy() for o in (outs if isinstance(outs, (list, tuple)) else [outs])]
        return run
