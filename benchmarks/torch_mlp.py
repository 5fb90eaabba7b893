"""Deep-MLP torch.export programs of any size, fast: one layer is exported, then its nodes are repeated.

torch.export traces every op through fake tensors (about 75 ms a layer on the 2-core CI machine, so half an
hour for a 10^5-node MLP); repeating one exported layer's FX nodes, metadata included, gives the same
program as exporting the whole MLP would (linear -> relu, n times, each layer with its own weights)."""
from __future__ import annotations

import torch


class Layer(torch.nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.fc = torch.nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.fc(x))


def deep_mlp(layers: int, width: int = 4, batch: int = 2):
    """An ExportedProgram of `layers` (linear, relu) pairs: 2 * layers + 2 * layers + 2 FX nodes."""
    from torch.export.exported_program import ExportedProgram, ModuleCallEntry, ModuleCallSignature
    from torch.export.graph_signature import (ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,
                                              TensorArgument)

    torch.manual_seed(0)
    one = torch.export.export(Layer(width).eval(), (torch.randn(batch, width),), strict=False)
    src = {n.name: n for n in one.graph.nodes}
    g = torch.fx.Graph()
    x = g.placeholder("x")
    x.meta = dict(src["x"].meta)
    specs, state = [], {}
    weights = []
    for i in range(layers):
        w, b = g.placeholder(f"p_layers_{i}_fc_weight"), g.placeholder(f"p_layers_{i}_fc_bias")
        w.meta, b.meta = dict(src["p_fc_weight"].meta), dict(src["p_fc_bias"].meta)
        weights += [w, b]
        for p, name in ((w, "weight"), (b, "bias")):
            fqn = f"layers.{i}.fc.{name}"
            specs.append(InputSpec(InputKind.PARAMETER, TensorArgument(p.name), fqn))
            state[fqn] = torch.nn.Parameter(torch.randn(*p.meta["val"].shape) * 0.5)
    # placeholders come first in an FX graph: the compute nodes go after every weight
    h = x
    for i in range(layers):
        lin = g.call_function(torch.ops.aten.linear.default, (h, weights[2 * i], weights[2 * i + 1]))
        lin.meta = dict(src["linear"].meta)
        h = g.call_function(torch.ops.aten.relu.default, (lin,))
        h.meta = dict(src["relu"].meta)
    g.output((h,))
    sig = ExportGraphSignature([InputSpec(InputKind.USER_INPUT, TensorArgument("x"), None)] + specs,
                               [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(h.name), None)])
    call = [ModuleCallEntry("", ModuleCallSignature([], [], one.call_spec.in_spec, one.call_spec.out_spec))]
    return ExportedProgram(torch.nn.Module(), g, sig, state, {}, call, one.example_inputs)
