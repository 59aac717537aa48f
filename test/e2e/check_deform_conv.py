#!/usr/bin/python3
"""DeformConv (opsets 19 and 22; detection models with deformable
convolutions, as torchvision.ops.deform_conv2d exports them) against a
float64 numpy reference of ONNX's definition and against torchvision: each kernel tap samples X
bilinearly at its regular position plus its offset, a corner outside X
counts 0, times the mask, then the weights (docs/ops.md). Offsets reach
past the borders; groups, offset groups, strides, padding and dilation.

usage: check_deform_conv.py WORKDIR PYTHONPATH
"""
import os
import sys

import numpy as np
import torch
from onnx import TensorProto as T
from onnx import helper as h

work, pythonpath = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402
from torchvision.ops import deform_conv2d  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import assert_close, compile_and_load, save_onnx  # noqa: E402

rng = np.random.default_rng(5)


def bilinear(img, y, x):
    """img [H, W] at real (y, x); corners outside the image count 0."""
    hh, ww = img.shape
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    total = 0.0
    for cy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for cx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if 0 <= cy < hh and 0 <= cx < ww:
                total += wy * wx * img[cy, cx]
    return total


def deform_ref(x, w, off, b, mask, stride, pad, dil, group, og):
    n, c, _, _ = x.shape
    oc, cg, kh, kw = w.shape
    _, _, oh, ow = off.shape
    off = off.reshape(n, og, kh, kw, 2, oh, ow)
    mask = np.ones((n, og, kh, kw, oh, ow)) if mask is None else \
        mask.reshape(n, og, kh, kw, oh, ow)
    cols = np.zeros((n, c, kh, kw, oh, ow))
    for bi in range(n):
        for ci in range(c):
            g = ci // (c // og)
            for i in range(kh):
                for j in range(kw):
                    for yi in range(oh):
                        for xi in range(ow):
                            y = yi * stride - pad + i * dil + off[bi, g, i, j, 0, yi, xi]
                            xx = xi * stride - pad + j * dil + off[bi, g, i, j, 1, yi, xi]
                            cols[bi, ci, i, j, yi, xi] = mask[bi, g, i, j, yi, xi] * \
                                bilinear(x[bi, ci], y, xx)
    y = np.zeros((n, oc, oh, ow))
    ocg = oc // group
    for o in range(oc):
        g = o // ocg
        y[:, o] = np.einsum("nckhw,ck->nhw",
                            cols[:, g * cg:(g + 1) * cg].reshape(n, cg, kh * kw, oh, ow),
                            w[o].reshape(cg, kh * kw))
    return y if b is None else y + b[None, :, None, None]


def case(name, n, c, hw, oc, k, stride, pad, dil, group, og, with_mask, opset):
    hh, ww = hw
    oh = (hh + 2 * pad - (k - 1) * dil - 1) // stride + 1
    ow = (ww + 2 * pad - (k - 1) * dil - 1) // stride + 1
    x = rng.standard_normal((n, c, hh, ww)).astype(np.float32)
    w = (rng.standard_normal((oc, c // group, k, k)) * 0.3).astype(np.float32)
    b = rng.standard_normal(oc).astype(np.float32)
    off = (rng.standard_normal((n, og * k * k * 2, oh, ow)) * 2.5).astype(np.float32)
    mask = rng.uniform(0, 1, (n, og * k * k, oh, ow)).astype(np.float32) \
        if with_mask else None
    ins = ["x", "off"] + (["mask"] if with_mask else [])
    path = save_onnx(
        work, name,
        [h.make_node("DeformConv", ["x", "w", "off", "b"] + (["mask"] if with_mask else []),
                     ["y"], kernel_shape=[k, k], strides=[stride] * 2,
                     pads=[pad] * 4, dilations=[dil] * 2, group=group,
                     offset_group=og, name="dcn")],
        [h.make_tensor_value_info("x", T.FLOAT, list(x.shape)),
         h.make_tensor_value_info("off", T.FLOAT, list(off.shape))] +
        ([h.make_tensor_value_info("mask", T.FLOAT, list(mask.shape))] if with_mask else []),
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        [("w", w), ("b", b)], opset=opset)
    m = compile_and_load(kiln, path)
    feeds = [x, off] + ([mask] if with_mask else [])
    assert len(feeds) == len(ins)
    want = deform_ref(x.astype(np.float64), w.astype(np.float64), off.astype(np.float64),
                      b.astype(np.float64), None if mask is None else mask.astype(np.float64),
                      stride, pad, dil, group, og)
    kept = [f.copy() for f in feeds]
    got = m(*feeds)[0]
    # The inputs are the caller's: a run never writes them (the offsets are
    # reshaped first, and a view of an input was once reused in place).
    for f, k in zip(feeds, kept):
        assert np.array_equal(f, k), f"{name}: an input changed in the run"
    assert_close(got, want, name, 1e-5)
    # torchvision's deform_conv2d (the op detection models export) agrees.
    with torch.no_grad():
        tv = deform_conv2d(
            torch.from_numpy(x), torch.from_numpy(off), torch.from_numpy(w),
            torch.from_numpy(b), stride=stride, padding=pad, dilation=dil,
            mask=None if mask is None else torch.from_numpy(mask))
    assert_close(got, tv.numpy().astype(np.float64), name + " vs torchvision",
                 1e-5)


case("dcn_groups", 2, 4, (7, 9), 6, 3, 2, 1, 1, 2, 2, True, 19)
case("dcn_dilated", 1, 3, (8, 8), 4, 3, 1, 2, 2, 1, 1, False, 22)

# Offsets whose shape disagrees with the kernel are refused by name.
path = save_onnx(
    work, "dcn_bad_offset",
    [h.make_node("DeformConv", ["x", "w", "off"], ["y"], name="dcn")],
    [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 5, 5]),
     h.make_tensor_value_info("off", T.FLOAT, [1, 8, 3, 3])],
    [h.make_tensor_value_info("y", T.FLOAT, None)],
    [("w", np.ones((2, 2, 3, 3), np.float32))], opset=19)
try:
    kiln.compile(path)
    raise AssertionError("an offset of 8 channels for a 3x3 kernel compiled")
except kiln.Error as e:
    assert "node 'dcn' (DeformConv, opset 19)" in str(e) and "offset" in str(e), str(e)
print("deform conv: ok")
