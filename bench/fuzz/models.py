#!/usr/bin/python3
"""Random valid models, Kiln against ONNX Runtime (docs/development.md,
"Random models against ONNX Runtime").

Each seed builds one model of 4-14 nodes from a pool of the ops exporters
write (elementwise with broadcasting, MatMul, Conv, pooling, reductions,
Softmax, LayerNormalization, Transpose, Reshape, Concat, Slice with constant,
Shape-computed and data-read bounds, Gather, Pad, TopK, Where, CumSum,
Resize, Cast round trips), with symbolic dimensions (`b`, `t`, `h`, `w`,
each with a range) or static ones. The model is compiled once with
`kiln-compile --dim SYM=MIN..MAX` and run through the Python bindings at
three assignments of the symbols (the range's ends and one inside), and
every output is compared with ONNX Runtime's (onnxruntime-node, CPU, one
thread) within rtol 1e-3 and atol 1e-4 times the output's largest
magnitude. Ops whose results jump (Where on a comparison, TopK, Floor) are
only applied to values computed exactly (inputs, their slices, transposes,
...), so rounding cannot flip them.

Each seed ends in one class:
  pass      every output matched at every shape
  refused   kiln-compile refused with a diagnostic naming a node (listed,
            to be read: a valid model refused is a gap, not a crash)
  BUG       a crash, an internal error, a run error on in-range inputs, an
            output of the wrong shape or a number beyond tolerance; the
            model and the message are kept in OUT/bugs/SEED/
  skipped   ONNX Runtime itself could not run the model (a generator gap)

With --loops the pool also holds a Loop (op_loop: a trip count of at most
3 read from a shape, a carried state through a chain of ops, a scalar
accumulating its sum, the states stacked); the same seed then builds another
model, so the seeds of runs without it keep their models.

With --attention the pool also holds, eight times over, an attention whose
scores pass through a random chain of what exporters put around the softmax
(op_masked_attention: scales, additive, causal and boolean masks, a tanh
soft cap, a clamp, a bias read from the input; after the softmax a scale
or the zeroing of fully masked rows); like --loops, it changes every
seed's model.

With --declare-all the input also declares its static dimensions (channels,
features) as symbols, as tf2onnx's `unk__` dimensions and exports with
`dynamic_axes` on every axis do; each gets a range around its size and runs
at that size (the same seeds build the same graphs otherwise).

usage (from the repository root; a few seconds a seed on 2 cores):
  /usr/bin/python3 bench/fuzz/models.py --seeds 0:200 [--out /tmp/kiln-fuzz]
  /usr/bin/python3 bench/fuzz/models.py --seeds 17 --keep   # one seed, kept
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from ort import NODE_DIR, ensure_ort  # noqa: E402

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
RANGES = {"b": (1, 4), "t": (1, 24), "h": (4, 20), "w": (4, 20)}


class Tensor:
    """A value of the model: its name and its dimensions, each an int or a
    string naming a size (a symbol, or an expression of symbols that only
    equals an identically derived one); `exact` when no rounding reached
    it (comparisons on it cannot flip)."""

    def __init__(self, name, dims, exact, elem=F32):
        self.name, self.dims, self.exact, self.elem = name, list(dims), exact, elem

    @property
    def rank(self):
        return len(self.dims)


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits, self.pool = [], [], []
        self.count = 0
        self.data_sizes = 0
        self.loose = False  # float16 or quantized values: compare loosely

    def fresh(self, stem):
        self.count += 1
        return f"{stem}{self.count}"

    def const(self, array, stem="c"):
        name = self.fresh(stem)
        self.inits.append(nh.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, stem, **attrs):
        out = self.fresh(stem)
        self.nodes.append(h.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def weight(self, *shape):
        fan = max(1, int(np.prod(shape[1:])) if len(shape) > 1 else shape[0])
        w = self.rng.standard_normal(shape) / np.sqrt(fan)
        return self.const(w.astype(np.float32), "w")

    def shape_of(self, t, axis):
        """Shape(t)[axis] as a 1-element int64 tensor (an exporter's size)."""
        s = self.node("Shape", [t.name], "shape")
        return self.node("Gather", [s, self.const(np.array([axis], np.int64))],
                         "dim", axis=0)


def derived(*parts):
    return "(" + " ".join(str(p) for p in parts) + ")"


def static_dim(d):
    return isinstance(d, int)


# Each op takes the builder and a tensor, returns a new Tensor or None.
def op_unary(b, t):
    r = b.rng
    op = r.choice(["Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Erf", "Softplus",
                   "LeakyRelu", "HardSigmoid", "Sin", "Elu", "HardSwish"])
    attrs = {"alpha": 0.1} if op == "LeakyRelu" else {}
    exact = t.exact and op in ("Relu", "Abs", "Neg")
    return Tensor(b.node(op, [t.name], "u", **attrs), t.dims, exact)


def op_binary(b, t):
    r = b.rng
    same = [u for u in b.pool if u.dims == t.dims and u is not t and u.elem == F32]
    if same and r.random() < 0.5:
        other = r.choice(same)
        oname, oexact = other.name, other.exact
    else:
        # A constant broadcast against the trailing dims (1 where symbolic).
        k = r.randint(0, t.rank)
        shape = [d if static_dim(d) and r.random() < 0.7 else 1
                 for d in t.dims[t.rank - k:]]
        oname = b.const(r.standard_normal(shape).astype(np.float32)
                        if shape else np.float32(r.standard_normal()))
        oexact = True
    op = r.choice(["Add", "Sub", "Mul", "Max", "Min", "Div"])
    if op == "Div":
        a = b.node("Abs", [oname], "abs")
        oname = b.node("Add", [a, b.const(np.float32(1.0))], "den")
    exact = t.exact and oexact and op in ("Max", "Min")
    return Tensor(b.node(op, [t.name, oname], "bin"), t.dims, exact)


def op_matmul(b, t):
    if t.rank < 2 or not static_dim(t.dims[-1]):
        return None
    n = b.rng.choice([3, 5, 8, 16])
    out = b.node("MatMul", [t.name, b.weight(t.dims[-1], n)], "mm")
    if b.rng.random() < 0.5:
        out = b.node("Add", [out, b.const(b.rng.standard_normal(n).astype(np.float32))],
                     "bias")
    return Tensor(out, t.dims[:-1] + [n], False)


def op_reduce(b, t):
    if t.rank < 2:
        return None
    r = b.rng
    axis = r.randrange(t.rank)
    keep = r.random() < 0.5
    op = r.choice(["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2"])
    out = b.node(op, [t.name, b.const(np.array([axis], np.int64))], "red",
                 keepdims=int(keep))
    dims = list(t.dims)
    if keep:
        dims[axis] = 1
    else:
        del dims[axis]
    return Tensor(out, dims, t.exact and op in ("ReduceMax", "ReduceMin"))


def op_softmax(b, t):
    axis = b.rng.randrange(-t.rank, t.rank)
    op = b.rng.choice(["Softmax", "LogSoftmax"])
    return Tensor(b.node(op, [t.name], "sm", axis=axis), t.dims, False)


def op_layernorm(b, t):
    if not static_dim(t.dims[-1]):
        return None
    n = t.dims[-1]
    scale = b.const((1 + 0.1 * b.rng.standard_normal(n)).astype(np.float32))
    bias = b.const(b.rng.standard_normal(n).astype(np.float32))
    return Tensor(b.node("LayerNormalization", [t.name, scale, bias], "ln",
                         axis=-1, epsilon=1e-5), t.dims, False)


def op_transpose(b, t):
    perm = list(range(t.rank))
    b.rng.shuffle(perm)
    return Tensor(b.node("Transpose", [t.name], "tr", perm=perm),
                  [t.dims[p] for p in perm], t.exact)


def op_concat(b, t):
    same = [u for u in b.pool if u.dims == t.dims and u.elem == F32]
    other = b.rng.choice(same)
    axis = b.rng.randrange(t.rank)
    dims = list(t.dims)
    d = dims[axis]
    dims[axis] = 2 * d if static_dim(d) else derived(d, "* 2")
    return Tensor(b.node("Concat", [t.name, other.name], "cat", axis=axis), dims,
                  t.exact and other.exact)


def op_slice(b, t):
    r = b.rng
    axis = r.randrange(t.rank)
    d = t.dims[axis]
    dims = list(t.dims)
    axes = b.const(np.array([axis], np.int64))
    kind = r.choice(["const", "shape", "data", "reverse", "step"])
    if kind == "const":
        if static_dim(d):
            s = r.randrange(0, d)
            e = r.randrange(s + 1, d + 1)
            dims[axis] = e - s
        else:
            lo = RANGES[d][0] if d in RANGES else 1
            s, e = 0, r.randrange(1, lo + 1)
            dims[axis] = e if d in RANGES else derived("min", d, e)
        starts, ends = b.const(np.array([s], np.int64)), b.const(np.array([e], np.int64))
        steps = None
    elif kind == "shape":
        # x[:, 1:] and x[:, :-1] spelled with Shape, as torch exports a
        # length's arithmetic.
        n = b.shape_of(t, axis)
        if static_dim(d) and d < 2:
            return None
        if not static_dim(d) and (d not in RANGES or RANGES[d][0] < 2):
            return None
        starts = b.const(np.array([1], np.int64))
        ends = n
        dims[axis] = d - 1 if static_dim(d) else derived(d, "- 1")
        steps = None
    elif kind == "data":
        if not t.exact or t.elem != F32:
            return None
        # Keep as many leading entries as there are positive values in
        # the first line along this axis (x[..., :count]).
        flat = b.node("Flatten", [t.name], "flat", axis=0)
        pos = b.node("Greater", [flat, b.const(np.float32(0))], "pos")
        cnt = b.node("ReduceSum", [b.node("Cast", [pos], "posi", to=I64),
                                   b.const(np.array([1], np.int64))], "cnt",
                     keepdims=0)
        starts = b.const(np.array([0], np.int64))
        ends = cnt
        b.data_sizes += 1
        dims[axis] = f"data{b.data_sizes}"
        steps = None
    elif kind == "reverse":
        starts = b.const(np.array([-1], np.int64))
        ends = b.const(np.array([-(2 ** 62)], np.int64))
        steps = b.const(np.array([-1], np.int64))
    else:
        starts = b.const(np.array([0], np.int64))
        ends = b.const(np.array([2 ** 62], np.int64))
        steps = b.const(np.array([2], np.int64))
        dims[axis] = (d + 1) // 2 if static_dim(d) else derived(d, "+ 1) // 2")
    inputs = [t.name, starts, ends, axes] + ([steps] if steps else [])
    return Tensor(b.node("Slice", inputs, "sl"), dims, t.exact)


def op_reshape(b, t):
    if t.rank < 2:
        return None
    r = b.rng
    if r.random() < 0.5:
        # Merge the last two dims: [0, ..., 0, -1].
        shape = [0] * (t.rank - 2) + [-1]
        a, c = t.dims[-2], t.dims[-1]
        merged = a * c if static_dim(a) and static_dim(c) else derived(a, "*", c)
        dims = t.dims[:-2] + [merged]
    else:
        # Split a static last dim that is even: [0, ..., 0, 2, -1].
        c = t.dims[-1]
        if not static_dim(c) or c % 2:
            return None
        shape = [0] * (t.rank - 1) + [2, -1]
        dims = t.dims[:-1] + [2, c // 2]
    out = b.node("Reshape", [t.name, b.const(np.array(shape, np.int64))], "rs")
    return Tensor(out, dims, t.exact)


def op_unsqueeze(b, t):
    if t.rank >= 5:
        return None
    axis = b.rng.randrange(t.rank + 1)
    out = b.node("Unsqueeze", [t.name, b.const(np.array([axis], np.int64))], "us")
    dims = list(t.dims)
    dims.insert(axis, 1)
    return Tensor(out, dims, t.exact)


def op_gather(b, t):
    statics = [i for i, d in enumerate(t.dims) if static_dim(d) and d > 1]
    if not statics:
        return None
    axis = b.rng.choice(statics)
    n = t.dims[axis]
    k = b.rng.randint(1, 4)
    idx = np.array([b.rng.randrange(-n, n) for _ in range(k)], np.int64)
    dims = list(t.dims)
    dims[axis] = k
    return Tensor(b.node("Gather", [t.name, b.const(idx)], "ga", axis=axis), dims,
                  t.exact)


def op_conv(b, t):
    if t.rank != 4 or not static_dim(t.dims[1]):
        return None
    r = b.rng
    c = t.dims[1]
    k = r.choice([1, 3])
    stride = r.choice([1, 1, 2])
    group = c if (c > 1 and r.random() < 0.3) else 1
    co = c if group > 1 else r.choice([4, 8])
    pad = k // 2
    out = b.node("Conv", [t.name, b.weight(co, c // group, k, k),
                          b.const(r.standard_normal(co).astype(np.float32))],
                 "conv", kernel_shape=[k, k], pads=[pad] * 4,
                 strides=[stride] * 2, group=group)

    def spatial(d):
        if stride == 1:
            return d
        return (d + 1) // 2 if static_dim(d) else derived(d, "+ 1) // 2")
    return Tensor(out, [t.dims[0], co, spatial(t.dims[2]), spatial(t.dims[3])], False)


def op_pool(b, t):
    if t.rank != 4:
        return None
    r = b.rng
    if r.random() < 0.3:
        return Tensor(b.node("GlobalAveragePool", [t.name], "gap"),
                      t.dims[:2] + [1, 1], False)
    op = r.choice(["MaxPool", "AveragePool"])
    out = b.node(op, [t.name], "pool", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                 strides=[2, 2])
    sp = [(d + 1) // 2 if static_dim(d) else derived(d, "+ 1) // 2")
          for d in t.dims[2:]]
    return Tensor(out, t.dims[:2] + sp, t.exact and op == "MaxPool")


def op_pad(b, t):
    r = b.rng
    pads = [r.randint(0, 2) for _ in range(2 * t.rank)]
    mode = r.choice(["constant", "edge"])
    out = b.node("Pad", [t.name, b.const(np.array(pads, np.int64))], "pad",
                 mode=mode)
    dims = []
    for i, d in enumerate(t.dims):
        extra = pads[i] + pads[i + t.rank]
        dims.append(d + extra if static_dim(d) else
                    (d if extra == 0 else derived(d, "+", extra)))
    return Tensor(out, dims, t.exact)


def op_topk(b, t):
    if not t.exact:
        return None
    axis = b.rng.randrange(t.rank)
    d = t.dims[axis]
    if not static_dim(d) and d not in RANGES:
        return None
    hi = d if static_dim(d) else RANGES[d][0]
    if hi < 1:
        return None
    k = b.rng.randint(1, hi)
    vals = b.fresh("topk")
    idx = b.fresh("topi")
    b.nodes.append(h.make_node("TopK", [t.name, b.const(np.array([k], np.int64))],
                               [vals, idx], name=vals, axis=axis,
                               largest=b.rng.randint(0, 1)))
    dims = list(t.dims)
    dims[axis] = k
    return Tensor(vals, dims, True)


def op_where(b, t):
    if not t.exact:
        return None
    cond = b.node("Greater", [t.name, b.const(np.float32(0.25))], "gt")
    other = b.node("Mul", [t.name, b.const(np.float32(-0.5))], "neg")
    return Tensor(b.node("Where", [cond, t.name, other], "where"), t.dims, True)


def op_cumsum(b, t):
    axis = b.rng.randrange(t.rank)
    return Tensor(b.node("CumSum", [t.name, b.const(np.array(axis, np.int64))],
                         "cs", reverse=b.rng.randint(0, 1)), t.dims, False)


def op_resize(b, t):
    if t.rank != 4:
        return None
    mode = b.rng.choice(["nearest", "linear"])
    scales = b.const(np.array([1, 1, 2, 2], np.float32))
    out = b.node("Resize", [t.name, "", scales], "rz", mode=mode)
    sp = [2 * d if static_dim(d) else derived(d, "* 2") for d in t.dims[2:]]
    return Tensor(out, t.dims[:2] + sp, t.exact and mode == "nearest")


def op_cast(b, t):
    # A last-bit difference before the rounding to float16 may become one
    # float16 step after it, which a later softmax can widen.
    b.loose = True
    half = b.node("Cast", [t.name], "f16", to=TensorProto.FLOAT16)
    return Tensor(b.node("Cast", [half], "f32", to=F32), t.dims, False)


def op_attention(b, t):
    """softmax(t t^T / sqrt(d)) t over the last two dims (self-attention
    without weights): products of two activations."""
    if t.rank < 2 or t.rank > 4:
        return None
    perm = list(range(t.rank - 2)) + [t.rank - 1, t.rank - 2]
    kt = b.node("Transpose", [t.name], "kt", perm=perm)
    d = t.dims[-1]
    scores = b.node("MatMul", [t.name, kt], "qk")
    if static_dim(d):
        scores = b.node("Mul", [scores, b.const(np.float32(1 / np.sqrt(d)))], "scale")
    p = b.node("Softmax", [scores], "att", axis=-1)
    return Tensor(b.node("MatMul", [p, t.name], "pv"), t.dims, False)


def op_masked_attention(b, t):
    """Attention as exporters write it around the softmax: optional Q/K/V
    projections, then between QK^T and the softmax a chain of the ops BERT,
    T5, Gemma and opset-23 Attention put there (a scale, an additive mask,
    a causal mask, a boolean mask through Where, a tanh soft cap, a clamp,
    a bias read from the input), and after it a dropout-style scale or the
    zeroing of fully masked rows. Constant masks take a broadcastable shape
    of the scores (static sizes only); a fully masked row is kept finite
    unless it is zeroed after the softmax, as ONNX's Attention does."""
    if t.rank < 2 or t.rank > 4 or not static_dim(t.dims[-1]):
        return None
    r = b.rng
    d = t.dims[-1]
    q = k = v = t.name
    dk = dv = d
    if r.random() < 0.5:
        dk = r.choice([4, 8, 16])
        q = b.node("MatMul", [t.name, b.weight(d, dk)], "q")
        k = b.node("MatMul", [t.name, b.weight(d, dk)], "k")
    if r.random() < 0.5:
        dv = r.choice([4, 8, 16])
        v = b.node("MatMul", [t.name, b.weight(d, dv)], "v")
    perm = list(range(t.rank - 2)) + [t.rank - 1, t.rank - 2]
    s = b.node("MatMul", [q, b.node("Transpose", [k], "kt", perm=perm)], "qk")
    n = t.dims[-2]
    lead = t.dims[:-2]

    def mask_shape():
        """Trailing dims of the scores [..., n, n]: each 1 or its size."""
        dims = lead + [n, n]
        keep = r.randint(1, len(dims))
        return [dd if static_dim(dd) and r.random() < 0.6 else 1
                for dd in dims[len(dims) - keep:]]

    masked_rows = False
    for _ in range(r.randint(0, 4)):
        kind = r.choice(["scale", "scale", "add_mask", "causal", "where", "softcap",
                         "clamp", "input_bias"])
        if kind == "scale":
            op = r.choice(["Mul", "Div"])
            c = 1 / np.sqrt(dk) if op == "Mul" else np.sqrt(dk)
            s = b.node(op, [s, b.const(np.float32(c))], "scale")
        elif kind == "add_mask" and static_dim(n):
            shape = mask_shape()
            m = np.where(r.standard_normal(shape) > -0.5, 0.0, -1e4)
            s = b.node("Add", [s, b.const(m.astype(np.float32))], "mask")
        elif kind == "causal" and static_dim(n):
            m = np.triu(np.full((n, n), -np.inf), 1).astype(np.float32)
            s = b.node("Add", [b.const(m), s], "causal")
        elif kind == "where" and static_dim(n):
            shape = mask_shape()
            keep = r.standard_normal(shape) > -0.5
            if r.random() < 0.3:
                # Few keys kept: rows with none left, zeroed below.
                keep = r.standard_normal(shape) > 1.0
                fill, masked_rows = -np.inf, True
            else:
                fill = -1e4
            s = b.node("Where", [b.const(keep), s, b.const(np.float32(fill))],
                       "where")
        elif kind == "softcap":
            cap = np.float32(r.choice([5.0, 30.0]))
            s = b.node("Div", [s, b.const(cap)], "cap")
            s = b.node("Tanh", [s], "tanh")
            s = b.node("Mul", [s, b.const(cap)], "uncap")
        elif kind == "clamp":
            s = b.node(r.choice(["Max", "Min"]),
                       [s, b.const(np.float32(r.choice([-2.0, 2.0])))], "clamp")
        elif kind == "input_bias":
            # A bias computed from the input, [..., n, 1] across each row.
            red = b.node("ReduceMean", [t.name, b.const(np.array([-1], np.int64))],
                         "rowbias", keepdims=1)
            s = b.node("Add", [s, red], "bias")
    axis = -1 if r.random() < 0.9 else -2
    p = b.node("Softmax", [s], "att", axis=axis)
    if masked_rows:
        # opset-23 Attention's rule: a row with no key left is zero, not NaN.
        p = b.node("Where", [b.node("IsNaN", [p], "nan"), b.const(np.float32(0)), p],
                   "zero_rows")
    if r.random() < 0.3:
        p = b.node("Mul", [p, b.const(np.float32(r.choice([0.9, 1.25])))], "pscale")
    return Tensor(b.node("MatMul", [p, v], "pv"), t.dims[:-1] + [dv], False)


def op_split(b, t):
    axis = b.rng.randrange(t.rank)
    d = t.dims[axis]
    if not static_dim(d) or d < 2:
        return None
    first = b.rng.randint(1, d - 1)
    a, c = b.fresh("sp"), b.fresh("sp")
    b.nodes.append(h.make_node("Split", [t.name, b.const(np.array([first, d - first], np.int64))],
                               [a, c], name=a, axis=axis))
    dims = list(t.dims)
    dims[axis] = d - first
    return Tensor(c, dims, t.exact)


def op_expand(b, t):
    """Insert a unit axis in front and expand it to 3."""
    if t.rank >= 5:
        return None
    u = b.node("Unsqueeze", [t.name, b.const(np.array([0], np.int64))], "us")
    shape = b.const(np.array([3] + [1] * t.rank, np.int64))
    return Tensor(b.node("Expand", [u, shape], "ex"), [3] + t.dims, t.exact)


def op_pow_clip(b, t):
    r = b.rng
    kind = r.choice(["pow", "clip", "sqrt", "recip"])
    if kind == "pow":
        out = b.node("Pow", [t.name, b.const(np.float32(r.choice([2.0, 3.0])))], "pow")
    elif kind == "clip":
        out = b.node("Clip", [t.name, b.const(np.float32(-0.5)), b.const(np.float32(0.7))],
                     "clip")
    elif kind == "sqrt":
        out = b.node("Sqrt", [b.node("Abs", [t.name], "abs")], "sqrt")
    else:
        a = b.node("Abs", [t.name], "abs")
        out = b.node("Reciprocal", [b.node("Add", [a, b.const(np.float32(1))], "one")],
                     "recip")
    return Tensor(out, t.dims, t.exact and kind == "clip")


def op_argmax(b, t):
    if not t.exact or t.rank < 2:
        return None
    axis = b.rng.randrange(t.rank)
    op = b.rng.choice(["ArgMax", "ArgMin"])
    idx = b.node(op, [t.name], "arg", axis=axis, keepdims=1)
    dims = list(t.dims)
    dims[axis] = 1
    return Tensor(b.node("Cast", [idx], "argf", to=F32), dims, True)


def op_norm(b, t):
    if t.rank < 3 or not static_dim(t.dims[1]):
        return None
    c = t.dims[1]
    r = b.rng
    if r.random() < 0.5:
        out = b.node("BatchNormalization",
                     [t.name, b.const((1 + 0.1 * r.standard_normal(c)).astype(np.float32)),
                      b.const(r.standard_normal(c).astype(np.float32)),
                      b.const(r.standard_normal(c).astype(np.float32)),
                      b.const((1 + np.abs(r.standard_normal(c))).astype(np.float32))],
                     "bn", epsilon=1e-5)
    else:
        out = b.node("InstanceNormalization",
                     [t.name, b.const((1 + 0.1 * r.standard_normal(c)).astype(np.float32)),
                      b.const(r.standard_normal(c).astype(np.float32))], "in",
                     epsilon=1e-5)
    return Tensor(out, t.dims, False)


def op_flatten(b, t):
    if t.rank < 2:
        return None
    axis = b.rng.randint(1, t.rank - 1)
    def product(ds):
        if all(static_dim(d) for d in ds):
            return int(np.prod(ds))
        return derived(*[x for d in ds for x in (d, "*")][:-1])
    return Tensor(b.node("Flatten", [t.name], "fl", axis=axis),
                  [product(t.dims[:axis]), product(t.dims[axis:])], t.exact)


def op_convtranspose(b, t):
    if t.rank != 4 or not static_dim(t.dims[1]):
        return None
    c = t.dims[1]
    co = b.rng.choice([2, 4])
    out = b.node("ConvTranspose", [t.name, b.weight(c, co, 2, 2)], "ct",
                 kernel_shape=[2, 2], strides=[2, 2])
    sp = [2 * d if static_dim(d) else derived(d, "* 2") for d in t.dims[2:]]
    return Tensor(out, [t.dims[0], co] + sp, False)


def op_rnn(b, t):
    """LSTM or GRU over a [batch, time, features] tensor, as torch exports
    nn.LSTM(batch_first=True): Transpose to time-major, the recurrent node,
    the directions folded into the features, Transpose back."""
    if t.rank != 3 or not static_dim(t.dims[2]):
        return None
    r = b.rng
    op = r.choice(["LSTM", "GRU"])
    gates = 4 if op == "LSTM" else 3
    hidden = r.choice([4, 8])
    direction = r.choice(["forward", "forward", "reverse", "bidirectional"])
    dirs = 2 if direction == "bidirectional" else 1
    f = t.dims[2]
    xs = b.node("Transpose", [t.name], "tm", perm=[1, 0, 2])
    inputs = [xs, b.weight(dirs, gates * hidden, f), b.weight(dirs, gates * hidden, hidden)]
    if r.random() < 0.7:
        inputs.append(b.const((0.1 * r.standard_normal((dirs, 2 * gates * hidden)))
                              .astype(np.float32)))
    attrs = {"hidden_size": hidden, "direction": direction}
    if op == "GRU":
        attrs["linear_before_reset"] = r.randint(0, 1)
    y = b.node(op, inputs, "rnn", **attrs)
    y = b.node("Transpose", [y], "ytr", perm=[0, 2, 1, 3])
    y = b.node("Reshape", [y, b.const(np.array([0, 0, -1], np.int64))], "yrs")
    out = b.node("Transpose", [y], "bm", perm=[1, 0, 2])
    return Tensor(out, [t.dims[0], t.dims[1], dirs * hidden], False)


def op_gemm(b, t):
    if t.rank != 2 or not static_dim(t.dims[1]):
        return None
    r = b.rng
    n = r.choice([3, 8])
    inputs = [t.name, b.weight(n, t.dims[1])]
    if r.random() < 0.6:
        inputs.append(b.const(r.standard_normal(n).astype(np.float32)))
    out = b.node("Gemm", inputs, "gemm", transB=1, alpha=r.choice([1.0, 0.5]),
                 beta=r.choice([1.0, 2.0]))
    return Tensor(out, [t.dims[0], n], False)


def op_einsum(b, t):
    if t.rank == 3 and static_dim(t.dims[2]):
        if b.rng.random() < 0.5:
            n = b.rng.choice([4, 6])
            out = b.node("Einsum", [t.name, b.weight(t.dims[2], n)], "es",
                         equation="btf,fg->btg")
            return Tensor(out, t.dims[:2] + [n], False)
        out = b.node("Einsum", [t.name, t.name], "es", equation="bik,bjk->bij")
        return Tensor(out, [t.dims[0], t.dims[1], t.dims[1]], False)
    if t.rank == 2:
        out = b.node("Einsum", [t.name], "es", equation="ij->ji")
        return Tensor(out, [t.dims[1], t.dims[0]], t.exact)
    return None


def op_tile(b, t):
    reps = [b.rng.choice([1, 1, 2]) for _ in t.dims]
    dims = [d * k if static_dim(d) else (d if k == 1 else derived(d, "*", k))
            for d, k in zip(t.dims, reps)]
    return Tensor(b.node("Tile", [t.name, b.const(np.array(reps, np.int64))], "tile"),
                  dims, t.exact)


def op_depth_to_space(b, t):
    if t.rank != 4 or not static_dim(t.dims[1]) or t.dims[1] % 4:
        return None
    sp = [2 * d if static_dim(d) else derived(d, "* 2") for d in t.dims[2:]]
    out = b.node("DepthToSpace", [t.name], "d2s", blocksize=2,
                 mode=b.rng.choice(["DCR", "CRD"]))
    return Tensor(out, [t.dims[0], t.dims[1] // 4] + sp, t.exact)


def op_heads(b, t):
    """view(b, t, heads, -1).transpose(1, 2) with the leading sizes read by
    Shape, as torch exports a multi-head split."""
    if t.rank != 3 or not static_dim(t.dims[2]) or t.dims[2] % 2:
        return None
    shape = b.node("Concat", [b.shape_of(t, 0), b.shape_of(t, 1),
                              b.const(np.array([2, -1], np.int64))], "hshape", axis=0)
    y = b.node("Reshape", [t.name, shape], "hrs")
    out = b.node("Transpose", [y], "heads", perm=[0, 2, 1, 3])
    return Tensor(out, [t.dims[0], 2, t.dims[1], t.dims[2] // 2], t.exact)


def op_positions(b, t):
    """t + 0.1 * arange(size of an axis), broadcast along that axis (the
    position ids of a transformer export)."""
    axis = b.rng.randrange(t.rank)
    n = b.node("Squeeze", [b.shape_of(t, axis), b.const(np.array([0], np.int64))], "n")
    pos = b.node("Range", [b.const(np.array(0, np.int64)), n,
                           b.const(np.array(1, np.int64))], "range")
    pos = b.node("Cast", [pos], "posf", to=F32)
    trailing = list(range(1, t.rank - axis))
    if trailing:
        pos = b.node("Unsqueeze", [pos, b.const(np.array(trailing, np.int64))], "posu")
    pos = b.node("Mul", [pos, b.const(np.float32(0.1))], "pos")
    return Tensor(b.node("Add", [t.name, pos], "addpos"), t.dims, False)


def op_if(b, t):
    """If on a condition read from a shape (a scripted model's branch):
    `size(axis) > k`, each branch a different op on the outer tensor."""
    axis = b.rng.randrange(t.rank)
    d = t.dims[axis]
    lo, hi = (d, d) if static_dim(d) else RANGES.get(d, (1, 8))
    k = b.rng.randint(lo, hi)
    cond = b.node("Greater", [b.shape_of(t, axis), b.const(np.array([k], np.int64))], "cnd")
    cond = b.node("Squeeze", [cond, b.const(np.array([0], np.int64))], "cnds")
    then_out, else_out = b.fresh("then"), b.fresh("else")
    scale = b.const(np.float32(b.rng.choice([2.0, -1.0])))
    then_g = h.make_graph([h.make_node("Relu", [t.name], [then_out])], "then", [],
                          [h.make_tensor_value_info(then_out, F32, None)])
    else_g = h.make_graph([h.make_node("Mul", [t.name, scale], [else_out])], "else", [],
                          [h.make_tensor_value_info(else_out, F32, None)])
    return Tensor(b.node("If", [cond], "if", then_branch=then_g, else_branch=else_g),
                  t.dims, t.exact)


def op_conv1d(b, t):
    if t.rank != 3 or not static_dim(t.dims[1]):
        return None
    r = b.rng
    c = t.dims[1]
    dil = r.choice([1, 2])
    group = c if (c > 1 and r.random() < 0.3) else 1
    co = c if group > 1 else r.choice([4, 8])
    out = b.node("Conv", [t.name, b.weight(co, c // group, 3)], "conv1",
                 kernel_shape=[3], pads=[dil, dil], dilations=[dil], group=group)
    return Tensor(out, [t.dims[0], co, t.dims[2]], False)


def op_fill_like(b, t):
    """ConstantOfShape(Shape(t)) or Expand of a constant to Shape(t), then
    combined with t (torch's ones_like / expand_as)."""
    shape = b.node("Shape", [t.name], "shp")
    if b.rng.random() < 0.5:
        fill = b.node("ConstantOfShape", [shape], "cos",
                      value=nh.from_array(np.array([0.5], np.float32)))
    else:
        row = b.const(np.arange(1, 2, dtype=np.float32).reshape([1] * t.rank) * 0.25)
        fill = b.node("Expand", [row, shape], "exas")
    return Tensor(b.node("Add", [t.name, fill], "fadd"), t.dims, False)


def op_variadic(b, t):
    same = [u for u in b.pool if u.dims == t.dims and u.elem == F32]
    others = [b.rng.choice(same) for _ in range(2)]
    op = b.rng.choice(["Sum", "Mean", "Max", "Min"])
    exact = op in ("Max", "Min") and t.exact and all(o.exact for o in others)
    return Tensor(b.node(op, [t.name] + [o.name for o in others], "var"), t.dims, exact)


def op_trilu(b, t):
    if t.rank < 2:
        return None
    k = b.const(np.array(b.rng.randint(-1, 1), np.int64))
    return Tensor(b.node("Trilu", [t.name, k], "tri", upper=b.rng.randint(0, 1)),
                  t.dims, t.exact)


def op_groupnorm_torch(b, t):
    """GroupNorm as torch exported it before opset 18: Reshape to groups,
    InstanceNormalization, Reshape back to Shape(t), per-channel affine."""
    if t.rank != 4 or not static_dim(t.dims[1]) or t.dims[1] % 2:
        return None
    c = t.dims[1]
    g = 2
    y = b.node("Reshape", [t.name, b.const(np.array([0, g, -1], np.int64))], "gn_in")
    y = b.node("InstanceNormalization", [y, b.const(np.ones(g, np.float32)),
                                         b.const(np.zeros(g, np.float32))], "gn",
               epsilon=1e-5)
    y = b.node("Reshape", [y, b.node("Shape", [t.name], "gshape")], "gn_out")
    gamma = b.const((1 + 0.1 * b.rng.standard_normal((c, 1, 1))).astype(np.float32))
    beta = b.const(b.rng.standard_normal((c, 1, 1)).astype(np.float32))
    y = b.node("Mul", [y, gamma], "gmul")
    return Tensor(b.node("Add", [y, beta], "gadd"), t.dims, False)


def op_pool_attrs(b, t):
    """Pooling with the attributes exporters also write: ceil_mode,
    count_include_pad, dilations, 1-D windows."""
    if t.rank not in (3, 4):
        return None
    r = b.rng
    nsp = t.rank - 2
    op = r.choice(["MaxPool", "AveragePool"])
    k, s = r.choice([(2, 2), (3, 2), (3, 1)])
    pad = r.choice([0, 1]) if k == 3 else 0
    ceil = r.randint(0, 1)
    attrs = {"kernel_shape": [k] * nsp, "strides": [s] * nsp, "pads": [pad] * (2 * nsp),
             "ceil_mode": ceil}
    if op == "AveragePool":
        attrs["count_include_pad"] = r.randint(0, 1)
    dil = 1
    if op == "MaxPool" and r.random() < 0.3:
        dil = 2
        attrs["dilations"] = [2] * nsp
    span = dil * (k - 1) + 1

    def out_dim(d):
        if static_dim(d):
            n = d + 2 * pad - span
            if n < 0:
                return None
            q = -(-n // s) if ceil else n // s
            if ceil and q * s >= d + pad:
                q -= 1
            return q + 1
        return derived(op, d, k, s, pad, ceil, dil)
    sp = [out_dim(d) for d in t.dims[2:]]
    if any(x is None for x in sp):
        return None
    # A symbolic size smaller than the window has no output: keep the
    # windows within the smallest size in range.
    for d in t.dims[2:]:
        if not static_dim(d) and (d not in RANGES or RANGES[d][0] + 2 * pad < span):
            return None
    out = b.node(op, [t.name], "pool", **attrs)
    return Tensor(out, t.dims[:2] + sp, t.exact and op == "MaxPool")


def op_resize_modes(b, t):
    if t.rank != 4:
        return None
    r = b.rng
    mode = r.choice(["nearest", "linear", "cubic"])
    ctm = r.choice(["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"])
    attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
    if mode == "nearest":
        attrs["nearest_mode"] = r.choice(["floor", "round_prefer_floor", "ceil"])
    scales = b.const(np.array([1, 1, 2, 2], np.float32))
    out = b.node("Resize", [t.name, "", scales], "rz", **attrs)
    sp = [2 * d if static_dim(d) else derived(d, "* 2") for d in t.dims[2:]]
    return Tensor(out, t.dims[:2] + sp, False)


def op_prelu(b, t):
    if t.rank == 4 and static_dim(t.dims[1]):
        slope = (0.25 * b.rng.standard_normal((t.dims[1], 1, 1))).astype(np.float32)
    else:
        slope = np.float32(0.2)
    return Tensor(b.node("PRelu", [t.name, b.const(slope)], "prelu"), t.dims, False)


def op_half(b, t):
    """A stretch computed in float16, as fp16 converters leave a model:
    Cast to float16, an op on float16 values (constants in float16), Cast
    back. Compared loosely (float16 rounding)."""
    r = b.rng
    F16 = TensorProto.FLOAT16
    x = b.node("Cast", [t.name], "h", to=F16)
    kind = r.choice(["unary", "binary", "matmul", "softmax", "conv"])
    dims = list(t.dims)
    if kind == "unary":
        y = b.node(r.choice(["Relu", "Sigmoid", "Tanh", "Abs", "Neg"]), [x], "hu")
    elif kind == "binary":
        k = b.const(r.standard_normal(1).astype(np.float16))
        y = b.node(r.choice(["Add", "Mul", "Sub", "Max"]), [x, k], "hb")
    elif kind == "matmul":
        if t.rank < 2 or not static_dim(t.dims[-1]):
            return None
        n = r.choice([4, 8])
        w = (r.standard_normal((t.dims[-1], n)) / np.sqrt(t.dims[-1])).astype(np.float16)
        y = b.node("MatMul", [x, b.const(w, "w")], "hmm")
        dims = t.dims[:-1] + [n]
    elif kind == "softmax":
        y = b.node("Softmax", [x], "hsm", axis=-1)
    else:
        if t.rank != 4 or not static_dim(t.dims[1]):
            return None
        c = t.dims[1]
        w = (r.standard_normal((4, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float16)
        y = b.node("Conv", [x, b.const(w, "w")], "hconv", kernel_shape=[3, 3],
                   pads=[1, 1, 1, 1])
        dims = [t.dims[0], 4] + t.dims[2:]
    b.loose = True
    return Tensor(b.node("Cast", [y], "hf", to=F32), dims, False)


def op_qdq(b, t):
    """QuantizeLinear/DequantizeLinear around a MatMul or Conv, as ORT's
    quantization tool writes a QDQ model: the activation quantized to
    uint8, int8 weights dequantized per tensor. Compared loosely (one
    quantum may round either way where the activation was computed).
    Weights stay within 7 bits, as ORT's reduce_range keeps them: its AVX2
    u8 x s8 kernels add pairs of products in saturating int16
    (`vpmaddubsw`), so full-range weights give ORT wrong sums (255 * -126
    + 188 * -44 saturates); Kiln's products are exact."""
    r = b.rng
    U8, I8 = TensorProto.UINT8, TensorProto.INT8
    conv = t.rank == 4 and static_dim(t.dims[1]) and r.random() < 0.5
    if not conv and (t.rank < 2 or not static_dim(t.dims[-1])):
        return None
    s = b.const(np.float32(r.choice([0.02, 0.05])))
    zp = b.const(np.uint8(128))
    q = b.node("QuantizeLinear", [t.name, s, zp], "q")
    dq = b.node("DequantizeLinear", [q, s, zp], "dq")
    ws = b.const(np.float32(0.01))
    if conv:
        c = t.dims[1]
        w = np.array([r.randint(-64, 63) for _ in range(4 * c * 9)], np.int8)
        wdq = b.node("DequantizeLinear", [b.const(w.reshape(4, c, 3, 3), "wq"), ws,
                                          b.const(np.int8(0))], "wdq")
        y = b.node("Conv", [dq, wdq], "qconv", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        dims = [t.dims[0], 4] + t.dims[2:]
    else:
        k = t.dims[-1]
        n = r.choice([4, 8])
        w = np.array([r.randint(-64, 63) for _ in range(k * n)], np.int8)
        wdq = b.node("DequantizeLinear", [b.const(w.reshape(k, n), "wq"), ws,
                                          b.const(np.int8(0))], "wdq")
        y = b.node("MatMul", [dq, wdq], "qmm")
        dims = t.dims[:-1] + [n]
    b.loose = True
    return Tensor(y, dims, False)


def op_dynquant(b, t):
    """DynamicQuantizeLinear and MatMulInteger, as ORT's quantize_dynamic
    writes a MatMul: the product of the integers, scaled back."""
    r = b.rng
    if t.rank < 2 or not static_dim(t.dims[-1]):
        return None
    k, n = t.dims[-1], r.choice([4, 8])
    qa, sa, za = b.fresh("dq"), b.fresh("ds"), b.fresh("dz")
    b.nodes.append(h.make_node("DynamicQuantizeLinear", [t.name], [qa, sa, za], name=qa))
    w = np.array([r.randint(-64, 63) for _ in range(k * n)], np.int8).reshape(k, n)
    prod = b.node("MatMulInteger", [qa, b.const(w, "wq"), za, b.const(np.int8(0))], "mmi")
    scale = b.node("Mul", [sa, b.const(np.float32(0.01))], "scl")
    y = b.node("Mul", [b.node("Cast", [prod], "mmf", to=F32), scale], "deq")
    b.loose = True
    return Tensor(y, t.dims[:-1] + [n], False)


def op_if_chain(b, t, depth=0):
    """If whose branches are chains of ops on outer tensors, nested up to
    three deep, as scripted models write them: the condition read from a
    shape (folded where the size is static) or from the data (a real
    branch at run time), each branch keeping the input's dimensions."""
    r = b.rng
    keep = [op_unary, op_binary, op_softmax, op_layernorm, op_where, op_cumsum,
            op_pow_clip, op_norm, op_prelu, op_trilu, op_rnn_same]
    if t.exact and r.random() < 0.5:
        red = b.node("ReduceMax", [t.name], "rmax", keepdims=0)
        cond = b.node("Greater", [red, b.const(np.float32(0.5))], "dcnd")
    else:
        axis = r.randrange(t.rank)
        d = t.dims[axis]
        lo, hi = (d, d) if static_dim(d) else RANGES.get(d, (1, 8))
        cond = b.node("Greater", [b.shape_of(t, axis),
                                  b.const(np.array([r.randint(lo, hi)], np.int64))], "cnd")
        cond = b.node("Squeeze", [cond, b.const(np.array([0], np.int64))], "cnds")

    def branch(tag):
        saved, b.nodes = b.nodes, []
        cur = t
        for _ in range(r.randint(1, 3)):
            op = r.choice(keep + ([op_if_chain] if depth < 2 else []))
            made = op(b, cur, depth + 1) if op is op_if_chain else op(b, cur)
            if made is not None and made.dims == cur.dims and made.elem == F32:
                cur = made
        out = b.node("Identity", [cur.name], tag)
        nodes, b.nodes = b.nodes, saved
        return h.make_graph(nodes, tag, [], [h.make_tensor_value_info(out, F32, None)])
    then_g, else_g = branch(b.fresh("then")), branch(b.fresh("else"))
    return Tensor(b.node("If", [cond], "ifc", then_branch=then_g, else_branch=else_g),
                  t.dims, False)


def op_rnn_same(b, t):
    """op_rnn with a hidden size that keeps the features (a residual LSTM
    block inside a branch)."""
    if t.rank != 3 or not static_dim(t.dims[2]) or t.dims[2] % 2:
        return None
    f = t.dims[2]
    xs = b.node("Transpose", [t.name], "tm", perm=[1, 0, 2])
    y = b.node("LSTM", [xs, b.weight(1, 4 * f, f), b.weight(1, 4 * f, f)], "lstm",
               hidden_size=f)
    y = b.node("Squeeze", [y, b.const(np.array([1], np.int64))], "lsq")
    out = b.node("Transpose", [y], "bm", perm=[1, 0, 2])
    return Tensor(b.node("Add", [out, t.name], "res"), t.dims, False)


def op_loop(b, t):
    """A Loop as scripted models write one: the trip count read from a shape
    (at most 3, a run-time count where the size is symbolic), a state of
    t's dimensions run through a chain of ops that keep them (the iteration
    number added in), a scalar accumulating the state's sum, and the states
    stacked as a scan output."""
    r = b.rng
    keep = [op_unary, op_binary, op_softmax, op_layernorm, op_where, op_cumsum,
            op_pow_clip, op_norm, op_prelu, op_trilu, op_rnn_same]
    axis = r.randrange(t.rank)
    cap = r.randint(1, 3)
    trips = b.node("Min", [b.shape_of(t, axis), b.const(np.array([cap], np.int64))], "trip")
    trips = b.node("Squeeze", [trips, b.const(np.array([0], np.int64))], "trips")
    d = t.dims[axis]
    count = min(d, cap) if static_dim(d) else derived("min", d, cap)
    i, cond, st, acc = (b.fresh(n) for n in ("it", "cond", "st", "acc"))
    saved, b.nodes = b.nodes, []
    cur = Tensor(st, t.dims, False)
    step = b.node("Cast", [i], "itf", to=F32)
    step = b.node("Mul", [step, b.const(np.float32(0.25))], "its")
    cur = Tensor(b.node("Add", [cur.name, step], "stepped"), t.dims, False)
    for _ in range(r.randint(1, 3)):
        made = r.choice(keep)(b, cur)
        if made is not None and made.dims == cur.dims and made.elem == F32:
            cur = made
    total = b.node("ReduceSum", [cur.name], "lsum", keepdims=0)
    acc2 = b.node("Add", [acc, total], "acc")
    cond2 = b.node("Identity", [cond], "cond")
    out = b.node("Identity", [cur.name], "lstate")
    scan = r.random() < 0.5
    outs = [cond2, out, acc2] + ([b.node("Identity", [cur.name], "lscan")] if scan else [])
    nodes, b.nodes = b.nodes, saved
    vi = h.make_tensor_value_info
    body = h.make_graph(
        nodes, b.fresh("body"),
        [vi(i, TensorProto.INT64, []), vi(cond, TensorProto.BOOL, []),
         vi(st, F32, [None] * t.rank), vi(acc, F32, [])],
        [vi(cond2, TensorProto.BOOL, []), vi(out, F32, [None] * t.rank),
         vi(acc2, F32, [])] + ([vi(outs[3], F32, [None] * t.rank)] if scan else []))
    names = [b.fresh("lfinal"), b.fresh("lacc")] + ([b.fresh("lstack")] if scan else [])
    b.nodes.append(h.make_node("Loop", [trips, "", t.name, b.const(np.float32(0.0))],
                               names, name=b.fresh("loop"), body=body))
    if scan:
        b.pool.append(Tensor(names[2], [count] + list(t.dims), False))
    # The sum stays a value of its own: added to the state, a normalization
    # after it would cancel it in float32 (ORT and Kiln then round apart).
    b.pool.append(Tensor(b.node("Unsqueeze", [names[1], b.const(np.array([0], np.int64))],
                                "laccu"), [1], False))
    return Tensor(names[0], t.dims, False)


OPS = [op_unary, op_binary, op_binary, op_matmul, op_reduce, op_softmax,
       op_layernorm, op_transpose, op_concat, op_slice, op_slice, op_reshape,
       op_unsqueeze, op_gather, op_conv, op_conv, op_pool, op_pad, op_topk,
       op_where, op_cumsum, op_resize, op_cast, op_attention, op_split,
       op_expand, op_pow_clip, op_argmax, op_norm, op_flatten,
       op_convtranspose, op_rnn, op_rnn, op_gemm, op_einsum, op_tile,
       op_depth_to_space, op_heads, op_positions, op_if, op_conv1d, op_fill_like,
       op_variadic, op_trilu, op_groupnorm_torch, op_pool_attrs, op_resize_modes,
       op_prelu, op_half, op_qdq, op_dynquant, op_if_chain, op_if_chain]


def build_model(seed, declare_all=False, loops=False, attention=False):
    rng = random.Random(seed)
    b = Builder(rng)
    b.rng.standard_normal = lambda shape=(): np.random.default_rng(
        rng.randrange(2 ** 32)).standard_normal(shape)
    kind = rng.choice(["image", "sequence", "audio", "matrix"])
    symbolic = rng.random() < 0.8
    if attention and rng.random() < 0.6:
        # Heads of an encoder, [batch, heads, tokens, width], with scores
        # large enough for the attention loop (32768 elements or more).
        kind, symbolic = "heads", rng.random() < 0.3
    if kind == "heads":
        n, heads = rng.choice([(32, 16), (48, 8), (64, 4), (64, 8), (128, 2)])
        dims = ["b" if symbolic else 2, heads, n, rng.choice([8, 16, 32])]
    elif kind == "image":
        dims = ["b" if symbolic and rng.random() < 0.7 else 2, rng.choice([1, 3, 4]),
                "h" if symbolic else 9, "w" if symbolic and rng.random() < 0.7 else 7]
    elif kind == "sequence":
        dims = ["b" if symbolic and rng.random() < 0.5 else 2,
                "t" if symbolic else 11, rng.choice([4, 8, 16])]
    elif kind == "audio":
        dims = ["b" if symbolic and rng.random() < 0.5 else 2, rng.choice([2, 4, 8]),
                "t" if symbolic else 13]
    else:
        dims = ["t" if symbolic else 6, rng.choice([3, 8])]
    x = Tensor("x", dims, True)
    b.pool.append(x)
    # The graph is built on the static sizes; only the declaration changes.
    declared = [f"d{i}" if declare_all and not isinstance(d, str) else d
                for i, d in enumerate(dims)]
    inputs = [h.make_tensor_value_info("x", F32, declared)]
    for step in range(rng.randint(4, 14)):
        t = rng.choice(b.pool[-4:]) if rng.random() < 0.7 else rng.choice(b.pool)
        if kind == "heads" and step == 0:
            b.pool.append(op_masked_attention(b, x))
            continue
        ops = OPS + ([op_loop, op_loop] if loops else []) + (
            [op_masked_attention] * 8 if attention else [])
        made = rng.choice(ops)(b, t)
        if made is not None and made.rank >= 1 and all(
                not static_dim(d) or d > 0 for d in made.dims):
            b.pool.append(made)
    if len(b.pool) < 2:
        return None  # no op applied
    outs = [b.pool[-1]] + rng.sample(b.pool[1:-1], min(len(b.pool) - 2,
                                                       rng.randint(0, 2)))
    seen, outputs = set(), []
    for o in outs:
        if o.name not in seen and o.name != "x":
            seen.add(o.name)
            outputs.append(h.make_tensor_value_info(o.name, o.elem, [None] * o.rank))
    graph = h.make_graph(b.nodes, f"fuzz{seed}", inputs, outputs, b.inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    model.ir_version = 8
    syms = sorted({d for d in dims if isinstance(d, str)})
    # A declared static size: its range (one below to two above) and the
    # size every run uses.
    pinned = {n: (max(1, d - 1), d + 2) for n, d in zip(declared, dims)
              if n != d}
    return model, dims, syms, b.loose, pinned


def run_ort(model_path, x, work):
    xfile = os.path.join(work, "x.bin")
    x.tofile(xfile)
    spec = os.path.join(work, "in.json")
    with open(spec, "w") as f:
        json.dump([{"name": "x", "dtype": "float32", "shape": list(x.shape),
                    "file": xfile}], f)
    env = dict(os.environ, NODE_PATH=os.path.join(NODE_DIR, "node_modules"))
    r = subprocess.run(["node", os.path.join(HERE, "ort_eval.js"), model_path,
                        spec, work], capture_output=True, text=True, env=env,
                       timeout=120)
    if r.returncode:
        return None, r.stderr.strip()[-300:]
    outs = []
    dt = {"float32": np.float32, "int64": np.int64, "bool": np.bool_}
    for o in json.load(open(os.path.join(work, "outputs.json"))):
        outs.append(np.fromfile(o["file"], dt[o["dtype"]]).reshape(o["shape"]))
    return outs, None


INTERNAL = re.compile(r"internal error|Assertion|LLVM ERROR|Stack dump|"
                      r"PLEASE submit|failed to verify|op requires|'[a-z_]+\.[a-z_.]+' op ")


def one_seed(seed, kiln_compile, pythonpath, out_dir, keep, declare_all=False,
             loops=False, attention=False):
    built = build_model(seed, declare_all, loops, attention)
    if built is None:
        return seed, "skipped", "no output"
    model, dims, syms, loose, pinned = built
    work = tempfile.mkdtemp(prefix=f"fuzz{seed}-", dir=out_dir)
    path = os.path.join(work, "model.onnx")
    onnx.save(model, path)
    result = check(seed, path, work, dims, syms, kiln_compile, pythonpath, loose,
                   pinned)
    cls = result[0]
    if cls == "BUG":
        dest = os.path.join(out_dir, "bugs", str(seed))
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(work, dest)
        with open(os.path.join(dest, "message.txt"), "w") as f:
            f.write(result[1] + "\n")
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return (seed,) + result


def check(seed, path, work, dims, syms, kiln_compile, pythonpath, loose=False,
          pinned=None):
    so = os.path.join(work, "model.so")
    flags = []
    for s in syms:
        flags += ["--dim", f"{s}={RANGES[s][0]}..{RANGES[s][1]}"]
    for s, (lo, hi) in (pinned or {}).items():
        flags += ["--dim", f"{s}={lo}..{hi}"]
    try:
        r = subprocess.run([kiln_compile, path, "-o", so] + flags,
                           capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "BUG", "kiln-compile timed out"
    if r.returncode < 0 or INTERNAL.search(r.stderr):
        return "BUG", f"kiln-compile rc {r.returncode}: {r.stderr.strip()[-600:]}"
    if r.returncode:
        err = [l for l in r.stderr.splitlines() if "error:" in l]
        return "refused", (err[0] if err else r.stderr.strip())[:300]
    rng = np.random.default_rng(seed)
    assignments = [{s: RANGES[s][0] for s in syms}, {s: RANGES[s][1] for s in syms},
                   {s: int(rng.integers(RANGES[s][0], RANGES[s][1] + 1)) for s in syms}]
    # A separate process per model: a crash in the .so is a finding, not
    # the end of the run.
    runner = os.path.join(work, "run.py")
    with open(runner, "w") as f:
        f.write(RUNNER)
    for i, a in enumerate(assignments):
        shape = [a[d] if isinstance(d, str) else d for d in dims]
        x = rng.standard_normal(shape).astype(np.float32)
        want, err = run_ort(path, x, work)
        if want is None:
            return "skipped", f"ONNX Runtime: {err}"
        np.save(os.path.join(work, "x.npy"), x)
        try:
            k = subprocess.run([sys.executable, runner, pythonpath, so, work],
                               capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return "BUG", f"run at {shape} timed out"
        if k.returncode:
            return "BUG", f"run at {shape}: rc {k.returncode}: {k.stderr.strip()[-600:]}"
        got = [np.load(os.path.join(work, f"got{j}.npy")) for j in range(len(want))]
        for j, (g, w) in enumerate(zip(got, want)):
            if g.shape != w.shape:
                return "BUG", f"output {j} at {shape}: shape {g.shape}, ONNX Runtime {w.shape}"
            scale = max(1.0, float(np.abs(w).max())) if w.size else 1.0
            if w.dtype.kind == "f":
                rtol, atol = (3e-2, 3e-2) if loose else (1e-3, 1e-4)
                bad = ~np.isclose(g, w, rtol=rtol, atol=atol * scale, equal_nan=True)
            else:
                bad = g != w
            if bad.any():
                at = np.argwhere(bad)[0]
                return "BUG", (f"output {j} at {shape}: {int(bad.sum())}/{w.size} differ, "
                               f"first at {tuple(int(v) for v in at)}: got {g[tuple(at)]} "
                               f"want {w[tuple(at)]}")
    return "pass", ""


RUNNER = """import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import kiln
m = kiln.load(sys.argv[2])
outs = m(np.load(sys.argv[3] + "/x.npy"))
for j, o in enumerate(outs):
    np.save(sys.argv[3] + f"/got{j}.npy", o)
"""


def parse_seeds(text):
    if ":" in text:
        a, b = text.split(":")
        return list(range(int(a), int(b)))
    return [int(s) for s in text.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="0:50", help="A:B (half-open) or a,b,c")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "kiln-fuzz"))
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep every model's folder")
    ap.add_argument("--loops", action="store_true",
                    help="draw Loops too (op_loop); a seed then builds another model")
    ap.add_argument("--attention", action="store_true",
                    help="draw masked attention often (op_masked_attention); a seed "
                         "then builds another model")
    ap.add_argument("--declare-all", action="store_true",
                    help="declare the input's static dimensions as symbols too")
    args = ap.parse_args()
    ensure_ort()
    os.makedirs(args.out, exist_ok=True)
    kc = os.path.join(args.build, "bin", "kiln-compile")
    py = os.path.join(args.build, "python")
    counts = collections.Counter()
    refusals = collections.Counter()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futures = [ex.submit(one_seed, s, kc, py, args.out, args.keep, args.declare_all,
                              args.loops, args.attention)
                   for s in parse_seeds(args.seeds)]
        for fut in concurrent.futures.as_completed(futures):
            seed, cls, msg = fut.result()
            counts[cls] += 1
            if cls == "refused":
                refusals[re.sub(r"node '[^']*'", "node", msg)] += 1
            if cls in ("BUG", "skipped", "refused"):
                print(f"seed {seed}: {cls}: {msg}", flush=True)
    for msg, n in refusals.most_common():
        print(f"refused x{n}: {msg}")
    print(" ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if counts["BUG"]:
        print(f"models and messages of the bugs: {os.path.join(args.out, 'bugs')}")
    return 1 if counts["BUG"] else 0


if __name__ == "__main__":
    sys.exit(main())
