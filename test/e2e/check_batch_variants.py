#!/usr/bin/python3
"""Batch variants: compile a model with --batch-sizes, then run every variant
on rows of the torch reference (tiled or sliced to the variant's batch) and
compare. Also checks the metadata and that the weights are stored once, for
this model and for a convolution whose filter does not fit in L2 (its packed
filter is prefetched, and each variant packs it anew) compiled with a
symbolic batch.

usage: check_batch_variants.py KILN_COMPILE KILN_RUN MODEL_DIR WORKDIR
"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper as nh

compile_, run, model_dir, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
sizes = [1, 2, 4]


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, nh.to_array(t)


in_name, x = load(os.path.join(model_dir, "test_data_set_0", "input_0.pb"))
out_name, y = load(os.path.join(model_dir, "test_data_set_0", "output_0.pb"))

single = os.path.join(work, "single.so")
multi = os.path.join(work, "multi.so")
subprocess.run([compile_, os.path.join(model_dir, "model.onnx"), "-o", single], check=True)
subprocess.run([compile_, os.path.join(model_dir, "model.onnx"), "-o", multi,
                "--batch-sizes", ",".join(map(str, sizes))], check=True)

meta = json.load(open(os.path.join(work, "multi.json")))
got = [v["batch_size"] for v in meta["batch_variants"]]
assert got == sizes, f"batch variants {got}, expected {sizes}"
arenas = [v["arena_bytes"] for v in meta["batch_variants"]]
assert meta["arena_bytes"] == max(arenas), meta

# Weights are shared: three variants cost far less than three models.
weights = os.path.getsize(os.path.join(model_dir, "model.onnx"))
extra = os.path.getsize(multi) - os.path.getsize(single)
assert extra < weights / 2, f"multi-variant .so is {extra} bytes larger; weights {weights}"

for b in sizes:
    reps = -(-b // x.shape[0])
    xb = np.concatenate([x] * reps)[:b]
    yb = np.concatenate([y] * reps)[:b]
    d = os.path.join(work, f"b{b}")
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "input_0.pb"), "wb").write(nh.from_array(xb, in_name).SerializeToString())
    open(os.path.join(d, "output_0.pb"), "wb").write(nh.from_array(yb, out_name).SerializeToString())
    subprocess.run([run, multi, "--batch-size", str(b), "--test-data", d,
                    "--rtol", "1e-4", "--atol", "1e-5"], check=True)

# A 3x3 convolution of 512 channels: a 9.4 MB filter, larger than any L2, so
# each variant's code prefetches panels of its packed copy. The two variants'
# copies are equal and must be stored once.
rng = np.random.default_rng(7)
cin = cout = 512
w = (rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(cin * 9)).astype(np.float32)
graph = onnx.helper.make_graph(
    [onnx.helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])],
    "wide_conv",
    [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", cin, 7, 7])],
    [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
    [nh.from_array(w, "w")])
conv = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
conv.ir_version = 8
conv_path = os.path.join(work, "wide_conv.onnx")
onnx.save(conv, conv_path)
conv_so = os.path.join(work, "wide_conv.so")
subprocess.run([compile_, conv_path, "--dim", "N=1..16", "-o", conv_so], check=True)
assert [v["batch_size"] for v in json.load(open(os.path.join(work, "wide_conv.json")))
        ["batch_variants"]] == [1, 8]
size = os.path.getsize(conv_so)
assert size < w.nbytes * 1.25, f"wide_conv.so is {size} bytes; its filter {w.nbytes}"

xb = rng.standard_normal((3, cin, 7, 7)).astype(np.float32)
padded = np.pad(xb, ((0, 0), (0, 0), (1, 1), (1, 1)))
yb = np.zeros((3, cout, 7, 7), np.float64)
for i in range(3):
    for j in range(3):
        yb += np.einsum("nchw,oc->nohw", padded[:, :, i:i + 7, j:j + 7], w[:, :, i, j],
                        dtype=np.float64)
d = os.path.join(work, "wide_conv_b3")
os.makedirs(d, exist_ok=True)
open(os.path.join(d, "input_0.pb"), "wb").write(nh.from_array(xb, "x").SerializeToString())
open(os.path.join(d, "output_0.pb"), "wb").write(
    nh.from_array(yb.astype(np.float32), "y").SerializeToString())
# Sums of 4,608 products of unit-variance terms: f32 error stays below 1e-4.
subprocess.run([run, conv_so, "--test-data", d, "--rtol", "1e-4", "--atol", "1e-4"],
               check=True)

print("batch variants ok:", sizes, "arena bytes", arenas, "extra code bytes", extra,
      "wide_conv.so bytes", size)
