#!/usr/bin/python3
"""A shape argument given as a graph input: compiled for the declared output
shape, checked at run time.

Usage: check_shape_guard.py KILN_COMPILE KILN_RUN WORKDIR

Writes a Reshape whose `shape` is a graph input (x: 2x3x4 -> y: 4x6), compiles
it, then runs kiln-run with the right shape (must match numpy) and with a
wrong one (exit status 2, and the message names the graph input and the node).
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def write_case(root, name, x, shape, y):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    for i, (n, a) in enumerate([("x", x), ("shape", shape)]):
        with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    with open(os.path.join(d, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())
    return d


def main():
    compile_, run, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape1")],
        "shape_guard",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    path = os.path.join(work, "model.onnx")
    onnx.save(model, path)
    so = os.path.join(work, "model.so")
    subprocess.run([compile_, path, "-o", so], check=True)

    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    ok = True
    # Right values, in the forms ONNX allows: exact, -1, and 0 (copy).
    for i, shape in enumerate([[4, 6], [-1, 6], [4, -1]]):
        d = write_case(work, f"good{i}", x, np.array(shape, np.int64),
                       x.reshape(4, 6))
        r = subprocess.run([run, so, "--test-data", d], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"shape {shape}: kiln-run failed ({r.returncode}):\n{r.stdout}{r.stderr}")
            ok = False
    # Wrong values: a clean error, exit status 2, naming input and node.
    for i, shape in enumerate([[6, 4], [3, -1], [-1, -1], [0, 6]]):
        d = write_case(work, f"bad{i}", x, np.array(shape, np.int64),
                       np.zeros((4, 6), np.float32))
        r = subprocess.run([run, so, "--test-data", d], capture_output=True, text=True)
        text = r.stdout + r.stderr
        if r.returncode != 2 or "'shape'" not in text or "'reshape1'" not in text:
            print(f"shape {shape}: expected exit 2 naming 'shape' and 'reshape1', "
                  f"got {r.returncode}:\n{text}")
            ok = False
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
