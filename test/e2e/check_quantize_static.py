#!/usr/bin/python3
"""--quantize=static end to end: calibration, int8 kernels (AMX tdpbusd and
VNNI vpdpbusd), and the errors users can hit.

  1. Exact arithmetic (and a .npz of the same samples, named or positional
     arrays, which must give the same model): a model with seven independent
     nodes, each fed by a model input, so that the calibrated range of each
     is the range of its input over the calibration samples: a Gemm (transB,
     bias, N = 40: a half-empty last panel; K = 72 padded to 128), a 3x3
     convolution with padding (C = 16), a 3x3 stride-2 conv on 8 channels
     (K = 72: the unfolding without contiguous runs), a 1x1 convolution, and
     three depthwise convolutions, one per path of their vpdpbusd kernel: 3x3
     stride 2 with bias (C = 32: one output row per tile, 16 channels per
     vector), 5x5 stride 1 (C = 24: two output rows per tile, whose 5 kernel
     rows span two groups of 4, 8 channels per vector) and 3x3 with dilation
     2 (C = 12: 4 channels per vector). numpy simulates the documented int8
     arithmetic (uint8 activations with the minmax scale and zero point,
     per-column symmetric int8 weights (per channel over the kernel window
     for the depthwise convs), exact integer sums, the f32 epilogue); Kiln
     must match it to 1e-5 of the output's scale, with 1 and 2 threads, on the AMX kernel
     and on the VNNI kernel (--mattr=-amx-int8). Against the float64
     reference the error must stay under 2% (int8 rounding gives ~0.5%).
  2. A deeper model (conv, relu, conv, relu, global pool, Gemm): intermediate
     ranges come from running the model; the error against f32 stays under
     5% with minmax, percentile and entropy calibration, and percentile and
     entropy (which clip an outlier planted in one sample) give other
     numbers than minmax. On the VNNI kernel too (where the first conv's
     requantization runs on its registers and writes the second's padded
     input), with the same bits on 1 and 2 threads; and two Gemms, the
     first's requantization on the kernel's registers into [M, C] rows.
  3. The accuracy budget (--max-accuracy-drop) on the deeper model: a tight
     budget keeps nodes in f32 and holds over the calibration samples; a
     loose one keeps all in int8.
  3b. The kernels: the AMX build calls tdpbusd and lists amx-int8 in
     required_isa; the VNNI build calls vpdpbusd and lists no amx feature.
  4. Errors: no --calibration-data, a folder without samples, a sample of
     the wrong shape, a .npz array of the wrong shape or missing, an unknown
     method, --precision=bf16 with it. A target
     without AVX2 gets a note and an f32 model.

On a CPU without AMX-INT8 the AMX builds are compiled for sapphirerapids
and only checked statically; without VNNI they do not run. The seven-node
model is also built for an AVX2 CPU without VNNI (the host, or znver3): the
int8 kernel's vpmaddwd form, the depthwise nodes left f32 (a note says so);
it runs on every CPU with AVX2, its int8 nodes against the simulation and
its f32 ones against the float64 reference.

usage: check_quantize_static.py KILN_COMPILE KILN_RUN WORKDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx.numpy_helper as nh
from onnx import helper

import small_onnx
from small_onnx import conv_ref, rel_l2, vi

compile_, run, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
flags = open("/proc/cpuinfo").read()
HOST_AMX = " amx_int8" in flags and " amx_tile" in flags
HOST_VNNI = " avx512_vnni" in flags
HOST_AVX2 = " avx2" in flags
AMX_MCPU = [] if HOST_AMX else ["--mcpu=sapphirerapids"]
VNNI_FLAGS = ["--mattr=-amx-int8"] if HOST_VNNI else ["--mcpu=icelake-server"]
SIM_TOL = 1e-5
rng = np.random.default_rng(5)
failures = []
f32 = np.float32


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def compile_model(d, out, *extra, ok=True):
    r = subprocess.run([compile_, os.path.join(d, "model.onnx"), "-o", out,
                        *extra], capture_output=True, text=True)
    if ok and r.returncode != 0:
        sys.exit(f"compile of {d} {' '.join(extra)} failed: {r.stderr}")
    return r


def write_samples(folder, samples):
    """samples: list of lists of (name, array); test_data_set_<i> folders."""
    shutil.rmtree(folder, ignore_errors=True)
    for i, sample in enumerate(samples):
        d = os.path.join(folder, f"test_data_set_{i}")
        os.makedirs(d)
        for j, (name, x) in enumerate(sample):
            with open(os.path.join(d, f"input_{j}.pb"), "wb") as f:
                f.write(nh.from_array(x, name).SerializeToString())
    return folder


def disassembly(so):
    return subprocess.run(["objdump", "-d", so], capture_output=True,
                          text=True).stdout


def required_isa(so):
    return json.load(open(so[:-3] + ".json"))["required_isa"].split(",")


# --- the int8 arithmetic Kiln documents (docs/quantization.md) -------------
def act_params(arrays):
    """uint8 scale and zero point for [min(lo, 0), max(hi, 0)]."""
    lo = min(0.0, min(float(a.min()) for a in arrays))
    hi = max(0.0, max(float(a.max()) for a in arrays))
    scale = (hi - lo) / 255.0
    zp = int(np.clip(np.rint(-lo / scale), 0, 255))
    return f32(scale), zp


def quantize_act(x, scale, zp):
    inv = f32(1.0 / np.float64(scale))
    return np.clip(np.rint((x.astype(f32) * inv).astype(f32)) + zp, 0, 255)


def quantize_weights(w_kn):
    """Per column symmetric int8 of W [K, N]: (q, scale)."""
    amax = np.abs(w_kn).max(axis=0).astype(f32)
    scale = np.where(amax > 0, amax / f32(127), f32(1)).astype(f32)
    q = np.clip(np.rint((w_kn / scale).astype(f32)), -127, 127)
    return q, scale


def epilogue(corrected, wscale, ascale, bias):
    """f32(acc - zp * sum) * (wscale * scale) + bias, in f32 as Kiln does."""
    s = (wscale * ascale).astype(f32)
    y = (corrected.astype(f32) * s).astype(f32)
    return y + bias.astype(f32) if bias is not None else y


def sim_gemm(x, w_nk, b, ascale, zp):
    q, ws = quantize_weights(w_nk.T)
    qa = quantize_act(x, ascale, zp).astype(np.int64)
    corrected = (qa - zp) @ q.astype(np.int64)
    return epilogue(corrected, ws, ascale, b)


def sim_conv(x, w, b, ascale, zp, stride=1, pad=0):
    f = w.shape[0]
    # HWCF as [K, F], K = (kh, kw, c): the per-column scales are per filter.
    q, ws = quantize_weights(w.transpose(2, 3, 1, 0).reshape(-1, f))
    qw = q.reshape(w.shape[2], w.shape[3], w.shape[1], f).transpose(3, 2, 0, 1)
    qa = quantize_act(x, ascale, zp)
    corrected = conv_ref(qa - zp, qw, stride=stride, pad=pad)  # exact
    y = epilogue(corrected.transpose(0, 2, 3, 1), ws, ascale, b)
    return y.transpose(0, 3, 1, 2)


def sim_depthwise(x, w, b, ascale, zp, stride=1, pad=0, dilation=1):
    """Per channel symmetric int8 weights over the KH x KW window, exact
    integer sums of (u - zp) * q, the f32 epilogue."""
    c = w.shape[0]
    q, ws = quantize_weights(w.reshape(c, -1).T)
    qa = quantize_act(x, ascale, zp)
    corrected = conv_ref(qa - zp, q.T.reshape(w.shape), stride=stride,
                         pad=pad, group=c, dilation=dilation)  # exact
    y = epilogue(corrected.transpose(0, 2, 3, 1), ws, ascale, b)
    return y.transpose(0, 3, 1, 2)


def check_outputs(label, names, outs, refs, sims, bound):
    """Each output equals the int8 simulation (to SIM_TOL of its scale) and
    is within `bound` (relative L2) of the float64 reference."""
    for name, got, want, exact in zip(names, outs, refs, sims):
        scale = float(np.abs(exact).max())
        diff = float(np.abs(got - exact).max())
        check(diff <= SIM_TOL * scale,
              f"{label} {name}: equals the int8 simulation "
              f"(max diff {diff:.3g}, output scale {scale:.3g})")
        err = rel_l2(got, want)
        check(err < bound, f"{label} {name}: {err:.2%} from the float64 "
              f"reference")


# 1. Seven independent nodes ---------------------------------------------------
wg = rng.standard_normal((40, 72)).astype(f32) * 0.2
bg = rng.standard_normal(40).astype(f32)
wc = rng.standard_normal((24, 16, 3, 3)).astype(f32) * 0.1
bc = rng.standard_normal(24).astype(f32)
ws = rng.standard_normal((16, 8, 3, 3)).astype(f32) * 0.3
wp = rng.standard_normal((16, 64, 1, 1)).astype(f32) * 0.2
wd = rng.standard_normal((32, 1, 3, 3)).astype(f32) * 0.3
bd = rng.standard_normal(32).astype(f32)
# The last two depthwise nodes draw from a generator of their own, so that
# the first five nodes see the numbers they always saw.
rng_dw = np.random.default_rng(11)
we = rng_dw.standard_normal((24, 1, 5, 5)).astype(f32) * 0.2
wl = rng_dw.standard_normal((12, 1, 3, 3)).astype(f32) * 0.3
d1 = small_onnx.save_model(
    work, "seven",
    [helper.make_node("Gemm", ["a", "wg", "bg"], ["ya"], transB=1,
                      name="gemm"),
     helper.make_node("Conv", ["c", "wc", "bc"], ["yc"], pads=[1, 1, 1, 1],
                      name="conv3x3"),
     helper.make_node("Conv", ["s", "ws"], ["ys"], pads=[1, 1, 1, 1],
                      strides=[2, 2], name="stem"),
     helper.make_node("Conv", ["p", "wp"], ["yp"], name="pointwise"),
     helper.make_node("Conv", ["d", "wd", "bd"], ["yd"], pads=[1, 1, 1, 1],
                      strides=[2, 2], group=32, name="depthwise"),
     helper.make_node("Conv", ["e", "we"], ["ye"], pads=[2, 2, 2, 2],
                      group=24, name="depthwise5x5"),
     helper.make_node("Conv", ["l", "wl"], ["yl"], pads=[2, 2, 2, 2],
                      dilations=[2, 2], group=12, name="dilated")],
    [vi("a", [20, 72]), vi("c", [1, 16, 9, 9]), vi("s", [1, 8, 11, 11]),
     vi("p", [1, 64, 5, 5]), vi("d", [1, 32, 10, 10]),
     vi("e", [1, 24, 8, 8]), vi("l", [1, 12, 7, 7])],
    [vi("ya", [20, 40]), vi("yc", [1, 24, 9, 9]), vi("ys", [1, 16, 6, 6]),
     vi("yp", [1, 16, 5, 5]), vi("yd", [1, 32, 5, 5]),
     vi("ye", [1, 24, 8, 8]), vi("yl", [1, 12, 7, 7])],
    {"wg": wg, "bg": bg, "wc": wc, "bc": bc, "ws": ws, "wp": wp, "wd": wd,
     "bd": bd, "we": we, "wl": wl})
shapes = {"a": (20, 72), "c": (1, 16, 9, 9), "s": (1, 8, 11, 11),
          "p": (1, 64, 5, 5), "d": (1, 32, 10, 10), "e": (1, 24, 8, 8),
          "l": (1, 12, 7, 7)}


def draw():
    # Shifted and skewed like post-activation data, so zero points vary.
    return [("a", rng.standard_normal(shapes["a"]).astype(f32) + 0.5),
            ("c", np.maximum(rng.standard_normal(shapes["c"]), 0).astype(f32)),
            ("s", rng.standard_normal(shapes["s"]).astype(f32) * 2),
            ("p", (rng.standard_normal(shapes["p"]) - 1).astype(f32)),
            ("d", np.clip(rng.standard_normal(shapes["d"]) * 2, -1, 6)
             .astype(f32)),
            ("e", (rng_dw.standard_normal(shapes["e"]) + 1).astype(f32)),
            ("l", np.abs(rng_dw.standard_normal(shapes["l"])).astype(f32))]


calib = [draw() for _ in range(8)]
cal1 = write_samples(os.path.join(work, "seven_calib"), calib)
params = {n: act_params([dict(s)[n] for s in calib]) for n in shapes}
test_in = draw()
# Values outside the calibrated range clamp, as they would in deployment.
t = dict(test_in)
sim = [sim_gemm(t["a"], wg, bg, *params["a"]),
       sim_conv(t["c"], wc, bc, *params["c"], pad=1),
       sim_conv(t["s"], ws, None, *params["s"], stride=2, pad=1),
       sim_conv(t["p"], wp, None, *params["p"]),
       sim_depthwise(t["d"], wd, bd, *params["d"], stride=2, pad=1),
       sim_depthwise(t["e"], we, None, *params["e"], pad=2),
       sim_depthwise(t["l"], wl, None, *params["l"], pad=2, dilation=2)]
ref = [t["a"].astype(np.float64) @ wg.T.astype(np.float64) + bg,
       conv_ref(t["c"], wc, bc, pad=1), conv_ref(t["s"], ws, stride=2, pad=1),
       conv_ref(t["p"], wp),
       conv_ref(t["d"], wd, bd, stride=2, pad=1, group=32),
       conv_ref(t["e"], we, pad=2, group=24),
       conv_ref(t["l"], wl, pad=2, group=12, dilation=2)]

builds = {"amx": (os.path.join(work, "seven_amx.so"), AMX_MCPU),
          "vnni": (os.path.join(work, "seven_vnni.so"), VNNI_FLAGS),
          "avx2": (os.path.join(work, "seven_avx2.so"),
                   [] if HOST_AVX2 and not HOST_VNNI else ["--mcpu=znver3"])}
for kind, (so, extra) in builds.items():
    r = compile_model(d1, so, "--quantize=static", "--calibration-data", cal1,
                      *extra)
    quantized = "4 of 7" if kind == "avx2" else "7 of 7"
    check(f"static int8: {quantized} MatMul/Gemm/Conv nodes quantized" in r.stderr,
          f"{kind}: the note says {quantized} nodes are quantized "
          f"({r.stderr.strip()[:300]})")
    if kind == "avx2":
        check("depthwise, which has no int8 kernel" in r.stderr,
              f"avx2: the note says why the depthwise nodes stay f32 "
              f"({r.stderr.strip()[:300]})")
    check("calibrated 7 activation ranges (minmax) on 8 samples" in r.stderr,
          f"{kind}: the note says what calibration saw")
    runs = (kind == "vnni" and HOST_VNNI or kind == "amx" and HOST_AMX or
            kind == "avx2" and HOST_AVX2)
    if not runs:
        print(f"skip {kind}: this CPU cannot run it")
        continue
    # On AVX2 the depthwise nodes compute in f32: the reference is theirs.
    exact = sim[:4] + ref[4:] if kind == "avx2" else sim
    for threads in (1, 2):
        outs = small_onnx.run_model(run, d1, so, test_in, threads)
        check_outputs(f"{kind} {threads}t",
                      ["gemm", "conv3x3", "stem", "pointwise", "depthwise",
                       "depthwise5x5", "dilated"], outs, ref, exact, 0.02)

# The same samples as one .npz (each input's samples stacked on a new first
# axis, arrays named after the inputs) calibrate the same ranges: the build
# must compute exactly what the folder-calibrated one does.
npz = os.path.join(work, "seven_calib.npz")
np.savez(npz, **{n: np.stack([dict(s)[n] for s in calib]) for n in shapes})
so_npz = os.path.join(work, "seven_npz.so")
r = compile_model(d1, so_npz, "--quantize=static", "--calibration-data", npz,
                  *AMX_MCPU)
check("calibrated 7 activation ranges (minmax) on 8 samples" in r.stderr,
      f".npz: the note counts 8 samples ({r.stderr.strip()[:200]})")
if HOST_AMX:
    a = small_onnx.run_model(run, d1, builds["amx"][0], test_in)
    b = small_onnx.run_model(run, d1, so_npz, test_in)
    check(all(np.array_equal(x, y) for x, y in zip(a, b)),
          ".npz calibration gives the same model as the folders")
# Positional arrays (np.savez(path, x0, x1, ...)) map to inputs in order.
npz_pos = os.path.join(work, "seven_pos.npz")
np.savez(npz_pos, *[np.stack([dict(s)[n] for s in calib]) for n in shapes])
r = compile_model(d1, os.path.join(work, "seven_pos.so"), "--quantize=static",
                  "--calibration-data", npz_pos, *AMX_MCPU)
check("on 8 samples" in r.stderr, ".npz with positional arrays works")

so_amx, so_vnni, so_avx2 = builds["amx"][0], builds["vnni"][0], builds["avx2"][0]
avx2_asm = disassembly(so_avx2)
check("vpmaddwd" in avx2_asm and "vpdpbusd" not in avx2_asm and
      "avx2" in required_isa(so_avx2) and "avx512vnni" not in required_isa(so_avx2),
      "the AVX2 build calls vpmaddwd, no vpdpbusd, and requires avx2, not VNNI")
if HOST_VNNI or HOST_AMX:
    amx_asm, vnni_asm = disassembly(so_amx), disassembly(so_vnni)
    check("tdpbusd" in amx_asm and "amx-int8" in required_isa(so_amx),
          "the AMX build calls tdpbusd and requires amx-int8")
    check("vpdpbusd" in vnni_asm and "tdpbusd" not in vnni_asm and
          not any(f.startswith("amx") for f in required_isa(so_vnni)),
          "the VNNI build calls vpdpbusd, no tile instruction, no amx feature")

# 1b. Quantization moved above max pooling and concatenation ------------------
# The int8 conv after Concat -> MaxPool (padded) and the one after a plain
# MaxPool quantize the model inputs, pool the bytes with unsigned max and
# concatenate bytes (docs/quantization.md). The inputs come in NHWC (a
# Transpose to NCHW in the model), so that the poolings run in NHWC as
# they do after a convolution. Max pooling commutes with the
# non-decreasing quantization and concatenation with any elementwise one,
# so the result must equal the simulation that pools and concatenates f32
# and quantizes after.
def maxpool_ref(x, k, stride, pad=0):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)),
               constant_values=-np.inf)
    n, c, h, w = x.shape
    oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    out = np.full((n, c, oh, ow), -np.inf, x.dtype)
    for i in range(k):
        for j in range(k):
            out = np.maximum(out, x[:, :, i:i + stride * oh:stride,
                                    j:j + stride * ow:stride])
    return out


rng_pool = np.random.default_rng(13)
wm = rng_pool.standard_normal((24, 16, 3, 3)).astype(f32) * 0.1
bm = rng_pool.standard_normal(24).astype(f32)
wq = rng_pool.standard_normal((16, 8, 1, 1)).astype(f32) * 0.3
d_pool = small_onnx.save_model(
    work, "pooled",
    [helper.make_node("Transpose", ["un"], ["u"], perm=[0, 3, 1, 2]),
     helper.make_node("Transpose", ["vn"], ["v"], perm=[0, 3, 1, 2]),
     helper.make_node("Concat", ["u", "v"], ["uv"], axis=1),
     helper.make_node("MaxPool", ["uv"], ["pm"], kernel_shape=[3, 3],
                      strides=[2, 2], pads=[1, 1, 1, 1]),
     helper.make_node("Conv", ["pm", "wm", "bm"], ["ym"], pads=[1, 1, 1, 1],
                      name="after_concat_pool"),
     helper.make_node("MaxPool", ["u"], ["pq"], kernel_shape=[2, 2],
                      strides=[2, 2]),
     helper.make_node("Conv", ["pq", "wq"], ["yq"], name="after_pool")],
    [vi("un", [1, 9, 9, 8]), vi("vn", [1, 9, 9, 8])],
    [vi("ym", [1, 24, 5, 5]), vi("yq", [1, 16, 4, 4])],
    {"wm": wm, "bm": bm, "wq": wq})


def draw_pool():
    return [("un", (rng_pool.standard_normal((1, 9, 9, 8)) * 2 - 1)
             .astype(f32)),
            ("vn", np.abs(rng_pool.standard_normal((1, 9, 9, 8)))
             .astype(f32))]


def pooled(sample):
    s = dict(sample)
    u, v = (s[n].transpose(0, 3, 1, 2) for n in ("un", "vn"))
    return (maxpool_ref(np.concatenate([u, v], axis=1), 3, 2, 1),
            maxpool_ref(u, 2, 2))


calib_pool = [draw_pool() for _ in range(8)]
cal_pool = write_samples(os.path.join(work, "pooled_calib"), calib_pool)
pm_params = act_params([pooled(s)[0] for s in calib_pool])
pq_params = act_params([pooled(s)[1] for s in calib_pool])
test_pool = draw_pool()
pm, pq = pooled(test_pool)
sim_pool = [sim_conv(pm, wm, bm, *pm_params, pad=1),
            sim_conv(pq, wq, None, *pq_params)]
ref_pool = [conv_ref(pm, wm, bm, pad=1), conv_ref(pq, wq)]
linalg = compile_model(d_pool, "-", "--quantize=static",
                       "--calibration-data", cal_pool, "--emit=linalg",
                       *AMX_MCPU).stdout
check(linalg.count("linalg.pooling_nhwc_max_unsigned") == 2 and
      "linalg.pooling_nhwc_max " not in linalg,
      "pooled: both max poolings run on quantized bytes")
for kind, extra in (("amx", AMX_MCPU), ("vnni", VNNI_FLAGS)):
    so = os.path.join(work, f"pooled_{kind}.so")
    compile_model(d_pool, so, "--quantize=static", "--calibration-data",
                  cal_pool, *extra)
    if not (kind == "vnni" and HOST_VNNI or kind == "amx" and HOST_AMX):
        print(f"skip pooled {kind}: this CPU cannot run it")
        continue
    for threads in (1, 2):
        outs = small_onnx.run_model(run, d_pool, so, test_pool, threads)
        # The simulation pools f32. 8 input channels of a 1x1 conv average
        # few roundings: the int8 error of this data is 3%, under the 5%
        # budget.
        check_outputs(f"pooled {kind} {threads}t",
                      ["after_concat_pool", "after_pool"], outs, ref_pool,
                      sim_pool, 0.05)

# 2. A deeper model ---------------------------------------------------------
# Its output is [10, 1] (ten values, not a classifier's scores): the budget
# check below then measures the relative L2 error only, not top-1 flips of
# near-equal random scores.
rng = np.random.default_rng(7)
w1 = rng.standard_normal((32, 16, 3, 3)).astype(f32) * 0.15
b1 = rng.standard_normal(32).astype(f32) * 0.1
w2 = rng.standard_normal((32, 32, 3, 3)).astype(f32) * 0.1
w3 = rng.standard_normal((10, 32)).astype(f32) * 0.3
d2 = small_onnx.save_model(
    work, "deep",
    [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c1"], ["r1"]),
     helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1],
                      strides=[2, 2]),
     helper.make_node("Relu", ["c2"], ["r2"]),
     helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
     helper.make_node("Flatten", ["g"], ["f"]),
     helper.make_node("Gemm", ["f", "w3"], ["g3"], transB=1),
     helper.make_node("Reshape", ["g3", "shape"], ["y"])],
    [vi("x", [1, 16, 12, 12])], [vi("y", [10, 1])],
    {"w1": w1, "b1": b1, "w2": w2, "w3": w3,
     "shape": np.array([10, 1], np.int64)})
samples = [[("x", rng.standard_normal((1, 16, 12, 12)).astype(f32))]
           for _ in range(16)]
samples[3][0][1][0, 0, 0, 0] = 40.0  # one outlier
cal2 = write_samples(os.path.join(work, "deep_calib"), samples)
x2 = rng.standard_normal((1, 16, 12, 12)).astype(f32)
r1 = np.maximum(conv_ref(x2, w1, b1, pad=1), 0)
r2 = np.maximum(conv_ref(r1, w2, stride=2, pad=1), 0)
ref2 = (r2.mean(axis=(2, 3)) @ w3.T.astype(np.float64)).reshape(10, 1)
deep_outs = {}
for method in ("minmax", "percentile", "entropy"):
    so = os.path.join(work, f"deep_{method}.so")
    r = compile_model(d2, so, "--quantize=static", "--calibration-data", cal2,
                      f"--calibration={method}", *AMX_MCPU)
    check("3 of 3 MatMul/Gemm/Conv nodes quantized" in r.stderr,
          f"deep {method}: three nodes quantized")
    if HOST_AMX:
        (got,) = small_onnx.run_model(run, d2, so, [("x", x2)])
        deep_outs[method] = got
        err = rel_l2(got, ref2)
        bound = 0.05
        check(err < bound, f"deep {method}: {err:.2%} from the float64 "
              f"reference (bound {bound:.0%})")
def check_vnni_run(label, d, so, inputs, ref):
    """Runs SO on 1 and 2 threads: within 5% of REF, the same bits."""
    (got1,) = small_onnx.run_model(run, d, so, inputs)
    (got2,) = small_onnx.run_model(run, d, so, inputs, threads=2)
    err = rel_l2(got1, ref)
    check(err < 0.05, f"{label}: {err:.2%} from the float64 reference "
          "(bound 5%)")
    check(np.array_equal(got1, got2),
          f"{label}: the same bits on 1 and 2 threads")


# 2b. The same model on the VNNI kernel: the first convolution's
# requantization (with its Relu) runs on the kernel's registers, which
# write the int8 result straight into the second convolution's padded
# input, one tile of a row of H per iteration.
# 2c. Two Gemms, the first with a Relu: its requantization runs on the VNNI
# kernel's registers into the product's own [M, P, R] layout, row tiles
# split across the threads.
if HOST_VNNI:
    so = os.path.join(work, "deep_vnni.so")
    compile_model(d2, so, "--quantize=static", "--calibration-data", cal2,
                  *VNNI_FLAGS)
    check_vnni_run("deep VNNI", d2, so, [("x", x2)], ref2)

    rng_mlp = np.random.default_rng(17)
    wa = rng_mlp.standard_normal((256, 256)).astype(f32) * 0.08
    ba = rng_mlp.standard_normal(256).astype(f32) * 0.1
    wb = rng_mlp.standard_normal((64, 256)).astype(f32) * 0.08
    d_mlp = small_onnx.save_model(
        work, "mlp2",
        [helper.make_node("Gemm", ["x", "wa", "ba"], ["h"], transB=1),
         helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("Gemm", ["r", "wb"], ["y"], transB=1)],
        [vi("x", [200, 256])], [vi("y", [200, 64])],
        {"wa": wa, "ba": ba, "wb": wb})
    cal_mlp = write_samples(
        os.path.join(work, "mlp2_calib"),
        [[("x", rng_mlp.standard_normal((200, 256)).astype(f32))]
         for _ in range(8)])
    xm = rng_mlp.standard_normal((200, 256)).astype(f32)
    ref_mlp = (np.maximum(xm.astype(np.float64) @ wa.T + ba, 0) @
               wb.T.astype(np.float64))
    so = os.path.join(work, "mlp2_vnni.so")
    r = compile_model(d_mlp, so, "--quantize=static", "--calibration-data",
                      cal_mlp, *VNNI_FLAGS)
    check("2 of 2 MatMul/Gemm/Conv nodes quantized" in r.stderr,
          "two Gemms: both quantized")
    check_vnni_run("two Gemms on VNNI", d_mlp, so, [("x", xm)], ref_mlp)
for method in ("percentile", "entropy"):
    if method in deep_outs:
        check(not np.array_equal(deep_outs["minmax"], deep_outs[method]),
              f"{method} calibration clips: other numbers than minmax")

# 3b. The accuracy budget on the deep model. A loose budget keeps every node
# in int8 and reports that build's error E over the calibration samples.
# With a budget of 0.7 E the search must keep nodes in f32 (named in the
# note, most sensitive first), the result must be within the budget over
# the calibration samples, and it must be minimal: without the last node it
# kept, the error is over the budget.
def deep_ref(x):
    r1 = np.maximum(conv_ref(x, w1, b1, pad=1), 0)
    r2 = np.maximum(conv_ref(r1, w2, stride=2, pad=1), 0)
    return (r2.mean(axis=(2, 3)) @ w3.T.astype(np.float64)).reshape(10, 1)


def calib_error(so):
    got = np.concatenate([small_onnx.run_model(run, d2, so, s)[0]
                          for s in samples])
    want = np.concatenate([deep_ref(s[0][1]) for s in samples])
    return rel_l2(got, want)


def budget_note(stderr):
    return next((l for l in stderr.splitlines() if "accuracy budget" in l), "")


# The search measures each trial on this machine, so it needs one that runs
# static int8 (a trial it cannot run is an error, checked in section 4).
if not HOST_VNNI:
    print("skip the accuracy budget: this CPU cannot run static int8")
else:
    r = compile_model(d2, os.path.join(work, "deep_loose.so"), "--quantize=static",
                      "--calibration-data", cal2, "--max-accuracy-drop=0.5",
                      *AMX_MCPU)
    note = budget_note(r.stderr)
    m = re.search(r"rel\. L2 ([0-9.]+)%", note)
    check("met with every candidate node in int8" in note and m,
          f"a loose budget keeps every node in int8 ({note})")
    if m and HOST_AMX:
        all_int8 = float(m.group(1)) / 100
        check(abs(calib_error(os.path.join(work, "deep_loose.so")) - all_int8)
              < 1e-4, f"the note's error ({all_int8:.2%}) is the error over the "
              "calibration samples")
        budget = round(0.7 * all_int8, 4)
        so = os.path.join(work, "deep_budget.so")
        r = compile_model(d2, so, "--quantize=static", "--calibration-data", cal2,
                          f"--max-accuracy-drop={budget}", *AMX_MCPU)
        note = budget_note(r.stderr)
        kept = re.findall(r"'([^']+)'", note.split("kept in f32:")[-1].split(";")[0]) \
            if "kept in f32:" in note else []
        check(kept and "trial builds" in note,
              f"budget {budget:.2%}: the note names the nodes kept in f32 ({note})")
        err = calib_error(so)
        check(err <= budget, f"budget {budget:.2%}: {err:.2%} from f32 over the "
              f"calibration samples")
        if kept:
            fewer = os.path.join(work, "deep_fewer.so")
            extra = ["--keep-fp32=" + ",".join(kept[:-1])] if len(kept) > 1 else []
            compile_model(d2, fewer, "--quantize=static", "--calibration-data",
                          cal2, *extra, *AMX_MCPU)
            worse = calib_error(fewer)
            check(worse > budget, f"budget {budget:.2%}: minimal; without "
                  f"'{kept[-1]}' in f32 the error is {worse:.2%}")

# 4. Errors and notes -------------------------------------------------------
def fails_with(args, text, what):
    # For a target with VNNI, so that calibration (which runs an f32 model
    # built for this machine) checks the samples whatever this CPU has.
    r = compile_model(d1, os.path.join(work, "bad.so"), *args, *VNNI_FLAGS,
                      ok=False)
    check(r.returncode != 0 and text in r.stderr,
          f"{what}: fails naming '{text}' ({r.stderr.strip()[:200]})")


fails_with(["--quantize=static"], "--calibration-data",
           "no calibration data")
if not HOST_VNNI:
    fails_with(["--quantize=static", "--calibration-data", cal1,
                "--max-accuracy-drop=0.5"],
               "which cannot run static int8",
               "a budget search on a machine that cannot run the trials")
empty = os.path.join(work, "empty")
os.makedirs(empty, exist_ok=True)
fails_with(["--quantize=static", "--calibration-data", empty],
           "holds no samples", "a folder without samples")
wrong = [[(n, np.zeros((2, 2), f32)) for n, _ in draw()]]
fails_with(["--quantize=static", "--calibration-data",
            write_samples(os.path.join(work, "wrong"), wrong)],
           "has shape [2,2]", "a sample of the wrong shape")
fails_with(["--quantize=static", "--calibration-data", cal1,
            "--calibration=kl"], "unknown calibration method 'kl'",
           "an unknown method")
bad_npz = os.path.join(work, "bad.npz")
np.savez(bad_npz, a=np.zeros((8, 20, 71), f32))
fails_with(["--quantize=static", "--calibration-data", bad_npz],
           "has shape [8,20,71]", "a .npz array of the wrong shape")
np.savez(bad_npz, zzz=np.zeros((20, 72), f32))
fails_with(["--quantize=static", "--calibration-data", bad_npz],
           "has no array for model input 0 'a'", "a .npz without the input")
fails_with(["--quantize=static", "--calibration-data", cal1,
            "--precision=bf16"], "use one of them", "with --precision=bf16")
fails_with(["--max-accuracy-drop=0.01"],
           "--max-accuracy-drop needs --quantize=static|dynamic or "
           "--precision=bf16|fp16", "a budget without a reduced precision")
fails_with(["--quantize=dynamic", "--max-accuracy-drop=0.01"],
           "measures the error on --calibration-data",
           "a dynamic int8 budget without samples")
fails_with(["--quantize=static", "--calibration-data", cal1,
            "--max-accuracy-drop=2"], "a fraction in (0, 1)",
           "a budget that is not a fraction")
so = os.path.join(work, "noavx2.so")
r = compile_model(d1, so, "--quantize=static", "--calibration-data", cal1,
                  "--mcpu=x86-64")
asm = disassembly(so)
check("needs avx2" in r.stderr and "compiled in f32" in r.stderr and
      "tdpbusd" not in asm and "vpdpbusd" not in asm and "vpmaddwd" not in asm,
      "a target without AVX2: a note and an f32 model")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("all static int8 checks passed")
