"""TensorFlow graphs: GraphDef (.pb binary, .pbtxt text, TF's dumps) and SavedModel directories, no TF needed."""
from __future__ import annotations

import os
from dataclasses import replace

import msgspec

from ...errors import XcvizError
from ...ir import Graph
from .functions import body_ops, body_resource_ops, library, wrap_functions
from .graphdef import PREFIX, nodes_to_graph
from .savedmodel import saved_model_file, signature_graph

TEXT_SUFFIXES = (".pbtxt", ".pbtext")


def read_graphdef(path: str, data: bytes, text: bool):
    from google.protobuf import message, text_format

    from .protos import parse_binary, parse_text

    try:
        if text:
            return parse_text("GraphDef", data.decode("utf-8", "replace"))
        return parse_binary("GraphDef", data)
    except text_format.ParseError as e:
        raise XcvizError(f"not a TensorFlow GraphDef in text form: {e}"[:300], where=path,
                         hint="give a .pbtxt written by TensorFlow (tf.io.write_graph, TF_DUMP_GRAPH_PREFIX)") from None
    except (message.DecodeError, RuntimeError, ValueError) as e:
        raise XcvizError(f"cannot parse the binary GraphDef ({e})"[:300], where=path,
                         hint="the file may be truncated or corrupted") from None


def graph_from_graphdef(graph_def, source: str, outputs=None, feeds=None, name: str | None = None) -> Graph:
    functions = library(graph_def, source)
    graph = nodes_to_graph(graph_def.node, name or _name(source), source, outputs, feeds)
    return wrap_functions(_annotate_calls(graph, functions), functions)


def _annotate_calls(graph: Graph, functions: dict) -> Graph:
    """The graph with its functional ops carrying the ops their bodies run (`_body_ops`): TF's rules judge a
    call by its body."""
    memo: dict = {}
    res_memo: dict = {}
    nodes = []
    for node in graph.nodes:
        names = [v for k, v in node.attrs.items() if k in ("f", "body", "cond", "then_branch", "else_branch")
                 and isinstance(v, str) and v in functions]
        names += [f for f in node.attrs.get("branches") or () if isinstance(f, str) and f in functions]
        if node.op_type[len(PREFIX):] in functions:
            names.append(node.op_type[len(PREFIX):])
        if names:
            ops: set[str] = set()
            res: set[str] = set()
            for n in names:
                ops |= body_ops(n, functions, memo)
                res |= body_resource_ops(n, functions, res_memo)
            new = {"_body_ops": sorted(ops)}
            if res:  # a body node with a resource input: TF refuses the call (tf_filter.py)
                new["_body_resource_ops"] = sorted(res)
            node = msgspec.structs.replace(node, attrs={**node.attrs, **new})
        nodes.append(node)
    return replace(graph, nodes=nodes)


def load_saved_model(path: str, signature: str | None, max_bytes: int) -> Graph:
    from google.protobuf import message

    from .protos import parse_binary

    file = saved_model_file(path)
    if os.path.getsize(file) > max_bytes:
        raise XcvizError(f"file is over the limit of {max_bytes} bytes", where=file, hint="raise it with --max-file-bytes")
    with open(file, "rb") as f:
        data = f.read()
    try:
        sm = parse_binary("SavedModel", data)
    except (message.DecodeError, RuntimeError, ValueError) as e:
        raise XcvizError(f"cannot parse saved_model.pb ({e})"[:300], where=path,
                         hint="the file may be truncated or corrupted") from None
    nodes, outputs, feeds, sig = signature_graph(sm, signature, path)
    graph = nodes_to_graph(nodes, f"{_name(path)}:{sig}", path, list(outputs.values()), feeds)
    functions = library(sm.meta_graphs[0].graph_def, path) if sm.meta_graphs else {}
    graph = wrap_functions(_annotate_calls(graph, functions), functions)
    nodes = graph.nodes
    if os.path.isdir(path) and sm.meta_graphs:
        from .bundle import variable_values

        values = variable_values(path, sm.meta_graphs[0].object_graph_def, sm.meta_graphs[0].graph_def)
        nodes = [msgspec.structs.replace(node, attrs={**node.attrs, "value": values[node.attrs["shared_name"]]})
                 if node.op_type == PREFIX + "VarHandleOp" and node.attrs.get("shared_name") in values else node
                 for node in nodes]
    return replace(graph, nodes=nodes,
                   output_names={**graph.output_names, **{ref: key for key, ref in outputs.items() if ref != key}})


def _name(path: str) -> str:
    base = os.path.basename(os.path.normpath(path))
    return base.split(".")[0] or "graph"
