"""Each aten call of a torch.export program as torch eager can replay it: the OpOverload and its arguments, the
tensors in them as xcviz refs (runtime.torch_eager times a part of the graph this way, op by op)."""
from __future__ import annotations


class TensorArg(str):
    """A tensor argument: the xcviz ref of the value an FX node produced (or a graph input's name)."""


class SymArg(str):
    """A symbolic size argument: the FX node (sym_size, arithmetic on sizes) computing it, by name."""


def record_calls(fx_nodes, ref: dict) -> dict:
    """FX node name -> (target, args, kwargs) for every call_function but getitem: tensor nodes as TensorArg,
    size nodes as SymArg (recorded too, evaluated on the real tensors when a replay needs one). What the
    target is comes from the program (xcviz's reader resolves it to an OpOverload, nothing unpickled)."""
    import operator

    import torch

    def conv(v):
        if isinstance(v, torch.fx.Node):
            return TensorArg(ref[v.name]) if v.name in ref else SymArg(v.name)
        if isinstance(v, list):
            return [conv(x) for x in v]
        if isinstance(v, tuple):   # (torch.Size, a named tuple: aten takes a plain tuple for int[])
            return tuple(conv(x) for x in v)
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        return v

    calls = {}
    for n in fx_nodes:
        if n.op == "call_function" and n.target is not operator.getitem:
            try:
                calls[n.name] = (n.target, conv(tuple(n.args)), conv(dict(n.kwargs)))
            except Exception:  # noqa: BLE001 - a call not recorded is a part torch eager leaves to onnxruntime
                continue
    return calls
