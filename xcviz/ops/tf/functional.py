"""TensorFlow's functional control flow and calls (`While`, `StatelessWhile`, `If`, `StatelessIf`, `Case`,
`StatelessCase`, `PartitionedCall`, `StatefulPartitionedCall`): their bodies are functions of the GraphDef's library, run natively and traced.

A body attribute is an ir.TFFunction: a typed IR value naming the function, carrying its FunctionDef and the
library it may call into (the text IR writes it `function<"NAME">`). Running one needs the loader
and the executor, layers above this one: the runtime passes its runner down in the op's attributes (`call`). Under JAX a
While whose condition is concrete at every step (Keras RNNs: a counter against a static length) is unrolled,
so TensorLists stay Python structures; otherwise it is a lax.while_loop over array carries. An If on a
traced predicate is a lax.cond."""
from __future__ import annotations

import numpy as np

from ...ir.function import TFFunction
from ...ir import TensorType
from ..arrays import Unsupported
from ..control_body import BODY_RUNNER
from ..registry import CONTROL_FLOW, FUNCTIONAL, Entries
from ..rules import from_file
from .kernels import xla_devices
from ..values import TensorList

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


MAX_UNROLL = 10_000  # iterations a traced While may unroll (a Keras RNN: one per time step)
MAX_ITERATIONS = 10_000_000


def call(a, fn, args: list, use_jax: bool = False) -> list:
    """Run library function `fn` with the runtime's runner, which the op finds in its attributes `a`
    (ops.control_body.BODY_RUNNER: nothing is installed at import)."""
    if not isinstance(fn, TFFunction) or not fn.kept:
        raise Unsupported(f"function {fn!r} is not in the graph's library (load the GraphDef with its library)")
    r = a.get(BODY_RUNNER)
    if r is None:
        raise Unsupported("TF functions run only under xcviz's runtime")
    return list(r.call(fn, list(args), use_jax))


def _concrete(v) -> bool:
    return v is None or isinstance(v, (np.ndarray, np.generic, TensorList))


def to_bool(v) -> bool:
    """TF's ToBool of a predicate: a scalar is its truth; any other tensor is true when it is not empty."""
    a = np.asarray(v)
    if a.ndim == 0:
        return bool(a.item() != "" if a.dtype == object else a)
    return a.size > 0


def _out(values: list):
    return tuple(values) if len(values) != 1 else values[0]


def _while(xp, a, *args):
    cond, body = a.get("cond"), a.get("body")
    state = list(args)
    for _ in range(MAX_ITERATIONS):
        (pred,) = call(a, cond, state)[:1]
        if not to_bool(pred):
            return _out(state)
        state = call(a, body, state)
    raise Unsupported(f"While ran {MAX_ITERATIONS} iterations without its condition turning false")


def _while_jax(xp, a, *args):
    cond, body = a.get("cond"), a.get("body")
    state = list(args)
    for _ in range(MAX_UNROLL):
        (pred,) = call(a, cond, state, True)[:1]
        if not _concrete(pred):
            return _while_loop(a, cond, body, state)
        if not to_bool(pred):
            return _out(state)
        state = call(a, body, state, True)
    return _while_loop(a, cond, body, state)


def _while_loop(a, cond, body, state: list):
    import jax.numpy as jnp
    from jax import lax

    if any(isinstance(v, TensorList) for v in state):
        raise Unsupported("a While carrying a TensorList whose condition is only known at run time "
                          "(xcviz unrolls loops over lists; this one has no static trip count)")
    init = tuple(jnp.asarray(v) for v in state)

    def c(carry):
        (pred,) = call(a, cond, list(carry), True)[:1]
        p = jnp.asarray(pred)
        return p.astype(bool) if p.ndim == 0 else p.size > 0

    def b(carry):
        new = call(a, body, list(carry), True)
        out = []
        for old, v in zip(carry, new):
            v = jnp.asarray(v)
            if tuple(v.shape) != tuple(old.shape):
                raise Unsupported(f"a While loop variable changes shape from {list(old.shape)} to {list(v.shape)} "
                                  "(an XLA While carries fixed shapes)")
            out.append(v.astype(old.dtype))
        return tuple(out)

    return _out(list(lax.while_loop(c, b, init)))


def _if(xp, a, pred, *args):
    branch = a.get("then_branch") if to_bool(pred) else a.get("else_branch")
    return _out(call(a, branch, list(args)))


def _if_jax(xp, a, pred, *args):
    if _concrete(pred):
        branch = a.get("then_branch") if to_bool(pred) else a.get("else_branch")
        return _out(call(a, branch, list(args), True))
    import jax.numpy as jnp
    from jax import lax

    p = jnp.asarray(pred)
    p = p.astype(bool) if p.ndim == 0 else jnp.asarray(p.size > 0)
    then_b, else_b = a.get("then_branch"), a.get("else_branch")
    outs = lax.cond(p, lambda ops: tuple(jnp.asarray(v) for v in call(a, then_b, list(ops), True)),
                    lambda ops: tuple(jnp.asarray(v) for v in call(a, else_b, list(ops), True)), tuple(args))
    return _out(list(outs))


def _branch(a, index) -> object:
    """Case's branch: an index out of range runs the last branch (TF's default)."""
    branches = list(a.get("branches") or [])
    if not branches:
        raise Unsupported("Case without branches")
    i = int(np.asarray(index).reshape(()))
    return branches[i] if 0 <= i < len(branches) else branches[-1]


def _case(xp, a, index, *args):
    return _out(call(a, _branch(a, index), list(args)))


def _case_jax(xp, a, index, *args):
    if _concrete(index):
        return _out(call(a, _branch(a, index), list(args), True))
    import jax.numpy as jnp
    from jax import lax

    branches = list(a.get("branches") or [])
    i = jnp.asarray(index).astype(jnp.int32)
    i = jnp.where((i < 0) | (i >= len(branches)), len(branches) - 1, i)
    fns = [lambda ops, b=b: tuple(jnp.asarray(v) for v in call(a, b, list(ops), True)) for b in branches]
    return _out(list(lax.switch(i, fns, tuple(args))))


def _call(xp, a, *args):
    return _out(call(a, a.get("f"), list(args)))


def _call_jax(xp, a, *args):
    return _out(call(a, a.get("f"), list(args), True))


def _body_flops(ctx, outs):
    """Unknown: a body's cost is its ops' times its trips (the cost model walks bodies where it can)."""
    return None


def _flow_type(ctx) -> list:
    """The file's types, completed from the node's own `output_shapes` and `T`/`Tout` (While, If: TF writes
    them on the node; a list handle (variant) or resource stays unknown), or for a call the file gives no types,
    its function's body's (TFFunction.output_types)."""
    out = list(from_file(ctx))
    f = ctx.attrs.get("f")
    if isinstance(f, TFFunction) and all(t.shape is None for t in out):  # a call: its body's types
        body = f.output_types(list(ctx.inputs))
        if body and len(body) >= len(out):
            return list(body[:max(len(out), ctx.num_outputs)])
    shapes, types = ctx.attrs.get("output_shapes"), ctx.attrs.get("T") or ctx.attrs.get("Tout")
    if not isinstance(shapes, list) or not isinstance(types, list):
        return out
    for k, t in enumerate(out):
        if t.shape is None and k < min(len(shapes), len(types)) and isinstance(shapes[k], tuple) \
                and isinstance(types[k], str) and types[k] not in ("variant", "resource"):
            out[k] = TensorType(shapes[k], types[k])
    return out


flow = dict(groups=CONTROL_FLOW, infer=_flow_type, flops=_body_flops, num_outputs=None)
# While and If keep their cluster whatever its size (TF's has_functional_control_flow); Case and calls do not
loops = dict(flow, groups=(CONTROL_FLOW, FUNCTIONAL))
op("tf.While", **loops, devices=xla_devices("While"), attrs={"cond": None, "body": None}, impl=_while,
   jax_impl=_while_jax, doc="TF While(input...; cond, body): runs body while cond holds")
op("tf.StatelessWhile", **loops, devices=xla_devices("StatelessWhile"), attrs={"cond": None, "body": None},
   impl=_while, jax_impl=_while_jax, doc="TF StatelessWhile(input...; cond, body): a While whose body is stateless")
op("tf.If", **loops, min_inputs=1, devices=xla_devices("If"), attrs={"then_branch": None, "else_branch": None},
   impl=_if, jax_impl=_if_jax, doc="TF If(cond, input...; then_branch, else_branch)")
op("tf.StatelessIf", **loops, min_inputs=1, devices=xla_devices("StatelessIf"),
   attrs={"then_branch": None, "else_branch": None}, impl=_if, jax_impl=_if_jax,
   doc="TF StatelessIf(cond, input...; then_branch, else_branch)")
op("tf.Case", **flow, min_inputs=1, devices=xla_devices("Case"), attrs={"branches": None}, impl=_case,
   jax_impl=_case_jax, doc="TF Case(branch_index, input...; branches): an index out of range runs the last branch")
op("tf.StatelessCase", **flow, min_inputs=1, devices=xla_devices("StatelessCase"), attrs={"branches": None},
   impl=_case, jax_impl=_case_jax, doc="TF StatelessCase(branch_index, input...; branches)")
op("tf.PartitionedCall", **flow, devices=xla_devices("PartitionedCall"), attrs={"f": None}, impl=_call,
   jax_impl=_call_jax, doc="TF PartitionedCall(args...; f): calls the library function f")
op("tf.StatefulPartitionedCall", **flow, devices=xla_devices("StatefulPartitionedCall"), attrs={"f": None},
   impl=_call, jax_impl=_call_jax, doc="TF StatefulPartitionedCall(args...; f): a call that may have side effects")
