#!/usr/bin/python3
"""Kiln f32 against Kiln --quantize=dynamic, side by side in one run.

For each model folder (model.onnx + test_data_set_0/): compiles both
variants, reports the relative L2 error ||y - ref|| / ||ref|| of every output
against the reference outputs (and of the f32 build, for scale), then times
both with `kiln-run --bench`, alternating f32 / int8 for --rounds rounds on
the same machine state, and reports the median of the per-round medians and
their ratio.

usage: compare.py MODELS_DIR [--models a,b] [--build build] [--rounds 7]
                  [--iterations 30] [--work DIR] [--json FILE]
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


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return nh.to_array(t)


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
    return [load_pb(p) for p in sorted(glob.glob(os.path.join(out, "output_*.pb")))]


def bench(run, so, iterations):
    r = subprocess.run([run, so, "--bench", "--threads", "1", "--iterations",
                        str(iterations), "--warmup", "3"], check=True,
                       capture_output=True, text=True)
    m = re.search(r"median_ms=([0-9.]+)", r.stdout + r.stderr)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models_dir")
    ap.add_argument("--models", default="bert_small,transformer_enc")
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--work", default="/tmp/kiln-quant-compare")
    ap.add_argument("--json")
    a = ap.parse_args()
    compile_ = os.path.join(a.build, "bin", "kiln-compile")
    run = os.path.join(a.build, "bin", "kiln-run")
    results = []
    for name in a.models.split(","):
        src = os.path.join(a.models_dir, name)
        data = os.path.join(src, "test_data_set_0")
        work = os.path.join(a.work, name)
        os.makedirs(work, exist_ok=True)
        f32 = os.path.join(work, "f32.so")
        q = os.path.join(work, "int8.so")
        subprocess.run([compile_, os.path.join(src, "model.onnx"), "-o", f32], check=True)
        r = subprocess.run([compile_, os.path.join(src, "model.onnx"), "-o", q,
                            "--quantize=dynamic"], check=True, capture_output=True, text=True)
        note = r.stderr.strip()
        ref = [load_pb(p) for p in sorted(glob.glob(os.path.join(data, "output_*.pb")))]
        yf = outputs_of(run, f32, data, work)
        yq = outputs_of(run, q, data, work)
        err_q = [rel_l2(g, w) for g, w in zip(yq, ref)]
        err_f = [rel_l2(g, w) for g, w in zip(yf, ref)]
        tf, tq = [], []
        for i in range(a.rounds):
            # Alternate which goes first so that neither always meets a
            # warmer or cooler machine.
            order = [(f32, tf), (q, tq)] if i % 2 == 0 else [(q, tq), (f32, tf)]
            for so, into in order:
                into.append(bench(run, so, a.iterations))
        mf, mq = statistics.median(tf), statistics.median(tq)
        res = {"model": name, "f32_ms": mf, "int8_ms": mq, "speedup": mf / mq,
               "f32_rounds": tf, "int8_rounds": tq,
               "rel_l2_int8": err_q, "rel_l2_f32": err_f, "note": note}
        results.append(res)
        print(f"{name}: f32 {mf:.3f} ms, int8 {mq:.3f} ms, speedup {mf / mq:.2f}x; "
              f"rel L2 vs reference: int8 {', '.join(f'{e:.2e}' for e in err_q)}"
              f" (f32 {', '.join(f'{e:.1e}' for e in err_f)})", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
