"""Ask TensorFlow itself which TF ops its auto-clustering compiles on CPU: the ground truth for ops/xla_support.py.

Run with a Python that has TensorFlow (tensorflow-cpu==2.21.0 in a venv of its own):

    /work/venv-tf/bin/python tools/tf_autoclustering.py tests/data/tf_suite/autoclustering_ops.json

One TF1 graph holds one node of every TF op xcviz maps an ONNX/xcviz op onto (ops/xla_support.py TF_EQUIV,
but While and If, whose verdict depends on their bodies), plus the ops xcviz refuses (Unique, RandomUniform,
Where, NonMaxSuppressionV4), each fed by placeholders so nothing folds away. It runs once with
--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit --tf_xla_min_cluster_size=1; the op of every node that
MarkForCompilationPass put in a cluster (TF's mark_for_compilation_annotated dump) is "clustered"."""
import glob
import json
import os
import sys
import tempfile

SCRATCH = tempfile.mkdtemp(prefix="tfauto-")
os.environ["TF_XLA_FLAGS"] = ("--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit --tf_xla_min_cluster_size=1 "
                              "--tf_xla_clustering_debug")
os.environ["TF_DUMP_GRAPH_PREFIX"] = SCRATCH
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402

R = tf.raw_ops
UNARY = ("Abs Acos Acosh Asin Asinh Atan Atanh Ceil Cos Cosh Elu Erf Exp Floor Identity IsInf IsNan LeakyRelu Log "
         "LogSoftmax Neg Reciprocal Relu Relu6 Round Rsqrt Selu Sigmoid Sign Sin Sinh Softmax Softplus Softsign Sqrt "
         "Tan Tanh").split()
BINARY = ("AddV2 Div Equal FloorMod Greater GreaterEqual Less LessEqual Maximum Minimum Mul Pow RealDiv "
          "SquaredDifference Sub TruncateMod").split()


def unary(op: str, t):
    """A one-input raw op, whatever TF names its input."""
    for arg in ("x", "features", "input", "logits"):
        try:
            return getattr(R, op)(**{arg: t})
        except TypeError:
            continue
    raise TypeError(f"cannot call {op} with one input")


def build(feeds: dict) -> list:
    def ph(name, shape, dtype=tf.float32, value=None):
        p = tf.compat.v1.placeholder(dtype, shape, name=name)
        feeds[p] = value if value is not None else np.random.default_rng(0).random(shape).astype(dtype.as_numpy_dtype)
        return p

    x = ph("x", [2, 4, 4, 3])
    v = ph("v", [8])
    m = ph("m", [4, 4])
    b = ph("b", [4, 4], tf.bool, np.eye(4, dtype=bool))
    i = ph("i", [2, 4, 4, 3], tf.int32, np.ones((2, 4, 4, 3), np.int32))
    idx = ph("idx", [2, 1], tf.int32, np.array([[0], [1]], np.int32))
    n = ph("n", [], tf.int32, np.int32(5))
    x5 = ph("x5", [1, 4, 4, 4, 2])
    boxes = ph("boxes", [3, 4], value=np.array([[0, 0, 1, 1], [0, 0, 1, 1.1], [2, 2, 3, 3]], np.float32))
    scores = ph("scores", [3], value=np.array([0.9, 0.8, 0.7], np.float32))
    f3 = tf.constant(np.ones((3, 3, 3, 4), np.float32))
    # every result is consumed inside the graph: TF declusters a Fill used only outside its cluster
    # (DeclusterNodes) and an Identity alone is a cluster of effective size 0
    out = [unary(op, m) for op in UNARY if op != "Identity"] + [R.Identity(input=m) * 2.0]
    out += [getattr(R, op)(x=m, y=m + 1) for op in BINARY]
    out += [R.LogicalAnd(x=b, y=b), R.LogicalOr(x=b, y=b), R.LogicalNot(x=b)]
    out += [R.ArgMax(input=m, dimension=0), R.ArgMin(input=m, dimension=0), R.Cast(x=m, DstT=tf.int32),
            R.ClipByValue(t=m, clip_value_min=0.2, clip_value_max=0.5), R.ConcatV2(values=[m, m], axis=0),
            R.Fill(dims=tf.stack([n, n]), value=1.0) * 2.0, R.Range(start=0, limit=n, delta=1),
            R.Cumsum(x=m, axis=0), R.Cumprod(x=m, axis=0), R.Einsum(inputs=[m, m], equation="ij,jk->ik"),
            R.BroadcastTo(input=v, shape=[2, 8]), R.Reshape(tensor=m, shape=[16]), R.Rank(input=m), R.Shape(input=m),
            R.Size(input=m), R.GatherV2(params=m, indices=idx[:, 0], axis=0), R.GatherNd(params=m, indices=idx),
            R.MatMul(a=m, b=m), R.BatchMatMulV2(x=x, y=tf.transpose(x, [0, 1, 3, 2])),
            R.Mean(input=m, axis=0), R.Max(input=m, axis=0), R.Min(input=m, axis=0), R.Prod(input=m, axis=0),
            R.Sum(input=m, axis=0), R.AddN(inputs=[m, m]), R.OneHot(indices=idx[:, 0], depth=4, on_value=1.0,
                                                                     off_value=0.0),
            R.PadV2(input=m, paddings=[[1, 1], [1, 1]], constant_values=0.0),
            R.MirrorPad(input=m, paddings=[[1, 1], [1, 1]], mode="REFLECT"),
            R.StridedSlice(input=m, begin=[0, 0], end=[2, 2], strides=[1, 1]),
            R.SplitV(value=m, size_splits=[2, 2], axis=0, num_split=2)[0], R.Squeeze(input=m[None]),
            R.Tile(input=m, multiples=[2, 1]), R.TopKV2(input=m, k=2)[0], R.Transpose(x=m, perm=[1, 0]),
            R.MatrixBandPart(input=m, num_lower=0, num_upper=-1), R.ExpandDims(input=m, axis=0),
            R.SelectV2(condition=b, t=m, e=m + 1), R.TensorScatterUpdate(tensor=m, indices=idx, updates=m[:2]),
            R.TensorScatterAdd(tensor=m, indices=idx, updates=m[:2]),
            R.TensorScatterMax(tensor=m, indices=idx, updates=m[:2]),
            R.TensorScatterMin(tensor=m, indices=idx, updates=m[:2]),
            R.AvgPool(value=x, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="VALID"),
            R.MaxPool(input=x, ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="VALID"),
            R.AvgPool3D(input=x5, ksize=[1, 2, 2, 2, 1], strides=[1, 1, 1, 1, 1], padding="VALID"),
            R.MaxPool3D(input=x5, ksize=[1, 2, 2, 2, 1], strides=[1, 1, 1, 1, 1], padding="VALID"),
            R.FusedBatchNormV3(x=x, scale=v[:3], offset=v[:3], mean=v[3:6], variance=v[5:8] + 1,
                               is_training=False)[0],
            R.BiasAdd(value=x, bias=v[:3]), R.LRN(input=x), R.DepthToSpace(input=tf.tile(x, [1, 1, 1, 4]),
                                                                             block_size=2),
            R.Conv2D(input=x, filter=f3, strides=[1, 1, 1, 1], padding="SAME"),
            R.Conv3D(input=x5, filter=tf.ones([2, 2, 2, 2, 2]), strides=[1, 1, 1, 1, 1], padding="SAME"),
            R.DepthwiseConv2dNative(input=x, filter=f3[..., :1], strides=[1, 1, 1, 1], padding="SAME"),
            R.Conv2DBackpropInput(input_sizes=[2, 4, 4, 3], filter=f3, out_backprop=tf.tile(x, [1, 1, 1, 2])[..., :4],
                                  strides=[1, 1, 1, 1], padding="SAME"),
            R.Conv3DBackpropInputV2(input_sizes=[1, 4, 4, 4, 2], filter=tf.ones([2, 2, 2, 2, 2]), out_backprop=x5,
                                    strides=[1, 1, 1, 1, 1], padding="SAME"),
            R.ResizeBilinear(images=x, size=[8, 8]), R.ResizeNearestNeighbor(images=x, size=[8, 8]),
            # int32 Conv2D: ConvInteger/QLinearConv's lowering
            R.Conv2D(input=i, filter=tf.ones([3, 3, 3, 4], tf.int32), strides=[1, 1, 1, 1], padding="SAME"),
            R.MatMul(a=i[0, 0], b=tf.transpose(i[0, 0])),
            # ops_B (bitwise, shifts, EyeLike, SpaceToDepth)
            R.BitwiseAnd(x=i, y=i + 1), R.BitwiseOr(x=i, y=i + 1), R.BitwiseXor(x=i, y=i + 1), R.Invert(x=i),
            R.LeftShift(x=i, y=i), R.RightShift(x=i, y=i), R.SpaceToDepth(input=x, block_size=2),
            R.MatrixDiagV3(diagonal=v[:4], k=1, num_rows=4, num_cols=5, padding_value=0.0),
            # round 4 ops B (DFT, STFT): tf.signal's FFT kernels and the complex plumbing around them
            R.Real(input=R.FFT(input=tf.complex(m, m + 1))), R.Imag(input=R.IFFT(input=tf.complex(m, m))),
            R.Real(input=R.Conj(input=R.RFFT(input=m, fft_length=[4]))),
            R.IRFFT(input=tf.complex(m[:, :3], m[:, :3]), fft_length=[4]) * 2.0,
            # ops_misc: BitCast (bool is a Cast), Det (TF's MatrixDeterminant: refused by xcviz, checked here)
            R.Bitcast(input=m, type=tf.int32) + 1, R.MatrixDeterminant(input=m) * 2.0,
            # refused by xcviz: what TF does with them
            R.Unique(x=v)[0], R.Where(condition=b), R.RandomUniform(shape=[4], dtype=tf.float32),
            R.NonMaxSuppressionV4(boxes=boxes, scores=scores, max_output_size=2, iou_threshold=0.5,
                                  score_threshold=0.0, pad_to_max_output_size=True)[0]]
    return out


def main() -> int:
    target = sys.argv[1]
    tf.compat.v1.disable_eager_execution()
    g = tf.Graph()
    feeds: dict = {}
    with g.as_default():
        fetches = build(feeds)
        cfg = tf.compat.v1.ConfigProto()  # Grappler off: it would remove the Identity and fold constants
        cfg.graph_options.rewrite_options.disable_meta_optimizer = True
        with tf.compat.v1.Session(graph=g, config=cfg) as sess:
            sess.run(fetches, feeds)
    dumps = sorted(glob.glob(os.path.join(SCRATCH, "mark_for_compilation_annotated*")))
    gd = graph_pb2.GraphDef()
    with open(dumps[-1], encoding="utf-8") as f:
        text_format.Parse(f.read(), gd)
    seen: dict[str, set] = {}
    for node in gd.node:
        seen.setdefault(node.op, set()).add(node.name.startswith("cluster_"))
    int32_conv = [nd for nd in gd.node if nd.op == "Conv2D" and nd.attr["T"].type == tf.int32.as_datatype_enum]
    out = {"tf_version": tf.__version__, "source": "tools/tf_autoclustering.py: MarkForCompilationPass on CPU, "
           "min cluster size 1; an op is clustered when every node of it was",
           "clustered": {op: all(v) for op, v in sorted(seen.items())
                         if op not in ("_Arg", "_Retval", "Placeholder", "Const")},  # constants: zero size
           "int32_conv2d_clustered": all(nd.name.startswith("cluster_") for nd in int32_conv) and bool(int32_conv)}
    with open(target, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{sum(out['clustered'].values())}/{len(out['clustered'])} ops clustered", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
