#!/usr/bin/python3
"""ONNX's transformer ops (Attention 23/24, RotaryEmbedding 23) with a
symbolic batch, sequence and past length, as opset-23 exports declare them,
and ONNX Runtime's fused BERT layer (EmbedLayerNormalization into
com.microsoft Attention with each mask form, QAttention) with a symbolic
batch and sequence, as its optimizer leaves an encoder exported with dynamic
axes:
each model compiled once with --dim ranges through kiln.compile and run at
several shapes (a past of 0, one generated token, the bounds), compared with
a float64 numpy reference written from the operator spec (bottom-right causal
alignment, grouped key/value heads, fully masked rows zero), within 1e-5 of
each output's largest magnitude. Sizes that must agree and do not (Q and K
batches) are refused at run time with a message naming the node.

usage: check_symbolic_attention.py WORKDIR PYTHONPATH
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

work, pythonpath = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

rng = np.random.default_rng(23)


def vi(name, shape, elt=T.FLOAT):
    return h.make_tensor_value_info(name, elt, shape)


def save(name, nodes, inputs, outputs, inits=(), opset=23):
    g = h.make_graph(nodes, name, inputs, outputs, list(inits))
    path = os.path.join(work, name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", opset)]), path)
    return path


def close(got, want, what):
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}"
    err = np.max(np.abs(got - want), initial=0.0)
    tol = 1e-5 * max(np.max(np.abs(want), initial=0.0), 1.0)
    assert err <= tol, f"{what}: max |error| {err:.3g} > {tol:.3g}"


def attention(q, k, v, past_k=None, past_v=None, mask=None, causal=False, nonpad=None,
              softcap=0.0):
    """The spec's Attention on 4-D [B, H, S, D] float64 arrays."""
    if past_k is not None:
        k = np.concatenate([past_k, k], axis=2)
        v = np.concatenate([past_v, v], axis=2)
    b, hq, sq, d = q.shape
    group = hq // k.shape[1]
    k = np.repeat(k, group, axis=1)
    vv = np.repeat(v, group, axis=1)
    s = (q / np.sqrt(d)) @ k.transpose(0, 1, 3, 2)
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    total = k.shape[2]
    bias = np.zeros((b, 1, sq, total))
    if mask is not None:
        m = mask if mask.dtype != bool else np.where(mask, 0.0, -np.inf)
        bias = bias + m
    i = np.arange(sq)[:, None]
    j = np.arange(total)[None, :]
    if causal:
        if nonpad is not None:
            off = (nonpad - sq)[:, None, None, None]
            bias = bias + np.where(j <= i + off, 0.0, -np.inf)
        else:
            past = 0 if past_k is None else past_k.shape[2]
            bias = bias + np.where(j <= i + past, 0.0, -np.inf)
    if nonpad is not None:
        bias = bias + np.where(j < nonpad[:, None, None, None], 0.0, -np.inf)
    s = s + bias
    top = np.max(s, axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0.0))
    p = e / np.where(e.sum(-1, keepdims=True) > 0, e.sum(-1, keepdims=True), 1.0)
    return p @ vv, k, v


def heads(x, n):
    b, s, hidden = x.shape
    return x.reshape(b, s, n, hidden // n).transpose(0, 2, 1, 3)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# 1. A decoder step as opset-23 exports write it: 3-D Q/K/V of a symbolic
# batch and sequence, grouped key/value heads (4 query heads over 2), the
# cache of a symbolic past length concatenated inside the op, bottom-right
# causal mask, present_key/present_value out.
HQ, HKV, D = 4, 2, 8
path = save(
    "decoder_step",
    [h.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "present_k", "present_v"],
                 name="attn", q_num_heads=HQ, kv_num_heads=HKV, is_causal=1)],
    [vi("q", ["b", "s", HQ * D]), vi("k", ["b", "s", HKV * D]), vi("v", ["b", "s", HKV * D]),
     vi("pk", ["b", HKV, "p", D]), vi("pv", ["b", HKV, "p", D])],
    [vi("y", None), vi("present_k", None), vi("present_v", None)])
m = kiln.load(kiln.compile(path, dims={"b": (1, 3), "s": (1, 16), "p": (0, 24)}))
for b, s, p in [(1, 1, 0), (1, 1, 9), (2, 5, 3), (3, 16, 24), (2, 16, 0)]:
    q, k, v = f32(b, s, HQ * D), f32(b, s, HKV * D), f32(b, s, HKV * D)
    pk, pv = f32(b, HKV, p, D), f32(b, HKV, p, D)
    want, wk, wv = attention(heads(q, HQ).astype(float), heads(k, HKV).astype(float),
                             heads(v, HKV).astype(float), pk.astype(float), pv.astype(float),
                             causal=True)
    y, ok, ov = m(q, k, v, pk, pv)
    close(y, want.transpose(0, 2, 1, 3).reshape(b, s, HQ * D), f"decoder y at {b}x{s}+{p}")
    close(ok, wk[:, ::HQ // HKV], f"present_key at {b}x{s}+{p}")
    close(ov, wv, f"present_value at {b}x{s}+{p}")
try:
    m(f32(2, 3, HQ * D), f32(1, 3, HKV * D), f32(1, 3, HKV * D), f32(1, HKV, 2, D),
      f32(1, HKV, 2, D))
    raise AssertionError("Attention ran with Q's batch 2 against K's batch 1")
except RuntimeError as e:
    assert "inputs sharing 'b' must agree" in str(e), e

# 2. 4-D heads with cross attention (query and key lengths independent, the
# keys' batch a symbol of its own), a float mask of run-time size
# [b, 1, s, t] added to the scores, softcap. Batches that differ at run time
# are refused by the node's guard.
path = save(
    "cross",
    [h.make_node("Attention", ["q", "k", "v", "mask"], ["y"], name="cross", softcap=3.0)],
    [vi("q", ["b", 2, "s", D]), vi("k", ["c", 2, "t", D]), vi("v", ["c", 2, "t", 6]),
     vi("mask", ["b", 1, "s", "t"])],
    [vi("y", None)])
m = kiln.load(kiln.compile(path, dims={"b": (1, 2), "c": (1, 2), "s": (1, 12), "t": (1, 20)}))
for b, s, t in [(1, 1, 1), (2, 7, 20), (1, 12, 3)]:
    q, k, v, mask = f32(b, 2, s, D), f32(b, 2, t, D), f32(b, 2, t, 6), f32(b, 1, s, t)
    want = attention(*(a.astype(float) for a in (q, k, v)), mask=mask.astype(float),
                     softcap=3.0)[0]
    close(m(q, k, v, mask)[0], want, f"cross y at {b}x{s}x{t}")
try:
    m(f32(2, 2, 3, D), f32(1, 2, 4, D), f32(1, 2, 4, 6), f32(2, 1, 3, 4))
    raise AssertionError("Attention ran with Q's batch 2 against K's batch 1")
except RuntimeError as e:
    assert "'cross' (Attention" in str(e), e

# 3. A boolean padding mask [b, 1, 1, t] with is_causal (left-padded
# prompts): rows whose keys are all masked come out zero, not NaN.
path = save(
    "padded",
    [h.make_node("Attention", ["q", "k", "v", "mask"], ["y"], name="padded", is_causal=1)],
    [vi("q", ["b", 2, "s", D]), vi("k", ["b", 2, "s", D]), vi("v", ["b", 2, "s", D]),
     vi("mask", ["b", 1, 1, "s"], T.BOOL)],
    [vi("y", None)])
m = kiln.load(kiln.compile(path, dims={"b": (1, 4), "s": (1, 10)}))
for b, s in [(1, 1), (3, 6), (4, 10)]:
    q, k, v = f32(b, 2, s, D), f32(b, 2, s, D), f32(b, 2, s, D)
    mask = np.ones((b, 1, 1, s), bool)
    for r in range(b):
        mask[r, ..., : rng.integers(0, s)] = False  # left padding
    want = attention(*(a.astype(float) for a in (q, k, v)), mask=mask, causal=True)[0]
    close(m(q, k, v, mask)[0], want, f"padded y at {b}x{s}")

# 4. Attention 24's external cache: nonpad_kv_seqlen of a symbolic batch,
# causal from each row's own offset.
path = save(
    "external_cache",
    [h.make_node("Attention", ["q", "k", "v", "", "", "", "lens"], ["y"], name="ext",
                 is_causal=1)],
    [vi("q", ["b", 2, "s", D]), vi("k", ["b", 2, "t", D]), vi("v", ["b", 2, "t", D]),
     vi("lens", ["b"], T.INT64)],
    [vi("y", None)], opset=24)
m = kiln.load(kiln.compile(path, dims={"b": (1, 3), "s": (1, 4), "t": (4, 16)}))
for b, s, t in [(1, 1, 4), (3, 4, 16), (2, 2, 9)]:
    q, k, v = f32(b, 2, s, D), f32(b, 2, t, D), f32(b, 2, t, D)
    lens = rng.integers(s, t + 1, b).astype(np.int64)
    want = attention(*(a.astype(float) for a in (q, k, v)), causal=True, nonpad=lens)[0]
    close(m(q, k, v, lens)[0], want, f"external-cache y at {b}x{s}x{t}")

# 5. RotaryEmbedding 23: 3-D X of a symbolic batch and sequence with
# position ids into constant caches (halves and interleaved pairs, a partial
# rotary dimension), and 4-D X with per-token caches of run-time size.
P, NH, HD, R = 64, 2, 8, 6
angles = np.arange(P)[:, None] * (1e-2 ** (np.arange(R // 2) / (R // 2)))[None, :]
cos_c, sin_c = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
path = save(
    "rotary",
    [h.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y%d" % i], num_heads=NH,
                 rotary_embedding_dim=R, interleaved=i) for i in (0, 1)]
    + [h.make_node("RotaryEmbedding", ["x4", "c4", "s4"], ["y4"])],
    [vi("x", ["b", "s", NH * HD]), vi("pos", ["b", "s"], T.INT64), vi("x4", ["b", NH, "s", HD]),
     vi("c4", ["b", "s", HD // 2]), vi("s4", ["b", "s", HD // 2])],
    [vi("y0", None), vi("y1", None), vi("y4", None)],
    [nh.from_array(cos_c, "cos"), nh.from_array(sin_c, "sin")])


def rotate(x, cos, sin, rotary, interleaved):
    """x [B, H, S, D]; cos/sin [B, S, rotary / 2]."""
    cos, sin = cos[:, None], sin[:, None]
    r, rest = x[..., :rotary], x[..., rotary:]
    x1, x2 = (r[..., 0::2], r[..., 1::2]) if interleaved else np.split(r, 2, axis=-1)
    a, b = cos * x1 - sin * x2, sin * x1 + cos * x2
    out = np.stack([a, b], -1).reshape(r.shape) if interleaved else np.concatenate([a, b], -1)
    return np.concatenate([out, rest], -1)


m = kiln.load(kiln.compile(path, dims={"b": (1, 3), "s": (1, 32)}))
for b, s in [(1, 1), (2, 17), (3, 32)]:
    x, x4 = f32(b, s, NH * HD), f32(b, NH, s, HD)
    pos = rng.integers(0, P, (b, s)).astype(np.int64)
    c4, s4 = f32(b, s, HD // 2), f32(b, s, HD // 2)
    y0, y1, y4 = m(x, pos, x4, c4, s4)
    for y, inter in ((y0, 0), (y1, 1)):
        want = rotate(heads(x, NH).astype(float), cos_c[pos], sin_c[pos], R, inter)
        close(y, want.transpose(0, 2, 1, 3).reshape(b, s, NH * HD),
              f"rotary interleaved={inter} at {b}x{s}")
    close(y4, rotate(x4.astype(float), c4, s4, HD, 0), f"4-D rotary at {b}x{s}")

# 6. ONNX Runtime's fused BERT layer with a symbolic batch and sequence:
# EmbedLayerNormalization (positions 0 .. S-1 from an iota of run-time
# length, the mask counted into mask_index) into com.microsoft Attention with
# those key lengths, a raw [b, s] mask, a 3-D mask, unidirectional and an
# attention_bias; QAttention on uint8 input and int8 weights. Masked scores
# get -10000 added, as ORT does.
ms = "com.microsoft"
HID, NH2, VOC, POS = 16, 2, 40, 24
emb = {"word": f32(VOC, HID), "pos": f32(POS, HID), "segtab": f32(2, HID),
       "eg": f32(HID) + 1, "eb": f32(HID)}
ws = {k: f32(HID, 3 * HID) * np.float32(0.3) for k in ("w1", "w2", "w3", "w4", "w5")}
qb = f32(3 * HID)
wq8 = rng.integers(-127, 128, (HID, 3 * HID)).astype(np.int8)
qnodes = [
    h.make_node("EmbedLayerNormalization", ["ids", "seg", "word", "pos", "segtab", "eg", "eb",
                                            "raw"], ["e", "mask_index"], domain=ms),
    h.make_node("Attention", ["e", "w1", "qb", "mask_index"], ["att_len"], domain=ms,
                num_heads=NH2),
    h.make_node("Attention", ["e", "w2", "qb", "raw"], ["att_raw"], domain=ms, num_heads=NH2),
    h.make_node("Attention", ["e", "w3", "", "mask3"], ["att_3d"], domain=ms, num_heads=NH2),
    h.make_node("Attention", ["e", "w4", "qb"], ["att_causal"], domain=ms, num_heads=NH2,
                unidirectional=1),
    h.make_node("Attention", ["e", "w5", "qb", "", "", "ab"], ["att_bias"], domain=ms,
                num_heads=NH2),
    h.make_node("QAttention", ["xq", "wq8", "qb", "xs", "wsc", "raw", "xz"], ["att_q"],
                domain=ms, num_heads=NH2),
]
outs = ["e", "mask_index", "att_len", "att_raw", "att_3d", "att_causal", "att_bias", "att_q"]
g = h.make_graph(
    qnodes, "ort_bert_symbolic",
    [vi("ids", ["b", "s"], T.INT32), vi("seg", ["b", "s"], T.INT32),
     vi("raw", ["b", "s"], T.INT32), vi("mask3", ["b", "s", "s"], T.INT32),
     vi("ab", [1, NH2, "s", "s"]), vi("xq", ["b", "s", HID], T.UINT8)],
    [vi(o, None) for o in outs],
    [nh.from_array(v, k) for k, v in list(emb.items()) + list(ws.items())]
    + [nh.from_array(qb, "qb"), nh.from_array(wq8, "wq8"),
       nh.from_array(np.array(0.02, np.float32), "xs"),
       nh.from_array(np.array(0.01, np.float32), "wsc"),
       nh.from_array(np.array(128, np.uint8), "xz")])
path = os.path.join(work, "ort_bert_symbolic.onnx")
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13), h.make_opsetid(ms, 1)]), path)


def ms_attention(x, w, bias, valid=None, extra=None):
    b, s, _ = x.shape
    qkv = x @ w.astype(float) + (0 if bias is None else bias.astype(float))
    q, k, v = (heads(t, NH2) for t in np.split(qkv, 3, axis=-1))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(HID // NH2)
    if valid is not None:
        scores = scores + np.where(valid, 0.0, -10000.0)
    if extra is not None:
        scores = scores + extra
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3).reshape(b, s, -1)


m = kiln.load(kiln.compile(path, dims={"b": (1, 3), "s": (1, POS)}))
for b, s in [(1, 1), (2, 7), (3, POS)]:
    ids = rng.integers(0, VOC, (b, s)).astype(np.int32)
    seg = rng.integers(0, 2, (b, s)).astype(np.int32)
    raw = np.ones((b, s), np.int32)
    for r in range(b):
        raw[r, rng.integers(1, s + 1):] = 0  # right padding, one token at least
    mask3 = (rng.random((b, s, s)) > 0.3).astype(np.int32)
    ab = f32(1, NH2, s, s)
    xq = rng.integers(0, 256, (b, s, HID)).astype(np.uint8)
    d = {k: v.astype(float) for k, v in emb.items()}
    esum = d["word"][ids] + d["pos"][np.arange(s)][None] + d["segtab"][seg]
    mu = esum.mean(-1, keepdims=True)
    e = (esum - mu) / np.sqrt(((esum - mu) ** 2).mean(-1, keepdims=True) + 1e-12)
    e = e * d["eg"] + d["eb"]
    keys = np.arange(s)[None, None, None, :]
    lens = raw.sum(1)
    xdq = (xq.astype(float) - 128) * 0.02
    want = {
        "e": e, "mask_index": lens,
        "att_len": ms_attention(e, ws["w1"], qb, keys < lens[:, None, None, None]),
        "att_raw": ms_attention(e, ws["w2"], qb, raw[:, None, None, :] != 0),
        "att_3d": ms_attention(e, ws["w3"], None, mask3[:, None] != 0),
        "att_causal": ms_attention(e, ws["w4"], qb, np.tril(np.ones((s, s), bool))),
        "att_bias": ms_attention(e, ws["w5"], qb, extra=ab.astype(float)),
        "att_q": ms_attention(xdq, wq8.astype(float) * 0.01, qb, raw[:, None, None, :] != 0),
    }
    for name, y in zip(outs, m(ids, seg, raw, mask3, ab, xq)):
        close(y, want[name], f"{name} at {b}x{s}")
# A sequence range past the position table is refused at compile time.
try:
    kiln.compile(path, dims={"b": (1, 3), "s": (1, POS + 1)})
    raise AssertionError("compiled a sequence range longer than the position table")
except kiln.Error as e:
    assert "(EmbedLayerNormalization" in str(e) and "up to 25 tokens" in str(e), e
print("symbolic attention: ok")
