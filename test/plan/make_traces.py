#!/usr/bin/python3
"""Writes the arena planner's trace corpus: test/plan/traces/*.json.

Each trace is the list of intermediate buffers of one simulated model run, in
kiln-plan's input format:

    {"alignment": 64, "source": "...", "buffers": [
      {"id": "conv3", "size": 802816, "first": 5, "last": 9}, ...]}

A model is built as a graph of ops, scheduled in a topological order (the
construction order, which is how exporters emit nodes, or a random valid
order for the "shuffled" variants); op k runs at step k. Every op output is a
buffer from its op's step to its last consumer's step. Views (reshape,
flatten) make no buffer and keep their source alive instead. The model's
inputs and outputs are the caller's and are not in the arena.

Families: resnet (basic and bottleneck blocks, residuals across blocks),
mobilenet v2 / v3-like (inverted residuals, squeeze-excite), squeezenet (fire
modules with concat), inception-like (parallel branches, concat), densenet
(every layer reads all earlier ones), transformer encoders and decoders
(QKV, scores, softmax, context, MLP; fused or ONNX-decomposed LayerNorm /
GELU), unet (long skip connections), and random DAGs in random topological
orders. Variants differ in resolution, width, depth, batch, element size and
whether elementwise ops are fused into their producer.

Traces exported from real compilations (the arena pass's buffers) use the
same format: drop them into traces/ and the corpus test picks them up.

    /usr/bin/python3 test/plan/make_traces.py [OUT_DIR]   (default: traces/)
"""
import json
import os
import random
import sys


class Graph:
    def __init__(self, elt=4):
        self.elt = elt  # bytes per element
        self.size = {}  # tensor -> bytes (None for caller-owned inputs)
        self.root = {}  # view tensor -> the tensor it aliases
        self.ops = []  # (name, inputs, output)
        self.outputs = set()
        self.count = {}

    def _name(self, kind):
        n = self.count.get(kind, 0)
        self.count[kind] = n + 1
        return f"{kind}{n}"

    def input(self, *shape):
        t = self._name("input")
        self.size[t] = None
        return t

    def op(self, kind, inputs, *shape):
        """An op writing a new tensor of `shape` (elements of self.elt bytes)."""
        t = self._name(kind)
        n = 1
        for d in shape:
            n *= d
        self.size[t] = n * self.elt
        self.ops.append((t, list(inputs), t))
        return t

    def view(self, x):
        t = self._name("view")
        self.root[t] = self.root.get(x, x)
        return t

    def output(self, t):
        self.outputs.add(self.root.get(t, t))

    def schedule(self, rng=None):
        """Op order: construction order, or a random topological order."""
        if rng is None:
            return list(range(len(self.ops)))
        producer = {out: k for k, (_, _, out) in enumerate(self.ops)}
        deps = [set() for _ in self.ops]
        users = [[] for _ in self.ops]
        for k, (_, ins, _) in enumerate(self.ops):
            for x in ins:
                p = producer.get(self.root.get(x, x))
                if p is not None and p not in deps[k]:
                    deps[k].add(p)
                    users[p].append(k)
        waiting = [len(d) for d in deps]
        ready = [k for k in range(len(self.ops)) if not waiting[k]]
        order = []
        while ready:
            k = ready.pop(rng.randrange(len(ready)))
            order.append(k)
            for u in users[k]:
                waiting[u] -= 1
                if not waiting[u]:
                    ready.append(u)
        assert len(order) == len(self.ops)
        return order

    def buffers(self, order):
        step = {}
        for s, k in enumerate(order):
            step[self.ops[k][2]] = s
        last = dict(step)
        for s, k in enumerate(order):
            for x in self.ops[k][1]:
                r = self.root.get(x, x)
                if r in last:
                    last[r] = max(last[r], s)
        out = []
        for t, s in sorted(step.items(), key=lambda kv: (kv[1], kv[0])):
            if t in self.outputs:
                continue
            out.append({"id": t, "size": self.size[t], "first": s,
                        "last": last[t]})
        return out


def conv_out(h, k, s):
    return (h + 2 * (k // 2) - k) // s + 1


# --- CNNs ---------------------------------------------------------------------

class Cnn:
    """Helpers that emit conv (+ bn + activation) as one op or several."""

    def __init__(self, g, batch, fused):
        self.g, self.b, self.fused = g, batch, fused

    def conv(self, x, c, h, w, k=3, s=1, act="relu", bn=True):
        g = self.g
        h, w = conv_out(h, k, s), conv_out(w, k, s)
        y = g.op("conv", [x], self.b, c, h, w)
        if not self.fused:
            if bn:
                y = g.op("bn", [y], self.b, c, h, w)
            if act:
                y = g.op(act, [y], self.b, c, h, w)
        return y, h, w

    def act(self, x, c, h, w, kind="relu"):
        return self.g.op(kind, [x], self.b, c, h, w)

    def pool(self, x, c, h, w, k=3, s=2):
        h, w = conv_out(h, k, s), conv_out(w, k, s)
        return self.g.op("pool", [x], self.b, c, h, w), h, w

    def head(self, x, c, classes):
        g = self.g
        p = g.op("gap", [x], self.b, c)
        f = g.view(p)
        y = g.op("fc", [f], self.b, classes)
        g.output(y)


def resnet(rng, depth, res, width, batch, fused, elt, late_shortcut):
    g = Graph(elt)
    n = Cnn(g, batch, fused)
    blocks = {18: (False, [2, 2, 2, 2]), 34: (False, [3, 4, 6, 3]),
              50: (True, [3, 4, 6, 3]), 101: (True, [3, 4, 23, 3])}
    bottleneck, layers = blocks[depth]
    x = g.input()
    c = int(64 * width)
    x, h, w = n.conv(x, c, res, res, k=7, s=2)
    x, h, w = n.pool(x, c, h, w)
    cin = c
    for stage, count in enumerate(layers):
        cmid = int(64 * width) * 2 ** stage
        cout = cmid * 4 if bottleneck else cmid
        for i in range(count):
            s = 2 if i == 0 and stage > 0 else 1
            identity = x
            shortcut = None
            if s != 1 or cin != cout:
                if not late_shortcut:
                    shortcut, _, _ = n.conv(x, cout, h, w, k=1, s=s, act=None)
            if bottleneck:
                y, h2, w2 = n.conv(x, cmid, h, w, k=1)
                y, h2, w2 = n.conv(y, cmid, h2, w2, k=3, s=s)
                y, h2, w2 = n.conv(y, cout, h2, w2, k=1, act=None)
            else:
                y, h2, w2 = n.conv(x, cmid, h, w, k=3, s=s)
                y, h2, w2 = n.conv(y, cout, h2, w2, k=3, act=None)
            if s != 1 or cin != cout:
                if late_shortcut:
                    shortcut, _, _ = n.conv(x, cout, h, w, k=1, s=s, act=None)
                identity = shortcut
            h, w = h2, w2
            x = g.op("add", [y, identity], batch, cout, h, w)
            if not fused:
                x = n.act(x, cout, h, w)
            cin = cout
    n.head(x, cin, 1000)
    return g


def mobilenet_v2(rng, res, width, batch, fused, elt, se=False):
    g = Graph(elt)
    n = Cnn(g, batch, fused)
    setting = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
               (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    act = "hswish" if se else "relu6"
    x = g.input()
    c = max(8, int(32 * width))
    x, h, w = n.conv(x, c, res, res, s=2, act=act)
    for t, cout, count, s0 in setting:
        cout = max(8, int(cout * width) // 8 * 8)
        for i in range(count):
            s = s0 if i == 0 else 1
            y, hh, ww = x, h, w
            if t != 1:
                y, hh, ww = n.conv(y, c * t, h, w, k=1, act=act)
            y, hh, ww = n.conv(y, c * t, hh, ww, k=3, s=s, act=act)
            if se:
                p = g.op("gap", [y], batch, c * t)
                q = g.op("fc", [p], batch, max(8, c * t // 4))
                if not fused:
                    q = g.op("relu", [q], batch, max(8, c * t // 4))
                q = g.op("fc", [q], batch, c * t)
                if not fused:
                    q = g.op("hsigmoid", [q], batch, c * t)
                y = g.op("mul", [y, q], batch, c * t, hh, ww)
            y, hh, ww = n.conv(y, cout, hh, ww, k=1, act=None)
            if s == 1 and c == cout:
                y = g.op("add", [y, x], batch, cout, hh, ww)
            x, h, w, c = y, hh, ww, cout
    x, h, w = n.conv(x, max(1280, int(1280 * width)), h, w, k=1, act=act)
    n.head(x, max(1280, int(1280 * width)), 1000)
    return g


def squeezenet(rng, version, res, batch, fused, elt):
    g = Graph(elt)
    n = Cnn(g, batch, fused)
    fires = [(16, 64), (16, 64), (32, 128), (32, 128), (48, 192), (48, 192),
             (64, 256), (64, 256)]
    pool_after = {0: [2, 6], 1: [1, 3]}[version]
    x = g.input()
    c = 96 if version == 0 else 64
    x, h, w = n.conv(x, c, res, res, k=7 if version == 0 else 3, s=2,
                     bn=False)
    x, h, w = n.pool(x, c, h, w)
    for i, (sq, ex) in enumerate(fires):
        s, _, _ = n.conv(x, sq, h, w, k=1, bn=False)
        e1, _, _ = n.conv(s, ex, h, w, k=1, bn=False)
        e3, _, _ = n.conv(s, ex, h, w, k=3, bn=False)
        x = g.op("concat", [e1, e3], batch, 2 * ex, h, w)
        c = 2 * ex
        if i in pool_after:
            x, h, w = n.pool(x, c, h, w)
    x, h, w = n.conv(x, 1000, h, w, k=1, bn=False)
    p = g.op("gap", [x], batch, 1000)
    g.output(g.view(p))
    return g


def inception(rng, res, width, batch, fused, elt):
    g = Graph(elt)
    n = Cnn(g, batch, fused)
    x = g.input()
    c = int(64 * width)
    x, h, w = n.conv(x, c, res, res, k=7, s=2)
    x, h, w = n.pool(x, c, h, w)
    c *= 3
    x, h, w = n.conv(x, c, h, w)
    x, h, w = n.pool(x, c, h, w)
    modules = [(64, 96, 128, 16, 32, 32), (128, 128, 192, 32, 96, 64), "pool",
               (192, 96, 208, 16, 48, 64), (160, 112, 224, 24, 64, 64),
               (128, 128, 256, 24, 64, 64), (112, 144, 288, 32, 64, 64),
               (256, 160, 320, 32, 128, 128), "pool",
               (256, 160, 320, 32, 128, 128), (384, 192, 384, 48, 128, 128)]
    for m in modules:
        if m == "pool":
            x, h, w = n.pool(x, c, h, w)
            continue
        a, r3, b3, r5, b5, pp = [max(8, int(v * width)) for v in m]
        b1, _, _ = n.conv(x, a, h, w, k=1)
        t, _, _ = n.conv(x, r3, h, w, k=1)
        b2, _, _ = n.conv(t, b3, h, w, k=3)
        t, _, _ = n.conv(x, r5, h, w, k=1)
        b3_, _, _ = n.conv(t, b5, h, w, k=3)
        t, _, _ = n.pool(x, c, h, w, k=3, s=1)
        b4, _, _ = n.conv(t, pp, h, w, k=1)
        c = a + b3 + b5 + pp
        x = g.op("concat", [b1, b2, b3_, b4], batch, c, h, w)
    n.head(x, c, 1000)
    return g


def densenet(rng, blocks, growth, res, batch, fused, elt):
    g = Graph(elt)
    n = Cnn(g, batch, fused)
    x = g.input()
    c = 2 * growth
    x, h, w = n.conv(x, c, res, res, k=7, s=2)
    x, h, w = n.pool(x, c, h, w)
    for bi, count in enumerate(blocks):
        feats = [x]
        for _ in range(count):
            cat = g.op("concat", feats, batch, c, h, w) if len(feats) > 1 \
                else feats[0]
            if not fused:
                cat = n.act(cat, c, h, w)
            y, _, _ = n.conv(cat, 4 * growth, h, w, k=1)
            y, _, _ = n.conv(y, growth, h, w, k=3)
            feats.append(y)
            c += growth
        x = g.op("concat", feats, batch, c, h, w)
        if bi != len(blocks) - 1:
            c //= 2
            x, h, w = n.conv(x, c, h, w, k=1)
            x, h, w = n.pool(x, c, h, w, k=2, s=2)
    n.head(x, c, 1000)
    return g


def unet(rng, levels, base, res, batch, fused, elt):
    g = Graph(elt)
    n = Cnn(g, batch, fused)
    x = g.input()
    h = w = res
    c = base
    skips = []
    for lv in range(levels):
        x, h, w = n.conv(x, c, h, w)
        x, h, w = n.conv(x, c, h, w)
        skips.append((x, c, h, w))
        x, h, w = n.pool(x, c, h, w, k=2, s=2)
        c *= 2
    x, h, w = n.conv(x, c, h, w)
    x, h, w = n.conv(x, c, h, w)
    for skip, sc, sh, sw in reversed(skips):
        c //= 2
        h, w = sh, sw
        up = g.op("upconv", [x], batch, c, h, w)
        x = g.op("concat", [up, skip], batch, 2 * c, h, w)
        x, h, w = n.conv(x, c, h, w)
        x, h, w = n.conv(x, c, h, w)
    y, _, _ = n.conv(x, 2, h, w, k=1, act=None, bn=False)
    g.output(y)
    return g


# --- Transformers -------------------------------------------------------------

def layernorm(g, x, b, s, d, fused):
    if fused:
        return g.op("ln", [x], b, s, d)
    # ONNX before opset 17: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div,
    # Mul, Add.
    m = g.op("mean", [x], b, s, 1)
    c = g.op("sub", [x, m], b, s, d)
    p = g.op("pow", [c], b, s, d)
    v = g.op("mean", [p], b, s, 1)
    v = g.op("addeps", [v], b, s, 1)
    v = g.op("sqrt", [v], b, s, 1)
    y = g.op("div", [c, v], b, s, d)
    y = g.op("mulg", [y], b, s, d)
    return g.op("addb", [y], b, s, d)


def gelu(g, x, b, s, f, fused):
    if fused:
        return g.op("gelu", [x], b, s, f)
    # x * 0.5 * (1 + erf(x / sqrt(2)))
    t = g.op("div", [x], b, s, f)
    t = g.op("erf", [t], b, s, f)
    t = g.op("add1", [t], b, s, f)
    y = g.op("mul", [x, t], b, s, f)
    return g.op("half", [y], b, s, f)


def transformer(rng, layers, seq, d, batch, fused, elt, causal=False,
                pre_norm=True, mlp=4):
    g = Graph(elt)
    heads = max(1, d // 64)
    hd = d // heads
    ids = g.input()
    x = g.op("embed", [ids], batch, seq, d)
    pos = g.op("posembed", [ids], batch, seq, d)
    x = g.op("add", [x, pos], batch, seq, d)
    if not pre_norm:
        x = layernorm(g, x, batch, seq, d, fused)
    mask = g.op("mask", [ids], batch, 1, seq, seq) if causal or not fused \
        else None
    for _ in range(layers):
        a = layernorm(g, x, batch, seq, d, fused) if pre_norm else x
        if fused:
            qkv = g.op("qkv", [a], batch, seq, 3 * d)
            q, k, v = g.view(qkv), g.view(qkv), g.view(qkv)
        else:
            q = g.op("matmul_q", [a], batch, seq, d)
            k = g.op("matmul_k", [a], batch, seq, d)
            v = g.op("matmul_v", [a], batch, seq, d)
        qt = g.op("transpose", [g.view(q)], batch, heads, seq, hd)
        kt = g.op("transpose", [g.view(k)], batch, heads, hd, seq)
        vt = g.op("transpose", [g.view(v)], batch, heads, seq, hd)
        sc = g.op("scores", [qt, kt], batch, heads, seq, seq)
        if not fused:
            sc = g.op("scale", [sc], batch, heads, seq, seq)
        if mask is not None:
            sc = g.op("masked", [sc, mask], batch, heads, seq, seq)
        pr = g.op("softmax", [sc], batch, heads, seq, seq)
        ctx = g.op("context", [pr, vt], batch, heads, seq, hd)
        ctx = g.op("transpose", [ctx], batch, seq, heads, hd)
        o = g.op("outproj", [g.view(ctx)], batch, seq, d)
        x = g.op("add", [x, o], batch, seq, d)
        if not pre_norm:
            x = layernorm(g, x, batch, seq, d, fused)
        a = layernorm(g, x, batch, seq, d, fused) if pre_norm else x
        f = g.op("fc1", [a], batch, seq, mlp * d)
        f = gelu(g, f, batch, seq, mlp * d, fused)
        f = g.op("fc2", [f], batch, seq, d)
        x = g.op("add", [x, f], batch, seq, d)
        if not pre_norm:
            x = layernorm(g, x, batch, seq, d, fused)
    if pre_norm:
        x = layernorm(g, x, batch, seq, d, fused)
    y = g.op("lmhead" if causal else "pool", [x], batch, seq if causal else 1,
             d)
    g.output(y)
    return g


# --- Random DAGs --------------------------------------------------------------

def random_dag(rng, ops, elt, window=None):
    """Layer-like ops reading 1-3 recent tensors, now and then a far one (any
    earlier tensor, or one of the last `window`)."""
    g = Graph(elt)
    recent = [g.input()]
    for i in range(ops):
        k = rng.choice([1, 1, 1, 2, 2, 3])
        ins = set()
        for _ in range(k):
            if rng.random() < 0.1:
                ins.add(rng.choice(recent[-window:] if window else recent))
            else:
                back = min(len(recent), 1 + int(rng.expovariate(0.7)))
                ins.add(recent[-back])
        c = rng.choice([8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512])
        hw = rng.choice([7, 14, 28, 56, 112])
        t = g.op("op", sorted(ins), c, hw, hw)
        recent.append(t)
    g.output(recent[-1])
    return g


# --- The corpus ---------------------------------------------------------------

def corpus():
    """(name, alignment, builder) for every trace; builders take an rng."""
    out = []

    def add(name, fn, align=64, shuffle=False):
        out.append((name, align, fn, shuffle))

    for depth in (18, 34, 50, 101):
        for res, width, batch, fused, elt in [
                (224, 1.0, 1, True, 4), (224, 1.0, 1, False, 4),
                (160, 0.5, 2, False, 4), (96, 1.0, 4, True, 2),
                (128, 0.75, 1, False, 1)]:
            for late in (False, True):
                if depth == 101 and (late or fused):
                    continue
                add(f"resnet{depth}_r{res}_w{width}_b{batch}_"
                    f"{'fused' if fused else 'unfused'}_e{elt}"
                    f"{'_lateshortcut' if late else ''}",
                    lambda r, a=(depth, res, width, batch, fused, elt, late):
                    resnet(r, *a))
    add("resnet18_r224_shuffled", lambda r: resnet(r, 18, 224, 1.0, 1, False,
                                                    4, True), shuffle=True)
    add("resnet50_r224_shuffled", lambda r: resnet(r, 50, 224, 1.0, 1, True,
                                                    4, False), shuffle=True)

    for res, width, batch, fused, elt, se in [
            (224, 1.0, 1, True, 4, False), (224, 1.0, 1, False, 4, False),
            (192, 0.75, 1, False, 4, False), (160, 0.5, 2, True, 4, False),
            (128, 0.35, 1, False, 1, False), (224, 1.4, 1, True, 2, False),
            (96, 1.0, 8, False, 4, False), (224, 1.0, 1, False, 4, True),
            (224, 0.75, 1, True, 4, True), (160, 1.0, 2, False, 2, True),
            (128, 0.5, 4, False, 4, True)]:
        add(f"mobilenet{'v3' if se else 'v2'}_r{res}_w{width}_b{batch}_"
            f"{'fused' if fused else 'unfused'}_e{elt}",
            lambda r, a=(res, width, batch, fused, elt, se):
            mobilenet_v2(r, *a))
    add("mobilenetv2_r224_shuffled",
        lambda r: mobilenet_v2(r, 224, 1.0, 1, False, 4), shuffle=True)

    for version in (0, 1):
        for res, batch, fused, elt in [(224, 1, True, 4), (224, 1, False, 4),
                                       (128, 4, False, 4), (96, 2, True, 1),
                                       (160, 1, False, 2)]:
            add(f"squeezenet1_{version}_r{res}_b{batch}_"
                f"{'fused' if fused else 'unfused'}_e{elt}",
                lambda r, a=(version, res, batch, fused, elt):
                squeezenet(r, *a))
    add("squeezenet1_1_shuffled",
        lambda r: squeezenet(r, 1, 224, 1, False, 4), shuffle=True)

    for res, width, batch, fused in [(224, 1.0, 1, True), (224, 1.0, 1, False),
                                     (160, 0.5, 2, False), (299, 0.75, 1, True)]:
        add(f"inception_r{res}_w{width}_b{batch}_"
            f"{'fused' if fused else 'unfused'}",
            lambda r, a=(res, width, batch, fused): inception(r, *a, 4))
    add("inception_r224_shuffled",
        lambda r: inception(r, 224, 1.0, 1, False, 4), shuffle=True)

    for blocks, growth, res, fused in [((6, 12, 24, 16), 32, 224, True),
                                       ((6, 12, 24, 16), 32, 224, False),
                                       ((6, 12, 16), 12, 64, False),
                                       ((4, 8, 8), 16, 128, True)]:
        add(f"densenet{sum(blocks)}_g{growth}_r{res}_"
            f"{'fused' if fused else 'unfused'}",
            lambda r, a=(blocks, growth, res, fused):
            densenet(r, a[0], a[1], a[2], 1, a[3], 4))

    for layers, seq, d, batch, fused, elt, causal, pre in [
            (2, 32, 128, 1, True, 4, False, True),
            (4, 64, 256, 1, False, 4, False, False),
            (4, 128, 256, 2, True, 4, False, True),
            (6, 128, 384, 1, False, 4, False, True),
            (6, 384, 384, 1, True, 2, False, False),
            (12, 128, 768, 1, False, 4, False, False),
            (12, 512, 768, 1, True, 4, False, False),
            (12, 256, 768, 8, True, 2, False, True),
            (2, 77, 512, 1, False, 4, True, True),
            (6, 256, 512, 1, False, 4, True, True),
            (12, 1024, 768, 1, True, 2, True, True),
            (4, 196, 192, 4, False, 4, False, True),
            (8, 50, 512, 16, True, 4, False, True),
            (24, 128, 1024, 1, True, 2, False, False),
            (1, 8, 64, 1, False, 4, True, True)]:
        add(f"{'decoder' if causal else 'encoder'}_l{layers}_s{seq}_d{d}_"
            f"b{batch}_{'fused' if fused else 'unfused'}_e{elt}"
            f"{'_prenorm' if pre else '_postnorm'}",
            lambda r, a=(layers, seq, d, batch, fused, elt, causal, pre):
            transformer(r, *a))
    add("encoder_l4_s128_d256_shuffled",
        lambda r: transformer(r, 4, 128, 256, 1, False, 4), shuffle=True)

    for levels, base, res, fused, batch in [(4, 64, 256, False, 1),
                                            (4, 32, 128, True, 1),
                                            (5, 16, 512, False, 1),
                                            (3, 32, 64, False, 4),
                                            (5, 64, 256, True, 1)]:
        add(f"unet_l{levels}_c{base}_r{res}_b{batch}_"
            f"{'fused' if fused else 'unfused'}",
            lambda r, a=(levels, base, res, batch, fused):
            unet(r, a[0], a[1], a[2], a[3], a[4], 4))
    add("unet_l4_shuffled", lambda r: unet(r, 4, 32, 128, 1, False, 4),
        shuffle=True)

    for i, ops in enumerate([30, 60, 100, 150, 200, 300, 400, 500]):
        for j in range(3):
            add(f"random_dag{i * 3 + j:02d}_n{ops}",
                lambda r, n=ops: random_dag(r, n, 4), shuffle=True)

    # Other alignments: 16 (SSE), 128, 4096 (pages).
    add("resnet18_r224_unfused_align16",
        lambda r: resnet(r, 18, 224, 1.0, 1, False, 1, False), align=16)
    add("mobilenetv2_r224_unfused_align128",
        lambda r: mobilenet_v2(r, 224, 1.0, 1, False, 1), align=128)
    add("encoder_l4_s64_d256_align4096",
        lambda r: transformer(r, 4, 64, 256, 1, False, 4), align=4096)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    dest = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "traces")
    os.makedirs(dest, exist_ok=True)
    for seed, (name, align, build, shuffle) in enumerate(corpus()):
        rng = random.Random(1000 + seed)
        g = build(rng)
        order = g.schedule(rng if shuffle else None)
        bufs = g.buffers(order)
        lines = ",\n".join("  " + json.dumps(b, separators=(", ", ": "))
                           for b in bufs)
        with open(os.path.join(dest, name + ".json"), "w") as f:
            f.write(f'{{"alignment": {align}, "source": "make_traces.py '
                    f'{name}", "buffers": [\n{lines}\n]}}\n')
    print(f"wrote {len(corpus())} traces to {dest}")


if __name__ == "__main__":
    main()
