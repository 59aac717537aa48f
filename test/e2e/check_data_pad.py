#!/usr/bin/python3
"""Pad of an axis whose size is read from the data (docs/shapes.md, "Sizes
that depend on the data"): a detector's post-processing keeps the boxes a
NonZero selects and pads them to a fixed count, `max - k` rows computed
from the kept tensor's Shape, so the kept axis may be empty at run time.

- constant mode (before and after): empty, partial and full selections all
  give the fixed-size result, against numpy.pad;
- edge, reflect and wrap modes: the same against numpy.pad where the axis is
  not empty; an empty axis is refused at run time with KILN_INVALID_ARGUMENT
  naming the node (there is nothing to repeat), and the next call runs;
- the same models at opset 19 with `axes`, and wrap mode (new in 19).

Results compare exactly (Pad copies values).

usage: check_data_pad.py KILN_COMPILE WORKDIR PYTHONPATH
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
MAX = 8


def model(mode, where, opset):
    """x [n, 4] -> the rows whose first value is positive, padded by
    MAX - k rows `where` ("before" or "after")."""
    c = lambda name, v: nh.from_array(np.array(v, np.int64), name)  # noqa: E731
    pads = ["rest", "z", "z", "z"] if where == "before" else ["z", "z", "rest", "z"]
    nodes = [
        h.make_node("Gather", ["x", "zero"], ["col0"], axis=1),
        h.make_node("Greater", ["col0", "thr"], ["mask"]),
        h.make_node("NonZero", ["mask"], ["nz"]),
        h.make_node("Squeeze", ["nz", "zax"], ["idx"]),
        h.make_node("Gather", ["x", "idx"], ["kept"], axis=0),
        h.make_node("Shape", ["kept"], ["ks"]),
        h.make_node("Slice", ["ks", "s0", "s1"], ["k"]),
        h.make_node("Sub", ["max", "k"], ["rest"]),
    ]
    inits = [c("zero", 0), nh.from_array(np.float32(0), "thr"), c("zax", [0]),
             c("s0", [0]), c("s1", [1]), c("max", [MAX]), c("z", [0])]
    if opset >= 18:
        # Only axis 0, given by `axes`.
        nodes.append(h.make_node("Concat", [pads[0], pads[2]], ["pads"], axis=0))
        nodes.append(h.make_node("Pad", ["kept", "pads", "", "axes"], ["y"],
                                 name="pad", mode=mode))
        inits.append(c("axes", [0]))
    else:
        nodes.append(h.make_node("Concat", pads, ["pads"], axis=0))
        nodes.append(h.make_node("Pad", ["kept", "pads"], ["y"], name="pad",
                                 mode=mode))
    graph = h.make_graph(nodes, f"pad_{mode}_{where}",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                         inits)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    path = os.path.join(work, f"pad_{mode}_{where}_{opset}.onnx")
    onnx.save(m, path)
    so = path[:-5] + ".so"
    r = subprocess.run([compile_, path, "-o", so, "--dim", "n=1..8"],
                       capture_output=True, text=True)
    assert r.returncode == 0, (path, r.stderr)
    return kiln.load(so)


def sample(n, kept):
    x = rng.standard_normal((n, 4)).astype(np.float32)
    x[:, 0] = -np.abs(x[:, 0]) - 0.1
    chosen = rng.choice(n, kept, replace=False)
    x[chosen, 0] = np.abs(x[chosen, 0]) + 0.1
    return x


NP_MODE = {"constant": "constant", "edge": "edge", "reflect": "reflect",
           "wrap": "wrap"}
for opset in (13, 19):
    for mode in ("constant", "edge", "reflect", "wrap"):
        for where in ("before", "after"):
            if mode == "wrap" and opset < 19:
                continue
            m = model(mode, where, opset)
            ran = refused = 0
            for n in (1, 3, 8):
                for kept in sorted({0, 1, min(2, n), n}):
                    x = sample(n, kept)
                    k = x[x[:, 0] > 0]
                    amount = [(MAX - len(k), 0) if where == "before"
                              else (0, MAX - len(k)), (0, 0)]
                    if len(k) == 0 and mode != "constant":
                        try:
                            m(x)
                            raise AssertionError(f"{mode}: empty axis ran")
                        except kiln.Error as e:
                            assert "node 'pad' (Pad" in str(e), e
                            assert "empty at run time" in str(e), e
                            refused += 1
                        continue
                    if mode == "reflect" and len(k) < 2:
                        continue  # numpy repeats one row; ONNX leaves it open
                    got = m(x)[0]
                    want = np.pad(k, amount, mode=NP_MODE[mode])
                    assert got.shape == (MAX, 4), (mode, where, n, kept, got.shape)
                    assert np.array_equal(got, want), (mode, where, n, kept)
                    ran += 1
            print(f"opset {opset} Pad {mode} {where}: {ran} selections match, "
                  f"{refused} empty ones refused")
print("data pad: all match")
