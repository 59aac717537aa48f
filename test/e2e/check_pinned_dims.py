#!/usr/bin/python3
"""Exports that declare every dimension symbolic, channels and feature sizes
too (tf2onnx's `unk__` dims, dynamic_axes on every axis): where a weight fixes
a dimension (a Conv's or ConvTranspose's channels, BatchNormalization's and
InstanceNormalization's scale, an LSTM's input size, a PRelu slope), Kiln
takes it at that size and checks it at run time (docs/shapes.md).

- a Conv, BatchNormalization, PRelu, ConvTranspose, InstanceNormalization
  chain on [N, C, H, W], all four symbolic, against torch in float64 at
  three shapes (rtol 1e-4, atol 1e-4: f32 sums of at most 72 products);
- an LSTM over [T, N, I], all symbolic, against torch (same tolerance);
- a call with the wrong channel count or input size fails with
  KILN_INVALID_ARGUMENT naming the node and the size, and the next call
  runs;
- a range that excludes the fixed size is refused at compile time;
- the same inside an If's branches (real branches, where the axis is read
  through clamped indices so a wrong size reads in bounds);
- cheap If branches, inlined to run whether taken or not: each branch's
  size is checked only when it is taken;
- a Reshape to [b, t, 4, -1] of a [b, t, d] with d symbolic, exact, and a
  d that 4 does not divide refused at run time;
- the ConvTranspose's height may be 0 (`--dim H=0..8`): a call at height 0
  fails naming the node, the others run.

usage: check_pinned_dims.py KILN_COMPILE WORKDIR PYTHONPATH
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
F = np.float32


def compile_model(name, nodes, inputs, inits, dims, expect_ok=True):
    graph = h.make_graph(nodes, name, inputs,
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                         [nh.from_array(v, k) for k, v in inits.items()])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    path = os.path.join(work, name + ".onnx")
    onnx.save(m, path)
    so = path[:-5] + ".so"
    args = [compile_, path, "-o", so]
    for d, r in dims.items():
        args += ["--dim", f"{d}={r}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if not expect_ok:
        assert r.returncode != 0, f"{name}: compiled with {dims}"
        return r.stderr
    assert r.returncode == 0, (name, r.stderr)
    return kiln.load(so)


def refused(call, *needles):
    try:
        call()
    except kiln.Error as e:
        for n in needles:
            assert n in str(e), (n, str(e))
        return
    raise AssertionError(f"ran: {needles}")


# Conv -> BatchNorm -> PRelu -> ConvTranspose -> InstanceNorm.
w = rng.standard_normal((8, 3, 3, 3)).astype(F) * 0.3
cb = rng.standard_normal(8).astype(F)
bn = [(rng.random(8) + 0.5).astype(F) for _ in range(4)]
slope = rng.standard_normal((8, 1, 1)).astype(F)
wt = rng.standard_normal((8, 4, 2, 2)).astype(F) * 0.3
ins, inb = rng.standard_normal(4).astype(F), rng.standard_normal(4).astype(F)
nodes = [
    h.make_node("Conv", ["x", "w", "cb"], ["c"], name="conv", pads=[1, 1, 1, 1]),
    h.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"], name="bn"),
    h.make_node("PRelu", ["n", "slope"], ["p"], name="prelu"),
    h.make_node("ConvTranspose", ["p", "wt"], ["t"], name="up", strides=[2, 2]),
    h.make_node("InstanceNormalization", ["t", "ins", "inb"], ["y"], name="inorm"),
]
inits = {"w": w, "cb": cb, "s": bn[0], "b": bn[1], "m": bn[2], "v": bn[3],
         "slope": slope, "wt": wt, "ins": ins, "inb": inb}
x_info = [h.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "C", "H", "W"])]


def reference(x):
    t = torch.from_numpy(x.astype(np.float64))
    d = lambda a: torch.from_numpy(a.astype(np.float64))  # noqa: E731
    y = torch.nn.functional.conv2d(t, d(w), d(cb), padding=1)
    y = torch.nn.functional.batch_norm(y, d(bn[2]), d(bn[3]), d(bn[0]), d(bn[1]),
                                       eps=1e-5)
    y = torch.where(y >= 0, y, y * d(slope))
    y = torch.nn.functional.conv_transpose2d(y, d(wt), stride=2)
    y = torch.nn.functional.instance_norm(y, weight=d(ins), bias=d(inb), eps=1e-5)
    return y.numpy()


m = compile_model("chain", nodes, x_info, inits,
                  {"N": "1..2", "C": "1..8", "H": "1..12", "W": "1..12"})
for shape in [(1, 3, 1, 1), (2, 3, 5, 7), (1, 3, 12, 12)]:
    x = rng.standard_normal(shape).astype(F)
    (y,) = m(x)
    want = reference(x)
    assert y.shape == want.shape, (shape, y.shape, want.shape)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
refused(lambda: m(rng.standard_normal((1, 4, 5, 5)).astype(F)),
        "node 'conv' (Conv", "dimension 1 to be 3")
(y,) = m(np.ones((1, 3, 2, 2), F))  # the run after a refusal
np.testing.assert_allclose(y, reference(np.ones((1, 3, 2, 2), F)), rtol=1e-4, atol=1e-4)
print("conv chain: 3 shapes match torch, a wrong channel count is refused")

err = compile_model("chain_out_of_range", nodes, x_info, inits,
                    {"N": "1..2", "C": "4..8", "H": "1..12", "W": "1..12"},
                    expect_ok=False)
assert "node 'conv' (Conv" in err and "differ at every size in range" in err, err
print("a range without the filter's channel count is refused at compile time")

# An axis that may be empty before the ConvTranspose.
m = compile_model("chain_empty", nodes, x_info, inits,
                  {"N": "1..2", "C": "3", "H": "0..8", "W": "1..8"})
(y,) = m(np.ones((1, 3, 3, 4), F))
np.testing.assert_allclose(y, reference(np.ones((1, 3, 3, 4), F)), rtol=1e-4, atol=1e-4)
refused(lambda: m(np.ones((1, 3, 0, 4), F)), "node 'up' (ConvTranspose",
        "input dimension 2 is empty")
print("ConvTranspose of an axis that may be empty: runs at 3, refused at 0")

# Inside an If's branches (run as real branches: each holds a Conv), where
# a failed guard does not end the body: the channels are read through
# indices clamped to their run-time count, so a wrong count reads in bounds
# and the run fails.
w2 = rng.standard_normal((8, 3, 3, 3)).astype(F) * 0.3


def branch(p, wv):
    return h.make_graph(
        [h.make_node("Conv", ["x", p + "w"], [p + "y"], name=p + "conv", pads=[1, 1, 1, 1])],
        p, [], [h.make_tensor_value_info(p + "y", TensorProto.FLOAT, None)],
        [nh.from_array(wv, p + "w")])


m = compile_model(
    "if_conv",
    [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
     h.make_node("Greater", ["s", "zero"], ["c"]),
     h.make_node("If", ["c"], ["y"], name="if", then_branch=branch("t", w),
                 else_branch=branch("e", w2))],
    x_info, {"zero": np.float32(0)}, {"N": "1..2", "C": "2..4", "H": "1..8", "W": "1..8"})
for shape in [(1, 3, 4, 5), (2, 3, 8, 8)]:
    for sign in (1, -1):
        x = (np.abs(rng.standard_normal(shape)) * sign).astype(F)
        (y,) = m(x)
        want = torch.nn.functional.conv2d(
            torch.from_numpy(x.astype(np.float64)),
            torch.from_numpy((w if sign > 0 else w2).astype(np.float64)), padding=1).numpy()
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
for c in (2, 4):
    refused(lambda: m(np.ones((1, c, 3, 3), F)), "node 'tconv' (Conv",
            "dimension 1 to be 3")
print("If branches: 4 runs match torch, channel counts 2 and 4 are refused")

# Cheap branches, which Kiln inlines to run whether or not they are taken:
# each guard holds only when its branch is taken, so a channel count that
# suits only the other branch runs, and one that suits neither is refused.
def cheap(p, node):
    return h.make_graph([node], p, [], [h.make_tensor_value_info(p + "y", TensorProto.FLOAT, None)])


slope4 = rng.standard_normal((4, 1, 1)).astype(F)
m = compile_model(
    "if_cheap",
    [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
     h.make_node("Greater", ["s", "zero"], ["c"]),
     h.make_node("If", ["c"], ["y"], name="if",
                 then_branch=cheap("t", h.make_node("BatchNormalization", ["x", "s3", "b3", "m3", "v3"],
                                                    ["ty"], name="tbn")),
                 else_branch=cheap("e", h.make_node("PRelu", ["x", "slope4"], ["ey"], name="eprelu")))],
    x_info, {"zero": np.float32(0), "s3": bn[0][:3], "b3": bn[1][:3], "m3": bn[2][:3],
             "v3": bn[3][:3], "slope4": slope4},
    {"N": "1..2", "C": "1..8", "H": "1..8", "W": "1..8"})
for shape, sign in [((1, 3, 4, 5), 1), ((2, 4, 3, 2), -1), ((1, 3, 1, 1), 1)]:
    x = (np.abs(rng.standard_normal(shape)) * sign).astype(F)
    (y,) = m(x)
    t = torch.from_numpy(x.astype(np.float64))
    d = lambda a: torch.from_numpy(a[:3].astype(np.float64))  # noqa: E731
    want = (torch.nn.functional.batch_norm(t, d(bn[2]), d(bn[3]), d(bn[0]), d(bn[1]), eps=1e-5)
            if sign > 0 else torch.where(t >= 0, t, t * torch.from_numpy(slope4.astype(np.float64))))
    assert y.shape == tuple(want.shape), (shape, y.shape)
    np.testing.assert_allclose(y, want.numpy(), rtol=1e-4, atol=1e-4)
refused(lambda: m(np.ones((1, 4, 2, 2), F)), "node 'tbn' (BatchNormalization",
        "dimension 1 to be 3")
refused(lambda: m(-np.ones((1, 3, 2, 2), F)), "node 'eprelu' (PRelu", "to be 4")
(y,) = m(-np.ones((1, 4, 2, 2), F))
np.testing.assert_allclose(y, -np.ones((1, 4, 2, 2)) * slope4, rtol=1e-6)
print("cheap If branches: 3 runs match torch, each branch's count is needed "
      "only when it is taken")

# LSTM over [T, N, I].
hidden, isz = 6, 5
W = rng.standard_normal((1, 4 * hidden, isz)).astype(F) * 0.3
R = rng.standard_normal((1, 4 * hidden, hidden)).astype(F) * 0.3
B = rng.standard_normal((1, 8 * hidden)).astype(F) * 0.1
m = compile_model(
    "lstm", [h.make_node("LSTM", ["x", "W", "R", "B"], ["y"], name="lstm",
                         hidden_size=hidden)],
    [h.make_tensor_value_info("x", TensorProto.FLOAT, ["T", "N", "I"])],
    {"W": W, "R": R, "B": B}, {"T": "1..16", "N": "1..4", "I": "1..8"})
ref = torch.nn.LSTM(isz, hidden).double()
with torch.no_grad():  # ONNX gates i, o, f, c; torch's i, f, c, o
    order = np.concatenate([np.arange(0, 6), np.arange(12, 18), np.arange(18, 24),
                            np.arange(6, 12)])
    ref.weight_ih_l0.copy_(torch.from_numpy(W[0][order].astype(np.float64)))
    ref.weight_hh_l0.copy_(torch.from_numpy(R[0][order].astype(np.float64)))
    ref.bias_ih_l0.copy_(torch.from_numpy(B[0, :24][order].astype(np.float64)))
    ref.bias_hh_l0.copy_(torch.from_numpy(B[0, 24:][order].astype(np.float64)))
for t, n in [(1, 1), (7, 3), (16, 4)]:
    x = rng.standard_normal((t, n, isz)).astype(F)
    (y,) = m(x)
    with torch.no_grad():
        want = ref(torch.from_numpy(x.astype(np.float64)))[0].numpy()
    np.testing.assert_allclose(y, want[:, None], rtol=1e-4, atol=1e-4)
refused(lambda: m(rng.standard_normal((3, 1, 4)).astype(F)),
        "node 'lstm' (LSTM", "dimension 2 to be 5")
print("LSTM: 3 shapes match torch, a wrong input size is refused")
# view(b, t, heads, -1) of a symbolic width d: the last size is d // 4,
# guarded at run time that 4 divides d (exact, a copy of the values).
m = compile_model(
    "heads",
    [h.make_node("Shape", ["x"], ["shape"]),
     h.make_node("Slice", ["shape", "i0", "i2"], ["bt"]),
     h.make_node("Concat", ["bt", "tail"], ["target"], axis=0),
     h.make_node("Reshape", ["x", "target"], ["r"], name="heads"),
     h.make_node("Transpose", ["r"], ["y"], perm=[0, 2, 1, 3])],
    [h.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "t", "d"])],
    {"i0": np.array([0], np.int64), "i2": np.array([2], np.int64),
     "tail": np.array([4, -1], np.int64)},
    {"b": "1..2", "t": "1..8", "d": "4..64"})
for shape in [(1, 1, 4), (2, 3, 12), (2, 8, 64)]:
    x = rng.standard_normal(shape).astype(F)
    (y,) = m(x)
    assert np.array_equal(y, x.reshape(shape[0], shape[1], 4, -1).transpose(0, 2, 1, 3))
refused(lambda: m(np.ones((1, 2, 6), F)), "node 'heads' (Reshape", "differ at these input sizes")
print("Reshape to heads of a symbolic width: 3 shapes exact, a width of 6 refused")
print("pinned dims: all match")
