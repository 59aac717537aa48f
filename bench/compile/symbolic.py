#!/usr/bin/python3
"""Compile time of symbolic dimensions against a static compile (docs/benchmarks.md).

Issue 28's target: a model compiled once over ranges of its symbolic
dimensions (--dim SYMBOL=MIN..MAX) compiles in at most 2x the time of one
static compile of it (every symbol fixed). Each model below is compiled both
ways by kiln-compile, best wall time of --repeat runs each; the table gives
both, the ratio and the share of the dynamic compile spent in MLIR's code
generation (the phase that grows with run-time extents).

Built-in models (the shapes that have compiled slowly with run-time sizes):
  attention  a BERT-style block written out: Q/K/V MatMuls, heads by
             Reshape/Transpose, scaled scores plus a [b,1,1,s] mask,
             Softmax, the context MatMul, output projection, residual and
             LayerNormalization (width 64, 8 heads of 8); --dim b=1..8
             --dim s=1..256 against b=1, s=64
  attention23  the same with ONNX 23's Attention op and a [b,1,s,s] float mask
  conv       a detection-style stem: three 3x3 convolutions, a max pool and a
             1x1 head over symbolic h and w (h, w = 32..960 against 320)
Any other model: --onnx PATH --dynamic "b=1..8,s=1..256" --static "b=1,s=64".

usage: bench/compile/symbolic.py [--models attention,attention23,conv]
       [--onnx PATH --dynamic DIMS --static DIMS] [--repeat 2] [--build build]
"""
import argparse
import os
import re
import subprocess
import time

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def weight(rng, name, shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)


def attention_block(fused):
    rng = np.random.default_rng(0)
    width, heads = 64, 8  # head size 8: the size whose run-time tiles compiled slowly
    F = T.FLOAT
    inits = [weight(rng, n, [width, width]) for n in ("wq", "wk", "wv", "wo")]
    inits += [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
              (("split_shape", [0, 0, heads, width // heads]),
               ("merge_shape", [0, 0, width]))]
    inits += [numpy_helper.from_array(np.ones(width, np.float32), "gamma"),
              numpy_helper.from_array(np.zeros(width, np.float32), "beta"),
              numpy_helper.from_array(np.array(1 / np.sqrt(width // heads), np.float32),
                                      "scale")]
    nodes = [helper.make_node("MatMul", ["x", w], [w + "_out"]) for w in ("wq", "wk", "wv")]
    if fused:
        nodes.append(helper.make_node("Attention", ["wq_out", "wk_out", "wv_out", "mask"],
                                      ["ctx"], q_num_heads=heads, kv_num_heads=heads))
        inputs = [helper.make_tensor_value_info("mask", F, ["b", 1, "s", "s"])]
        opset = 23
    else:
        for w, perm in (("wq", [0, 2, 1, 3]), ("wk", [0, 2, 3, 1]), ("wv", [0, 2, 1, 3])):
            nodes.append(helper.make_node("Reshape", [w + "_out", "split_shape"], [w + "_h"]))
            nodes.append(helper.make_node("Transpose", [w + "_h"], [w + "_t"], perm=perm))
        nodes += [helper.make_node("MatMul", ["wq_t", "wk_t"], ["scores"]),
                  helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
                  helper.make_node("Add", ["scaled", "mask"], ["masked"]),
                  helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
                  helper.make_node("MatMul", ["probs", "wv_t"], ["ctx_h"]),
                  helper.make_node("Transpose", ["ctx_h"], ["ctx_t"], perm=[0, 2, 1, 3]),
                  helper.make_node("Reshape", ["ctx_t", "merge_shape"], ["ctx"])]
        inputs = [helper.make_tensor_value_info("mask", F, ["b", 1, "s", "s"])]
        opset = 17
    nodes += [helper.make_node("MatMul", ["ctx", "wo"], ["proj"]),
              helper.make_node("Add", ["proj", "x"], ["res"]),
              helper.make_node("LayerNormalization", ["res", "gamma", "beta"], ["y"], axis=-1)]
    inputs.insert(0, helper.make_tensor_value_info("x", F, ["b", "s", width]))
    g = helper.make_graph(nodes, "attention", inputs,
                          [helper.make_tensor_value_info("y", F, None)], inits)
    return g, opset, "b=1..8,s=1..256", "b=1,s=64"


def conv_stem():
    rng = np.random.default_rng(0)
    F = T.FLOAT
    inits, nodes, prev, ch = [], [], "x", 3
    for i, (out, stride) in enumerate(((16, 2), (32, 1), (32, 2))):
        inits += [weight(rng, f"w{i}", [out, ch, 3, 3]), weight(rng, f"b{i}", [out])]
        nodes += [helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [f"c{i}"],
                                   pads=[1, 1, 1, 1], strides=[stride, stride]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"])]
        prev, ch = f"r{i}", out
    inits += [weight(rng, "wh", [1, ch, 1, 1]), weight(rng, "bh", [1])]
    nodes += [helper.make_node("MaxPool", [prev], ["pool"], kernel_shape=[2, 2],
                               strides=[2, 2]),
              helper.make_node("Conv", ["pool", "wh", "bh"], ["head"]),
              helper.make_node("Sigmoid", ["head"], ["y"])]
    g = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", F, [1, 3, "h", "w"])],
                          [helper.make_tensor_value_info("y", F, None)], inits)
    return g, 17, "h=32..960,w=32..960", "h=320,w=320"


MODELS = {"attention": lambda: attention_block(False),
          "attention23": lambda: attention_block(True),
          "conv": conv_stem}


def dim_flags(spec):
    flags = []
    for d in filter(None, spec.split(",")):
        flags += ["--dim", d.strip()]
    return flags


def compile_time(compiler, path, dims, repeat):
    """Best wall time of `repeat` compiles and the codegen phase of the best."""
    best, codegen = None, None
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run([compiler, path, "-o", path + ".so", "--timing"] + dim_flags(dims),
                           capture_output=True, text=True)
        secs = time.perf_counter() - t
        if r.returncode != 0:
            raise RuntimeError(f"{path} ({dims}): " + r.stderr.strip()[-300:])
        m = re.search(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+codegen$", r.stderr, re.M)
        if best is None or secs < best:
            best, codegen = secs, float(m.group(1)) if m else float("nan")
    return best, codegen


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--onnx", help="an ONNX model to time instead of the built-in ones")
    ap.add_argument("--dynamic", help="--onnx's ranges, e.g. b=1..8,s=1..256")
    ap.add_argument("--static", help="--onnx's fixed sizes, e.g. b=1,s=64")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-bench-compile-symbolic")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    compiler = os.path.join(a.build, "bin", "kiln-compile")
    cases = []
    if a.onnx:
        if not (a.dynamic and a.static):
            ap.error("--onnx needs --dynamic and --static")
        cases.append((os.path.basename(a.onnx), a.onnx, a.dynamic, a.static))
    else:
        for name in a.models.split(","):
            g, opset, dynamic, static = MODELS[name]()
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
            m.ir_version = 8
            path = os.path.join(a.work, name + ".onnx")
            onnx.save(m, path)
            cases.append((name, path, dynamic, static))
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "unknown")
    print(f"CPU: {cpu}; best of {a.repeat} compiles each")
    print("| model | dynamic dims | static dims | static s | dynamic s | dynamic / static "
          "| dynamic codegen s |")
    print("|---|---|---|---:|---:|---:|---:|")
    for name, path, dynamic, static in cases:
        st, _ = compile_time(compiler, path, static, a.repeat)
        dy, dy_codegen = compile_time(compiler, path, dynamic, a.repeat)
        print(f"| {name} | {dynamic} | {static} | {st:.2f} | {dy:.2f} | {dy / st:.2f} "
              f"| {dy_codegen:.2f} |", flush=True)


if __name__ == "__main__":
    main()
