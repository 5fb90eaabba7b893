"""`calibrate --native tensorflow`: calibrate's op programs (runtime.calibrate_ops) as TensorFlow graphs.

A TF GraphDef or SavedModel runs its own NodeDefs on TF's executor (runtime.tf_native: a wrapped function per
part, Grappler off); calibrate's programs are xcviz graphs of a dozen ops, so each part is built here as a TF
graph of the TF ops a model's op of the class makes (matmul to MatMul, conv2d to Conv2D or
DepthwiseConv2dNative, ...) and run the same way: an argument per activation, wrapped into a function
(tf.compat.v1.wrap_function with the activations' specs, as tf_native runs a model's part: the same call,
whose cost is the session overhead the profile records), the activations converted per call, its weights
constants of the graph (as a frozen graph or a SavedModel's variables have them), Grappler off. Layout:
calibrate's tensors are NCHW; a TF model (Keras) is channels-last, and TF's CPU kernels are not the same in
the two layouts (a depthwise convolution in NCHW costs several times its NHWC self, and more at 16 channels
than at 64), so each part runs channels-last: its 4-D
activations are fed as NHWC (the transpose is the feed's copy, paid once per call whatever the part holds, so
calibrate's slopes cancel it) and its 4-D results read back through a transposed view. Each part is checked
against the NumPy reference before it is timed (native.prepare_or_numpy), so a mapping that computed
something else falls back, not timed."""
from __future__ import annotations

import os

import numpy as np

from .onnx_emit import Unmappable

WEIGHT_INPUTS = {"conv": (1, 2), "dot": (1,)}   # per op class: the inputs a model holds as constants


def _call(node, tf):
    """(the TF callable of one calibrate op, taking its input tensors)."""
    a, op = node.attrs, node.op
    if op in ("add", "sub", "tanh"):
        return {"add": tf.math.add, "sub": tf.math.subtract, "tanh": tf.math.tanh}[op]
    if op == "matmul":
        return tf.linalg.matmul
    if op == "conv2d":
        p, group = list(a.get("pads") or [0, 0, 0, 0]), int(a.get("group") or 1)
        pad = [[0, 0], [p[0], p[2]], [p[1], p[3]], [0, 0]]
        if group == 1:
            def conv(x, w, b=None):
                y = tf.nn.conv2d(x, w, 1, pad, data_format="NHWC")
                return y if b is None else tf.nn.bias_add(y, b, data_format="NHWC")
            return conv

        def dw(x, w, b=None):
            if w.shape[2] != group:
                raise Unmappable(f"grouped convolution of {group} groups (TF has depthwise only)")
            y = tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], pad, data_format="NHWC")
            return y if b is None else tf.nn.bias_add(y, b, data_format="NHWC")
        return dw
    if op == "global_avgpool":
        return lambda x: tf.math.reduce_mean(x, axis=[1, 2], keepdims=True)
    if op == "maxpool":
        k = list(a["kernel_shape"])
        s = list(a.get("strides") or [1] * len(k))
        p = list(a.get("pads") or [0] * 2 * len(k))

        def pool(x):
            if any(p):   # TF pads only as SAME does: the padding must be that
                same = []
                for d, n in enumerate(x.shape[1:3]):
                    total = max((-(-n // s[d]) - 1) * s[d] + k[d] - n, 0)
                    same.append((total // 2, total - total // 2))
                if [b for b, _ in same] + [e for _, e in same] != p:
                    raise Unmappable("max pooling padded otherwise than TF's SAME")
            return tf.nn.max_pool2d(x, k, s, "SAME" if any(p) else "VALID", data_format="NHWC")
        return pool
    if node.outputs and node.outputs[0].shape is not None and len(node.outputs[0].shape) == 4:
        raise Unmappable(f"calibrate runs 4-D tensors channels-last, and has no such form of {op!r}")
    if op == "softmax":
        axis = int(a.get("axis", -1))
        return lambda x: tf.nn.softmax(x, axis)
    if op == "transpose":
        perm = list(a["perm"])
        return lambda x: tf.transpose(x, perm)
    if op == "flatten":
        axis = int(a.get("axis", 1))
        return lambda x: tf.reshape(x, [int(np.prod(x.shape[:axis], dtype=np.int64)), -1])
    if op == "reduce_mean":
        axes, keep = list(a["axes"]), bool(a.get("keepdims", 1))
        return lambda x: tf.math.reduce_mean(x, axes, keepdims=keep)
    raise Unmappable(f"calibrate has no TensorFlow op for {op!r}")


def _weight(op: str, k: int, v: np.ndarray) -> np.ndarray:
    """A weight in TF's layout: a convolution's OIHW filter as HWIO (depthwise: HW, channels, 1)."""
    if op == "conv2d" and k == 1:
        return np.ascontiguousarray(np.transpose(v, (2, 3, 1, 0)) if v.shape[1] != 1 else
                                    np.transpose(v, (2, 3, 0, 1)))
    return v


class TfOps:
    """TensorFlow for calibrate's programs: a concrete function per part, Grappler off, `threads` intra-op threads."""

    name, mode, note = "tensorflow", "op-by-op", None

    def __init__(self, threads: int) -> None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow as tf

        self.version, self.threads = tf.__version__, threads
        try:
            tf.config.threading.set_intra_op_parallelism_threads(threads)
            tf.config.threading.set_inter_op_parallelism_threads(1)
        except RuntimeError:
            pass
        tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})

    def prepare(self, graph, members, entries, exits, values):
        import tensorflow as tf

        nodes = [graph.nodes[i] for i in members]
        consts: dict = {}
        from ..ops import REGISTRY

        for n in nodes:   # weights: constants of the TF graph, in TF's layout
            for k in WEIGHT_INPUTS.get(REGISTRY.ops[n.op].cost_class, ()):
                if k < len(n.inputs) and n.inputs[k] in entries and n.inputs[k] in values:
                    consts[n.inputs[k]] = _weight(n.op, k, np.asarray(values[n.inputs[k]]))
        feeds = [r for r in entries if r not in consts]
        steps = [(n.name, _call(n, tf), list(n.inputs)) for n in nodes]
        specs = [tf.TensorSpec(_nhwc(np.asarray(values[r])).shape, tf.as_dtype(np.asarray(values[r]).dtype))
                 for r in feeds]

        def body(*args):   # the program as a TF graph: an argument per activation, a Const per weight
            local = {r: tf.constant(v) for r, v in consts.items()}
            local.update(zip(feeds, args))
            for name, fn, ins in steps:
                local[name] = fn(*(local[r] for r in ins if r))
            return [local[r] for r in exits]
        try:   # run as tf_native runs a model's part (wrap_function of the fed values): the same call and its cost
            fn = tf.compat.v1.wrap_function(body, specs)
        except Unmappable:
            raise
        except Exception as e:  # noqa: BLE001 - TF refusing a program is a fallback
            raise Unmappable(f"TensorFlow refused it: {str(e).splitlines()[0][:200]}") from None

        def run(feed: dict) -> list:
            outs = fn(*[tf.constant(_nhwc(feed[r])) for r in feeds])
            return [_nchw(o.numpy()) for o in (outs if isinstance(outs, (list, tuple)) else [outs])]
        return run

    def iteration_overhead(self, repeats: int, dispatch: float) -> float:
        """Seconds one iteration of a while loop costs TF's executor beyond its ops' dispatch (`dispatch` per op:
        the profile's floor): a loop of LOOP_TRIPS iterations against one, in a concrete function, Grappler off,
        less the condition's and the body's LOOP_OPS ops. TF lowers a While to a frame whose Merge, Switch,
        Identity and NextIteration run every time round (7-14 us an iteration on this project's machine, where
        an op in a straight chain costs 0.2-0.9 us)."""
        import tensorflow as tf

        from .measure import interleaved

        def loop(n: int):
            def f(x):
                return tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v + 1.0), (tf.constant(0), x))[1]
            return tf.function(f).get_concrete_function(tf.TensorSpec([4], tf.float32))
        x = tf.ones([4])
        one, many = loop(1), loop(LOOP_TRIPS)
        t = interleaved({"one": lambda: one(x), "many": lambda: many(x)}, None, 1.0)
        slope = (t["many"].median_ms - t["one"].median_ms) / 1e3 / (LOOP_TRIPS - 1)
        return max(slope - LOOP_OPS * dispatch, 0.0)


LOOP_TRIPS, LOOP_OPS = 65, 3   # (TfOps.iteration_overhead: i < n; i + 1 and v + 1 each time round)


def _nhwc(x: np.ndarray) -> np.ndarray:
    return np.transpose(x, (0, 2, 3, 1)) if x.ndim == 4 else x


def _nchw(x: np.ndarray) -> np.ndarray:
    return np.transpose(x, (0, 3, 1, 2)) if x.ndim == 4 else x
