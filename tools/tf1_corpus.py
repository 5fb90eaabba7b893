"""Generate tests/data/tf1/: frozen TF1 graphs with control flow v1 (Enter/Exit/Switch/Merge/NextIteration,
TensorArrayV3, Assert), TensorFlow's outputs, and TensorFlow's own auto-clustering partitions of them.

Run once by a developer with a Python that has TensorFlow (tests never need it; they read the files):

    /work/venv-tf/bin/python tools/tf1_corpus.py [--out tests/data/tf1]

Every graph is built with tf.compat.v1 in graph mode, control flow v2 off, weights as constants (so the frozen
graph is the graph the session runs, node for node). For each case NAME it writes NAME.pb (the GraphDef pruned to
its outputs, nodes `out0`, `out1`, ...) and NAME_io.npz (`in_<placeholder>` arrays fed and `out_<output node>`
arrays TensorFlow computed, Grappler off), and NAME_alt_io.npz for the graph's other path (the predicate flipped,
a loop of no iteration, other sequence lengths). partitions.json holds, per case and --tf_xla_min_cluster_size 1 and 4,
the clusters TensorFlow's MarkForCompilationPass formed on that .pb run in a Session (read from the
mark_for_compilation_annotated dump written under TF_XLA_FLAGS="--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit
--tf_xla_min_cluster_size=K --tf_xla_clustering_debug"), each cluster its sorted member node names. One process
per size: TensorFlow reads TF_XLA_FLAGS once.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "tf1")
SIZES = (1, 4)


def _cases():
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)

    def w(*shape):
        return tf.constant(np.round(rng.standard_normal(shape) * 32.0).astype(np.float32) / 64.0)

    def ph(feeds, name, shape, value, dtype=tf.float32):
        p = tf.compat.v1.placeholder(dtype, shape, name=name)
        feeds[name] = np.asarray(value, dtype=dtype.as_numpy_dtype)
        return p

    def rand(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    class Cell:
        """A minimal RNNCell (Keras 3 has no tf.compat.v1 cells): tanh RNN or GRU on constant weights."""

        def __init__(self, units, din, gru=False):
            self.units, self.gru = units, gru
            k = 3 if gru else 1
            self.wx, self.wh, self.b = w(din, k * units), w(units, k * units), w(k * units)

        output_size = property(lambda self: self.units)
        state_size = property(lambda self: self.units)

        def zero_state(self, batch, dtype):
            return tf.zeros([batch, self.units], dtype)

        def __call__(self, x, h, scope=None):
            if not self.gru:
                y = tf.tanh(tf.matmul(x, self.wx) + tf.matmul(h, self.wh) + self.b)
                return y, y
            gx = tf.matmul(x, self.wx) + self.b
            gh = tf.matmul(h, self.wh)
            xz, xr, xn = tf.split(gx, 3, axis=1)
            hz, hr, hn = tf.split(gh, 3, axis=1)
            z = tf.sigmoid(xz + hz)
            r = tf.sigmoid(xr + hr)
            n = tf.tanh(xn + r * hn)
            y = z * h + (1.0 - z) * n
            return y, y

    def while_loop(feeds):
        x = ph(feeds, "x", [4, 4], rand(4, 4) * 0.3)
        n = ph(feeds, "n", [], 5, tf.int32)
        h = tf.nn.relu(x * 2.0 + 1.0)
        i, acc = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, tf.tanh(tf.matmul(a, h)) * 0.5 + a),
                               [tf.constant(0), h])
        return [tf.reduce_sum(acc * 3.0 - 1.0, axis=0), i]

    def cond_unbalanced(feeds):
        x = ph(feeds, "x", [4, 4], rand(4, 4))
        p = ph(feeds, "p", [], True, tf.bool)
        a = tf.nn.relu(x * 2.0 + 1.0)
        c = tf.cond(p, lambda: tf.tanh(tf.exp(a * 0.1) * 2.0 + 1.0) * tf.sin(a) - a, lambda: a)
        d = tf.cond(tf.logical_not(p), lambda: c * 3.0, lambda: c)
        return [tf.sigmoid(d * 0.5) + a]

    def while_in_cond(feeds):
        x = ph(feeds, "x", [4, 4], rand(4, 4) * 0.3)
        p = ph(feeds, "p", [], True, tf.bool)
        h = tf.tanh(x * 2.0)

        def looped():
            _, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.matmul(a, h) * 0.5 + a),
                                   [tf.constant(0), h])
            return tf.reduce_sum(acc, axis=1)

        return [tf.cond(p, looped, lambda: tf.reduce_sum(h * 2.0, axis=1) + 1.0) * 2.0]

    def nested_while(feeds):
        x = ph(feeds, "x", [3, 3], rand(3, 3) * 0.3)
        n = ph(feeds, "n", [], 3, tf.int32)

        def outer(i, a):
            _, b = tf.while_loop(lambda j, b: j < i + 1, lambda j, b: (j + 1, tf.tanh(tf.matmul(b, x)) + b * 0.5),
                                 [tf.constant(0), a])
            return i + 1, b * 0.9 + 0.1

        i, acc = tf.while_loop(lambda i, a: i < n, outer, [tf.constant(0), x])
        return [acc * 2.0, i]

    def cond_in_while(feeds):
        x = ph(feeds, "x", [4], rand(4))
        n = ph(feeds, "n", [], 6, tf.int32)

        def body(i, a):
            b = tf.cond(tf.equal(i % 2, 0), lambda: tf.tanh(a * 2.0) + 1.0, lambda: a * 0.5)
            return i + 1, b

        i, acc = tf.while_loop(lambda i, a: i < n, body, [tf.constant(0), x])
        return [acc * 3.0, i]

    def dynamic_rnn_seqlen(feeds):
        x = ph(feeds, "x", [3, 5, 2], rand(3, 5, 2))
        seq = ph(feeds, "seq_len", [3], [5, 2, 4], tf.int32)
        out, state = tf.compat.v1.nn.dynamic_rnn(Cell(4, 2), x, sequence_length=seq, dtype=tf.float32)
        return [out * 2.0, state]

    def tensor_array_rnn(feeds):
        x = ph(feeds, "x", [6, 2, 3], rand(6, 2, 3))
        wx, wh = w(3, 4), w(4, 4)
        steps = tf.shape(x)[0]
        xs = tf.TensorArray(tf.float32, size=steps).unstack(x)
        ys = tf.TensorArray(tf.float32, size=steps, clear_after_read=False)

        def body(t, h, ys):
            h = tf.tanh(tf.matmul(xs.read(t), wx) + tf.matmul(h, wh))
            return t + 1, h, ys.write(t, h * 2.0)

        _, h, ys = tf.while_loop(lambda t, h, ys: t < steps, body, [tf.constant(0), tf.zeros([2, 4]), ys])
        return [ys.stack(), h * tf.cast(ys.size(), tf.float32) + tf.reduce_sum(ys.gather([0, 1]), axis=0)]

    def gru_dynamic_steps(feeds):
        x = ph(feeds, "x", [2, None, 3], rand(2, 7, 3))
        out, state = tf.compat.v1.nn.dynamic_rnn(Cell(4, 3, gru=True), x, dtype=tf.float32)
        return [tf.reduce_mean(out, axis=1), state]

    def tensor_array_ops(feeds):
        """split / concat / size / close, and tf.gradients through a TensorArray (TensorArrayGradV3)."""
        x = ph(feeds, "x", [5, 3], rand(5, 3))
        ta = tf.TensorArray(tf.float32, size=3, infer_shape=False).split(x * 2.0, [2, 1, 2])
        whole = ta.concat()
        xs = tf.TensorArray(tf.float32, size=5, clear_after_read=False).unstack(x)
        (gx,) = tf.gradients(xs.stack() * w(5, 3), [x])
        size = ta.size()
        with tf.control_dependencies([whole, size]):
            closed = ta.close()
        with tf.control_dependencies([closed]):
            n = tf.identity(size)
        return [whole + 1.0, gx, n, xs.read(4)]

    return {f.__name__: f for f in (while_loop, cond_unbalanced, while_in_cond, nested_while, cond_in_while,
                                    dynamic_rnn_seqlen, tensor_array_rnn, gru_dynamic_steps, tensor_array_ops)}


def _config():
    import tensorflow as tf
    cfg = tf.compat.v1.ConfigProto()  # Grappler off: the session runs the .pb as written
    cfg.graph_options.rewrite_options.disable_meta_optimizer = True
    return cfg


def build(out: str) -> None:
    import numpy as np
    import tensorflow as tf
    tf.compat.v1.disable_v2_behavior()
    tf.compat.v1.disable_control_flow_v2()
    index = {}
    for name, fn in _cases().items():
        g = tf.Graph()
        feeds: dict = {}
        with g.as_default():
            outs = [tf.identity(t, name=f"out{k}") for k, t in enumerate(fn(feeds))]
        gd = tf.compat.v1.graph_util.extract_sub_graph(g.as_graph_def(), [t.op.name for t in outs])
        with open(os.path.join(out, f"{name}.pb"), "wb") as f:
            f.write(gd.SerializeToString(deterministic=True))
        vals = _run(gd, feeds, [t.op.name for t in outs])
        np.savez(os.path.join(out, f"{name}_io.npz"), **{f"in_{k}": v for k, v in feeds.items()},
                 **{f"out_out{k}": v for k, v in enumerate(vals)})
        alt = _other_path(feeds)
        if alt is not None:  # the branch not taken, or a loop that runs no iteration
            vals = _run(gd, alt, [t.op.name for t in outs])
            np.savez(os.path.join(out, f"{name}_alt_io.npz"), **{f"in_{k}": v for k, v in alt.items()},
                     **{f"out_out{k}": v for k, v in enumerate(vals)})
        index[name] = {"inputs": sorted(feeds), "outputs": [f"out{k}" for k in range(len(outs))],
                       "nodes": len(gd.node), "ops": sorted({n.op for n in gd.node})}
        print(name, len(gd.node), "nodes", file=sys.stderr)
    with open(os.path.join(out, "index.json"), "w", encoding="utf-8") as f:
        json.dump({"tf_version": tf.__version__, "cases": index}, f, indent=1, sort_keys=True)
        f.write("\n")


def _other_path(feeds: dict) -> dict | None:
    """The same graph's other path: the predicate `p` flipped, or `n` = 0 (no iteration), or shorter sequences."""
    import numpy as np
    if "p" in feeds:
        return dict(feeds, p=np.logical_not(feeds["p"]))
    if "n" in feeds:
        return dict(feeds, n=np.zeros_like(feeds["n"]))
    if "seq_len" in feeds:
        return dict(feeds, seq_len=np.asarray([0, 5, 1], feeds["seq_len"].dtype))
    return None


def _run(gd, feeds: dict, outputs: list):
    import tensorflow as tf
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    with tf.compat.v1.Session(graph=g, config=_config()) as s:
        return s.run([f"{o}:0" for o in outputs], {f"{k}:0": v for k, v in feeds.items()})


def dump(out: str, size: int) -> None:
    """Run every .pb under auto-clustering (flags set by the parent) and print {case: clusters} as JSON."""
    import numpy as np
    import tensorflow as tf
    from google.protobuf import text_format
    tf.compat.v1.disable_v2_behavior()
    res = {}
    for path in sorted(glob.glob(os.path.join(out, "*.pb"))):  # (the main feeds: one dump per graph)
        name = os.path.basename(path)[:-3]
        gd = tf.compat.v1.GraphDef()
        with open(path, "rb") as f:
            gd.ParseFromString(f.read())
        with np.load(os.path.join(out, f"{name}_io.npz")) as z:
            feeds = {k[3:]: z[k] for k in z.files if k.startswith("in_")}
            outputs = [k[4:] for k in z.files if k.startswith("out_")]
        scratch = tempfile.mkdtemp(prefix=f"tf1-{name}-")
        os.environ["TF_DUMP_GRAPH_PREFIX"] = scratch
        _run(gd, feeds, outputs)
        dumps = sorted(glob.glob(os.path.join(scratch, "mark_for_compilation_annotated*.pbtxt")))
        if len(dumps) != 1:
            raise SystemExit(f"{name}: {len(dumps)} annotated dumps")
        ann = tf.compat.v1.GraphDef()
        with open(dumps[0], encoding="utf-8") as f:
            text_format.Parse(f.read(), ann)
        clusters: dict = {}
        for n in ann.node:
            if "_XlaCluster" in n.attr:
                c = n.attr["_XlaCluster"].s.decode()
                head, _, rest = n.name.partition("/")
                assert head == c, n.name
                clusters.setdefault(c, []).append(rest)
        res[name] = sorted(sorted(m) for m in clusters.values())
    print(json.dumps(res))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--dump", type=int, help=argparse.SUPPRESS)  # the child process of one cluster size
    args = ap.parse_args()
    if args.dump is not None:
        dump(args.out, args.dump)
        return 0
    os.makedirs(args.out, exist_ok=True)
    build(args.out)
    parts: dict = {}
    for k in SIZES:
        env = dict(os.environ, TF_XLA_FLAGS=f"--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit "
                                            f"--tf_xla_min_cluster_size={k} --tf_xla_clustering_debug")
        proc = subprocess.run([sys.executable, __file__, "--out", args.out, "--dump", str(k)], env=env,
                              capture_output=True, text=True)
        if proc.returncode:
            sys.exit(proc.stderr[-3000:])
        for case, clusters in json.loads(proc.stdout.strip().splitlines()[-1]).items():
            parts.setdefault(case, {})[str(k)] = clusters
    with open(os.path.join(args.out, "partitions.json"), "w", encoding="utf-8") as f:
        f.write("{\n" + ",\n".join(f"{json.dumps(c)}: {json.dumps(v, sort_keys=True)}"
                                   for c, v in sorted(parts.items())) + "\n}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
