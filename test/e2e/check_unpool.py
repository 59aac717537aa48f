#!/usr/bin/python3
"""MaxPool with its Indices followed by MaxUnpool, as SegNet/ENet-style
decoders export them (docs/ops.md): the unpooled tensor against a numpy
float64 reference (each window's maximum written back at its position,
zeros elsewhere), for 2x2/2 windows, 3x3/2 windows with padding, and an
output_shape one larger than the unpooled shape (zero-padded at the end,
as ONNX's reference defines it). Random inputs, so maxima are unique.

GlobalLpPool, which has no ONNX backend test, against numpy float64 for
p = 1, 2, 3 on 2-D and 3-D inputs (rtol 1e-5).

usage: check_unpool.py WORKDIR PYTHONPATH
"""
import os
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

work, pythonpath = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import assert_close, compile_and_load, save_onnx  # noqa: E402

rng = np.random.default_rng(11)


def unpooled(o, k, s, p):
    """MaxUnpool's length for a pooled length o."""
    return (o - 1) * s - 2 * p + k


def unpool_ref(x, k, s, p, grow):
    """MaxPool (k, stride s, pads p) then MaxUnpool back, Relu between."""
    n, c, hh, ww = x.shape
    oh, ow = (hh + 2 * p - k) // s + 1, (ww + 2 * p - k) // s + 1
    y = np.zeros((n, c, unpooled(oh, k, s, p) + grow,
                  unpooled(ow, k, s, p) + grow))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = max(i * s - p, 0), max(j * s - p, 0)
            r1, c1 = min(i * s - p + k, hh), min(j * s - p + k, ww)
            win = x[:, :, r0:r1, c0:c1].reshape(n, c, -1)
            at = win.argmax(-1)
            for b in range(n):
                for ch in range(c):
                    r, q = divmod(at[b, ch], c1 - c0)
                    y[b, ch, r0 + r, c0 + q] = max(win[b, ch, at[b, ch]], 0)
    return y


# Sizes whose windows tile them, so that unpooling restores the shape the
# indices count in (MaxUnpool's indices index the flattened unpooled shape).
for k, s, p, grow, hw in ((2, 2, 0, 0, (8, 10)), (3, 2, 1, 0, (9, 11)),
                          (2, 2, 0, 1, (8, 10))):
    shape = [2, 3, *hw]
    assert all(unpooled((n + 2 * p - k) // s + 1, k, s, p) == n for n in hw)
    inputs, inits = ["v", "i"], []
    if grow:
        inputs.append("out_shape")
        inits.append(("out_shape", np.array([2, 3, hw[0] + grow,
                                             hw[1] + grow], np.int64)))
    path = save_onnx(
        work, f"unpool_{k}_{s}_{p}_{grow}",
        [h.make_node("MaxPool", ["x"], ["m", "i"], kernel_shape=[k, k],
                     strides=[s, s], pads=[p] * 4),
         h.make_node("Relu", ["m"], ["v"]),
         h.make_node("MaxUnpool", inputs, ["y"], kernel_shape=[k, k],
                     strides=[s, s], pads=[p] * 4, name="unpool")],
        [h.make_tensor_value_info("x", T.FLOAT, shape)],
        [h.make_tensor_value_info("y", T.FLOAT, None)], inits, opset=11)
    m = compile_and_load(kiln, path)
    x = rng.standard_normal(shape).astype(np.float32)
    assert_close(m(x)[0], unpool_ref(x.astype(np.float64), k, s, p, grow),
                 f"unpool k={k} s={s} p={p} grow={grow}", 1e-6)

# An output_shape smaller than the unpooled shape is refused by name.
path = save_onnx(
    work, "unpool_small",
    [h.make_node("MaxUnpool", ["v", "i", "out_shape"], ["y"],
                 kernel_shape=[2, 2], strides=[2, 2], name="unpool")],
    [h.make_tensor_value_info("v", T.FLOAT, [1, 1, 2, 2]),
     h.make_tensor_value_info("i", T.INT64, [1, 1, 2, 2])],
    [h.make_tensor_value_info("y", T.FLOAT, None)],
    [("out_shape", np.array([1, 1, 3, 3], np.int64))], opset=11)
try:
    kiln.compile(path)
    raise AssertionError("a smaller output_shape compiled")
except kiln.Error as e:
    assert "node 'unpool' (MaxUnpool, opset 11): output_shape 1x1x3x3 must" \
        in str(e), str(e)
print("max unpool: ok")

# GlobalLpPool: (sum over every spatial position of |x|^p)^(1/p).
for p, shape, opset in ((1, [2, 3, 5, 7], 2), (2, [1, 4, 6, 6], 22),
                        (3, [2, 2, 3, 4, 5], 22)):
    path = save_onnx(
        work, f"global_lp_{p}_{len(shape)}",
        [h.make_node("GlobalLpPool", ["x"], ["y"], p=p, name="glp")],
        [h.make_tensor_value_info("x", T.FLOAT, shape)],
        [h.make_tensor_value_info("y", T.FLOAT, None)], opset=opset)
    m = compile_and_load(kiln, path)
    x = rng.standard_normal(shape).astype(np.float32)
    axes = tuple(range(2, len(shape)))
    want = (np.abs(x.astype(np.float64)) ** p).sum(axis=axes, keepdims=True) ** (1.0 / p)
    assert_close(m(x)[0], want, f"GlobalLpPool p={p} {shape}", 1e-5)
print("global lp pool: ok")
