"""Generate tests/data/tf_keras/: small Keras models as TensorFlow writes them (SavedModel and frozen .pb), with TF's outputs.

Run once by a developer with a Python that has TensorFlow (tests never need it; they read the files):

    python3 -m venv /work/venvs/tf && /work/venvs/tf/bin/pip install tensorflow-cpu==2.21.0
    /work/venvs/tf/bin/python tools/tf_keras_corpus.py [--out tests/data/tf_keras] [--only NAME,...]

Every model is random-initialised by its library's own code (keras.applications with `weights=None`, stock
Keras layers, plain tf.functions); nothing is downloaded. For each model NAME it writes NAME_savedmodel/
(signature `serving_default`), NAME_frozen.pb (convert_variables_to_constants_v2 of the same function) and
NAME_frozen.pb.gz when it is over 400 kB, and NAME_io.npz: `in_<signature input name>` arrays and `out_<signature output key>` arrays as TensorFlow
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

    return {"mobilenet_v2": mobilenet_v2, "mobilenet_v1": mobilenet_v1, "text_lstm": text_lstm,
            "text_bigru": text_bigru, "conv1d": conv1d, "attention_encoder": attention_encoder,
            "while_cond": while_cond, "random_strings": random_strings}, Functions


def export(name: str, make, functions_cls, out: str) -> dict:
    import keras
    import numpy as np
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    keras.backend.clear_session()
    obj, feeds = make()
    module = functions_cls()
    if isinstance(obj, keras.Model):
        model = obj
        module.model = model
        specs = [tf.TensorSpec(v.shape, tf.as_dtype(v.dtype), name=k) for k, v in feeds.items()]
        (key,) = feeds
        module.serve = tf.function(lambda t: {"output": model(t, training=False)}, input_signature=specs)
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
    if len(data) > GZIP_OVER:  # a large application is committed gzipped (tests unpack it)
        with open(os.path.join(out, f"{name}_frozen.pb.gz"), "wb") as f:
            f.write(gzip.compress(data, mtime=0))
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
           for k, v in outputs.items() if np.asarray(v).dtype.kind in "fi"}
    np.savez(os.path.join(out, f"{name}_io.npz"), **{f"in_{k}": v for k, v in feeds.items()},
             **{f"out_{k}": np.asarray(v) for k, v in outputs.items()})
    sizes = {"frozen_pb": os.path.getsize(os.path.join(out, f"{name}_frozen.pb")),
             "savedmodel": sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(sm) for f in fs)}
    return {"inputs": {k: [list(v.shape), str(v.dtype)] for k, v in feeds.items()},
            "outputs": {k: [list(np.shape(v)), str(np.asarray(v).dtype)] for k, v in outputs.items()},
            "frozen_inputs": in_tensors, "frozen_outputs": out_tensors,
            "frozen_ops": sorted({n.op for n in gd.node} | {n.op for f in gd.library.function for n in f.node_def}),
            "frozen_nodes": len(gd.node), "bytes": sizes,
            "savedmodel_vs_frozen_max_abs": det, "tf_version": tf.__version__, "keras_version": keras.__version__}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--only", default="")
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
    with open(index_path, "w", encoding="utf-8") as f:
        json.dump(dict(sorted(index.items())), f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
