#!/usr/bin/python3
"""Ops that take run-time sizes one model each (docs/shapes.md): LRN over a
symbolic batch and image (AlexNet's and GoogLeNet's normalization served at
any size), 3-D convolution (groups, dilation, auto_pad SAME at stride 1) and
3-D max and average pooling over a symbolic depth, height and
width (a video clip of any length), LpPool over a symbolic image, 1-D and
2-D max and average pooling over a symbolic number of channels,
LayerNormalization over symbolic normalized sizes, Hardmax at
opset 13 and in the 2-D coercion of opset 11 with symbolic rows, ArgMax
and ArgMin over channels of a symbolic batch and image, TopK of a constant
k followed by a Resize to sizes read from its result, and of a k read from
the data followed by a Range over k, OneHot of
token ids of run-time shape with a constant depth, EyeLike of a run-time
matrix, and per-channel QuantizeLinear/DequantizeLinear of an activation
of run-time batch and length (and along an axis of run-time size, which
must then have the scale's length), and Split along an axis of run-time
size (halves, opset 18's num_outputs, constant sizes; sizes that do not
fit refused at run time naming the node), GridSample with the image's
and the grid's sizes symbolic (2-D in every mode and padding, 3-D linear),
RoiAlign over a run-time number of boxes on an image of run-time size
(against torchvision), and DFT of a batch of signals of run-time count
(against numpy.fft), and a CumSum, nearest upsampling and edge Pad, and an
ArgMax and edge Pad, whose sizes are all followed. Each is compiled once with ranges and run at several
shapes, compared with torch or numpy in float64 (rtol 1e-4, atol 1e-5 for
float results; exact for Hardmax, ArgMax/ArgMin, OneHot, EyeLike and the
int8 round trip), and a size past its range is refused.

usage: check_symbolic_ops.py KILN_COMPILE WORKDIR PYTHONPATH
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper as h, numpy_helper as nh

compile_, work, pythonpath = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

rng = np.random.default_rng(0)
F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def build(name, nodes, x_shape, y_shape, opset, dims, inits=(), x_type=F32,
          y_type=F32):
    graph = h.make_graph(
        nodes, name, [h.make_tensor_value_info("x", x_type, x_shape)],
        [h.make_tensor_value_info("y", y_type, y_shape)], list(inits))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    so = os.path.join(work, name + ".so")
    flags = []
    for sym, (lo, hi) in dims.items():
        flags += ["--dim", f"{sym}={lo}..{hi}"]
    r = subprocess.run([compile_, path, "-o", so] + flags, capture_output=True,
                       text=True)
    assert r.returncode == 0, (name, r.stderr)
    assert "one graph that runs at the sizes given at run time" in r.stderr, \
        (name, r.stderr)
    return kiln.load(so)


def check(name, m, reference, shapes, make=None, exact=False, past=None):
    for shape in shapes:
        x = make(shape) if make else rng.standard_normal(shape).astype(np.float32)
        want = reference(x)
        got = m(x)[0]
        assert got.shape == want.shape, (name, shape, got.shape, want.shape)
        if exact:
            assert np.array_equal(got, want), (name, shape)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5,
                                       err_msg=f"{name} at {shape}")
    if past:
        x = make(past) if make else np.zeros(past, np.float32)
        try:
            m(x)
            raise AssertionError(f"{name}: shape {past} past the range ran")
        except kiln.Error as e:
            assert "outside the range" in str(e), (name, e)
    print(f"{name}: {len(shapes)} shapes match")


T = lambda a: torch.from_numpy(a).double()  # noqa: E731

# LRN over 8 channels, batch and image symbolic.
m = build("lrn", [h.make_node("LRN", ["x"], ["y"], name="lrn", size=5,
                              alpha=2e-3, beta=0.75, bias=2.0)],
          ["n", 8, "h", "w"], ["n", 8, "h", "w"], 13,
          {"n": (1, 4), "h": (1, 64), "w": (1, 64)})
check("LRN", m,
      lambda x: F.local_response_norm(T(x), 5, 2e-3, 0.75, 2.0).numpy(),
      [(1, 8, 1, 1), (2, 8, 13, 7), (4, 8, 64, 33)], past=(1, 8, 65, 4))

# 3-D pooling: depth, height and width symbolic, with pads, strides and a
# dilation (max) and ceil_mode without counting the padding (average).
m = build("maxpool3d", [h.make_node(
    "MaxPool", ["x"], ["y"], name="pool", kernel_shape=[3, 2, 3],
    strides=[2, 1, 2], pads=[1, 0, 1, 1, 1, 1], dilations=[1, 2, 1])],
    ["n", 3, "d", "h", "w"], ["n", 3, None, None, None], 12,
    {"n": (1, 2), "d": (3, 16), "h": (3, 24), "w": (3, 24)})
check("MaxPool 3-D", m,
      lambda x: F.max_pool3d(F.pad(T(x), (1, 1, 0, 1, 1, 1),
                                   value=-np.inf), (3, 2, 3), (2, 1, 2),
                             dilation=(1, 2, 1)).numpy(),
      [(1, 3, 3, 3, 3), (2, 3, 9, 17, 10), (1, 3, 16, 24, 24)],
      past=(1, 3, 17, 4, 4))
m = build("avgpool3d", [h.make_node(
    "AveragePool", ["x"], ["y"], name="pool", kernel_shape=[2, 3, 3],
    strides=[2, 2, 2], pads=[0, 1, 1, 0, 1, 1], ceil_mode=1,
    count_include_pad=0)],
    ["n", 2, "d", "h", "w"], ["n", 2, None, None, None], 19,
    {"n": (1, 2), "d": (2, 16), "h": (3, 24), "w": (3, 24)})
check("AveragePool 3-D", m,
      lambda x: F.avg_pool3d(T(x), (2, 3, 3), 2, padding=(0, 1, 1),
                             ceil_mode=True, count_include_pad=False).numpy(),
      [(1, 2, 2, 3, 3), (2, 2, 7, 11, 16), (1, 2, 16, 24, 23)])

# LpPool p = 2 over a symbolic image.
m = build("lppool", [h.make_node("LpPool", ["x"], ["y"], name="pool",
                                 kernel_shape=[3, 3], strides=[2, 2],
                                 pads=[1, 1, 1, 1], p=2)],
          ["n", 4, "h", "w"], ["n", 4, None, None], 18,
          {"n": (1, 3), "h": (2, 40), "w": (2, 40)})
check("LpPool", m,
      lambda x: F.lp_pool2d(F.pad(T(x), (1, 1, 1, 1)), 2, 3, 2).numpy(),
      [(1, 4, 2, 2), (3, 4, 17, 40), (2, 4, 9, 5)])

# LayerNormalization over sizes of run-time extent (the normalized axes
# symbolic): the decomposition into reductions, scale and bias scalars.
def layer_norm(x, axis):
    axes = tuple(range(axis % x.ndim, x.ndim))
    x = x.astype(np.float64)
    mu = x.mean(axes, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axes, keepdims=True) + 1e-5) * 1.5 + 0.25


for axis, shape, dims, shapes in [
        (1, ["n", "c"], {"n": (1, 4), "c": (1, 8)}, [(1, 1), (3, 7), (4, 8)]),
        (-1, [2, "t", "c"], {"t": (1, 5), "c": (1, 6)}, [(2, 1, 1), (2, 5, 6), (2, 3, 2)])]:
    m = build(f"layernorm_symbolic_{axis % 3}", [h.make_node(
        "LayerNormalization", ["x", "g", "b"], ["y"], name="ln", axis=axis,
        epsilon=1e-5)], shape, None, 17, dims,
        inits=[nh.from_array(np.float32(1.5), "g"), nh.from_array(np.float32(0.25), "b")])
    check(f"LayerNormalization axis {axis} over symbolic sizes", m,
          lambda x, axis=axis: layer_norm(x, axis), shapes)

# Pooling over a symbolic number of channels (no filter to size): 1-D max
# over [batch, channels, time] with ceil_mode and a dilation, 2-D average
# counting the padding, and 2-D max on a static image.
m = build("maxpool1d_channels", [h.make_node(
    "MaxPool", ["x"], ["y"], name="pool", kernel_shape=[3], strides=[2],
    pads=[1, 1], dilations=[2], ceil_mode=1)],
    ["n", "c", "t"], ["n", "c", None], 18,
    {"n": (1, 3), "c": (1, 16), "t": (4, 50)})
check("MaxPool 1-D, symbolic channels", m,
      lambda x: F.max_pool1d(T(x), 3, 2, padding=1, dilation=2,
                             ceil_mode=True).numpy(),
      [(1, 1, 4), (3, 16, 50), (2, 5, 17)], past=(1, 17, 8))
m = build("avgpool_channels", [h.make_node(
    "AveragePool", ["x"], ["y"], name="pool", kernel_shape=[3, 3],
    strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)],
    ["n", "c", "h", "w"], ["n", "c", None, None], 19,
    {"n": (1, 2), "c": (1, 12), "h": (2, 30), "w": (2, 30)})
check("AveragePool, symbolic channels", m,
      lambda x: F.avg_pool2d(T(x), 3, 2, padding=1,
                             count_include_pad=True).numpy(),
      [(1, 1, 2, 2), (2, 12, 30, 29), (1, 7, 11, 6)])
m = build("maxpool_channels_static_image", [h.make_node(
    "MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2],
    strides=[2, 2])],
    [1, "c", 9, 8], [1, "c", 4, 4], 12, {"c": (1, 32)})
check("MaxPool, symbolic channels, static image", m,
      lambda x: F.max_pool2d(T(x), 2, 2).numpy(),
      [(1, 1, 9, 8), (1, 32, 9, 8), (1, 13, 9, 8)], exact=True)


# 3-D convolution over a symbolic batch, depth, height and width (a video
# or volume model at any size): pads, strides, a dilation, groups and a
# bias; then auto_pad SAME_UPPER at stride 1 (its padding fixed).
W3 = (rng.standard_normal((6, 2, 3, 2, 3)) / 6).astype(np.float32)
B3 = rng.standard_normal(6).astype(np.float32)
W4 = (rng.standard_normal((2, 6, 3, 3, 1)) / 6).astype(np.float32)
m = build("conv3d", [
    h.make_node("Conv", ["x", "w3", "b3"], ["c"], name="conv", group=2,
                pads=[1, 0, 1, 2, 1, 0], strides=[2, 1, 2], dilations=[1, 2, 1]),
    h.make_node("Conv", ["c", "w4"], ["y"], name="same", auto_pad="SAME_UPPER")],
    ["n", 4, "d", "h", "w"], ["n", 2, None, None, None], 13,
    {"n": (1, 2), "d": (2, 12), "h": (3, 20), "w": (3, 20)},
    inits=[nh.from_array(W3, "w3"), nh.from_array(B3, "b3"),
           nh.from_array(W4, "w4")])


def conv3d(x):
    c = F.conv3d(F.pad(T(x), (1, 0, 0, 1, 1, 2)), T(W3), T(B3), stride=(2, 1, 2),
                 dilation=(1, 2, 1), groups=2)
    return F.conv3d(F.pad(c, (0, 0, 1, 1, 1, 1)), T(W4)).numpy()


check("Conv 3-D", m, conv3d, [(1, 4, 2, 3, 3), (2, 4, 12, 20, 17),
                              (1, 4, 7, 9, 20)], past=(1, 4, 13, 3, 3))


def hardmax(x, axis):
    # First maximum along the axis, 1 there.
    idx = np.argmax(x, axis=axis)
    out = np.zeros_like(x)
    np.put_along_axis(out, np.expand_dims(idx, axis), 1, axis=axis)
    return out


def ties(shape):
    # Small integers so rows hold ties: the first maximum must win.
    return rng.integers(0, 3, shape).astype(np.float32)


m = build("hardmax13", [h.make_node("Hardmax", ["x"], ["y"], name="hm",
                                    axis=1)],
          ["b", "t", 5], ["b", "t", 5], 13, {"b": (1, 4), "t": (1, 50)})
check("Hardmax 13", m, lambda x: hardmax(x, 1),
      [(1, 1, 5), (3, 17, 5), (4, 50, 5)], make=ties, exact=True)
m = build("hardmax11", [h.make_node("Hardmax", ["x"], ["y"], name="hm",
                                    axis=1)],
          ["b", "t", 5], ["b", "t", 5], 11, {"b": (1, 4), "t": (1, 50)})
check("Hardmax 11", m,
      lambda x: hardmax(x.reshape(x.shape[0], -1), 1).reshape(x.shape),
      [(1, 1, 5), (3, 17, 5), (4, 50, 5)], make=ties, exact=True)

# ArgMax over the classes of a segmentation map and ArgMin over channels,
# batch and image symbolic: only the indices are read, so each thread's
# task copies its slice of the running values. At these bounds a task's
# slice fits a stack buffer of its run-time size (ArgMax: a row of at most
# 4 x 64 floats) or does not (ArgMin: up to 8 x 1024 floats per row), and
# the op then runs on one thread. Both failed to compile before.
m = build("argmax_classes", [h.make_node("ArgMax", ["x"], ["y"], name="am",
                                         axis=1, keepdims=0)],
          ["n", 21, "h", "w"], ["n", "h", "w"], 13,
          {"n": (1, 4), "h": (1, 64), "w": (1, 64)}, y_type=I64)
check("ArgMax over classes", m, lambda x: np.argmax(x, axis=1),
      [(1, 21, 1, 1), (4, 21, 64, 64), (3, 21, 17, 40)], make=ties,
      exact=True, past=(5, 21, 2, 2))
m = build("argmin_wide", [h.make_node("ArgMin", ["x"], ["y"], name="am",
                                      axis=1, keepdims=1)],
          ["n", 8, "h", "w"], ["n", 1, "h", "w"], 13,
          {"n": (1, 8), "h": (1, 16), "w": (1, 1024)}, y_type=I64)
check("ArgMin, wide rows", m, lambda x: np.argmin(x, axis=1)[:, None],
      [(8, 8, 16, 1024), (1, 8, 1, 1), (5, 8, 9, 700)], make=ties,
      exact=True)

# TopK keeps its input's sizes off its axis: the best 3 of 8 channels of a
# symbolic batch and image upsampled to twice the sizes Shape reads from
# them (the Resize is sized by the image's range), and the best k of a row where the data gives k (k at most
# the row, a guard checks it), then Range over k: each bounded by the
# input's ranges. Both were refused before ("give each symbolic dimension
# a range" although every dimension had one).
m = build("topk_upsample",
          [h.make_node("TopK", ["x", "k"], ["v", "i"], name="topk", axis=1),
           h.make_node("Shape", ["v"], ["vs"], name="vshape"),
           h.make_node("Mul", ["vs", "twice"], ["sizes"], name="sizes"),
           h.make_node("Resize", ["v", "", "", "sizes"], ["y"], name="up",
                       mode="nearest")],
          ["n", 8, "h", "w"], ["n", 3, "h2", "w2"], 13,
          {"n": (1, 3), "h": (1, 24), "w": (1, 24)},
          inits=[nh.from_array(np.array([3], np.int64), "k"),
                 nh.from_array(np.array([1, 1, 2, 2], np.int64), "twice")])
check("TopK then Resize", m,
      lambda x: F.interpolate(torch.from_numpy(x).double().topk(3, dim=1)[0],
                              scale_factor=2, mode="nearest").numpy(),
      [(1, 8, 1, 1), (3, 8, 24, 24), (2, 8, 7, 13)], past=(1, 8, 25, 2))


def data_k_row(shape):
    # Whole numbers up to the row's length: k = max(x) fits the row.
    return rng.integers(0, shape[1] + 1, shape).astype(np.float32)


def data_k_reference(x):
    k = int(x.max())
    best = -np.sort(-x, axis=1)[:, :k]
    return best + np.arange(k, dtype=np.float32)


m = build("topk_data_k",
          [h.make_node("ReduceMax", ["x"], ["mx"], name="max", keepdims=0),
           h.make_node("Cast", ["mx"], ["k0"], name="cast", to=I64),
           h.make_node("Unsqueeze", ["k0", "ax0"], ["k"], name="k"),
           h.make_node("TopK", ["x", "k"], ["v", "i"], name="topk", axis=1),
           h.make_node("Shape", ["v"], ["vs"], name="vshape"),
           h.make_node("Gather", ["vs", "one"], ["kk"], name="kk", axis=0),
           h.make_node("Range", ["zero", "kk", "one"], ["r"], name="arange"),
           h.make_node("Cast", ["r"], ["rf"], name="rcast", to=F32),
           h.make_node("Add", ["v", "rf"], ["y"], name="add")],
          ["b", "t"], ["b", "k"], 13, {"b": (1, 4), "t": (1, 40)},
          inits=[nh.from_array(np.array([0], np.int64), "ax0"),
                 nh.from_array(np.array(0, np.int64), "zero"),
                 nh.from_array(np.array(1, np.int64), "one")])
check("TopK of a data k, then Range over k", m, data_k_reference,
      [(1, 1), (4, 40), (3, 17)], make=data_k_row)

# NonZero's count is bounded by its input's element count: a Range over the
# count of a mask of symbolic length (refused before, as the TopK above).
m = build("nonzero_range",
          [h.make_node("NonZero", ["x"], ["nz"], name="nz"),
           h.make_node("Shape", ["nz"], ["ns"], name="nshape"),
           h.make_node("Gather", ["ns", "one"], ["n"], name="n", axis=0),
           h.make_node("Range", ["zero", "n", "one"], ["y"], name="arange")],
          ["t"], ["n"], 13, {"t": (1, 40)}, y_type=I64,
          inits=[nh.from_array(np.array(0, np.int64), "zero"),
                 nh.from_array(np.array(1, np.int64), "one")])
check("Range over NonZero's count", m,
      lambda x: np.arange(np.count_nonzero(x), dtype=np.int64),
      [(1,), (40,), (23,)], exact=True,
      make=lambda shape: rng.integers(0, 2, shape).astype(np.float32))

# OneHot of token ids [batch, seq] with a constant depth of 7 along axis 1;
# negative ids count from the end, ids outside [-7, 7) give all off.
depth = nh.from_array(np.array(7, np.int64), "depth")
values = nh.from_array(np.array([-1.0, 2.5], np.float32), "values")
m = build("onehot", [h.make_node("OneHot", ["x", "depth", "values"], ["y"],
                                 name="onehot", axis=1)],
          ["b", "s"], ["b", 7, "s"], 11, {"b": (1, 3), "s": (1, 30)},
          inits=[depth, values], x_type=I64)


def onehot(ids):
    wrapped = np.where(ids < 0, ids + 7, ids)
    hit = wrapped[:, None, :] == np.arange(7)[None, :, None]
    return np.where(hit, 2.5, -1.0).astype(np.float32)


check("OneHot", m, onehot, [(1, 1), (2, 13), (3, 30)],
      make=lambda s: rng.integers(-9, 9, s).astype(np.int64), exact=True)

# EyeLike of a [rows, cols] input with k = 1.
m = build("eyelike", [h.make_node("EyeLike", ["x"], ["y"], name="eye", k=1)],
          ["r", "c"], ["r", "c"], 9, {"r": (0, 20), "c": (1, 20)})
check("EyeLike", m, lambda x: np.eye(x.shape[0], x.shape[1], 1,
                                     dtype=np.float32),
      [(1, 1), (5, 9), (20, 3), (0, 4)], exact=True, past=(21, 1))
# Per-channel QuantizeLinear then DequantizeLinear of an activation of
# run-time batch and length (axis 1, 3 channels, int8 zero points).
scale = np.array([0.05, 0.1, 0.02], np.float32)
zero = np.array([-3, 0, 5], np.int8)
m = build("qdq", [
    h.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"], name="q",
                axis=1),
    h.make_node("DequantizeLinear", ["q", "scale", "zero"], ["y"], name="dq",
                axis=1)],
    ["b", 3, "t"], ["b", 3, "t"], 13, {"b": (1, 4), "t": (1, 40)},
    inits=[nh.from_array(scale, "scale"), nh.from_array(zero, "zero")])


def qdq(x, s=scale[None, :, None], z=zero[None, :, None].astype(np.float64)):
    q = np.clip(np.round(x.astype(np.float64) / s) + z, -128, 127)
    return ((q - z) * s).astype(np.float32)


check("QuantizeLinear per axis", m, qdq, [(1, 3, 1), (4, 3, 40), (2, 3, 7)],
      make=lambda s: (rng.standard_normal(s) * 4).astype(np.float32))

# The quantized axis itself of run-time size: the scale's length (3) is the
# size the run must have; another is refused naming the node.
m = build("qaxis", [
    h.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"], name="q",
                axis=0),
    h.make_node("DequantizeLinear", ["q", "scale", "zero"], ["y"], name="dq",
                axis=0)],
    ["c", 4], ["c", 4], 13, {"c": (1, 8)},
    inits=[nh.from_array(scale, "scale"), nh.from_array(zero, "zero")])
check("QuantizeLinear along a run-time axis", m,
      lambda x: qdq(x, scale[:, None], zero[:, None].astype(np.float64)),
      [(3, 4)], make=lambda s: (rng.standard_normal(s) * 4).astype(np.float32))
try:
    m(np.zeros((2, 4), np.float32))
    raise AssertionError("2 rows ran against 3 scales")
except kiln.Error as e:
    assert "node 'q' (QuantizeLinear" in str(e), e


# GridSample with the image's and the grid's sizes all symbolic (an image
# warped at any resolution): 2-D in each mode with each padding (a height
# of 1 with align_corners reflects over an empty span), and 3-D linear.
def grid_model(name, mode, padding, align, opset, rank):
    sp = ["d", "h", "w"][3 - rank:]
    osp = ["od", "oh", "ow"][3 - rank:]
    graph = h.make_graph(
        [h.make_node("GridSample", ["x", "g"], ["y"], name="grid", mode=mode,
                     padding_mode=padding, align_corners=align)],
        name, [h.make_tensor_value_info("x", F32, ["n", 3] + sp),
               h.make_tensor_value_info("g", F32, ["n"] + osp + [rank])],
        [h.make_tensor_value_info("y", F32, ["n", 3] + osp)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    so = os.path.join(work, name + ".so")
    flags = ["--dim", "n=1..2"]
    for sym in sp + osp:
        flags += ["--dim", f"{sym}=1..24"]
    r = subprocess.run([compile_, path, "-o", so] + flags, capture_output=True,
                       text=True)
    assert r.returncode == 0, (name, r.stderr)
    return kiln.load(so)


for mode, torch_mode, padding, align, opset in [
        ("bilinear", "bilinear", "zeros", 0, 16),
        ("bicubic", "bicubic", "reflection", 1, 16),
        ("nearest", "nearest", "border", 0, 16),
        ("linear", "bilinear", "reflection", 0, 20)]:
    for rank in ([2, 3] if opset >= 20 else [2]):
        m = grid_model(f"grid_{mode}_{padding}_{rank}d", mode, padding, align,
                       opset, rank)
        shapes = [((1, 3, 5, 7), (1, 4, 6)), ((2, 3, 24, 9), (2, 11, 3)),
                  ((1, 3, 1, 6), (1, 2, 5))] if rank == 2 else \
                 [((1, 3, 4, 5, 6), (1, 3, 2, 4)), ((2, 3, 2, 7, 3), (2, 5, 1, 2))]
        for xs, gs in shapes:
            x = rng.standard_normal(xs).astype(np.float32)
            g = rng.uniform(-1.3, 1.3, gs + (rank,)).astype(np.float32)
            want = F.grid_sample(T(x), T(g), mode=torch_mode,
                                 padding_mode=padding,
                                 align_corners=bool(align)).numpy()
            got = m(x, g)[0]
            assert got.shape == want.shape, (mode, xs, got.shape, want.shape)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5,
                                       err_msg=f"GridSample {mode} {padding} {xs}")
        print(f"GridSample {mode} {padding} {rank}-D: {len(shapes)} shapes match")


# A spatial transformer at any batch: AffineGrid(theta, Shape(x)) then
# GridSample (opset 20), against torch's affine_grid and grid_sample.
graph = h.make_graph(
    [h.make_node("Shape", ["x"], ["size"], name="shape"),
     h.make_node("AffineGrid", ["theta", "size"], ["grid"], name="affine",
                 align_corners=0),
     h.make_node("GridSample", ["x", "grid"], ["y"], name="sample")],
    "stn", [h.make_tensor_value_info("x", F32, ["n", 3, 5, 6]),
            h.make_tensor_value_info("theta", F32, ["n", 2, 3])],
    [h.make_tensor_value_info("y", F32, ["n", 3, 5, 6])])
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 20)])
model.ir_version = 8
onnx.save(model, os.path.join(work, "stn.onnx"))
r = subprocess.run([compile_, os.path.join(work, "stn.onnx"), "-o",
                    os.path.join(work, "stn.so"), "--dim", "n=0..6"],
                   capture_output=True, text=True)
assert r.returncode == 0, r.stderr
m = kiln.load(os.path.join(work, "stn.so"))
for n in [1, 6, 0]:
    x = rng.standard_normal((n, 3, 5, 6)).astype(np.float32)
    theta = (np.eye(2, 3)[None] + 0.3 * rng.standard_normal((n, 2, 3))).astype(np.float32)
    if n:
        grid = F.affine_grid(T(theta), (n, 3, 5, 6), align_corners=False)
        want = F.grid_sample(T(x), grid, align_corners=False).numpy()
    else:  # torch refuses an empty batch; the result is empty
        want = np.zeros((0, 3, 5, 6))
    got = m(x, theta)[0]
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
print("AffineGrid + GridSample: 3 batches match")

# RoiAlign over boxes of run-time count (what a detector's NMS leaves) on an
# image of run-time batch and size, both coordinate modes (avg, the mode
# torchvision computes), against torchvision.ops.roi_align.
from torchvision.ops import roi_align  # noqa: E402

for ctm, aligned in [("half_pixel", True), ("output_half_pixel", False)]:
    graph = h.make_graph(
        [h.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], name="roi",
                     output_height=3, output_width=4, sampling_ratio=2,
                     spatial_scale=0.5, coordinate_transformation_mode=ctm)],
        "roi", [h.make_tensor_value_info("x", F32, ["n", 4, "h", "w"]),
                h.make_tensor_value_info("rois", F32, ["r", 4]),
                h.make_tensor_value_info("idx", I64, ["r"])],
        [h.make_tensor_value_info("y", F32, ["r", 4, 3, 4])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])
    model.ir_version = 8
    path = os.path.join(work, f"roi_{ctm}.onnx")
    onnx.save(model, path)
    so = os.path.join(work, f"roi_{ctm}.so")
    r = subprocess.run([compile_, path, "-o", so, "--dim", "n=1..3", "--dim",
                        "h=2..40", "--dim", "w=2..40", "--dim", "r=0..50"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m = kiln.load(so)
    for n, hh, ww, count in [(1, 9, 13, 5), (3, 40, 17, 50), (2, 2, 3, 1),
                             (1, 8, 8, 0)]:
        x = rng.standard_normal((n, 4, hh, ww)).astype(np.float32)
        lo = rng.uniform(-4, 2 * max(hh, ww), (count, 2))
        rois = np.concatenate([lo, lo + rng.uniform(0, 30, (count, 2))],
                              1).astype(np.float32)
        idx = rng.integers(0, n, count).astype(np.int64)
        want = roi_align(T(x), torch.cat([T(idx[:, None].astype(np.float32)),
                                          T(rois)], 1), (3, 4), 0.5, 2,
                         aligned).numpy()
        got = m(x, rois, idx)[0]
        assert got.shape == want.shape, (ctm, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5,
                                   err_msg=f"RoiAlign {ctm} {x.shape} {count}")
    print(f"RoiAlign {ctm}: 4 shapes match")


# DFT of a batch of signals of run-time count and frames (the transformed
# axis static): a onesided real FFT of 16 points along axis 2 of
# [batch, frames, 16, 1] (opset 17), and an inverse complex DFT of 12 points
# (opset 20, axis -2 by default) of [batch, 12, 2], against numpy.fft.
m = build("rfft", [h.make_node("DFT", ["x"], ["y"], name="dft", axis=2,
                               onesided=1)],
          ["b", "t", 16, 1], ["b", "t", 9, 2], 17, {"b": (1, 3), "t": (1, 20)})


def rfft(x):
    f = np.fft.rfft(x[..., 0].astype(np.float64), axis=2)
    return np.stack([f.real, f.imag], -1).astype(np.float32)


check("DFT onesided", m, rfft, [(1, 1, 16, 1), (3, 20, 16, 1), (2, 7, 16, 1)])
m = build("idft", [h.make_node("DFT", ["x"], ["y"], name="dft", inverse=1)],
          ["b", 12, 2], ["b", 12, 2], 20, {"b": (0, 5)})


def idft(x):
    f = np.fft.ifft(x[..., 0].astype(np.float64) + 1j * x[..., 1], axis=1)
    return np.stack([f.real, f.imag], -1).astype(np.float32)


check("DFT inverse", m, idft, [(1, 12, 2), (5, 12, 2), (0, 12, 2)])


def build_multi(name, nodes, x_shape, outs, opset, dims, inits=()):
    graph = h.make_graph(
        nodes, name, [h.make_tensor_value_info("x", F32, x_shape)],
        [h.make_tensor_value_info(o, F32, None) for o in outs], list(inits))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    so = os.path.join(work, name + ".so")
    flags = sum((["--dim", f"{k}={lo}..{hi}"] for k, (lo, hi) in dims.items()), [])
    r = subprocess.run([compile_, path, "-o", so] + flags, capture_output=True,
                       text=True)
    assert r.returncode == 0, (name, r.stderr)
    return kiln.load(so)


def check_parts(name, m, shapes, split, bad):
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        got, want = m(x), split(x)
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert g.shape == w.shape and np.array_equal(g, w), (name, shape)
    for shape in bad:
        try:
            m(np.zeros(shape, np.float32))
            raise AssertionError(f"{name}: {shape} ran")
        except kiln.Error as e:
            assert "(Split, opset" in str(e), (name, e)
    print(f"{name}: {len(shapes)} shapes match, {len(bad)} refused")


# Split along an axis of run-time size: a classifier-free-guidance chunk(2)
# of the batch (an odd batch is refused at run time), num_outputs 3 of
# opset 18 (the last part smaller; 1 element leaves a negative rest), and
# constant sizes [2, 3] (the axis must be 5).
m = build_multi("split_even", [h.make_node("Split", ["x"], ["a", "b"],
                                           name="split", axis=0)],
                ["b", 4], ["a", "b"], 13, {"b": (1, 16)})
check_parts("Split in halves", m, [(2, 4), (16, 4)],
            lambda x: np.split(x, 2, axis=0), [(3, 4)])
m = build_multi("split_18", [h.make_node("Split", ["x"], ["a", "b", "c"],
                                         name="split", axis=1,
                                         num_outputs=3)],
                [2, "t"], ["a", "b", "c"], 18, {"t": (1, 30)})
check_parts("Split num_outputs", m, [(2, 7), (2, 30), (2, 2)],
            lambda x: np.split(x, [-(-x.shape[1] // 3), 2 * -(-x.shape[1] // 3)],
                               axis=1), [(2, 1)])
m = build_multi("split_sizes", [h.make_node("Split", ["x", "sizes"], ["a", "b"],
                                            name="split", axis=1)],
                ["b", "t"], ["a", "b"], 13, {"b": (1, 4), "t": (1, 9)},
                inits=[nh.from_array(np.array([2, 3], np.int64), "sizes")])
check_parts("Split sizes", m, [(1, 5), (4, 5)],
            lambda x: np.split(x, [2], axis=1), [(1, 6)])
# Pads computed from the input's size, as Swin's window attention exports
# them: (7 - w % 7) % 7 zeros after the height and width (F.pad's reordered
# pairs: Concat, Reshape to [-1, 2], a reversing Slice, Transpose), windows
# of 7 x 7 by Reshape and Transpose, the padding cropped, then a patch
# merging's odd-size pad and stride-2 slices; and a reflection pad of
# computed amounts on NCHW. Exported by torch, checked against torch.
class Windows(torch.nn.Module):
    def forward(self, x):  # [b, h, w, c]
        b, hh, ww, c = x.shape
        pr, pb = (7 - ww % 7) % 7, (7 - hh % 7) % 7
        y = F.pad(x, (0, 0, 0, pr, 0, pb))
        ph, pw = y.shape[1], y.shape[2]
        y = y.view(b, ph // 7, 7, pw // 7, 7, c).permute(0, 1, 3, 2, 4, 5)
        y = y.reshape(-1, 49, c).softmax(1) * 49.0
        y = y.view(b, ph // 7, pw // 7, 7, 7, c).permute(0, 1, 3, 2, 4, 5)
        y = y.reshape(b, ph, pw, c)[:, :hh, :ww, :] + x
        y = F.pad(y, (0, 0, 0, ww % 2, 0, hh % 2))
        y = torch.cat([y[:, 0::2, 0::2], y[:, 1::2, 0::2], y[:, 0::2, 1::2]], -1)
        z = y.permute(0, 3, 1, 2)
        z = F.pad(z, (1, (4 - z.shape[3] % 4) % 4, 0, (3 - z.shape[2] % 3) % 3),
                  mode="reflect")
        return z


path = os.path.join(work, "windows.onnx")
torch.onnx.export(Windows(), (torch.randn(1, 20, 26, 4),), path,
                  opset_version=17, input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {0: "b", 1: "h", 2: "w"}})
so = os.path.join(work, "windows.so")
r = subprocess.run([compile_, path, "-o", so, "--dim", "b=1..2", "--dim",
                    "h=8..40", "--dim", "w=8..40"], capture_output=True,
                   text=True)
assert r.returncode == 0, r.stderr
check("Pad of computed amounts", kiln.load(so),
      lambda x: Windows()(T(x)).numpy(),
      [(1, 20, 26, 4), (2, 8, 9, 4), (1, 40, 33, 4), (2, 14, 21, 4)],
      past=(1, 41, 8, 4))
# Pads read from the data of a tensor of run-time size cannot be followed:
# a compile error naming the node, not a crash or a guess.
graph = h.make_graph(
    [h.make_node("ReduceMax", ["x"], ["m"], name="max", keepdims=0),
     h.make_node("Cast", ["m"], ["k"], name="cast", to=I64),
     h.make_node("Unsqueeze", ["k", "ax"], ["k1"], name="unsq"),
     h.make_node("Concat", ["zeros", "k1"], ["pads"], name="cat", axis=0),
     h.make_node("Pad", ["x", "pads"], ["y"], name="datapad")],
    "datapad", [h.make_tensor_value_info("x", F32, ["b", 4])],
    [h.make_tensor_value_info("y", F32, None)],
    [nh.from_array(np.array([0, 0, 0], np.int64), "zeros"),
     nh.from_array(np.array([0], np.int64), "ax")])
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
model.ir_version = 8
path = os.path.join(work, "datapad.onnx")
onnx.save(model, path)
r = subprocess.run([compile_, path, "-o", os.path.join(work, "datapad.so"),
                    "--dim", "b=1..8"], capture_output=True, text=True)
assert r.returncode == 1, (r.returncode, r.stderr)
assert "node 'datapad' (Pad, opset 13)" in r.stderr and \
    "sizes computed from Shape" in r.stderr, r.stderr
print("Pad of data-dependent amounts: refused naming the node")
# A running sum, a nearest 2x upsampling of it and an edge Pad of every axis:
# each size is followed (the batch of the upsampling is the input's, not a
# size of its own that might be 0), so the edge Pad compiles.
m = build("cumsum_upsample_edge",
          [h.make_node("CumSum", ["x", "axis"], ["c"], name="cumsum"),
           h.make_node("Resize", ["c", "", "scales"], ["r"], name="up",
                       mode="nearest"),
           h.make_node("Pad", ["r", "pads"], ["y"], name="edge", mode="edge")],
          ["b", 2, "h", "w"], None, 18, {"b": (1, 4), "h": (4, 20), "w": (4, 20)},
          inits=[nh.from_array(np.array(2, np.int64), "axis"),
                 nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
                 nh.from_array(np.array([1, 0, 0, 1, 0, 1, 1, 0], np.int64),
                               "pads")])
check("CumSum, nearest 2x, edge Pad", m,
      lambda x: np.pad(np.cumsum(x.astype(np.float64), axis=2)
                       .repeat(2, axis=2).repeat(2, axis=3),
                       [(1, 0), (0, 1), (0, 1), (1, 0)], mode="edge"),
      [(1, 2, 4, 4), (4, 2, 20, 17), (2, 2, 7, 9)])
# ArgMax keeps its input's other sizes: an edge Pad of its indices compiles.
m = build("argmax_edge",
          [h.make_node("ArgMax", ["x"], ["i"], name="argmax", axis=2, keepdims=1),
           h.make_node("Cast", ["i"], ["f"], name="cast", to=F32),
           h.make_node("Pad", ["f", "pads"], ["y"], name="edge", mode="edge")],
          ["b", "t", 4], None, 18, {"b": (1, 4), "t": (1, 30)},
          inits=[nh.from_array(np.array([1, 0, 0, 0, 1, 2], np.int64), "pads")])
check("ArgMax, edge Pad", m,
      lambda x: np.pad(x.argmax(axis=2)[..., None].astype(np.float32),
                       [(1, 0), (0, 1), (0, 2)], mode="edge"),
      [(1, 1, 4), (4, 30, 4), (2, 7, 4)], exact=True)
print("symbolic ops: all match")
