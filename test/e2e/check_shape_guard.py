#!/usr/bin/python3
"""A shape argument given as a graph input: compiled for the declared output
shape, checked at run time.

Usage: check_shape_guard.py KILN_COMPILE KILN_RUN WORKDIR

Writes a Reshape whose `shape` is a graph input (x: 2x3x4 -> y: 4x6), compiles
it, then runs kiln-run with the right shape (must match numpy) and with a
wrong one (exit status 2, and the message names the graph input and the node).

Then a KV-cache update (TensorScatter-24, cache [2,2,8,4], update of 3
positions) whose write_indices come at run time: in linear and circular mode
the results must equal the ONNX pseudocode run in numpy (exactly: it only
moves values), and linear writes past the cache's end must be refused (exit
status 2 naming 'write_indices' and the node).
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def write_case(root, name, x, shape, y, names=("x", "shape")):
    return write_inputs(root, name, list(zip(names, [x, shape])), y)


def write_inputs(root, name, inputs, y):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    for i, (n, a) in enumerate(inputs):
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
    ok = check_tensor_scatter(compile_, run, work) and ok
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


def scatter_reference(past, update, w, mode):
    """ONNX TensorScatter-24's pseudocode, axis -2."""
    out = past.copy()
    m, s = past.shape[-2], update.shape[-2]
    for b in range(past.shape[0]):
        for i in range(s):
            j = w[b] + i
            out[b, :, j % m if mode == "circular" else j, :] = update[b, :, i, :]
    return out


def check_tensor_scatter(compile_, run, work):
    ok = True
    rng = np.random.default_rng(5)
    past = rng.standard_normal((2, 2, 8, 4)).astype(np.float32)
    update = rng.standard_normal((2, 2, 3, 4)).astype(np.float32)
    for mode, good, bad in [("linear", [[0, 5], [3, 2]], [[6, 0], [-1, 0]]),
                            ("circular", [[6, 7], [0, 13]], [])]:
        graph = helper.make_graph(
            [helper.make_node("TensorScatter", ["past", "update", "write_indices"],
                              ["present"], name="kv_update", mode=mode)],
            "kv_" + mode,
            [helper.make_tensor_value_info("past", TensorProto.FLOAT, [2, 2, 8, 4]),
             helper.make_tensor_value_info("update", TensorProto.FLOAT, [2, 2, 3, 4]),
             helper.make_tensor_value_info("write_indices", TensorProto.INT64, [2])],
            [helper.make_tensor_value_info("present", TensorProto.FLOAT, [2, 2, 8, 4])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
        model.ir_version = 8
        path = os.path.join(work, f"kv_{mode}.onnx")
        onnx.save(model, path)
        so = os.path.join(work, f"kv_{mode}.so")
        subprocess.run([compile_, path, "-o", so], check=True)
        for i, w in enumerate(good):
            w = np.array(w, np.int64)
            want = scatter_reference(past, update, w, mode)
            d = write_inputs(work, f"kv_{mode}_good{i}",
                             [("past", past), ("update", update),
                              ("write_indices", w)], want)
            r = subprocess.run([run, so, "--test-data", d, "--rtol", "0", "--atol", "0"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{mode} w={w.tolist()}: kiln-run failed ({r.returncode}):\n"
                      f"{r.stdout}{r.stderr}")
                ok = False
        for i, w in enumerate(bad):
            d = write_inputs(work, f"kv_{mode}_bad{i}",
                             [("past", past), ("update", update),
                              ("write_indices", np.array(w, np.int64))], past)
            r = subprocess.run([run, so, "--test-data", d], capture_output=True, text=True)
            text = r.stdout + r.stderr
            if r.returncode != 2 or "'write_indices'" not in text or "'kv_update'" not in text:
                print(f"{mode} w={w}: expected exit 2 naming 'write_indices' and "
                      f"'kv_update', got {r.returncode}:\n{text}")
                ok = False
    return ok


if __name__ == "__main__":
    sys.exit(main())
