#!/usr/bin/python3
"""Symbolic batch against static compiles, side by side in one process.

For each model, the leading input dimension is made symbolic and the model
is compiled once with --dim N=1..MAX (the dynamic .so) and once per measured
batch b with --dim N=b (the static .so files, today's code). Each batch is
timed on both and on ONNX Runtime (onnxruntime-node, CPU provider), in
alternating rounds so that drift hits all alike; the table gives the median
milliseconds, the ratios dynamic / static (the target: within 1.15) and
dynamic / ORT, and the compile times (target: dynamic at most 2x one static
compile). A second table gives the .so sizes: the variants share the weights.

usage: bench/shapes/symbolic_batch.py MODELS_DIR [--models mlp,resnet18]
       [--batches 1,5,8,16] [--max 16] [--threads 1] [--no-ort] [--build build]
MODELS_DIR holds <name>/model.onnx (bench/models/export.py writes them).
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from ort import ensure_ort  # noqa: E402
from symbolic_shapes import compare_row, cpu_model  # noqa: E402


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models_dir")
    ap.add_argument("--models", default="mlp,resnet18")
    ap.add_argument("--batches", default="1,5,8,16")
    ap.add_argument("--max", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5, help="timed calls per round")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-bench-shapes")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    os.environ["PATH"] = os.path.join(a.build, "bin") + os.pathsep + os.environ["PATH"]
    import kiln

    batches = [int(b) for b in a.batches.split(",")]
    if not a.no_ort:
        ensure_ort()
    print(f"CPU: {cpu_model()}; threads={a.threads}; range N=1..{a.max}")
    print("| model | batch | static ms | dynamic ms | ORT ms | dynamic/static | dynamic/ORT | "
          "static/ORT | compile static s | compile dynamic s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    sizes = []
    for name in a.models.split(","):
        work = os.path.join(a.work, name)
        os.makedirs(work, exist_ok=True)
        src = os.path.join(work, "model.onnx")
        symbolic_copy(os.path.join(a.models_dir, name, "model.onnx"), src)
        dyn_so = os.path.join(work, "dynamic.so")
        dyn_s = compile_so(kiln, src, dyn_so, (1, a.max))
        dyn = kiln.load(dyn_so, threads=a.threads)
        static_bytes = []
        rng = np.random.default_rng(0)
        for b in batches:
            st_so = os.path.join(work, f"static{b}.so")
            st_s = compile_so(kiln, src, st_so, b)
            static_bytes.append(os.path.getsize(st_so))
            st = kiln.load(st_so, threads=a.threads)
            x = {t.name: rng.standard_normal((b,) + tuple(t.shape[1:])).astype(t.dtype)
                 for t in st.inputs}
            compare_row(f"{name} | {b}", st, dyn, x, src, a, st_s, dyn_s)
        sizes.append((name, max(static_bytes), os.path.getsize(dyn_so)))
    print()
    print("| model | static .so MB (largest) | dynamic .so MB | dynamic / static |")
    print("|---|---|---|---|")
    for name, st_b, dyn_b in sizes:
        print(f"| {name} | {st_b / 1e6:.1f} | {dyn_b / 1e6:.1f} | {dyn_b / st_b:.2f} |")

if __name__ == "__main__":
    main()
