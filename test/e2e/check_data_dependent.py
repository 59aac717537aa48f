#!/usr/bin/python3
"""Outputs whose sizes depend on the data (docs/shapes.md, "Sizes that depend
on the data"): NonZero, Compress, Unique and TopK with a run-time k give as
many elements as the data selects, bounded by their inputs, in static models
and in models at run-time sizes alike. Each model is compiled once and run
on several inputs, selections of none and of all included, through Python's
kiln.load(); outputs must equal torch's or numpy's exactly (they select
elements, and the one float op after a selection, relu * 2, is exact).
kiln-run --test-data reads a selection's shape from the .pb files,
data_dependent_driver.c counts the heap through the raw C ABI, and a k out
of range, an input out of range and --target=cuda are refused by name.

usage: check_data_dependent.py KILN_COMPILE KILN_RUN WORKDIR PYTHONPATH
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

compile_, run_, work, pythonpath = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import compile_and_load, save_onnx  # noqa: E402

rng = np.random.default_rng(0)


def save(name, nodes, inputs, outputs, inits=(), opset=13):
    return save_onnx(work, name, nodes, inputs, outputs, inits, opset, ir_version=8)


def build(path, **kw):
    return compile_and_load(kiln, path, **kw)


def same(got, want, what):
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape, (what, g.shape, w.shape)
        assert g.dtype == w.dtype, (what, g.dtype, w.dtype)
        assert np.array_equal(g, w), what


def refused(m, args, words):
    try:
        m(*args)
    except kiln.Error as e:
        assert words in str(e), e
        return
    raise AssertionError(f"ran, expected a refusal with {words!r}")


# 1. torch's boolean mask and nonzero, on a static input: the note names the
#    nodes; model.json gives the largest sizes and marks the axes computed.
class MaskAndNonzero(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x[x > 0.2]) * 2, torch.nonzero(x).t()


path = os.path.join(work, "mask_nonzero.onnx")
torch.onnx.export(MaskAndNonzero(), (torch.randn(4, 6),), path, opset_version=13,
                  input_names=["x"], output_names=["sel", "nz"])
out = subprocess.run([compile_, path, "-o", path[:-5] + ".so"], capture_output=True,
                     text=True, check=True)
assert "sizes that depend on the data (node '/NonZero' (NonZero, opset 13)" in out.stderr, out.stderr
meta = json.load(open(path[:-5] + ".json"))
assert meta["outputs"][0]["shape"] == [24] and meta["outputs"][0]["computed_axes"] == [0], meta
assert meta["outputs"][1]["shape"] == [2, 24] and meta["outputs"][1]["computed_axes"] == [1], meta
m = kiln.load(path[:-5] + ".so")
for shift in (0.0, -5.0, 5.0, 0.3):
    x = rng.standard_normal((4, 6)).astype(np.float32) + shift
    x[0, 0] = 0.0 if shift == 5.0 else x[0, 0]
    want = [w.numpy() for w in MaskAndNonzero()(torch.from_numpy(x))]
    same(m(x), want, f"mask/nonzero at shift {shift}")
print("mask and nonzero: ok (none, all, some selected)")


# 2. Keep the boxes whose score passes, at run-time sizes (n = 1..100).
class KeepBoxes(torch.nn.Module):
    def forward(self, boxes, scores):
        keep = scores > 0.5
        return boxes[keep], scores[keep]


path = os.path.join(work, "keep_boxes.onnx")
torch.onnx.export(KeepBoxes(), (torch.randn(10, 4), torch.rand(10)), path, opset_version=13,
                  input_names=["boxes", "scores"], output_names=["kept", "kept_scores"],
                  dynamic_axes={"boxes": {0: "n"}, "scores": {0: "n"}})
m = build(path, dims={"n": (1, 100)})
for n in (1, 10, 57, 100):
    boxes = rng.standard_normal((n, 4)).astype(np.float32)
    scores = rng.random(n).astype(np.float32)
    want = [w.numpy() for w in KeepBoxes()(torch.from_numpy(boxes), torch.from_numpy(scores))]
    same(m(boxes, scores), want, f"keep_boxes at n={n}")
refused(m, (np.zeros((101, 4), np.float32), np.zeros(101, np.float32)),
        "outside the range 1..100")
print("keep boxes: ok at n = 1, 10, 57, 100")

# 3. TopK: a k read from the data, a k computed from the shape
#    (min(n, 5)), and a constant k on an axis of run-time size.
m = build(save("topk_data", [h.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
               [h.make_tensor_value_info("x", T.FLOAT, [3, 10]),
                h.make_tensor_value_info("k", T.INT64, [1])],
               [h.make_tensor_value_info("v", T.FLOAT, [3, None]),
                h.make_tensor_value_info("i", T.INT64, [3, None])]))
x = rng.standard_normal((3, 10)).astype(np.float32)
for k in (0, 1, 4, 10):
    v, i = torch.topk(torch.from_numpy(x), k, dim=1)
    same(m(x, np.array([k], np.int64)), [v.numpy(), i.numpy()], f"topk k={k}")
for k in (-1, 11):
    refused(m, (x, np.array([k], np.int64)),
            "node 'TopK_0' (TopK, opset 13): graph input 'k' (input 1) must be in [0, 10]")
m = build(save("topk_shape",
               [h.make_node("Shape", ["x"], ["s"]),
                h.make_node("Gather", ["s", "zero"], ["n"], axis=0),
                h.make_node("Min", ["n", "five"], ["k"]),
                h.make_node("TopK", ["x", "k"], ["v", "i"], axis=0, largest=0)],
               [h.make_tensor_value_info("x", T.FLOAT, ["n", 8])],
               [h.make_tensor_value_info("v", T.FLOAT, [None, 8]),
                h.make_tensor_value_info("i", T.INT64, [None, 8])],
               [("zero", np.array([0], np.int64)), ("five", np.array([5], np.int64))]),
          dims={"n": (1, 20)})
for n in (1, 3, 5, 6, 20):
    x = rng.standard_normal((n, 8)).astype(np.float32)
    v, i = torch.topk(torch.from_numpy(x), min(n, 5), dim=0, largest=False)
    same(m(x), [v.numpy(), i.numpy()], f"topk min(n, 5) at n={n}")
m = build(save("topk_const", [h.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
               [h.make_tensor_value_info("x", T.FLOAT, [2, "n"])],
               [h.make_tensor_value_info("v", T.FLOAT, [2, 4]),
                h.make_tensor_value_info("i", T.INT64, [2, 4])],
               [("k", np.array([4], np.int64))]),
          dims={"n": (1, 30)})
for n in (4, 9, 30):
    x = rng.standard_normal((2, n)).astype(np.float32)
    v, i = torch.topk(torch.from_numpy(x), 4, dim=1)
    same(m(x), [v.numpy(), i.numpy()], f"topk 4 at n={n}")
refused(m, (np.zeros((2, 3), np.float32),), "k = 4 must be in [0, n] (the size of axis 1)")
print("topk: ok (k from the data, from the shape, constant on a run-time axis)")

# 4. Compress with a run-time condition longer than the axis, static and
#    at run-time sizes (n = 1..10 rows, a condition of m = 1..12 entries).
m = build(save("compress_static", [h.make_node("Compress", ["x", "c"], ["y"], axis=1)],
               [h.make_tensor_value_info("x", T.FLOAT, [3, 5]),
                h.make_tensor_value_info("c", T.BOOL, [7])],
               [h.make_tensor_value_info("y", T.FLOAT, [3, None])]))
x = rng.standard_normal((3, 5)).astype(np.float32)
for p in (0.0, 0.5, 1.0):
    c = rng.random(7) < p
    same(m(x, c), [np.compress(c[:5], x, axis=1)], f"compress p={p}")
m = build(save("compress_rows", [h.make_node("Compress", ["x", "c"], ["y"], axis=0)],
               [h.make_tensor_value_info("x", T.FLOAT, ["n", 4]),
                h.make_tensor_value_info("c", T.BOOL, ["m"])],
               [h.make_tensor_value_info("y", T.FLOAT, [None, 4])]),
          dims={"n": (1, 10), "m": (1, 12)})
for n, k in ((1, 1), (4, 12), (10, 3), (7, 7)):
    x = rng.standard_normal((n, 4)).astype(np.float32)
    c = rng.random(k) < 0.5
    same(m(x, c), [np.compress(c[:n], x[:k], axis=0)], f"compress rows n={n} m={k}")
print("compress: ok")

# 5. Unique, flattened (sorted) and of rows in order of first occurrence.
m = build(save("unique_flat", [h.make_node("Unique", ["x"], ["y", "i", "inv", "c"])],
               [h.make_tensor_value_info("x", T.FLOAT, [8])],
               [h.make_tensor_value_info(n, T.FLOAT if n == "y" else T.INT64, None)
                for n in ("y", "i", "inv", "c")], opset=11))
for x in (np.array([3, 1, 3, 2, 1, 5, 5, 0], np.float32), np.ones(8, np.float32),
          np.arange(8, dtype=np.float32)[::-1].copy()):
    same(m(x), np.unique(x, return_index=True, return_inverse=True, return_counts=True),
         f"unique {x}")
m = build(save("unique_rows",
               [h.make_node("Unique", ["x"], ["y", "i", "inv", "c"], axis=0, sorted=0)],
               [h.make_tensor_value_info("x", T.FLOAT, [6, 2])],
               [h.make_tensor_value_info(n, T.FLOAT if n == "y" else T.INT64, None)
                for n in ("y", "i", "inv", "c")], opset=11))
x = np.array([[1, 2], [3, 4], [1, 2], [0, 0], [3, 4], [1, 2]], np.float32)
same(m(x), [x[[0, 1, 3]], np.array([0, 1, 3]), np.array([0, 1, 0, 2, 1, 0]),
            np.array([3, 2, 1])], "unique rows")
print("unique: ok")

# 6. NonZero of an input at run-time sizes, and through kiln-run --test-data.
path = save("nonzero_rows", [h.make_node("NonZero", ["x"], ["y"])],
            [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
            [h.make_tensor_value_info("y", T.INT64, [2, None])])
m = build(path, dims={"n": (1, 16)})
for n, p in ((1, 0.0), (3, 0.3), (16, 1.0), (7, 0.5)):
    x = (rng.random((n, 4)) < p) * rng.standard_normal((n, 4)).astype(np.float32)
    x = x.astype(np.float32)
    same(m(x), [np.array(np.nonzero(x), np.int64)], f"nonzero n={n}")
data = os.path.join(work, "nonzero_data", "test_data_set_0")
os.makedirs(data, exist_ok=True)
x = np.zeros((5, 4), np.float32)
x[0, 1], x[3, 3], x[4, 0] = 1.0, -2.0, 0.5
with open(os.path.join(data, "input_0.pb"), "wb") as f:
    f.write(nh.from_array(x, "x").SerializeToString())
with open(os.path.join(data, "output_0.pb"), "wb") as f:
    f.write(nh.from_array(np.array(np.nonzero(x), np.int64), "y").SerializeToString())
out = subprocess.run([run_, path[:-5] + ".so", "--test-data", data], capture_output=True,
                     text=True)
assert out.returncode == 0 and "int64 [2,3]" in out.stdout, out.stdout + out.stderr
print("nonzero: ok at run-time sizes and through kiln-run --test-data")

# 7. The raw C ABI: no allocation in kiln_run whatever the count.
path = save("nonzero_static", [h.make_node("NonZero", ["x"], ["y"])],
            [h.make_tensor_value_info("x", T.FLOAT, [3, 5])],
            [h.make_tensor_value_info("y", T.INT64, [2, None])])
so = kiln.compile(path, output=path[:-5] + ".so")
here = os.path.dirname(os.path.abspath(__file__))
include = os.path.join(here, "..", "..", "runtime", "include")
driver = os.path.join(work, "driver")
subprocess.run([os.environ.get("CC", "cc"), "-O1", "-I", include, "-o", driver,
                os.path.join(here, "data_dependent_driver.c"), "-ldl"], check=True)
subprocess.run([driver, so], check=True)

# 8. --target=cuda compiles static shapes only, and says which node.
out = subprocess.run([compile_, path, "--target=cuda", "-o", os.path.join(work, "cuda.so")],
                     capture_output=True, text=True)
assert out.returncode != 0, out.stderr
assert ("--target=cuda compiles static shapes only; node 'NonZero_0' (NonZero, opset 13) "
        "gives a tensor whose size depends on the data") in out.stderr, out.stderr
print("data-dependent sizes: ok")
