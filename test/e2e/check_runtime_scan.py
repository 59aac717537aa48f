#!/usr/bin/python3
"""ONNX Scans of run-time length (docs/shapes.md, "Loops of a run-time trip
count"): a Scan over a symbolic axis, or one too long to unroll, compiles
once as a loop and runs at every length in range, against a float64
reference written from the ONNX definition.

- An RNN written as Scan (opset 16) over a symbolic sequence, the way
  tf2onnx writes one: batch-major input scanned along axis 1, a second scan
  input read backwards (scan_input_directions), and three scan outputs:
  stacked on axis 0, on axis 1, and reversed (scan_output_directions). At
  seq 1, 6 and the bound 30, on 1 and 2 threads; seq 31 is refused naming
  the bound.
- The same model through kiln-run --test-data, at a length the .pb sets.
- A static Scan too long to unroll (a running sum over 60,000 steps) runs
  as a loop instead of being refused.
- Refused by name: scan inputs whose symbolic lengths differ.

usage: check_runtime_scan.py KILN_COMPILE KILN_RUN WORKDIR PYTHONPATH
"""
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

compile_, run_, work, pythonpath = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import (assert_close, compile_and_load, run_model,  # noqa: E402
                        save_model, save_onnx)

rng = np.random.default_rng(1)
RTOL = 1e-5  # f32 sums of at most 64 products against float64


def close(got, want, what, rtol=RTOL):
    assert_close(got, want, what, rtol)


def vi(name, elt, shape):
    return h.make_tensor_value_info(name, elt, shape)


# --- An RNN as a Scan over a symbolic, batch-major sequence ---------------
BATCH, IN, HID = 3, 8, 64
W = (rng.standard_normal((IN, HID)) * 0.3).astype(np.float32)
U = (rng.standard_normal((HID, HID)) / np.sqrt(HID)).astype(np.float32)
V = (rng.standard_normal((IN, HID)) * 0.3).astype(np.float32)

# body(h, xt, rt): h2 = tanh(xt W + h U + rt V); outputs y = relu(h2),
# z = h2 * 2 (on axis 1), r = h2 - 1 (reversed).
body = h.make_graph(
    [h.make_node("MatMul", ["xt", "W"], ["a"]),
     h.make_node("MatMul", ["h", "U"], ["c"]),
     h.make_node("MatMul", ["rt", "V"], ["e"]),
     h.make_node("Add", ["a", "c"], ["s"]),
     h.make_node("Add", ["s", "e"], ["s2"]),
     h.make_node("Tanh", ["s2"], ["h2"]),
     h.make_node("Relu", ["h2"], ["y"]),
     h.make_node("Add", ["h2", "h2"], ["z"]),
     h.make_node("Sub", ["h2", "one"], ["r"])],
    "body",
    [vi("h", T.FLOAT, [BATCH, HID]), vi("xt", T.FLOAT, [BATCH, IN]),
     vi("rt", T.FLOAT, [BATCH, IN])],
    [vi("h2", T.FLOAT, [BATCH, HID]), vi("y", T.FLOAT, [BATCH, HID]),
     vi("z", T.FLOAT, [BATCH, HID]), vi("r", T.FLOAT, [BATCH, HID])])
nodes = [h.make_node("Scan", ["h0", "x", "x"], ["hf", "ys", "zs", "rs"],
                     body=body, num_scan_inputs=2,
                     scan_input_axes=[1, 1], scan_input_directions=[0, 1],
                     scan_output_axes=[0, -2, 0],
                     scan_output_directions=[0, 0, 1])]
inputs = [vi("h0", T.FLOAT, [BATCH, HID]), vi("x", T.FLOAT, [BATCH, "seq", IN])]
outputs = [vi("hf", T.FLOAT, [BATCH, HID]),
           vi("ys", T.FLOAT, ["seq", BATCH, HID]),
           vi("zs", T.FLOAT, [BATCH, "seq", HID]),
           vi("rs", T.FLOAT, ["seq", BATCH, HID])]
inits = [("W", W), ("U", U), ("V", V), ("one", np.array(1, np.float32))]


def scan_ref(h0, x):
    seq = x.shape[1]
    hs = h0.astype(np.float64)
    ys, zs, rs = [], [], []
    for t in range(seq):
        hs = np.tanh(x[:, t] @ W + hs @ U + x[:, seq - 1 - t] @ V)
        ys.append(np.maximum(hs, 0))
        zs.append(hs * 2)
        rs.append(hs - 1)
    return (hs, np.stack(ys, 0), np.stack(zs, 1), np.stack(rs[::-1], 0))


path = save_onnx(work, "scan_rnn", nodes, inputs, outputs, inits, opset=16)
so = kiln.compile(path, output=path[:-5] + ".so", dims={"seq": (1, 30)})
for threads in (1, 2):
    m = kiln.load(so, threads=threads)
    for seq in (1, 6, 30):
        h0 = rng.standard_normal((BATCH, HID)).astype(np.float32)
        x = rng.standard_normal((BATCH, seq, IN)).astype(np.float32)
        got = m(h0, x)
        for g, w, name in zip(got, scan_ref(h0, x), ("hf", "ys", "zs", "rs")):
            close(g, w, f"scan {name} seq {seq} threads {threads}")
    try:
        m(np.zeros((BATCH, HID), np.float32), np.zeros((BATCH, 31, IN), np.float32))
        raise AssertionError("seq 31 ran; expected a refusal")
    except kiln.Error as e:
        assert "1..30" in str(e), e

# kiln-run takes the sequence length from the .pb files.
d = save_model(work, "scan_cli", nodes, inputs, outputs, dict(inits), opset=16)
cli_so = os.path.join(d, "model.so")
subprocess.run([compile_, os.path.join(d, "model.onnx"), "-o", cli_so,
                "--dim", "seq=1..30"], check=True, stderr=subprocess.DEVNULL)
h0 = rng.standard_normal((BATCH, HID)).astype(np.float32)
x = rng.standard_normal((BATCH, 11, IN)).astype(np.float32)
got = run_model(run_, d, cli_so, [("h0", h0), ("x", x)], threads=2)
for g, w, name in zip(got, scan_ref(h0, x), ("hf", "ys", "zs", "rs")):
    close(g, w, f"kiln-run {name}")

# --- A static Scan too long to unroll -----------------------------------------
STEPS = 60000  # x 5 body operations: past the 250,000 Kiln unrolls
sum_body = h.make_graph(
    [h.make_node("Mul", ["acc", "decay"], ["d"]),
     h.make_node("Add", ["d", "v"], ["acc2"]),
     h.make_node("Identity", ["acc2"], ["out"]),
     h.make_node("Abs", ["v"], ["av"]),
     h.make_node("Add", ["av", "acc"], ["mixed"])],
    "sum", [vi("acc", T.FLOAT, [4]), vi("v", T.FLOAT, [4])],
    [vi("acc2", T.FLOAT, [4]), vi("out", T.FLOAT, [4]),
     vi("mixed", T.FLOAT, [4])])
long_nodes = [h.make_node("Scan", ["a0", "v"], ["af", "outs", "mixes"],
                          body=sum_body, num_scan_inputs=1)]
long_path = save_onnx(
    work, "scan_long", long_nodes,
    [vi("a0", T.FLOAT, [4]), vi("v", T.FLOAT, [STEPS, 4])],
    [vi("af", T.FLOAT, [4]), vi("outs", T.FLOAT, [STEPS, 4]),
     vi("mixes", T.FLOAT, [STEPS, 4])],
    [("decay", np.array(0.999, np.float32))], opset=16)
m = compile_and_load(kiln, long_path)
a0 = rng.standard_normal(4).astype(np.float32)
v = rng.standard_normal((STEPS, 4)).astype(np.float32)
af, outs, mixes = m(a0, v)
acc = a0.astype(np.float64)
want_outs, want_mixes = np.empty((STEPS, 4)), np.empty((STEPS, 4))
for t in range(STEPS):
    want_mixes[t] = np.abs(v[t]) + acc
    acc = acc * np.float32(0.999) + v[t]
    want_outs[t] = acc
# f32 rounding of a 60,000-step recurrence with decay 0.999: the error of
# each step is damped within ~1,000 steps, so it stays near 1e3 ulps.
close(af, acc, "long scan final", rtol=1e-4)
close(outs, want_outs, "long scan outputs", rtol=1e-4)
close(mixes, want_mixes, "long scan mixed", rtol=1e-4)

# --- Refused by name ----------------------------------------------------------
two = h.make_graph(
    [h.make_node("Add", ["p", "q"], ["pq"]), h.make_node("Add", ["s", "pq"], ["s2"])],
    "two", [vi("s", T.FLOAT, [2]), vi("p", T.FLOAT, [2]), vi("q", T.FLOAT, [2])],
    [vi("s2", T.FLOAT, [2])])
bad = save_onnx(work, "scan_mismatch",
                [h.make_node("Scan", ["s0", "p", "q"], ["sf"], body=two,
                             num_scan_inputs=2, name="mismatched")],
                [vi("s0", T.FLOAT, [2]), vi("p", T.FLOAT, ["a", 2]),
                 vi("q", T.FLOAT, ["b", 2])],
                [vi("sf", T.FLOAT, [2])], opset=16)
try:
    kiln.compile(bad, output=bad[:-5] + ".so", dims={"a": (1, 8), "b": (1, 8)})
    raise AssertionError("scans of different lengths compiled")
except kiln.Error as e:
    assert "mismatched" in str(e) and "cannot prove equal" in str(e), e
print("runtime scan: ok")
