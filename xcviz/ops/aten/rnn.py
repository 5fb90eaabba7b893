"""aten.lstm / aten.gru (torch.nn.LSTM and GRU as torch.export leaves them undecomposed): multi-layer,
bidirectional, batch_first, on rnn.py's ONNX cells after reordering PyTorch's gates into ONNX's order."""
from __future__ import annotations

from ...ir import TensorType
from ..arrays import Unsupported
from . import Adapters, Call, NotMapped, Ref, Spec
from ..registry import Entries
from ..rnn import SCAN, recurrent
from ..rules import Ctx, from_file

ADAPTED = Adapters()  # this module's aten adapters, in order (aten.adapters.build_adapters puts them in the table)
aten = ADAPTED.aten

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

# PyTorch's gate blocks -> ONNX's: LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h (n is ONNX's
# linear_before_reset h: r multiplies W_hn h + b_hn, as linear_before_reset=1 does)
ORDER = {"lstm": (0, 3, 1, 2), "gru": (1, 0, 2)}
STATES = {"lstm": 2, "gru": 1}
_ONNX = {"lstm": recurrent("lstm"), "gru": recurrent("gru")}


def _gates(xp, w, kind: str):
    """A weight or bias with PyTorch's gate blocks along axis 0, in ONNX's order."""
    h = w.shape[0] // len(ORDER[kind])
    return xp.concatenate([w[k * h:(k + 1) * h] for k in ORDER[kind]], axis=0)


def torch_rnn(kind: str):
    def impl(xp, a, x, *rest):
        n_states = STATES[kind]
        states, params = rest[:n_states], rest[n_states:]
        layers, dirs = int(a["num_layers"]), 2 if int(a["bidirectional"]) else 1
        per = 4 if int(a["has_biases"]) else 2
        if len(params) != layers * dirs * per:
            raise Unsupported(f"{kind.upper()} with {len(params)} weights for {layers} layers × {dirs} directions "
                              f"(projections are not supported)")
        if int(a["batch_first"]):
            x = xp.swapaxes(x, 0, 1)                  # [T, N, I]: the ONNX cells' layout 0
        hidden = params[1].shape[1]
        hn, cn = [], []
        for layer in range(layers):
            ws = [params[(layer * dirs + d) * per:(layer * dirs + d + 1) * per] for d in range(dirs)]
            W = xp.stack([_gates(xp, w[0], kind) for w in ws])
            R = xp.stack([_gates(xp, w[1], kind) for w in ws])
            if per == 4:
                B = xp.stack([xp.concatenate([_gates(xp, w[2], kind), _gates(xp, w[3], kind)]) for w in ws])
            else:
                B = xp.zeros((dirs, 2 * W.shape[1]), x.dtype)
            h0 = [s[layer * dirs:(layer + 1) * dirs] for s in states]
            attrs = {"direction": "bidirectional" if dirs == 2 else "forward", "hidden_size": hidden,
                     "_num_outputs": 1 + n_states, "layout": 0, "linear_before_reset": 1}
            outs = _ONNX[kind](xp, attrs, x, W, R, B, None, *h0)
            y = outs[0]                                # [T, D, N, H]
            x = xp.reshape(xp.transpose(y, (0, 2, 1, 3)), (y.shape[0], y.shape[2], dirs * hidden))
            hn.append(outs[1])
            if kind == "lstm":
                cn.append(outs[2])
        out = xp.swapaxes(x, 0, 1) if int(a["batch_first"]) else x
        return (out, xp.concatenate(hn)) + ((xp.concatenate(cn),) if kind == "lstm" else ())
    return impl


def torch_rnn_flops(kind: str):
    gates = len(ORDER[kind])

    def rule(ctx: Ctx, out: list[TensorType]) -> int | None:
        x = ctx.shape(0)
        per = 4 if int(ctx.attrs["has_biases"]) else 2
        first = STATES[kind] + 1
        if x is None or any(isinstance(d, str) for d in x):
            return None
        steps_rows = x[0] * x[1]
        total = 0
        for k in range(first, len(ctx.inputs), per):
            w_ih, w_hh = ctx.shape(k), ctx.shape(k + 1)
            if w_ih is None or w_hh is None or any(isinstance(d, str) for d in (*w_ih, *w_hh)):
                return None
            h = w_hh[1]
            # the input and recurrent matmuls of every gate, then ~4 elementwise ops per gate value
            total += steps_rows * gates * h * (2 * (w_ih[1] + h) + 4)
        return total
    return rule


ATTRS = {"num_layers": 1, "bidirectional": 0, "batch_first": 0, "has_biases": 1}
op("torch_lstm", infer=from_file, flops=torch_rnn_flops("lstm"), num_outputs=3, min_inputs=5, attrs=dict(ATTRS),
   impl=torch_rnn("lstm"), doc="torch.nn.LSTM as aten.lstm.input (inputs: x, h0, c0, then w_ih, w_hh, b_ih, b_hh "
                               "per layer and direction; gates i, f, g, o)" + SCAN)
op("torch_gru", infer=from_file, flops=torch_rnn_flops("gru"), num_outputs=2, min_inputs=4, attrs=dict(ATTRS),
   impl=torch_rnn("gru"), doc="torch.nn.GRU as aten.gru.input (inputs: x, h0, then w_ih, w_hh, b_ih, b_hh per "
                              "layer and direction; gates r, z, n)" + SCAN)


def _adapter(kind: str):
    def fn(c: Call) -> Spec:
        # lstm.input(input, hx[], params[], has_biases, num_layers, dropout, train, bidirectional, batch_first);
        # gru.input(input, hx, params[], ...); the .data overloads (packed sequences) have a batch_sizes tensor
        states = c.args[1] if kind == "lstm" else [c.args[1]]
        if len(c.args) != 9 or not isinstance(c.args[2], list) or not isinstance(states, list):
            raise NotMapped(f"aten.{kind} over packed sequences (the .data overload)")
        params, has_biases, layers, dropout, train, bidirectional, batch_first = c.args[2:]
        if train and dropout:
            raise NotMapped(f"aten.{kind} in training mode with dropout={dropout}")
        refs = [*states, *params]
        if not all(isinstance(v, Ref) for v in refs) or len(states) != STATES[kind]:
            raise NotMapped(f"aten.{kind} with states or weights that are not tensors")
        return Spec(f"torch_{kind}", (c.args[0], *refs), {
            "num_layers": int(layers), "bidirectional": int(bool(bidirectional)),
            "batch_first": int(bool(batch_first)), "has_biases": int(bool(has_biases))})
    return fn


aten("lstm", target="torch_lstm")(_adapter("lstm"))
aten("gru", target="torch_gru")(_adapter("gru"))
