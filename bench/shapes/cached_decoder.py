#!/usr/bin/python3
"""A GPT-style decoder step with a key/value cache at run-time sizes, against
static compiles and ONNX Runtime, side by side.

Generation loops export one step of the decoder: the new tokens' ids and
every layer's past keys and values in, logits and the grown keys and values
out. The past length is a symbol whose range starts at 0 (the prompt's
step has an empty cache), the mask of the new rows is ones(t, past +
t).tril(past) (Trilu with a run-time diagonal), positions are
arange(past, past + t). The model is built here with torch (width 256, 4
heads, 4 layers, FFN 1024, vocabulary 8000 by default) and compiled once
with --dim batch=1..B --dim sequence=1..S --dim past=0..P (the dynamic .so)
and once per measured shape with every size fixed. At each shape the
dynamic .so, the static .so and ORT (onnxruntime-node, CPU provider) run
the same inputs, alternating in rounds; the table gives median
milliseconds and the ratios, as bench/shapes/symbolic_transformer.py does.
Shapes are BATCHxSEQUENCE+PAST: 1x64+0 is a prompt of 64 tokens, 1x1+255
one generated token after 255.

usage: bench/shapes/cached_decoder.py [--shapes 1x64+0,1x1+63,1x1+255]
       [--max 1x128+511] [--threads 1] [--build build]
"""
import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ort import ensure_ort  # noqa: E402
from symbolic_shapes import compare_row, cpu_model  # noqa: E402


def export_decoder(path, width, heads, layers, vocab, positions):
    import torch

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
            self.qkv = torch.nn.Linear(width, 3 * width)
            self.proj = torch.nn.Linear(width, width)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 4 * width),
                                           torch.nn.GELU(),
                                           torch.nn.Linear(4 * width, width))

        def forward(self, x, pk, pv):
            b, t, c = x.size()
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2)
                       for z in self.qkv(self.ln1(x)).split(width, dim=2))
            k, v = torch.cat([pk, k], dim=2), torch.cat([pv, v], dim=2)
            total = k.size(2)
            keep = torch.ones(t, total, dtype=torch.bool).tril(total - t)
            att = (q @ k.transpose(-2, -1)) / (c // heads) ** 0.5
            att = att.masked_fill(~keep, float("-inf")).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, c)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x)), k, v

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.words = torch.nn.Embedding(vocab, width)
            self.positions = torch.nn.Embedding(positions, width)
            self.blocks = torch.nn.ModuleList(Block() for _ in range(layers))
            self.ln = torch.nn.LayerNorm(width)
            self.head = torch.nn.Linear(width, vocab, bias=False)

        def forward(self, ids, *past):
            p, t = past[0].size(2), ids.size(1)
            x = self.words(ids) + self.positions(torch.arange(p, p + t).unsqueeze(0))
            present = []
            for i, block in enumerate(self.blocks):
                x, k, v = block(x, past[2 * i], past[2 * i + 1])
                present += [k, v]
            return (self.head(self.ln(x)), *present)

    torch.manual_seed(0)
    dec = Decoder().eval()
    names = [f"past_{kv}{i}" for i in range(layers) for kv in "kv"]
    axes = {"ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}}
    for n in names:
        axes[n] = {0: "batch", 2: "past"}
        axes["present" + n[4:]] = {0: "batch", 2: "total"}
    past = [torch.randn(1, heads, 3, width // heads) for _ in names]
    torch.onnx.export(dec, (torch.randint(0, vocab, (1, 5)), *past), path,
                      opset_version=17, input_names=["ids"] + names,
                      output_names=["logits"] + ["present" + n[4:] for n in names],
                      dynamic_axes=axes)
    return names


def parse(shape):
    bt, p = shape.split("+")
    b, t = (int(v) for v in bt.split("x"))
    return b, t, int(p)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--shapes", default="1x64+0,1x1+63,1x1+255")
    ap.add_argument("--max", default="1x128+511")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-bench-cached-decoder")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import kiln

    os.makedirs(a.work, exist_ok=True)
    model = os.path.join(a.work, "decoder.onnx")
    mb, mt, mp = parse(a.max)
    names = export_decoder(model, a.width, a.heads, a.layers, a.vocab, mt + mp)
    if not a.no_ort:
        ensure_ort()

    def compile_so(so, b, t, p):
        start = time.perf_counter()
        kiln.compile(model, output=so, dims={"batch": b, "sequence": t, "past": p})
        return time.perf_counter() - start

    dyn_so = os.path.join(a.work, "dynamic.so")
    dyn_s = compile_so(dyn_so, (1, mb), (1, mt), (0, mp))
    dyn = kiln.load(dyn_so, threads=a.threads)
    print(f"CPU: {cpu_model()}; threads={a.threads}; batch=1..{mb}, sequence=1..{mt}, "
          f"past=0..{mp}; width {a.width}, {a.layers} layers")
    print("| batch x sequence + past | static ms | dynamic ms | ORT ms | dynamic/static | "
          "dynamic/ORT | static/ORT | compile static s | compile dynamic s |")
    print("|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(1)
    for shape in a.shapes.split(","):
        b, t, p = parse(shape)
        st_so = os.path.join(a.work, f"static{b}x{t}+{p}.so")
        st_s = compile_so(st_so, b, t, p)
        st = kiln.load(st_so, threads=a.threads)
        x = {"ids": rng.integers(0, a.vocab, (b, t)).astype(np.int64)}
        for n in names:
            x[n] = rng.standard_normal((b, a.heads, p, a.width // a.heads)).astype(np.float32)
        compare_row(shape, st, dyn, x, model, a, st_s, dyn_s)


if __name__ == "__main__":
    main()
