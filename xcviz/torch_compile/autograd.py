"""A hybrid graph under autograd: the forward pass runs hybrid (clusters under JAX) inside a custom
torch.autograd.Function, and the backward pass recomputes Dynamo's graph in torch from the saved inputs and
differentiates that, as activation checkpointing does. Graphs whose recomputation would differ from the forward
(random ops) or repeat a side effect (buffer writes) run in torch under autograd instead, and say so."""
from __future__ import annotations

RECOMPUTE = ("under autograd the forward pass runs hybrid and the backward pass recomputes this graph in torch "
             "from its saved inputs (as activation checkpointing does)")


def why_not(runner) -> str | None:
    """Why this graph cannot run hybrid under autograd, or None when it can."""
    import torch

    if runner.fallback is None:
        return "ran in torch: autograd is on and there is no torch graph to recompute for the backward pass"
    for n in runner.captured.program.graph.nodes:
        tags = getattr(n.target, "tags", ()) if n.op == "call_function" else ()
        if torch.Tag.nondeterministic_seeded in tags and not _no_randomness(n):
            return (f"ran in torch: autograd is on and the graph draws random numbers ({runner.captured.aten.get(n.name, n.name)}): "
                    "its recomputation for the backward pass would draw others")
    return None


def _no_randomness(node) -> bool:
    """A seeded op called so that it draws nothing: attention or dropout with p = 0, or not training."""
    values = {}
    for i, a in enumerate(node.target._schema.arguments):
        if i < len(node.args) and not a.kwarg_only:
            values[a.name] = node.args[i]
        elif a.name in node.kwargs:
            values[a.name] = node.kwargs[a.name]
        elif a.has_default_value():
            values[a.name] = a.default_value
    if values.get("train", values.get("training", True)) is False:
        return True
    p = values.get("dropout_p", values.get("p"))
    return isinstance(p, (int, float)) and p == 0


def hybrid_with_grad(runner, args):
    import torch
    from torch.utils import _pytree

    pos = [k for k, a in enumerate(args) if isinstance(a, torch.Tensor)]
    holder: dict = {}
    flat = _function().apply(runner, holder, tuple(args), pos, *[args[k] for k in pos])
    if RECOMPUTE not in runner.info["notes"]:
        runner.info["notes"].append(RECOMPUTE)
    return _pytree.tree_unflatten(list(flat), holder["spec"])


_FN = None


def _function():
    """The autograd.Function class, made on first use (importing xcviz must not import torch)."""
    global _FN
    if _FN is not None:
        return _FN
    import torch
    from torch.utils import _pytree

    class HybridFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, runner, holder, args, pos, *tensors):
            out = runner.forward(args)
            flat, holder["spec"] = _pytree.tree_flatten(out)
            flat = [o.clone() if isinstance(o, torch.Tensor) and any(o is t for t in tensors) else o for o in flat]
            ctx.runner, ctx.args, ctx.pos = runner, args, pos
            ctx.save_for_backward(*tensors)
            ctx.mark_non_differentiable(*[o for o in flat if isinstance(o, torch.Tensor)
                                          and not (o.is_floating_point() or o.is_complex())])
            return tuple(flat)

        @staticmethod
        def backward(ctx, *grads):
            args = list(ctx.args)
            saved = ctx.saved_tensors
            for k, t in zip(ctx.pos, saved):
                args[k] = t.detach().requires_grad_(t.requires_grad)
            with torch.enable_grad():
                flat, _ = _pytree.tree_flatten(ctx.runner.fallback(*args))
            pairs = [(o, g) for o, g in zip(flat, grads)
                     if isinstance(o, torch.Tensor) and o.requires_grad and g is not None]
            wanted = [k for k in ctx.pos if args[k].requires_grad]
            got = torch.autograd.grad([o for o, _ in pairs], [args[k] for k in wanted], [g for _, g in pairs],
                                      allow_unused=True) if pairs and wanted else [None] * len(wanted)
            by_pos = dict(zip(wanted, got))
            return (None, None, None, None, *[by_pos.get(k) for k in ctx.pos])

    _FN = HybridFunction
    return _FN
