#!/usr/bin/python3
"""Division of a tensor by a scalar known only at run time is IEEE float32
division, bit for bit. kiln-cpu-cheap-float-ops computes such a vector
division as x * (1/d) with two fma corrections (Markstein), falling back to
the division for a divisor outside [2^-20, 2^20] and for any vector holding
an x that is neither 0 nor within [2^-100, 2^100] (docs/quantization.md,
"Scales with no pair, and scales known at run time"). This runs one
compiled Div (x by a scalar input) and one Softmax at run-time sizes over
the values where that could slip: ±0 (the quotient's sign), subnormals,
the guard's edges and their neighbours, the largest floats, ±infinity,
NaN, random values across every exponent, and divisors inside and outside
the range (0, ±inf, NaN, negative, subnormal, the range's ends and their
neighbours). Quotients are compared with numpy's float32 division bit for
bit (any NaN matching any NaN); the emitted LLVM is checked to hold the
corrected quotient.

usage: check_scalar_division.py WORKDIR PYTHONPATH
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
from small_onnx import compile_and_load, save_onnx  # noqa: E402

f32 = np.float32
rng = np.random.default_rng(11)


def around(v):
    """v and its float32 neighbours, both signs."""
    v = f32(v)
    xs = [v, np.nextafter(v, f32(np.inf)), np.nextafter(v, f32(0))]
    return xs + [-x for x in xs]


special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40,
           np.finfo(f32).tiny, 3.4e38, -3.4e38, 1.0, 0.5, 3.0]
for edge in (2.0 ** -100, 2.0 ** 100, 2.0 ** -126):
    special += around(edge)
bits = rng.integers(0, 2 ** 32, 8192, dtype=np.uint64).astype(np.uint32)
spread = bits.view(f32)
normal = (rng.standard_normal(8192) * 10).astype(f32)
x = np.concatenate([np.array(special, f32), spread, normal])
x = np.concatenate([x, np.zeros((-len(x)) % 64, f32)])
# Vectors of only ordinary values take the corrected quotient; the mixed
# ones above take the division. The last 4096 are ordinary values with
# zeros of both signs among them, and the guard's inner edges (2^-100 and
# 2^100 and their neighbours inside the range), so those take the
# corrected quotient too.
tail = normal[:4096].copy()
tail[::7] = f32(0.0)
tail[3::11] = f32(-0.0)
inner = [f32(2.0 ** -100), np.nextafter(f32(2.0 ** -100), f32(1)),
         f32(2.0 ** 100), np.nextafter(f32(2.0 ** 100), f32(0))]
tail[5::13] = np.resize(np.array(inner + [-v for v in inner], f32),
                        len(tail[5::13]))
x[-4096:] = tail
n = len(x)

path = save_onnx(
    work, "div_by_scalar",
    [h.make_node("Div", ["x", "s"], ["y"], name="div")],
    [h.make_tensor_value_info("x", T.FLOAT, [n]),
     h.make_tensor_value_info("s", T.FLOAT, [])],
    [h.make_tensor_value_info("y", T.FLOAT, [n])])
model = compile_and_load(kiln, path)
ll_path = path[:-5] + ".ll"
kiln.compile(path, output=ll_path, emit="llvm")
ll = open(ll_path).read()
assert "llvm.fma" in ll and "fdiv float 1.0" in ll, "no corrected quotient"


def same(got, want):
    """Bit for bit, a NaN matching any NaN."""
    nan = np.isnan(want)
    return np.array_equal(np.isnan(got), nan) and np.array_equal(
        got[~nan].view(np.uint32), want[~nan].view(np.uint32))


divisors = [1.0, 3.0, -7.5, 0.7, 255.0, 1 / 255, 1e-3, 12345.6, 0.0, -0.0,
            np.inf, -np.inf, np.nan, 1e-40, 1e30, 2.0 ** -20, 2.0 ** 20]
divisors += around(2.0 ** -20)[:3] + around(2.0 ** 20)[:3]
divisors += list(rng.uniform(-20, 20, 8).astype(f32) * 2.0 ** rng.integers(-20, 20, 8))
cases = 0
for d in divisors:
    d = f32(d)
    got = model(x, np.array(d, f32))[0]
    with np.errstate(all="ignore"):
        want = x / d
    if not same(got, want):
        bad = np.nonzero(got.view(np.uint32) != want.view(np.uint32))[0]
        raise AssertionError(("div", float(d),
                              [(x[i], got[i], want[i]) for i in bad[:5]]))
    cases += n

# A softmax at run-time sizes divides each row by its sum: rows of scores
# whose exponentials span every magnitude down to subnormal and zero.
rows, cols = 6, 200
scores = rng.standard_normal((rows, cols)).astype(f32) * f32(30)
scores[1, :50] = -np.inf
scores[2, 7] = f32(200)
path = save_onnx(
    work, "softmax_rows",
    [h.make_node("Softmax", ["x"], ["y"], name="softmax", axis=-1)],
    [h.make_tensor_value_info("x", T.FLOAT, ["r", "c"])],
    [h.make_tensor_value_info("y", T.FLOAT, ["r", "c"])])
softmax = compile_and_load(kiln, path, dims={"r": (1, 8), "c": (1, 256)})
got = softmax(scores)[0]
e = np.exp((scores - scores.max(axis=1, keepdims=True)).astype(np.float64))
want = e / e.sum(axis=1, keepdims=True)
assert np.allclose(got, want, rtol=1e-5, atol=1e-30), np.abs(got - want).max()
assert np.all(got[1, :50] == 0) and not np.signbit(got).any(), "softmax zeros"
print(f"Div by a run-time scalar: {cases} quotients over {len(divisors)} "
      f"divisors bit for bit; Softmax rows {rows}x{cols} within 1e-5")
