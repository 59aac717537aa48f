#!/usr/bin/python3
"""Symbolic batch against static compiles, side by side in one process.

For each model, the leading input dimension is made symbolic and the model
is compiled once with --dim N=1..MAX (the dynamic .so) and once per measured
batch b with --dim N=b (the static .so files, today's code). Each batch is
timed on both, alternating calls in rounds so that drift hits both alike;
the table gives the median milliseconds and the ratio dynamic / static (the
target: within 1.15), and the compile times (target: dynamic at most 2x one
static compile).

usage: bench/shapes/symbolic_batch.py MODELS_DIR [--models mlp,resnet18]
       [--batches 1,5,8,16] [--max 16] [--threads 1] [--build build]
MODELS_DIR holds <name>/model.onnx (bench/models/export.py writes them).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def symbolic_copy(src, dst):
    m = onnx.load(src)
    for v in list(m.graph.input) + list(m.graph.output):
        if v.name in {i.name for i in m.graph.initializer}:
            continue
        d = v.type.tensor_type.shape.dim[0]
        d.ClearField("dim_value")
        d.dim_param = "N"
    del m.graph.value_info[:]
    onnx.save(m, dst)


def compile_so(kiln, onnx_path, so, dim):
    t = time.perf_counter()
    kiln.compile(onnx_path, output=so, dims={"N": dim})
    return time.perf_counter() - t


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models_dir")
    ap.add_argument("--models", default="mlp,resnet18")
    ap.add_argument("--batches", default="1,5,8,16")
    ap.add_argument("--max", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5, help="timed calls per round")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-bench-shapes")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    os.environ["PATH"] = os.path.join(a.build, "bin") + os.pathsep + os.environ["PATH"]
    import kiln

    batches = [int(b) for b in a.batches.split(",")]
    print(f"CPU: {cpu_model()}; threads={a.threads}; range N=1..{a.max}")
    print("| model | batch | static ms | dynamic ms | dynamic/static | "
          "compile static s | compile dynamic s |")
    print("|---|---|---|---|---|---|---|")
    for name in a.models.split(","):
        work = os.path.join(a.work, name)
        os.makedirs(work, exist_ok=True)
        src = os.path.join(work, "model.onnx")
        symbolic_copy(os.path.join(a.models_dir, name, "model.onnx"), src)
        dyn_so = os.path.join(work, "dynamic.so")
        dyn_s = compile_so(kiln, src, dyn_so, (1, a.max))
        dyn = kiln.load(dyn_so, threads=a.threads)
        rng = np.random.default_rng(0)
        for b in batches:
            st_so = os.path.join(work, f"static{b}.so")
            st_s = compile_so(kiln, src, st_so, b)
            st = kiln.load(st_so, threads=a.threads)
            xs = [rng.standard_normal((b,) + t.shape[1:]).astype(t.dtype)
                  for t in st.inputs]
            ys, yd = st(*xs), dyn(*xs)
            for u, v in zip(ys, yd):
                assert u.shape == v.shape and np.allclose(u, v, rtol=1e-4, atol=1e-5)
            times = {"s": [], "d": []}
            for _ in range(a.rounds):
                for key, m in (("s", st), ("d", dyn)):
                    m(*xs)
                    t = time.perf_counter()
                    for _ in range(a.calls):
                        m(*xs)
                    times[key].append((time.perf_counter() - t) * 1e3 / a.calls)
            s, d = statistics.median(times["s"]), statistics.median(times["d"])
            print(f"| {name} | {b} | {s:.3f} | {d:.3f} | {d / s:.2f} | {st_s:.1f} | {dyn_s:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
