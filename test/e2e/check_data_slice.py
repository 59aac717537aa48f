#!/usr/bin/python3
"""Slices whose starts and ends are read from the data (docs/shapes.md, "Sizes
that depend on the data"): the sliced axis has a run-time size, at most the
input's, planned at that bound.

- a torch model that trims a padded batch to its longest sequence
  (`x[:, :lengths.max()]`, then Linear and a softmax over the kept steps),
  exported with a symbolic batch and length, against torch at several shapes;
- a window `x[s:e]` and its reverse `x[e-1:s-1:-1]`, with (s, e) an int64
  input, on a static and on a symbolic input: ONNX's clamping of negative,
  out-of-range and INT64_MIN/INT64_MAX bounds against numpy, in int64
  arithmetic as ONNX Runtime computes it; empty windows included;
- axes read from the data are refused naming the node.

Floats compare within rtol 1e-5, atol 1e-6 (float64 references).

usage: check_data_slice.py KILN_COMPILE WORKDIR PYTHONPATH
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper as h, numpy_helper as nh

compile_, work, pythonpath = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

rng = np.random.default_rng(0)
F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def compile_model(path, flags=()):
    so = path[:-len(".onnx")] + ".so"
    r = subprocess.run([compile_, path, "-o", so] + list(flags),
                       capture_output=True, text=True)
    assert r.returncode == 0, (path, r.stderr)
    # A static input notes its data-decided sizes; a symbolic one, the graph
    # compiled for run-time sizes.
    note = "depend on the data" if not flags else "sizes given at run time"
    assert note in r.stderr, r.stderr
    return kiln.load(so)


# 1. Trim a padded batch to its longest sequence.
class Trim(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(6, 4)

    def forward(self, x, lengths):
        kept = x[:, :lengths.max()]
        return torch.softmax(self.proj(kept), dim=1)


torch.manual_seed(0)
trim = Trim().eval()
path = os.path.join(work, "trim.onnx")
torch.onnx.export(trim, (torch.randn(2, 9, 6), torch.tensor([3, 5])), path,
                  input_names=["x", "lengths"], output_names=["y"],
                  dynamic_axes={"x": {0: "b", 1: "t"}, "lengths": {0: "b"}},
                  opset_version=17)
m = compile_model(path, ["--dim", "b=1..4", "--dim", "t=1..50"])
cases = [(1, 1, [1]), (4, 50, [50, 3, 1, 7]), (3, 17, [0, 2, 5]),
         (2, 9, [0, 0]), (2, 30, [12, 30])]
for b, t, lengths in cases:
    x = rng.standard_normal((b, t, 6)).astype(np.float32)
    n = np.array(lengths, np.int64)
    with torch.no_grad():
        want = trim.double()(torch.from_numpy(x).double(),
                             torch.from_numpy(n)).numpy()
    got = m(x, n)[0]
    assert got.shape == want.shape, (b, t, lengths, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                               err_msg=f"trim at {b}x{t} {lengths}")
print(f"trim to the longest length: {len(cases)} shapes match torch")


# 2. A window and its reverse, bounds from an int64 input.
def window_model(name, x_shape):
    w = rng.standard_normal((8, 5)).astype(np.float32)
    nodes = [
        h.make_node("Slice", ["pos", "z", "one"], ["s"], name="start"),
        h.make_node("Slice", ["pos", "one", "two"], ["e"], name="end"),
        h.make_node("Slice", ["x", "s", "e", "z"], ["xs"], name="window"),
        h.make_node("MatMul", ["xs", "w"], ["p"], name="proj"),
        h.make_node("Softmax", ["p"], ["y"], name="softmax", axis=0),
        h.make_node("Sub", ["e", "one"], ["rs"], name="rstart"),
        h.make_node("Sub", ["s", "one"], ["re"], name="rend"),
        h.make_node("Slice", ["x", "rs", "re", "z", "minus"], ["r"],
                    name="reversed")]
    inits = [nh.from_array(np.array([v], np.int64), n)
             for n, v in [("z", 0), ("one", 1), ("two", 2), ("minus", -1)]]
    graph = h.make_graph(
        nodes, name, [h.make_tensor_value_info("x", F32, x_shape),
                      h.make_tensor_value_info("pos", I64, [2])],
        [h.make_tensor_value_info("y", F32, None),
         h.make_tensor_value_info("r", F32, None)],
        inits + [nh.from_array(w, "w")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    return path, w.astype(np.float64)


def onnx_reverse_window(x, start, end):
    """ONNX Slice with step -1: start clamped into [0, T-1], end into
    [-1, T-1] after negatives count from the end."""
    t = x.shape[0]
    a = start + t if start < 0 else start
    a = min(max(a, 0), t - 1)
    b = end + t if end < 0 else end
    b = min(max(b, -1), t - 1)
    return x[a:b:-1] if b >= 0 else x[a::-1] if a > b else x[:0]


def window_reference(x, pos, w):
    s, e = int(pos[0]), int(pos[1])
    p = x[slice(s, e)].astype(np.float64) @ w  # step 1: Python's clamping
    if p.size:
        p = np.exp(p - p.max(0, keepdims=True))
        p /= p.sum(0, keepdims=True)
    with np.errstate(over="ignore"):  # int64 wraps, as in the model's Sub
        rs, re = int(pos[1] - np.int64(1)), int(pos[0] - np.int64(1))
    return p, onnx_reverse_window(x, rs, re)


big = np.iinfo(np.int64)
for name, x_shape, flags, lengths in [
        ("window_static", [20, 8], [], [20]),
        ("window_symbolic", ["t", 8], ["--dim", "t=1..40"], [1, 40, 13])]:
    path, w = window_model(name, x_shape)
    m = compile_model(path, flags)
    runs = 0
    for t in lengths:
        for pos in [(0, t), (2, 5), (5, 2), (-3, -1), (0, 0), (-100, 100),
                    (big.min, big.max), (t - 1, t), (3, 3), (-t, 2 * t)]:
            x = rng.standard_normal((t, 8)).astype(np.float32)
            p = np.array(pos, np.int64)
            got_y, got_r = m(x, p)
            want_y, want_r = window_reference(x, p, w)
            assert got_y.shape == want_y.shape, (name, t, pos, got_y.shape)
            assert got_r.shape == want_r.shape, (name, t, pos, got_r.shape)
            np.testing.assert_allclose(got_y, want_y, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} {t} {pos}")
            np.testing.assert_array_equal(got_r, want_r,
                                          err_msg=f"{name} {t} {pos} reverse")
            runs += 1
    print(f"{name}: {runs} windows match numpy")

# 3. Axes read from the data: every axis might be sliced; refused.
graph = h.make_graph(
    [h.make_node("Slice", ["x", "s", "e", "axes"], ["y"], name="dataaxes")],
    "dataaxes", [h.make_tensor_value_info("x", F32, ["t", 4]),
                 h.make_tensor_value_info("s", I64, [1]),
                 h.make_tensor_value_info("e", I64, [1]),
                 h.make_tensor_value_info("axes", I64, [1])],
    [h.make_tensor_value_info("y", F32, None)])
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
model.ir_version = 8
path = os.path.join(work, "dataaxes.onnx")
onnx.save(model, path)
r = subprocess.run([compile_, path, "-o", path[:-5] + ".so", "--dim",
                    "t=1..8"], capture_output=True, text=True)
assert r.returncode == 1, (r.returncode, r.stderr)
assert "node 'dataaxes' (Slice, opset 13): axes must be a constant" in \
    r.stderr, r.stderr
print("axes read from the data: refused naming the node")
print("data slices: all match")
