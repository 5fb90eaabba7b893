"""What a compiled cluster's call costs per buffer it is handed (weights included) and gives back: jax's
dispatch of each argument and output (~0.6 us and ~2.5 us in a bare jax.jit on this project's machine, more
through a cluster's call). calibrate times these programs warm, as it times the call (`tiny`, two arguments),
and buffer_overheads reads the profile's xla_argument_overhead and xla_output_overhead off them.

A hybrid run hands control from XLA to the native runtime and back at every fallback segment, and each side then
finds the other's work in the caches and its own threads asleep: a TensorFlow call made between two XLA calls
costs ~25-100 us more than the same call back to back on this project's machine (its executor's thread pool
wakes; the VM's state moves it), onnxruntime's and torch's ~2-6 us. switch_overhead measures it as the hybrid
run meets it."""
from __future__ import annotations

WIDE, WIDE_OUT = 32, 8   # arguments of the wide program beyond one; outputs of the wide chain
NATIVE = {("native tiny", "small"): {"args": 1}, ("native wide in", "small"): {"args": WIDE},
          ("native out 1", "small"): {"outs": 1}, ("native wide out", "small"): {"outs": WIDE_OUT}}


def wide_program(args: int = 0, outs: int = 0):
    """`args` + 1 inputs of f32[4] summed (one kernel), or a chain of `outs` adds of two inputs, each step
    returned (a kernel and an output each)."""
    from ..loaders.xcir import parse_graph

    if args:
        params = ", ".join(f"%a{i}: f32[4]" for i in range(args + 1))
        lines = [f"  %s{i}: f32[4] = add({'%a0' if i == 1 else f'%s{i - 1}'}, %a{i})" for i in range(1, args + 1)]
        return parse_graph(f"graph wide({params}) {{\n" + "\n".join(lines) + f"\n  return %s{args}\n}}")
    lines = [f"  %y{i}: f32[4] = add({'%a' if i == 0 else f'%y{i - 1}'}, %b)" for i in range(outs)]
    rets = ", ".join(f"%y{i}" for i in range(outs))
    return parse_graph("graph outs(%a: f32[4], %b: f32[4]) {\n" + "\n".join(lines) + f"\n  return {rets}\n}}")


def call_programs() -> dict:
    """The programs, by the keys calibrate times them under."""
    return {"wide in": wide_program(args=WIDE), "out 1": wide_program(outs=1), "wide out": wide_program(outs=WIDE_OUT)}


def warm_calls(t, keys, native_key=None) -> dict:
    """The warm medians (measure.warm_call: back to back, as a model's run calls a cluster again and again) of
    the Timer `t`'s programs `keys`, and with a native program `native_key` the switch (switch_overhead)."""
    from .measure import warm_call

    m = {k: warm_call(t.calls[k], t.repeats) for k in keys}
    if native_key is not None:
        m["switch"] = switch_overhead(t.calls[native_key], t.calls["tiny"], t.repeats)
    return m


def switch_overhead(native, xla, repeats: int, loop: int = 20) -> float:
    """Seconds a native call and an XLA call made in turn cost over the two made back to back each: what one
    fallback segment's call between compiled clusters adds to a hybrid run (the profile's
    hybrid_switch_overhead). The three are timed in turn, `loop` calls a sample, and the median of the rounds'
    differences kept: a TensorFlow call's time drifts by 2x over seconds, which apart medians would read as
    a switch."""
    import statistics

    from .measure import burst

    def both() -> None:
        native()
        xla()
    both()
    return max(statistics.median(burst(both, loop) - burst(native, loop) - burst(xla, loop)
                                 for _ in range(max(5, repeats // 5))), 0.0)


def buffer_overheads(m: dict, kernels: dict, loop_launch: float) -> dict:
    """{argument_overhead, output_overhead} (seconds) from the warm medians `m` (with `tiny`, the call of two
    arguments and one output) and XLA's kernels per program: the wide program against `tiny`, per argument;
    the chain of WIDE_OUT outputs against a chain of one, less a loop kernel's launch per kernel more."""
    extra = kernels["wide out"] - kernels["out 1"]
    return {"argument_overhead": max(m["wide in"] - m["tiny"], 0.0) / (WIDE - 1),
            "output_overhead": max((m["wide out"] - m["out 1"] - extra * loop_launch) / (WIDE_OUT - 1), 0.0)}


def native_call_programs(t) -> None:
    """The wide programs on the Timer `t`'s native runtime, among its small programs (native_buffers reads them)."""
    for key, kw in NATIVE.items():
        t.native(key, wide_program(**kw))


def native_buffers(m: dict, per_op: float, call: float) -> tuple[float, float, float]:
    """(seconds per value a native call is handed, per value it gives back, the bare call) from the medians `m`
    (session slopes taken) and the runtime's dispatch per op: the wide program against the add of two inputs,
    and the chain of WIDE_OUT outputs against a chain of one, each step also one more op; the session call
    `call` (the dispatch chain's: one input, one output) less one of each. TensorFlow converts each input to
    a tensor of its own: ~19 us an input on this project's machine, ~1-3 us an output; onnxruntime ~1.4 and ~0.8."""
    arg = max((m["native wide in", "small"] - m["native tiny", "small"]) / (WIDE - 1) - per_op, 0.0)
    out = max((m["native wide out", "small"] - m["native out 1", "small"]) / (WIDE_OUT - 1) - per_op, 0.0)
    return arg, out, max(call - arg - out, 0.0)
