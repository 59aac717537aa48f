#!/usr/bin/python3
"""STFT and the inverse onesided DFT (IRFFT) against numpy's FFTs in float64
(docs/ops.md, Signal.cpp), the way audio front ends write them by hand
(torch 1.13 does not export torch.stft):

- STFT of a real signal with a constant step and a Hann window, onesided;
  with the step given at run time (the declared output fixes the frame
  count; a step giving another count is refused naming the input); a
  complex signal with a run-time window, two-sided.
- DFT (opsets 17 and 20) with inverse=1 and onesided=1: n / 2 + 1 bins to a
  real signal of 2 * (bins - 1) samples, or of a given odd or longer
  dft_length (bins truncated or zero-padded as numpy.fft.irfft does).
- MelWeightMatrix with constant inputs (computed at compile time) against
  ONNX's definition written out in numpy, exactly, and applied by a MatMul.
- What is refused: RFFT of a complex signal, a frame longer than the signal,
  a MelWeightMatrix whose bands pass the spectrum or whose inputs are not
  constants.

usage: check_signal.py WORKDIR PYTHONPATH
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
from small_onnx import assert_close, compile_and_load, save_onnx  # noqa: E402

# Sums of up to 64 float32 products against float64: relative to the
# largest output magnitude.
RTOL = 2e-5
rng = np.random.default_rng(7)


def frames_of(x, n, step):
    """[batch, frames, n] windows of a [batch, length] signal."""
    count = (x.shape[1] - n) // step + 1
    return np.stack([x[:, f * step:f * step + n] for f in range(count)], 1)


def stacked(c):
    """Complex array -> [..., 2] of real and imaginary parts."""
    return np.stack([c.real, c.imag], -1)


def stft_model(name, inputs, onesided, inits, declared=None):
    ins = [i if isinstance(i, str) else i.name for i in inputs]
    return save_onnx(
        work, name,
        [h.make_node("STFT", ins, ["y"], onesided=onesided, name="stft")],
        [i for i in inputs if not isinstance(i, str)],
        [h.make_tensor_value_info("y", T.FLOAT, declared)], inits, opset=17)


# --- STFT: constant step, Hann window, real signal, onesided -------------
N, STEP = 64, 16
hann = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N) / N)).astype(np.float32)
path = stft_model(
    "stft_hann",
    [h.make_tensor_value_info("x", T.FLOAT, [2, 300, 1]), "step", "window"], 1,
    [("step", np.array(STEP, np.int64)), ("window", hann)])
m = compile_and_load(kiln, path)
x = rng.standard_normal((2, 300, 1)).astype(np.float32)
want = stacked(np.fft.rfft(frames_of(x[..., 0].astype(np.float64), N, STEP) *
                           hann, axis=-1))
assert_close(m(x)[0], want, "stft hann", RTOL)

# --- STFT: the step at run time, frame_length constant, two-sided ---------
path = stft_model(
    "stft_runtime_step",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 100, 1]),
     h.make_tensor_value_info("step", T.INT64, []), "", "length"], 0,
    [("length", np.array(32, np.int64))], declared=[1, 7, 32, 2])
m = compile_and_load(kiln, path)
x = rng.standard_normal((1, 100, 1)).astype(np.float32)
for step in (10, 11):  # (100 - 32) // step + 1 = 7 frames either way
    want = stacked(np.fft.fft(frames_of(x[..., 0].astype(np.float64), 32, step),
                              axis=-1))
    assert_close(m(x, np.array(step, np.int64))[0], want, f"stft step {step}",
                 RTOL)
try:
    m(x, np.array(8, np.int64))
    raise AssertionError("a step giving 9 frames ran")
except kiln.Error as e:
    assert "node 'stft' (STFT, opset 17)" in str(e) and "step" in str(e) \
        and "7 frames" in str(e), str(e)

# --- STFT: complex signal, window at run time, two-sided -----------------
path = stft_model(
    "stft_complex",
    [h.make_tensor_value_info("x", T.FLOAT, [3, 50, 2]), "step",
     h.make_tensor_value_info("window", T.FLOAT, [20])], 0,
    [("step", np.array(10, np.int64))])
m = compile_and_load(kiln, path)
x = rng.standard_normal((3, 50, 2)).astype(np.float32)
w = rng.uniform(0, 1, 20).astype(np.float32)
signal = x[..., 0].astype(np.float64) + 1j * x[..., 1]
want = stacked(np.fft.fft(frames_of(signal, 20, 10) * w, axis=-1))
assert_close(m(x, w)[0], want, "stft complex", RTOL)

# --- IRFFT: DFT inverse onesided ------------------------------------------
spectrum = rng.standard_normal((3, 9, 4, 2)).astype(np.float32)
bins = spectrum[..., 0].astype(np.float64) + 1j * spectrum[..., 1]
for opset, length in ((17, None), (20, None), (20, 15), (20, 20)):
    inputs, inits, attrs = ["x"], [], {"inverse": 1, "onesided": 1}
    if length is not None:
        inputs.append("n")
        inits.append(("n", np.array(length, np.int64)))
    if opset >= 20:
        inputs += [""] * (2 - len(inputs)) + ["axis"]
        inits.append(("axis", np.array(1, np.int64)))
    else:
        attrs["axis"] = 1
    path = save_onnx(
        work, f"irfft_{opset}_{length}",
        [h.make_node("DFT", inputs, ["y"], name="dft", **attrs)],
        [h.make_tensor_value_info("x", T.FLOAT, [3, 9, 4, 2])],
        [h.make_tensor_value_info("y", T.FLOAT, None)], inits, opset=opset)
    got = compile_and_load(kiln, path)(spectrum)[0]
    want = np.fft.irfft(bins, n=length, axis=1)[..., None]
    assert_close(got, want, f"irfft opset {opset} n={length}", RTOL)


# --- MelWeightMatrix (constant inputs, as audio front ends write it) --------
def mel_weights(mels, dft, rate, lower, upper):
    """ONNX's definition: num_mel_bins + 2 edges evenly spaced on the mel
    scale, each at spectrogram bin floor((dft + 1) f / rate), triangles
    peaking at 1 between them."""
    def mel(f):
        return 2595.0 * np.log10(1.0 + f / 700.0)
    step = (mel(upper) - mel(lower)) / (mels + 2)
    hz = 700.0 * (10.0 ** ((np.arange(mels + 2) * step + mel(lower)) / 2595.0) - 1.0)
    edge = np.floor((dft + 1) * hz / rate).astype(np.int64)
    w = np.zeros((dft // 2 + 1, mels))
    for i in range(mels):
        left, center, right = edge[i], edge[i + 1], edge[i + 2]
        if center == left:
            w[center, i] = 1.0
        for j in range(left, center + 1 if center > left else left):
            w[j, i] = (j - left) / (center - left)
        for j in range(center, right):
            w[j, i] = (right - j) / (right - center)
    return w


def mel_model(name, mels, dft, rate, lower, upper, out_type=T.FLOAT):
    ints = np.int64 if mels > 16 else np.int32
    inits = [("mels", np.array(mels, ints)), ("dft", np.array(dft, ints)),
             ("rate", np.array(rate, ints)), ("lower", np.array(lower, np.float32)),
             ("upper", np.array(upper, np.float32))]
    nodes = [h.make_node("MelWeightMatrix", ["mels", "dft", "rate", "lower", "upper"],
                         ["w"], name="mel", output_datatype=out_type)]
    if out_type == T.FLOAT:
        nodes.append(h.make_node("MatMul", ["spec", "w"], ["m"], name="apply"))
    return save_onnx(work, name, nodes,
                     [h.make_tensor_value_info("spec", T.FLOAT, [5, dft // 2 + 1])],
                     [h.make_tensor_value_info("w", out_type, None)]
                     + ([h.make_tensor_value_info("m", T.FLOAT, None)]
                        if out_type == T.FLOAT else []), inits, opset=17)


# ONNX's example (its expected first rows: 1 1 0 ..., 0 0 1 1 0 ...), a
# 40-band front end at 16 kHz from 20 Hz, 80 bands of a 400-point DFT (the
# Whisper-style layout) and a float64 output.
for mels, dft, rate, lower, upper, out_type in [
        (8, 16, 8192, 0.0, 4096.0, T.FLOAT), (40, 512, 16000, 20.0, 8000.0, T.FLOAT),
        (80, 400, 16000, 0.0, 8000.0, T.FLOAT), (10, 64, 8000, 100.0, 3000.0, T.DOUBLE)]:
    path = mel_model(f"mel_{mels}_{dft}", mels, dft, rate, lower, upper, out_type)
    spec = rng.random((5, dft // 2 + 1)).astype(np.float32)
    outs = compile_and_load(kiln, path)(spec)
    want = mel_weights(mels, dft, rate, lower, upper)
    assert outs[0].shape == want.shape and np.array_equal(
        outs[0].astype(np.float64), want.astype(np.float32).astype(np.float64)
        if out_type == T.FLOAT else want), (mels, dft, np.abs(outs[0] - want).max())
    if out_type == T.FLOAT:
        assert_close(outs[1], spec.astype(np.float64) @ want, f"mel {mels}", RTOL)
assert np.array_equal(mel_weights(8, 16, 8192, 0.0, 4096.0)[:2, :4],
                      [[1, 1, 0, 0], [0, 0, 1, 1]])


# --- Refused --------------------------------------------------------------
def refused(path, words):
    try:
        kiln.compile(path)
    except kiln.Error as e:
        assert all(w in str(e) for w in words), str(e)
        return
    raise AssertionError(f"{path} compiled")


refused(save_onnx(
    work, "rfft_complex",
    [h.make_node("DFT", ["x"], ["y"], onesided=1, name="dft")],
    [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 2])],
    [h.make_tensor_value_info("y", T.FLOAT, None)], opset=17),
    ["node 'dft' (DFT, opset 17)", "RFFT", "real signal"])
refused(stft_model(
    "stft_long_frame",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 10, 1]), "step", "window"], 1,
    [("step", np.array(4, np.int64)), ("window", hann)]),
    ["node 'stft' (STFT, opset 17)", "frame length 64", "longer than the "
     "signal (10 samples)"])
refused(mel_model("mel_past_nyquist", 40, 512, 16000, 20.0, 9000.0),
        ["node 'mel' (MelWeightMatrix, opset 17)", "band edge", "past the 257 bins"])
mel_run_time = save_onnx(
    work, "mel_run_time",
    [h.make_node("MelWeightMatrix", ["mels", "dft", "rate", "lower", "upper"], ["w"],
                 name="mel")],
    [h.make_tensor_value_info("mels", T.INT32, [])],
    [h.make_tensor_value_info("w", T.FLOAT, None)],
    [("dft", np.array(16, np.int32)), ("rate", np.array(8000, np.int32)),
     ("lower", np.array(0, np.float32)), ("upper", np.array(4000, np.float32))], opset=17)
refused(mel_run_time, ["node 'mel' (MelWeightMatrix, opset 17)", "num_mel_bins",
                       "compile-time constant"])
print("signal ops: ok")
