#!/usr/bin/python3
"""QuantizeLinear's x / scale, rounded half to even and saturated, exactly
as IEEE float32 division gives it (docs/quantization.md, "Division by a
scale in a multiply and an fma"). kiln-cpu-cheap-float-ops computes the
quotient as fma(x, hi, x * lo) where that was proven to round as the
division for every x, and otherwise (a scale with no such pair, like 0.7,
or one known only at run time) as a reciprocal multiply with two fma
corrections; this runs the compiled code on the inputs where a slip would
show: x whose quotient lies within a few ulps of every half-integer of the
output range, on either side, ±0, ±infinity, the largest floats and random
values, for constant scales (one a power of two), for scales given at run
time (with run-time zero points, and ones outside [2^-60, 2^60] that keep
the division: 0, a subnormal, 1e30), with a uint8 zero point and with int8
output, in DynamicQuantizeLinear (whose scale comes from its input), and
after a Conv (the requantization in a product's epilogue, QDQ). Compared
with numpy (float32 division, rint, clip) bit for bit; the emitted LLVM is
checked to hold the fma and no division where the multiply applies.

usage: check_quantize_rounding.py WORKDIR PYTHONPATH
"""
import os
import re
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

work, pythonpath = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import compile_and_load, save_onnx  # noqa: E402

f32 = np.float32
rng = np.random.default_rng(7)


def near_ties(scale, lo, hi):
    """x whose x / scale lies near each half-integer k + 0.5 in [lo, hi],
    up to 4 ulps of x either side, and the edges."""
    ties = (np.arange(lo, hi + 1, dtype=np.float64) + 0.5) * float(scale)
    xs = [ties.astype(f32)]
    for steps in range(1, 5):
        xs.append(np.nextafter(xs[-1], f32(np.inf)))
    down = ties.astype(f32)
    for steps in range(1, 5):
        down = np.nextafter(down, f32(-np.inf))
        xs.append(down)
    xs.append(np.array([0.0, -0.0, np.inf, -np.inf, 3.4e38, -3.4e38,
                        np.finfo(f32).tiny, 1e-40], f32))
    xs.append((rng.standard_normal(4096) * float(scale) * 100).astype(f32))
    x = np.concatenate(xs)
    pad = (-len(x)) % 64
    return np.concatenate([x, np.zeros(pad, f32)])


def reference(x, scale, zp, signed):
    lo, hi = (-128, 127) if signed else (0, 255)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        q = np.rint(x / f32(scale)).astype(np.float64) + zp
        return np.clip(q, lo, hi).astype(np.int8 if signed else np.uint8)


def emitted_llvm(path):
    out = path[:-5] + ".ll"
    kiln.compile(path, output=out, emit="llvm")
    return open(out).read()


cases = 0
for scale, signed, zp in [(0.02, False, 128), (f32(1 / 25.5), False, 3),
                          (0.0073, True, 0), (0.125, True, 0),
                          (0.7, False, 17)]:
    scale = f32(scale)
    x = near_ties(scale, -140 - zp if signed else -10 - zp, 140)
    qt = T.INT8 if signed else T.UINT8
    name = f"q_{'s' if signed else 'u'}{scale:.6g}".replace(".", "_")
    path = save_onnx(
        work, name,
        [h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="quant")],
        [h.make_tensor_value_info("x", T.FLOAT, [len(x)])],
        [h.make_tensor_value_info("y", qt, [len(x)])],
        [("s", np.array(scale, f32)),
         ("z", np.array(zp, np.int8 if signed else np.uint8))])
    got = compile_and_load(kiln, path)(x)[0]
    want = reference(x, scale, zp, signed)
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, (name, [(x[i], got[i], want[i]) for i in bad[:5]])
    ll = emitted_llvm(path)
    assert not re.search(r"fdiv ", ll), (name, "a division is left")
    if scale != f32(0.125):
        assert "llvm.fma" in ll, (name, "no fma")
    cases += len(x)

# Scales and zero points known only at run time: one compiled model, the
# scale and zero point passed with x. Vectors divide by the reciprocal with
# two corrections; 0, subnormal and huge scales take the division.
for signed in (False, True):
    qt = T.INT8 if signed else T.UINT8
    zt = np.int8 if signed else np.uint8
    n = len(near_ties(f32(0.02), -300, 300))
    name = f"q_run_time_{'s' if signed else 'u'}"
    path = save_onnx(
        work, name,
        [h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="quant")],
        [h.make_tensor_value_info("x", T.FLOAT, [n]),
         h.make_tensor_value_info("s", T.FLOAT, []),
         h.make_tensor_value_info("z", qt, [])],
        [h.make_tensor_value_info("y", qt, [n])])
    model = compile_and_load(kiln, path)
    ll = emitted_llvm(path)
    assert "llvm.fma" in ll and "fdiv float 1.0" in ll, (name, "no reciprocal")
    for scale, zp in [(0.02, 0), (0.7, 17), (f32(1 / 25.5), 3), (0.0073, -5),
                      (0.125, 0), (3.1e-5, 1), (0.0, 0), (1e-40, 0),
                      (1e30, 2), (1e-19, 0)]:
        if zp < 0 and not signed:
            zp = -zp
        scale = f32(scale)
        x = near_ties(scale if scale > 1e-30 else f32(1), -300, 300)[:n]
        got = model(x, np.array(scale, f32), np.array(zp, zt))[0]
        want = reference(x, scale, zp, signed)
        # 0 / 0 is NaN, whose conversion to an integer ONNX leaves open.
        with np.errstate(divide="ignore", invalid="ignore"):
            defined = ~np.isnan(x / scale)
        bad = np.nonzero((got != want) & defined)[0]
        assert len(bad) == 0, (name, float(scale),
                               [(x[i], got[i], want[i]) for i in bad[:5]])
        cases += len(x)

# DynamicQuantizeLinear: the scale is (max(x, 0) - min(x, 0)) / 255 of the
# input itself and the zero point round(-min / scale), both at run time.
# x spans [-1.3, 4.1] and holds the near-ties of that scale.
lo_x, hi_x = f32(-1.3), f32(4.1)
dscale = (hi_x - lo_x) / f32(255)
x = near_ties(dscale, -60, 190)
x = np.clip(x, lo_x, hi_x)
x[:2] = [lo_x, hi_x]
path = save_onnx(
    work, "dynamic_quantize",
    [h.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])],
    [h.make_tensor_value_info("x", T.FLOAT, [len(x)])],
    [h.make_tensor_value_info("y", T.UINT8, [len(x)]),
     h.make_tensor_value_info("s", T.FLOAT, []),
     h.make_tensor_value_info("z", T.UINT8, [])])
y, s_got, z_got = compile_and_load(kiln, path)(x)
zp = int(np.clip(np.rint(f32(0) - lo_x / dscale), 0, 255))
assert s_got == dscale and z_got == zp, (s_got, dscale, z_got, zp)
want = reference(x, dscale, zp, False)
bad = np.nonzero(y != want)[0]
assert len(bad) == 0, ("dynamic", [(x[i], y[i], want[i]) for i in bad[:5]])
cases += len(x)

# The same rounding in a QDQ convolution's epilogue: uint8 activations, int8
# weights, the output quantized with scale 0.02 and zero point 128; against
# the float64 convolution of the dequantized values, quantized in float32 as
# ONNX defines it.
c, f, hw = 16, 32, 8
xq = rng.integers(0, 256, (1, c, hw, hw)).astype(np.uint8)
wq = rng.integers(-127, 128, (f, c, 1, 1)).astype(np.int8)
xs, ws, ys = f32(0.05), f32(0.01), f32(0.02)
nodes = [
    h.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
    h.make_node("DequantizeLinear", ["wq", "ws"], ["wf"]),
    h.make_node("Conv", ["xf", "wf"], ["yf"], name="conv"),
    h.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"], name="quant"),
]
path = save_onnx(
    work, "qdq_conv", nodes,
    [h.make_tensor_value_info("xq", T.UINT8, list(xq.shape))],
    [h.make_tensor_value_info("y", T.UINT8, [1, f, hw, hw])],
    [("wq", wq), ("xs", np.array(xs, f32)), ("xz", np.array(128, np.uint8)),
     ("ws", np.array(ws, f32)), ("ys", np.array(ys, f32)),
     ("yz", np.array(128, np.uint8))])
got = compile_and_load(kiln, path)(xq)[0]
ll = emitted_llvm(path)
assert "llvm.fma" in ll and not re.search(r"fdiv ", ll), \
    ("qdq_conv", "the epilogue still divides")
acc = np.einsum("nchw,fc->nfhw", (xq.astype(np.int64) - 128),
                wq[:, :, 0, 0].astype(np.int64))
# The exact product is an integer times xs * ws; float32 holds it exactly
# only where Kiln's accumulation does, so the quotient is compared where it
# is not within a float32 ulp of a tie and the rest within one step.
yf = (acc * (np.float64(xs) * np.float64(ws))).astype(f32)
want = reference(yf, ys, 128, False)
diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
assert diff.max() <= 1, ("qdq_conv", diff.max())
q = yf.astype(np.float64) / np.float64(ys)
clear = np.abs(q - np.floor(q) - 0.5) > 1e-4
assert np.array_equal(got[clear], want[clear]), "qdq_conv"
print(f"QuantizeLinear, DynamicQuantizeLinear: {cases} values over 5 "
      "constant scales, 10 run-time ones and one dynamic, bit for bit; "
      f"QDQ Conv {diff.size} outputs ({int((diff > 0).sum())} ties one step)")
