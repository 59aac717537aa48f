#!/usr/bin/python3
"""Softmaxes large enough to be split into blocks of rows (docs/cpu-performance.md,
"Softmax in blocks of rows"): an attention's scores [2, 8, 128, 128] with
masked (-inf) keys, a row of nothing but -inf, a NaN and values near exp's
range, and rows of 1,024 ([32, 1024], blocks of 4 rows), against a float64
reference, on 1 and 3 threads; the same models compiled for
--target=cuda-emulated (whole-tensor ops, the GPU pipeline's form) give the
same bits, since both do the same arithmetic in the same order. Attention-23
over Q, K, V [1, 8, 128, 64] and MatMul-Softmax-MatMul over [2, 4, 256, 32]
(one loop over blocks of query rows) against numpy, and the same chain with
its probabilities also an output (not fused). A softmax of rows masked
whole by constants, zeroed by IsNaN/Where: exactly zero.

usage: check_softmax_rows.py WORKDIR PYTHONPATH
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
from small_onnx import assert_close, save_onnx  # noqa: E402

rng = np.random.default_rng(0)


def softmax_ref(x):
    x = x.astype(np.float64)
    m = np.max(np.where(np.isnan(x), -np.inf, x), axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):  # rows of -inf and NaN give NaN
        e = np.exp(x - m)
        return e / e.sum(-1, keepdims=True)


def only(outs):
    return outs[0] if isinstance(outs, (list, tuple)) else outs


for name, shape in [("scores", [2, 8, 128, 128]), ("long_rows", [32, 1024])]:
    path = save_onnx(work, name, [h.make_node("Softmax", ["x"], ["y"], axis=-1)],
                     [h.make_tensor_value_info("x", T.FLOAT, shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, shape)])
    cpu = kiln.compile(path, output=os.path.join(work, name + ".so"))
    emu = kiln.compile(path, output=os.path.join(work, name + ".emu.so"),
                       target="cuda-emulated")
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    rows = x.reshape(-1, shape[-1])
    rows[1, ::3] = -np.inf          # masked keys
    rows[2, :] = -np.inf            # nothing to attend to: NaN, as numpy
    rows[3, 5] = np.nan             # a NaN makes its row NaN
    rows[4, :] += 80.0              # exp(x - max) stays in range
    rows[-1, 0] = 1e30
    want = softmax_ref(x)
    whole = only(kiln.load(emu)(x))
    for threads in (1, 3):
        got = only(kiln.load(cpu, threads=threads)(x))
        assert np.array_equal(np.isnan(got), np.isnan(want)), name
        ok = ~np.isnan(want)
        assert_close(got[ok], want[ok], f"{name} threads={threads}", 1e-5)
        assert np.array_equal(got, whole, equal_nan=True), \
            f"{name} threads={threads}: differs from the whole-tensor form"

# Attention-23 (opset 23): softmax(Q K^T / sqrt(64)) V.
qkv = [rng.standard_normal((1, 8, 128, 64)).astype(np.float32) for _ in range(3)]
path = save_onnx(work, "attention23", [h.make_node("Attention", ["q", "k", "v"], ["y"])],
                 [h.make_tensor_value_info(n, T.FLOAT, [1, 8, 128, 64]) for n in "qkv"],
                 [h.make_tensor_value_info("y", T.FLOAT, [1, 8, 128, 64])],
                 opset=23, ir_version=10)
q, k, v = (a.astype(np.float64) for a in qkv)
want = softmax_ref(q @ k.transpose(0, 1, 3, 2) / 8.0) @ v
so = kiln.compile(path, output=os.path.join(work, "attention23.so"))
for threads in (1, 3):
    assert_close(only(kiln.load(so, threads=threads)(*qkv)), want,
                 f"attention23 threads={threads}", 1e-5)

# softmax(q kt) v written out as MatMul, Softmax, MatMul: one loop over
# blocks of query rows (the scores never stored whole). With the
# probabilities also a graph output the chain is not fused: the softmax
# in row blocks and two products.
q = rng.standard_normal((2, 4, 256, 32)).astype(np.float32)
kt = rng.standard_normal((2, 4, 32, 256)).astype(np.float32)
v = rng.standard_normal((2, 4, 256, 32)).astype(np.float32)
p64 = softmax_ref(q.astype(np.float64) @ kt)
want = p64 @ v
for name, outs in [("chain", ["y"]), ("chain_probs", ["y", "p"])]:
    path = save_onnx(work, name, [h.make_node("MatMul", ["q", "kt"], ["s"]),
                                  h.make_node("Softmax", ["s"], ["p"], axis=-1),
                                  h.make_node("MatMul", ["p", "v"], ["y"])],
                     [h.make_tensor_value_info("q", T.FLOAT, q.shape),
                      h.make_tensor_value_info("kt", T.FLOAT, kt.shape),
                      h.make_tensor_value_info("v", T.FLOAT, v.shape)],
                     [h.make_tensor_value_info(o, T.FLOAT, None) for o in outs])
    so = kiln.compile(path, output=os.path.join(work, name + ".so"))
    for threads in (1, 3):
        got = kiln.load(so, threads=threads)(q, kt, v)
        got = got if isinstance(got, (list, tuple)) else [got]
        assert_close(got[0], want, f"{name} threads={threads}", 1e-5)
        if len(outs) == 2:
            assert_close(got[1], p64, f"{name} probabilities threads={threads}", 1e-5)
# Elementwise ops between the products and the softmax run on each block
# of query rows too: BERT's scale and additive mask [batch, 1, 1, keys]
# (the mask read per batch, an Add that reads the scores second), a
# soft cap (Div, Tanh, Mul), and two attentions in a row, the first's
# output the second's scores (one chain each, not one chain of both).
q = rng.standard_normal((2, 4, 128, 32)).astype(np.float32)
kt = rng.standard_normal((2, 4, 32, 128)).astype(np.float32)
v = rng.standard_normal((2, 4, 128, 32)).astype(np.float32)
mask = np.zeros((2, 1, 1, 128), np.float32)
mask[1, ..., 100:] = -10000.0
scores = q.astype(np.float64) @ kt
keep = rng.random((128, 1)) < 0.9
heads = np.array([0.5, 1.0, 2.0, -1.0], np.float32).reshape(1, 4, 1, 1)
cases = {
    "bert_mask": ([h.make_node("MatMul", ["q", "kt"], ["s"]),
                   h.make_node("Div", ["s", "scale"], ["s1"]),
                   h.make_node("Add", ["mask", "s1"], ["s2"]),
                   h.make_node("Softmax", ["s2"], ["p"], axis=-1),
                   h.make_node("MatMul", ["p", "v"], ["y"])],
                  [("scale", np.array(8.0, np.float32)), ("mask", mask)],
                  softmax_ref(scores / 8.0 + mask) @ v),
    "soft_cap": ([h.make_node("MatMul", ["q", "kt"], ["s"]),
                  h.make_node("Div", ["s", "cap"], ["s1"]),
                  h.make_node("Tanh", ["s1"], ["s2"]),
                  h.make_node("Mul", ["s2", "cap"], ["s3"]),
                  h.make_node("Softmax", ["s3"], ["p"], axis=-1),
                  h.make_node("MatMul", ["p", "v"], ["y"])],
                 [("cap", np.array(5.0, np.float32))],
                 softmax_ref(np.tanh(scores / 5.0) * 5.0) @ v),
    # Three ops before the softmax and two after (a list of chain ops past
    # SmallVector's inline size: the lowering once read it after freeing).
    "long_chain": ([h.make_node("MatMul", ["q", "kt"], ["s"]),
                    h.make_node("Mul", ["s", "inv"], ["s1"]),
                    h.make_node("Add", ["s1", "mask"], ["s2"]),
                    h.make_node("Max", ["floor", "s2"], ["s3"]),
                    h.make_node("Softmax", ["s3"], ["p"], axis=-1),
                    h.make_node("Where", ["keep", "p", "zero"], ["p1"]),
                    h.make_node("Mul", ["p1", "heads"], ["p2"]),
                    h.make_node("MatMul", ["p2", "v"], ["y"])],
                   [("inv", np.array(0.125, np.float32)), ("mask", mask),
                    ("floor", np.array(-50.0, np.float32)), ("keep", keep),
                    ("zero", np.array(0.0, np.float32)), ("heads", heads)],
                   (np.where(keep, softmax_ref(np.maximum(-50.0, scores * 0.125 + mask)),
                             0.0) * heads) @ v),
}
for name, (nodes, inits, want) in cases.items():
    path = save_onnx(work, name, nodes,
                     [h.make_tensor_value_info("q", T.FLOAT, q.shape),
                      h.make_tensor_value_info("kt", T.FLOAT, kt.shape),
                      h.make_tensor_value_info("v", T.FLOAT, v.shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    so = kiln.compile(path, output=os.path.join(work, name + ".so"))
    for threads in (1, 3):
        assert_close(only(kiln.load(so, threads=threads)(q, kt, v)), want,
                     f"{name} threads={threads}", 1e-5)

w = rng.standard_normal((2, 4, 128, 128)).astype(np.float32)
path = save_onnx(work, "two_in_a_row",
                 [h.make_node("MatMul", ["q", "kt"], ["s"]),
                  h.make_node("Softmax", ["s"], ["p"], axis=-1),
                  h.make_node("MatMul", ["p", "w"], ["s2"]),
                  h.make_node("Softmax", ["s2"], ["p2"], axis=-1),
                  h.make_node("MatMul", ["p2", "v"], ["y"])],
                 [h.make_tensor_value_info("q", T.FLOAT, q.shape),
                  h.make_tensor_value_info("kt", T.FLOAT, kt.shape),
                  h.make_tensor_value_info("w", T.FLOAT, w.shape),
                  h.make_tensor_value_info("v", T.FLOAT, v.shape)],
                 [h.make_tensor_value_info("y", T.FLOAT, None)])
so = kiln.compile(path, output=os.path.join(work, "two_in_a_row.so"))
want = softmax_ref(softmax_ref(scores) @ w) @ v
for threads in (1, 3):
    assert_close(only(kiln.load(so, threads=threads)(q, kt, w, v)), want,
                 f"two_in_a_row threads={threads}", 1e-5)

# Attention-23 with a boolean mask per batch (a row of batch 1 masks every
# key: a zero row, by the opset-23 spec) and causal: the masks and the
# zeroing of fully masked rows on each block.
qkv = [rng.standard_normal((2, 4, 128, 32)).astype(np.float32) for _ in range(3)]
allowed = rng.random((2, 1, 128, 128)) < 0.7
allowed[1, 0, 5, :] = False
q, k, v = (a.astype(np.float64) for a in qkv)
raw = q @ k.transpose(0, 1, 3, 2) / np.sqrt(32.0)
causal = np.tril(np.ones((128, 128), bool))
for name, keep, attrs, extra in [("attention23_mask", allowed, {}, [allowed]),
                                 ("attention23_causal", causal,
                                  {"is_causal": 1}, [])]:
    ins = ["q", "k", "v"] + (["m"] if extra else [])
    path = save_onnx(work, name, [h.make_node("Attention", ins, ["y"], **attrs)],
                     [h.make_tensor_value_info(n, T.FLOAT, [2, 4, 128, 32])
                      for n in "qkv"] +
                     ([h.make_tensor_value_info("m", T.BOOL, allowed.shape)]
                      if extra else []),
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 4, 128, 32])],
                     opset=23, ir_version=10)
    p = softmax_ref(np.where(keep, raw, -np.inf))
    want = np.nan_to_num(p, nan=0.0) @ v
    so = kiln.compile(path, output=os.path.join(work, name + ".so"))
    for threads in (1, 3):
        got = only(kiln.load(so, threads=threads)(*qkv, *extra))
        assert_close(got, want, f"{name} threads={threads}", 1e-5)
        if extra:
            assert not got[1, :, 5].any(), f"{name}: the fully masked row"

# A mask that hides every key, as constants (a fuzz model's Where of an
# all-false mask): the scores fold to -inf, the softmax to NaN, and
# IsNaN/Where zero it before the product. exp(-inf - -inf) is then a NaN
# LLVM sees coming; the polynomial's conversion of it to an integer was
# poison, and LLVM dropped the stores, leaving old arena bytes in the output.
xs = rng.standard_normal((2, 4, 13)).astype(np.float32)
wv = rng.standard_normal((13, 4)).astype(np.float32)
nodes = [
    h.make_node("MatMul", ["x", "wv"], ["v"]),
    h.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
    h.make_node("MatMul", ["x", "xt"], ["s"]),
    h.make_node("Where", ["none", "s", "neg"], ["masked"]),
    h.make_node("Softmax", ["masked"], ["p"], axis=-1),
    h.make_node("IsNaN", ["p"], ["nan"]),
    h.make_node("Where", ["nan", "zero", "p"], ["p0"]),
    h.make_node("MatMul", ["p0", "v"], ["y"]),
]
for outputs in (["y", "p0"], ["p0"], ["y"]):
    sub = save_onnx(work, "masked_whole_" + "_".join(outputs), nodes,
                    [h.make_tensor_value_info("x", T.FLOAT, [2, 4, 13])],
                    [h.make_tensor_value_info(o, T.FLOAT, [2, 4, 4])
                     for o in outputs],
                    [("wv", wv), ("none", np.zeros((1, 1, 4), bool)),
                     ("neg", np.array(-np.inf, np.float32)),
                     ("zero", np.array(0.0, np.float32))], opset=18)
    got = kiln.load(kiln.compile(sub, output=sub[:-5] + ".so"))(xs)
    for o, g in zip(outputs, got):
        assert np.array_equal(g, np.zeros((2, 4, 4), np.float32)), \
            ("masked_whole", outputs, o, g)
print("softmax rows: all checks passed")
