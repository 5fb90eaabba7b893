"""Run TensorFlow's own MarkForCompilationPass on generated graphs (executed by a Python that has TF).

Reads a JSON list of graph specs on stdin, writes a JSON list of results on stdout. Each spec is
{"name", "nodes": [{"name", "op", "inputs"}]} over float32[4, 4] tensors with graph inputs "x" and "w".
For each: build a tf.function, run it once under auto-clustering with min cluster size 1 and the
clustering debug dump on, then read back the graph TF clustered ("before") and its clusters.
"""
import glob
import json
import os
import sys
import tempfile

dump = tempfile.mkdtemp(prefix="tfmark-")
os.environ["TF_XLA_FLAGS"] = ("--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit --tf_xla_min_cluster_size=1 "
                              "--tf_xla_clustering_debug")
os.environ["TF_DUMP_GRAPH_PREFIX"] = dump
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402

tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})


def build(spec):
    def fn(x, w):
        env = {"x": x, "w": w}
        outs = []
        used = set()
        for nd in spec["nodes"]:
            a = [env[i] for i in nd["inputs"]]
            used.update(nd["inputs"])
            name, op = nd["name"], nd["op"]
            if op == "Relu":
                t = tf.raw_ops.Relu(features=a[0], name=name)
            elif op == "Sigmoid":
                t = tf.raw_ops.Sigmoid(x=a[0], name=name)
            elif op == "AddV2":
                t = tf.raw_ops.AddV2(x=a[0], y=a[1], name=name)
            elif op == "Mul":
                t = tf.raw_ops.Mul(x=a[0], y=a[1], name=name)
            elif op == "Identity":
                t = tf.raw_ops.Identity(input=a[0], name=name)
            elif op == "Shape":
                t = tf.raw_ops.Shape(input=a[0], name=name)
            elif op == "Reshape":
                t = tf.raw_ops.Reshape(tensor=a[0], shape=a[1], name=name)
            elif op == "EagerPyFunc":
                t = tf.py_function(lambda v: v, [a[0]], tf.float32, name=name)
                t.set_shape([4, 4])
            else:
                raise ValueError(op)
            env[name] = t
        for nd in spec["nodes"]:
            if nd["name"] not in used and nd["op"] != "Shape":
                outs.append(env[nd["name"]])
        return outs

    return tf.function(fn)


def newest(pattern):
    files = sorted(glob.glob(os.path.join(dump, pattern)), key=os.path.getmtime)
    return files[-1] if files else None


def read(path):
    gd = tf.compat.v1.GraphDef()
    text_format.Parse(open(path).read(), gd)
    return gd


results = []
x = np.ones((4, 4), np.float32)
for spec in json.load(sys.stdin):
    for f in glob.glob(os.path.join(dump, "*")):
        os.remove(f)
    build(spec)(x, x)
    before, after = newest("before_mark_for_compilation*.pbtxt"), newest("mark_for_compilation_annotated*.pbtxt")
    if before is None or after is None:
        results.append({"name": spec["name"], "error": "no dump"})
        continue
    nodes = [{"name": n.name, "op": n.op, "inputs": list(n.input)} for n in read(before).node]
    clusters = {}
    for n in read(after).node:
        head, _, rest = n.name.partition("/")
        if head.startswith("cluster_"):
            clusters.setdefault(head, []).append(rest)
    results.append({"name": spec["name"], "nodes": nodes, "clusters": sorted(sorted(v) for v in clusters.values())})
json.dump(results, sys.stdout)
