#!/usr/bin/python3
"""Recurrent layers with a symbolic batch and sequence length (docs/shapes.md,
"Recurrent layers of run-time length"): one .so per model, run at several
shapes in range against torch (or a float64 numpy reference where torch has
no equivalent), and refused past the bounds.

- torch.nn.LSTM, GRU and RNN (2 layers, bidirectional, batch_first) exported
  with dynamic_axes on batch and sequence: the ONNX LSTM/GRU/RNN nodes run as
  a loop over the run-time sequence, with a run-time batch.
- The same LSTM with only the batch symbolic (the sequence unrolled) and a
  GRU with only the sequence symbolic.
- ONNX LSTMs written by hand with sequence_lens and initial states given
  at run time, forward and bidirectional, against a numpy LSTM; a reverse GRU whose initial
  state names another dim_param than X's batch (a run-time guard).
- A torch.jit.script LSTMCell loop (an ONNX Loop around an LSTM node) with a
  symbolic batch and sequence: its per-step outputs are stacked as a scan
  output of run-time shape.

usage: check_symbolic_recurrent.py KILN_COMPILE KILN_RUN WORKDIR PYTHONPATH
"""
import os
import sys

import numpy as np
import torch
from onnx import TensorProto as T
from onnx import helper as h

compile_, run_, work, pythonpath = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scripted_lstm import ScriptedLSTM  # noqa: E402
from small_onnx import assert_close, compile_and_load, save_onnx  # noqa: E402

# f32 recurrences over up to 40 steps against torch's f32 (or float64):
# the error grows with the steps through tanh/sigmoid, which contract it.
RTOL = 2e-5


def first(out):
    return out[0] if isinstance(out, (list, tuple)) else out


class Layers(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(16, 32, num_layers=2, batch_first=True,
                        bidirectional=True)

    def forward(self, x):
        return self.rnn(x)[0]


def export(module, name, axes, example):
    path = os.path.join(work, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(module, (example,), path, input_names=["x"],
                          output_names=["y"],
                          dynamic_axes={"x": axes, "y": axes},
                          opset_version=17)
    return path


def refused(m, x, words):
    try:
        m(x)
    except kiln.Error as e:
        assert words in str(e), (words, str(e))
        return
    raise AssertionError(f"a shape out of range was accepted: {x.shape}")


# --- nn.LSTM / GRU / RNN with a symbolic batch and sequence ----------------
for cell in (torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN):
    torch.manual_seed(0)
    module = Layers(cell).eval()
    name = cell.__name__.lower()
    path = export(module, name, {0: "batch", 1: "seq"}, torch.randn(2, 7, 16))
    m = compile_and_load(kiln, path, dims={"batch": (1, 8), "seq": (1, 40)})
    for b, t in ((1, 1), (2, 7), (3, 40), (8, 13), (8, 40)):
        x = torch.randn(b, t, 16)
        with torch.no_grad():
            want = module(x).numpy().astype(np.float64)
        assert_close(first(m(x.numpy())), want, f"{name} b={b} t={t}", RTOL)
    refused(m, np.zeros((2, 41, 16), np.float32), "outside the range 1..40")

# Only the batch symbolic (the sequence of 7 is unrolled), and only the
# sequence symbolic.
torch.manual_seed(1)
module = Layers(torch.nn.LSTM).eval()
path = export(module, "lstm_batch", {0: "batch"}, torch.randn(2, 7, 16))
m = compile_and_load(kiln, path, dims={"batch": (1, 16)})
for b in (1, 5, 16):
    x = torch.randn(b, 7, 16)
    with torch.no_grad():
        want = module(x).numpy().astype(np.float64)
    assert_close(first(m(x.numpy())), want, f"lstm batch {b}", RTOL)
module = Layers(torch.nn.GRU).eval()
path = export(module, "gru_seq", {1: "seq"}, torch.randn(3, 7, 16))
m = compile_and_load(kiln, path, dims={"seq": (1, 64)})
for t in (1, 9, 64):
    x = torch.randn(3, t, 16)
    with torch.no_grad():
        want = module(x).numpy().astype(np.float64)
    assert_close(first(m(x.numpy())), want, f"gru seq {t}", RTOL)

# --- ONNX LSTMs with run-time sequence_lens and initial states -----------
rng = np.random.default_rng(3)
IN, HID = 6, 10
W = rng.standard_normal((2, 4 * HID, IN)).astype(np.float32) * 0.4
R = rng.standard_normal((2, 4 * HID, HID)).astype(np.float32) * 0.3
B = rng.standard_normal((2, 8 * HID)).astype(np.float32) * 0.2


def lstm_ref(x, lens, h, c, d=0):
    """ONNX LSTM direction d (0 forward, 1 reverse; default activations,
    gates i o f c) in float64, as ONNX Runtime runs sequence_lens: a batch
    entry runs only at t < its length (going forward it then keeps its
    state, in reverse it keeps its initial state until then), its output
    is 0 elsewhere, and an entry of length 0 ends with zero states."""
    w, r = W[d].astype(np.float64), R[d].astype(np.float64)
    bias = B[d, :4 * HID].astype(np.float64) + B[d, 4 * HID:]
    h, c = h[d].astype(np.float64), c[d].astype(np.float64)
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    ys = np.zeros((x.shape[0], 1) + h.shape)
    steps = range(x.shape[0])
    for t in (reversed(steps) if d else steps):
        g = x[t] @ w.T + h @ r.T + bias
        i, o, f, cc = np.split(g, 4, axis=1)
        c2 = sig(f) * c + sig(i) * np.tanh(cc)
        h2 = sig(o) * np.tanh(c2)
        run = (t < lens)[:, None]
        h, c = np.where(run, h2, h), np.where(run, c2, c)
        ys[t, 0] = np.where(run, h2, 0)
    ran = (lens > 0)[:, None]
    return ys, np.where(ran, h, 0)[None], np.where(ran, c, 0)[None]


def bidirectional_ref(x, lens, h, c):
    fw, bw = lstm_ref(x, lens, h, c, 0), lstm_ref(x, lens, h, c, 1)
    return [np.concatenate(p, axis=1 if i == 0 else 0)
            for i, p in enumerate(zip(fw, bw))]


for direction, dirs, ref in (("forward", 1, lstm_ref),
                             ("bidirectional", 2, bidirectional_ref)):
    path = save_onnx(
        work, "lstm_lens_" + direction,
        [h.make_node("LSTM", ["x", "W", "R", "B", "lens", "h0", "c0"],
                     ["y", "yh", "yc"], hidden_size=HID, direction=direction,
                     name="the_lstm")],
        [h.make_tensor_value_info("x", T.FLOAT, ["seq", "batch", IN]),
         h.make_tensor_value_info("lens", T.INT32, ["batch"]),
         h.make_tensor_value_info("h0", T.FLOAT, [dirs, "batch", HID]),
         h.make_tensor_value_info("c0", T.FLOAT, [dirs, "batch", HID])],
        [h.make_tensor_value_info("y", T.FLOAT, None),
         h.make_tensor_value_info("yh", T.FLOAT, None),
         h.make_tensor_value_info("yc", T.FLOAT, None)],
        [("W", W[:dirs]), ("R", R[:dirs]), ("B", B[:dirs])], opset=14)
    m = compile_and_load(kiln, path, dims={"batch": (1, 6), "seq": (1, 30)})
    for t, b in ((1, 1), (12, 4), (30, 6)):
        x = rng.standard_normal((t, b, IN)).astype(np.float32)
        lens = rng.integers(0, t + 1, size=b).astype(np.int32)
        lens[0] = 0 if b > 1 else lens[0]  # an entry that never runs
        h0 = rng.standard_normal((dirs, b, HID)).astype(np.float32)
        c0 = rng.standard_normal((dirs, b, HID)).astype(np.float32)
        got = m(x, lens, h0, c0)
        for g, w, what in zip(got, ref(x, lens, h0, c0), ("y", "yh", "yc")):
            assert_close(g, w, f"{direction} lstm with lens {what} t={t} b={b}",
                         RTOL)
# Initial states of another batch than X's are refused (the shared
# dim_param 'batch' disagrees).
try:
    m(np.zeros((3, 2, IN), np.float32), np.ones(2, np.int32),
      np.zeros((2, 3, HID), np.float32), np.zeros((2, 3, HID), np.float32))
    raise AssertionError("initial states of batch 3 for X of batch 2 ran")
except kiln.Error as e:
    assert "batch" in str(e) and "3" in str(e), str(e)

# A reverse GRU whose initial state names another dim_param than X's batch:
# a guard checks at run time that they agree.
GW = rng.standard_normal((1, 3 * HID, IN)).astype(np.float32) * 0.4
GR = rng.standard_normal((1, 3 * HID, HID)).astype(np.float32) * 0.3


def gru_reverse_ref(x, hh):
    """ONNX GRU (reverse, no bias, linear_before_reset 0, gates z r h)."""
    w, r = GW[0].astype(np.float64), GR[0].astype(np.float64)
    hh = hh[0].astype(np.float64)
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    ys = np.zeros((x.shape[0], 1) + hh.shape)
    for t in reversed(range(x.shape[0])):
        xz, xr, xh = np.split(x[t] @ w.T, 3, axis=1)
        rz, rr, rh = np.split(r, 3, axis=0)
        z, rg = sig(xz + hh @ rz.T), sig(xr + hh @ rr.T)
        hh = (1 - z) * np.tanh(xh + (rg * hh) @ rh.T) + z * hh
        ys[t, 0] = hh
    return ys


path = save_onnx(
    work, "gru_reverse",
    [h.make_node("GRU", ["x", "W", "R", "", "", "h0"], ["y"], hidden_size=HID,
                 direction="reverse", name="the_gru")],
    [h.make_tensor_value_info("x", T.FLOAT, ["seq", "batch", IN]),
     h.make_tensor_value_info("h0", T.FLOAT, [1, "other", HID])],
    [h.make_tensor_value_info("y", T.FLOAT, None)],
    [("W", GW), ("R", GR)], opset=14)
m = compile_and_load(kiln, path,
                     dims={"batch": (1, 4), "seq": (1, 9), "other": (1, 4)})
for t, b in ((1, 1), (9, 3)):
    x = rng.standard_normal((t, b, IN)).astype(np.float32)
    h0 = rng.standard_normal((1, b, HID)).astype(np.float32)
    assert_close(first(m(x, h0)), gru_reverse_ref(x, h0), f"gru {t} {b}",
                 RTOL)
try:
    m(np.zeros((3, 2, IN), np.float32), np.zeros((1, 3, HID), np.float32))
    raise AssertionError("an initial state of batch 3 for X of batch 2 ran")
except kiln.Error as e:
    assert "node 'the_gru' (GRU, opset 14): the initial state's batch and " \
        "X's batch (other and batch) differ" in str(e), str(e)


# --- torch.jit.script of an LSTMCell loop, symbolic batch and sequence ---
torch.manual_seed(2)
scripted = torch.jit.script(ScriptedLSTM())
path = os.path.join(work, "scripted_lstm.onnx")
with torch.no_grad():
    torch.onnx.export(scripted, (torch.randn(7, 2, 16),), path,
                      input_names=["x"], output_names=["y", "h"],
                      dynamic_axes={"x": {0: "seq", 1: "batch"},
                                    "y": {0: "seq", 1: "batch"},
                                    "h": {0: "batch"}},
                      opset_version=17)
m = compile_and_load(kiln, path, dims={"seq": (1, 50), "batch": (1, 8)})
for t, b in ((1, 1), (7, 2), (50, 8), (13, 5)):
    x = torch.randn(t, b, 16)
    with torch.no_grad():
        want_y, want_h = scripted(x)
    y, hh = m(x.numpy())
    assert_close(y, want_y.numpy().astype(np.float64), f"scripted y {t} {b}",
                 RTOL)
    assert_close(hh, want_h.numpy().astype(np.float64), f"scripted h {t} {b}",
                 RTOL)
refused(m, np.zeros((4, 9, 16), np.float32), "outside the range 1..8")
print("symbolic recurrent layers: ok")
