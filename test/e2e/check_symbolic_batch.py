#!/usr/bin/python3
"""A symbolic batch (docs/shapes.md): make the leading dimension of a model
symbolic, compile it once with --dim N=1..16, and check it at several
batches: through kiln-run --test-data against the model's reference (rows
tiled to the batch; rtol 1e-4, atol 1e-5), and through the raw C ABI
(symbolic_batch_driver.c: no allocation at any batch, each batch equal to
batch-1 runs of its samples, output shapes read back, refusals).

usage: check_symbolic_batch.py KILN_COMPILE KILN_RUN RUNTIME_INCLUDE MODEL_DIR WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper as nh

compile_, run, include, model_dir, work = sys.argv[1:6]
os.makedirs(work, exist_ok=True)


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, nh.to_array(t)


model = onnx.load(os.path.join(model_dir, "model.onnx"))
for v in list(model.graph.input) + list(model.graph.output):
    dim = v.type.tensor_type.shape.dim[0]
    dim.ClearField("dim_value")
    dim.dim_param = "N"
del model.graph.value_info[:]
path = os.path.join(work, "model.onnx")
onnx.save(model, path)
so = os.path.join(work, "model.so")
subprocess.run([compile_, path, "-o", so, "--dim", "N=1..16"], check=True)

in_name, x = load(os.path.join(model_dir, "test_data_set_0", "input_0.pb"))
out_name, y = load(os.path.join(model_dir, "test_data_set_0", "output_0.pb"))
for b in [1, 3, 8, 11, 16]:
    reps = -(-b // x.shape[0])
    d = os.path.join(work, f"b{b}")
    os.makedirs(d, exist_ok=True)
    xb = np.concatenate([x] * reps)[:b]
    yb = np.concatenate([y] * reps)[:b]
    open(os.path.join(d, "input_0.pb"), "wb").write(nh.from_array(xb, in_name).SerializeToString())
    open(os.path.join(d, "output_0.pb"), "wb").write(nh.from_array(yb, out_name).SerializeToString())
    subprocess.run([run, so, "--test-data", d, "--rtol", "1e-4", "--atol", "1e-5"],
                   check=True)

# Out of range through kiln-run: a clear refusal, exit status 2.
d = os.path.join(work, "b17")
os.makedirs(d, exist_ok=True)
open(os.path.join(d, "input_0.pb"), "wb").write(
    nh.from_array(np.concatenate([x] * 17)[:17], in_name).SerializeToString())
r = subprocess.run([run, so, "--test-data", d], capture_output=True, text=True)
assert r.returncode == 2 and "outside the range 1..16" in r.stderr, r

driver = os.path.join(work, "driver")
here = os.path.dirname(os.path.abspath(__file__))
subprocess.run([os.environ.get("CC", "cc"), "-O1", "-I", include, "-o", driver,
                os.path.join(here, "symbolic_batch_driver.c"), "-ldl", "-lm"],
               check=True)
subprocess.run([driver, so], check=True)
print("symbolic batch ok:", model_dir)
