#!/usr/bin/python3
"""A model whose weights (over 100 MB) live in an external data file: it
loads without the weights being read into memory (they are mapped, and only
touched when code is generated), compiles, and matches numpy. A bool
initializer of 300 elements (over the size from which other tensors become
MLIR resources, which have no bool form), in the model and in an external
file, selects between two inputs as numpy does.

usage: check_external_data.py KILN_COMPILE KILN_RUN WORKDIR
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.helper as h
import onnx.numpy_helper as nh

compile_, run, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
k, n = 5120, 5376  # 110 MB of float32 weights
rng = np.random.default_rng(0)
w = rng.standard_normal((k, n), dtype=np.float32) * 0.01
b = rng.standard_normal(n, dtype=np.float32)
graph = h.make_graph(
    [h.make_node("MatMul", ["x", "w"], ["t"], name="mm"),
     h.make_node("Add", ["t", "b"], ["y"], name="bias")],
    "external", [h.make_tensor_value_info("x", 1, [1, k])],
    [h.make_tensor_value_info("y", 1, [1, n])], [nh.from_array(w, "w"), nh.from_array(b, "b")])
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
path = os.path.join(work, "model.onnx")
onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                location="weights.bin", size_threshold=1024)
weights = os.path.getsize(os.path.join(work, "weights.bin"))
assert os.path.getsize(path) < 4096 and weights > 100 * 2**20, (os.path.getsize(path), weights)

tiny = os.path.join(work, "tiny.onnx")
onnx.save_model(h.make_model(h.make_graph(
    [h.make_node("Relu", ["x"], ["y"], name="r")], "tiny",
    [h.make_tensor_value_info("x", 1, [1, 4])], [h.make_tensor_value_info("y", 1, [1, 4])]),
    opset_imports=[h.make_opsetid("", 13)]), tiny)


def peak_rss_kb(cmd):
    with tempfile.NamedTemporaryFile("r") as f:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f.name] + cmd, check=True,
                       stdout=subprocess.DEVNULL)
        return int(f.read().strip().splitlines()[-1])


# Import and lower to the graph dialect (--check): the weights are mapped,
# not read, so the process grows by far less than their size.
big_rss = peak_rss_kb([compile_, "--check", path])
tiny_rss = peak_rss_kb([compile_, "--check", tiny])
grown = (big_rss - tiny_rss) * 1024
print(f"import: peak RSS {big_rss} KiB vs {tiny_rss} KiB for a tiny model "
      f"(+{grown / 2**20:.1f} MiB for {weights / 2**20:.1f} MiB of weights)")
assert grown < weights / 4, "the external weights were read into memory"

# The whole way: compile, run, compare with numpy.
x = rng.standard_normal((1, k), dtype=np.float32)
tests = os.path.join(work, "test_data_set_0")
os.makedirs(tests, exist_ok=True)
open(os.path.join(tests, "input_0.pb"), "wb").write(nh.from_array(x, "x").SerializeToString())
open(os.path.join(tests, "output_0.pb"), "wb").write(
    nh.from_array(x @ w + b, "y").SerializeToString())
so = os.path.join(work, "model.so")
subprocess.run([compile_, path, "-o", so], check=True)
subprocess.run([run, so, "--test-data", tests, "--rtol", "1e-3", "--atol", "1e-4"], check=True)
for f in ("weights.bin", "model.so"):  # 220 MB not worth keeping around
    os.remove(os.path.join(work, f))

mask = rng.random(300) < 0.5
a, c = (rng.standard_normal(300, dtype=np.float32) for _ in range(2))
for external in (False, True):
    name = "bool_mask" + ("_external" if external else "")
    where = os.path.join(work, name)
    os.makedirs(os.path.join(where, "test_data_set_0"), exist_ok=True)
    m = h.make_model(h.make_graph(
        [h.make_node("Where", ["mask", "a", "c"], ["y"], name="select")], name,
        [h.make_tensor_value_info(v, 1, [300]) for v in "ac"],
        [h.make_tensor_value_info("y", 1, [300])], [nh.from_array(mask, "mask")]),
        opset_imports=[h.make_opsetid("", 13)])
    onnx.save_model(m, os.path.join(where, "model.onnx"), save_as_external_data=external,
                    location="mask.bin", size_threshold=0)
    for i, (v, arr) in enumerate([("a", a), ("c", c)]):
        open(os.path.join(where, "test_data_set_0", f"input_{i}.pb"), "wb").write(
            nh.from_array(arr, v).SerializeToString())
    open(os.path.join(where, "test_data_set_0", "output_0.pb"), "wb").write(
        nh.from_array(np.where(mask, a, c), "y").SerializeToString())
    so = os.path.join(where, "model.so")
    subprocess.run([compile_, os.path.join(where, "model.onnx"), "-o", so], check=True)
    subprocess.run([run, so, "--test-data", os.path.join(where, "test_data_set_0"),
                    "--rtol", "0", "--atol", "0"], check=True)
    assert external == os.path.exists(os.path.join(where, "mask.bin"))
print("external data ok")
