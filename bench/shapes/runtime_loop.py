#!/usr/bin/python3
"""An RNN written as an ONNX Loop over a symbolic sequence length, against
ONNX Runtime: Kiln's one compiled loop (--dim seq=1..MAX) beside Kiln's
static compile of each length (the Loop unrolled) and ORT.

The model is the way scripted recurrent layers export: M = Shape(x)[0], a
loop-carried state h [batch, hidden], a scan output stacking relu(h) per
step, and h = tanh(x[t] W + h U + b) in the body. --form scan writes the
same RNN as a Scan over the sequence axis (the way tf2onnx writes one). For each sequence length
the outputs of all three are compared first (Kiln's loop against ORT, max
absolute difference <= 1e-4 on tanh/relu outputs), then they run in
alternating rounds; the table gives median milliseconds and the ratios
loop/ORT and loop/unrolled, and the compile times of the loop .so and of
the unrolled one.

usage: bench/shapes/runtime_loop.py [--hidden 256] [--batch 4]
                                    [--seqs 16,64,256] [--threads 1]
                                    [--form loop|scan]
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

IN = 64


def model(path, batch, hidden, seq, form="loop"):
    rng = np.random.default_rng(0)
    vi = h.make_tensor_value_info
    step = [h.make_node("MatMul", ["xt", "W"], ["a"]),
            h.make_node("MatMul", ["h", "U"], ["c"]),
            h.make_node("Add", ["a", "c"], ["s"]),
            h.make_node("Add", ["s", "B"], ["s2"]),
            h.make_node("Tanh", ["s2"], ["h2"]),
            h.make_node("Relu", ["h2"], ["y"])]
    outs = [vi("h2", T.FLOAT, [batch, hidden]), vi("y", T.FLOAT, [batch, hidden])]
    if form == "scan":
        body = h.make_graph(step, "body", [vi("h", T.FLOAT, [batch, hidden]),
                                           vi("xt", T.FLOAT, [batch, IN])], outs)
        nodes = [h.make_node("Scan", ["h0", "x"], ["hf", "ys"], body=body,
                             num_scan_inputs=1)]
    else:
        body = h.make_graph(
            [h.make_node("Gather", ["x", "i"], ["xt"], axis=0),
             h.make_node("Identity", ["cond"], ["cond2"])] + step,
            "body",
            [vi("i", T.INT64, []), vi("cond", T.BOOL, []),
             vi("h", T.FLOAT, [batch, hidden])],
            [vi("cond2", T.BOOL, [])] + outs)
        nodes = [h.make_node("Shape", ["x"], ["sx"]),
                 h.make_node("Gather", ["sx", "zero"], ["m1"], axis=0),
                 h.make_node("Squeeze", ["m1"], ["M"]),
                 h.make_node("Loop", ["M", "", "h0"], ["hf", "ys"], body=body)]
    graph = h.make_graph(
        nodes,
        "rnn_" + form,
        [vi("x", T.FLOAT, [seq, batch, IN]), vi("h0", T.FLOAT, [batch, hidden])],
        [vi("hf", T.FLOAT, [batch, hidden]), vi("ys", T.FLOAT, [seq, batch, hidden])],
        [nh.from_array((rng.standard_normal((IN, hidden)) * 0.2).astype(np.float32), "W"),
         nh.from_array((rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32), "U"),
         nh.from_array((rng.standard_normal(hidden) * 0.1).astype(np.float32), "B")]
        + ([] if form == "scan" else [nh.from_array(np.array([0], np.int64), "zero")]))
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 16 if form == "scan" else 13)])
    m.ir_version = 8
    onnx.save(m, path)


def compile_timed(kiln, path, **kw):
    t = time.perf_counter()
    so = kiln.compile(path, output=path[:-5] + ".so", **kw)
    return so, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seqs", default="16,64,256")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--form", choices=("loop", "scan"), default="loop")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-bench-loop")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import kiln

    os.makedirs(a.work, exist_ok=True)
    seqs = [int(s) for s in a.seqs.split(",")]
    ensure_ort()
    path = os.path.join(a.work, f"rnn_{a.form}.onnx")
    model(path, a.batch, a.hidden, "seq", a.form)
    so, loop_s = compile_timed(kiln, path, dims={"seq": (1, max(seqs))})
    loop = kiln.load(so, threads=a.threads)
    print(f"CPU: {cpu_model()}; form={a.form}; threads={a.threads}; batch={a.batch} "
          f"hidden={a.hidden}; loop .so compiled once in {loop_s:.1f} s")
    print("| seq | loop ms | unrolled ms | ORT ms | loop/ORT | loop/unrolled "
          "| unrolled compile s |")
    print("|--:|--:|--:|--:|--:|--:|--:|")
    rng = np.random.default_rng(1)
    for seq in seqs:
        x = rng.standard_normal((seq, a.batch, IN)).astype(np.float32)
        h0 = rng.standard_normal((a.batch, a.hidden)).astype(np.float32)
        fixed = os.path.join(a.work, f"rnn_{a.form}_{seq}.onnx")
        model(fixed, a.batch, a.hidden, seq, a.form)
        uso, unroll_s = compile_timed(kiln, fixed)
        unrolled = kiln.load(uso, threads=a.threads)
        ort = Ort(path, a.threads, {"x": x, "h0": h0}, a.work)
        ort.run(1)
        dump = os.path.join(a.work, "ort_out.bin")
        ort.p.stdin.write(f"dump {dump}\n")
        ort.p.stdin.flush()
        assert ort.p.stdout.readline().strip() == "ok"
        want = np.fromfile(dump, dtype=np.float32).reshape(a.batch, a.hidden)
        got = loop(x, h0)
        assert np.abs(got[0] - want).max() <= 1e-4, np.abs(got[0] - want).max()
        assert np.abs(unrolled(x, h0)[1] - got[1]).max() <= 1e-4
        tl, tu, to = [], [], []
        for _ in range(a.rounds):
            tl.append(timed(lambda: loop(x, h0), a.calls))
            tu.append(timed(lambda: unrolled(x, h0), a.calls))
            to.append(ort.run(a.calls + 1))
            time.sleep(SETTLE_S)
        ort.close()
        ml, mu, mo = (statistics.median(t) for t in (tl, tu, to))
        print(f"| {seq} | {ml:.3f} | {mu:.3f} | {mo:.3f} | {ml / mo:.2f} | "
              f"{ml / mu:.2f} | {unroll_s:.1f} |", flush=True)


if __name__ == "__main__":
    main()
