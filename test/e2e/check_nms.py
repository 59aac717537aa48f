#!/usr/bin/python3
"""NonMaxSuppression as detection models export it: the number of boxes kept
depends on the data, so the result is [count, 3] sized by each run, bounded
by batches * classes * min(boxes, max_output_boxes_per_class) (docs/ops.md,
docs/shapes.md "Sizes that depend on the data"). Each model is compiled once
and run on many random box sets through Python's kiln.load(); the rows must
equal, exactly, those of a reference written here from the ONNX definition
(sort by score, stable; keep a box unless a kept box of its class overlaps it
by IoU > threshold), which shares no code or algorithm with Kiln's lowering
(a repeated arg-max with no sort).

usage: check_nms.py KILN_COMPILE WORKDIR PYTHONPATH
"""
import json
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

compile_, work, pythonpath = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import compile_and_load, save_onnx  # noqa: E402

rng = np.random.default_rng(7)
f32 = np.float32


def extents(box, center):
    """(x_min, x_max, y_min, y_max) of one box, in float32 as ONNX Runtime."""
    if center:
        xc, yc, w, hh = box
        return xc - w / f32(2), xc + w / f32(2), yc - hh / f32(2), yc + hh / f32(2)
    y1, x1, y2, x2 = box
    return min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)


def suppresses(a, b, iou_threshold, center):
    ax0, ax1, ay0, ay1 = extents(a, center)
    bx0, bx1, by0, by1 = extents(b, center)
    ix0, ix1 = max(ax0, bx0), min(ax1, bx1)
    iy0, iy1 = max(ay0, by0), min(ay1, by1)
    if ix1 <= ix0 or iy1 <= iy0:
        return False
    inter = f32(ix1 - ix0) * f32(iy1 - iy0)
    area_a = f32(ax1 - ax0) * f32(ay1 - ay0)
    area_b = f32(bx1 - bx0) * f32(by1 - by0)
    union = f32(area_a + area_b) - inter
    if inter <= 0 or area_a <= 0 or area_b <= 0 or union <= 0:
        return False
    return f32(inter / union) > iou_threshold


def reference(boxes, scores, max_out, iou, score_threshold, center):
    rows = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c]
            order = np.argsort(-s, kind="stable")
            if score_threshold is not None:
                order = [i for i in order if s[i] > score_threshold]
            kept = []
            for i in order:
                if len(kept) >= max(max_out, 0):
                    break
                if all(not suppresses(boxes[b, k], boxes[b, i], iou, center)
                       for k in kept):
                    kept.append(i)
            rows += [[b, c, i] for i in kept]
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def random_boxes(batches, n, center):
    """Boxes on a 0..1 canvas with plenty of overlap; corners in any order."""
    xy = rng.uniform(0, 1, (batches, n, 2)).astype(f32)
    wh = rng.uniform(0.05, 0.4, (batches, n, 2)).astype(f32)
    if center:
        return np.concatenate([xy, wh], axis=2)
    y1, x1 = xy[..., 1], xy[..., 0]
    y2, x2 = y1 + wh[..., 1], x1 + wh[..., 0]
    flip = rng.uniform(size=(batches, n)) < 0.3  # some given bottom-right first
    y1, y2 = np.where(flip, y2, y1), np.where(flip, y1, y2)
    return np.stack([y1, x1, y2, x2], axis=2).astype(f32)


def scores_for(batches, classes, n, ties=False):
    s = rng.uniform(0, 1, (batches, classes, n)).astype(f32)
    if ties:  # a few score levels: equal scores keep the lower index first
        s = np.round(s * 4).astype(f32) / f32(4)
    return s


def save(name, nodes, inputs, outputs, inits=()):
    return save_onnx(work, name, nodes, inputs, outputs, inits, opset=11)


def build(path, **kw):
    return compile_and_load(kiln, path, **kw)


def same(got, want, what):
    assert got.dtype == np.int64, (what, got.dtype)
    assert got.shape == want.shape and np.array_equal(got, want), \
        f"{what}: got {got.tolist()} want {want.tolist()}"


checked = 0

# 1. Everything at run time: max, IoU and score thresholds are graph inputs,
#    corner boxes, two batch entries and three classes. A maximum of 0 (or
#    below) keeps nothing; one larger than the box count keeps what survives.
B, C, N = 2, 3, 40
nms = h.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "thr"],
                  ["sel"])
m = build(save("nms_runtime", [nms], [
    h.make_tensor_value_info("boxes", T.FLOAT, [B, N, 4]),
    h.make_tensor_value_info("scores", T.FLOAT, [B, C, N]),
    h.make_tensor_value_info("max", T.INT64, [1]),
    h.make_tensor_value_info("iou", T.FLOAT, [1]),
    h.make_tensor_value_info("thr", T.FLOAT, [1])],
    [h.make_tensor_value_info("sel", T.INT64, ["selected", 3])]))
for max_out, iou, thr, ties in [(100, 0.5, 0.0, False), (3, 0.3, 0.5, False),
                                (1, 0.7, 0.2, True), (0, 0.5, 0.0, False),
                                (-2, 0.5, 0.0, False), (40, 0.0, 0.9, True),
                                (7, 1.0, 0.1, False), (100, 0.5, 1.5, False)]:
    boxes = random_boxes(B, N, False)
    scores = scores_for(B, C, N, ties)
    args = (boxes, scores, np.array([max_out], np.int64), np.array([iou], f32),
            np.array([thr], f32))
    want = reference(boxes, scores, max_out, f32(iou), f32(thr), False)
    same(m(*args)[0], want, f"runtime max={max_out} iou={iou} thr={thr}")
    checked += 1

# 2. Center-format boxes with constant max and IoU and no score threshold,
#    followed by what a detector's postprocessing does with the rows: take
#    the box column, gather those boxes and their scores.
N2 = 120
nodes = [
    h.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou"], ["sel"],
                center_point_box=1),
    h.make_node("Gather", ["sel", "two"], ["col"], axis=1),
    h.make_node("Squeeze", ["col", "one"], ["idx"]),
    h.make_node("Squeeze", ["boxes", "zero"], ["boxes0"]),
    h.make_node("Gather", ["boxes0", "idx"], ["kept"], axis=0),
    h.make_node("Reshape", ["scores", "flat"], ["scores0"]),
    h.make_node("Gather", ["scores0", "idx"], ["kept_scores"], axis=0),
]
m = build(save("nms_postprocess", nodes, [
    h.make_tensor_value_info("boxes", T.FLOAT, [1, N2, 4]),
    h.make_tensor_value_info("scores", T.FLOAT, [1, 1, N2])],
    [h.make_tensor_value_info("kept", T.FLOAT, ["k", 4]),
     h.make_tensor_value_info("kept_scores", T.FLOAT, ["k"])],
    [("max", np.array([10], np.int64)), ("iou", np.array([0.45], f32)),
     ("two", np.array([2], np.int64)), ("one", np.array([1], np.int64)),
     ("zero", np.array([0], np.int64)), ("flat", np.array([-1], np.int64))]))
# The arena holds the kept rows at their bound: min(120 boxes, max 10).
meta = json.load(open(os.path.join(work, "nms_postprocess.json")))
assert [o["shape"] for o in meta["outputs"]] == [[10, 4], [10]], meta["outputs"]
assert all(o["computed_axes"] == [0] for o in meta["outputs"]), meta["outputs"]
for trial in range(6):
    boxes = random_boxes(1, N2, True)
    scores = scores_for(1, 1, N2, ties=trial % 2 == 1)
    idx = reference(boxes, scores, 10, f32(0.45), None, True)[:, 2]
    kept, kept_scores = m(boxes, scores)
    assert kept.shape == (len(idx), 4) and np.array_equal(kept, boxes[0, idx]), trial
    assert np.array_equal(kept_scores, scores[0, 0, idx]), trial
    checked += 1

# 3. A run-time number of boxes (a symbolic dimension): one compile, box
#    counts across the range, including a single box.
nms = h.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "thr"],
                  ["sel"])
m = build(save("nms_symbolic", [nms], [
    h.make_tensor_value_info("boxes", T.FLOAT, [1, "n", 4]),
    h.make_tensor_value_info("scores", T.FLOAT, [1, 2, "n"])],
    [h.make_tensor_value_info("sel", T.INT64, ["selected", 3])],
    [("max", np.array([5], np.int64)), ("iou", np.array([0.4], f32)),
     ("thr", np.array([0.25], f32))]), dims={"n": (1, 300)})
for n in [1, 2, 37, 300]:
    boxes = random_boxes(1, n, False)
    scores = scores_for(1, 2, n)
    want = reference(boxes, scores, 5, f32(0.4), f32(0.25), False)
    same(m(boxes, scores)[0], want, f"symbolic n={n}")
    checked += 1

# 4. A model that declares the result's static shape keeps it, and a run that
#    keeps another number of boxes is refused by name rather than padded.
m = build(save("nms_declared", [h.make_node(
    "NonMaxSuppression", ["boxes", "scores", "max", "iou"], ["sel"])], [
    h.make_tensor_value_info("boxes", T.FLOAT, [1, 4, 4]),
    h.make_tensor_value_info("scores", T.FLOAT, [1, 1, 4])],
    [h.make_tensor_value_info("sel", T.INT64, [2, 3])],
    [("max", np.array([3], np.int64)), ("iou", np.array([0.5], f32))]))
apart = np.array([[[0, 0, 1, 1], [0, 0, 1, 1.05], [5, 5, 6, 6], [5, 5, 6, 6.1]]], f32)
scores = np.array([[[0.9, 0.8, 0.7, 0.6]]], f32)
same(m(apart, scores)[0], np.array([[0, 0, 0], [0, 0, 2]], np.int64), "declared")
far = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [5, 5, 6, 6], [8, 8, 9, 9]]], f32)
try:
    m(far, scores)
    raise AssertionError("a run keeping 3 boxes was not refused")
except kiln.Error as e:
    assert "NonMaxSuppression" in str(e) and "exactly 2" in str(e), e

# 5. An fp16-converted model: half boxes and scores (and thresholds) are
#    compared in float32, where every half value is exact.
nms = h.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "thr"],
                  ["sel"])
m = build(save("nms_half", [nms], [
    h.make_tensor_value_info("boxes", T.FLOAT16, [2, 30, 4]),
    h.make_tensor_value_info("scores", T.FLOAT16, [2, 2, 30])],
    [h.make_tensor_value_info("sel", T.INT64, ["selected", 3])],
    [("max", np.array([6], np.int64)), ("iou", np.array([0.5], np.float16)),
     ("thr", np.array([0.3], np.float16))]))
for trial in range(3):
    boxes = random_boxes(2, 30, False).astype(np.float16)
    scores = scores_for(2, 2, 30, ties=trial == 1).astype(np.float16)
    want = reference(boxes.astype(f32), scores.astype(f32), 6,
                     f32(np.float16(0.5)), f32(np.float16(0.3)), False)
    same(m(boxes, scores)[0], want, f"half trial {trial}")
    checked += 1

# 6. Many boxes kept in one class, as torchvision's batched NMS gives (one
#    class, no limit, no score threshold): each box is compared with the kept
#    ones in blocks of 64 that stop at the first suppressing one, so boxes
#    are placed to be suppressed by a kept box in the first, a middle and the
#    last block, and by none. 300 apart on a grid, scores descending, then a
#    near copy of each at a lower score in shuffled order, then random ones.
K6 = 300
g = np.arange(K6, dtype=f32)
apart = np.stack([(g // 20) * 2, (g % 20) * 2, (g // 20) * 2 + 1, (g % 20) * 2 + 1],
                 axis=1)
copies = apart + rng.uniform(-0.05, 0.05, apart.shape).astype(f32)
loose = rng.uniform(0, 40, (100, 2)).astype(f32)
loose = np.concatenate([loose, loose + rng.uniform(0.2, 1.5, (100, 2)).astype(f32)], 1)
boxes6 = np.concatenate([apart, copies, loose])[None].astype(f32)
order = np.concatenate([np.arange(K6), K6 + rng.permutation(K6),
                        2 * K6 + np.arange(100)])
scores6 = np.empty((1, 1, 2 * K6 + 100), f32)
scores6[0, 0, order] = np.linspace(1, 0.01, order.size, dtype=f32)
m = build(save("nms_many_kept", [h.make_node(
    "NonMaxSuppression", ["boxes", "scores", "max", "iou"], ["sel"])], [
    h.make_tensor_value_info("boxes", T.FLOAT, [1, 2 * K6 + 100, 4]),
    h.make_tensor_value_info("scores", T.FLOAT, [1, 1, 2 * K6 + 100])],
    [h.make_tensor_value_info("sel", T.INT64, ["k", 3])],
    [("max", np.array([10000], np.int64)), ("iou", np.array([0.5], f32))]))
want = reference(boxes6, scores6, 10000, f32(0.5), None, False)
# Every grid box is kept, no copy is, and some loose boxes are suppressed.
assert K6 < len(want) < K6 + 100 and set(range(K6)) <= set(want[:, 2].tolist()), len(want)
same(m(boxes6, scores6)[0], want, "many kept")
checked += 1

# 7. Inputs that cannot mean anything are refused at compile time by name.
bad = save("nms_bad", [h.make_node(
    "NonMaxSuppression", ["boxes", "scores", "max"], ["sel"])], [
    h.make_tensor_value_info("boxes", T.FLOAT, [1, 4, 5]),
    h.make_tensor_value_info("scores", T.FLOAT, [1, 1, 4])],
    [h.make_tensor_value_info("sel", T.INT64, ["k", 3])],
    [("max", np.array([3], np.int64))])
r = subprocess.run([compile_, bad, "-o", bad[:-5] + ".so"], capture_output=True,
                   text=True)
assert r.returncode != 0 and "(NonMaxSuppression, opset 11)" in r.stderr and \
    "boxes must be [num_batches, spatial_dimension, 4]" in r.stderr, r.stderr
bad = save("nms_bad_max", [h.make_node(
    "NonMaxSuppression", ["boxes", "scores", "max"], ["sel"])], [
    h.make_tensor_value_info("boxes", T.FLOAT, [1, 4, 4]),
    h.make_tensor_value_info("scores", T.FLOAT, [1, 1, 4]),
    h.make_tensor_value_info("max", T.FLOAT, [1])],
    [h.make_tensor_value_info("sel", T.INT64, ["k", 3])])
r = subprocess.run([compile_, bad, "-o", bad[:-5] + ".so"], capture_output=True,
                   text=True)
assert r.returncode != 0 and "(NonMaxSuppression, opset 11)" in r.stderr and \
    "max_output_boxes_per_class must be one int64 element" in r.stderr, r.stderr

print(f"check_nms: {checked} runs matched the reference; refusals named the node")
