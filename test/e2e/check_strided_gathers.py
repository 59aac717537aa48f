#!/usr/bin/python3
"""Element gathers (edge and reflect Pad, Gather, nearest Resize) that read a
tensor held in a strided or partial view of a larger buffer: a Slice with a
step or a box of columns feeding them (docs/passes.md,
`-kiln-cpu-restride-gathers`). Before that pass the vectorized gathers read
such views as if they were contiguous: silent wrong numbers (found by
bench/fuzz/models.py), and a 1-D strided source failed to compile. A
pooling of every other channel crashed the compiler.

Each model is compiled and compared with numpy exactly (the ops only move
values), on static inputs and on a symbolic length at several sizes.

usage: check_strided_gathers.py KILN_COMPILE WORKDIR PYTHONPATH
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

compile_, work, pythonpath = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

rng = np.random.default_rng(0)
F32 = TensorProto.FLOAT


def ints(name, values):
    return nh.from_array(np.array(values, np.int64), name)


def sliced(axis, start, end, step):
    """A Slice node of x to xs and its constant inputs."""
    node = h.make_node("Slice", ["x", "s", "e", "a", "st"], ["xs"], name="slice")
    return node, [ints("s", [start]), ints("e", [end]), ints("a", [axis]),
                  ints("st", [step])]


def numpy_slice(x, axis, start, end, step):
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, end if end < 2 ** 40 else None, step)
    return x[tuple(index)]


def compile_and_load(name, nodes, inits, x_shape, flags=()):
    graph = h.make_graph(nodes, name, [h.make_tensor_value_info("x", F32, x_shape)],
                         [h.make_tensor_value_info("y", F32, None)], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    model.ir_version = 8
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    so = os.path.join(work, name + ".so")
    r = subprocess.run([compile_, path, "-o", so] + list(flags),
                       capture_output=True, text=True)
    assert r.returncode == 0, (name, r.stderr)
    return kiln.load(so)


def check(name, m, shapes, reference):
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        got, want = m(x)[0], reference(x)
        assert got.shape == want.shape, (name, shape, got.shape, want.shape)
        assert np.array_equal(got, want), (name, shape)
    print(f"{name}: {len(shapes)} shape(s) match numpy")


# Pads of a strided slice: (x shape, slice, pads, mode).
pads_cases = [
    ("rows_edge", [11, 5], (0, 0, 2 ** 62, 2), [0, 1, 0, 2], "edge"),
    ("rows_edge_before", [11, 5], (0, 0, 2 ** 62, 2), [0, 1, 0, 0], "edge"),
    ("middle_reflect", [1, 11, 5], (1, 0, 2 ** 62, 2), [0, 1, 1, 0, 1, 1],
     "reflect"),
    ("vector_edge", [11], (0, 0, 2 ** 62, 3), [2, 1], "edge"),
    ("reversed_edge", [7, 6], (1, -1, -2 ** 62, -2), [1, 2, 0, 1], "edge"),
]
for name, shape, (axis, start, end, step), pads, mode in pads_cases:
    node, inits = sliced(axis, start, end, step)
    m = compile_and_load(
        name, [node, h.make_node("Pad", ["xs", "p"], ["y"], name="pad", mode=mode)],
        inits + [ints("p", pads)], shape)
    rank = len(shape)
    widths = [(pads[i], pads[i + rank]) for i in range(rank)]
    check(name, m, [shape],
          lambda x: np.pad(numpy_slice(x, axis, start, end, step), widths, mode=mode))

# A box of columns 1..3 of a 4x5 input, then a Gather of its columns.
node, inits = sliced(1, 1, 4, 1)
m = compile_and_load(
    "columns_gather",
    [node, h.make_node("Gather", ["xs", "i"], ["y"], name="gather", axis=1)],
    inits + [ints("i", [2, 0, 1, 2, -1])], [4, 5])
check("columns_gather", m, [[4, 5]], lambda x: x[:, 1:4][:, [2, 0, 1, 2, -1]])

# Every other row of an image, then a nearest 2x Resize.
node, inits = sliced(2, 0, 2 ** 62, 2)
m = compile_and_load(
    "rows_resize",
    [node, h.make_node("Resize", ["xs", "", "sc"], ["y"], name="resize",
                       mode="nearest")],
    inits + [nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc")],
    [1, 3, 9, 8])
check("rows_resize", m, [[1, 3, 9, 8]],
      lambda x: x[:, :, ::2].repeat(2, axis=2).repeat(2, axis=3))

# A symbolic length: every other row, edge-padded.
node, inits = sliced(0, 0, 2 ** 62, 2)
m = compile_and_load(
    "symbolic_rows_edge",
    [node, h.make_node("Pad", ["xs", "p"], ["y"], name="pad", mode="edge")],
    inits + [ints("p", [1, 1, 0, 2])], ["t", 5], ["--dim", "t=1..40"])
check("symbolic_rows_edge", m, [[1, 5], [40, 5], [13, 5], [2, 5]],
      lambda x: np.pad(x[::2], [(1, 0), (1, 2)], mode="edge"))
# Every other channel of [2, 2, 128, 16], then a 2x2 pooling: the pool's
# tiles read rows of a view whose two leading strides are equal (the step
# doubles the channel stride), which crashed expand-strided-metadata
# (docs/passes.md, -kiln-expand-shapes-by-strides; bench/fuzz/models.py
# --attention seed 40418).
def pooled(x, op):
    w = [x[:, :, i:i + x.shape[2] - 1, j:j + x.shape[3] - 1]
         for i in (0, 1) for j in (0, 1)]
    return np.maximum.reduce(w) if op == "MaxPool" else sum(w) / np.float32(4)


for op in ("AveragePool", "MaxPool"):
    node, inits = sliced(1, 0, 2 ** 62, 2)
    m = compile_and_load(
        f"channels_{op}", [node, h.make_node(op, ["xs"], ["y"], name="pool",
                                             kernel_shape=[2, 2])],
        inits, [2, 2, 128, 16])
    x = rng.standard_normal([2, 2, 128, 16]).astype(np.float32)
    got, want = m(x)[0], pooled(x[:, ::2], op)
    assert got.shape == want.shape, (op, got.shape, want.shape)
    # The average's sum may be taken in another order: 1e-6 relative.
    assert np.allclose(got, want, rtol=1e-6, atol=1e-6), (op, np.abs(got - want).max())
    print(f"channels_{op}: matches numpy")
print("strided gathers: all match")
