#!/usr/bin/python3
"""Sizes computed in floating point from a static input's shape fold.

Usage: check_computed_padding.py KILN_COMPILE KILN_RUN WORKDIR

torchvision's detection models (GeneralizedRCNNTransform, SSD) pad a batch
of images to ceil(max side / 32) * 32: exported, that is Shape, a Cast to
float, ReduceMax, Div, Ceil, Mul and a Cast back to int64, feeding Pad's
`pads`. With the input's size static every value is a constant, and the Pad
must compile to the same numbers as numpy. Before these folds Kiln refused
the Pad ("pads must be a compile-time constant"). The model also takes a
Floor, a Round, a Neg, an Abs and a ReduceProd of the shape on the way, and
reshapes by the product.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh


def const(name, value):
    return h.make_node("Constant", [], [name], value=nh.from_array(np.array(value), name))


def model(shape):
    nodes = [
        h.make_node("Shape", ["x"], ["shape"]),
        const("hw_at", np.array([2, 3], np.int64)),
        h.make_node("Gather", ["shape", "hw_at"], ["hw"], axis=0),
        h.make_node("Cast", ["hw"], ["hw_f"], to=TensorProto.FLOAT),
        h.make_node("ReduceMax", ["hw_f"], ["side"], keepdims=0),
        const("stride", np.array(32.0, np.float32)),
        h.make_node("Div", ["side", "stride"], ["blocks"]),
        h.make_node("Ceil", ["blocks"], ["blocks_up"]),
        h.make_node("Mul", ["blocks_up", "stride"], ["padded_f"]),
        h.make_node("Cast", ["padded_f"], ["padded"], to=TensorProto.INT64),
        h.make_node("Sub", ["padded", "hw"], ["after"]),
        # Zero pads before, computed the long way: Floor(Round(0.4)) * -|x|.
        const("small", np.array([0.4, -0.4], np.float32)),
        h.make_node("Round", ["small"], ["rounded"]),
        h.make_node("Floor", ["rounded"], ["floored"]),
        h.make_node("Abs", ["floored"], ["abs"]),
        h.make_node("Neg", ["abs"], ["neg"]),
        h.make_node("Cast", ["neg"], ["before"], to=TensorProto.INT64),
        const("zeros2", np.zeros(2, np.int64)),
        h.make_node("Concat", ["zeros2", "before", "zeros2", "after"], ["pads"], axis=0),
        const("value", np.array(0.5, np.float32)),
        h.make_node("Pad", ["x", "pads", "value"], ["padded_x"], mode="constant"),
        # Flatten each image by the product of its padded sides.
        h.make_node("Shape", ["padded_x"], ["pshape"]),
        const("two", np.array([2], np.int64)),
        const("four", np.array([4], np.int64)),
        const("zero", np.array([0], np.int64)),
        h.make_node("Slice", ["pshape", "two", "four", "zero"], ["phw"]),
        h.make_node("ReduceProd", ["phw"], ["area"], keepdims=1),
        h.make_node("Slice", ["pshape", "zero", "two", "zero"], ["nc"]),
        h.make_node("Concat", ["nc", "area"], ["flat_shape"], axis=0),
        h.make_node("Reshape", ["padded_x", "flat_shape"], ["y"]),
    ]
    graph = h.make_graph(
        nodes, "computed_padding",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def reference(x):
    n, c, hh, ww = x.shape
    side = int(np.ceil(max(hh, ww) / 32.0) * 32)
    out = np.full((n, c, side, side), 0.5, np.float32)
    out[:, :, :hh, :ww] = x
    return out.reshape(n, c, side * side)


def main():
    compile_, run, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    ok = True
    rng = np.random.default_rng(0)
    for shape in [(1, 3, 300, 250), (2, 1, 64, 65), (1, 2, 17, 96)]:
        name = "x".join(map(str, shape))
        d = os.path.join(work, name)
        data = os.path.join(d, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        onnx.save(model(shape), path)
        x = rng.standard_normal(shape).astype(np.float32)
        with open(os.path.join(data, "input_0.pb"), "wb") as f:
            f.write(nh.from_array(x, "x").SerializeToString())
        with open(os.path.join(data, "output_0.pb"), "wb") as f:
            f.write(nh.from_array(reference(x), "y").SerializeToString())
        so = os.path.join(d, "model.so")
        c = subprocess.run([compile_, path, "-o", so], capture_output=True, text=True)
        if c.returncode != 0:
            print(f"FAIL {name}: kiln-compile exited {c.returncode}:\n{c.stderr}")
            ok = False
            continue
        # Padding only moves values: exact.
        r = subprocess.run([run, so, "--test-data", data, "--rtol", "0", "--atol", "0"],
                           capture_output=True, text=True)
        print(f"{'ok' if r.returncode == 0 else 'FAIL'} {name}: {r.stdout.strip()[-200:]}")
        ok &= r.returncode == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
