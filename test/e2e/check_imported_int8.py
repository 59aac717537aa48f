#!/usr/bin/python3
"""Imported int8 products (ConvInteger and MatMulInteger after
DynamicQuantizeLinear, QLinearConv, QLinearMatMul) against exact integer
references, on whichever kernels the host gets (docs/quantization.md,
"Imported int8 models"): on a CPU with AVX512-VNNI the uint8 x int8 products
run on vpdpbusd (kiln.integer_conv2d / kiln.integer_matmul, checked in the
emitted graph), on one with AVX2 and no VNNI the same ops run on the
kernel's vpmaddwd form (checked in the emitted LLVM too; depthwise ones on
the f32 kernels), elsewhere on the f32 kernels or in i32.

- ConvInteger with padding, strides, dilation, K and F not multiples of 4
  and 16, a uint8 filter with zero point 128 and a filter whose values
  leave int8 after its zero point (which stays on the generic path), and
  depthwise ConvInteger (kiln.integer_depthwise_conv2d), and zero points
  per output channel for 64 filters (imported as a reshaped resource): the
  i32 result is a graph output and must match bit for bit.
- MatMulInteger on a 3-D input with K = 37 and N = 20, bit for bit; the
  same with a symbolic batch and sequence at four shapes, on the int8
  kernels (rows of run-time count), also two wider ones (row tiles and
  panels outermost) on one and two threads; and ConvInteger with a symbolic batch, height and width (exact
  products on the f32 kernels: the int8 convolution kernels take static
  shapes).
- QLinearConv (also with scales and zero points per channel for 64
  filters) and QLinearMatMul (requantized uint8 output, i32 bias): within
  one step of the uint8 output of an exact reference (the requantization
  rounds a float product).
- QDQ Conv (uint8 activations, per-channel weight scales, int32 bias), QDQ
  depthwise Conv (int8 activations) and QDQ MatMul (int8 activations),
  weights with zero points per tensor and per channel (64 filters; MatMul
  per column), against the ONNX definition in float64.
- Weight-only quantized MatMul (per row, blocked, int4 in blocks) and
  Conv (per channel with zero points) on f32 activations, their weights
  computed at compile time, against float64.
- ONNX Runtime's QOperator contrib ops (com.microsoft QLinearAdd, Mul,
  Sigmoid, LeakyRelu, Softmax (per axis and, for its opset 11, over the
  trailing block), AveragePool (NCHW and channels_last),
  GlobalAveragePool, Concat) against the float32
  composition, within one step; QGemm (transB with per-column scales and an
  int32 C, quantized; per tensor with alpha, float output) against the
  exact integer product, on the integer kernels.
- Reductions of every element of a large tensor (DynamicQuantizeLinear's
  range, ReduceMean/Max/Sum), which run in vectorized blocks: exact for the
  quantization, within 1e-5 relative for the sums; the range of a tensor a
  parallel loop computes, taken from its tiles: exact, NaN and infinities
  as ONNX defines them; and of a concatenation with a part read elsewhere,
  taken part by part: exact, NaN from either part.

usage: check_imported_int8.py WORKDIR PYTHONPATH
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

work, pythonpath = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import compile_and_load, save_onnx  # noqa: E402

rng = np.random.default_rng(31)
CPU_FLAGS = next((line.split(":", 1)[1].split() for line in open("/proc/cpuinfo")
                  if line.startswith("flags")), [])
VNNI = "avx512_vnni" in CPU_FLAGS
AVX2 = not VNNI and "avx2" in CPU_FLAGS


def vi(name, elt, shape):
    return h.make_tensor_value_info(name, elt, shape)


def dql_ref(v):
    """DynamicQuantizeLinear as ONNX defines it, in float32: the uint8
    values (as int64), the scale and the zero point."""
    f = np.float32
    lo, hi = min(f(0), v.min()), max(f(0), v.max())
    scale = f((hi - lo) / f(255))
    zp = np.clip(np.rint(f(0) - lo / scale), 0, 255)
    return np.clip(np.rint(v / scale) + zp, 0, 255).astype(np.int64), scale, zp


def conv_int(x, w, stride, pads, dilation, group=1):
    """NCHW convolution of integer arrays in int64 (group 1 or depthwise);
    pads [t, l, b, r] read 0."""
    x = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pads[0], pads[2]),
                                    (pads[1], pads[3])))
    n, c, hh, ww = x.shape
    f, _, kh, kw = w.shape
    oh = (hh - dilation * (kh - 1) - 1) // stride + 1
    ow = (ww - dilation * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, f, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i * dilation:i * dilation + stride * oh:stride,
                      j * dilation:j * dilation + stride * ow:stride]
            if group == 1:
                y += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j].astype(np.int64))
            else:  # depthwise: filter [C, 1, KH, KW]
                y += patch * w[None, :, 0, i, j, None, None].astype(np.int64)
    return y


def emitted_graph(path, **kw):
    out = path[:-5] + ".kiln.mlir"
    kiln.compile(path, output=out, emit="kiln", **kw)
    return open(out).read()


def check_path(path, op, **kw):
    """On a VNNI host the product must have become `op` (and the kernel the
    vpdpbusd one); on an AVX2 host too, but for depthwise ones (which stay
    off the int8 kernel there), and the kernel must be the vpmaddwd form.
    `kw` (dims=...) compiles a model with symbolic sizes."""
    def kernel(name):
        out = path[:-5] + ".ll"
        kiln.compile(path, output=out, emit="llvm", **kw)
        assert name in open(out).read(), (path, f"no {name} kernel")

    if VNNI:
        text = emitted_graph(path, **kw)
        assert op in text, (path, f"expected {op} on this AVX512-VNNI host")
        if op == "kiln.integer_matmul":
            kernel("llvm.x86.avx512.vpdpbusd.512")
    elif AVX2 and op == "kiln.integer_depthwise_conv2d":
        assert op not in emitted_graph(path, **kw), (path, "no depthwise int8 kernel on AVX2")
    elif AVX2:
        assert op in emitted_graph(path, **kw), (path, f"expected {op} on this AVX2 host")
        kernel("llvm.x86.avx2.pmadd.wd")


# --- ConvInteger after DynamicQuantizeLinear -----------------------------------
CONVS = [  # name, C, F, H, W, kernel, stride, pads, dilation, weight kind[, group]
    ("conv3x3_pad", 3, 8, 9, 7, 3, 1, [1, 1, 1, 1], 1, "int8"),
    ("conv3x3_s2", 16, 20, 10, 10, 3, 2, [1, 0, 1, 1], 1, "int8"),
    # Channels a multiple of 16: the kernel reads the windows from the padded
    # input itself (no unfolded rows), here with asymmetric pads, a 5x5
    # window at stride 2 and a batch of 2 (rows cross images).
    ("conv3x3_c32_asym", 32, 24, 11, 9, 3, 1, [0, 1, 2, 1], 1, "int8"),
    ("conv5x5_s2_c16", 16, 16, 13, 12, 5, 2, [2, 2, 2, 2], 1, "int8"),
    ("conv3x3_c16_n2", 16, 32, 7, 6, 3, 1, [1, 1, 1, 1], 1, "int8", 1, 2),
    # Channels a multiple of 4 only, or dilation along W: the kernel reads
    # each tap's C bytes from the padded input.
    ("conv3x3_c24_s2", 24, 16, 11, 10, 3, 2, [1, 0, 1, 1], 1, "int8"),
    ("conv_dilated_c12_n2", 12, 20, 9, 9, 3, 1, [2, 2, 2, 2], 2, "int8", 1, 2),
    ("conv1x1", 5, 17, 6, 6, 1, 1, [0, 0, 0, 0], 1, "int8"),
    # A 3-channel stem: 85 x 85 unfolded rows of 148 bytes (over 1 MiB), which
    # the AVX2 kernel widens in its k loop rather than copying them.
    ("stem7x7_s2_c3", 3, 16, 170, 170, 7, 2, [3, 3, 3, 3], 1, "int8"),
    ("conv_dilated", 8, 16, 12, 11, 3, 1, [2, 2, 2, 2], 2, "int8"),
    ("conv_uint8_w", 4, 6, 7, 7, 3, 1, [1, 1, 1, 1], 1, "uint8"),
    ("conv_wide_w", 4, 6, 7, 7, 3, 1, [1, 1, 1, 1], 1, "wide"),
    # Zero points per output channel for 64 filters (a resource reshaped to
    # [64, 1, 1, 1], not folded): ONNX Runtime's per-channel int8 weights
    # (zeros) and uint8 ones (128 each) take the int8 kernels; zero points
    # that move the weights beyond int8 stay on the generic path.
    ("conv_int8_per_channel", 8, 64, 7, 7, 3, 1, [1, 1, 1, 1], 1, "int8_pc"),
    ("conv_uint8_per_channel", 8, 64, 7, 7, 3, 1, [1, 1, 1, 1], 1, "uint8_pc"),
    ("conv_wide_per_channel", 8, 64, 7, 7, 3, 1, [1, 1, 1, 1], 1, "wide_pc"),
    # Depthwise (MobileNet's): vpdpbusd over 4 kernel rows per lane, with 16,
    # 8 and 4 channels per vector, kernels of 1 and 2 row quads, strides,
    # asymmetric pads and dilation; 6 channels stay off the int8 kernel.
    ("dw3x3", 32, 32, 14, 13, 3, 1, [1, 1, 1, 1], 1, "int8", 32),
    ("dw3x3_s2", 24, 24, 11, 12, 3, 2, [0, 1, 1, 0], 1, "int8", 24),
    ("dw5x5_dilated", 20, 20, 13, 13, 5, 1, [4, 4, 4, 4], 2, "int8", 20),
    ("dw7x7_s2_uint8_w", 16, 16, 15, 16, 7, 2, [3, 3, 3, 3], 1, "uint8", 16),
    ("dw3x3_c6", 6, 6, 8, 8, 3, 1, [1, 1, 1, 1], 1, "int8", 6),
]
for name, c, f, hh, ww, k, s, pads, d, kind, *extra in CONVS:
    group = extra[0] if extra else 1
    batch = extra[1] if len(extra) > 1 else 1
    ci = c // group
    if kind == "uint8":  # ConvInteger's uint8 filter, zero point 128
        w = rng.integers(0, 256, (f, ci, k, k)).astype(np.uint8)
        wzp = np.array(128, np.uint8)
    elif kind == "wide":  # w - zp reaches -132: not int8, the generic path
        w = rng.integers(-128, 128, (f, ci, k, k)).astype(np.int8)
        w.flat[0] = -128
        wzp = np.array(4, np.int8)
    elif kind == "int8_pc":
        w = rng.integers(-128, 128, (f, ci, k, k)).astype(np.int8)
        wzp = np.zeros(f, np.int8)
    elif kind == "uint8_pc":
        w = rng.integers(0, 256, (f, ci, k, k)).astype(np.uint8)
        wzp = np.full(f, 128, np.uint8)
    elif kind == "wide_pc":
        w = rng.integers(0, 256, (f, ci, k, k)).astype(np.uint8)
        wzp = rng.integers(90, 170, f).astype(np.uint8)
    else:
        w = rng.integers(-127, 128, (f, ci, k, k)).astype(np.int8)
        wzp = np.array(0, np.int8)
    path = save_onnx(work, name, [
        h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]),
        h.make_node("ConvInteger", ["xq", "w", "xzp", "wzp"], ["acc"],
                    kernel_shape=[k, k], strides=[s, s], pads=pads,
                    dilations=[d, d], group=group),
    ], [vi("x", T.FLOAT, [batch, c, hh, ww])],
        [vi("acc", T.INT32, None), vi("xq", T.UINT8, None), vi("xzp", T.UINT8, None)],
        [("w", w), ("wzp", wzp)], opset=13)
    m = compile_and_load(kiln, path)
    for trial in range(2):
        x = (rng.standard_normal((batch, c, hh, ww)) * 3 + trial).astype(np.float32)
        acc, xq, xzp = m(x)
        want = conv_int(xq.astype(np.int64) - int(xzp),
                        w.astype(np.int64) - wzp.astype(np.int64).reshape(-1, 1, 1, 1),
                        s, pads, d, group)
        assert acc.dtype == np.int32 and acc.shape == want.shape, (name, acc.shape)
        assert np.array_equal(acc.astype(np.int64), want), \
            (name, int(np.abs(acc - want).max()))
    op = "kiln.integer_conv2d" if group == 1 else "kiln.integer_depthwise_conv2d"
    if not kind.startswith("wide") and (group == 1 or c % 4 == 0):
        check_path(path, op)
    elif VNNI or AVX2:
        assert op not in emitted_graph(path), name

# --- MatMulInteger ---------------------------------------------------------------
w = rng.integers(-128, 128, (37, 20)).astype(np.int8)
path = save_onnx(work, "matmul_integer", [
    h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]),
    h.make_node("MatMulInteger", ["xq", "w", "xzp"], ["acc"]),
], [vi("x", T.FLOAT, [2, 5, 37])],
    [vi("acc", T.INT32, None), vi("xq", T.UINT8, None), vi("xzp", T.UINT8, None)],
    [("w", w)], opset=13)
m = compile_and_load(kiln, path)
x = rng.standard_normal((2, 5, 37)).astype(np.float32) + 0.5
acc, xq, xzp = m(x)
want = (xq.astype(np.int64) - int(xzp)) @ w.astype(np.int64)
assert np.array_equal(acc.astype(np.int64), want), int(np.abs(acc - want).max())
check_path(path, "kiln.integer_matmul")

# The same with a symbolic batch and sequence (a dynamically quantized
# transformer exported with dynamic_axes): one compile, exact at every shape,
# on the int8 kernels (rows of run-time count: full tiles of 8 rows, then
# tiles of 4, 2 and 1 for the rest; 1, 14, 51 and 80 rows cover each).
dims = {"batch": (1, 3), "seq": (1, 40)}
path = save_onnx(work, "matmul_integer_symbolic", [
    h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]),
    h.make_node("MatMulInteger", ["xq", "w", "xzp"], ["acc"]),
], [vi("x", T.FLOAT, ["batch", "seq", 37])],
    [vi("acc", T.INT32, None), vi("xq", T.UINT8, None), vi("xzp", T.UINT8, None)],
    [("w", w)], opset=13)
m = compile_and_load(kiln, path, dims=dims)
for b, t in [(1, 1), (2, 7), (3, 17), (2, 40)]:
    x = rng.standard_normal((b, t, 37)).astype(np.float32) + 0.5
    acc, xq, xzp = m(x)
    want_q, _, zp = dql_ref(x)
    assert np.array_equal(xq.astype(np.int64), want_q) and int(xzp) == int(zp), (b, t)
    want = (want_q - int(zp)) @ w.astype(np.int64)
    assert acc.shape == (b, t, 20), acc.shape
    assert np.array_equal(acc.astype(np.int64), want), (b, t, int(np.abs(acc - want).max()))
check_path(path, "kiln.integer_matmul", dims=dims)

# Products worth sharing between two threads at their bound: 120 x 256 x 96
# (the full row tiles split across the threads at run time, the rest after
# the join) and 120 x 1024 x 1024 (1 MiB of weights: panels outermost, the
# threads sharing the panels, each over the run-time rows). Exact on one
# and two threads.
for k, n in [(256, 96), (1024, 1024)]:
    wb = rng.integers(-128, 128, (k, n)).astype(np.int8)
    path = save_onnx(work, f"matmul_integer_symbolic_{k}x{n}", [
        h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]),
        h.make_node("MatMulInteger", ["xq", "w", "xzp"], ["acc"]),
    ], [vi("x", T.FLOAT, ["batch", "seq", k])],
        [vi("acc", T.INT32, None)], [("w", wb)], opset=13)
    so = kiln.compile(path, output=path[:-5] + ".so", dims=dims)
    one, two = kiln.load(so), kiln.load(so, threads=2)
    for b, t in [(1, 1), (1, 9), (3, 33), (3, 40)]:
        x = rng.standard_normal((b, t, k)).astype(np.float32)
        want_q, _, zp = dql_ref(x)
        want = (want_q - int(zp)) @ wb.astype(np.int64)
        for mm in (one, two):
            acc = mm(x)[0]
            assert acc.shape == (b, t, n), acc.shape
            assert np.array_equal(acc.astype(np.int64), want), \
                (k, n, b, t, int(np.abs(acc - want).max()))
    check_path(path, "kiln.integer_matmul", dims=dims)

# ConvInteger with a symbolic batch, height and width (a dynamically
# quantized CNN exported with dynamic_axes), stride 2 and padding: exact.
wc = rng.integers(-128, 128, (8, 3, 3, 3)).astype(np.int8)
path = save_onnx(work, "conv_integer_symbolic", [
    h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]),
    h.make_node("ConvInteger", ["xq", "w", "xzp"], ["acc"], strides=[2, 2],
                pads=[1, 1, 1, 1]),
], [vi("x", T.FLOAT, ["n", 3, "h", "w"])],
    [vi("acc", T.INT32, None), vi("xq", T.UINT8, None), vi("xzp", T.UINT8, None)],
    [("w", wc)], opset=13)
m = compile_and_load(kiln, path, dims={"n": (1, 2), "h": (4, 48), "w": (4, 48)})
for shape in [(1, 3, 4, 4), (2, 3, 17, 30), (1, 3, 48, 48)]:
    x = rng.standard_normal(shape).astype(np.float32)
    acc, xq, xzp = m(x)
    want_q, _, zp = dql_ref(x)
    want = conv_int(want_q - int(zp), wc, 2, [1, 1, 1, 1], 1)
    assert acc.shape == want.shape, (shape, acc.shape, want.shape)
    assert np.array_equal(acc.astype(np.int64), want), (shape, int(np.abs(acc - want).max()))


# --- QLinearConv / QLinearMatMul ------------------------------------------------
def requantized(acc, multiplier, zp):
    return np.clip(np.rint(acc * np.float64(multiplier)) + zp, 0, 255)


xs, xzp, ws, ys, yzp = 0.05, 120, 0.01, 0.2, 7
w = rng.integers(-127, 128, (12, 6, 3, 3)).astype(np.int8)
bias = rng.integers(-2000, 2000, 12).astype(np.int32)
scalars = [("xs", np.array(xs, np.float32)), ("xzp", np.array(xzp, np.uint8)),
           ("ws", np.array(ws, np.float32)), ("wzp", np.array(0, np.int8)),
           ("ys", np.array(ys, np.float32)), ("yzp", np.array(yzp, np.uint8))]
path = save_onnx(work, "qlinear_conv", [
    h.make_node("QLinearConv", ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "b"],
                ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
], [vi("x", T.UINT8, [1, 6, 8, 8])], [vi("y", T.UINT8, None)],
    scalars + [("w", w), ("b", bias)], opset=13)
m = compile_and_load(kiln, path)
x = rng.integers(0, 256, (1, 6, 8, 8)).astype(np.uint8)
acc = conv_int(x.astype(np.int64) - xzp, w, 1, [1, 1, 1, 1], 1) + bias[None, :, None, None]
mult = np.float32(np.float32(xs) * np.float32(ws) / np.float32(ys))
want = requantized(acc, mult, yzp)
(y,) = m(x)
assert np.abs(y.astype(np.int64) - want).max() <= 1, int(np.abs(y - want).max())
check_path(path, "kiln.integer_conv2d")

# QLinearConv with a scale and a zero point (0) per output channel for 64
# filters, as ONNX Runtime's per-channel QOperator models write it.
w = rng.integers(-127, 128, (64, 6, 3, 3)).astype(np.int8)
wsc = (rng.random(64) * 0.02 + 0.002).astype(np.float32)
bias = rng.integers(-2000, 2000, 64).astype(np.int32)
per_channel = [(n, a) for n, a in scalars if n not in ("ws", "wzp")] + \
    [("ws", wsc), ("wzp", np.zeros(64, np.int8)), ("w", w), ("b", bias)]
path = save_onnx(work, "qlinear_conv_per_channel", [
    h.make_node("QLinearConv", ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "b"],
                ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
], [vi("x", T.UINT8, [1, 6, 8, 8])], [vi("y", T.UINT8, None)], per_channel, opset=13)
m = compile_and_load(kiln, path)
x = rng.integers(0, 256, (1, 6, 8, 8)).astype(np.uint8)
acc = conv_int(x.astype(np.int64) - xzp, w, 1, [1, 1, 1, 1], 1) + bias[None, :, None, None]
mults = (np.float32(xs) * wsc / np.float32(ys)).astype(np.float32)
want = requantized(acc, mults.astype(np.float64)[None, :, None, None], yzp)
(y,) = m(x)
assert np.abs(y.astype(np.int64) - want).max() <= 1, int(np.abs(y - want).max())
check_path(path, "kiln.integer_conv2d")

w = rng.integers(-127, 128, (24, 40)).astype(np.int8)
path = save_onnx(work, "qlinear_matmul", [
    h.make_node("QLinearMatMul", ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp"], ["y"]),
], [vi("x", T.UINT8, [3, 24])], [vi("y", T.UINT8, None)], scalars + [("w", w)], opset=13)
m = compile_and_load(kiln, path)
x = rng.integers(0, 256, (3, 24)).astype(np.uint8)
want = requantized((x.astype(np.int64) - xzp) @ w.astype(np.int64), mult, yzp)
(y,) = m(x)
assert np.abs(y.astype(np.int64) - want).max() <= 1, int(np.abs(y - want).max())
check_path(path, "kiln.integer_matmul")

# --- QDQ (ONNX Runtime's static quantization) -------------------------------------
# DequantizeLinear(QuantizeLinear(x)) and DequantizeLinear(int8 W) into Conv /
# MatMul: the products run on integers (kiln.integer_conv2d / integer_matmul on a VNNI host),
# against the ONNX definition (dequantize, then the f32 product) in float64.
def qdq_model(name, kind, act_type, x_shape, w, w_scale, w_axis, bias=None, group=1,
              w_zp=None):
    zp_x = np.array(3 if act_type == T.UINT8 else -7,
                    np.uint8 if act_type == T.UINT8 else np.int8)
    inits = [("xs", np.array(0.04, np.float32)), ("xzp", zp_x), ("w", w),
             ("ws", w_scale)]
    w_ins = ["w", "ws"]
    if w_zp is not None:
        inits.append(("wzp", np.array(w_zp, w.dtype)))
        w_ins.append("wzp")
    nodes = [h.make_node("QuantizeLinear", ["x", "xs", "xzp"], ["xq"]),
             h.make_node("DequantizeLinear", ["xq", "xs", "xzp"], ["xd"]),
             h.make_node("DequantizeLinear", w_ins, ["wd"], axis=w_axis)]
    ins = ["xd", "wd"]
    if bias is not None:
        inits += [("b", bias), ("bs", (np.float32(0.04) * w_scale).astype(np.float32))]
        nodes.append(h.make_node("DequantizeLinear", ["b", "bs"], ["bd"], axis=0))
        ins.append("bd")
    nodes.append(h.make_node(kind, ins, ["y"],
                             **({"pads": [1, 1, 1, 1], "group": group}
                                if kind == "Conv" else {})))
    return save_onnx(work, name, nodes, [vi("x", T.FLOAT, x_shape)],
                     [vi("y", T.FLOAT, None), vi("xq", act_type, None)], inits, opset=13)


# A 3x3 convolution on uint8 activations, a depthwise one (MobileNet's QDQ
# form) on int8 activations and one of 2 groups (ResNeXt's), all with
# per-channel scales and a bias; then weights with a zero point: uint8 ones
# with 128 (the tool's QUInt8 weights: int8 again once centred, so on the
# VNNI kernels) and int8 ones with 5 (beyond int8 once centred: f32
# kernels); then 64 output channels, whose scales and zero points import
# as resources reshaped to [64, 1, 1, 1] (smaller ones are folded): int8
# weights with zero points of 0 per channel (ONNX Runtime's per-channel
# QInt8 weights: int8 kernels) and uint8 ones with a zero point per channel
# (its asymmetric per-channel QUInt8 weights: f32 kernels). Without VNNI
# the products run on the f32 kernels with the weights a constant filter:
# no weight is dequantized at run time.
for name, act, c, f, group, wzp in [("qdq_conv", T.UINT8, 8, 16, 1, None),
                                    ("qdq_depthwise", T.INT8, 24, 24, 24, None),
                                    ("qdq_grouped", T.UINT8, 8, 12, 2, None),
                                    ("qdq_uint8_w", T.UINT8, 8, 16, 1, np.uint8(128)),
                                    ("qdq_int8_w_zp", T.INT8, 8, 16, 1, np.int8(5)),
                                    ("qdq_int8_w_per_channel", T.UINT8, 8, 64, 1,
                                     np.zeros(64, np.int8)),
                                    ("qdq_uint8_w_per_channel", T.INT8, 8, 64, 1,
                                     rng.integers(90, 170, 64).astype(np.uint8))]:
    zps = np.zeros(1, np.int8) if wzp is None else np.atleast_1d(wzp)
    if zps.dtype == np.uint8:
        w = rng.integers(0, 256, (f, c // group, 3, 3)).astype(np.uint8)
    else:
        w = rng.integers(-127 if wzp is None else -128, 128,
                         (f, c // group, 3, 3)).astype(np.int8)
    ws = (rng.random(f) * 0.01 + 0.002).astype(np.float32)
    if zps.size == 1 and wzp is not None:  # zero point and scale both per tensor
        ws = np.array(0.004, np.float32)
    bias = rng.integers(-300, 300, f).astype(np.int32)
    path = qdq_model(name, "Conv", act, [1, c, 9, 9], w, ws, 0, bias, group, wzp)
    m = compile_and_load(kiln, path)
    x = rng.standard_normal((1, c, 9, 9)).astype(np.float32)
    y, xq = m(x)
    zp = 3 if act == T.UINT8 else -7
    xd = (xq.astype(np.float64) - zp) * np.float64(np.float32(0.04))
    wd = (w.astype(np.float64) - zps.astype(np.float64).reshape(-1, 1, 1, 1)) * \
        np.broadcast_to(ws.astype(np.float64), (f,))[:, None, None, None]
    bd = bias * np.broadcast_to((np.float32(0.04) * ws).astype(np.float64), (f,))
    want = np.zeros((1, f, 9, 9))
    xp = np.pad(xd, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ci, fg = c // group, f // group
    for i in range(3):
        for j in range(3):
            patch = xp[:, :, i:i + 9, j:j + 9]
            for g in range(group):
                want[:, g * fg:(g + 1) * fg] += np.einsum(
                    "nchw,fc->nfhw", patch[:, g * ci:(g + 1) * ci],
                    wd[g * fg:(g + 1) * fg, :, i, j])
    want += bd[None, :, None, None]
    assert np.abs(y - want).max() <= 1e-5 * np.abs(want).max(), (name, np.abs(y - want).max())
    if group != 2 and ((zps - (128 if zps.dtype == np.uint8 else 0)) == 0).all():
        check_path(path, "kiln.integer_conv2d" if group == 1 else "kiln.integer_depthwise_conv2d")
    text = emitted_graph(path)
    assert f"i8> -> tensor<{f}x{ci}x3x3xf32>" not in text, (name, "weights dequantized at run time")

w = rng.integers(-127, 128, (40, 24)).astype(np.int8)
path = qdq_model("qdq_matmul", "MatMul", T.INT8, [3, 5, 40], w, np.array(0.003, np.float32), 1)
m = compile_and_load(kiln, path)
x = rng.standard_normal((3, 5, 40)).astype(np.float32)
y, xq = m(x)
want = ((xq.astype(np.float64) + 7) * np.float64(np.float32(0.04))) @ \
    (w.astype(np.float64) * np.float64(np.float32(0.003)))
assert np.abs(y - want).max() <= 1e-5 * np.abs(want).max(), np.abs(y - want).max()
check_path(path, "kiln.integer_matmul")

# uint8 MatMul weights with a zero point and a scale per column (axis 1).
w = rng.integers(0, 256, (40, 24)).astype(np.uint8)
wzp = rng.integers(0, 256, 24).astype(np.uint8)
ws = (rng.random(24) * 0.01 + 0.002).astype(np.float32)
path = qdq_model("qdq_matmul_per_column", "MatMul", T.UINT8, [3, 5, 40], w, ws, 1, w_zp=wzp)
m = compile_and_load(kiln, path)
x = rng.standard_normal((3, 5, 40)).astype(np.float32)
y, xq = m(x)
want = ((xq.astype(np.float64) - 3) * np.float64(np.float32(0.04))) @ \
    ((w.astype(np.float64) - wzp) * ws.astype(np.float64))
assert np.abs(y - want).max() <= 1e-5 * np.abs(want).max(), np.abs(y - want).max()
assert "xui8> -> tensor<40x24xf32>" not in emitted_graph(path), "weights dequantized at run time"

# Gemm (torchvision's classifiers): [N, K] weights with transB and a scale
# per output (axis 0; 100 outputs, a reshaped resource), alpha and beta, an
# int32 bias dequantized; and [K, N] weights with a scale per tensor, no C.
# On this host and for a target without AVX2 (the f32 kernels there).
for name, trans_b, per_channel, alpha, beta in [("qdq_gemm_trans_b", 1, True, 0.5, 2.0),
                                                ("qdq_gemm", 0, False, 1.0, 1.0)]:
    n_out, k_in = 100, 72
    w = rng.integers(-127, 128, (n_out, k_in) if trans_b else (k_in, n_out)).astype(np.int8)
    ws = (rng.random(n_out) * 0.01 + 0.002).astype(np.float32) if per_channel \
        else np.array(0.003, np.float32)
    inits = [("xs", np.array(0.04, np.float32)), ("xzp", np.array(3, np.uint8)), ("w", w),
             ("ws", ws)]
    nodes = [h.make_node("QuantizeLinear", ["x", "xs", "xzp"], ["xq"]),
             h.make_node("DequantizeLinear", ["xq", "xs", "xzp"], ["xd"]),
             h.make_node("DequantizeLinear", ["w", "ws"], ["wd"], axis=0)]
    ins = ["xd", "wd"]
    bias = rng.integers(-300, 300, n_out).astype(np.int32)
    if trans_b:
        inits += [("b", bias), ("bs", (np.float32(0.04) * ws).astype(np.float32))]
        nodes.append(h.make_node("DequantizeLinear", ["b", "bs"], ["bd"], axis=0))
        ins.append("bd")
    nodes.append(h.make_node("Gemm", ins, ["y"], transB=trans_b, alpha=alpha, beta=beta))
    path = save_onnx(work, name, nodes, [vi("x", T.FLOAT, [3, k_in])],
                     [vi("y", T.FLOAT, None), vi("xq", T.UINT8, None)], inits, opset=13)
    wd = w.astype(np.float64) * (ws.astype(np.float64)[:, None] if trans_b else ws)
    x = rng.standard_normal((3, k_in)).astype(np.float32)
    for cpu in [None, "x86-64"]:
        m = kiln.load(kiln.compile(path, output=path[:-5] + (cpu or "") + ".so",
                                   **({"mcpu": cpu} if cpu else {})))
        y, xq = m(x)
        xd = (xq.astype(np.float64) - 3) * np.float64(np.float32(0.04))
        want = alpha * (xd @ (wd.T if trans_b else wd))
        if trans_b:
            want += beta * bias * (np.float32(0.04) * ws).astype(np.float64)
        assert np.abs(y - want).max() <= 1e-5 * np.abs(want).max(), (name, cpu)
    check_path(path, "kiln.integer_matmul")
    assert f"i8> -> tensor<{w.shape[0]}x{w.shape[1]}xf32>" not in emitted_graph(path), \
        (name, "weights dequantized at run time")

# --- Weight-only quantization ------------------------------------------------------
# DequantizeLinear of constant int8 weights into a product whose activation
# stays f32: per row of MatMul weights (axis 0), blocked (opset 21, blocks
# of 32 rows), and a Conv's weights per channel with a zero point. The
# weights are computed at compile time (kiln-fold-constant-weights, an f32
# constant the kernels pack), against float64.
K, N = 96, 80
wo_cases = []
w = rng.integers(-127, 128, (K, N)).astype(np.int8)
ws = (rng.random(K) * 0.01 + 0.002).astype(np.float32)
wo_cases.append(("wo_rows", [h.make_node("DequantizeLinear", ["w", "ws"], ["wd"], axis=0),
                             h.make_node("MatMul", ["x", "wd"], ["y"])],
                 [("w", w), ("ws", ws)], [4, K], 13,
                 lambda x, w=w, ws=ws: x @ (w * ws.astype(np.float64)[:, None])))
w = rng.integers(-8, 8, (K, N)).astype(np.int8)
ws = (rng.random((K // 32, N)) * 0.01 + 0.002).astype(np.float32)
wo_cases.append(("wo_blocked", [h.make_node("DequantizeLinear", ["w", "ws"], ["wd"], axis=0,
                                            block_size=32),
                                h.make_node("MatMul", ["x", "wd"], ["y"])],
                 [("w", w), ("ws", ws)], [4, K], 21,
                 lambda x, w=w, ws=ws: x @ (w * np.repeat(ws.astype(np.float64), 32, 0))))
w = rng.integers(0, 256, (64, 8, 3, 3)).astype(np.uint8)
ws = (rng.random(64) * 0.01 + 0.002).astype(np.float32)
wzp = rng.integers(100, 150, 64).astype(np.uint8)


def wo_conv_ref(x, w=w, ws=ws, wzp=wzp):
    wd = (w.astype(np.float64) - wzp[:, None, None, None]) * ws[:, None, None, None]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((1, 64, 6, 6))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + 6, j:j + 6], wd[:, :, i, j])
    return out


wo_cases.append(("wo_conv", [h.make_node("DequantizeLinear", ["w", "ws", "wzp"], ["wd"], axis=0),
                             h.make_node("Conv", ["x", "wd"], ["y"], pads=[1, 1, 1, 1])],
                 [("w", w), ("ws", ws), ("wzp", wzp)], [1, 8, 6, 6], 13, wo_conv_ref))
for name, nodes, inits, x_shape, opset, ref in wo_cases:
    path = save_onnx(work, name, nodes, [vi("x", T.FLOAT, x_shape)], [vi("y", T.FLOAT, None)],
                     inits, opset=opset, ir_version=10 if opset >= 21 else 7)
    m = compile_and_load(kiln, path)
    x = rng.standard_normal(x_shape).astype(np.float32)
    (y,) = m(x)
    want = ref(x.astype(np.float64))
    assert np.abs(y - want).max() <= 1e-5 * np.abs(want).max(), (name, np.abs(y - want).max())
    text = emitted_graph(path)
    assert "i8> -> tensor<" not in text.split("{-#")[0] and "kiln.gather" not in text, \
        (name, "weights dequantized at run time")

# int4 weights in blocks of 32 rows (ONNX Runtime's 4-bit weight-only QDQ
# form, opset 21): packed two to a byte, low nibble first.
w = rng.integers(-8, 8, (K, N)).astype(np.int8)
nibbles = w.reshape(-1).astype(np.uint8) & 0xF
w4 = onnx.TensorProto(name="w", data_type=22, dims=[K, N],
                      raw_data=(nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.uint8).tobytes())
ws = (rng.random((K // 32, N)) * 0.01 + 0.002).astype(np.float32)
model = h.make_model(h.make_graph(
    [h.make_node("DequantizeLinear", ["w", "ws"], ["wd"], axis=0, block_size=32),
     h.make_node("MatMul", ["x", "wd"], ["y"])], "wo_int4",
    [vi("x", T.FLOAT, [4, K])], [vi("y", T.FLOAT, None)], [w4, nh.from_array(ws, "ws")]),
    opset_imports=[h.make_opsetid("", 21)])
model.ir_version = 10
path = os.path.join(work, "wo_int4.onnx")
onnx.save(model, path)
m = compile_and_load(kiln, path)
x = rng.standard_normal((4, K)).astype(np.float32)
(y,) = m(x)
want = x.astype(np.float64) @ (w * np.repeat(ws.astype(np.float64), 32, 0))
assert np.abs(y - want).max() <= 1e-5 * np.abs(want).max(), ("wo_int4", np.abs(y - want).max())
assert "i4> -> tensor<" not in emitted_graph(path).split("{-#")[0], "int4 weights dequantized at run time"

# --- ONNX Runtime's QOperator contrib ops (com.microsoft) --------------------------
# Each is the float op between dequantized 8-bit inputs and a quantized
# result; against the same composition in float32 numpy (half to even),
# within one step (Sigmoid's exp differs in the last bits).
def contrib_model(name, node, inputs, inits, out_type=T.UINT8):
    g = h.make_graph([node], name, inputs, [vi("y", out_type, None)],
                     [nh.from_array(a, n) for n, a in inits])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 13),
                                           h.make_opsetid("com.microsoft", 1)])
    model.ir_version = 7
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    return path


f32 = np.float32


def deq(q, s, z):
    return (q.astype(f32) - f32(z)) * f32(s)


def req(v, s, z, lo=0, hi=255):
    return np.clip(np.rint(v.astype(f32) / f32(s)) + z, lo, hi)


def softmax(v, axis):
    e = np.exp(v - v.max(axis, keepdims=True))
    return (e / e.sum(axis, keepdims=True)).astype(f32)


qa = rng.integers(0, 256, (2, 3, 4, 5)).astype(np.uint8)
qb = rng.integers(0, 256, (3, 1, 5)).astype(np.uint8)
scal = [("as", np.array(0.05, f32)), ("az", np.array(120, np.uint8)),
        ("bs", np.array(0.02, f32)), ("bz", np.array(7, np.uint8)),
        ("ys", np.array(0.07, f32)), ("yz", np.array(100, np.uint8))]
contrib = [
    ("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], {}, [qa, qb],
     lambda a, b: req(deq(a, 0.05, 120) + deq(b, 0.02, 7), 0.07, 100)),
    ("QLinearMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], {}, [qa, qb],
     lambda a, b: req(deq(a, 0.05, 120) * deq(b, 0.02, 7), 0.07, 100)),
    ("QLinearSigmoid", ["a", "as", "az", "ys", "yz"], {}, [qa],
     lambda a: req(1 / (1 + np.exp(-deq(a, 0.05, 120))), 0.004, 100)),
    ("QLinearLeakyRelu", ["a", "as", "az", "ys", "yz"], {"alpha": 0.1}, [qa],
     lambda a: req(np.where(deq(a, 0.05, 120) >= 0, deq(a, 0.05, 120),
                            deq(a, 0.05, 120) * f32(0.1)), 0.07, 100)),
    ("QLinearGlobalAveragePool", ["a", "as", "az", "ys", "yz"], {}, [qa],
     lambda a: req(deq(a, 0.05, 120).mean(axis=(2, 3), keepdims=True), 0.07, 100)),
    ("QLinearSoftmax", ["a", "as", "az", "ys", "yz"], {"opset": 13, "axis": 1}, [qa],
     lambda a: req(softmax(deq(a, 0.05, 120), 1), 0.004, 100)),
    ("QLinearSoftmax", ["a", "as", "az", "ys", "yz"], {"opset": 11, "axis": 2}, [qa],
     lambda a: req(softmax(deq(a, 0.05, 120).reshape(2, 3, 20), 2).reshape(2, 3, 4, 5),
                   0.004, 100)),
    ("QLinearConcat", ["ys", "yz", "a", "as", "az", "a2", "bs", "bz"], {"axis": 1},
     [qa, qa[:, :2]],
     lambda a, a2: req(np.concatenate([deq(a, 0.05, 120), deq(a2, 0.02, 7)], 1), 0.07, 100)),
]


def avg_pool_3x3_s2(v):  # NCHW, pads 1, the padding not counted
    n, c, hh, ww = v.shape
    p = np.pad(v, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=np.nan)
    oh, ow = (hh - 1) // 2 + 1, (ww - 1) // 2 + 1
    out = np.zeros((n, c, oh, ow), f32)
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = np.nanmean(p[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3], axis=(2, 3))
    return out


pool_attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
contrib += [
    ("QLinearAveragePool", ["a", "as", "az", "ys", "yz"], pool_attrs, [qa],
     lambda a: req(avg_pool_3x3_s2(deq(a, 0.05, 120)), 0.07, 100)),
    ("QLinearAveragePool", ["a", "as", "az", "ys", "yz"], dict(pool_attrs, channels_last=1),
     [qa.transpose(0, 2, 3, 1).copy()],
     lambda a: req(avg_pool_3x3_s2(deq(a, 0.05, 120).transpose(0, 3, 1, 2)).transpose(0, 2, 3, 1),
                   0.07, 100)),
]
for op, ins, attrs, data, ref in contrib:
    names = [n for n in ("a", "b", "a2") if n in ins]
    inits = [(n, v) for n, v in scal if n in ins]
    if op in ("QLinearSigmoid", "QLinearSoftmax"):
        inits = [(n, np.array(0.004, f32) if n == "ys" else v) for n, v in inits]
    name = op.lower() + ("_nhwc" if attrs.get("channels_last") else "") + \
        (f"_opset{attrs['opset']}" if "opset" in attrs else "")
    path = contrib_model(name, h.make_node(op, ins, ["y"], domain="com.microsoft", **attrs),
                         [vi(n, T.UINT8, list(d.shape)) for n, d in zip(names, data)], inits)
    m = compile_and_load(kiln, path)
    (y,) = m(*data)
    want = ref(*data)
    assert y.dtype == np.uint8 and y.shape == want.shape, (op, y.shape, want.shape)
    assert np.abs(y.astype(np.int64) - want).max() <= 1, (op, np.abs(y - want).max())
    assert (y.astype(np.int64) == want).mean() > 0.97, (op, (y == want).mean())

# QGemm (the QOperator form of a Gemm classifier): transB with a scale per
# output column, zero points of 0 per column and an int32 C, quantized
# output; and [K, N] weights per tensor with a float output and alpha.
M, K, N = 3, 72, 80
for name, trans_b, per_column, alpha, quantized in [("qgemm_trans_b", 1, True, 1.0, True),
                                                    ("qgemm_float", 0, False, 0.5, False)]:
    qa = rng.integers(0, 256, (M, K)).astype(np.uint8)
    wq = rng.integers(-127, 128, (N, K) if trans_b else (K, N)).astype(np.int8)
    bsc = (rng.random(N) * 0.01 + 0.002).astype(f32) if per_column else np.array(0.004, f32)
    bias = rng.integers(-3000, 3000, N).astype(np.int32)
    inits = [("as", np.array(0.05, f32)), ("az", np.array(120, np.uint8)), ("w", wq),
             ("bs", bsc), ("bz", np.zeros(bsc.shape, np.int8)), ("c", bias)]
    ins = ["a", "as", "az", "w", "bs", "bz", "c"]
    if quantized:
        inits += [("ys", np.array(0.3, f32)), ("yz", np.array(90, np.uint8))]
        ins += ["ys", "yz"]
    path = contrib_model(name, h.make_node("QGemm", ins, ["y"], domain="com.microsoft",
                                           alpha=alpha, transB=trans_b),
                         [vi("a", T.UINT8, [M, K])], inits, T.UINT8 if quantized else T.FLOAT)
    m = compile_and_load(kiln, path)
    (y,) = m(qa)
    acc = (qa.astype(np.int64) - 120) @ (wq.T if trans_b else wq).astype(np.int64) + bias
    real = acc * (alpha * 0.05 * bsc.astype(np.float64))
    if quantized:
        want = np.clip(np.rint(real / 0.3) + 90, 0, 255)
        assert y.dtype == np.uint8 and np.abs(y.astype(np.int64) - want).max() <= 1, name
    else:
        assert np.abs(y - real).max() <= 1e-5 * np.abs(real).max(), (name, np.abs(y - real).max())
    check_path(path, "kiln.integer_matmul")

# --- Reductions of every element, in blocks ---------------------------------------
# DynamicQuantizeLinear's min and max of a whole activation (13,120 values: 8
# blocks of 25 rows of 64 lanes and 320 left over), against the ONNX
# definition in float32, exactly; ReduceMean / ReduceMax / ReduceSum of
# everything (keepdims, the batch of 1 not listed) against float64.
shape = [1, 8, 40, 41]
path = save_onnx(work, "dql_large", [
    h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]),
    h.make_node("ReduceMean", ["x"], ["mean"], axes=[1, 2, 3]),
    h.make_node("ReduceMax", ["x"], ["max"]),
    h.make_node("ReduceSum", ["x", "all"], ["sum"], keepdims=0),
], [vi("x", T.FLOAT, shape)],
    [vi("xq", T.UINT8, None), vi("xs", T.FLOAT, None), vi("xzp", T.UINT8, None),
     vi("mean", T.FLOAT, None), vi("max", T.FLOAT, None), vi("sum", T.FLOAT, None)],
    [("all", np.array([0, 1, 2, 3], np.int64))], opset=13)
m = compile_and_load(kiln, path)
for trial, where in enumerate([0, 5, 12799, 12800, 13119]):
    x = (rng.standard_normal(shape) * 2 + 0.3).astype(np.float32)
    x.flat[where] = -40.0 - trial  # the minimum in a block, at an edge or in the tail
    x.flat[(where * 7 + 11) % x.size] = 30.0 + trial
    xq, xs, xzp, mean, mx, sm = m(x)
    want_q, scale, zp = dql_ref(x)
    assert xs == scale and int(xzp) == int(zp), (where, xs, scale, xzp, zp)
    assert np.array_equal(xq.astype(np.int64), want_q), where
    x64 = x.astype(np.float64)
    assert mx.shape == (1, 1, 1, 1) and mx.flat[0] == x.max(), where
    assert mean.shape == (1, 1, 1, 1) and abs(mean.flat[0] - x64.mean()) <= 1e-5 * np.abs(x64).mean()
    assert sm.shape == () and abs(float(sm) - x64.sum()) <= 1e-5 * np.abs(x64).sum()

# The same range of a tensor a parallel loop computes (here 2 x, 41,600
# values): each tile's minimum and maximum are taken as the loop writes it
# (fuseMinMaxIntoProducer in TileAndVectorize.cpp). Exact, with the extremes
# in any tile, and a NaN or infinities anywhere giving the scale the ONNX
# definition does.
shape = [1, 16, 40, 65]
path = save_onnx(work, "dql_of_product", [
    h.make_node("Mul", ["x", "two"], ["y"]),
    h.make_node("DynamicQuantizeLinear", ["y"], ["yq", "ys", "yzp"]),
], [vi("x", T.FLOAT, shape)],
    [vi("yq", T.UINT8, None), vi("ys", T.FLOAT, None), vi("yzp", T.UINT8, None)],
    [("two", np.array(2.0, np.float32))], opset=13)
m = compile_and_load(kiln, path)
f = np.float32
for trial, where in enumerate([0, 64, 2599, 41471, 41472, 41599]):
    x = (rng.standard_normal(shape) + 0.1).astype(np.float32)
    x.flat[where] = -20.0 - trial
    x.flat[(where * 13 + 5) % x.size] = 15.0 + trial
    y = x * f(2)
    yq, ys, yzp = m(x)
    want_q, scale, zp = dql_ref(y)
    assert ys == scale and int(yzp) == int(zp), (where, ys, scale, yzp, zp)
    assert np.array_equal(yq.astype(np.int64), want_q), where
for where in [3, 20000, 41599]:
    x = rng.standard_normal(shape).astype(np.float32)
    x.flat[where] = np.nan
    assert np.isnan(m(x)[1]), where  # min and max NaN, as numpy's
    x.flat[where] = np.inf
    x.flat[(where + 1000) % x.size] = -np.inf
    assert m(x)[1] == np.inf, where

# DynamicQuantizeLinear of a concatenation whose first part is read elsewhere
# too (a skip connection, here also a graph output): the range and the
# quantization are taken part by part (kiln-quantize-concat-parts), which
# must give exactly the ONNX definition on the whole, with the extremes in
# either part, and NaN from either part.
path = save_onnx(work, "dql_of_concat", [
    h.make_node("Relu", ["x"], ["a"]),
    h.make_node("Mul", ["x2", "two"], ["b"]),
    h.make_node("Concat", ["a", "b"], ["c"], axis=1),
    h.make_node("DynamicQuantizeLinear", ["c"], ["cq", "cs", "czp"]),
], [vi("x", T.FLOAT, [1, 16, 12, 20]), vi("x2", T.FLOAT, [1, 32, 12, 20])],
    [vi("cq", T.UINT8, None), vi("cs", T.FLOAT, None), vi("czp", T.UINT8, None),
     vi("a", T.FLOAT, None)],
    [("two", np.array(2.0, np.float32))], opset=13)
m = compile_and_load(kiln, path)
text = emitted_graph(path)
assert "xui8>) -> tensor<1x12x20x48xui8>" in text or "xui8>) -> tensor<1x48x12x20xui8>" in text, \
    "dql_of_concat: the uint8 parts are concatenated"
for trial in range(4):
    x = (rng.standard_normal((1, 16, 12, 20)) + 0.2).astype(np.float32)
    x2 = rng.standard_normal((1, 32, 12, 20)).astype(np.float32)
    (x if trial % 2 else x2).flat[trial * 997] = 25.0 + trial  # the maximum
    x2.flat[trial * 331] = -30.0 - trial  # the minimum (Relu keeps x >= 0)
    if trial == 3:
        x2 *= f(0.01)  # the whole range comes from the Relu part
    c = np.concatenate([np.maximum(x, 0), x2 * f(2)], axis=1)
    cq, cs, czp, a = m(x, x2)
    want_q, scale, zp = dql_ref(c)
    assert cs == scale and int(czp) == int(zp), (trial, cs, scale, czp, zp)
    assert np.array_equal(cq.astype(np.int64), want_q), trial
    assert np.array_equal(a, np.maximum(x, 0)), trial
for which in range(2):
    x = rng.standard_normal((1, 16, 12, 20)).astype(np.float32)
    x2 = rng.standard_normal((1, 32, 12, 20)).astype(np.float32)
    (x if which == 0 else x2).flat[77] = np.nan
    if which == 0:  # Relu passes NaN on, as numpy's maximum does
        assert np.isnan(np.maximum(x, 0)).any()
    assert np.isnan(m(x, x2)[1]), which

print("imported int8: %d convolutions, 1 MatMulInteger, QLinearConv, QLinearMatMul "
      "exact, QDQ Conv, depthwise and grouped Conv and MatMul (%s)" % (len(CONVS), "vpdpbusd kernels" if VNNI else "vpmaddwd kernels" if AVX2 else "f32 kernels"))
