#!/usr/bin/python3
"""Exports Kiln's development model set with torch (Debian's python3-torch and
python3-torchvision): random weights from a fixed seed, opset 17, static
shapes. Each model gets OUTDIR/<name>/model.onnx and a test_data_set_0 with
torch-eager reference outputs (backend-test layout).

usage: /usr/bin/python3 bench/models/export.py OUTDIR [NAME ...]
       /usr/bin/python3 bench/models/export.py --holdout OUTDIR [NAME ...]

--holdout exports torchvision classification models outside the development
set (the families Kiln is not tuned on), the same way; bench/models/check.py
compiles and compares them.
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper as nh
import torch
import torch.nn as nn
import torchvision

OPSET = 17
# Models exported the way their public counterparts ship.
OPSETS = {"svtr_tiny": 14}


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024),
                                 nn.ReLU(), nn.Linear(1024, 10))

    def forward(self, x):
        return self.net(x)


class TransformerEnc(nn.Module):
    """4-layer nn.TransformerEncoder, d_model 256, 4 heads, seq 128, GELU.
    Sequence-first layout: torch 1.13 exports batch_first encoders through a
    fused kernel ONNX cannot express."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0,
                                           activation="gelu", batch_first=False)
        self.enc = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)

    def forward(self, x):
        return self.enc(x)


class BertSmall(nn.Module):
    """A small BERT-style encoder: token + position embeddings (Gather),
    LayerNorm, masked softmax attention, Erf-GELU feed-forward."""

    def __init__(self, vocab=8000, d=256, heads=4, layers=4, seq=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.ln0 = nn.LayerNorm(d)
        self.heads, self.d = heads, d
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict({
                "qkv": nn.Linear(d, 3 * d), "out": nn.Linear(d, d), "ln1": nn.LayerNorm(d),
                "ff1": nn.Linear(d, 4 * d), "ff2": nn.Linear(4 * d, d), "ln2": nn.LayerNorm(d)}))
        self.register_buffer("positions", torch.arange(seq).unsqueeze(0))

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.shape
        x = self.ln0(self.tok(input_ids) + self.pos(self.positions))
        # (1 - mask) * -10000 added to the scores, as BERT does.
        bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        hd = self.d // self.heads
        for blk in self.blocks:
            q, k, v = blk["qkv"](x).split(self.d, dim=-1)
            q = q.reshape(b, s, self.heads, hd).transpose(1, 2)
            k = k.reshape(b, s, self.heads, hd).transpose(1, 2)
            v = v.reshape(b, s, self.heads, hd).transpose(1, 2)
            scores = q @ k.transpose(-1, -2) / math.sqrt(hd) + bias
            ctx = torch.softmax(scores, dim=-1) @ v
            ctx = ctx.transpose(1, 2).reshape(b, s, self.d)
            x = blk["ln1"](x + blk["out"](ctx))
            h = blk["ff1"](x)
            h = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
            x = blk["ln2"](x + blk["ff2"](h))
        return x


class ConvBnRelu(nn.Sequential):
    def __init__(self, cin, cout, dilation=1):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=dilation, dilation=dilation),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def upsample_to(x, like):
    return nn.functional.interpolate(x, size=like.shape[2:], mode="bilinear",
                                     align_corners=False)


class ResidualU(nn.Module):
    """A residual U block of `depth` levels (U^2-Net's RSU): an encoder of
    convolutions and 2x2 max pools, a dilated bottom, a decoder of bilinear
    upsampling and concatenation, added to the block's input projection.
    `dilated` replaces the pooling by growing dilations (RSU-4F)."""

    def __init__(self, depth, cin, mid, cout, dilated=False):
        super().__init__()
        self.depth, self.dilated = depth, dilated
        self.inp = ConvBnRelu(cin, cout)
        dil = (lambda i: 2 ** i) if dilated else (lambda i: 1)
        self.enc = nn.ModuleList([ConvBnRelu(cout if i == 0 else mid, mid, dil(i))
                                  for i in range(depth - 1)])
        self.bottom = ConvBnRelu(mid, mid, 2 * dil(depth - 2))
        self.dec = nn.ModuleList([ConvBnRelu(2 * mid, cout if i == depth - 2 else mid,
                                             dil(depth - 3 - i) if i < depth - 2 else 1)
                                  for i in range(depth - 1)])

    def forward(self, x):
        x_in = self.inp(x)
        skips, h = [], x_in
        for i, conv in enumerate(self.enc):
            h = conv(h)
            skips.append(h)
            if not self.dilated and i < len(self.enc) - 1:
                h = nn.functional.max_pool2d(h, 2, 2, ceil_mode=True)
        h = self.bottom(h)
        for conv, skip in zip(self.dec, reversed(skips)):
            if not self.dilated and h.shape[2:] != skip.shape[2:]:
                h = upsample_to(h, skip)
            h = conv(torch.cat([h, skip], 1))
        return h + x_in


class SaliencyUNet(nn.Module):
    """A nested U-Net for saliency / background removal in the shape of
    U^2-Net's small variant (six encoder stages of residual U blocks, five
    decoder stages, a side output per stage fused by a 1x1 convolution):
    the public model class of issue 31, about 1,000 ONNX nodes."""

    def __init__(self, mid=16, ch=64):
        super().__init__()
        enc = [(7, 3), (6, ch), (5, ch), (4, ch), (4, ch), (4, ch)]
        self.enc = nn.ModuleList([ResidualU(d, cin, mid, ch, dilated=(i >= 4))
                                  for i, (d, cin) in enumerate(enc)])
        self.dec = nn.ModuleList([ResidualU(d, 2 * ch, mid, ch, dilated=(i == 0))
                                  for i, d in enumerate([4, 4, 5, 6, 7])])
        self.side = nn.ModuleList([nn.Conv2d(ch, 1, 3, padding=1) for _ in range(6)])
        self.fuse = nn.Conv2d(6, 1, 1)

    def forward(self, x):
        feats, h = [], x
        for i, block in enumerate(self.enc):
            h = block(h)
            feats.append(h)
            if i < len(self.enc) - 1:
                h = nn.functional.max_pool2d(h, 2, 2, ceil_mode=True)
        outs = [h]
        for block, skip in zip(self.dec, reversed(feats[:-1])):
            h = block(torch.cat([upsample_to(h, skip), skip], 1))
            outs.append(h)
        sides = [upsample_to(conv(o), x) for conv, o in zip(self.side, reversed(outs))]
        return torch.sigmoid(self.fuse(torch.cat(sides, 1)))


class MixingBlock(nn.Module):
    """SVTR's mixing block, post-norm: x = LN(x + attention(x)), x = LN(x +
    MLP(x)); a local block adds a mask that keeps each token's 7 x 11
    neighbourhood of the H x W grid."""

    def __init__(self, dim, heads, local_hw=None):
        super().__init__()
        self.heads, self.dim = heads, dim
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        mask = None
        if local_hw:
            h, w = local_hw
            hh, ww = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
            hh, ww = hh.reshape(-1), ww.reshape(-1)
            near = ((hh[:, None] - hh[None, :]).abs() <= 3) & \
                ((ww[:, None] - ww[None, :]).abs() <= 5)
            mask = torch.where(near, 0.0, -10000.0)
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, n, c = x.shape
        hd = c // self.heads
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, hd).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = (q * hd ** -0.5) @ k.transpose(-1, -2)
        if self.mask is not None:
            scores = scores + self.mask
        ctx = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, n, c)
        x = self.norm1(x + self.proj(ctx))
        return self.norm2(x + self.mlp(x))


class TextRecognizer(nn.Module):
    """A scene-text recognizer in the shape of SVTR-tiny (the class of
    PaddleOCR's recognizers): a patch embedding of two stride-2
    convolutions, three stages of local then global mixing blocks (64,
    128, 256 wide, 256, 128 and 64 tokens) joined by stride-(2, 1)
    convolutions, pooling over the height and a CTC head over 32 steps.
    Exported at opset 14, where torch writes LayerNorm out as ReduceMean,
    Sub, Pow, Sqrt and Div, as Paddle2ONNX does."""

    def __init__(self, classes=97):
        super().__init__()
        self.embed = nn.Sequential(
            nn.Conv2d(3, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.GELU(),
            nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.GELU())
        grids = [(8, 32), (4, 32), (2, 32)]
        spec = [(64, 2, 3, 3), (128, 4, 3, 3), (256, 8, 0, 3)]  # dim, heads, local, global
        self.stages = nn.ModuleList()
        for (dim, heads, local, glob), hw in zip(spec, grids):
            self.stages.append(nn.ModuleList(
                [MixingBlock(dim, heads, hw) for _ in range(local)] +
                [MixingBlock(dim, heads) for _ in range(glob)]))
        self.merges = nn.ModuleList([nn.Conv2d(64, 128, 3, (2, 1), 1),
                                     nn.Conv2d(128, 256, 3, (2, 1), 1)])
        self.merge_norms = nn.ModuleList([nn.LayerNorm(128, eps=1e-6),
                                          nn.LayerNorm(256, eps=1e-6)])
        self.grids = grids
        self.last = nn.Conv2d(256, 192, 1)
        self.head = nn.Linear(192, classes)

    def forward(self, x):
        x = self.embed(x)
        b = x.shape[0]
        for i, blocks in enumerate(self.stages):
            h, w = self.grids[i]
            c = x.shape[1]
            t = x.flatten(2).transpose(1, 2)
            for blk in blocks:
                t = blk(t)
            x = t.transpose(1, 2).reshape(b, c, h, w)
            if i < len(self.merges):
                x = self.merges[i](x)
                c2 = x.shape[1]
                t = self.merge_norms[i](x.flatten(2).transpose(1, 2))
                x = t.transpose(1, 2).reshape(b, c2, h // 2, w)
        x = nn.functional.hardswish(self.last(x.mean(dim=2, keepdim=True)))
        return torch.softmax(self.head(x.squeeze(2).transpose(1, 2)), dim=-1)


def vision(name):
    return lambda: getattr(torchvision.models, name)(weights=None)


# name: (constructor, example inputs, input names)
MODELS = {
    "mlp": (Mlp, lambda: (torch.randn(1, 784),), ["input"]),
    "resnet18": (vision("resnet18"), lambda: (torch.randn(1, 3, 224, 224),), ["input"]),
    "resnet50": (vision("resnet50"), lambda: (torch.randn(1, 3, 224, 224),), ["input"]),
    "resnet50_b8": (vision("resnet50"), lambda: (torch.randn(8, 3, 224, 224),), ["input"]),
    "mobilenet_v2": (vision("mobilenet_v2"), lambda: (torch.randn(1, 3, 224, 224),), ["input"]),
    "squeezenet1_1": (vision("squeezenet1_1"), lambda: (torch.randn(1, 3, 224, 224),), ["input"]),
    "saliency_unet": (SaliencyUNet, lambda: (torch.randn(1, 3, 320, 320),), ["input"]),
    "svtr_tiny": (TextRecognizer, lambda: (torch.randn(1, 3, 32, 128),), ["input"]),
    "transformer_enc": (TransformerEnc, lambda: (torch.randn(128, 1, 256),), ["input"]),
    "bert_small": (BertSmall,
                   lambda: (torch.randint(0, 8000, (1, 128), dtype=torch.int64),
                            torch.cat([torch.ones(1, 100, dtype=torch.int64),
                                       torch.zeros(1, 28, dtype=torch.int64)], dim=1)),
                   ["input_ids", "attention_mask"]),
}


def image(size=224):
    return lambda: (torch.randn(1, 3, size, size),)


# torchvision classifiers outside the development set, one or two per family.
HOLDOUT = {name: (vision(name), image(size), ["input"]) for name, size in [
    ("alexnet", 224), ("vgg11", 224), ("googlenet", 224), ("inception_v3", 299),
    ("densenet121", 224), ("shufflenet_v2_x1_0", 224), ("mnasnet1_0", 224),
    ("mobilenet_v3_small", 224), ("efficientnet_b0", 224), ("regnet_y_400mf", 224),
    ("resnext50_32x4d", 224), ("convnext_tiny", 224), ("vit_b_16", 224),
    ("swin_t", 224), ("maxvit_t", 224), ("squeezenet1_0", 224),
]}


def export(name, outdir):
    ctor, make_inputs, input_names = MODELS.get(name) or HOLDOUT[name]
    torch.manual_seed(0)
    model = ctor().eval()
    inputs = make_inputs()
    d = os.path.join(outdir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(model, inputs, path, opset_version=OPSETS.get(name, OPSET),
                          input_names=input_names,
                          output_names=["output"], do_constant_folding=True)
        outputs = model(*inputs)
        if isinstance(outputs, tuple):  # googlenet / inception aux outputs
            outputs = outputs[0]
    m = onnx.load(path)
    m.graph.name = name
    onnx.save(m, path)
    for i, (n, t) in enumerate(zip(input_names, inputs)):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(nh.from_array(t.numpy(), n).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(nh.from_array(outputs.numpy(), "output").SerializeToString())
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"{name}: {len(m.graph.node)} nodes, ops {ops}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--holdout", action="store_true",
                    help="export the held-out torchvision set instead")
    ap.add_argument("outdir")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    table = HOLDOUT if args.holdout else MODELS
    for name in args.names or list(table):
        if name not in table:
            sys.exit(f"unknown model {name}; choose from {', '.join(table)}")
        try:
            export(name, args.outdir)
        except Exception as e:  # an export failure is torch's, not Kiln's
            print(f"{name}: torch.onnx.export failed: {e}".splitlines()[0])


if __name__ == "__main__":
    main()
