#!/usr/bin/python3
"""Graphs of thousands of inputs and outputs (docs/benchmarks.md, compile time
on synthetic graphs): compiled and run against numpy. Such graphs take the
code paths that keep LLVM's work bounded: the graph function reads its
pointers from the argument array (lib/Target/LongFunctions.cpp), long
straight-line blocks move into functions of their own, and the memref
arguments become pointers in one pass (kiln-cpu-pointer-arguments). A wrong
argument index or a value lost at a cut shows here as a wrong number.

usage: check_wide_graphs.py WORKDIR PYTHONPATH KILN_RUN
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper as nh
from onnx import TensorProto as T
from onnx import helper as h

work, pythonpath, run = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import assert_close, compile_and_load, save_onnx  # noqa: E402

rng = np.random.default_rng(7)
checks = 0


def vi(name, shape):
    return h.make_tensor_value_info(name, T.FLOAT, shape)


# A Sum of 3,000 graph inputs: one straight-line block of about 10,000
# instructions before the cuts. Tolerance: float32 accumulation of 3,000
# terms against float64, 1e-5 of the largest output.
n = 3000
xs = {f"x{i}": rng.standard_normal(8).astype(np.float32) for i in range(n)}
m = compile_and_load(kiln, save_onnx(
    work, "sum3000", [h.make_node("Sum", list(xs), ["y"])],
    [vi(k, [8]) for k in xs], [vi("y", [8])]))
want = np.sum(np.stack(list(xs.values())).astype(np.float64), axis=0)
assert_close(m.run(xs)["y"], want, "Sum of 3000 inputs", 1e-5)
checks += 1

# The same Sum feeding a loop nest (MatMul on a [1, 8] row), so the graph
# holds both a long block and an outlined loop; and the inputs in reverse
# order of use.
n = 2500
xs = {f"x{i}": rng.standard_normal((1, 8)).astype(np.float32) for i in range(n)}
w = rng.standard_normal((8, 64)).astype(np.float32)
nodes = [h.make_node("Sum", list(reversed(list(xs))), ["s"]),
         h.make_node("Relu", ["s"], ["r"]),
         h.make_node("MatMul", ["r", "w"], ["y"])]
m = compile_and_load(kiln, save_onnx(
    work, "sum_matmul", nodes, [vi(k, [1, 8]) for k in xs], [vi("y", [1, 64])],
    [("w", w)]))
s = np.sum(np.stack(list(xs.values())).astype(np.float64), axis=0)
assert_close(m.run(xs)["y"], np.maximum(s, 0) @ w.astype(np.float64),
             "Sum of 2500 inputs into a MatMul", 1e-5)
checks += 1

# 400 inputs and 400 outputs, each output from two neighbouring inputs: the
# argument array is read for inputs and outputs alike, in order. Exact but
# for one rounding (a multiply-add may be fused): 1e-6.
n = 400
xs = {f"x{i}": rng.standard_normal(4).astype(np.float32) for i in range(n)}
nodes, consts = [], []
for i in range(n):
    nodes += [h.make_node("Relu", [f"x{i}"], [f"r{i}"]),
              h.make_node("Mul", [f"r{i}", f"c{i}"], [f"p{i}"]),
              h.make_node("Add", [f"p{i}", f"x{(i + 1) % n}"], [f"y{i}"])]
    consts.append((f"c{i}", np.array(i + 1, np.float32)))
m = compile_and_load(kiln, save_onnx(
    work, "wide_io", nodes, [vi(k, [4]) for k in xs],
    [vi(f"y{i}", [4]) for i in range(n)], consts))
got = m.run(xs)
for i in range(n):
    want = np.maximum(xs[f"x{i}"], 0) * np.float32(i + 1) + xs[f"x{(i + 1) % n}"]
    assert_close(got[f"y{i}"], want, f"output y{i} of 400", 1e-6)
    checks += 1

# A symbolic batch over 300 inputs: the inputs are memrefs of a dynamic
# size before bufferization, and the graph also takes the run-time sizes.
n = 300
path = save_onnx(work, "sum_symbolic",
                 [h.make_node("Sum", [f"x{i}" for i in range(n)], ["s"]),
                  h.make_node("Relu", ["s"], ["y"])],
                 [vi(f"x{i}", ["N", 8]) for i in range(n)], [vi("y", ["N", 8])])
m = compile_and_load(kiln, path, dims={"N": (1, 4)})
for b in (1, 3, 4):
    xs = {f"x{i}": rng.standard_normal((b, 8)).astype(np.float32) for i in range(n)}
    s = np.sum(np.stack(list(xs.values())).astype(np.float64), axis=0)
    assert_close(m.run(xs)["y"], np.maximum(s, 0), f"symbolic Sum of 300, N={b}", 1e-5)
    checks += 1

# Batch variants: each variant's graph takes the argument array on its own
# (kiln-run picks the variant; the Python session runs the first).
n = 300
xs = {f"x{i}": rng.standard_normal((3, 8)).astype(np.float32) for i in range(n)}
path = save_onnx(work, "sum_batches", [h.make_node("Sum", list(xs), ["y"])],
                 [vi(k, [1, 8]) for k in xs], [vi("y", [1, 8])])
so = kiln.compile(path, output=path[:-5] + ".so", batch_sizes=(1, 3))
for b in (1, 3):
    data, out = os.path.join(work, f"batch{b}"), os.path.join(work, f"out{b}")
    os.makedirs(data, exist_ok=True)
    for i, (k, v) in enumerate(xs.items()):
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(nh.from_array(v[:b], k).SerializeToString())
    subprocess.run([run, so, "--batch-size", str(b), "--test-data", data,
                    "--save-outputs", out], check=True, stdout=subprocess.DEVNULL)
    y = onnx.TensorProto()
    with open(os.path.join(out, "output_0.pb"), "rb") as f:
        y.ParseFromString(f.read())
    want = np.sum(np.stack([v[:b] for v in xs.values()]).astype(np.float64), axis=0)
    assert_close(nh.to_array(y), want, f"Sum of 300 at batch {b}", 1e-5)
    checks += 1

print(f"wide graphs: {checks} checks passed")
