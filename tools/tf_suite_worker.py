"""Run TensorFlow's MarkForCompilationPass on the tf_suite cases (executed by a Python that has TF).

Started by tools/tf_suite.py, one process per (min cluster size, device setup), because TF reads
TF_XLA_FLAGS once per process:

    tf_suite_worker.py --out DIR --min-cluster-size K [--two-cpus] CASE...   # clustering dumps
    tf_suite_worker.py --out DIR --kernels                                  # tf2xla_kernels.json
    tf_suite_worker.py --out DIR --models                                   # models/ (no auto-jit)

For every case and both Grappler settings the case's graph is run once with TF_DUMP_GRAPH_PREFIX
pointing at a fresh folder; the `before_mark_for_compilation*`, `mark_for_compilation*` and
`mark_for_compilation_annotated*` dumps TF writes there are copied to DIR/<case>/<variant>/ (TF's file
names, renumbered from 0 in the order TF wrote them, so no name depends on what ran earlier in the
process) and the partition is read from the annotated dump into expected.json.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--out", required=True)
ap.add_argument("--min-cluster-size", type=int, default=4)
ap.add_argument("--two-cpus", action="store_true", help="configure two logical CPU devices first")
ap.add_argument("--kernels", action="store_true")
ap.add_argument("--models", action="store_true")
ap.add_argument("--grappler", choices=["both", "on", "off"], default="both")
ap.add_argument("cases", nargs="*")
ARGS = ap.parse_args()

SCRATCH = tempfile.mkdtemp(prefix="tfsuite-")
FLAGS = ""
if not ARGS.models:
    FLAGS = (f"--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit --tf_xla_min_cluster_size={ARGS.min_cluster_size} "
             "--tf_xla_clustering_debug")
    os.environ["TF_XLA_FLAGS"] = FLAGS
    os.environ["TF_DUMP_GRAPH_PREFIX"] = os.path.join(SCRATCH, "elsewhere")
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402

if ARGS.two_cpus:
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402
from keras import layers  # noqa: E402

keras.utils.set_random_seed(0)
RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32):
    return tf.constant(RNG.standard_normal(shape).astype(dtype))


def sess_config(grappler):
    cfg = tf.compat.v1.ConfigProto()
    cfg.graph_options.rewrite_options.disable_meta_optimizer = not grappler
    return cfg


# ---------------------------------------------------------------------------------------------------
# Cases. A case returns ("fn", callable, args) for a tf.function, or ("v1", graph, init, fetches, feeds)
# for a TF1 graph run in a Session. Everything that is not the case's own graph (Keras building its
# weights, variable initialisers) happens before the dump folder is switched on.
# ---------------------------------------------------------------------------------------------------

CASES = {}


def case(name, what):
    def deco(f):
        CASES[name] = (f, what)
        return f
    return deco


def keras_fn(model, *args):
    model(*args, training=False)  # build the weights eagerly, outside the dumped graph
    return "fn", tf.function(lambda *a: model(*a, training=False)), args


@case("mlp", "Keras Dense/ReLU/Softmax MLP: MatMul, BiasAdd, ReadVariableOp on resource variables")
def mlp():
    m = keras.Sequential([keras.Input((16,)), layers.Dense(32, activation="relu"),
                          layers.Dense(32, activation="relu"), layers.Dense(10), layers.Softmax()])
    return keras_fn(m, rand(4, 16))


def conv_bn(x, f, stride=1):
    x = layers.Conv2D(f, 3, strides=stride, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    return layers.ReLU()(x)


@case("conv_bn", "Keras: two Conv2D + BatchNormalization (inference; Keras 3 writes it as Rsqrt/Mul/Sub, "
                 "not FusedBatchNormV3) + ReLU blocks, pooling, Dense")
def conv_bn_case():
    inp = keras.Input((12, 12, 3))
    x = conv_bn(inp, 8)
    x = conv_bn(x, 8, 2)
    x = layers.GlobalAveragePooling2D()(x)
    out = layers.Dense(5)(x)
    return keras_fn(keras.Model(inp, out), rand(2, 12, 12, 3))


@case("conv_fused_bn", "raw ops: two Conv2D + FusedBatchNormV3 (is_training=False) + Relu blocks, MaxPool, "
                       "weights in resource variables")
def conv_fused_bn():
    var = lambda *s: tf.Variable(RNG.standard_normal(s).astype(np.float32) * 0.3)  # noqa: E731
    params = [(var(3, 3, 3, 8), var(8), var(8), var(8), tf.Variable(np.ones(8, np.float32))),
              (var(3, 3, 8, 8), var(8), var(8), var(8), tf.Variable(np.ones(8, np.float32)))]

    @tf.function
    def f(x):
        for k, scale, offset, mean, variance in params:
            x = tf.nn.conv2d(x, k, strides=1, padding="SAME")
            x, _, _ = tf.compat.v1.nn.fused_batch_norm(x, scale, offset, mean=mean, variance=variance,
                                                       is_training=False)
            x = tf.nn.relu(x)
        return tf.nn.max_pool2d(x, 2, 2, "VALID")
    return "fn", f, (rand(2, 12, 12, 3),)


@case("residual", "two residual blocks (conv-BN-ReLU-conv-BN + skip Add + ReLU), a strided 1x1 projection")
def residual():
    inp = keras.Input((12, 12, 8))
    x = inp
    for stride in (1, 2):
        y = conv_bn(x, 8, stride)
        y = layers.Conv2D(8, 3, padding="same", use_bias=False)(y)
        y = layers.BatchNormalization()(y)
        skip = x if stride == 1 else layers.Conv2D(8, 1, strides=2)(x)
        x = layers.ReLU()(layers.Add()([y, skip]))
    return keras_fn(keras.Model(inp, x), rand(2, 12, 12, 8))


class Attention(tf.Module):
    def __init__(self, d=16):
        super().__init__()
        init = lambda *s: tf.Variable(RNG.standard_normal(s).astype(np.float32) * 0.2)  # noqa: E731
        self.wq, self.wk, self.wv, self.wo = init(d, d), init(d, d), init(d, d), init(d, d)
        self.d = d

    def __call__(self, x, mask):
        q = tf.einsum("bsd,de->bse", x, self.wq)
        k = tf.einsum("bsd,de->bse", x, self.wk)
        v = tf.einsum("bsd,de->bse", x, self.wv)
        s = tf.matmul(q, k, transpose_b=True) / tf.sqrt(float(self.d))
        s += (1.0 - mask) * -1e9
        p = tf.nn.softmax(s, axis=-1)
        return tf.einsum("bse,ef->bsf", tf.matmul(p, v), self.wo)


@case("attention", "scaled dot-product attention from raw ops: Einsum, BatchMatMulV2, Softmax, mask arithmetic")
def attention():
    att = Attention()
    mask = tf.constant(np.tril(np.ones((6, 6), np.float32)))
    return "fn", tf.function(att.__call__), (rand(2, 6, 16), mask)


def transformer_block(inp, d=16, heads=2, ff=32):
    a = layers.MultiHeadAttention(num_heads=heads, key_dim=d // heads)(inp, inp)
    x = layers.LayerNormalization()(layers.Add()([inp, a]))
    f = layers.Dense(ff, activation="gelu")(x)
    f = layers.Dense(d)(f)
    return layers.LayerNormalization()(layers.Add()([x, f]))


@case("transformer", "Keras transformer encoder block: MultiHeadAttention, LayerNormalization, GELU FFN, residuals")
def transformer():
    inp = keras.Input((6, 16))
    return keras_fn(keras.Model(inp, transformer_block(inp)), rand(2, 6, 16))


@case("lstm", "Keras LSTM(16) not unrolled: a functional While over the time steps (lowered by TF)")
def lstm():
    inp = keras.Input((5, 8))
    return keras_fn(keras.Model(inp, layers.Dense(4)(layers.LSTM(16)(inp))), rand(2, 5, 8))


@case("lstm_unrolled", "Keras LSTM(16, unroll=True): the 5 time steps as straight-line ops")
def lstm_unrolled():
    inp = keras.Input((5, 8))
    return keras_fn(keras.Model(inp, layers.Dense(4)(layers.LSTM(16, unroll=True)(inp))), rand(2, 5, 8))


def v1_graph(build, cf_v2=False):
    """Build a TF1 graph (control flow v1 unless cf_v2) and return a ("v1", ...) case."""
    g = tf.Graph()
    if not cf_v2:
        tf.compat.v1.disable_control_flow_v2()
    try:
        with g.as_default():
            fetches, feeds = build()
            init = tf.compat.v1.global_variables_initializer()
    finally:
        tf.compat.v1.enable_control_flow_v2()
    return "v1", g, init, fetches, feeds


@case("while_v1", "tf.while_loop in TF1 graph mode, control flow v1: Enter/Merge/Switch/NextIteration/Exit/LoopCond")
def while_v1():
    def build():
        x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
        h = tf.nn.relu(x * 2.0 + 1.0)
        i, acc = tf.while_loop(lambda i, a: i < 5,
                               lambda i, a: (i + 1, tf.tanh(tf.matmul(a, h)) * 0.5 + a),
                               [tf.constant(0), h])
        out = tf.reduce_sum(acc * 3.0 - 1.0, axis=0)
        return [out, i], {x: np.ones((4, 4), np.float32) * 0.1}
    return v1_graph(build)


@case("while_functional", "tf.while_loop in a tf.function (control flow v2: a While op, lowered by TF "
                          "before clustering)")
def while_functional():
    @tf.function
    def f(x):
        h = tf.nn.relu(x * 2.0 + 1.0)
        i, acc = tf.while_loop(lambda i, a: i < 5,
                               lambda i, a: (i + 1, tf.tanh(tf.matmul(a, h)) * 0.5 + a),
                               [tf.constant(0), h])
        return tf.reduce_sum(acc * 3.0 - 1.0, axis=0), i
    return "fn", f, (rand(4, 4) * 0.1,)


def keep_functional():
    """Mark the functional control-flow ops traced so far "_lower_using_switch_merge: false", so that TF's
    LowerFunctionalOpsPass leaves them as While/If (what TF does in XLA contexts) and the clustering
    pass sees the functional op with its bodies in the function library."""
    from tensorflow.core.framework import attr_value_pb2
    for op in tf.compat.v1.get_default_graph().get_operations():
        if op.type in ("While", "StatelessWhile", "If", "StatelessIf"):
            op._set_attr("_lower_using_switch_merge", attr_value_pb2.AttrValue(b=False))


@case("while_functional_kept", "as while_functional, but the While op kept functional "
                               "(_lower_using_switch_merge=false): the pass sees While with cond/body functions")
def while_functional_kept():
    @tf.function
    def f(x):
        h = tf.nn.relu(x * 2.0 + 1.0)
        i, acc = tf.while_loop(lambda i, a: i < 5,
                               lambda i, a: (i + 1, tf.tanh(tf.matmul(a, h)) * 0.5 + a),
                               [tf.constant(0), h])
        out = tf.reduce_sum(acc * 3.0 - 1.0, axis=0)
        keep_functional()
        return out, i
    return "fn", f, (rand(4, 4) * 0.1,)


@case("while_v2_session", "tf.while_loop in TF1 graph mode with control flow v2 (While op) run in a Session")
def while_v2_session():
    def build():
        x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
        h = tf.nn.relu(x * 2.0 + 1.0)
        i, acc = tf.while_loop(lambda i, a: i < 5,
                               lambda i, a: (i + 1, tf.tanh(tf.matmul(a, h)) * 0.5 + a),
                               [tf.constant(0), h])
        return [tf.reduce_sum(acc * 3.0 - 1.0, axis=0), i], {x: np.ones((4, 4), np.float32) * 0.1}
    return v1_graph(build, cf_v2=True)


@case("cond_v1", "tf.cond in TF1 graph mode, control flow v1 (Switch/Merge; deadness analysis decides)")
def cond_v1():
    def build():
        x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
        p = tf.compat.v1.placeholder(tf.bool, [], name="p")
        a = tf.nn.relu(x * 2.0 + 1.0)
        c = tf.cond(p, lambda: tf.exp(a) * 2.0 + 1.0, lambda: tf.sin(a) - 1.0)
        d = tf.cond(p, lambda: c * a, lambda: c + a)
        out = tf.tanh(d * 3.0) + a
        return [out], {x: np.ones((4, 4), np.float32), p: True}
    return v1_graph(build)


@case("cond_functional", "tf.cond on a tensor predicate in a tf.function (If/StatelessIf, lowered by TF)")
def cond_functional():
    @tf.function
    def f(x, p):
        a = tf.nn.relu(x * 2.0 + 1.0)
        c = tf.cond(p, lambda: tf.exp(a) * 2.0 + 1.0, lambda: tf.sin(a) - 1.0)
        d = tf.cond(p, lambda: c * a, lambda: c + a)
        return tf.tanh(d * 3.0) + a
    return "fn", f, (rand(4, 4), tf.constant(True))


@case("cond_functional_kept", "as cond_functional, but the If ops kept functional (_lower_using_switch_merge="
                              "false): the pass sees If/StatelessIf with branch functions")
def cond_functional_kept():
    @tf.function
    def f(x, p):
        a = tf.nn.relu(x * 2.0 + 1.0)
        c = tf.cond(p, lambda: tf.exp(a) * 2.0 + 1.0, lambda: tf.sin(a) - 1.0)
        d = tf.cond(p, lambda: c * a, lambda: c + a)
        out = tf.tanh(d * 3.0) + a
        keep_functional()
        return out
    return "fn", f, (rand(4, 4), tf.constant(True))


@case("resource_vars", "resource variables read, assigned and assign-added in a tf.function (the handles arrive as "
                       "resource _Args: ReadVariableOp, AssignVariableOp, AssignAddVariableOp)")
def resource_vars():
    v = tf.Variable(tf.zeros((4, 4)), name="v")
    w = tf.Variable(tf.ones((4, 4)), name="w")
    step = tf.Variable(0, name="step")

    @tf.function
    def f(x):
        v.assign_add(x * 2.0)
        y = tf.nn.relu(v.read_value() * 3.0 - 1.0)
        w.assign(tf.matmul(y, w) + 1.0)
        step.assign_add(1)
        return w.read_value() * 0.5 + y, step.read_value()
    return "fn", f, (rand(4, 4),)


@case("resource_vars_v1", "resource variables in a TF1 graph run in a Session: VarHandleOp, ReadVariableOp, "
                          "AssignAddVariableOp, AssignVariableOp ordered by control dependencies")
def resource_vars_v1():
    def build():
        x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
        v = tf.compat.v1.get_variable("v", initializer=tf.zeros((4, 4)), use_resource=True)
        w = tf.compat.v1.get_variable("w", initializer=tf.ones((4, 4)), use_resource=True)
        up = v.assign_add(x * 2.0)
        with tf.control_dependencies([up]):
            y = tf.nn.relu(v.read_value() * 3.0 - 1.0)
        up2 = w.assign(tf.matmul(y, w.read_value()) + 1.0)
        with tf.control_dependencies([up2]):
            out = w.read_value() * 0.5 + y
        return [out], {x: np.ones((4, 4), np.float32)}
    return v1_graph(build)


@case("random", "stateful random ops (RandomUniform, RandomStandardNormal, dropout, a tf.random.Generator) "
                "and stateless ones mixed with arithmetic")
def random_case():
    gen = tf.random.Generator.from_seed(1)

    @tf.function
    def f(x):
        a = x * 2.0 + tf.random.uniform([4, 4])
        b = tf.nn.relu(a) + tf.random.normal([4, 4], seed=3)
        c = tf.random.stateless_uniform([4, 4], seed=[1, 2]) * b
        d = tf.nn.dropout(c, rate=0.5, seed=5)
        e = gen.normal([4, 4]) + d
        return tf.tanh(e) * 3.0
    return "fn", f, (rand(4, 4),)


@case("strings", "string ops next to numeric ones: AsString, StringJoin, StringLength, StringToNumber, Substr")
def strings():
    @tf.function
    def f(x, s):
        a = tf.round(x * 10.0)
        t = tf.strings.as_string(a, precision=1)
        j = tf.strings.join([s, t], separator=":")
        n = tf.cast(tf.strings.length(j), tf.float32)
        head = tf.cast(tf.strings.length(tf.strings.substr(j, 0, 2)), tf.float32)
        back = tf.strings.to_number(t)
        return tf.nn.relu(n * 2.0 + a) - back * head, j
    return "fn", f, (rand(4, 4), tf.constant([["ab"] * 4] * 4))


@case("check_numerics", "tf.debugging.check_numerics and tf.debugging.Assert (with control dependencies) in math")
def check_numerics():
    @tf.function
    def f(x):
        a = tf.nn.relu(x * 2.0 + 1.0)
        b = tf.debugging.check_numerics(tf.exp(a), "exp overflow")
        c = b * 3.0 - a
        assert_op = tf.debugging.Assert(tf.reduce_all(c > -100.0), [c])
        with tf.control_dependencies([assert_op]):
            d = tf.identity(c)
        return tf.tanh(d) + 1.0
    return "fn", f, (rand(4, 4),)


@case("two_devices", "ops pinned to two logical CPU devices (/device:CPU:0 and /device:CPU:1)")
def two_devices():
    @tf.function
    def f(x):
        with tf.device("/device:CPU:0"):
            a = tf.nn.relu(x * 2.0 + 1.0)
            a = tf.matmul(a, a)
        with tf.device("/device:CPU:1"):
            b = tf.tanh(a * 3.0) - 1.0
            b = tf.matmul(b, x)
        with tf.device("/device:CPU:0"):
            c = tf.exp(b * 0.1) + a
        return c
    return "fn", f, (rand(4, 4),)


@case("jit_compile_inner", "a tf.function(jit_compile=True) called from an auto-clustered tf.function")
def jit_compile_inner():
    @tf.function(jit_compile=True)
    def inner(a):
        return tf.tanh(tf.matmul(a, a)) * 2.0 + 1.0

    @tf.function
    def f(x):
        y = tf.nn.relu(x * 2.0 + 1.0)
        z = inner(y)
        return tf.exp(z * 0.1) + y
    return "fn", f, (rand(4, 4),)


@case("xla_scope", "tf.xla.experimental.jit_scope: two compiled scopes (_XlaCompile, _XlaScope), "
                   "a compile_ops=False scope and unscoped ops")
def xla_scope():
    @tf.function
    def f(x):
        a = tf.nn.relu(x * 2.0 + 1.0)
        with tf.xla.experimental.jit_scope():
            b = tf.tanh(a * 3.0) + a
            b = tf.matmul(b, b)
        with tf.xla.experimental.jit_scope():
            c = tf.exp(b * 0.1) - 1.0
            c = c * a
        with tf.xla.experimental.jit_scope(compile_ops=False):
            d = tf.sin(c) + 2.0
            d = d * c
        return tf.sigmoid(d * 0.5) + 1.0
    return "fn", f, (rand(4, 4),)


@case("xla_scope_v1", "jit_scope in a TF1 graph run in a Session (scopes and unscoped ops)")
def xla_scope_v1():
    def build():
        x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
        a = tf.nn.relu(x * 2.0 + 1.0)
        with tf.xla.experimental.jit_scope():
            b = tf.matmul(tf.tanh(a * 3.0) + a, a)
        with tf.xla.experimental.jit_scope():
            c = (tf.exp(b * 0.1) - 1.0) * a
        return [tf.sigmoid(c * 0.5) + 1.0], {x: np.ones((4, 4), np.float32)}
    return v1_graph(build)


# ---------------------------------------------------------------------------------------------------

DUMP_RE = re.compile(r"^(before_mark_for_compilation|mark_for_compilation|mark_for_compilation_annotated)"
                     r"(?:_(\d+))?\.pbtxt$")


def read_graph(path):
    gd = tf.compat.v1.GraphDef()
    with open(path, encoding="utf-8") as f:
        text_format.Parse(f.read(), gd)
    return gd


def clusters_of(gd, strip_prefix):
    """{cluster name: sorted member names} from the _XlaCluster attributes of a dumped GraphDef."""
    out = {}
    for n in gd.node:
        if "_XlaCluster" in n.attr:
            c = n.attr["_XlaCluster"].s.decode()
            name = n.name
            if strip_prefix:  # the annotated dump renames every node to "<cluster>/<name>"
                head, _, rest = name.partition("/")
                if head != c:
                    raise ValueError(f"annotated node {name} not under its cluster {c}")
                name = rest
            out.setdefault(c, []).append(name)
    return {c: sorted(m) for c, m in out.items()}


# ---- one case per check of RecursiveCompilabilityChecker / OperationFilter flag (tests/data/tf_rules) ----
def chain(x, op):
    """Compilable arithmetic around `op`, so that what TF refuses splits clusters visibly."""
    a = tf.nn.relu(x * 2.0 + 1.0)
    b = op(a)
    return tf.tanh(tf.cast(b, tf.float32) * 0.5 + 1.0) if b.dtype != tf.float32 else tf.tanh(b * 0.5 + 1.0)


@case("rule_resource_in_call", "a tf.function(jit_compile=True) reading a resource variable, called from an "
                               "auto-clustered function (allow_resource_ops_in_called_functions = false)")
def rule_resource_in_call():
    v = tf.Variable(RNG.standard_normal((4, 4)).astype(np.float32))

    @tf.function(jit_compile=True)
    def inner(a):
        return tf.tanh(tf.matmul(a, v)) * 2.0 + 1.0

    @tf.function
    def f(x):
        y = tf.nn.relu(x * 2.0 + 1.0) * 3.0 - 1.0
        z = inner(y)
        return tf.exp(z * 0.1) * 2.0 + y
    return "fn", f, (rand(4, 4),)


@case("rule_unique", "tf.unique between arithmetic (allow_unique_op = false under auto-clustering)")
def rule_unique():
    @tf.function
    def f(x):
        return chain(x, lambda a: tf.unique(tf.reshape(tf.round(a), [-1]))[0] * 3.0 + 1.0)
    return "fn", f, (rand(4, 4),)


@case("rule_where", "tf.where with one argument (a data-dependent shape) between arithmetic")
def rule_where():
    @tf.function
    def f(x):
        return chain(x, lambda a: tf.cast(tf.where(a > 1.5), tf.float32) * 2.0 + 1.0)
    return "fn", f, (rand(4, 4),)


@case("rule_slow_inaccurate", "ops TF calls slow or inaccurate on XLA (Svd, Qr, SelfAdjointEigV2, MatrixInverse, "
                              "MatrixSolve) and the resize ops, each between arithmetic")
def rule_slow_inaccurate():
    @tf.function
    def f(x, img):
        s = chain(x, lambda a: tf.linalg.svd(a, compute_uv=False) * 2.0)
        q = chain(x, lambda a: tf.linalg.qr(a)[0] * 2.0)
        e = chain(x, lambda a: tf.linalg.eigh(a + tf.transpose(a))[0] * 2.0)
        i = chain(x, lambda a: tf.linalg.inv(a + 4.0 * tf.eye(4)) * 2.0)
        m = chain(x, lambda a: tf.linalg.solve(a + 4.0 * tf.eye(4), a) * 2.0)
        r = chain(img, lambda a: tf.image.resize(a, [6, 6], method="bilinear") * 2.0)
        n = chain(img, lambda a: tf.image.resize(a, [6, 6], method="nearest") * 2.0)
        return s, q, e, i, m, r, n
    return "fn", f, (rand(4, 4), rand(1, 4, 4, 2))


@case("rule_variant", "TensorList ops of a tf.TensorArray (DT_VARIANT producers/consumers) between arithmetic")
def rule_variant():
    @tf.function
    def f(x):
        a = tf.nn.relu(x * 2.0 + 1.0)
        ta = tf.TensorArray(tf.float32, size=2)
        ta = ta.write(0, a).write(1, a * 3.0)
        return tf.tanh(ta.stack() * 0.5 + 1.0)
    return "fn", f, (rand(4, 4),)


@case("rule_stack_tensor_array_v1", "TF1 raw Stack and TensorArrayV3 ops between arithmetic (allow_stack_ops and "
                                    "allow_tensor_array_ops = false)")
def rule_stack_tensor_array_v1():
    def build():
        x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
        a = tf.nn.relu(x * 2.0 + 1.0)
        R = tf.raw_ops
        stack = R.StackV2(max_size=tf.constant(4), elem_type=tf.float32)
        pushed = R.StackPushV2(handle=stack, elem=a * 3.0)
        with tf.control_dependencies([pushed]):
            popped = R.StackPopV2(handle=stack, elem_type=tf.float32)
        handle, flow = R.TensorArrayV3(size=tf.constant(2), dtype=tf.float32, element_shape=[4, 4])
        flow = R.TensorArrayWriteV3(handle=handle, index=tf.constant(0), value=a * 5.0, flow_in=flow)
        read = R.TensorArrayReadV3(handle=handle, index=tf.constant(0), flow_in=flow, dtype=tf.float32)
        return [tf.tanh(popped * 0.5 + 1.0), tf.tanh(read * 0.5 + 1.0)], {x: np.ones((4, 4), np.float32) * 0.1}
    return v1_graph(build)


@case("rule_control_trigger", "TF1 ControlTrigger ordering arithmetic (allow_control_trigger = false)")
def rule_control_trigger():
    def build():
        x = tf.compat.v1.placeholder(tf.float32, [4, 4], name="x")
        a = tf.nn.relu(x * 2.0 + 1.0)
        trig = tf.raw_ops.ControlTrigger()
        with tf.control_dependencies([trig]):
            b = tf.tanh(a * 0.5 + 1.0)
        return [b * 3.0], {x: np.ones((4, 4), np.float32) * 0.1}
    return v1_graph(build)


@case("rule_case", "tf.switch_case (a functional Case; require_always_compilable checks every branch)")
def rule_case():
    @tf.function
    def f(x, k):
        a = tf.nn.relu(x * 2.0 + 1.0)
        b = tf.switch_case(k, [lambda: a * 2.0, lambda: tf.tanh(a), lambda: a - 1.0])
        return tf.exp(b * 0.1) * 2.0 + a
    return "fn", f, (rand(4, 4), tf.constant(1))


@case("rule_collective", "CollectiveReduceV2 over a group of one (allow_collective_reduce_v2 = false)")
def rule_collective():
    @tf.function
    def f(x):
        return chain(x, lambda a: tf.raw_ops.CollectiveReduceV2(
            input=a, group_size=tf.constant(1), group_key=tf.constant(1), instance_key=tf.constant(1),
            ordering_token=[], merge_op="Add", final_op="Id") * 2.0)
    return "fn", f, (rand(4, 4),)


def run_case(name, grappler, variant_dir):
    dump = tempfile.mkdtemp(prefix=f"{name}-", dir=SCRATCH)
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": not grappler})
    keras.backend.clear_session()  # Keras layer names restart, so they do not depend on earlier cases
    built = CASES[name][0]()
    note = None
    try:
        if built[0] == "fn":
            _, fn, args = built
            os.environ["TF_DUMP_GRAPH_PREFIX"] = dump
            fn(*args)
        else:
            _, g, init, fetches, feeds = built
            with tf.compat.v1.Session(graph=g, config=sess_config(grappler)) as s:
                s.run(init)
                os.environ["TF_DUMP_GRAPH_PREFIX"] = dump
                s.run(fetches, feeds)
    except Exception as e:  # noqa: BLE001 - the pass may have run before the failure: keep its dumps
        note = f"running the graph failed after TF dumped it: {type(e).__name__}: {str(e).strip()[:300]}"
    finally:
        os.environ["TF_DUMP_GRAPH_PREFIX"] = os.path.join(SCRATCH, "elsewhere")
    fams = {}
    for f in os.listdir(dump):
        m = DUMP_RE.match(f)
        if m:
            fams.setdefault(m.group(1), []).append((int(m.group(2) or 0), f))
    for v in fams.values():
        v.sort()
    counts = {k: len(v) for k, v in fams.items()}
    if len(set(counts.values())) > 1:
        note = (note + "; " if note else "") + f"dump families differ in count: {counts}"
    os.makedirs(variant_dir, exist_ok=True)
    graphs = []
    for i in range(min(counts.values()) if counts else 0):
        entry = {}
        suffix = "" if i == 0 else f"_{i}"
        for fam in ("before_mark_for_compilation", "mark_for_compilation", "mark_for_compilation_annotated"):
            src = os.path.join(dump, fams[fam][i][1])
            dst_name = f"{fam}{suffix}.pbtxt"
            shutil.copyfile(src, os.path.join(variant_dir, dst_name))
            entry[fam] = dst_name
        before = read_graph(os.path.join(dump, fams["before_mark_for_compilation"][i][1]))
        annotated = read_graph(os.path.join(dump, fams["mark_for_compilation_annotated"][i][1]))
        marked = read_graph(os.path.join(dump, fams["mark_for_compilation"][i][1]))
        ca = clusters_of(annotated, strip_prefix=True)
        cm = clusters_of(marked, strip_prefix=False)
        items = sorted(ca.items(), key=lambda kv: kv[1])
        ops = {n.name: n.op for n in before.node}
        entry.update({
            "nodes": len(before.node),
            "ops": sorted(set(ops.values())),
            "devices": sorted({n.device for n in before.node}),
            "clusters": [m for _, m in items],
            "tf_cluster_names": [c for c, _ in items],
            "clustered_nodes": sum(len(m) for m in ca.values()),
            "functions_in_library": len(before.library.function),
        })
        if ca != cm:
            entry["warning"] = "mark_for_compilation and mark_for_compilation_annotated disagree"
        missing = [n for m in ca.values() for n in m if n not in ops]
        if missing:
            entry["warning"] = f"clustered nodes absent from before_mark_for_compilation: {missing[:5]}"
        graphs.append(entry)
    return graphs, note


def suite(args):
    variants = {"both": [True, False], "on": [True], "off": [False]}[args.grappler]
    summary = []
    for name in args.cases:
        for grappler in variants:
            variant = f"grappler_{'on' if grappler else 'off'}-min{args.min_cluster_size}"
            vdir = os.path.join(args.out, name, variant)
            if os.path.isdir(vdir):
                shutil.rmtree(vdir)
            rec = {"case": name, "variant": variant, "what": CASES[name][1], "tf_version": tf.__version__,
                   "tf_xla_flags": FLAGS, "grappler": grappler, "min_cluster_size": args.min_cluster_size,
                   "logical_cpu_devices": 2 if args.two_cpus else 1}
            try:
                graphs, note = run_case(name, grappler, vdir)
                rec["graphs"] = graphs
                if note:
                    rec["note"] = note
                if not graphs:
                    rec["error"] = "TensorFlow wrote no mark_for_compilation dumps"
            except Exception as e:  # noqa: BLE001 - recorded, the suite goes on
                rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            os.makedirs(vdir, exist_ok=True)
            with open(os.path.join(vdir, "expected.json"), "w", encoding="utf-8") as f:
                json.dump(rec, f, indent=1, sort_keys=True)
                f.write("\n")
            summary.append({k: rec.get(k) for k in ("case", "variant", "error")})
            print(json.dumps(summary[-1]), file=sys.stderr, flush=True)


def kernels(args):
    # Registering the XLA_*_JIT kernels happens when XLA is first needed: compile one function.
    tf.function(jit_compile=True)(lambda a: a * 2.0 + 1.0)(tf.ones([2]))
    from tensorflow.python.framework import kernels as tfk
    table = {}
    constraints = {}  # op -> device -> attr -> allowed types (union over that op's kernels)
    devices_seen = set()
    for k in tfk.get_all_registered_kernels().kernel:
        devices_seen.add(k.device_type)
        if k.device_type in ("XLA_CPU_JIT", "XLA_GPU_JIT"):
            table.setdefault(k.op, set()).add(k.device_type)
            per = constraints.setdefault(k.op, {}).setdefault(k.device_type, {})
            for c in k.constraint:
                types = [tf.dtypes.as_dtype(t).name for t in c.allowed_values.list.type]
                per.setdefault(c.name, set()).update(types)
    from importlib import metadata
    package = "?"
    for dist in ("tensorflow-cpu", "tensorflow", "tf-nightly", "tf-nightly-cpu"):
        try:
            package = f"{dist}=={metadata.version(dist)}"
            break
        except metadata.PackageNotFoundError:
            continue
    out = {
        "package": package,
        "tf_version": tf.__version__,
        "source": "tensorflow.python.framework.kernels.get_all_registered_kernels(), kernels whose "
                  "device_type is XLA_CPU_JIT or XLA_GPU_JIT, read after one tf.function(jit_compile=True) "
                  "ran (XlaOpRegistry::RegisterCompilationKernels)",
        "device_types_in_registry": sorted(devices_seen),
        "ops": {op: sorted(d) for op, d in sorted(table.items())},
        "type_constraints": {op: {d: {a: sorted(t) for a, t in sorted(attrs.items())}
                                  for d, attrs in sorted(devs.items())}
                             for op, devs in sorted(constraints.items())},
    }
    with open(os.path.join(args.out, "tf2xla_kernels.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{len(table)} ops; device types {sorted(devices_seen)}", file=sys.stderr)


def models(args):
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
    root = os.path.join(args.out, "models")
    os.makedirs(root, exist_ok=True)

    def cnn():
        inp = keras.Input((16, 16, 3), name="image")
        x = conv_bn(inp, 8)
        x = layers.MaxPooling2D()(x)
        x = conv_bn(x, 8)
        x = layers.GlobalAveragePooling2D()(x)
        return keras.Model(inp, layers.Dense(4, activation="softmax")(x)), rand(2, 16, 16, 3)

    def transformer_model():
        inp = keras.Input((6, 16), name="tokens")
        return keras.Model(inp, layers.Dense(4)(transformer_block(inp))), rand(2, 6, 16)

    for name, make in (("keras_cnn", cnn), ("keras_transformer", transformer_model)):
        keras.backend.clear_session()
        model, x = make()
        # Settle BatchNormalization's moving statistics away from 0/1 so inference is not the identity.
        for layer in model.layers:
            if isinstance(layer, layers.BatchNormalization):
                n = layer.moving_mean.shape[0]
                layer.moving_mean.assign(RNG.standard_normal(n).astype(np.float32) * 0.1)
                layer.moving_variance.assign(1.0 + RNG.random(n).astype(np.float32))
        spec = tf.TensorSpec(x.shape, tf.float32, name=model.inputs[0].name.split(":")[0])
        module = tf.Module()
        module.model = model
        module.serve = tf.function(lambda t: {"output": model(t, training=False)}, input_signature=[spec])
        y = module.serve(x)["output"].numpy()
        sm = os.path.join(root, f"{name}_savedmodel")
        if os.path.isdir(sm):
            shutil.rmtree(sm)
        tf.saved_model.save(module, sm, signatures={"serving_default": module.serve})
        frozen = convert_variables_to_constants_v2(module.serve.get_concrete_function())
        gd = frozen.graph.as_graph_def()
        with open(os.path.join(root, f"{name}_frozen.pb"), "wb") as f:
            f.write(gd.SerializeToString())
        y_frozen = frozen(x)[0].numpy() if isinstance(frozen(x), (list, tuple)) else frozen(x)["output"].numpy()
        y_loaded = tf.saved_model.load(sm).signatures["serving_default"](**{spec.name: x})["output"].numpy()
        np.savez(os.path.join(root, f"{name}_io.npz"), input=x.numpy(), output=y)
        meta = {
            "tf_version": tf.__version__, "keras_version": keras.__version__,
            "input_name": spec.name, "input_shape": list(x.shape), "output_name": "output",
            "output_shape": list(y.shape),
            "frozen_inputs": [t.name for t in frozen.inputs], "frozen_outputs": [t.name for t in frozen.outputs],
            "frozen_nodes": len(gd.node), "frozen_ops": sorted({n.op for n in gd.node}),
            "max_abs_diff_frozen_vs_eager": float(np.max(np.abs(y_frozen - y))),
            "max_abs_diff_savedmodel_vs_eager": float(np.max(np.abs(y_loaded - y))),
            "signature": "serving_default", "parameters": int(model.count_params()),
        }
        with open(os.path.join(root, f"{name}.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1, sort_keys=True)
            f.write("\n")
        print(name, meta["frozen_nodes"], "nodes", file=sys.stderr)


if __name__ == "__main__":
    if ARGS.kernels:
        kernels(ARGS)
    elif ARGS.models:
        models(ARGS)
    else:
        unknown = [c for c in ARGS.cases if c not in CASES]
        if unknown:
            sys.exit(f"unknown cases {unknown}; known: {sorted(CASES)}")
        suite(ARGS)
    shutil.rmtree(SCRATCH, ignore_errors=True)
