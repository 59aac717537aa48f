#!/usr/bin/python3
"""Compile time on synthetic graphs of 1k to 50k nodes (docs/benchmarks.md).

Shapes that stress the compiler's scaling rather than its kernels:
  chain   N elementwise nodes in a row (Add, Mul, Relu, Tanh, ... in turn)
  sum     one Sum of N inputs
  wide    N independent Relu branches joined by one Concat
  matmul  N/10 MatMul + Add layers on a 16x16 activation
Each is compiled to a .so with a time limit; the table gives seconds and
milliseconds per node, so a super-linear pass shows as a growing ms/node.

usage: bench/compile/synthetic.py [--sizes 1000,2000,5000,10000,20000,50000]
       [--kinds chain,sum,wide,matmul] [--build build] [--timeout 900]
"""
import argparse
import os
import subprocess
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPS = ["Add", "Mul", "Relu", "Tanh", "Sub", "Sigmoid", "Neg", "Abs"]


def chain(n):
    F = TensorProto.FLOAT
    nodes, prev = [], "x"
    for i in range(n):
        op = OPS[i % len(OPS)]
        ins = [prev, "c"] if op in ("Add", "Mul", "Sub") else [prev]
        nodes.append(helper.make_node(op, ins, [f"t{i}"], name=f"n{i}"))
        prev = f"t{i}"
    nodes[-1].output[0] = "y"
    c = numpy_helper.from_array(np.full([16], 0.5, np.float32), "c")
    return helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", F, [4, 16])],
                             [helper.make_tensor_value_info("y", F, [4, 16])], [c])


def sum_of(n):
    F = TensorProto.FLOAT
    ins = [helper.make_tensor_value_info(f"x{i}", F, [8]) for i in range(n)]
    node = helper.make_node("Sum", [f"x{i}" for i in range(n)], ["y"], name="sum")
    return helper.make_graph([node], "sum", ins, [helper.make_tensor_value_info("y", F, [8])])


def wide(n):
    F = TensorProto.FLOAT
    nodes = [helper.make_node("Relu", ["x"], [f"r{i}"], name=f"r{i}") for i in range(n)]
    nodes.append(helper.make_node("Concat", [f"r{i}" for i in range(n)], ["y"], name="cat",
                                  axis=0))
    return helper.make_graph(nodes, "wide", [helper.make_tensor_value_info("x", F, [1, 8])],
                             [helper.make_tensor_value_info("y", F, [n, 8])])


def matmul(n):
    F = TensorProto.FLOAT
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(max(1, n // 10)):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal([16, 16]) * 0.1).astype(np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"], name=f"mm{i}"))
        nodes.append(helper.make_node("Add", [f"m{i}", "x"], [f"a{i}"], name=f"add{i}"))
        prev = f"a{i}"
    nodes[-1].output[0] = "y"
    return helper.make_graph(nodes, "matmul", [helper.make_tensor_value_info("x", F, [16, 16])],
                             [helper.make_tensor_value_info("y", F, [16, 16])], inits)


KINDS = {"chain": chain, "sum": sum_of, "wide": wide, "matmul": matmul}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,2000,5000,10000,20000,50000")
    ap.add_argument("--kinds", default="chain,sum,wide,matmul")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--work", default="/tmp/kiln-bench-compile")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    compiler = os.path.join(a.build, "bin", "kiln-compile")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "unknown")
    print(f"CPU: {cpu}")
    print("| graph | nodes | compile s | ms / node |")
    print("|---|---:|---:|---:|")
    for kind in a.kinds.split(","):
        for n in [int(s) for s in a.sizes.split(",")]:
            g = KINDS[kind](n)
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
            m.ir_version = 8
            path = os.path.join(a.work, f"{kind}{n}.onnx")
            onnx.save(m, path)
            nodes = len(m.graph.node) if kind != "sum" else n
            t = time.perf_counter()
            try:
                r = subprocess.run([compiler, path, "-o", path + ".so"], capture_output=True,
                                   text=True, timeout=a.timeout)
                secs = time.perf_counter() - t
                status = "" if r.returncode == 0 else " (failed: " + \
                    r.stderr.strip().splitlines()[-1][:80] + ")"
                print(f"| {kind}{status} | {nodes} | {secs:.1f} | {1000 * secs / nodes:.2f} |",
                      flush=True)
            except subprocess.TimeoutExpired:
                print(f"| {kind} | {nodes} | > {a.timeout:.0f} | |", flush=True)
                break


if __name__ == "__main__":
    main()
