#!/usr/bin/python3
"""--precision=fp16 end to end: small ONNX models whose MatMul/Gemm/Conv
nodes read fp16 operands and accumulate in f32, against numpy references.

  1. Accumulation in f32: MatMul + Add, Relu, Gemm (transB, alpha, beta),
     a 3x3 convolution, a depthwise convolution and an attention-style
     product of two run-time tensors, on integers that fp16 holds exactly,
     with sums far beyond 2048 (where fp16 itself stops counting by ones):
     the results must equal the float64 reference exactly, with 1 and 2
     threads. An fp16 accumulator would be off by several units.
  2. Rounding: random normal data through the same graph. Against a float64
     reference computed on fp16-rounded inputs and weights (and rounded
     intermediate products, as the compiled model rounds each node's input)
     the error is that of f32 accumulation (relative L2 <= 1e-5); against
     the unrounded reference it is fp16's (<= 1e-2, and above 1e-5: the
     rounding really happened).
  3. Large weights that meet few rows are stored as fp16: a matrix-vector
     product's .so is smaller than the f32 one by at least 45% of the f32
     weight bytes, and its result is f32-accurate on the rounded operands.
  4. --keep-fp32 names a node that stays f32; the note says so. With
     --max-accuracy-drop, a node whose input underflows fp16 is kept in f32
     and the model meets the budget.
  5. A target without F16C gets a note and an f32 model. Bad combinations
     are errors: --precision=fp16 with --quantize=dynamic, and with
     --target=cuda.

usage: check_precision_fp16.py KILN_COMPILE KILN_RUN WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
from onnx import helper

import small_onnx
from small_onnx import conv_ref, rel_l2, vi

compile_, run, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(16)
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def compile_model(d, out, *extra):
    r = subprocess.run([compile_, os.path.join(d, "model.onnx"), "-o", out,
                        *extra], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"compile of {d} {' '.join(extra)} failed: {r.stderr}")
    return r.stderr


def f16(a):
    """`a` rounded to fp16 (nearest even), as float64."""
    return np.asarray(a, np.float32).astype(np.float16).astype(np.float64)


# One graph for both checks: x [64, 96] -> MatMul w1 [96, 128] + b1, Relu ->
# Gemm (transB) w2 [64, 128] -> y1 [64, 64]; image [1, 16, 12, 12] -> 3x3
# conv (pad 1) to 32 channels, Relu -> depthwise 3x3 -> y2; q [4, 32, 80] x
# k [4, 80, 48] -> y3.
def build(name, w1, b1, w2, c2, wc, bc, wdw):
    return small_onnx.save_model(
        work, name,
        [helper.make_node("MatMul", ["x", "w1"], ["m1"], name="fc1"),
         helper.make_node("Add", ["m1", "b1"], ["a1"]),
         helper.make_node("Relu", ["a1"], ["r1"]),
         helper.make_node("Gemm", ["r1", "w2", "c2"], ["y1"], name="fc2",
                          transB=1, alpha=0.5, beta=2.0),
         helper.make_node("Conv", ["img", "wc", "bc"], ["c1"],
                          pads=[1, 1, 1, 1], name="conv"),
         helper.make_node("Relu", ["c1"], ["rc"]),
         helper.make_node("Conv", ["rc", "wdw"], ["y2"], group=32,
                          pads=[1, 1, 1, 1], name="dw"),
         helper.make_node("MatMul", ["q", "k"], ["y3"], name="scores")],
        [vi("x", [64, 96]), vi("img", [1, 16, 12, 12]), vi("q", [4, 32, 80]),
         vi("k", [4, 80, 48])],
        [vi("y1", [64, 64]), vi("y2", [1, 32, 12, 12]), vi("y3", [4, 32, 48])],
        {"w1": w1, "b1": b1, "w2": w2, "c2": c2, "wc": wc, "bc": bc,
         "wdw": wdw})


def reference(rnd, x, img, q, k, w1, b1, w2, c2, wc, bc, wdw):
    """float64 outputs; `rnd` rounds every product operand (fp16 or not)."""
    r1 = np.maximum(rnd(x) @ rnd(w1) + b1, 0)
    y1 = 0.5 * rnd(r1) @ rnd(w2).T + 2.0 * np.float64(c2)
    rc = np.maximum(conv_ref(rnd(img), rnd(wc), bc, pad=1), 0)
    y2 = conv_ref(rnd(rc), rnd(wdw), pad=1, group=32)
    y3 = rnd(q) @ rnd(k)
    return y1, y2, y3


def run_all(d, so, x, img, q, k, threads=1):
    return small_onnx.run_model(run, d, so, [("x", x), ("img", img), ("q", q),
                                             ("k", k)], threads)


def integers(shape, lo, hi):
    return rng.integers(lo, hi + 1, size=shape).astype(np.float32)


# 1. Integers. Every value that enters a product is at most 2048 in
# magnitude (fp16 holds such integers exactly: fc1's sums are bounded by
# 96 * 16 + 4), while q k sums 80 products of 9 to 64: 720 to 5120, mostly
# above 2048, where fp16 itself only holds even numbers.
weights = dict(w1=integers((96, 128), -4, 4), b1=integers((128,), -4, 4),
               w2=integers((64, 128), -1, 1), c2=integers((64,), -4, 4),
               wc=integers((32, 16, 3, 3), -1, 1), bc=integers((32,), -4, 4),
               wdw=integers((32, 1, 3, 3), -2, 2))
inputs = dict(x=integers((64, 96), 0, 4), img=integers((1, 16, 12, 12), 0, 2),
              q=integers((4, 32, 80), 3, 8), k=integers((4, 80, 48), 3, 8))
exact = build("exact", **weights)
so = os.path.join(exact, "fp16.so")
note = compile_model(exact, so, "--precision=fp16")
check("fp16: 5 of 5 MatMul/Gemm/Conv nodes in fp16" in note,
      f"exact: every node in fp16 (note: {note.strip()})")
want = reference(lambda a: np.asarray(a, np.float64), **inputs, **weights)
odd = int(((want[2] > 2048) & (want[2] % 2 == 1)).sum())
check(odd > 1000, f"exact: {odd} of q k's sums are odd and above 2048, which "
      "fp16 cannot hold")
for threads in (1, 2):
    got = run_all(exact, so, **inputs, threads=threads)
    err = max(float(np.abs(g - w).max()) for g, w in zip(got, want))
    check(err == 0.0, f"exact: fp16 equals the reference with {threads} "
          f"thread(s) (max abs error {err})")

# 2. Normal data.
weights = dict(w1=rng.standard_normal((96, 128)) / np.sqrt(96),
               b1=rng.standard_normal(128), w2=rng.standard_normal((64, 128)) / 8,
               c2=rng.standard_normal(64),
               wc=rng.standard_normal((32, 16, 3, 3)) / 12,
               bc=rng.standard_normal(32), wdw=rng.standard_normal((32, 1, 3, 3)) / 3)
weights = {n: w.astype(np.float32) for n, w in weights.items()}
inputs = dict(x=rng.standard_normal((64, 96)),
              img=rng.standard_normal((1, 16, 12, 12)),
              q=rng.standard_normal((4, 32, 80)),
              k=rng.standard_normal((4, 80, 48)))
inputs = {n: v.astype(np.float32) for n, v in inputs.items()}
normal = build("normal", **weights)
so = os.path.join(normal, "fp16.so")
so32 = os.path.join(normal, "f32.so")
compile_model(normal, so, "--precision=fp16")
compile_model(normal, so32)
got = run_all(normal, so, **inputs)
rounded = reference(f16, **inputs, **weights)
exact64 = reference(lambda a: np.asarray(a, np.float64), **inputs, **weights)
for i, (g, r, e) in enumerate(zip(got, rounded, exact64)):
    er, ee = rel_l2(g, r), rel_l2(g, e)
    check(er <= 1e-5, f"normal y{i + 1}: against fp16-rounded operands, "
          f"relative L2 {er:.1e} <= 1e-5 (f32 accumulation)")
    check(1e-5 < ee <= 1e-2, f"normal y{i + 1}: against unrounded operands, "
          f"relative L2 {ee:.1e} in (1e-5, 1e-2] (fp16 rounding)")

# 3. Large weights that meet few rows (a matrix-vector product) are stored
# as fp16: half the bytes in the .so, and still f32-accurate against the
# rounded operands. (Small ones, and those of products with 64 rows or more,
# stay f32 constants holding the rounded values.)
wv = (rng.standard_normal((512, 512)) / np.sqrt(512)).astype(np.float32)
xv = rng.standard_normal((2, 512)).astype(np.float32)
wide = small_onnx.save_model(
    work, "wide", [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
    [vi("x", [2, 512])], [vi("y", [2, 512])], {"w": wv})
so, so32 = os.path.join(wide, "fp16.so"), os.path.join(wide, "f32.so")
compile_model(wide, so, "--precision=fp16")
compile_model(wide, so32)
saved = os.path.getsize(so32) - os.path.getsize(so)
check(saved >= 0.45 * wv.nbytes, f"wide: the fp16 .so is {saved} bytes "
      f"smaller than f32's ({wv.nbytes} bytes of f32 weights)")
# Batch variants share one copy of the fp16 weights.
so_b = os.path.join(wide, "batches.so")
compile_model(wide, so_b, "--precision=fp16", "--batch-sizes", "1,2")
extra = os.path.getsize(so_b) - os.path.getsize(so)
check(extra < 0.25 * wv.nbytes, f"wide: two batch variants add {extra} bytes, "
      f"not a second copy of the weights ({wv.nbytes // 2} bytes in fp16)")
(got,) = small_onnx.run_model(run, wide, so, [("x", xv)])
err = rel_l2(got, f16(xv) @ f16(wv))
check(err <= 1e-5, f"wide: against fp16-rounded operands, relative L2 "
      f"{err:.1e} <= 1e-5")

# 4. --keep-fp32.
note = compile_model(normal, os.path.join(normal, "keep.so"),
                     "--precision=fp16", "--keep-fp32=fc2")
check("fp16: 4 of 5 MatMul/Gemm/Conv nodes in fp16; 1 kept in f32 "
      "(--keep-fp32): 'fc2'" in note, f"--keep-fp32=fc2 ({note.strip()})")
(got1, _, _) = run_all(normal, os.path.join(normal, "keep.so"), **inputs)
r1 = np.maximum(f16(inputs["x"]) @ f16(weights["w1"]) + weights["b1"], 0)
want1 = 0.5 * r1 @ weights["w2"].astype(np.float64).T + 2.0 * weights["c2"]
check(rel_l2(got1, want1) <= 1e-5, "--keep-fp32=fc2: fc2 runs on unrounded "
      f"operands (relative L2 {rel_l2(got1, want1):.1e})")

# 4b. --max-accuracy-drop: fc1's output, scaled by 1e-7, is under fp16's
# smallest normal (6e-5) and near its smallest subnormal (6e-8), so rounding
# it for fc2 destroys most of it. Measured on calibration samples (a .npz),
# the search keeps fc2 in f32 and nothing else.
wt1 = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
wt2 = (rng.standard_normal((64, 32)) / 8).astype(np.float32)
scale = np.array(1e-7, np.float32)
tiny = small_onnx.save_model(
    work, "tiny",
    [helper.make_node("MatMul", ["x", "w1"], ["m"], name="fc1"),
     helper.make_node("Mul", ["m", "s"], ["h"]),
     helper.make_node("MatMul", ["h", "w2"], ["y"], name="fc2")],
    [vi("x", [4, 64])], [vi("y", [4, 32])], {"w1": wt1, "s": scale, "w2": wt2})
np.savez(os.path.join(tiny, "calib.npz"),
         x=rng.standard_normal((16, 4, 64)).astype(np.float32))
xt = rng.standard_normal((4, 64)).astype(np.float32)
want_t = xt.astype(np.float64) @ wt1 * np.float64(scale) @ wt2
plain = os.path.join(tiny, "plain.so")
compile_model(tiny, plain, "--precision=fp16")
(got,) = small_onnx.run_model(run, tiny, plain, [("x", xt)])
check(rel_l2(got, want_t) > 0.05, f"tiny: all in fp16 the error is "
      f"{rel_l2(got, want_t):.1%} (fc2's input underflows)")
budget = os.path.join(tiny, "budget.so")
note = compile_model(tiny, budget, "--precision=fp16", "--max-accuracy-drop=0.01",
                     "--calibration-data", os.path.join(tiny, "calib.npz"))
check("fp16: accuracy budget 1.00%: 1 of 2 nodes kept in f32: 'fc2'" in note,
      f"tiny: the budget keeps fc2 in f32 ({note.strip()[:300]})")
(got,) = small_onnx.run_model(run, tiny, budget, [("x", xt)])
check(rel_l2(got, want_t) <= 0.01, f"tiny: within the budget on another "
      f"input ({rel_l2(got, want_t):.2%})")
r = subprocess.run([compile_, os.path.join(tiny, "model.onnx"), "-o", budget,
                    "--precision=fp16", "--max-accuracy-drop=0.01"],
                   capture_output=True, text=True)
check(r.returncode != 0 and "measures the error on --calibration-data" in
      r.stderr, "--max-accuracy-drop without --calibration-data is an error")

# 5. A target without F16C (every conversion would be a call): f32 with a
# note. Errors for bad combinations.
r = subprocess.run([compile_, os.path.join(wide, "model.onnx"), "-o",
                    os.path.join(wide, "nof16c.so"), "--mcpu=x86-64",
                    "--precision=fp16"], capture_output=True, text=True)
check(r.returncode == 0 and "needs f16c" in r.stderr and "compiled in f32"
      in r.stderr, f"no f16c: compiled in f32 with a note ({r.stderr.strip()})")
check(os.path.getsize(os.path.join(wide, "nof16c.so")) > wv.nbytes,
      "no f16c: f32 weights")

for extra, said in ((["--quantize=dynamic"], "use one of them"),
                    (["--target=cuda"], "CPU target only")):
    r = subprocess.run([compile_, os.path.join(normal, "model.onnx"), "-o",
                        os.path.join(work, "bad.so"), "--precision=fp16",
                        *extra], capture_output=True, text=True)
    check(r.returncode != 0 and said in r.stderr,
          f"--precision=fp16 {' '.join(extra)} is an error ({r.stderr.strip()[:160]})")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("check_precision_fp16: all checks passed")
