#!/usr/bin/python3
"""--precision=bf16 end to end: small ONNX models whose MatMul/Gemm nodes run
on AMX tiles, against float64 numpy references.

  1. Exact: MatMul + Add (K = 40, padded to 64; 37 rows, so blocks of 32 and
     5-row tail tiles; N = 48), Relu, Gemm (transB, alpha, beta, C; N = 80:
     panel pairs and an odd panel); and convolutions (3x3 with padding, 1x1
     with stride 2 and 1, output channels that leave a panel half empty, a
     depthwise one that reads its input rounded to bf16). Every input,
     weight and intermediate is exactly representable in bf16 and every sum
     in f32, except the depthwise input, whose integers need more than
     bf16's 8 bits and are rounded as numpy rounds them; so the results must
     equal the float64 reference exactly, with 1 and 2 threads.
  2. Rounding: random normal data through MatMul + Add with batch dimensions
     [3, 7, 96]: relative L2 error <= 1% (bf16 rounding gives about 0.3%),
     and not bit-equal to the f32 build (the bf16 path really ran).
  3. MatMuls of two run-time tensors (attention's Q K^T, P V), batched and
     plain, on integers: exact.
  4. A target without AMX-BF16 and AVX512-BF16: a note, an f32 model
     that does not list amx in required_isa. --max-accuracy-drop builds
     its trial models for this CPU: with AMX-BF16 or AVX512-BF16 here the
     search runs; with neither, it is an error naming the missing feature.
  5. The bf16 .so calls tdpbf16ps and lists amx-tile in required_isa; the
     f32 .so lists no amx feature.
  6. A target with AVX512-BF16 and no AMX (znver4): a note, MatMul/Gemm and
     Conv on vdpbf16ps, run-time products left in f32, no amx in
     required_isa; where this CPU has AVX512-BF16, the exact models equal
     their references with 1 and 2 threads and the rounding model is within
     1% (and further than f32's 1e-5).

On a CPU without AMX the models are compiled for sapphirerapids instead and
only checked statically (5, 4), and running one must fail with a clear
"lacks" status rather than a signal.

usage: check_precision_bf16.py KILN_COMPILE KILN_RUN WORKDIR
"""
import json
import os
import subprocess
import sys

import numpy as np
from onnx import helper

import small_onnx
from small_onnx import conv_ref, rel_l2, vi

compile_, run, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
flags = open("/proc/cpuinfo").read()
HOST_AMX = " amx_bf16" in flags and " amx_tile" in flags
HOST_BF16 = " avx512_bf16" in flags
MCPU = [] if HOST_AMX else ["--mcpu=sapphirerapids"]
REL_L2 = 0.01
rng = np.random.default_rng(11)
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def save_model(name, nodes, inputs, outputs, inits):
    return small_onnx.save_model(work, name, nodes, inputs, outputs, inits)


def run_model(d, so, inputs, threads=1):
    return small_onnx.run_model(run, d, so, inputs, threads)


def compile_model(d, out, *extra):
    r = subprocess.run([compile_, os.path.join(d, "model.onnx"), "-o", out,
                        *MCPU, *extra], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"compile of {d} {' '.join(extra)} failed: {r.stderr}")
    return r.stderr


def required_isa(so):
    return json.load(open(so[:-3] + ".json"))["required_isa"].split(",")


def integers(shape, lo, hi):
    return rng.integers(lo, hi + 1, size=shape).astype(np.float32)


# 1. Exact model.
x1 = integers((37, 40), -2, 2)
w1 = integers((40, 48), -1, 1)
b1 = integers((48,), -3, 3)
w2 = integers((80, 48), -2, 2)  # Gemm B with transB: [N, K]
c2 = integers((80,), -4, 4)
exact = save_model(
    "exact",
    [helper.make_node("MatMul", ["x", "w1"], ["m1"], name="fc1"),
     helper.make_node("Add", ["m1", "b1"], ["a1"]),
     helper.make_node("Relu", ["a1"], ["r1"]),
     helper.make_node("Gemm", ["r1", "w2", "c2"], ["y"], name="fc2",
                      transB=1, alpha=0.5, beta=2.0)],
    [vi("x", [37, 40])], [vi("y", [37, 80])],
    {"w1": w1, "b1": b1, "w2": w2, "c2": c2})
h = np.maximum(x1.astype(np.float64) @ w1 + b1, 0)
want = 0.5 * h @ w2.T.astype(np.float64) + 2.0 * c2
so_bf16 = os.path.join(exact, "bf16.so")
so_f32 = os.path.join(exact, "f32.so")
note = compile_model(exact, so_bf16, "--precision=bf16")
compile_model(exact, so_f32)
check("bf16: 2 of 2 MatMul/Gemm nodes in bf16" in note,
      f"exact: both nodes in bf16 (note: {note.strip()})")
check("amx-tile" in required_isa(so_bf16) and "amx-bf16" in required_isa(so_bf16),
      "bf16 .so lists amx-tile and amx-bf16 in required_isa")
check(not any(f.startswith("amx") for f in required_isa(so_f32)),
      "f32 .so lists no amx feature")
dis = subprocess.run(["objdump", "-d", so_bf16], capture_output=True,
                     text=True).stdout
check("tdpbf16ps" in dis, "bf16 .so contains tdpbf16ps")

if HOST_AMX:
    # cpuinfo lists AMX, but the OS may still refuse tile state (a kernel
    # before 5.16 or a hypervisor): then the session must say so, and the
    # rest is checked as on a CPU without AMX.
    probe = subprocess.run([run, so_bf16, "--bench", "--iterations", "1"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        out = probe.stdout + probe.stderr
        check(probe.returncode > 0 and "refused AMX tile state" in out,
              f"AMX listed but not granted: a status, not a crash ({out[:200]})")
        HOST_AMX = False
if HOST_AMX:
    for threads in (1, 2):
        (got,) = run_model(exact, so_bf16, [("x", x1)], threads)
        err = float(np.abs(got.astype(np.float64) - want).max())
        check(err == 0.0, f"exact: bf16 equals the reference with {threads} "
              f"thread(s) (max abs error {err})")
else:
    r = subprocess.run([run, so_bf16, "--bench", "--iterations", "1"],
                       capture_output=True, text=True)
    said = r.stdout + r.stderr
    check(r.returncode > 0 and ("lacks" in said or
                                "refused AMX tile state" in said),
          f"no AMX here: running the bf16 model fails with a status "
          f"(rc {r.returncode}: {(r.stdout + r.stderr).strip()[:200]})")

# 1b. Exact convolutions: 3x3 pad 1 (C = 8: K = 72 padded to 96; F = 24:
# a half-empty last panel) + Relu, then a 1x1 stride-2 conv (unfolded) and a
# 1x1 stride-1 conv (no unfolding); a depthwise conv stays f32.


xc = integers((1, 8, 9, 9), -2, 2)
wc1 = integers((24, 8, 3, 3), -1, 1)
bc1 = integers((24,), -3, 3)
wc2 = integers((16, 24, 1, 1), -40, 40)
wdw = integers((16, 1, 3, 3), -1, 1)
wc3 = integers((20, 24, 1, 1), -1, 1)
x16 = integers((1, 16, 7, 7), -2, 2)
wc16 = integers((16, 16, 3, 3), -1, 1)
convs = save_model(
    "convs",
    [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1],
                      name="conv3x3"),
     helper.make_node("Relu", ["c1"], ["r1"]),
     helper.make_node("Conv", ["r1", "w2"], ["c2"], strides=[2, 2],
                      name="down"),
     helper.make_node("Conv", ["c2", "wdw"], ["y1"], group=16,
                      pads=[1, 1, 1, 1], name="dw"),
     helper.make_node("Conv", ["r1", "w3"], ["y2"], name="pointwise"),
     # 16 input channels: (kw, c) unfolded as one run of 48 values.
     helper.make_node("Conv", ["x16", "w16"], ["y3"], pads=[1, 1, 1, 1],
                      strides=[2, 2], name="conv16")],
    [vi("x", [1, 8, 9, 9]), vi("x16", [1, 16, 7, 7])],
    [vi("y1", [1, 16, 5, 5]), vi("y2", [1, 20, 9, 9]), vi("y3", [1, 16, 4, 4])],
    {"w1": wc1, "b1": bc1, "w2": wc2, "wdw": wdw, "w3": wc3, "w16": wc16})
def bf16(a):
    """f32 rounded to bf16 (nearest even), as f32."""
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


r1 = np.maximum(conv_ref(xc, wc1, bc1, pad=1), 0)
c2 = conv_ref(r1, wc2, stride=2).astype(np.float32)
check(not np.array_equal(bf16(c2), c2),
      "convs: the depthwise input has values that bf16 rounds")
want_y1 = conv_ref(bf16(c2), wdw, pad=1, group=16)
want_y2 = conv_ref(r1, wc3)
want_y3 = conv_ref(x16, wc16, stride=2, pad=1)
so_c = os.path.join(convs, "bf16.so")
note = compile_model(convs, so_c, "--precision=bf16")
check("bf16: 5 of 5 Conv nodes in bf16" in note,
      f"convs: 5 of 5 in bf16, the depthwise one too ({note.strip()})")
if HOST_AMX:
    for threads in (1, 2):
        got1, got2, got3 = run_model(convs, so_c, [("x", xc), ("x16", x16)],
                                     threads)
        err = max(float(np.abs(got1 - want_y1).max()),
                  float(np.abs(got2 - want_y2).max()),
                  float(np.abs(got3 - want_y3).max()))
        check(err == 0.0, f"convs: bf16 equals the reference with {threads} "
              f"thread(s) (max abs error {err})")

# 2. Rounding error on normal data, batch dimensions folded into rows.
x2 = rng.standard_normal((3, 7, 96)).astype(np.float32)
w3 = (rng.standard_normal((96, 64)) / np.sqrt(96)).astype(np.float32)
b3 = rng.standard_normal(64).astype(np.float32)
rounding = save_model(
    "rounding",
    [helper.make_node("MatMul", ["x", "w"], ["m"]),
     helper.make_node("Add", ["b", "m"], ["y"])],
    [vi("x", [3, 7, 96])], [vi("y", [3, 7, 64])], {"w": w3, "b": b3})
want2 = x2.astype(np.float64) @ w3 + b3
so2 = os.path.join(rounding, "bf16.so")
so2_f32 = os.path.join(rounding, "f32.so")
compile_model(rounding, so2, "--precision=bf16")
compile_model(rounding, so2_f32)
if HOST_AMX:
    (got,) = run_model(rounding, so2, [("x", x2)])
    (ref32,) = run_model(rounding, so2_f32, [("x", x2)])
    err = rel_l2(got, want2)
    check(err <= REL_L2, f"rounding: relative L2 error {err:.2e} <= {REL_L2}")
    check(not np.array_equal(got, ref32), "rounding: bf16 differs from f32")
    check(rel_l2(ref32, want2) < 1e-5, "rounding: f32 build matches")

# 3. Products of two run-time tensors (attention): both operands rounded at
# run time, the right one packed per batch. Batched [2, 3, 20, 40] x
# [2, 3, 40, 24] (K padded to 64, a half-empty second panel, 16- and 4-row
# tiles) and a plain [16, 32] x [32, 16], on integers: exact.
# A third, [4, 64, 512] x [4, 512, 64] (17 MFLOP), is large enough for its
# blocks to be shared by the threads.
attn = save_model(
    "attention",
    [helper.make_node("MatMul", ["q", "k"], ["s"], name="scores"),
     helper.make_node("MatMul", ["a", "b"], ["t"], name="plain"),
     helper.make_node("MatMul", ["u", "v"], ["z"], name="large")],
    [vi("q", [2, 3, 20, 40]), vi("k", [2, 3, 40, 24]), vi("a", [16, 32]),
     vi("b", [32, 16]), vi("u", [4, 64, 512]), vi("v", [4, 512, 64])],
    [vi("s", [2, 3, 20, 24]), vi("t", [16, 16]), vi("z", [4, 64, 64])], {})
note = compile_model(attn, os.path.join(attn, "bf16.so"), "--precision=bf16")
check("bf16: 3 of 3 MatMul (two run-time operands) nodes in bf16" in note,
      f"attention: all three products in bf16 ({note.strip()})")
if HOST_AMX:
    q, k = integers((2, 3, 20, 40), -3, 3), integers((2, 3, 40, 24), -3, 3)
    a, b = integers((16, 32), -3, 3), integers((32, 16), -3, 3)
    u, v = integers((4, 64, 512), -1, 1), integers((4, 512, 64), -1, 1)
    for threads in (1, 2):
        got_s, got_t, got_z = run_model(
            attn, os.path.join(attn, "bf16.so"),
            [("q", q), ("k", k), ("a", a), ("b", b), ("u", u), ("v", v)],
            threads)
        err = max(float(np.abs(got_s - q.astype(np.float64) @ k).max()),
                  float(np.abs(got_t - a.astype(np.float64) @ b).max()),
                  float(np.abs(got_z - u.astype(np.float64) @ v).max()))
        check(err == 0.0, f"attention: bf16 equals the reference with "
              f"{threads} thread(s) (max abs error {err})")

# 4. A target with neither AMX-BF16 nor AVX512-BF16: f32 with a note.
so4 = os.path.join(exact, "noamx.so")
r = subprocess.run([compile_, os.path.join(exact, "model.onnx"), "-o", so4,
                    "--mcpu=sapphirerapids", "--mattr=-amx-bf16,-avx512bf16",
                    "--precision=bf16"], capture_output=True, text=True)
check(r.returncode == 0 and "needs amx-bf16" in r.stderr,
      f"no amx-bf16: compiled in f32 with a note ({r.stderr.strip()})")
check(not any(f.startswith("amx") for f in required_isa(so4)),
      "no amx-bf16: required_isa lists no amx feature")

# 4b. --max-accuracy-drop runs its trial models on this machine, built for
# it whatever --mcpu says. Where this CPU has AMX-BF16 the search runs (the
# rounding model's bf16 error, ~0.3%, is within 5%); where it has not, a
# bf16 trial would be measured in f32, which is an error, not a silent pass.
np.savez(os.path.join(rounding, "calib.npz"),
         x=rng.standard_normal((4, 3, 7, 96)).astype(np.float32))
r = subprocess.run([compile_, os.path.join(rounding, "model.onnx"), "-o",
                    os.path.join(rounding, "budget.so"), "--precision=bf16",
                    "--max-accuracy-drop=0.05", "--calibration-data",
                    os.path.join(rounding, "calib.npz"), *MCPU],
                   capture_output=True, text=True)
if HOST_AMX or HOST_BF16:
    check(r.returncode == 0 and "bf16: accuracy budget 5.00%: met with "
          "every candidate node in bf16" in r.stderr,
          f"budget: the search runs on this CPU ({r.stderr.strip()[:300]})")
else:
    check(r.returncode != 0 and "which cannot run bf16" in r.stderr and
          "needs amx-bf16" in r.stderr,
          f"budget without AMX here: an error naming what is missing "
          f"({r.stderr.strip()[:300]})")

# 6. A target with AVX512-BF16 and no AMX (znver4): MatMul/Gemm and Conv on
# vdpbf16ps, products of two run-time tensors in f32, with a note. Where
# this CPU runs znver4 code, the exact models must equal their references
# and the rounding model stay within REL_L2 of it.
ZEN = ["--mcpu=znver4"]


def compile_zen(d, out):
    r = subprocess.run([compile_, os.path.join(d, "model.onnx"), "-o", out,
                        "--precision=bf16", *ZEN], capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"compile of {d} for znver4 failed: {r.stderr}")
    return r.stderr


zen = {name: (d, os.path.join(d, "zen.so"))
       for name, d in (("exact", exact), ("convs", convs),
                       ("rounding", rounding), ("attention", attn))}
notes = {name: compile_zen(d, so) for name, (d, so) in zen.items()}
check("has no AMX-BF16; MatMul/Gemm and Conv run on AVX512-BF16 (vdpbf16ps)"
      in notes["exact"] and "bf16: 2 of 2 MatMul/Gemm nodes in bf16" in
      notes["exact"], f"znver4: a note, both products in bf16 "
      f"({notes['exact'].strip()[:300]})")
check("bf16: 5 of 5 Conv nodes in bf16" in notes["convs"],
      f"znver4: the convolutions in bf16 ({notes['convs'].strip()[:300]})")
check("two run-time operands" not in notes["attention"],
      f"znver4: run-time products are not converted "
      f"({notes['attention'].strip()[:300]})")
dis = subprocess.run(["objdump", "-d", zen["exact"][1]], capture_output=True,
                     text=True).stdout
check("vdpbf16ps" in dis and "tdpbf16ps" not in dis,
      "znver4: the bf16 .so calls vdpbf16ps, no AMX instruction")
isa = required_isa(zen["exact"][1])
check("avx512bf16" in isa and not any(f.startswith("amx") for f in isa),
      f"znver4: required_isa lists avx512bf16 and no amx feature ({isa})")
runs = HOST_BF16
if runs:
    probe = subprocess.run([run, zen["exact"][1], "--bench", "--iterations",
                            "1"], capture_output=True, text=True)
    if probe.returncode != 0:
        out = probe.stdout + probe.stderr
        check("lacks" in out, f"znver4 code here: runs or says what this CPU "
              f"lacks ({out.strip()[:200]})")
        runs = False
if runs:
    for threads in (1, 2):
        (got,) = run_model(exact, zen["exact"][1], [("x", x1)], threads)
        err = float(np.abs(got.astype(np.float64) - want).max())
        check(err == 0.0, f"znver4 exact: equals the reference with {threads} "
              f"thread(s) (max abs error {err})")
        got1, got2, got3 = run_model(convs, zen["convs"][1],
                                     [("x", xc), ("x16", x16)], threads)
        err = max(float(np.abs(got1 - want_y1).max()),
                  float(np.abs(got2 - want_y2).max()),
                  float(np.abs(got3 - want_y3).max()))
        check(err == 0.0, f"znver4 convs: equal the reference with {threads} "
              f"thread(s) (max abs error {err})")
    (got,) = run_model(rounding, zen["rounding"][1], [("x", x2)])
    err = rel_l2(got, want2)
    # f32 is within 1e-5 of the reference (section 2): more means bf16 ran.
    check(1e-5 < err <= REL_L2, f"znver4 rounding: relative L2 error "
          f"{err:.2e} in (1e-5, {REL_L2}]")
    q, k = integers((2, 3, 20, 40), -3, 3), integers((2, 3, 40, 24), -3, 3)
    a, b = integers((16, 32), -3, 3), integers((32, 16), -3, 3)
    u, v = integers((4, 64, 512), -1, 1), integers((4, 512, 64), -1, 1)
    got_s, got_t, got_z = run_model(
        attn, zen["attention"][1],
        [("q", q), ("k", k), ("a", a), ("b", b), ("u", u), ("v", v)], 2)
    err = max(float(np.abs(got_s - q.astype(np.float64) @ k).max()),
              float(np.abs(got_t - a.astype(np.float64) @ b).max()),
              float(np.abs(got_z - u.astype(np.float64) @ v).max()))
    check(err == 0.0, f"znver4 attention (f32): equals the reference "
          f"(max abs error {err})")

# Bad values are errors, not silent fallbacks.
r = subprocess.run([compile_, os.path.join(exact, "model.onnx"), "-o",
                    os.path.join(work, "x.so"), "--precision=fp8"],
                   capture_output=True, text=True)
check(r.returncode != 0 and "unknown precision 'fp8'" in r.stderr,
      "--precision=fp8 is an error naming the choices")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("check_precision_bf16: all checks passed"
      + ("" if HOST_AMX else " (AMX compile-only: this CPU has no AMX)")
      + ("" if runs else " (vdpbf16ps compile-only: this CPU has no "
                         "AVX512-BF16)"))
