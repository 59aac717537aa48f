#!/usr/bin/python3
"""A detection head's per-class selection compiles, and gives numpy's numbers.

Usage: check_detection_head.py KILN_COMPILE KILN_RUN WORKDIR

torchvision's SSD and RetinaNet exports select, for each class, the scores
above a threshold (NonZero and Gather), keep the best few (TopK with
k = min(size, K)), guard the empty case with an If (`if boxes.numel() == 0:
return torch.empty(0)`), and concatenate all classes. Two things went wrong
on such graphs:
- the If chose between an empty tensor and a data-dependent one with Where,
  which fails at run time (the shapes differ) whenever the other branch is
  taken with a non-empty result;
- one-shot bufferization's slice comparisons built Presburger systems over
  the whole chain of data-dependent sizes, nesting one comparison per loop:
  torchvision's SSDlite (90 classes) never finished compiling.
This head has CLASSES classes. It is compiled once and run on inputs where
some classes select nothing, some a few and some more than K, against numpy
(exact: selection and gathers only move values, and the doubled scores are
exact in float32).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper as h, numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import check_case, compile_cli, write_case  # noqa: E402

CLASSES = 24
ANCHORS = 64
K = 5
THRESHOLD = 0.5


def const(name, value):
    return h.make_node("Constant", [], [name], value=nh.from_array(np.array(value), name))


def model():
    nodes = [
        const("thr", np.array(THRESHOLD, np.float32)),
        const("k_max", np.array([K], np.int64)),
        const("zero", np.array(0, np.int64)),
        const("two", np.array(2.0, np.float32)),
    ]
    empty = h.make_graph(
        [const("nothing", np.zeros(0, np.float32))], "empty", [],
        [h.make_tensor_value_info("nothing", TensorProto.FLOAT, [0])])
    parts = []
    for c in range(CLASSES):
        p = f"c{c}_"
        then_branch = empty
        else_branch = h.make_graph(
            [h.make_node("Shape", [p + "sel"], [p + "n"]),
             h.make_node("Min", [p + "n", "k_max"], [p + "k"]),
             h.make_node("TopK", [p + "sel", p + "k"], [p + "top", p + "top_i"], axis=0),
             h.make_node("Mul", [p + "top", "two"], [p + "kept"])],
            p + "select", [],
            [h.make_tensor_value_info(p + "kept", TensorProto.FLOAT, ["k"])])
        nodes += [
            const(p + "at", np.array(c, np.int64)),
            const(p + "axis0", np.array([0], np.int64)),
            h.make_node("Gather", ["scores", p + "at"], [p + "s"], axis=0),
            h.make_node("Greater", [p + "s", "thr"], [p + "mask"]),
            h.make_node("NonZero", [p + "mask"], [p + "nz"]),
            h.make_node("Squeeze", [p + "nz", p + "axis0"], [p + "idx"]),
            h.make_node("Gather", [p + "s", p + "idx"], [p + "sel"], axis=0),
            h.make_node("Size", [p + "sel"], [p + "size"]),
            h.make_node("Equal", [p + "size", "zero"], [p + "none"]),
            h.make_node("If", [p + "none"], [p + "out"],
                        then_branch=then_branch, else_branch=else_branch),
        ]
        parts.append(p + "out")
    nodes.append(h.make_node("Concat", parts, ["y"], axis=0))
    graph = h.make_graph(
        nodes, "detection_head",
        [h.make_tensor_value_info("scores", TensorProto.FLOAT, [CLASSES, ANCHORS])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def reference(scores):
    out = []
    for s in scores:
        sel = s[s > THRESHOLD]
        if sel.size:
            # TopK: largest first, the lower index first among equals.
            order = np.argsort(-sel, kind="stable")[:K]
            out.append(sel[order] * 2)
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def inputs(rng):
    # Distinct values, so the order among equals never matters.
    scores = rng.permutation(CLASSES * ANCHORS).astype(np.float32)
    scores = (scores / (CLASSES * ANCHORS)).reshape(CLASSES, ANCHORS)
    # Class c selects about c * 3 anchors: none for the first ones.
    for c in range(CLASSES):
        row = scores[c] * 0.5
        row[: min(ANCHORS, c * 3 // 2)] += 0.55
        scores[c] = rng.permutation(row)
    yield "mixed", scores
    yield "none", np.zeros((CLASSES, ANCHORS), np.float32)
    every = rng.permutation(CLASSES * ANCHORS).astype(np.float32) / (CLASSES * ANCHORS)
    yield "every", (every.reshape(CLASSES, ANCHORS) * 0.4 + 0.55).astype(np.float32)


def main():
    compile_, run, work = sys.argv[1:4]
    so = compile_cli(compile_, model(), work)
    ok = True
    for name, x in inputs(np.random.default_rng(0)):
        y = reference(x)
        d = write_case(work, name, [("scores", x)], [("y", y)])
        passed, report = check_case(run, so, d, 0, 0)
        print(f"{'ok' if passed else 'FAIL'} {name} ({y.size} kept): {report[-300:]}")
        ok &= passed
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
