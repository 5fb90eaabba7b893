"""Measure the per-op-class numbers of the cost model (cost.classes) through the same paths `validate` times.

Native: `eval_node` on one node, as validate's native run calls it, small (its fixed cost) and mid-sized
(its rate). XLA: graphs compiled as one cluster (CompileCache, as validate compiles clusters), their inputs
resident on the device (parameters are, and the hand-off of an activation is sync_overhead): a chain of ops
of the class against a chain of one (what one more op costs inside a cluster, and the call), and the
mid-sized op (the rate). FLOPs and bytes are the cost model's own (cost.keys), so a rate measured here is
the rate the model divides by. Times are medians of the repeats (see typical_s)."""
from __future__ import annotations

import statistics
from collections.abc import Callable

import numpy as np

from .calibrate_call import buffer_overheads, call_programs, native_buffers, native_call_programs, warm_calls

# class -> (small program, mid-sized program), each a one-node graph in the text form, of the sizes real
# models have: XLA runs a convolution or a dot of a few thousand elements on its thread pool, so a tiny one
# (2x2) would miss what each costs. The two points give the fixed cost and the rate. A convolution of 16
# channels or fewer is narrow (cost.classes.NARROW: XLA runs it with Eigen, not YNNPACK): the narrow class
# is measured at the widths of small CNNs (unet_mini's 3-16, resnet_mini's 16), the conv class above them
# (natively both run the same im2col code: the small conv is the native fixed cost of either).
PROGRAMS = {
    "dot": ("%y: f32[16,64] = matmul(%a: f32[16,64], %b: f32[64,64])",
            "%y: f32[256,512] = matmul(%a: f32[256,512], %b: f32[512,512])"),
    "conv": ("%y: f32[1,8,16,16] = conv2d(%a: f32[1,8,16,16], %b: f32[8,8,3,3], %c: f32[8]) {pads=[1,1,1,1]}",
             "%y: f32[1,64,56,56] = conv2d(%a: f32[1,64,56,56], %b: f32[64,64,3,3], %c: f32[64]) {pads=[1,1,1,1]}"),
    "narrow_conv": ("%y: f32[1,8,16,16] = conv2d(%a: f32[1,8,16,16], %b: f32[8,8,3,3], %c: f32[8]) {pads=[1,1,1,1]}",
                    "%y: f32[1,16,32,32] = conv2d(%a: f32[1,16,32,32], %b: f32[16,16,3,3], %c: f32[16]) {pads=[1,1,1,1]}"),
    "pointwise_conv": ("%y: f32[1,32,8,8] = conv2d(%a: f32[1,32,8,8], %b: f32[32,32,1,1], %c: f32[32])",
                       "%y: f32[1,64,56,56] = conv2d(%a: f32[1,256,56,56], %b: f32[64,256,1,1], %c: f32[64])"),
    "dwconv": ("%y: f32[1,32,8,8] = conv2d(%a: f32[1,32,8,8], %b: f32[32,1,3,3]) {pads=[1,1,1,1], group=32}",
               "%y: f32[1,64,32,32] = conv2d(%a: f32[1,64,32,32], %b: f32[64,1,3,3]) {pads=[1,1,1,1], group=64}"),
    "elementwise": ("%y: f32[16,64] = add(%a: f32[16,64], %b: f32[16,64])",
                    "%y: f32[262144] = tanh(%a: f32[262144])"),
    "reduce": ("%y: f32[1,16,1,1] = global_avgpool(%a: f32[1,16,8,8])",
               "%y: f32[1,64,1,1] = global_avgpool(%a: f32[1,64,64,64])"),
    "window": ("%y: f32[1,8,8,8] = maxpool(%a: f32[1,8,16,16]) {kernel_shape=[2,2], strides=[2,2]}",
               "%y: f32[1,16,32,32] = maxpool(%a: f32[1,16,64,64]) {kernel_shape=[2,2], strides=[2,2]}"),
    "norm": ("%y: f32[16,64] = softmax(%a: f32[16,64])",
             "%y: f32[256,1024] = softmax(%a: f32[256,1024])"),
    "movement": ("%y: f32[64,16] = transpose(%a: f32[16,64]) {perm=[1,0]}",
                 "%y: f32[1024,512] = transpose(%a: f32[512,1024]) {perm=[1,0]}"),
    "free": ("%y: f32[1,1024] = flatten(%a: f32[16,64]) {axis=0}", None),
}
STEPS = len(PROGRAMS) + 2  # progress steps: one per class (compiling), timing, fitting
# XLA: a chain of K ops of a class in one cluster against a chain of one: the difference is what one more op
# costs inside a compiled cluster (its kernel and its work). The call is the time of a cluster of one trivial
# kernel (`tiny`, 4 floats), called back to back as a model's run calls it (warm_call): the chains' chain-of-one
# less their increment, timed among the other programs, read 3-4x that (~40 us against ~14 us on this
# project's machine), which made every small model's XLA side 2-3x too dear. Each step reads the previous
# one's result; weights are graph inputs.
CHAIN = 8
CHAINS = {
    "dot": ("%w: f32[64,64]", "{y}: f32[16,64] = matmul({x}, %w)", "f32[16,64]"),
    "conv": ("%w: f32[32,32,3,3], %c: f32[32]", "{y}: f32[1,32,8,8] = conv2d({x}, %w, %c) {{pads=[1,1,1,1]}}",
             "f32[1,32,8,8]"),
    "narrow_conv": ("%w: f32[8,8,3,3], %c: f32[8]", "{y}: f32[1,8,16,16] = conv2d({x}, %w, %c) {{pads=[1,1,1,1]}}",
                    "f32[1,8,16,16]"),
    "pointwise_conv": ("%w: f32[32,32,1,1], %c: f32[32]", "{y}: f32[1,32,8,8] = conv2d({x}, %w, %c)", "f32[1,32,8,8]"),
    # (more than NARROW channels: YNNPACK's kernel, as the mid-sized one; cost.classes.dw_scale says Eigen's)
    "dwconv": ("%w: f32[32,1,3,3]", "{y}: f32[1,32,8,8] = conv2d({x}, %w) {{pads=[1,1,1,1], group=32}}",
               "f32[1,32,8,8]"),
    "elementwise": ("", "{y}: f32[16,64] = tanh({x})", "f32[16,64]"),
    # a reduction and the loop that reads it: two kernels per step
    "reduce": ("", "{y}_r: f32[16,1] = reduce_mean({x}) {{axes=[1], keepdims=1}}\n  {y}: f32[16,64] = sub({x}, {y}_r)",
               "f32[16,64]"),
    "window": ("", "{y}: f32[1,8,16,16] = maxpool({x}) {{kernel_shape=[3,3], pads=[1,1,1,1]}}", "f32[1,8,16,16]"),
    "norm": ("", "{y}: f32[16,64] = softmax({x})", "f32[16,64]"),
}
# Natively, a small op's fixed cost is read the same way, from a chain in one session (one more op of the
# chain), not from a one-op session less the session's call: the difference of two numbers of the same size
# is mostly noise, and the chain is how a model's ops run. Classes whose chain step is one op (a reduce step
# is two); movement and free get chains of their own.
NATIVE_CHAINS = {**{c: CHAINS[c] for c in ("dot", "conv", "narrow_conv", "pointwise_conv", "dwconv", "elementwise", "window", "norm")},
                 "movement": ("", "{y}: f32[32,32] = transpose({x}) {{perm=[1,0]}}", "f32[32,32]"),
                 "free": ("", "{y}: f32[16,64] = flatten({x}) {{axis=1}}", "f32[16,64]")}
# Classes whose rate is read from a second chain, of mid-sized steps, rather than from the mid-sized op
# alone: XLA runs a narrow convolution with Eigen, channels-last, so alone it is wrapped in layout copies that
# cost about as much as the convolution itself at these widths, while inside a model the copies
# are paid once at the cluster's edge (cost.fusion counts them); the step the two chains differ by is the
# convolution alone.
MID_CHAINS = {
    "narrow_conv": ("%w: f32[16,16,3,3], %c: f32[16]", "{y}: f32[1,16,32,32] = conv2d({x}, %w, %c) {{pads=[1,1,1,1]}}",
                    "f32[1,16,32,32]"),
}
SESSION_1, SESSION_CHAIN = ("session", "small"), ("session chain", "small")   # a native runtime's call, timed with the small ops
# The dispatch every op pays: one more op of negligible work in a chain (an add of 4 floats, its output allocated),
# not a tanh of [16,64] (onnxruntime: 0.6-0.7 us, an add 0.4-0.5; as a floor it made small ONNX models' native side
# 1.5x too dear), nor a reshape (TensorFlow's allocates nothing: 0.21 us, an add 0.5).
DISPATCH = ("", "{y}: f32[4] = add({x}, {x})", "f32[4]")
# On a session runtime every native number is a slope: what one more op costs inside one session. A session
# call is tens of microseconds (onnxruntime) to ~0.4 ms (TensorFlow's function call) and varies by more than
# a small op costs, so no number is a session's time less an estimate of its call. Small ops: a chain of LONG
# against a chain of one (TensorFlow: 1/8/64/256 tanh steps measured 430/414/496/610 us: 8 steps are inside
# the call's noise, 64 are not). Mid-sized ops (and the bandwidth's large add): COPIES of the op reading one
# input in one session against one copy (the runtimes run op by op, optimizers off: no copy is merged away).
LONG, COPIES = 64, 8
WEIGHTED = ("dot", "conv", "narrow_conv", "pointwise_conv", "dwconv")   # classes whose ops read weights
# a reduction's small step on a session runtime: its chain step (a reduction and the elementwise loop that
# reads it) less the elementwise step, for the reduction alone
REDUCE_STEP = "%y: f32[16,1] = reduce_mean(%a: f32[16,64]) {axes=[1], keepdims=1}"
# native bandwidth: a large add (reads two arrays, writes one)
STREAM = "%y: f32[1048576] = add(%a: f32[1048576], %b: f32[1048576])"


def program(line: str, copies: int = 1, own_weights: bool = False):
    """A one-node graph from `%y: T = op(%a: T, ...) {attrs}` (`copies` > 1: that many copies of the node, each
    reading the same inputs, all returned; `own_weights`: each copy with weights (the inputs after the first)
    of its own: TensorFlow's graph optimizer merges two convolutions of one input and one constant filter)."""
    from ..loaders.xcir import parse_graph

    head, rest = line.split(" = ", 1)
    op, args = rest.split("(", 1)
    args, attrs = args.rsplit(")", 1)
    params = ", ".join(a.strip() for a in args.split(", "))
    refs = ", ".join(a.split(":")[0].strip() for a in args.split(", "))
    if copies == 1:
        return parse_graph(f"graph calib({params}) {{\n  {head} = {op}({refs}){attrs}\n  return %y\n}}")
    typ = head.split(": ", 1)[1]
    if own_weights:
        first, *weights = [a.strip() for a in args.split(", ")]
        params = ", ".join([first] + [w.replace(":", f"_{i}:", 1) for i in range(copies) for w in weights])
        own = [", ".join([first.split(":")[0]] + [w.split(":")[0] + f"_{i}" for w in weights]) for i in range(copies)]
    else:
        own = [refs] * copies
    body = "\n".join(f"  %y{i}: {typ} = {op}({own[i]}){attrs}" for i in range(copies))
    outs = ", ".join(f"%y{i}" for i in range(copies))
    return parse_graph(f"graph copies({params}) {{\n{body}\n  return {outs}\n}}")


def chain_program(cls: str, k: int, chains: dict = CHAINS):
    """K steps of a class's chain (CHAINS, or MID_CHAINS) as one graph."""
    from ..loaders.xcir import parse_graph

    weights, step, t = chains[cls]
    lines, prev = [], "%a"
    for i in range(k):
        lines.append("  " + step.format(x=prev, y=f"%y{i}"))
        prev = f"%y{i}"
    params = f"%a: {t}" + (f", {weights}" if weights else "")
    return parse_graph(f"graph chain({params}) {{\n" + "\n".join(lines) + f"\n  return {prev}\n}}")


def cost_of(graph, xla: bool = False) -> tuple[float, int]:
    """(FLOPs, bytes moved) of a graph's nodes, as the cost model counts them (`xla`: the FLOPs as XLA's
    kernels work them, cost.classes.xla_scale)."""
    from ..cost.keys import cost_keys, costs_per_key
    from ..cost.calibrated import node_xla_scale
    from ..cost.view import CostView

    flat = CostView(graph)
    sig, reps = cost_keys(graph, flat)
    costs = costs_per_key(graph, flat, reps)
    scale = [node_xla_scale(graph, graph.nodes[j]) if xla else 1 for j in reps]
    return (sum(int(costs[k][0] or 0) * scale[k] for k in sig.tolist()), sum(int(costs[k][1] or 0) for k in sig.tolist()))


class Timer:
    """Times programs natively and compiled, with seeded inputs, interleaved: every program once per round,
    `repeats` rounds, each program's median. In a model every op runs between others, with their data and
    code in the caches; timing one op in a tight loop would promise what no model sees."""

    def __init__(self, repeats: int, rt=None) -> None:
        from .jit import CompileCache

        self.repeats, self.rt, self.fell_back = repeats, rt, {}
        self.cache = CompileCache()
        self.calls: dict = {}
        self.kernels: dict = {}

    def inputs(self, graph) -> dict:
        """Seeded normal activations, and weights scaled by 1/sqrt(fan-in), so a chain of 64 convolutions keeps
        its values near 1 (unscaled, they overflow to inf within 20 steps, and a runtime's result that differs
        from the reference's is not timed)."""
        rng = np.random.default_rng(0)
        out = {}
        for k, v in enumerate(graph.inputs):
            a = rng.standard_normal(v.type.shape).astype(np.float32)
            shape = v.type.shape
            if k and len(shape) >= 2:
                a /= np.float32(np.sqrt(shape[0] if len(shape) == 2 else np.prod(shape[1:])))
            out[v.name] = a
        return out

    def native(self, key, graph) -> None:
        """The graph on the native runtime `rt` (one session, as a model's ops run inside one), or op by op
        through eval_node (the NumPy reference) without one."""
        from .node import eval_node

        node, feeds = graph.nodes[0], self.inputs(graph)
        if self.rt is not None and self.rt.name != "numpy":
            from .execute import execute
            from .native import prepare_or_numpy

            env = execute(graph, feeds, "native", keep_all=True).env
            members = list(range(len(graph.nodes)))
            fn, name, why = prepare_or_numpy(self.rt, graph, members, list(feeds), list(graph.outputs), env)
            if why:
                self.fell_back[key] = why
            self.calls[key] = lambda: fn(feeds)
            return
        args = [feeds[r] for r in node.inputs]
        self.calls[key] = lambda: eval_node(node, args)

    def xla(self, key, graph, resident: bool = True) -> None:
        """The whole graph as one cluster (inputs on the device, or handed in from the host)."""
        import jax

        from .jit import cluster_spec

        spec = cluster_spec(graph, list(range(len(graph.nodes))))
        values = self.inputs(graph)
        comp, _ = self.cache.get(graph, spec, values)
        fed = {k: jax.device_put(v) for k, v in values.items()} if resident else values
        self.calls[key] = lambda: comp(fed, spec)
        self.kernels[key] = comp.kernels

    def run(self) -> dict:
        """Medians, by group: the small native programs interleaved among themselves (as a model's ops run
        one after another), the large ones, then the compiled ones (apart, as validate times them: XLA's
        runtime threads keep running briefly after a call, and the process's CPU time, which a benchmark may
        read, would charge that to the next native op; and a large array evicts what a small op reuses). The
        groups take turns, SLICE_S of rounds each after an untimed one, until each has `repeats` rounds and
        SHARE_S x repeats seconds: this machine's speed moves in phases of 0.1-0.3 s, and a group timed in one
        go (the small programs' 20 rounds took ~30 ms) read the dispatch 1.6x another run's."""
        from . import measure

        native = [k for k in self.calls if k not in self.kernels]
        small = [k for k in native if isinstance(k, tuple) and k[1] == "small"]
        groups = [g for g in (small, [k for k in native if k not in small], [k for k in self.calls if k in self.kernels]) if g]
        times: dict = {k: [] for g in groups for k in g}
        spent, rounds = [0.0] * len(groups), [0] * len(groups)
        while any(r < self.repeats or s < SHARE_S * self.repeats for r, s in zip(rounds, spent)):
            for i, group in enumerate(groups):
                for k in group:   # (warm again: the other groups ran since)
                    self.calls[k]()
                start = measure.clock()
                while True:
                    for k in group:
                        t0 = measure.clock()
                        self.calls[k]()
                        times[k].append(measure.clock() - t0)
                    rounds[i] += 1
                    if measure.clock() - start >= SLICE_S or rounds[i] >= MAX_ROUNDS:
                        break
                spent[i] += measure.clock() - start
            if min(rounds) >= MAX_ROUNDS:
                break
        return {k: statistics.median(v) for k, v in times.items()}


SLICE_S, SHARE_S, MAX_ROUNDS = 0.04, 0.05, 20000   # (Timer.run: 1 s of each group at the default 20 repeats)


def measure_classes(repeats: int, xla_bandwidth: float, step: Callable[[str], None], rt=None) -> dict:
    """The calibrated part of a profile: per class numbers, native bandwidth, call overhead, sync overhead
    (`xla_bandwidth`: bytes/s inside XLA's kernels, measured before). With a native session runtime `rt`
    (onnxruntime, TensorFlow) its kernels are timed inside sessions, and each number is a slope (LONG, COPIES:
    what one more op costs in a session), since a model pays the session's call once, not per op."""
    t = Timer(repeats, rt)
    graphs = {}
    for c, (small, mid) in PROGRAMS.items():
        step(f"{c} ops (compile)")
        graphs[c, "small"] = program(small)
        t.native((c, "small"), graphs[c, "small"])
        if mid is not None:
            graphs[c, "mid"] = program(mid)
            t.native((c, "mid"), graphs[c, "mid"])
            t.xla((c, "xla mid"), graphs[c, "mid"])
        if c in CHAINS:
            graphs[c, "step"] = chain_program(c, 1)
            t.xla((c, "chain 1"), graphs[c, "step"])
            t.xla((c, "chain"), chain_program(c, CHAIN))
        if c in MID_CHAINS:
            graphs[c, "mid step"] = chain_program(c, 1, MID_CHAINS)
            t.xla((c, "mid chain 1"), graphs[c, "mid step"])
            t.xla((c, "mid chain"), chain_program(c, CHAIN, MID_CHAINS))
    graphs["stream"] = program(STREAM)
    t.native("stream", graphs["stream"])
    tiny = program("%y: f32[4] = add(%a: f32[4], %b: f32[4])")
    session = rt is not None and rt.name != "numpy"
    if session:   # slopes (LONG, COPIES): the small ones among the small programs, interleaved with them
        t.native(SESSION_1, chain_program("dispatch", 1, {"dispatch": DISPATCH}))
        t.native(SESSION_CHAIN, chain_program("dispatch", LONG, {"dispatch": DISPATCH}))
        native_call_programs(t)
        for c in NATIVE_CHAINS:
            graphs[c, "native step"] = chain_program(c, 1, NATIVE_CHAINS)
            t.native((c, "small", 1), graphs[c, "native step"])
            t.native((c, "small", LONG), chain_program(c, LONG, NATIVE_CHAINS))
        t.native(("reduce", "small", 1), chain_program("reduce", 1))
        t.native(("reduce", "small", LONG), chain_program("reduce", LONG))
        for c, (_, mid) in PROGRAMS.items():
            if mid is not None:
                t.native((c, "mid", COPIES), program(mid, COPIES, own_weights=c in WEIGHTED))
        t.native(("stream", "mid", COPIES), program(STREAM, COPIES))
    t.xla("tiny", tiny)
    t.xla("tiny handed in", tiny, resident=False)
    calls = call_programs()   # XLA's call per buffer (calibrate_call)
    for key, graph in calls.items():
        t.xla(key, graph)
    step("timing, interleaved")
    m = t.run()
    m.update(warm_calls(t, ("tiny", "tiny handed in", *calls), SESSION_1 if session else None))
    step("fitting")
    if session:
        m, call, per_op = session_slopes(m, graphs)
        arg, out_arg, call = native_buffers(m, per_op, call)   # (the call less its input's and output's)
    out = fit(m, graphs, xla_bandwidth)
    out.update(buffer_overheads(m, t.kernels, out["classes"]["elementwise"]["xla_launch"]))
    if session:
        out.update(native_session_overhead=call, hybrid_switch_overhead=m["switch"], native_argument_overhead=arg,
                   native_output_overhead=out_arg)
        for row in out["classes"].values():   # every op pays the runtime's dispatch: one more op of a chain
            row["native_overhead"] = max(row["native_overhead"], per_op)
    out["fell_back"] = t.fell_back
    return out


def session_slopes(m: dict, graphs: dict) -> tuple[dict, float, float]:
    """(the medians with each native program's time replaced by what one more such op costs inside a session,
    the session's call, the runtime's dispatch per op): see LONG. A slope that noise made zero or negative
    falls back to the dispatch (a small op) or to the program's time less the call (a mid-sized one)."""
    per_op = (m[SESSION_CHAIN] - m[SESSION_1]) / (LONG - 1)
    if per_op <= 0:   # noise hid 63 more ops: the chain's time per op, an upper bound, rather than nothing
        per_op = m[SESSION_CHAIN] / LONG
    call = max(m[SESSION_1] - per_op, 0.0)
    m = dict(m)
    for c in list(NATIVE_CHAINS) + ["reduce"]:   # the small op: one more step of its chain
        step_s = (m[c, "small", LONG] - m[c, "small", 1]) / (LONG - 1)
        if c == "reduce":   # its step is a reduction and an elementwise loop
            step_s -= m["elementwise", "small"]
            graphs[c, "small"] = program(REDUCE_STEP)
        else:
            graphs[c, "small"] = graphs[c, "native step"]
        m[c, "small"] = step_s if step_s > 0 else per_op
    for c, (_, mid) in PROGRAMS.items():
        if mid is not None:
            step_s = (m[c, "mid", COPIES] - m[c, "mid"]) / (COPIES - 1)
            m[c, "mid"] = step_s if step_s > 0 else max(m[c, "mid"] - call, 1e-8)
    step_s = (m["stream", "mid", COPIES] - m["stream"]) / (COPIES - 1)
    m["stream"] = step_s if step_s > 0 else max(m["stream"] - call, 1e-8)
    return m, call, per_op


def fit(m: dict, graphs: dict, xla_bandwidth: float) -> dict:
    """The numbers of cost.classes from the medians `m` (see measure_classes)."""
    _, add_bytes = cost_of(graphs["elementwise", "small"])
    _, stream_bytes = cost_of(graphs["stream"])
    native_bw = (stream_bytes - add_bytes) / max(m["stream"] - m["elementwise", "small"], 1e-9)
    sync = max(m["tiny handed in"] - m["tiny"], 0.0) / 2   # two activations handed in
    inc = {c: max(m[c, "chain"] - m[c, "chain 1"], 0.0) / (CHAIN - 1) for c in CHAINS}
    call = m["tiny"]   # XLA's call of a cluster of one trivial kernel (what a chain of one adds is that op's)
    classes = {}
    for c, (_, mid) in PROGRAMS.items():
        f_s, b_s = cost_of(graphs[c, "small"])
        nat_s = m[c, "small"]
        if mid is None:  # no work of its own: the fixed cost, and the elementwise rates
            ew = classes["elementwise"]
            classes[c] = {"native_overhead": max(nat_s - b_s / native_bw, 0.0), "xla_launch": 0.0,
                          "native_flops": ew["native_flops"], "xla_flops": ew["xla_flops"]}
            continue
        f_m, b_m = cost_of(graphs[c, "mid"])
        # native, two points: t = overhead + FLOPs / rate + bytes / bandwidth
        work = (m[c, "mid"] - b_m / native_bw) - (nat_s - b_s / native_bw)
        rate = (f_m - f_s) / work if work > 0 and f_m > f_s else 1e12  # what the bytes already explain
        row = {"native_flops": rate, "native_overhead": max(nat_s - f_s / rate - b_s / native_bw, 0.0)}
        # XLA, two points too: one more step of the chain (a small op inside a cluster) and the mid-sized op
        # alone (less the call): XLA's rate grows with the op (a 64-channel convolution runs several times
        # faster per FLOP than an 8-channel one), and the fixed part absorbs what small ones lose
        xla_m = m[c, "xla mid"] - call - b_m / xla_bandwidth
        f_m = cost_of(graphs[c, "mid"], xla=True)[0]
        f_step = cost_of(graphs[c, "step"], xla=True)[0] if c in inc else 0
        work = xla_m - inc.get(c, 0.0)
        if c in inc and f_m > f_step and work > 0:
            row["xla_flops"] = (f_m - f_step) / work
        else:
            row["xla_flops"] = f_m / xla_m if xla_m > 0 and f_m else 1e12
        if c in MID_CHAINS:  # one more mid-sized step against one more small one
            f_mid = cost_of(graphs[c, "mid step"], xla=True)[0]
            inc_mid = max(m[c, "mid chain"] - m[c, "mid chain 1"], 0.0) / (CHAIN - 1)
            if f_mid > f_step and inc_mid > inc[c]:
                row["xla_flops"] = (f_mid - f_step) / (inc_mid - inc[c])
        row["xla_launch"] = max(inc[c] - f_step / row["xla_flops"], 0.0) if c in inc else 0.0
        classes[c] = row
    # a loop kernel of its own: half a reduction step (the reduction and the loop that reads it)
    loop = classes["reduce"]["xla_launch"] / 2
    classes["reduce"]["xla_launch"] = classes["elementwise"]["xla_launch"] = classes["movement"]["xla_launch"] = loop
    # every op pays the native runtime's dispatch, which a reshape (no work of its own) measures: a fit whose
    # rate a noisy mid-sized run pulled down must not leave a class less than that
    floor = classes["free"]["native_overhead"]
    for row in classes.values():
        row["native_overhead"] = max(row["native_overhead"], floor)
    return {"classes": classes, "native_bandwidth": native_bw, "call_overhead": call, "sync_overhead": sync}
