#!/usr/bin/python3
"""Run-time sizes against static compiles and ONNX Runtime, side by side.

A model whose sequence length is symbolic at axis 1 (by default an encoder
block written for the harness: x [1, seq, D] -> scores x x^T / sqrt(D),
softmax, times x, a residual add and LayerNorm, then a feed-forward of width
4D with Gelu, another residual add and LayerNorm) is compiled once with
--dim seq=1..MAX (the dynamic .so) and once per measured length with
--dim seq=n (today's static code). At each length the dynamic .so, the
static .so and ORT (onnxruntime-node, CPU provider, bench/perf/ort_driver.js)
run the same input, alternating in rounds; the table gives median
milliseconds and the ratios dynamic/static (the issue's target: within 1.15)
and dynamic/ORT, and the compile times (target: dynamic at most 2x one
static compile). Outputs are checked against each other first.

usage: bench/shapes/symbolic_shapes.py [--model M.onnx] [--dim 256]
       [--lengths 16,64,128,256] [--max 512] [--threads 1] [--build build]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from ort import NODE_DIR, ensure_ort  # noqa: E402


def encoder_block(path, d):
    """The default model: one attention-like mixing step and an FFN."""
    rng = np.random.default_rng(0)
    inits = []
    def const(name, arr):
        t = nh.from_array(arr, name)
        inits.append(t)
        return name
    w1 = const("w1", (rng.standard_normal((d, 4 * d)) / np.sqrt(d)).astype(np.float32))
    w2 = const("w2", (rng.standard_normal((4 * d, d)) / np.sqrt(4 * d)).astype(np.float32))
    b1 = const("b1", np.zeros(4 * d, np.float32))
    g = const("g", np.ones(d, np.float32))
    b = const("b", np.zeros(d, np.float32))
    scale = const("scale", np.array(1 / np.sqrt(d), np.float32))
    n = [
        h.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        h.make_node("MatMul", ["x", "xt"], ["s0"]),
        h.make_node("Mul", ["s0", scale], ["s"]),
        h.make_node("Softmax", ["s"], ["p"], axis=-1),
        h.make_node("MatMul", ["p", "x"], ["a"]),
        h.make_node("Add", ["a", "x"], ["r1"]),
        h.make_node("LayerNormalization", ["r1", g, b], ["n1"], axis=-1),
        h.make_node("MatMul", ["n1", w1], ["f0"]),
        h.make_node("Add", ["f0", b1], ["f1"]),
        h.make_node("Gelu", ["f1"], ["f2"]),
        h.make_node("MatMul", ["f2", w2], ["f3"]),
        h.make_node("Add", ["f3", "n1"], ["r2"]),
        h.make_node("LayerNormalization", ["r2", g, b], ["y"], axis=-1),
    ]
    graph = h.make_graph(
        n, "encoder_block",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", d])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, [1, "seq", d])], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 20)])
    model.ir_version = 8
    onnx.save(model, path)


# ORT's intra-op threads spin for a while after a run, in another process:
# a Kiln run started at once shares the 2 cores with them (a static CNN on 2
# threads measured 7.9 ms right after ORT, 3.8 ms alone). Each round waits
# this long after ORT.
SETTLE_S = 0.05


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


class Ort:
    """One ORT session in node (bench/perf/ort_driver.js) at one input: an
    array fed as "x", or a dict of named arrays."""

    def __init__(self, model, threads, x, work):
        inputs = x if isinstance(x, dict) else {"x": x}
        entries = []
        for name, arr in inputs.items():
            tag = name + "_" + "x".join(str(n) for n in arr.shape)
            raw = os.path.join(work, f"{tag}.bin")
            arr.tofile(raw)
            entries.append({"name": name, "dtype": str(arr.dtype),
                            "shape": list(arr.shape), "file": raw})
        spec = os.path.join(work, "inputs_" + "_".join(
            e["name"] + "x".join(map(str, e["shape"])) for e in entries) + ".json")
        json.dump(entries, open(spec, "w"))
        env = dict(os.environ, NODE_PATH=os.path.join(NODE_DIR, "node_modules"))
        self.p = subprocess.Popen(
            ["node", os.path.join(ROOT, "bench", "perf", "ort_driver.js"), model,
             str(threads), spec], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, env=env, bufsize=1)

    def run(self, k):
        self.p.stdin.write(f"run {k}\n")
        self.p.stdin.flush()
        r = self.p.stdout.readline().split()
        if not r or r[0] != "ok":
            raise RuntimeError("ort_driver failed")
        return statistics.median(float(t) for t in r[1:])

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.close()
        self.p.wait(timeout=60)


def timed(fn, calls):
    fn()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) * 1e3 / calls


def compare_row(label, st, dyn, x, model, a, st_s, dyn_s, atol=1e-4):
    """One table row: the static and dynamic .so (and ORT unless a.no_ort)
    on input x (an array, or a dict of named arrays in the models' input
    order), outputs checked against each other first (rtol 1e-3 and
    `atol`), then alternating rounds of a.calls calls; medians and ratios
    printed."""
    args = list(x.values()) if isinstance(x, dict) else [x]
    ys, yd = st(*args)[0], dyn(*args)[0]
    assert ys.shape == yd.shape and np.allclose(ys, yd, rtol=1e-3, atol=atol), \
        np.abs(ys - yd).max()
    ort = Ort(model, a.threads, x, a.work) if not a.no_ort else None
    t = {"s": [], "d": [], "o": []}
    for _ in range(a.rounds):
        t["s"].append(timed(lambda: st(*args), a.calls))
        t["d"].append(timed(lambda: dyn(*args), a.calls))
        if ort:
            t["o"].append(ort.run(a.calls + 1))
            time.sleep(SETTLE_S)
    if ort:
        ort.close()
    s, dm = statistics.median(t["s"]), statistics.median(t["d"])
    o = statistics.median(t["o"]) if ort else float("nan")
    print(f"| {label} | {s:.3f} | {dm:.3f} | {o:.3f} | {dm / s:.2f} | {dm / o:.2f} | "
          f"{s / o:.2f} | {st_s:.1f} | {dyn_s:.1f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="an ONNX model with a symbolic 'seq' at axis 1 "
                    "of its one input (default: the encoder block above)")
    ap.add_argument("--dim", type=int, default=256, help="width of the default model")
    ap.add_argument("--lengths", default="16,64,128,256")
    ap.add_argument("--max", type=int, default=512)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-bench-symbolic-shapes")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import kiln

    os.makedirs(a.work, exist_ok=True)
    model = a.model or os.path.join(a.work, "encoder_block.onnx")
    if not a.model:
        encoder_block(model, a.dim)
    d = onnx.load(model).graph.input[0].type.tensor_type.shape.dim[2].dim_value
    if not a.no_ort:
        ensure_ort()

    def compile_so(so, dim):
        t = time.perf_counter()
        kiln.compile(model, output=so, dims={"seq": dim})
        return time.perf_counter() - t

    dyn_so = os.path.join(a.work, "dynamic.so")
    dyn_s = compile_so(dyn_so, (1, a.max))
    dyn = kiln.load(dyn_so, threads=a.threads)
    print(f"CPU: {cpu_model()}; threads={a.threads}; seq=1..{a.max}; width {d}")
    print("| seq | static ms | dynamic ms | ORT ms | dynamic/static | dynamic/ORT | "
          "static/ORT | compile static s | compile dynamic s |")
    print("|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(1)
    for n in [int(x) for x in a.lengths.split(",")]:
        st_so = os.path.join(a.work, f"static{n}.so")
        st_s = compile_so(st_so, n)
        st = kiln.load(st_so, threads=a.threads)
        x = rng.standard_normal((1, n, d)).astype(np.float32)
        compare_row(n, st, dyn, x, model, a, st_s, dyn_s)

if __name__ == "__main__":
    main()
