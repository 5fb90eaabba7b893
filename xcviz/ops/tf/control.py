"""TensorFlow ops xcviz does not compute, by their TF names (`tf.<Op>`): control flow, functions, resource
variables, Substr, RNG state resources, asserts, Grappler's fused ops.

They have entries so that a TF graph names only known ops and `xcviz ops` says what each is; their types
come from the file (`_output_shapes`, `T`/`dtype`). `devices` is empty: xcviz has no lowering for them.
Whether TensorFlow's auto-clustering compiles them is a separate question, answered from TF's own XLA
kernel registry and rules (clustering/tf_rules.py): e.g. ReadVariableOp and StatelessWhile are clustered
by TF though xcviz cannot run them."""
from __future__ import annotations

import numpy as np

from .. import rules as r
from ...errors import XcvizError
from ..arrays import Unsupported
from ..registry import CONTROL_FLOW, FRAMES, SOURCE, VARIABLE, Entries
from .kernels import xla_devices

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

NONE = frozenset()
opaque = dict(devices=NONE, infer=r.from_file, num_outputs=None)
flow = dict(**opaque, groups=CONTROL_FLOW)


def _in_frames(xp, a, *args):
    """Frames and deadness are the executor's (runtime/frames.py): a node of these runs only there."""
    raise Unsupported(f"{a['_op_type']} runs only in xcviz's frame executor (a whole TF1 graph's run)")


def _passes(ctx: r.Ctx) -> list:
    """Enter, Exit, NextIteration, LoopCond and Switch (both outputs) pass input 0's type on where the file
    gives none."""
    t = r.TensorType(ctx.shape(0), ctx.dtype(0))
    return [g if g.shape is not None else t for g in r.from_file(ctx)]


def _merges(ctx: r.Ctx) -> list:
    """A cond's Merge: its inputs' type when they agree; a loop's Merge (back edges): the file's (its value
    may change shape from one iteration to the next)."""
    if ctx.attrs.get("_back_edges") or len({(t.shape, t.dtype) for t in ctx.inputs}) != 1:
        return r.from_file(ctx)
    return _passes(ctx)


v1 = dict(opaque, groups=(CONTROL_FLOW, FRAMES), impl=_in_frames, infer=_passes)
op("tf.Enter", **v1, min_inputs=1, max_inputs=1, reason="v1 control flow: enters a loop frame (no XLA kernel)",
   doc="TF Enter(data; frame_name, is_constant, parallel_iterations)")
op("tf.Exit", **v1, min_inputs=1, max_inputs=1, reason="v1 control flow: leaves a loop frame (no XLA kernel)",
   doc="TF Exit(data)")
op("tf.Switch", **v1, min_inputs=2, max_inputs=2, reason="v1 control flow: routes data by a predicate (no XLA kernel)",
   doc="TF Switch(data, pred) -> output_false, output_true")
op("tf._SwitchN", **v1, min_inputs=2, max_inputs=2,
   reason="v1 control flow: routes data to one of N outputs (a lowered Case; no XLA kernel)",
   doc="TF _SwitchN(data, output_index; num_outs): output k live when output_index == k (out of range: the last)")
op("tf.Merge", **dict(v1, infer=_merges), reason="v1 control flow: forwards its first live input (no XLA kernel)",
   doc="TF Merge(inputs...) -> output, value_index; the NextIteration back edge is kept in `_back_edges`")
op("tf.NextIteration", **v1, min_inputs=1, max_inputs=1, reason="v1 control flow: a loop's back edge (no XLA kernel)",
   doc="TF NextIteration(data)")
op("tf.LoopCond", **v1, min_inputs=1, max_inputs=1, reason="v1 control flow: a loop's predicate (no XLA kernel)",
   doc="TF LoopCond(input)")
op("tf._Retval", devices=NONE, infer=r.same, min_inputs=1, max_inputs=1, reason="function result: read by the caller",
   impl=lambda xp, a, x: x, doc="TF _Retval(input; T, index): a function's result (the pass never clusters it)")

var_reason = "resource variable operation: xcviz holds no variable values"


def _var_handle(xp, a):
    """A handle runs as its variable's value, when the loader found one (a SavedModel's variables)."""
    if a.get("value") is None:
        raise Unsupported("VarHandleOp without a value (only a SavedModel's variables folder gives one)")
    return a["value"]


op("tf.VarHandleOp", **opaque, groups=(SOURCE, VARIABLE), max_inputs=0, impl=_var_handle, attrs={"value": None},
   reason="resource handle: xcviz's runs read it as the variable's value (SavedModel variables)",
   doc="TF VarHandleOp(; dtype, shape, shared_name)")
op("tf.ReadVariableOp", devices=xla_devices("ReadVariableOp"), infer=r.from_file, flops=r.zero_flops, min_inputs=1,
   groups=VARIABLE,
   max_inputs=1, impl=lambda xp, a, handle: handle,
   doc="TF ReadVariableOp(resource): the variable's value (a handle runs as its value)")
op("tf.AssignVariableOp", **opaque, min_inputs=2, max_inputs=2, reason=var_reason,
   doc="TF AssignVariableOp(resource, value)")
op("tf.AssignAddVariableOp", **opaque, min_inputs=2, max_inputs=2, reason=var_reason,
   doc="TF AssignAddVariableOp(resource, value)")
op("tf.VarIsInitializedOp", **opaque, min_inputs=1, max_inputs=1, reason=var_reason,
   doc="TF VarIsInitializedOp(resource)")

str_reason = "string op: XLA has no string type"
op("tf.Substr", **opaque, min_inputs=3, max_inputs=3, reason=str_reason, doc="TF Substr(input, pos, len)")

rng_reason = "random op on a resource state (a tf.random.Generator): xcviz holds no variable state"
op("tf.RngReadAndSkip", **opaque, min_inputs=3, max_inputs=3, reason=rng_reason,
   doc="TF RngReadAndSkip(resource, alg, delta)")

check_reason = "runtime check with a host side effect"


def _assert(xp, a, condition, *data):
    """TF's Assert: nothing when the condition holds, else the run fails with the op's data."""
    if bool(np.all(np.asarray(condition))):
        return ()
    shown = "; ".join(np.array2string(np.asarray(d), threshold=a.get("summarize") or 3) for d in data)
    raise XcvizError(f"assertion failed: {shown}"[:500], hint="TensorFlow's own run fails the same way")


op("tf.Assert", **dict(opaque, num_outputs=0), min_inputs=1, reason=check_reason, impl=_assert,
   attrs={"summarize": 3}, doc="TF Assert(condition, data...; summarize)")
op("tf.CheckNumerics", **opaque, min_inputs=1, max_inputs=1, reason=check_reason, doc="TF CheckNumerics(tensor; message)")

fused_reason = "Grappler's fused op: xcviz does not compute it"
op("tf._FusedConv2D", **opaque, min_inputs=2, reason=fused_reason, doc="TF _FusedConv2D(input, filter, args...; fused_ops)")
op("tf._FusedMatMul", **opaque, min_inputs=2, reason=fused_reason, doc="TF _FusedMatMul(a, b, args...; fused_ops)")
op("tf.Bitcast", **opaque, min_inputs=1, max_inputs=1, reason="bit reinterpretation: not computed by xcviz",
   doc="TF Bitcast(input; type)")
