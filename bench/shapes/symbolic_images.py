#!/usr/bin/python3
"""Run-time image sizes against static compiles and ONNX Runtime, side by side.

A detection-style CNN whose batch, height and width are symbolic (by default
one written for the harness: a stride-2 stem, 3x3 and depthwise-separable
blocks, max and average pooling, a stride-2 stage, a concatenation of two
branches and a 1x1 sigmoid head, as text and object detectors are built) is
compiled once with --dim batch=1..B --dim h=32..H --dim w=32..W (the dynamic
.so) and once per measured shape with every dimension fixed (today's static
code). At each shape the dynamic .so, the static .so and ORT
(onnxruntime-node, CPU provider, bench/perf/ort_driver.js) run the same
input, alternating in rounds; the table gives median milliseconds and the
ratios dynamic/static (the issue's target: within 1.15) and dynamic/ORT,
and the compile times (target: dynamic at most 2x one static compile).
Outputs are checked against each other first. With --unet the model is the
saliency U-Net of bench/models/export.py (U^2-Net's small variant, about
1,000 nodes: residual U blocks, bilinear upsampling to the size of each skip
connection) exported with dynamic_axes, so its Resize targets are computed
from Shape (needs torch).

usage: bench/shapes/symbolic_images.py [--model M.onnx | --unet] [--shapes 1x320x320,1x480x640]
       [--max 4x960x960] [--threads 1] [--build build]
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from ort import ensure_ort  # noqa: E402
from symbolic_shapes import compare_row, cpu_model  # noqa: E402


def detector(path):
    """The default model: NCHW float32 'x' [batch, 3, h, w] -> 'y'
    [batch, 2, h/8, w/8] (h and w multiples of 8)."""
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def conv(x, cin, cout, k, stride=1, group=1, act=True):
        i = len(nodes)
        w = rng.standard_normal((cout, cin // group, k, k)).astype(np.float32)
        w *= np.sqrt(2.0 / (cin // group * k * k))
        inits.append(nh.from_array(w, f"w{i}"))
        inits.append(nh.from_array(
            rng.standard_normal(cout).astype(np.float32) * 0.1, f"b{i}"))
        nodes.append(h.make_node(
            "Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], name=f"conv{i}",
            kernel_shape=[k, k], strides=[stride, stride], group=group,
            pads=[k // 2] * 4))
        if not act:
            return f"c{i}"
        nodes.append(h.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"))
        return f"r{i}"

    a = conv("x", 3, 16, 3, stride=2)                   # h/2
    a = conv(a, 16, 32, 3)
    nodes.append(h.make_node("MaxPool", [a], ["p"], name="maxpool",
                             kernel_shape=[2, 2], strides=[2, 2]))  # h/4
    b = conv("p", 32, 32, 3, group=32)                  # depthwise
    b = conv(b, 32, 64, 1)
    b = conv(b, 64, 64, 3)
    nodes.append(h.make_node("Add", [b, conv("p", 32, 64, 1, act=False)], ["s"],
                             name="residual"))
    c = conv("s", 64, 96, 3, stride=2)                  # h/8
    c = conv(c, 96, 96, 3, group=96)
    c = conv(c, 96, 64, 1)
    nodes.append(h.make_node("AveragePool", ["s"], ["q"], name="avgpool",
                             kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
    nodes.append(h.make_node("Concat", [c, "q"], ["cat"], name="concat", axis=1))
    d = conv("cat", 128, 64, 3)
    d = conv(d, 64, 2, 1, act=False)
    nodes.append(h.make_node("Sigmoid", [d], ["y"], name="head"))
    graph = h.make_graph(
        nodes, "detector",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "h", "w"])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2, None, None])],
        inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


def parse_shape(text):
    n, hh, ww = (int(v) for v in text.split("x"))
    return n, hh, ww


def export_unet(path):
    import torch
    sys.path.insert(0, os.path.join(ROOT, "bench", "models"))
    from export import SaliencyUNet
    torch.manual_seed(0)
    model = SaliencyUNet().eval()
    torch.onnx.export(model, (torch.randn(1, 3, 320, 320),), path, opset_version=17,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch", 2: "h", 3: "w"},
                                    "y": {0: "batch", 2: "h", 3: "w"}})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="an ONNX model whose one input is NCHW with "
                    "symbolic 'batch', 'h' and 'w' (default: the detector above)")
    ap.add_argument("--unet", action="store_true",
                    help="the saliency U-Net of bench/models/export.py, exported with "
                    "symbolic batch, h and w")
    ap.add_argument("--shapes", default="1x320x320,1x480x640",
                    help="NxHxW shapes to measure")
    ap.add_argument("--max", default="4x960x960", help="the largest NxHxW")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-bench-symbolic-images")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import kiln

    os.makedirs(a.work, exist_ok=True)
    model = a.model or os.path.join(a.work, "unet.onnx" if a.unet else "detector.onnx")
    if a.unet:
        export_unet(model)
    elif not a.model:
        detector(model)
    if not a.no_ort:
        ensure_ort()
    bn, bh, bw = parse_shape(a.max)

    def compile_so(so, dims):
        t = time.perf_counter()
        kiln.compile(model, output=so, dims=dims)
        return time.perf_counter() - t

    dyn_so = os.path.join(a.work, f"dynamic-{a.threads}.so")
    dyn_s = compile_so(dyn_so, {"batch": (1, bn), "h": (32, bh), "w": (32, bw)})
    dyn = kiln.load(dyn_so, threads=a.threads)
    print(f"CPU: {cpu_model()}; threads={a.threads}; batch 1..{bn}, "
          f"h 32..{bh}, w 32..{bw}")
    print("| NxHxW | static ms | dynamic ms | ORT ms | dynamic/static | dynamic/ORT | "
          "static/ORT | compile static s | compile dynamic s |")
    print("|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(1)
    for text in a.shapes.split(","):
        n, hh, ww = parse_shape(text)
        st_so = os.path.join(a.work, f"static-{text}-{a.threads}.so")
        st_s = compile_so(st_so, {"batch": n, "h": hh, "w": ww})
        st = kiln.load(st_so, threads=a.threads)
        x = rng.standard_normal((n, 3, hh, ww)).astype(np.float32)
        compare_row(text, st, dyn, x, model, a, st_s, dyn_s)

if __name__ == "__main__":
    main()
