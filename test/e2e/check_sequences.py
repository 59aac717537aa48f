#!/usr/bin/python3
"""Sequences and optionals in straight-line code (docs/ops.md, Sequences.cpp
and Optional.cpp), the way scripted models write `x.split(n)`, `parts[i]`,
`len(parts)`, `torch.stack(parts)` and `if state is None`, compiled and run
against numpy, exactly (only slices, concatenations and selections); and
what is refused, by name.

usage: check_sequences.py WORKDIR PYTHONPATH
"""
import os
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

work, pythonpath = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import compile_and_load, save_onnx  # noqa: E402


def vi(name, shape, elt=T.FLOAT):
    return h.make_tensor_value_info(name, elt, shape)


def c64(name, values):
    return (name, np.array(values, np.int64))


rng = np.random.default_rng(3)
x = rng.standard_normal((6, 4)).astype(np.float32)
z = rng.standard_normal((1, 4)).astype(np.float32)

nodes = [
    # parts = x.split([2, 3, 1]); parts.insert(1, z); del parts[-1]
    h.make_node("SplitToSequence", ["x", "sizes"], ["parts"], axis=0),
    h.make_node("SequenceInsert", ["parts", "z", "one"], ["parts2"]),
    h.make_node("SequenceErase", ["parts2"], ["parts3"]),
    h.make_node("ConcatFromSequence", ["parts3"], ["joined"], axis=0),
    h.make_node("SequenceAt", ["parts3", "minus_one"], ["last"]),
    h.make_node("SequenceLength", ["parts3"], ["count"]),
    # columns = x.unbind(1); torch.stack(columns, -1)
    h.make_node("SplitToSequence", ["x"], ["cols"], axis=1, keepdims=0),
    h.make_node("ConcatFromSequence", ["cols"], ["stacked"], axis=-1, new_axis=1),
    # chunks of 4 rows: [4, 2]; a constructed list read from the front
    h.make_node("SplitToSequence", ["x", "four"], ["chunks"], axis=0),
    h.make_node("SequenceAt", ["chunks", "one"], ["tail"]),
    h.make_node("SequenceEmpty", [], ["empty"]),
    h.make_node("SequenceInsert", ["empty", "tail"], ["built"]),
    h.make_node("SequenceInsert", ["built", "z", "zero"], ["built2"]),
    h.make_node("ConcatFromSequence", ["built2"], ["front"], axis=0),
]
inits = [c64("sizes", [2, 3, 1]), c64("one", 1), c64("minus_one", -1),
         c64("four", 4), c64("zero", 0)]
m = compile_and_load(kiln, save_onnx(
    work, "sequences", nodes, [vi("x", [6, 4]), vi("z", [1, 4])],
    [vi("joined", [6, 4]), vi("last", [3, 4]), vi("count", [], T.INT64),
     vi("stacked", [6, 4]), vi("front", [3, 4])], inits, opset=13))
joined, last, count, stacked, front = m(x, z)
np.testing.assert_array_equal(joined, np.concatenate([x[0:2], z, x[2:5]]))
np.testing.assert_array_equal(last, x[2:5])
assert count == 3, count
np.testing.assert_array_equal(stacked, x)
np.testing.assert_array_equal(front, np.concatenate([z, x[4:6]]))

# SequenceConstruct, and the opset-24 SplitToSequence.
m = compile_and_load(kiln, save_onnx(
    work, "construct",
    [h.make_node("SequenceConstruct", ["x", "x2"], ["s"]),
     h.make_node("ConcatFromSequence", ["s"], ["y"], axis=1),
     h.make_node("SplitToSequence", ["y", "three"], ["t"], axis=1),
     h.make_node("SequenceAt", ["t", "minus_one"], ["y_last"])],
    [vi("x", [6, 4]), vi("x2", [6, 3])], [vi("y", [6, 7]), vi("y_last", [6, 1])],
    [c64("three", 3), c64("minus_one", -1)], opset=24, ir_version=10))
x2 = rng.standard_normal((6, 3)).astype(np.float32)
y, y_last = m(x, x2)
np.testing.assert_array_equal(y, np.concatenate([x, x2], 1))
np.testing.assert_array_equal(y_last, x2[:, 2:3])

# `state if given else None`, then `if state is None`: an empty optional
# takes the else branch, a given one the then branch.
for given in (False, True):
    opt = (h.make_node("Optional", ["x"], ["state"]) if given else
           h.make_node("Optional", [], ["state"],
                       type=h.make_tensor_type_proto(T.FLOAT, [6, 4])))
    then_g = h.make_graph([h.make_node("OptionalGetElement", ["state"], ["s"]),
                           h.make_node("Neg", ["s"], ["m"])], "then", [], [vi("m", [6, 4])])
    else_g = h.make_graph([h.make_node("Relu", ["x"], ["r"])], "else", [], [vi("r", [6, 4])])
    m = compile_and_load(kiln, save_onnx(
        work, f"optional_{given}",
        [opt, h.make_node("OptionalHasElement", ["state"], ["has"]),
         h.make_node("If", ["has"], ["y"], then_branch=then_g, else_branch=else_g)],
        [vi("x", [6, 4])], [vi("y", [6, 4])], opset=18, ir_version=8))
    np.testing.assert_array_equal(m(x)[0], -x if given else np.maximum(x, 0))

# Refused by name: a position computed at run time, a position past the end,
# and a sequence graph output.
for name, node_list, inputs, outputs, inits, want in [
        ("runtime_position",
         [h.make_node("SplitToSequence", ["x"], ["s"], axis=0),
          h.make_node("SequenceAt", ["s", "i"], ["y"], name="at")],
         [vi("x", [6, 4]), vi("i", [], T.INT64)], [vi("y", [1, 4])], [],
         "node 'at' (SequenceAt, opset 13): a position computed at run time is not supported"),
        ("past_end",
         [h.make_node("SplitToSequence", ["x", "sizes"], ["s"], axis=0),
          h.make_node("SequenceAt", ["s", "five"], ["y"], name="at")],
         [vi("x", [6, 4])], [vi("y", [2, 4])], [c64("sizes", [2, 4]), c64("five", 5)],
         "node 'at' (SequenceAt, opset 13): position 5 is outside the sequence of 2 tensors")]:
    path = save_onnx(work, name, node_list, inputs, outputs, inits, opset=13)
    try:
        kiln.compile(path, output=path[:-5] + ".so")
    except Exception as e:  # noqa: BLE001
        assert want in str(e), str(e)
    else:
        raise AssertionError(f"{name}: compiled")

# SequenceMap (what a preprocessing function writes as `[f(a, b, c) for a,
# b in zip(xs, ws)]`): two sequences zipped, elements of different shapes, a
# tensor every element sees, two outputs (one computed from the shapes).
body = h.make_graph(
    [h.make_node("Mul", ["a", "b"], ["p"]),
     h.make_node("Add", ["p", "k"], ["q"]),
     h.make_node("Shape", ["a"], ["shape"])],
    "body", [vi("a", [None, 4]), vi("b", [None, 4]), vi("k", [4])],
    [vi("q", [None, 4]), vi("shape", [2], T.INT64)])
w = rng.standard_normal((6, 4)).astype(np.float32)
k = rng.standard_normal(4).astype(np.float32)
nodes = [
    h.make_node("SplitToSequence", ["x", "sizes"], ["xs"], axis=0),
    h.make_node("SplitToSequence", ["w", "sizes"], ["ws"], axis=0),
    h.make_node("SequenceMap", ["xs", "ws", "k"], ["qs", "shapes"], body=body),
    h.make_node("ConcatFromSequence", ["qs"], ["y"], axis=0),
    h.make_node("ConcatFromSequence", ["shapes"], ["rows"], axis=0, new_axis=1),
]
m = compile_and_load(kiln, save_onnx(
    work, "sequence_map", nodes, [vi("x", [6, 4]), vi("w", [6, 4]), vi("k", [4])],
    [vi("y", [6, 4]), vi("rows", [3, 2], T.INT64)], [c64("sizes", [1, 2, 3])],
    opset=17))
got = m.run({"x": x, "w": w, "k": k})
# One rounding apart at most (the multiply-add may be fused).
assert np.allclose(got["y"], x * w + k, rtol=1e-6, atol=1e-6), "SequenceMap values"
assert got["rows"].tolist() == [[1, 4], [2, 4], [3, 4]], got["rows"]

print("sequences: all cases match")
