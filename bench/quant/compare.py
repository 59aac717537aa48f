#!/usr/bin/python3
"""Kiln f32 against a reduced-precision build of the same model, side by side.

--variant dynamic compiles with --quantize=dynamic (int8 MatMul/Gemm, VNNI);
--variant bf16 with --precision=bf16 (MatMul/Gemm and Conv on AMX tiles);
--variant fp16 with --precision=fp16 (MatMul/Gemm and Conv on fp16 operands,
fp16 weights, f32 accumulation);
--variant static with --quantize=static (int8 MatMul/Gemm and Conv, AMX or
VNNI), calibrated on --calibration-samples inputs drawn like the test input
(another seed than the --samples inputs) with --calibration METHOD.

For each model folder (model.onnx + test_data_set_0/): compiles both builds,
reports the relative L2 error ||y - ref|| / ||ref|| of every output against
the reference outputs (and of the f32 build, for scale); with --samples N,
also runs N random inputs drawn like the test input (floats: normal with its
mean and deviation; integer ids: uniform over its range; 0/1 masks: the test
mask) through both builds and reports the worst relative L2 error of the
variant against Kiln f32 and the top-1 agreement (argmax over the last axis
of the first output, at every leading position). Then times both with
`kiln-run --bench`, alternating f32 / variant for --rounds rounds on the same
machine state, and reports the median of the per-round medians and the ratio.

usage: compare.py MODELS_DIR [--variant dynamic|bf16|fp16|static] [--models a,b]
                  [--threads 1] [--samples 0] [--build build] [--rounds 7]
                  [--iterations 30] [--work DIR] [--json FILE]
                  [--calibration-samples 32] [--calibration minmax]
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper as nh

FLAGS = {"dynamic": ["--quantize=dynamic"], "bf16": ["--precision=bf16"],
         "fp16": ["--precision=fp16"], "static": ["--quantize=static"]}


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, nh.to_array(t)


def rel_l2(got, want):
    got = got.astype(np.float64).ravel()
    want = want.astype(np.float64).ravel()
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def outputs_of(run, so, data, work):
    out = os.path.join(work, "out_" + os.path.basename(so))
    os.makedirs(out, exist_ok=True)
    subprocess.run([run, so, "--test-data", data, "--save-outputs", out,
                    "--rtol", "1e9", "--atol", "1e9"], check=True,
                   stdout=subprocess.DEVNULL)
    return [load_pb(p)[1]
            for p in sorted(glob.glob(os.path.join(out, "output_*.pb")))]


def bench(run, so, iterations, threads):
    r = subprocess.run([run, so, "--bench", "--threads", str(threads),
                        "--iterations", str(iterations), "--warmup", "3"],
                       check=True, capture_output=True, text=True)
    m = re.search(r"median_ms=([0-9.]+)", r.stdout + r.stderr)
    return float(m.group(1))


def sampler(inputs, seed):
    """Random inputs drawn like the test inputs [(name, array)]."""
    rng = np.random.default_rng(seed)

    def draw():
        out = {}
        for name, x in inputs:
            if np.issubdtype(x.dtype, np.floating):
                out[name] = (rng.standard_normal(x.shape) * x.std()
                             + x.mean()).astype(x.dtype)
            elif x.min() >= 0 and x.max() <= 1:
                out[name] = x.copy()
            else:
                out[name] = rng.integers(x.min(), x.max() + 1,
                                         size=x.shape).astype(x.dtype)
        return out
    return draw


def sample_agreement(f32_so, variant_so, inputs, samples, threads):
    """Worst relative L2 of the variant against f32, and top-1 agreement."""
    import kiln
    mf = kiln.load(f32_so, threads=threads)
    mv = kiln.load(variant_so, threads=threads)
    draw = sampler(inputs, 1234)
    worst, agree, total = 0.0, 0, 0
    for _ in range(samples):
        x = draw()
        yf = mf.run(x)
        yv = mv.run(x)
        for k in yf:
            worst = max(worst, rel_l2(yv[k], yf[k]))
        first = next(iter(yf))
        af = yf[first].reshape(-1, yf[first].shape[-1]).argmax(-1)
        av = yv[first].reshape(-1, yv[first].shape[-1]).argmax(-1)
        agree += int((af == av).sum())
        total += af.size
    return worst, agree / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models_dir")
    ap.add_argument("--variant", choices=sorted(FLAGS), default="dynamic")
    ap.add_argument("--models", default="bert_small,transformer_enc")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--samples", type=int, default=0)
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--work", default="/tmp/kiln-quant-compare")
    ap.add_argument("--json")
    ap.add_argument("--calibration-samples", type=int, default=32)
    ap.add_argument("--calibration", default="minmax")
    a = ap.parse_args()
    compile_ = os.path.join(a.build, "bin", "kiln-compile")
    run = os.path.join(a.build, "bin", "kiln-run")
    sys.path.insert(0, os.path.join(a.build, "python"))
    results = []
    for name in a.models.split(","):
        src = os.path.join(a.models_dir, name)
        data = os.path.join(src, "test_data_set_0")
        work = os.path.join(a.work, name)
        os.makedirs(work, exist_ok=True)
        f32 = os.path.join(work, "f32.so")
        v = os.path.join(work, a.variant + ".so")
        subprocess.run([compile_, os.path.join(src, "model.onnx"), "-o", f32],
                       check=True)
        flags = list(FLAGS[a.variant])
        if a.variant == "static":
            import kiln
            inputs = [load_pb(p) for p in
                      sorted(glob.glob(os.path.join(data, "input_*.pb")))]
            draw = sampler(inputs, 99)
            calib = os.path.join(work, "calibration")
            kiln.write_calibration_data(
                calib, [[x[n] for n, _ in inputs] for x in
                        (draw() for _ in range(a.calibration_samples))])
            flags += ["--calibration-data", calib,
                      f"--calibration={a.calibration}"]
        r = subprocess.run([compile_, os.path.join(src, "model.onnx"), "-o", v,
                            *flags], check=True, capture_output=True,
                           text=True)
        note = r.stderr.strip()
        ref = [load_pb(p)[1]
               for p in sorted(glob.glob(os.path.join(data, "output_*.pb")))]
        yf = outputs_of(run, f32, data, work)
        yv = outputs_of(run, v, data, work)
        err_v = [rel_l2(g, w) for g, w in zip(yv, ref)]
        err_f = [rel_l2(g, w) for g, w in zip(yf, ref)]
        worst = top1 = None
        if a.samples:
            inputs = [load_pb(p) for p in
                      sorted(glob.glob(os.path.join(data, "input_*.pb")))]
            worst, top1 = sample_agreement(f32, v, inputs, a.samples, a.threads)
        tf, tv = [], []
        for i in range(a.rounds):
            # Alternate which goes first so that neither always meets a
            # warmer or cooler machine.
            order = [(f32, tf), (v, tv)] if i % 2 == 0 else [(v, tv), (f32, tf)]
            for so, into in order:
                into.append(bench(run, so, a.iterations, a.threads))
        mf, mv = statistics.median(tf), statistics.median(tv)
        res = {"model": name, "variant": a.variant, "threads": a.threads,
               "f32_ms": mf, "variant_ms": mv, "speedup": mf / mv,
               "f32_rounds": tf, "variant_rounds": tv,
               "rel_l2_variant": err_v, "rel_l2_f32": err_f,
               "samples": a.samples, "worst_rel_l2_vs_f32": worst,
               "top1_agreement": top1, "note": note}
        results.append(res)
        extra = ""
        if a.samples:
            extra = (f"; {a.samples} random inputs: worst rel L2 vs f32 "
                     f"{worst:.2e}, top-1 agreement {100 * top1:.1f}%")
        print(f"{name}: f32 {mf:.3f} ms, {a.variant} {mv:.3f} ms, speedup "
              f"{mf / mv:.2f}x; rel L2 vs reference: {a.variant} "
              f"{', '.join(f'{e:.2e}' for e in err_v)} (f32 "
              f"{', '.join(f'{e:.1e}' for e in err_f)}){extra}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
