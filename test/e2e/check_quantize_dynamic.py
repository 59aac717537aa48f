#!/usr/bin/python3
"""--quantize=dynamic end to end: small ONNX models compiled with int8 weights
and run-time quantized activations, compared with a float64 numpy reference.

  1. MatMul + Add (K = 30, not a multiple of 4; N = 48, panels of 16), Relu,
     MatMul + Add (N = 64, panels of 32), and a MatMul with N = 10 that stays
     f32; a Gemm model (transB, alpha, beta, C). Quantized outputs must be
     within a relative L2 error of 2% (int8 with per-row activations gives
     about 0.5%) and not bit-equal to f32 (the int8 path really ran); the f32
     output within 1e-5. The .so calls vpdpbusd and requires avx512vnni (on a
     CPU with AVX2 and no VNNI: vpmaddwd, and requires avx2).
     Products big enough for the threads (64 x 256 x 128; and 49 x 2048 x 512,
     whose 1 MiB of weights go panel groups outermost) give the same numbers on
     one and two threads.
  2. A model with no constant weights (MatMul of two inputs): the note says so,
     the linalg IR is the same as without --quantize, numbers match f32.
  3. A target without VNNI (--mcpu=skylake-avx512) gets the AVX2 kernel; one
     without AVX2 (--mcpu=x86-64): a note, an f32 model.

usage: check_quantize_dynamic.py KILN_COMPILE KILN_RUN WORKDIR
Exit status 77 (skipped) on a CPU without avx2.
"""
import json
import os
import subprocess
import sys

import numpy as np
from onnx import helper

import small_onnx
from small_onnx import rel_l2, vi

compile_, run, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
flags = next((line.split(":", 1)[1].split() for line in open("/proc/cpuinfo")
              if line.startswith("flags")), [])
VNNI = "avx512_vnni" in flags
if not VNNI and "avx2" not in flags:
    print("check_quantize_dynamic: this CPU has neither avx512_vnni nor avx2; skipped")
    sys.exit(77)
ISA, INSTRUCTION = ("avx512vnni", "vpdpbusd") if VNNI else ("avx2", "vpmaddwd")
REL_L2 = 0.02
rng = np.random.default_rng(7)


def save_model(name, nodes, inputs, outputs, inits):
    return small_onnx.save_model(work, name, nodes, inputs, outputs, inits)


def run_model(d, so, inputs, threads=1):
    return small_onnx.run_model(run, d, so, inputs, threads)


def compile_model(d, out, *extra):
    r = subprocess.run([compile_, os.path.join(d, "model.onnx"), "-o", out, *extra],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"compile failed: {r.stderr}")
    return r.stderr


def expect(cond, msg):
    if not cond:
        sys.exit("check_quantize_dynamic: FAIL: " + msg)


# 1a. MatMul chain.
x = rng.standard_normal((2, 8, 30)).astype(np.float32)
w1 = (rng.standard_normal((30, 48)) * 0.2).astype(np.float32)
b1 = rng.standard_normal(48).astype(np.float32)
w2 = (rng.standard_normal((48, 64)) * 0.2).astype(np.float32)
b2 = rng.standard_normal(64).astype(np.float32)
w3 = rng.standard_normal((30, 10)).astype(np.float32)
d = save_model("chain", [
    helper.make_node("MatMul", ["x", "w1"], ["h1"], name="fc1"),
    helper.make_node("Add", ["h1", "b1"], ["h2"], name="fc1_bias"),
    helper.make_node("Relu", ["h2"], ["h3"], name="relu"),
    helper.make_node("MatMul", ["h3", "w2"], ["h4"], name="fc2"),
    helper.make_node("Add", ["b2", "h4"], ["y"], name="fc2_bias"),
    helper.make_node("MatMul", ["x", "w3"], ["z"], name="narrow"),
], [vi("x", [2, 8, 30])], [vi("y", [2, 8, 64]), vi("z", [2, 8, 10])],
    {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "w3": w3})
xd = x.astype(np.float64)
y_ref = np.maximum(xd @ w1 + b1, 0) @ w2 + b2
z_ref = xd @ w3
note = compile_model(d, os.path.join(d, "q.so"), "--quantize=dynamic")
expect("dynamic int8: 2 of 3 MatMul/Gemm nodes quantized" in note, "note: " + note)
expect("'narrow'" in note and "not a multiple of 16" in note, "note: " + note)
y, z = run_model(d, os.path.join(d, "q.so"), [("x", x)])
(yf, zf) = (None, None)
compile_model(d, os.path.join(d, "f32.so"))
yf, zf = run_model(d, os.path.join(d, "f32.so"), [("x", x)])
e_y, e_z = rel_l2(y, y_ref), rel_l2(z, z_ref)
print(f"chain: rel L2 int8 {e_y:.2e} (f32 {rel_l2(yf, y_ref):.1e}), narrow f32 {e_z:.1e}")
expect(e_y <= REL_L2, f"quantized output rel L2 {e_y} > {REL_L2}")
expect(not np.array_equal(y, yf), "quantized output equals the f32 one bit for bit")
expect(e_z <= 1e-5, f"unquantized output rel L2 {e_z}")
meta = json.load(open(os.path.join(d, "q.json")))
expect(ISA in meta["required_isa"], f"required_isa {meta['required_isa']}")
expect("--quantize=dynamic" in json.dumps(meta), "compile options not recorded")
asm = subprocess.run(["objdump", "-d", os.path.join(d, "q.so")], capture_output=True,
                     text=True, check=True).stdout
expect(INSTRUCTION in asm, f"no {INSTRUCTION} in q.so")

# 1b. Gemm with transB, alpha, beta and C.
a = rng.standard_normal((16, 40)).astype(np.float32)
wg = rng.standard_normal((32, 40)).astype(np.float32)
cg = rng.standard_normal(32).astype(np.float32)
d = save_model("gemm", [helper.make_node("Gemm", ["a", "w", "c"], ["y"], name="gemm",
                                         transB=1, alpha=0.5, beta=2.0)],
               [vi("a", [16, 40])], [vi("y", [16, 32])], {"w": wg, "c": cg})
y_ref = 0.5 * (a.astype(np.float64) @ wg.T) + 2.0 * cg
note = compile_model(d, os.path.join(d, "q.so"), "--quantize=dynamic")
expect("1 of 1 MatMul/Gemm nodes quantized" in note, "note: " + note)
(y,) = run_model(d, os.path.join(d, "q.so"), [("a", a)])
e = rel_l2(y, y_ref)
print(f"gemm: rel L2 int8 {e:.2e}")
expect(e <= REL_L2, f"gemm rel L2 {e} > {REL_L2}")

# 1c. Products big enough for the threads, which must give the numbers of one
# thread bit for bit: 64 x 256 x 128 (2M multiply-adds), its row tiles shared;
# 49 x 2048 x 512, whose 1 MiB of weights (ResNet's 7x7 layers' shape) go panel
# groups outermost, shared, every row inside.
def check_threads(name, shape_x, shape_w, scale):
    xt = rng.standard_normal(shape_x).astype(np.float32)
    wt = (rng.standard_normal(shape_w) * scale).astype(np.float32)
    shape_y = list(shape_x[:-1]) + [shape_w[1]]
    d = save_model(name, [helper.make_node("MatMul", ["x", "w"], ["y"], name=name)],
                   [vi("x", list(shape_x))], [vi("y", shape_y)], {"w": wt})
    note = compile_model(d, os.path.join(d, "q.so"), "--quantize=dynamic")
    expect("1 of 1 MatMul/Gemm nodes quantized" in note, "note: " + note)
    (y1,) = run_model(d, os.path.join(d, "q.so"), [("x", xt)], threads=1)
    (y2,) = run_model(d, os.path.join(d, "q.so"), [("x", xt)], threads=2)
    e = rel_l2(y2, xt.astype(np.float64) @ wt)
    print(f"{name}: rel L2 int8 {e:.2e} on two threads")
    expect(e <= REL_L2, f"{name}: two-thread rel L2 {e} > {REL_L2}")
    expect(np.array_equal(y1, y2), f"{name}: two threads differ from one")


check_threads("threads", (1, 64, 256), (256, 128), 0.1)
check_threads("wide", (49, 2048), (2048, 512), 0.05)

# 2. Nothing to quantize: unchanged.
p = rng.standard_normal((8, 16)).astype(np.float32)
q = rng.standard_normal((16, 32)).astype(np.float32)
d = save_model("no_weights", [helper.make_node("MatMul", ["p", "q"], ["y"], name="pq")],
               [vi("p", [8, 16]), vi("q", [16, 32])], [vi("y", [8, 32])], {})
note = compile_model(d, os.path.join(d, "q.linalg.mlir"), "--quantize=dynamic",
                     "--emit=linalg")
compile_model(d, os.path.join(d, "f32.linalg.mlir"), "--emit=linalg")
expect("0 of 1 MatMul/Gemm nodes quantized; the model is compiled in f32 unchanged" in note
       and "weights computed at run time" in note, "note: " + note)
expect(open(os.path.join(d, "q.linalg.mlir")).read() ==
       open(os.path.join(d, "f32.linalg.mlir")).read(), "linalg IR changed")
compile_model(d, os.path.join(d, "q.so"), "--quantize=dynamic")
(y,) = run_model(d, os.path.join(d, "q.so"), [("p", p), ("q", q)])
expect(rel_l2(y, p.astype(np.float64) @ q) <= 1e-6, "no-weights model numbers")

# 3. A target without VNNI gets the kernel's AVX2 form; one without AVX2 a
# note and an f32 model.
d = os.path.join(work, "chain")
note = compile_model(d, os.path.join(d, "skx.s"), "--quantize=dynamic",
                     "--mcpu=skylake-avx512", "--emit=asm")
expect("2 of 3 MatMul/Gemm nodes quantized" in note, "note: " + note)
skx = open(os.path.join(d, "skx.s")).read()
expect("vpmaddwd" in skx and "vpdpbusd" not in skx, "skylake-avx512: no vpmaddwd kernel")
note = compile_model(d, os.path.join(d, "x86.so"), "--quantize=dynamic",
                     "--mcpu=x86-64")
expect("needs avx2" in note and "compiled in f32" in note, "note: " + note)
y, _ = run_model(d, os.path.join(d, "x86.so"), [("x", x)])
expect(np.allclose(y, yf, rtol=1e-4, atol=1e-4), "x86-64 build differs from f32")
print("check_quantize_dynamic: ok")
