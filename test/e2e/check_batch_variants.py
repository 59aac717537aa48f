#!/usr/bin/python3
"""Batch variants: compile a model with --batch-sizes, then run every variant
on rows of the torch reference (tiled or sliced to the variant's batch) and
compare. Also checks the metadata and that the weights are stored once.

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
print("batch variants ok:", sizes, "arena bytes", arenas, "extra code bytes", extra)
