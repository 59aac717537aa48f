#!/usr/bin/python3
"""A BERT-style encoder as torch exports it with dynamic_axes (docs/shapes.md,
"Shapes the graph computes"): a symbolic batch and sequence, position ids
sliced from a buffer to the sequence length, token types sliced and expanded
to (batch, sequence), an attention mask unsqueezed to (batch, 1, 1,
sequence), and every head reshape computed from Shape, Gather, Unsqueeze and
Concat. Compiled once with --dim batch=1..4 --dim sequence=1..128, run
through Python at several shapes (padding masks included) and compared with
torch (rtol 1e-4, atol 1e-4, float32); --check finds nothing to refuse, and
a sequence outside the range is refused, and so are a decoder step's mask
of the wrong length and caches whose past lengths disagree. symbolic_transformer_driver.c
then runs it through the raw C ABI: no allocation at any shape, output
shapes read back, each batch's first sample equal to its run alone.

Then a GPT-style decoder: positions from torch.arange(t) (Range to a
symbolic limit), q/k/v from one projection split three ways (Split beside
symbolic sizes), and a causal mask sliced from a buffer at [:t, :t] and
applied with masked_fill (Equal, Where); the same comparison at several
shapes.

Last, a decoder step with a key/value cache: the past keys and values
(possibly empty) concatenated with the new ones, the causal mask built by
Trilu with a run-time diagonal over symbolic sizes, positions from the
attention mask's cumulative sum (CumSum over a symbolic length) with a
left-padded sample, all five outputs compared with torch.

usage: check_symbolic_transformer.py KILN_COMPILE WORKDIR PYTHONPATH RUNTIME_INCLUDE
"""
import math
import os
import subprocess
import sys

import numpy as np
import torch

compile_, work, pythonpath, include = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402


class Layer(torch.nn.Module):
    def __init__(self, d=64, heads=4):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(4))
        self.ln, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.ff = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                      torch.nn.Linear(4 * d, d))

    def split(self, x):
        b, t, d = x.size()
        return x.view(b, t, self.heads, d // self.heads).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1)) + mask
        a = scores.softmax(-1) @ v
        b, h, t, e = a.size()
        a = a.permute(0, 2, 1, 3).contiguous().view(b, t, h * e)
        x = self.ln(x + self.o(a))
        return self.ln2(x + self.ff(x))


class Encoder(torch.nn.Module):
    def __init__(self, vocab=1000, d=64, positions=512):
        super().__init__()
        self.words = torch.nn.Embedding(vocab, d)
        self.positions = torch.nn.Embedding(positions, d)
        self.types = torch.nn.Embedding(2, d)
        self.register_buffer("position_ids", torch.arange(positions).expand((1, -1)))
        self.register_buffer("token_type_ids", torch.zeros(1, positions, dtype=torch.long))
        self.layers = torch.nn.ModuleList(Layer(d) for _ in range(2))
        self.ln, self.pool = torch.nn.LayerNorm(d), torch.nn.Linear(d, d)

    def forward(self, ids, mask):
        t = ids.size(1)
        types = self.token_type_ids[:, :t].expand(ids.size(0), t)
        x = self.words(ids) + self.positions(self.position_ids[:, :t]) + self.types(types)
        x = self.ln(x)
        m = (1.0 - mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        for layer in self.layers:
            x = layer(x, m)
        return x, torch.tanh(self.pool(x[:, 0]))


torch.manual_seed(0)
enc = Encoder().eval()
path = os.path.join(work, "encoder.onnx")
ids = torch.randint(0, 1000, (2, 16))
torch.onnx.export(
    enc, (ids, torch.ones_like(ids)), path, opset_version=14,
    input_names=["input_ids", "attention_mask"],
    output_names=["last_hidden_state", "pooler_output"],
    dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                  "attention_mask": {0: "batch", 1: "sequence"},
                  "last_hidden_state": {0: "batch", 1: "sequence"},
                  "pooler_output": {0: "batch"}})

flags = ["--dim", "batch=1..4", "--dim", "sequence=1..128"]
check = subprocess.run([compile_, "--check", path] + flags, capture_output=True,
                       text=True)
assert check.returncode == 0, check.stdout + check.stderr
assert "0 cannot be compiled" in check.stdout + check.stderr, check.stdout

so = os.path.join(work, "encoder.so")
subprocess.run([compile_, path, "-o", so] + flags, check=True)
m = kiln.load(so)
for b, t in [(1, 1), (2, 7), (4, 128), (3, 50)]:
    ids = torch.randint(0, 1000, (b, t))
    mask = torch.ones(b, t, dtype=torch.long)
    mask[0, (t + 1) // 2:] = 0  # a padded first row
    with torch.no_grad():
        want = [w.numpy() for w in enc(ids, mask)]
    got = m(ids.numpy(), mask.numpy())
    for g, w in zip(got, want):
        assert g.shape == w.shape, (b, t, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
try:
    m(np.zeros((1, 129), np.int64), np.ones((1, 129), np.int64))
    raise AssertionError("a sequence of 129 was accepted")
except kiln.Error as e:
    assert "outside the range 1..128" in str(e), e
here = os.path.dirname(os.path.abspath(__file__))
driver = os.path.join(work, "driver")
subprocess.run([os.environ.get("CC", "cc"), "-O1", "-I", include, "-o", driver,
                os.path.join(here, "symbolic_transformer_driver.c"), "-ldl", "-lm"],
               check=True)
subprocess.run([driver, so], check=True)


class Block(torch.nn.Module):
    def __init__(self, d=64, heads=4, positions=128):
        super().__init__()
        self.d, self.heads = d, heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d),
                                       torch.nn.GELU(approximate="tanh"),
                                       torch.nn.Linear(4 * d, d))
        self.register_buffer("causal", torch.tril(torch.ones(positions, positions))
                             .view(1, 1, positions, positions))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for z in self.qkv(self.ln1(x)).split(self.d, dim=2))
        att = (q @ k.transpose(-2, -1)) * 0.25
        att = att.masked_fill(self.causal[:, :, :t, :t] == 0, float("-inf"))
        y = (att.softmax(-1) @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class Decoder(torch.nn.Module):
    def __init__(self, vocab=500, d=64, positions=128):
        super().__init__()
        self.words = torch.nn.Embedding(vocab, d)
        self.positions = torch.nn.Embedding(positions, d)
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(2))
        self.ln, self.head = torch.nn.LayerNorm(d), torch.nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        t = ids.size(1)
        x = self.words(ids) + self.positions(torch.arange(0, t, dtype=torch.long).unsqueeze(0))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


dec = Decoder().eval()
path = os.path.join(work, "decoder.onnx")
torch.onnx.export(dec, (torch.randint(0, 500, (2, 16)),), path, opset_version=14,
                  input_names=["ids"], output_names=["logits"],
                  dynamic_axes={"ids": {0: "batch", 1: "sequence"},
                                "logits": {0: "batch", 1: "sequence"}})
m = kiln.load(kiln.compile(path, dims={"batch": (1, 4), "sequence": (1, 128)}))
# The causal mask is per position, not across samples: the compiler proves
# the batch independent beside the run-time length (kiln-serve packs it).
batch = m.info["symbolic_dimensions"][0]
assert batch["name"] == "batch" and batch["independent_batch"] is True, batch
for b, t in [(1, 1), (2, 9), (4, 128)]:
    ids = torch.randint(0, 500, (b, t))
    with torch.no_grad():
        want = dec(ids).numpy()
    got = m(ids.numpy())[0]
    assert got.shape == want.shape, (b, t, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


class CachedBlock(torch.nn.Module):
    """One step of a decoder with a key/value cache, as generation loops
    export it: the new keys and values appended to the past ones (Concat
    along a symbolic axis that may be empty), the causal mask of the new
    rows built as ones(t, past + t).tril(past) (Trilu with a run-time k over
    symbolic sizes), left padding from an attention mask over past + t."""

    def __init__(self, d=64, heads=4):
        super().__init__()
        self.d, self.heads = d, heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                       torch.nn.Linear(4 * d, d))

    def forward(self, x, past_k, past_v, pad):
        b, t, c = x.size()
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for z in self.qkv(self.ln1(x)).split(self.d, dim=2))
        k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        total = k.size(2)
        keep = torch.ones(t, total, dtype=torch.bool).tril(total - t)
        att = ((q @ k.transpose(-2, -1)) * 0.25 + pad).masked_fill(~keep, float("-inf"))
        y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x)), k, v


class CachedDecoder(torch.nn.Module):
    def __init__(self, vocab=300, d=64, positions=128):
        super().__init__()
        self.words = torch.nn.Embedding(vocab, d)
        self.positions = torch.nn.Embedding(positions, d)
        self.blocks = torch.nn.ModuleList(CachedBlock(d) for _ in range(2))
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, ids, mask, k0, v0, k1, v1):
        t = ids.size(1)
        # Positions count the tokens the mask keeps (left padding), and
        # padded keys get a large negative score, as Hugging Face writes it.
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, -t:]
        pad = (1.0 - mask[:, None, None, :].to(torch.float32)) * -1e9
        x = self.words(ids) + self.positions(positions)
        x, k0, v0 = self.blocks[0](x, k0, v0, pad)
        x, k1, v1 = self.blocks[1](x, k1, v1, pad)
        return self.head(x), k0, v0, k1, v1


cached = CachedDecoder().eval()
path = os.path.join(work, "cached_decoder.onnx")
caches = ["k0", "v0", "k1", "v1"]
axes = {"ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"},
        "mask": {0: "batch", 1: "total"}}
for name in caches:
    axes[name] = {0: "batch", 2: "past"}
    axes["new_" + name] = {0: "batch", 2: "total"}
example = [torch.randn(1, 4, 3, 16) for _ in caches]
torch.onnx.export(cached, (torch.randint(0, 300, (1, 5)),
                           torch.ones(1, 8, dtype=torch.long), *example), path,
                  opset_version=17, input_names=["ids", "mask"] + caches,
                  output_names=["logits"] + ["new_" + n for n in caches],
                  dynamic_axes=axes)
m = kiln.load(kiln.compile(path, dims={"batch": (1, 2), "sequence": (1, 16),
                                       "past": (0, 48), "total": (1, 64)}))
# The first step has an empty cache (past 0), later ones one new token.
for b, t, p in [(1, 16, 0), (2, 5, 3), (1, 1, 0), (1, 1, 47), (2, 16, 48)]:
    ids = torch.randint(0, 300, (b, t))
    past = [torch.randn(b, 4, p, 16) for _ in caches]
    mask = torch.ones(b, p + t, dtype=torch.long)
    mask[b - 1, :min(2, p + t - 1)] = 0  # the last sample left-padded
    with torch.no_grad():
        want = [w.numpy() for w in cached(ids, mask, *past)]
    got = m(ids.numpy(), mask.numpy(), *[x.numpy() for x in past])
    for g, w in zip(got, want):
        assert g.shape == w.shape, (b, t, p, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)

# Calls a generation loop gets wrong: a mask that is not past + t long (the
# node that needs them equal named, with its operands' symbols), and caches
# whose past lengths disagree; a good call still works after them.
ids = np.zeros((1, 2), np.int64)
past = [np.zeros((1, 4, 3, 16), np.float32) for _ in caches]
bad = [("a mask of 4 for 3 + 2", [ids, np.ones((1, 4), np.int64), *past],
        "dimension 3 of operand 1 (total) and dimension 3 of operand 0 "
        "(sequence + past) differ at these input sizes"),
       ("a mask of 6 for 3 + 2", [ids, np.ones((1, 6), np.int64), *past],
        "(Add, opset 17)"),
       ("v0 with a past of 5 beside k0's 3",
        [ids, np.ones((1, 5), np.int64), past[0], np.zeros((1, 4, 5, 16), np.float32),
         *past[2:]], "dimension 2 ('past') is 5, but an earlier input gives it 3")]
for what, args, expect in bad:
    try:
        m(*args)
        raise AssertionError(f"{what} was accepted")
    except kiln.Error as e:
        assert expect in str(e), (what, str(e))
got = m(ids, np.ones((1, 5), np.int64), *past)
assert [g.shape for g in got] == [(1, 2, 300)] + [(1, 4, 5, 16)] * 4, [g.shape for g in got]
print("symbolic transformer: ok")
