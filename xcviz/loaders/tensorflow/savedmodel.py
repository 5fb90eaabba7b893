"""A SavedModel directory -> the GraphDef of one signature, with its function calls inlined (but jit_compile ones)."""
from __future__ import annotations

import os

from ...errors import XcvizError
from .functions import inline, library
from .graphdef import split_input

CALLS = ("PartitionedCall", "StatefulPartitionedCall")
DEFAULT_SIGNATURE = "serving_default"


def signature_graph(saved_model, signature: str | None, source: str):
    """(node defs, output refs, output names) of `signature` (default serving_default) of the `serve` graph."""
    metas = list(saved_model.meta_graphs)
    if not metas:
        raise XcvizError("the SavedModel holds no MetaGraph", where=source, hint="the file may be truncated")
    meta = next((m for m in metas if "serve" in m.meta_info_def.tags), metas[0])
    names = sorted(k for k in meta.signature_def if not k.startswith("__"))
    sig_name = signature or (DEFAULT_SIGNATURE if DEFAULT_SIGNATURE in meta.signature_def else (names or [""])[0])
    if sig_name not in meta.signature_def:
        raise XcvizError(f"the SavedModel has no signature {sig_name!r}", where=source,
                         hint=f"its signatures: {', '.join(names) or 'none'}; choose one with --signature")
    sig = meta.signature_def[sig_name]
    graph_def = meta.graph_def
    functions = library(graph_def, source)
    remap: dict[str, str] = {}
    nodes = inline_calls(list(graph_def.node), functions, type(graph_def.node[0]) if graph_def.node else None,
                         source, remap=remap)
    outputs = {k: _follow(_ref(v.name), remap) for k, v in sorted(sig.outputs.items())}
    renames = _input_renames(nodes, sig)
    _rename(nodes, renames)
    outputs = {k: renames.get(v, v) for k, v in outputs.items()}
    feeds = {renames.get(n, n) for n in (_ref(v.name).split(":")[0] for v in sig.inputs.values())}
    nodes = _needed(nodes, list(outputs.values()))
    return nodes, outputs, feeds, sig_name


def _input_renames(nodes: list, sig) -> dict[str, str]:
    """{placeholder node name: signature key}: a SavedModel's inputs are named as its signature names them
    (`x`, not `serving_default_x`), as its outputs are; a key that another node already uses keeps the node's name."""
    taken = {nd.name for nd in nodes}
    out: dict[str, str] = {}
    for key, info in sorted(sig.inputs.items()):
        node = _ref(info.name).split(":")[0]
        if ":" not in _ref(info.name) and node in taken and node != key and key not in taken \
                and key not in out.values():
            out[node] = key
    return out


def _rename(nodes: list, renames: dict[str, str]) -> None:
    if not renames:
        return
    for nd in nodes:
        if nd.name in renames:
            nd.name = renames[nd.name]
        refs = list(nd.input)
        if any(split_input(r)[0].split(":")[0] in renames for r in refs):
            del nd.input[:]
            for r in refs:
                base, ctrl = split_input(r)
                node, _, k = base.partition(":")
                new = renames.get(node, node) + (":" + k if k else "")
                nd.input.append("^" + new if ctrl else new)


def _ref(tensor: str) -> str:
    return tensor[:-2] if tensor.endswith(":0") else tensor


def _follow(ref: str, remap: dict[str, str]) -> str:
    for _ in range(len(remap) + 1):
        if ref not in remap:
            return ref
        ref = remap[ref]
    return ref


def inline_calls(nodes: list, functions: dict, node_type, source: str, limit: int = 10**6,
                 remap: dict | None = None) -> list:
    """Replace every PartitionedCall/StatefulPartitionedCall of a library function by its body, repeatedly;
    `remap` collects what each call's outputs became."""
    remap_all = {} if remap is None else remap
    while True:
        calls = [nd for nd in nodes if _inlined(nd, functions)]
        if not calls:
            return nodes
        remap: dict[str, str] = {}
        out = []
        for nd in nodes:
            if not _inlined(nd, functions):
                out.append(nd)
                continue
            data = [r for r in nd.input if not r.startswith("^")]
            body, rets = inline(nd, functions[nd.attr["f"].func.name], data, node_type)
            ctrl = [r for r in nd.input if r.startswith("^")]
            for b in body:  # the call's control inputs hold for every node of its body
                if not b.input or all(r.startswith("^") for r in b.input):
                    b.input.extend(ctrl)
            out += body
            for k, r in enumerate(rets):
                remap[f"{nd.name}:{k}"] = r
                if k == 0:
                    remap[nd.name] = r
            marker = node_type(name=nd.name, op="NoOp", device=nd.device)  # `^call` still names something
            marker.input.extend("^" + split_input(r)[0].split(":")[0] for r in rets)
            out.append(marker)
        for nd in out:
            refs = list(nd.input)
            del nd.input[:]
            for r in refs:
                base, ctrl = split_input(r)
                if ctrl:
                    nd.input.append(r)
                else:
                    nd.input.append(remap.get(base, remap.get(r, r)))
        nodes = out
        remap_all.update(remap)
        if len(nodes) > limit:
            raise XcvizError(f"inlining the function library gives over {limit} nodes", where=source,
                             hint="load the function's own GraphDef instead")


def _inlined(nd, functions: dict) -> bool:
    """A call TF's function inlining expands: not one marked for XLA (`_XlaMustCompile`, a jit_compile
    tf.function or Keras layer), which TF keeps as a call node that MarkForCompilationPass judges whole."""
    if nd.op not in CALLS or nd.attr["f"].func.name not in functions:
        return False
    fdef = functions[nd.attr["f"].func.name]
    must = ("_XlaMustCompile" in nd.attr and nd.attr["_XlaMustCompile"].b) or \
        ("_XlaMustCompile" in fdef.attr and fdef.attr["_XlaMustCompile"].b)
    return not must


def _needed(nodes: list, outputs: list[str]) -> list:
    """The nodes the outputs depend on (data and control), in file order."""
    by_name = {nd.name: nd for nd in nodes}
    keep: set[str] = set()
    todo = [split_input(o)[0].split(":")[0] for o in outputs]
    while todo:
        name = todo.pop()
        if name in keep or name not in by_name:
            continue
        keep.add(name)
        todo += [split_input(r)[0].split(":")[0] for r in by_name[name].input]
    return [nd for nd in nodes if nd.name in keep]


def saved_model_file(path: str) -> str | None:
    """The saved_model.pb of a SavedModel directory (or the file itself), None when `path` is not one."""
    if os.path.isdir(path):
        f = os.path.join(path, "saved_model.pb")
        return f if os.path.isfile(f) else None
    return path if os.path.basename(path) == "saved_model.pb" else None
