#!/usr/bin/python3
"""Symbolic image sizes (docs/shapes.md): a small detection-style CNN whose
batch, height and width are symbolic (a 3x3 and a dilated convolution, a
depthwise convolution of stride 2 beside an average pooling that does not
count its padding, their concatenation, a batch normalization, a nearest
upsampling by 2 (Resize), a constant pad, a 1x1 head and
a max pooling with ceil_mode) is compiled once with ranges (the window
sizes traced as floor divisions, so no guard) and run at several
shapes, odd sizes included, each compared with torch (rtol 1e-4, atol 1e-5
in float32): through Python's kiln.load(), through kiln-run --test-data, and
through the raw C ABI (symbolic_images_driver.c: no allocation at any shape,
output shapes read back, a height above the range refused).

usage: check_symbolic_images.py KILN_COMPILE KILN_RUN RUNTIME_INCLUDE WORKDIR PYTHONPATH
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper as h, numpy_helper as nh

compile_, run, include, work, pythonpath = sys.argv[1:6]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

rng = np.random.default_rng(0)


def weights(*shape):
    return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


W1, B1 = weights(8, 3, 3, 3), weights(8)
WD = weights(8, 8, 3, 3)
WW = weights(8, 1, 3, 3)
W2, B2 = weights(4, 16, 1, 1), weights(4)
SCALE = rng.uniform(0.5, 1.5, 16).astype(np.float32)
BIAS = weights(16)
MEAN = weights(16)
VAR = rng.uniform(0.5, 2.0, 16).astype(np.float32)
nodes = [
    h.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv", pads=[1] * 4),
    h.make_node("Relu", ["c1"], ["a"], name="relu"),
    h.make_node("Conv", ["a", "wd"], ["c2"], name="dilated",
                auto_pad="SAME_UPPER", dilations=[2, 2]),
    h.make_node("Relu", ["c2"], ["a2"], name="relu2"),
    h.make_node("Conv", ["a2", "ww"], ["dw"], name="depthwise", group=8,
                strides=[2, 2], pads=[1] * 4),
    h.make_node("AveragePool", ["a2"], ["p"], name="avgpool", kernel_shape=[3, 3],
                strides=[2, 2], pads=[1] * 4),
    h.make_node("Concat", ["dw", "p"], ["cat"], name="concat", axis=1),
    h.make_node("BatchNormalization", ["cat", "scale", "bias", "mean", "var"],
                ["bn"], name="bn"),
    h.make_node("Resize", ["bn", "", "up"], ["upsampled"], name="resize",
                mode="nearest", coordinate_transformation_mode="asymmetric",
                nearest_mode="floor"),
    h.make_node("Pad", ["upsampled", "pads", "padv"], ["padded"], name="pad"),
    h.make_node("Conv", ["padded", "w2", "b2"], ["c3"], name="head"),
    h.make_node("Sigmoid", ["c3"], ["s"], name="sigmoid"),
    h.make_node("MaxPool", ["s"], ["y"], name="maxpool", kernel_shape=[3, 3],
                strides=[2, 2], ceil_mode=1),
]
inits = [nh.from_array(v, n) for n, v in [
    ("w1", W1), ("b1", B1), ("wd", WD), ("ww", WW), ("w2", W2), ("b2", B2),
    ("scale", SCALE), ("bias", BIAS), ("mean", MEAN), ("var", VAR),
    ("pads", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)),
    ("padv", np.array(0.25, np.float32)),
    ("up", np.array([1, 1, 2, 2], np.float32))]]
graph = h.make_graph(
    nodes, "images",
    [h.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "h", "w"])],
    [h.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4, None, None])],
    inits)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
model.ir_version = 8
path = os.path.join(work, "images.onnx")
onnx.save(model, path)


def reference(x):
    t = torch.from_numpy(x).double()
    T = lambda a: torch.from_numpy(a).double()  # noqa: E731
    a = F.relu(F.conv2d(t, T(W1), T(B1), padding=1))
    a2 = F.relu(F.conv2d(a, T(WD), padding=2, dilation=2))
    dw = F.conv2d(a2, T(WW), stride=2, padding=1, groups=8)
    p = F.avg_pool2d(a2, 3, 2, padding=1, count_include_pad=False)
    c = torch.cat([dw, p], 1)
    bn = F.batch_norm(c, T(MEAN), T(VAR), T(SCALE), T(BIAS), eps=1e-5)
    up = F.interpolate(bn, scale_factor=2, mode="nearest")
    padded = F.pad(up, (2, 1, 1, 2), value=0.25)
    s = torch.sigmoid(F.conv2d(padded, T(W2), T(B2)))
    return F.max_pool2d(s, 3, 2, ceil_mode=True).numpy()


so = os.path.join(work, "images.so")
r = subprocess.run([compile_, path, "-o", so, "--dim", "batch=1..3",
                    "--dim", "h=8..200", "--dim", "w=8..200"],
                   capture_output=True, text=True)
assert r.returncode == 0, r.stderr
assert "one graph that runs at the sizes given at run time" in r.stderr, r.stderr

# The window ops' output sizes are floor divisions of h and w, so the
# depthwise convolution and the pooling beside it (both (h - 1) // 2 + 1)
# concatenate without a run-time guard.
r = subprocess.run([compile_, path, "--emit=kiln", "-o", "-", "--dim", "batch=1..3",
                    "--dim", "h=8..200", "--dim", "w=8..200"],
                   capture_output=True, text=True)
assert r.returncode == 0 and "kiln.concat" in r.stdout, r.stderr
assert "kiln.guard" not in r.stdout, r.stdout

shapes = [(1, 8, 8), (2, 37, 53), (1, 64, 17), (3, 200, 200), (1, 9, 131)]
m = kiln.load(so)
inputs = {}
for n, hh, ww in shapes:
    x = rng.standard_normal((n, 3, hh, ww)).astype(np.float32)
    inputs[(n, hh, ww)] = x
    want = reference(x)
    got = m(x)[0]
    assert got.shape == want.shape, ((n, hh, ww), got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
try:
    m(np.zeros((1, 3, 201, 16), np.float32))
    raise AssertionError("a height of 201 was accepted")
except kiln.Error as e:
    assert "outside the range 8..200" in str(e), e

# kiln-run takes the shapes from the .pb files.
for n, hh, ww in shapes[1:3]:
    d = os.path.join(work, f"x{n}_{hh}_{ww}")
    os.makedirs(d, exist_ok=True)
    x = inputs[(n, hh, ww)]
    open(os.path.join(d, "input_0.pb"), "wb").write(
        nh.from_array(x, "x").SerializeToString())
    open(os.path.join(d, "output_0.pb"), "wb").write(
        nh.from_array(reference(x).astype(np.float32), "y").SerializeToString())
    subprocess.run([run, so, "--test-data", d, "--rtol", "1e-4", "--atol",
                    "1e-5"], check=True)

# The raw C ABI: allocation-free at every shape, shapes read back, a height
# above the range refused. The driver's random input is compared here.
here = os.path.dirname(os.path.abspath(__file__))
driver = os.path.join(work, "driver")
subprocess.run([os.environ.get("CC", "cc"), "-O1", "-I", include, "-o", driver,
                os.path.join(here, "symbolic_images_driver.c"), "-ldl"],
               check=True)
args = [driver, so, work, "3"]
for n, hh, ww in shapes:
    args += [str(v) for v in (n, hh, ww) + reference(inputs[(n, hh, ww)]).shape]
subprocess.run(args, check=True)
print("symbolic images: ok")
