"""torch eager as the native runtime: a part of a torch program replayed op by op, each node its own aten call.

The loader keeps every aten call of the program (loaders.torch_calls: the OpOverload and its arguments, the
tensors as xcviz refs); a part replays its members' calls on torch tensors under `torch.inference_mode()`
with `torch.set_num_threads(threads)`, the weights converted once (resident, as XLA and onnxruntime keep
them). torch eager is op by op already: each call is one dispatch to its ATen kernel. A node with no such
call (a graph that is not a torch program, a node a pass made) raises Unmappable, and the caller runs that
part on onnxruntime or the NumPy reference, and says so.
"""
from __future__ import annotations

import numpy as np

from ..ir import format_ref
from ..loaders.torch_calls import SymArg, TensorArg
from .onnx_emit import Unmappable

# what torch offers as "its own optimizations on" is torch.compile (Inductor): seconds to minutes of compiling
# per graph and shape, and failures of its own; not a cheap, honest twin of onnxruntime's optimized session
OPTIMIZED_NOTE = ("torch has no optimized mode short of torch.compile (Inductor compiles for seconds to minutes "
                  "per graph): native_optimized_ms is not measured")


def _tensor(torch, v):
    """A NumPy value as a torch tensor (shared memory where NumPy allows writing to it)."""
    a = np.asarray(v)
    return torch.from_numpy(a) if a.flags.writeable and a.dtype.kind != "U" else torch.tensor(a.copy())


class TorchRuntime:
    """torch eager, op by op: the program's own aten calls on torch tensors, `threads` intra-op threads."""

    name, mode, note = "torch", "op-by-op", None
    optimized_note = OPTIMIZED_NOTE

    def __init__(self, threads: int) -> None:
        import torch

        self.version, self.threads = torch.__version__.split("+")[0], threads
        self.threads_seen: list[int] = []   # torch.get_num_threads() inside each prepared part's first run
        self.threads_last: int | None = None  # and inside the latest run of any part

    def prepare(self, graph, members, entries, exits, values):
        import torch

        calls = graph.aten_calls or {}
        params = {v.name for v in graph.inputs if v.is_param}
        have = set(entries)
        steps = []
        for i in members:
            n = graph.nodes[i]
            if n.op == "const":   # a constant the loader made of a scalar operand: a tensor once, as a weight
                steps.append((n.name, None, _tensor(torch, n.attrs["value"]), None))
            else:
                call = calls.get(n.name)
                if call is None:
                    raise Unmappable(f"node {n.name!r} ({n.op_type}) is not an aten call of a torch program")
                missing = [r for r in _needs(call, calls) if r not in have]
                if missing:
                    raise Unmappable(f"node {n.name!r} reads {missing[0]!r}, which this part does not have")
                steps.append((n.name, *call))
            have.update(format_ref(n.name, k) for k in range(max(len(n.outputs), 1)))
        # a call that writes into an argument must not write into the caller's arrays (shared memory): copies
        copy = any(getattr(getattr(s[1], "_schema", None), "is_mutable", False) for s in steps)
        conv = (lambda v: torch.tensor(np.array(v))) if copy else (lambda v: _tensor(torch, v))
        try:
            resident = {r: conv(values[r]) for r in entries if r in params and r in values}
        except (TypeError, RuntimeError) as e:   # a weight torch has no dtype for (strings)
            raise Unmappable(f"a weight is no torch tensor: {str(e).splitlines()[0][:200]}") from None
        fed = [r for r in entries if r not in resident]
        n_threads, seen, rt = self.threads, self.threads_seen, self
        first = [True]

        def run(feed: dict) -> list:
            if torch.get_num_threads() != n_threads:
                torch.set_num_threads(n_threads)
            local = dict(resident)
            for r in fed:
                local[r] = conv(feed[r])
            with torch.inference_mode():
                for name, target, args, kwargs in steps:
                    if target is None:
                        local[name] = args
                        continue
                    syms: dict = {}
                    out = target(*_bind(args, local, calls, syms), **_bind(kwargs, local, calls, syms))
                    if isinstance(out, (tuple, list)):
                        for k, v in enumerate(out):
                            local[format_ref(name, k)] = v
                    else:
                        local[name] = out
            if first[0]:
                first[0] = False
                seen.append(torch.get_num_threads())
            rt.threads_last = torch.get_num_threads()   # (what the run had: read back by the tests)
            return [_numpy(local[r]) for r in exits]
        torch.set_num_threads(n_threads)
        return run


def _numpy(v):
    import torch

    if isinstance(v, torch.Tensor):
        return v.detach().numpy() if v.dtype != torch.bfloat16 else v.float().numpy()
    return np.asarray(v)


def _needs(call, calls: dict, seen: set | None = None) -> set:
    """The tensors a call reads, those of the size computations it reads included."""
    seen = seen if seen is not None else set()
    out: set = set()

    def walk(v):
        if isinstance(v, TensorArg):
            out.add(str(v))
        elif isinstance(v, SymArg):
            if v in seen:
                return
            seen.add(v)
            sub = calls.get(str(v))
            if sub is None:
                raise Unmappable(f"size {str(v)!r} is not computed by the program's calls")
            out.update(_needs(sub, calls, seen))
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
    walk(call[1])
    walk(call[2])
    return out


def _bind(v, local: dict, calls: dict, syms: dict):
    """Arguments with their tensors and sizes filled in (a size computed once per call)."""
    if isinstance(v, TensorArg):
        return local[str(v)]
    if isinstance(v, SymArg):
        if v not in syms:
            target, args, kwargs = calls[str(v)]
            syms[v] = target(*_bind(args, local, calls, syms), **_bind(kwargs, local, calls, syms))
        return syms[v]
    if isinstance(v, tuple):
        return tuple(_bind(x, local, calls, syms) for x in v)
    if isinstance(v, list):
        return [_bind(x, local, calls, syms) for x in v]
    if isinstance(v, dict):
        return {k: _bind(x, local, calls, syms) for k, x in v.items()}
    return v
