"""Indexing and sampling ops (ops/indexing.py, ops/pooling.py, ops/sampling.py) against onnxruntime, native and jit,
on random inputs beyond ONNX's node tests: out-of-range sampling grids, odd crops, regions partly off the image,
adaptive RoiAlign sampling, MaxUnpool of MaxPool's own indices."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.passes.prepare import prepare
from xcviz.loaders.onnx_model import graph_from_model
from xcviz.ops.arrays import Unsupported
from xcviz.runtime.execute import execute
from xcviz.runtime.inputs import bind_inputs
from xcviz.runtime.jit import CompileCache

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(7)
F = TensorProto.FLOAT


def _model(node, feeds: dict, consts: dict | None = None, opset: int = 24):
    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for k, v in feeds.items()]
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (consts or {}).items()]
    outs = [helper.make_tensor_value_info(o, F, None) for o in node.output]
    g = helper.make_graph([node], "t", ins, outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _check(model, feeds, modes=("native", "jit"), atol=1e-5):
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    g = prepare(graph_from_model(model, "m"), onnx=True)
    for mode in modes:
        got = list(execute(g, bind_inputs(g, feeds), mode, cache=CompileCache()).outputs.values())
        for k, (a, b) in enumerate(zip(got, want)):
            assert a.shape == b.shape and a.dtype == b.dtype, (mode, k, a.shape, b.shape)
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=atol, err_msg=f"{mode} output {k}")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_2d_with_points_outside_the_image(mode, pad, align):
    x = RNG.standard_normal((2, 3, 5, 7)).astype(np.float32)
    grid = RNG.uniform(-2.6, 2.6, (2, 4, 6, 2)).astype(np.float32)
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=pad, align_corners=align)
    if (mode, pad) == ("cubic", "border"):  # onnxruntime and ONNX's reference disagree: xcviz says so
        g = prepare(graph_from_model(_model(node, {"x": x, "grid": grid}), "m"), onnx=True)
        with pytest.raises(Unsupported, match="border"):
            execute(g, bind_inputs(g, {"x": x, "grid": grid}), "native")
        return
    _check(_model(node, {"x": x, "grid": grid}), {"x": x, "grid": grid}, atol=1e-4)


@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid_feeds_grid_sample(align):
    theta = RNG.standard_normal((2, 2, 3)).astype(np.float32)
    x = RNG.standard_normal((2, 3, 6, 5)).astype(np.float32)
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align),
             helper.make_node("GridSample", ["x", "grid"], ["y"], align_corners=align)]
    ins = [helper.make_tensor_value_info("theta", F, theta.shape), helper.make_tensor_value_info("x", F, x.shape)]
    g = helper.make_graph(nodes, "t", ins, [helper.make_tensor_value_info(o, F, None) for o in ("grid", "y")],
                          [numpy_helper.from_array(np.array([2, 3, 4, 7], np.int64), "size")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    _check(m, {"theta": theta, "x": x}, atol=1e-4)


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_with_regions_partly_off_the_image(mode, ctm, ratio):
    x = RNG.standard_normal((2, 3, 9, 11)).astype(np.float32)
    lo = RNG.uniform(-3, 8, (5, 2))
    rois = np.concatenate([lo, lo + RNG.uniform(0.3, 7, (5, 2))], axis=1).astype(np.float32)
    batch = RNG.integers(0, 2, 5).astype(np.int64)
    node = helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], mode=mode, output_height=3, output_width=2,
                            sampling_ratio=ratio, spatial_scale=0.9, coordinate_transformation_mode=ctm)
    feeds = {"x": x, "rois": rois, "b": batch}
    _check(_model(node, feeds, opset=16), feeds, modes=("native", "jit") if ratio else ("native",), atol=1e-4)


def test_roi_align_of_opset_10_keeps_its_output_half_pixel_behaviour():
    x = RNG.standard_normal((1, 2, 8, 8)).astype(np.float32)
    rois = np.array([[0.5, 1.0, 5.5, 6.0], [2.0, 0.0, 3.0, 7.5]], np.float32)
    node = helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], output_height=2, output_width=3)
    feeds = {"x": x, "rois": rois, "b": np.zeros(2, np.int64)}
    _check(_model(node, feeds, opset=10), feeds, modes=("native",), atol=1e-4)


def test_roi_align_adaptive_sampling_refuses_to_compile():
    from xcviz.ops import REGISTRY

    x, rois = np.zeros((1, 1, 4, 4), np.float32), np.array([[0, 0, 3, 3]], np.float32)
    with pytest.raises(Unsupported, match="sampling_ratio"):
        REGISTRY.ops["roi_align"].jax({"sampling_ratio": 0}, x, rois, np.zeros(1, np.int64))


def test_reverse_sequence_and_compress():
    x = RNG.standard_normal((4, 3, 2)).astype(np.float32)
    lens = np.array([2, 4, 0], np.int64)
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=1, time_axis=0)
    _check(_model(node, {"x": x, "lens": lens}), {"x": x, "lens": lens})
    cond = np.array([True, False, True], bool)
    node = helper.make_node("Compress", ["x", "c"], ["y"], axis=-2)
    _check(_model(node, {"x": x, "c": cond}), {"x": x, "c": cond})


@pytest.mark.parametrize("sizes,axes", [([3, 8], [1, 2]), ([5, 2, 4], None), ([1], [-1])])
def test_center_crop_pad_odd_differences(sizes, axes):
    x = RNG.standard_normal((4, 5, 6)).astype(np.float32)
    kw = {} if axes is None else {"axes": axes}
    node = helper.make_node("CenterCropPad", ["x", "s"], ["y"], **kw)
    _check(_model(node, {"x": x}, {"s": np.array(sizes, np.int64)}), {"x": x})


@pytest.mark.slow
def test_col2im_with_strides_pads_and_dilations():
    x = RNG.standard_normal((2, 2 * 6, 12)).astype(np.float32)  # C=2, kernel 2x3, blocks 3x4
    node = helper.make_node("Col2Im", ["x", "img", "blk"], ["y"], strides=[2, 1], pads=[1, 0, 0, 2],
                            dilations=[1, 2])
    consts = {"img": np.array([5, 6], np.int64), "blk": np.array([2, 3], np.int64)}
    _check(_model(node, {"x": x}, consts), {"x": x})


def _unpool_model(shape):
    nodes = [helper.make_node("MaxPool", ["x"], ["p", "i"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("MaxUnpool", ["p", "i", "shape"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("x", F, shape)],
                          [helper.make_tensor_value_info("y", F, None)],
                          [numpy_helper.from_array(np.array(shape, np.int64), "shape")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])


def test_max_unpool_of_max_pool_indices_with_an_output_shape():
    x = RNG.standard_normal((2, 3, 6, 4)).astype(np.float32)
    _check(_unpool_model(x.shape), {"x": x})


def test_max_unpool_refuses_an_output_shape_on_which_onnx_and_onnxruntime_disagree():
    x = RNG.standard_normal((2, 3, 7, 6)).astype(np.float32)
    g = prepare(graph_from_model(_unpool_model(x.shape), "m"), onnx=True)
    with pytest.raises(Unsupported, match="output_shape"):
        execute(g, bind_inputs(g, {"x": x}), "native")


@pytest.mark.parametrize("mode", ["linear", "circular"])
def test_tensor_scatter_writes_each_batch_row_at_its_position(mode):
    cache = RNG.standard_normal((3, 2, 6, 4)).astype(np.float32)
    upd = RNG.standard_normal((3, 2, 3, 4)).astype(np.float32)
    idx = np.array([0, 3, 5 if mode == "circular" else 2], np.int64)
    node = helper.make_node("TensorScatter", ["c", "u", "i"], ["y"], mode=mode, axis=2)
    feeds = {"c": cache, "u": upd, "i": idx}
    _check(_model(node, feeds), feeds)
