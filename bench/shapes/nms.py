#!/usr/bin/python3
"""NonMaxSuppression as a detector's postprocessing, against ONNX Runtime.

One NonMaxSuppression node the way single-stage detectors export it: boxes
[1, N, 4] (center format), class scores [1, C, N], at most 100 boxes per
class, IoU threshold 0.45, score threshold 0.25. The kept rows depend on the
data (Kiln sizes the result per run, docs/shapes.md), so the table gives two
score distributions: "sparse" (sigmoid of N(-4, 1.5): a few percent of the
boxes pass the threshold, as trained detectors give) and "dense" (uniform:
three quarters pass, the worst case). Kiln (kiln.load) and ORT
(onnxruntime-node, bench/perf/ort_driver.js) run the same inputs in
alternating rounds; the rows they keep are compared first (they must be
equal), then median milliseconds and the ratio Kiln/ORT are printed.

torchvision's detectors (SSD, RetinaNet, Faster R-CNN) export their batched
NMS as one class: every class's top boxes, shifted apart per class, with no
limit per class and no score threshold, so thousands of boxes are taken and
most kept. `--classes 1 --max-per-class 0 --score-threshold 0` measures that
case; `--clusters K` places the boxes around K objects (N/K jittered boxes
each, as a trained detector proposes them: most are suppressed) instead of
uniformly (few overlap: most are kept).

usage: bench/shapes/nms.py [--boxes 8400] [--classes 80] [--threads 1]
           [--max-per-class 100] [--score-threshold 0.25] [--clusters 0]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from ort import ensure_ort  # noqa: E402
from symbolic_shapes import Ort, cpu_model, timed, SETTLE_S  # noqa: E402


def model(path, n, c, max_per_class, score_threshold):
    node = h.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "thr"],
                       ["selected"], center_point_box=1)
    graph = h.make_graph(
        [node], "nms",
        [h.make_tensor_value_info("boxes", T.FLOAT, [1, n, 4]),
         h.make_tensor_value_info("scores", T.FLOAT, [1, c, n])],
        [h.make_tensor_value_info("selected", T.INT64, ["k", 3])],
        [nh.from_array(np.array([max_per_class or n], np.int64), "max"),
         nh.from_array(np.array([0.45], np.float32), "iou"),
         nh.from_array(np.array([score_threshold], np.float32), "thr")])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 11)])
    m.ir_version = 7
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boxes", type=int, default=8400)
    ap.add_argument("--classes", type=int, default=80)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-per-class", type=int, default=100, help="0: no limit")
    ap.add_argument("--score-threshold", type=float, default=0.25)
    ap.add_argument("--clusters", type=int, default=0,
                    help="boxes around this many objects (0: uniform)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-bench-nms")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import kiln

    os.makedirs(a.work, exist_ok=True)
    path = os.path.join(a.work, f"nms-{a.boxes}x{a.classes}-{a.max_per_class}-"
                              f"{a.score_threshold}.onnx")
    model(path, a.boxes, a.classes, a.max_per_class, a.score_threshold)
    ensure_ort()
    so = kiln.compile(path, output=path[:-5] + ".so")
    m = kiln.load(so, threads=a.threads)
    rng = np.random.default_rng(3)
    n, c = a.boxes, a.classes
    if a.clusters:
        objects = rng.integers(0, a.clusters, n)
        centers = rng.uniform(0, 640, (a.clusters, 2))
        sizes = rng.uniform(8, 160, (a.clusters, 2))
        xy = centers[objects] + rng.normal(0, 2, (n, 2))
        wh = sizes[objects] * rng.uniform(0.9, 1.1, (n, 2))
        boxes = np.concatenate([xy, wh], axis=1)[None].astype(np.float32)
    else:
        xy = rng.uniform(0, 640, (1, n, 2)).astype(np.float32)
        wh = rng.uniform(8, 160, (1, n, 2)).astype(np.float32)
        boxes = np.concatenate([xy, wh], axis=2)
    limit = a.max_per_class or "no limit"
    print(f"CPU: {cpu_model()}; threads={a.threads}; boxes={n} classes={c} "
          f"max {limit}/class, IoU 0.45, score {a.score_threshold}, "
          f"{f'{a.clusters} clusters' if a.clusters else 'uniform boxes'}")
    print("| scores | kept rows | Kiln ms | ORT ms | Kiln/ORT |")
    print("|---|--:|--:|--:|--:|")
    for label in ["sparse", "dense"]:
        if label == "sparse":
            logits = rng.normal(-4, 1.5, (1, c, n))
            scores = (1 / (1 + np.exp(-logits))).astype(np.float32)
        else:
            scores = rng.uniform(0, 1, (1, c, n)).astype(np.float32)
        feeds = {"boxes": boxes, "scores": scores}
        got = m(boxes, scores)[0]
        ort = Ort(path, a.threads, feeds, a.work)
        ort.run(1)
        dump = os.path.join(a.work, "ort_out.bin")
        ort.p.stdin.write(f"dump {dump}\n")
        ort.p.stdin.flush()
        assert ort.p.stdout.readline().strip() == "ok"
        want = np.fromfile(dump, dtype=np.int64).reshape(-1, 3)
        assert np.array_equal(got, want), (got.shape, want.shape)
        tk, to = [], []
        for _ in range(a.rounds):
            tk.append(timed(lambda: m(boxes, scores), a.calls))
            to.append(ort.run(a.calls + 1))
            time.sleep(SETTLE_S)
        ort.close()
        k, o = statistics.median(tk), statistics.median(to)
        print(f"| {label} | {len(got)} | {k:.3f} | {o:.3f} | {k / o:.2f} |", flush=True)


if __name__ == "__main__":
    main()
