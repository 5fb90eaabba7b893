"""Generate tests/data/tf_keras/: small Keras models as TensorFlow writes them (SavedModel and frozen .pb), with TF's outputs.

Run once by a developer with a Python that has TensorFlow (tests never need it; they read the files):

    python3 -m venv /work/venvs/tf && /work/venvs/tf/bin/pip install tensorflow-cpu==2.21.0
    /work/venvs/tf/bin/python tools/tf_keras_corpus.py [--out tests/data/tf_keras] [--only NAME,...]

Every model is random-initialised by its library's own code (keras.applications with `weights=None`, stock
Keras layers, plain tf.functions); nothing is downloaded. For each model NAME it writes NAME_savedmodel/
(signature `serving_default`), NAME_frozen.pb (convert_variables_to_constants_v2 of the same function) and
NAME_frozen.pb.gz when it is over 400 kB, NAME_lowered.pb and NAME_lowered_io.npz (its own run) for the models with control flow (LOWERED),
and NAME_io.npz: `in_<signature input name>` arrays and `out_<signature output key>` arrays as TensorFlow
computed them (the frozen graph run in a fresh session, so stateful random ops start their streams at 0).
index.json lists each model's inputs, outputs, ops and sizes.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "tf_keras")
GZIP_OVER = 400_000
# also frozen with convert_variables_to_constants_v2's default lowering (NAME_lowered.pb: Enter/Switch/Merge, and
# the unused_control_flow_input_N placeholders the lowering leaves): the form most frozen TF2 graphs take
LOWERED = ("text_lstm", "text_bigru", "while_cond", "switch_case")
BIG = "--big" in sys.argv  # the larger keras.applications (tens of MB each), never committed


def _models():
    import numpy as np
    import keras
    import tensorflow as tf
    from keras import layers

    rng = np.random.default_rng(0)

    def images(shape):
        return rng.standard_normal(shape).astype(np.float32)

    def tokens(shape, vocab):
        return rng.integers(0, vocab, shape).astype(np.int32)

    def settle_bn(model):
        # BatchNormalization's moving statistics away from 0/1, so inference is not the identity
        for layer in model.layers:
            if isinstance(layer, layers.BatchNormalization):
                n = layer.moving_mean.shape[0]
                layer.moving_mean.assign(rng.standard_normal(n).astype(np.float32) * 0.1)
                layer.moving_variance.assign(1.0 + rng.random(n).astype(np.float32))
        # weights on a 1/64 grid: still Keras's random initialisation, but the frozen graph gzips ~4x
        for w in model.weights:
            w.assign(np.round(w.numpy() * 64.0) / 64.0)
        return model

    def mobilenet_v2():
        m = keras.applications.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, include_top=False, weights=None,
                                           pooling="avg")
        return settle_bn(m), {"image": images((2, 32, 32, 3))}

    def mobilenet_v1():
        m = keras.applications.MobileNet(input_shape=(32, 32, 3), alpha=0.25, include_top=True, weights=None,
                                         classes=10)
        return settle_bn(m), {"image": images((2, 32, 32, 3))}

    def text_lstm():
        inp = keras.Input((12,), dtype="int32", name="tokens")
        x = layers.Embedding(100, 8)(inp)
        x = layers.LSTM(16)(x)
        return keras.Model(inp, layers.Dense(3, activation="softmax")(x)), {"tokens": tokens((2, 12), 100)}

    def text_bigru():
        inp = keras.Input((10,), dtype="int32", name="tokens")
        x = layers.Embedding(50, 8)(inp)
        x = layers.Bidirectional(layers.GRU(8, return_sequences=True))(x)
        x = layers.GlobalAveragePooling1D()(x)
        return keras.Model(inp, layers.Dense(2)(x)), {"tokens": tokens((2, 10), 50)}

    def conv1d():
        inp = keras.Input((20, 4), name="signal")
        x = layers.Conv1D(8, 3, padding="same", activation="relu")(inp)
        x = layers.Conv1D(8, 3, dilation_rate=2, activation="relu6")(x)
        x = layers.MaxPooling1D(2)(x)
        x = layers.GlobalMaxPooling1D()(x)
        return keras.Model(inp, layers.Dense(3)(x)), {"signal": images((2, 20, 4))}

    def attention_encoder():
        inp = keras.Input((8,), dtype="int32", name="tokens")
        x = layers.Embedding(60, 16)(inp)
        a = layers.MultiHeadAttention(num_heads=2, key_dim=8)(x, x)
        x = layers.LayerNormalization()(x + a)
        f = layers.Dense(32, activation="gelu")(x)
        x = layers.LayerNormalization()(x + layers.Dense(16)(f))
        x = layers.GlobalAveragePooling1D()(x)
        return keras.Model(inp, layers.Dense(2)(x)), {"tokens": tokens((2, 8), 60)}

    class Functions(tf.Module):
        pass

    def while_cond():
        @tf.function(input_signature=[tf.TensorSpec((3, 4), tf.float32, name="x")])
        def serve(x):
            def cond(i, acc):
                return tf.logical_and(i < 10, tf.reduce_sum(tf.abs(acc)) < 100.0)

            def body(i, acc):
                return i + 1, acc * 1.5 + tf.reverse(x, [1])

            _, acc = tf.while_loop(cond, body, [tf.constant(0), x])
            y = tf.cond(tf.reduce_mean(acc) > 0, lambda: tf.nn.relu6(acc), lambda: -acc)
            p = tf.pad(y, [[1, 0], [0, 2]], mode="REFLECT")
            q = tf.pad(x, [[0, 1], [1, 1]], constant_values=2.5)
            return {"y": y, "mirror": p, "padded": q}
        return serve, {"x": images((3, 4))}

    def random_strings():
        @tf.function(input_signature=[tf.TensorSpec((2, 3), tf.float32, name="x")])
        def serve(x):
            u = tf.random.uniform((2, 3), seed=7)
            n = tf.random.normal((2, 3), seed=11)
            s = tf.random.stateless_uniform((2, 3), seed=[1, 2])
            t = tf.random.stateless_normal((2, 3), seed=[3, 4])
            text = tf.strings.as_string(tf.round(x * 100.0) / 4.0)
            back = tf.strings.to_number(text)
            length = tf.strings.length(text)
            return {"uniform": x + u, "normal": n, "stateless_uniform": s, "stateless_normal": t,
                    "back": back, "length": length}
        return serve, {"x": images((2, 3))}

    def ops_zoo():
        """One output per op variant the models above do not reach (attrs, dtypes, list ops, calls, If)."""
        R = tf.raw_ops

        @tf.function(jit_compile=True)
        def inner(t):
            return tf.nn.relu6(t * 3.0) - 1.0

        @tf.function(input_signature=[tf.TensorSpec((1, 7, 7, 3), tf.float32, name="image"),
                                      tf.TensorSpec((2, 5, 3), tf.float32, name="params"),
                                      tf.TensorSpec((2, 4), tf.int32, name="ids")])
        def serve(image, params, ids):
            w = tf.constant(rng.standard_normal((3, 3, 3, 2)).astype(np.float32))
            ta = tf.TensorArray(tf.float32, size=3, element_shape=(5, 3))
            for i in range(3):
                ta = ta.write(i, params[0] * float(i + 1))
            lst = R.EmptyTensorList(element_shape=tf.constant([3], tf.int32), max_num_elements=-1,
                                    element_dtype=tf.float32)
            lst = R.TensorListPushBack(input_handle=lst, tensor=params[1, 0])
            lst = R.TensorListPushBack(input_handle=lst, tensor=params[1, 1])
            lst, popped = R.TensorListPopBack(input_handle=lst, element_shape=tf.constant([3], tf.int32),
                                              element_dtype=tf.float32)

            def loop_cond(i, acc):
                return tf.reduce_sum(acc.stack()) < 50.0

            def loop_body(i, acc):
                return i + 1, acc.write(i, tf.fill([2], tf.cast(i, tf.float32) + tf.reduce_mean(params)))

            n, grown = tf.while_loop(loop_cond, loop_body,
                                     [tf.constant(0), tf.TensorArray(tf.float32, size=0, dynamic_size=True,
                                                                     element_shape=(2,))],
                                     maximum_iterations=40)
            strings = tf.constant(["h\u00e9llo", "ab", ""])
            return {
                "depthwise_s2": tf.nn.depthwise_conv2d(image, w, [1, 2, 2, 1], "SAME"),
                "depthwise_d2": tf.nn.depthwise_conv2d(image, w, [1, 1, 1, 1], "VALID", dilations=[2, 2]),
                "mirror_symmetric": tf.pad(params, [[0, 1], [2, 2], [1, 0]], mode="SYMMETRIC"),
                "gather_batch": tf.gather(params, ids % 3, axis=2, batch_dims=1),
                "gather_axis1": tf.gather(params, ids % 5, axis=1),
                "reverse": tf.reverse(params, [0, 2]),
                "space_to_batch": tf.space_to_batch_nd(image, [2, 2], [[0, 1], [1, 0]]),
                "list_stack": ta.stack(), "list_read": ta.read(1), "popped": popped,
                "list_length": R.TensorListLength(input_handle=lst),
                "list_shape": R.TensorListElementShape(input_handle=lst, shape_type=tf.int32),
                "while_list": grown.stack(), "while_n": n,
                "uniform_int": tf.random.uniform((3, 4), maxval=17, dtype=tf.int32, seed=3),
                "uniform_f64": tf.random.uniform((5,), dtype=tf.float64, seed=5),
                "stateless_v1": R.StatelessRandomUniform(shape=[4], seed=tf.constant([5, 6], tf.int64)),
                "as_string_fmt": tf.strings.as_string(params[0, :, 0], precision=3, width=9, fill="0"),
                "as_string_sci": tf.strings.as_string(params[0, :, 1], scientific=True),
                "as_string_int": tf.strings.as_string(ids),
                "as_string_bool": tf.strings.as_string(ids > 2),
                "utf8_length": tf.strings.length(strings, unit="UTF8_CHAR"),
                "byte_length": tf.strings.length(strings),
                "to_int": tf.strings.to_number(tf.strings.as_string(ids), out_type=tf.int32),
                "call": inner(params),
                "if_stateful": tf.cond(tf.reduce_sum(params) > 0, lambda: params + tf.random.uniform((2, 5, 3), seed=9),
                                       lambda: params * 2.0),
            }
        return serve, {"image": images((1, 7, 7, 3)), "params": images((2, 5, 3)), "ids": tokens((2, 4), 100)}

    def layers_zoo():
        """Stock Keras layers beyond the models above: transposed and grouped conv, upsampling, resizing, pooling,
        activations."""
        inp = keras.Input((8, 8, 3), name="image")
        x = layers.Conv2DTranspose(4, 3, strides=2, padding="same")(inp)
        x = layers.LeakyReLU(negative_slope=0.1)(x)
        y = layers.Conv2DTranspose(4, 3, strides=2, padding="valid", activation="elu")(inp)
        y = layers.Resizing(16, 16, interpolation="bilinear")(y)
        z = layers.UpSampling2D(2)(layers.Conv2D(4, 1, activation="selu")(inp))
        w = layers.Resizing(16, 16, interpolation="nearest")(inp)
        x = layers.Concatenate()([x, y, z, w])
        x = layers.Conv2D(6, 3, padding="same", groups=3)(x)  # a grouped Conv2D (filter with 15 / 3 inputs)
        x = layers.AveragePooling2D(3, strides=2, padding="same")(x)
        x = layers.Activation("softplus")(x)
        x = layers.Conv2D(6, 3, padding="same", activation="softsign")(x)
        x = layers.GlobalMaxPooling2D()(x)
        out = layers.Dense(5, activation="log_softmax")(x)
        return keras.Model(inp, out), {"image": images((2, 8, 8, 3))}

    def math_zoo():
        """TF's integer arithmetic and index ops with their own semantics (negative operands, masks, exclusives)."""
        R = tf.raw_ops

        @tf.function(input_signature=[tf.TensorSpec((3, 4), tf.float32, name="x"),
                                      tf.TensorSpec((3, 4), tf.int32, name="k")])
        def serve(x, k):
            j = k - 50
            d = tf.constant([3, -3, 7, -7], tf.int32)
            return {
                "floordiv": tf.math.floordiv(j, d), "floormod": tf.math.floormod(j, d),
                "truncatediv": R.TruncateDiv(x=j, y=d), "truncatemod": R.TruncateMod(x=j, y=d),
                "div_int": R.Div(x=j, y=d), "floormod_f": tf.math.floormod(x * 5.0, -1.5),
                "div_no_nan": tf.math.divide_no_nan(x, tf.round(x)),
                "one_hot": tf.one_hot(k % 5, 5, on_value=2.0, off_value=-1.0, axis=1),
                "argmax": tf.argmax(x, axis=1), "argmin": tf.argmin(x, axis=0, output_type=tf.int32),
                "cumsum": tf.cumsum(x, axis=1, exclusive=True, reverse=True),
                "tile": tf.tile(x[:1], [2, 3]), "broadcast": tf.broadcast_to(x[:, :1], (3, 5)),
                "clip": tf.clip_by_value(x, -0.5, 0.5), "where": tf.where(x > 0.3),
                "select_rows": R.Select(condition=x[:, 0] > 0, x=x, y=-x),
                "any": tf.reduce_any(x > 1.0, axis=1), "min": tf.reduce_min(x, axis=0),
                "erf": tf.math.erf(x), "sign": tf.sign(x), "square": tf.square(x), "log1p": tf.math.log1p(tf.abs(x)),
                "equal": tf.equal(k % 3, 0), "not_equal": tf.not_equal(k % 2, 0),
                "logic": tf.logical_or(tf.logical_not(x > 0), tf.math.is_finite(x)),
                "fill": tf.fill([2, 3], 1.5), "zeros_like": tf.zeros_like(k), "ones_like": tf.ones_like(x),
                "atan2": tf.math.atan2(x, x[::-1]), "identity_n": tf.identity_n([x, x * 2.0])[1], "floor_ceil": tf.floor(x) + tf.math.ceil(x),
            }
        return serve, {"x": images((3, 4)), "k": tokens((3, 4), 100)}

    def switch_case():
        """tf.switch_case: a StatelessCase in the SavedModel (freezing lowers it to v1 _SwitchN/Merge)."""
        @tf.function(input_signature=[tf.TensorSpec((2, 3), tf.float32, name="x"),
                                      tf.TensorSpec((), tf.int32, name="k")])
        def serve(x, k):
            a = tf.nn.relu(x * 2.0 + 1.0)
            b = tf.switch_case(k, [lambda: a * 2.0, lambda: tf.tanh(a), lambda: a - 1.0])
            c = tf.switch_case(k + 5, [lambda: a * 3.0, lambda: a + 3.0])  # out of range: the last branch
            return {"y": b + c}
        return serve, {"x": images((2, 3)), "k": np.array(1, np.int32)}

    def jit_call():
        """A jit_compile tf.function reading a variable, called from the served function: TF keeps the call
        (it is not inlined) and auto-clustering refuses it (a resource op in a called function)."""
        class JitCall(tf.Module):
            def __init__(self):
                super().__init__()
                self.w = tf.Variable(rng.standard_normal((4, 4)).astype(np.float32))

            @tf.function(jit_compile=True)
            def inner(self, a):
                return tf.tanh(tf.matmul(a, self.w)) * 2.0 + 1.0

            @tf.function(input_signature=[tf.TensorSpec((3, 4), tf.float32, name="x")])
            def serve(self, x):
                y = tf.nn.relu(x * 2.0 + 1.0) * 3.0 - 1.0
                return {"y": tf.exp(self.inner(y) * 0.1) * 2.0 + y}
        return JitCall(), {"x": images((3, 4))}

    def shape_chain():
        # a cluster that reads only the input's shape (Shape -> StridedSlice -> Range -> ... -> Exp), apart from
        # the one that reads its values; string ops (no XLA kernel) between: XLA folds the first to a constant,
        # as Grappler does (issue 36: constant clusters claim no speedup)
        @tf.function(input_signature=[tf.TensorSpec((None, 6), tf.float32, name="x")])
        def serve(x):
            n = tf.shape(x)[1]
            w = tf.exp(tf.cast(tf.range(n), tf.float32) * 0.25 + 1.0) / tf.cast(n, tf.float32)
            w = tf.strings.to_number(tf.strings.as_string(w, precision=4))
            y = tf.nn.relu(x * 2.0 + 1.0) * 0.5 - x
            y = tf.strings.to_number(tf.strings.as_string(y, precision=4))
            return {"y": tf.tanh(y * w + 0.5) * 3.0}
        return serve, {"x": images((2, 6))}

    def flatten_dynamic():
        # saved with its batch dimension unknown (None), as model.export and keras.Input((8, 8, 3)) save it:
        # Flatten's Reshape target is Pack(Shape(x)[0], -1), a Shape-of-input chain in the cluster (issue 36:
        # the walk for must-be-constant inputs went through tf.Shape and baked the image into the cluster)
        m = keras.Sequential([keras.Input((8, 8, 3)), layers.Conv2D(4, 3, activation="relu"),
                              layers.Flatten(), layers.Dense(5, activation="softmax")])
        return settle_bn(m), {"image": images((2, 8, 8, 3))}, {"image": (None, 8, 8, 3)}

    def var_in_function():
        """A tf.function that creates its variable on its first call (tf.Variable inside the function): the
        SavedModel's function graph holds the VarHandleOp, whose value is in the variables folder."""
        class Lazy(tf.Module):
            def __init__(self):
                super().__init__()
                self.w = None

            @tf.function(input_signature=[tf.TensorSpec((2, 3), tf.float32, name="x")])
            def serve(self, x):
                if self.w is None:
                    self.w = tf.Variable(np.round(rng.standard_normal((3, 4)) * 64.0).astype(np.float32) / 64.0)
                return {"y": tf.tanh(tf.matmul(x, self.w)) * 2.0 + 1.0}
        return Lazy(), {"x": images((2, 3))}

    def dynamic_conv():
        """A small conv model with Keras's fully dynamic image input (None, None, None, 3), as
        keras.applications make it, fed a 1x16x16x3 array: every unknown dimension is its own."""
        class Dyn(tf.Module):
            def __init__(self):
                super().__init__()
                inp = keras.Input((None, None, 3), name="inputs")
                x = layers.Conv2D(4, 3, strides=2, padding="same", activation="relu")(inp)
                x = layers.DepthwiseConv2D(3, padding="same", activation="relu6")(x)
                x = layers.GlobalAveragePooling2D()(x)
                self.model = settle_bn(keras.Model(inp, layers.Dense(5, activation="softmax")(x)))

            @tf.function(input_signature=[tf.TensorSpec((None, None, None, 3), tf.float32, name="inputs")])
            def serve(self, inputs):
                return {"output": self.model(inputs, training=False)}
        return Dyn(), {"inputs": images((1, 16, 16, 3))}

    def application(cls, size: int, **kw):
        def make():
            m = cls(input_shape=(size, size, 3), include_top=True, weights=None, classes=10, **kw)
            return settle_bn(m), {"image": images((1, size, size, 3))}
        return make

    big = {"resnet50": application(keras.applications.ResNet50, 32),
           "efficientnet_b0": application(keras.applications.EfficientNetB0, 32),
           "mobilenet_v3_small": application(keras.applications.MobileNetV3Small, 32),
           "densenet121": application(keras.applications.DenseNet121, 32),
           "nasnet_mobile": application(keras.applications.NASNetMobile, 32),
           "convnext_tiny": application(keras.applications.ConvNeXtTiny, 32),
           "xception": application(keras.applications.Xception, 71),
           "inception_v3": application(keras.applications.InceptionV3, 75)}
    if BIG:  # too large to commit: made into another folder for docs/real-models.md's table
        return big, Functions

    return {"mobilenet_v2": mobilenet_v2, "mobilenet_v1": mobilenet_v1, "text_lstm": text_lstm,
            "text_bigru": text_bigru, "conv1d": conv1d, "attention_encoder": attention_encoder,
            "while_cond": while_cond, "random_strings": random_strings, "ops_zoo": ops_zoo,
            "layers_zoo": layers_zoo, "math_zoo": math_zoo, "jit_call": jit_call,
            "switch_case": switch_case, "flatten_dynamic": flatten_dynamic,
            "shape_chain": shape_chain, "var_in_function": var_in_function, "dynamic_conv": dynamic_conv}, Functions


def export(name: str, make, functions_cls, out: str) -> dict:
    import keras
    import numpy as np
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    keras.backend.clear_session()
    obj, feeds, *shapes = make()   # (a third item: the signature's shapes where they differ from the feeds')
    shapes = shapes[0] if shapes else {}
    module = functions_cls()
    if isinstance(obj, keras.Model):
        model = obj
        module.model = model
        specs = [tf.TensorSpec(shapes.get(k, v.shape), tf.as_dtype(v.dtype), name=k) for k, v in feeds.items()]
        (key,) = feeds
        module.serve = tf.function(lambda t: {"output": model(t, training=False)}, input_signature=specs)
    elif isinstance(obj, tf.Module):
        module = obj  # (its variables are tracked by it)
    else:
        module.serve = obj
    concrete = module.serve.get_concrete_function()
    sm = os.path.join(out, f"{name}_savedmodel")
    shutil.rmtree(sm, ignore_errors=True)
    tf.saved_model.save(module, sm, signatures={"serving_default": concrete})
    frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=False)  # keep While/If functional
    gd = frozen.graph.as_graph_def()
    data = gd.SerializeToString()
    with open(os.path.join(out, f"{name}_frozen.pb"), "wb") as f:
        f.write(data)
    if len(data) > GZIP_OVER and not BIG:  # a large application is committed gzipped (tests unpack it)
        with open(os.path.join(out, f"{name}_frozen.pb.gz"), "wb") as f:
            f.write(gzip.compress(data, mtime=0))
    if name in LOWERED:  # frozen for serving as TF does by default: While/If/Case lowered to v1 control flow
        lowered = convert_variables_to_constants_v2(concrete).graph.as_graph_def()
        with open(os.path.join(out, f"{name}_lowered.pb"), "wb") as f:
            f.write(lowered.SerializeToString(deterministic=True))
        with tf.Graph().as_default() as g:  # its own outputs, from its own run
            tf.graph_util.import_graph_def(lowered, name="")
            with tf.compat.v1.Session(graph=g) as sess:
                vals = sess.run([t.name for t in frozen.outputs],
                                {t.name: feeds[k] for t, k in zip(frozen.inputs, list(feeds))})
        np.savez(os.path.join(out, f"{name}_lowered_io.npz"), **{f"in_{k}": v for k, v in feeds.items()},
                 **{f"out_{k}": _plain(v) for k, v in zip(sorted(concrete.structured_outputs), vals)})
    # TF's outputs: the frozen graph in a fresh session (stateful random streams start at 0, as in a new process)
    out_keys = sorted(concrete.structured_outputs)
    out_tensors = [t.name for t in frozen.outputs]
    in_tensors = [t.name for t in frozen.inputs]
    with tf.Graph().as_default() as g:
        tf.graph_util.import_graph_def(gd, name="")
        with tf.compat.v1.Session(graph=g) as sess:
            order = list(feeds)
            vals = sess.run(out_tensors, {t: feeds[k] for t, k in zip(in_tensors, order)})
    # frozen.outputs follow the flattened structured outputs (sorted dict keys)
    outputs = dict(zip(out_keys, vals))
    loaded = tf.saved_model.load(sm).signatures["serving_default"]
    sig_out = loaded(**{k: tf.constant(v) for k, v in feeds.items()})
    det = {k: float(np.max(np.abs(sig_out[k].numpy().astype(np.float64) - np.asarray(v, np.float64))))
           for k, v in outputs.items() if np.asarray(v).dtype.kind in "fiub"}
    np.savez(os.path.join(out, f"{name}_io.npz"), **{f"in_{k}": v for k, v in feeds.items()},
             **{f"out_{k}": _plain(v) for k, v in outputs.items()})
    sizes = {"frozen_pb": os.path.getsize(os.path.join(out, f"{name}_frozen.pb")),
             "savedmodel": sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(sm) for f in fs)}
    return {"inputs": {k: [list(v.shape), str(v.dtype)] for k, v in feeds.items()},
            "outputs": {k: [list(np.shape(v)), str(np.asarray(v).dtype)] for k, v in outputs.items()},
            "frozen_inputs": in_tensors, "frozen_outputs": out_tensors,
            "frozen_ops": sorted({n.op for n in gd.node} | {n.op for f in gd.library.function for n in f.node_def}),
            "frozen_nodes": len(gd.node), "bytes": sizes,
            "savedmodel_vs_frozen_max_abs": det, "tf_version": tf.__version__, "keras_version": keras.__version__}


def export_archive(name: str, out: str) -> dict:
    """keras_export: a Keras model saved with Model.export() (Keras 3's ExportArchive): its serving function
    captures handles to variables it names `kernel_1`, ...; the object graph binds them to the model's variables.
    TF's outputs come from the reloaded SavedModel's signature."""
    import keras
    import numpy as np
    import tensorflow as tf
    from keras import layers

    keras.backend.clear_session()
    rng = np.random.default_rng(1)
    m = keras.Sequential([keras.Input((3,), name="x"), layers.Dense(4), layers.BatchNormalization(),
                          layers.Dense(2, activation="tanh")])
    for w in m.weights:
        w.assign(np.round(rng.standard_normal(w.shape) * 32.0).astype(np.float32) / 64.0 + (1.0 if "variance" in w.path
                                                                                            else 0.0))
    sm = os.path.join(out, f"{name}_savedmodel")
    shutil.rmtree(sm, ignore_errors=True)
    m.export(sm)
    feeds = {"x": rng.standard_normal((2, 3)).astype(np.float32)}
    sig = tf.saved_model.load(sm).signatures["serving_default"]
    (arg,) = sig.structured_input_signature[1]
    outputs = {k: v.numpy() for k, v in sig(**{arg: tf.constant(feeds["x"])}).items()}
    np.savez(os.path.join(out, f"{name}_io.npz"), **{f"in_{arg}": feeds["x"]},
             **{f"out_{k}": v for k, v in outputs.items()})
    return {"inputs": {arg: [[2, 3], "float32"]}, "outputs": {k: [list(v.shape), str(v.dtype)] for k, v in outputs.items()},
            "tf_version": tf.__version__, "keras_version": keras.__version__}


def _plain(v):
    """TF's outputs as arrays numpy reads back without pickle (strings as unicode arrays)."""
    import numpy as np

    a = np.asarray(v)
    if a.dtype == object:
        return np.vectorize(lambda b: b.decode("utf-8") if isinstance(b, bytes) else str(b), otypes=[str])(a) \
            if a.size else a.astype(str)
    return a


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--only", default="")
    ap.add_argument("--big", action="store_true", help="the larger keras.applications (use another --out)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    models, functions_cls = _models()
    only = [n for n in args.only.split(",") if n]
    index_path = os.path.join(args.out, "index.json")
    index = json.load(open(index_path, encoding="utf-8")) if os.path.isfile(index_path) else {}
    for name, make in models.items():
        if only and name not in only:
            continue
        index[name] = export(name, make, functions_cls, args.out)
        print(name, index[name]["frozen_nodes"], "nodes", index[name]["bytes"], file=sys.stderr, flush=True)
    if not only or "keras_export" in only:
        index["keras_export"] = export_archive("keras_export", args.out)
    with open(index_path, "w", encoding="utf-8") as f:
        json.dump(dict(sorted(index.items())), f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
