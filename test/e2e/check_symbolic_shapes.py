#!/usr/bin/python3
"""A symbolic dimension that is not an independent batch (docs/shapes.md): a
sequence length in the middle of the shape, mixed across positions
(x @ x^T scores, a mean over the sequence). Compiled once with
--dim seq=1..512, run at several lengths through kiln-run --test-data and
through Python's kiln.load(), each compared with numpy (rtol 1e-4, atol
1e-4 in float32); a length outside the range is refused.

Python also checks a torch encoder layer exported with dynamic_axes (head
reshapes through Shape chains) against torch at seq 1, 9, 100 and 256.
Size of a tensor with two symbolic dimensions is checked too (as a
divisor and a Reshape target), and CumSum over symbolic sizes (reverse,
exclusive, a run-time axis) and ArgMax/ArgMin against numpy, and 1-D convolutions and pooling
over a symbolic length, MultiheadAttention, GroupNorm and InstanceNorm
(reshapes that regroup run-time sizes) transposed convolutions (1-D and
2-D, by output phase) and DepthToSpace against torch, and Einsum, Pad
(reflect, edge, wrap), Tile, GatherElements, integer reductions and float
reductions of every element, ScatterND/ScatterElements, and floor division
and Mod in shape arithmetic (window partitions, SpaceToDepth; odd sizes
refused at run time), ReverseSequence, Flatten and Softmax-11 (either side
of the axis of run-time size), a vector times batched matrices, Dropout's mask
and a Gemm bias of run-time rows (refused where it would broadcast) against
numpy. Then symbolic_shapes_driver.c runs it through the raw C ABI: no allocation
at any length, output shapes read back, rows that agree with a run at the
maximum, and malformed calls refused.

usage: check_symbolic_shapes.py KILN_COMPILE KILN_RUN RUNTIME_INCLUDE WORKDIR [PYTHONPATH]
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper as nh

compile_, run, include, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(0)
W = rng.standard_normal((64, 32)).astype(np.float32) / 8
B = rng.standard_normal(32).astype(np.float32)
G = rng.standard_normal(32).astype(np.float32)
nodes = [
    h.make_node("MatMul", ["x", "W"], ["m"], name="mm"),
    h.make_node("Add", ["m", "B"], ["a"], name="add"),
    h.make_node("Relu", ["a"], ["r"], name="relu"),
    h.make_node("Softmax", ["r"], ["y"], name="softmax", axis=-1),
    h.make_node("LayerNormalization", ["a", "G", "B"], ["ln"], name="ln", axis=-1),
    h.make_node("ReduceMean", ["ln"], ["z"], name="mean", axes=[1], keepdims=0),
    h.make_node("Transpose", ["r"], ["t"], name="tr", perm=[0, 2, 1]),
    h.make_node("MatMul", ["r", "t"], ["att"], name="scores"),
]
graph = h.make_graph(
    nodes, "seq",
    [h.make_tensor_value_info("x", TensorProto.FLOAT, [2, "seq", 64])],
    [h.make_tensor_value_info("y", TensorProto.FLOAT, [2, "seq", 32]),
     h.make_tensor_value_info("z", TensorProto.FLOAT, [2, 32]),
     h.make_tensor_value_info("att", TensorProto.FLOAT, [2, "seq", "seq"])],
    [nh.from_array(W, "W"), nh.from_array(B, "B"), nh.from_array(G, "G")])
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
model.ir_version = 8
path = os.path.join(work, "seq.onnx")
onnx.save(model, path)


def reference(x):
    a = x.astype(np.float64) @ W + B
    r = np.maximum(a, 0)
    e = np.exp(r - r.max(-1, keepdims=True))
    mu = a.mean(-1, keepdims=True)
    ln = (a - mu) / np.sqrt(((a - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * G + B
    return [e / e.sum(-1, keepdims=True), ln.mean(1), r @ r.transpose(0, 2, 1)]


so = os.path.join(work, "seq.so")
r = subprocess.run([compile_, path, "-o", so, "--dim", "seq=1..512"],
                   capture_output=True, text=True)
assert r.returncode == 0, r.stderr
assert "one graph that runs at the sizes given at run time" in r.stderr, r.stderr
info = subprocess.run([run, so, "--info"], capture_output=True, text=True,
                      check=True).stdout
assert "'x' float32 [2,512,64]  (axis 1: 'seq')" in info, info
assert "'att' float32 [2,512,512]  (axis 1: 'seq', axis 2: 'seq')" in info, info

for n in [1, 7, 128, 333, 512]:
    d = os.path.join(work, f"seq{n}")
    os.makedirs(d, exist_ok=True)
    x = rng.standard_normal((2, n, 64)).astype(np.float32)
    open(os.path.join(d, "input_0.pb"), "wb").write(
        nh.from_array(x, "x").SerializeToString())
    for i, (name, y) in enumerate(zip(["y", "z", "att"], reference(x))):
        open(os.path.join(d, f"output_{i}.pb"), "wb").write(
            nh.from_array(y.astype(np.float32), name).SerializeToString())
    subprocess.run([run, so, "--test-data", d, "--rtol", "1e-4", "--atol",
                    "1e-4"], check=True)

d = os.path.join(work, "seq513")
os.makedirs(d, exist_ok=True)
open(os.path.join(d, "input_0.pb"), "wb").write(nh.from_array(
    np.zeros((2, 513, 64), np.float32), "x").SerializeToString())
r = subprocess.run([run, so, "--test-data", d], capture_output=True, text=True)
assert r.returncode != 0 and "outside the range 1..512" in r.stderr, r

here = os.path.dirname(os.path.abspath(__file__))
driver = os.path.join(work, "driver")
subprocess.run([os.environ.get("CC", "cc"), "-O1", "-I", include, "-o", driver,
                os.path.join(here, "symbolic_shapes_driver.c"), "-ldl", "-lm"],
               check=True)
subprocess.run([driver, so], check=True)

if len(sys.argv) > 5:
    sys.path.insert(0, sys.argv[5])
    import kiln
    m = kiln.load(so)
    for n in [3, 200]:
        x = rng.standard_normal((2, n, 64)).astype(np.float32)
        got = m(x)
        for g, want in zip(got, reference(x)):
            assert g.shape == want.shape, (g.shape, want.shape)
            np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-4)
    try:
        m(np.zeros((2, 600, 64), np.float32))
        raise AssertionError("a length of 600 was accepted")
    except kiln.Error as e:
        assert "outside the range 1..512" in str(e), e
    # A torch encoder layer exported with dynamic_axes: its head reshapes
    # are Shape/Gather/Unsqueeze/Concat chains that ONNX's shape inference
    # resolves to one symbolic size (docs/shapes.md). Reference: torch.
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.ModuleList(torch.nn.Linear(64, 64) for _ in range(3))
            self.o, self.ln = torch.nn.Linear(64, 64), torch.nn.LayerNorm(64)
            self.f1, self.f2 = torch.nn.Linear(64, 256), torch.nn.Linear(256, 64)
            self.ln2 = torch.nn.LayerNorm(64)

        def forward(self, x):
            b, n, _ = x.shape
            q, k, v = (l(x).view(b, n, 4, 16).transpose(1, 2) for l in self.qkv)
            a = torch.softmax(q @ k.transpose(-1, -2) / 4.0, -1) @ v
            h = self.ln(x + self.o(a.transpose(1, 2).reshape(b, n, 64)))
            return self.ln2(h + self.f2(torch.nn.functional.gelu(self.f1(h))))

    torch.manual_seed(0)
    enc = Encoder().eval()
    path = os.path.join(work, "encoder.onnx")
    torch.onnx.export(enc, (torch.randn(1, 10, 64),), path, input_names=["x"],
                      output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {1: "seq"}, "y": {1: "seq"}})
    m = kiln.load(kiln.compile(path, dims={"seq": (1, 256)}))
    for n in [1, 9, 100, 256]:
        x = torch.randn(1, n, 64)
        with torch.no_grad():
            want = enc(x).numpy()
        got = m(x.numpy())[0]
        assert got.shape == want.shape, (got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

    # Size of a tensor with two symbolic dimensions (`x.numel()`): their
    # product at run time, used as a divisor and as a Reshape target.
    def vi(name, elt, shape):
        return h.make_tensor_value_info(name, elt, shape)

    g = h.make_graph(
        [h.make_node("Size", ["x"], ["n"]),
         h.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
         h.make_node("Div", ["x", "nf"], ["y"]),
         h.make_node("Unsqueeze", ["n", "zero"], ["n1"]),
         h.make_node("Reshape", ["x", "n1"], ["flat"])],
        "size", [vi("x", TensorProto.FLOAT, ["seq", 4, "b"])],
        [vi("y", TensorProto.FLOAT, ["seq", 4, "b"]),
         vi("flat", TensorProto.FLOAT, [None]), vi("n", TensorProto.INT64, [])],
        [nh.from_array(np.array([0], np.int64), "zero")])
    path = os.path.join(work, "size.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    m = kiln.load(kiln.compile(path, dims={"seq": (1, 20), "b": (1, 3)}))
    for n, b in [(1, 1), (7, 2), (20, 3)]:
        x = rng.standard_normal((n, 4, b)).astype(np.float32)
        y, flat, count = m(x)
        assert int(count) == x.size, (count, x.size)
        np.testing.assert_allclose(y, x / x.size, rtol=1e-6)
        np.testing.assert_array_equal(flat, x.ravel())

    # CumSum over symbolic sizes (position ids as attention_mask.cumsum(-1)
    # exports them): every reverse/exclusive pair, along a symbolic axis and
    # a static one, and along an axis given at run time.
    def cumsum_ref(x, axis, reverse, exclusive):
        y = np.flip(x, axis) if reverse else x
        c = np.cumsum(y, axis)
        if exclusive:
            c = c - y
        return np.flip(c, axis) if reverse else c

    combos = [(a, r, e) for a in (1, 2) for r in (0, 1) for e in (0, 1)]
    axes = {f"a{a}": np.array(a, np.int64) for a in (1, 2)}
    g = h.make_graph(
        [h.make_node("CumSum", ["x", f"a{a}"], [f"y{a}{r}{e}"], reverse=r,
                     exclusive=e) for a, r, e in combos] +
        [h.make_node("CumSum", ["m", "axis"], ["ym"])],
        "cumsum", [vi("x", TensorProto.FLOAT, ["b", "seq", 3]),
                   vi("m", TensorProto.INT64, ["b", "seq"]),
                   vi("axis", TensorProto.INT64, [])],
        [vi(f"y{a}{r}{e}", TensorProto.FLOAT, ["b", "seq", 3]) for a, r, e in combos] +
        [vi("ym", TensorProto.INT64, ["b", "seq"])],
        [nh.from_array(v, k) for k, v in axes.items()])
    path = os.path.join(work, "cumsum.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), path)
    m = kiln.load(kiln.compile(path, dims={"seq": (1, 40), "b": (1, 3)}))
    for b, n in [(1, 1), (2, 17), (3, 40)]:
        x = rng.standard_normal((b, n, 3)).astype(np.float32)
        mask = rng.integers(0, 2, (b, n)).astype(np.int64)
        axis = np.array(-1 if n % 2 else 0, np.int64)
        got = m(x, mask, axis)
        for (a, r, e), y in zip(combos, got):
            np.testing.assert_allclose(y, cumsum_ref(x, a, r, e), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(got[-1], np.cumsum(mask, int(axis)))

    # ArgMax / ArgMin over symbolic sizes (a CTC or token-classification
    # head's argmax over [batch, frames, vocabulary]): along the symbolic
    # axis with keepdims, along the static one without, the last index of
    # ties with select_last_index.
    g = h.make_graph(
        [h.make_node("ArgMax", ["x"], ["amax"], axis=1, keepdims=1),
         h.make_node("ArgMin", ["x"], ["amin"], axis=-1, keepdims=0,
                     select_last_index=1)],
        "arg", [vi("x", TensorProto.FLOAT, ["b", "seq", 5])],
        [vi("amax", TensorProto.INT64, ["b", 1, 5]),
         vi("amin", TensorProto.INT64, ["b", "seq"])])
    path = os.path.join(work, "arg.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    m = kiln.load(kiln.compile(path, dims={"seq": (1, 40), "b": (1, 3)}))
    for b, n in [(1, 1), (2, 17), (3, 40)]:
        x = rng.integers(-3, 3, (b, n, 5)).astype(np.float32)  # ties
        amax, amin = m(x)
        np.testing.assert_array_equal(amax, np.argmax(x, 1)[:, None, :])
        last = 4 - np.argmin(x[..., ::-1], -1)
        np.testing.assert_array_equal(amin, last)

    # 1-D convolutions and pooling over a symbolic length (an audio front
    # end: Conv1d, a strided Conv1d with BatchNorm1d, MaxPool1d), lifted to
    # 2-D with kiln.sized_reshape; odd lengths and the bounds included.
    class Audio(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv1d(20, 16, 3, padding=1)
            self.c2 = torch.nn.Conv1d(16, 16, 5, stride=2, padding=2)
            self.bn, self.pool = torch.nn.BatchNorm1d(16), torch.nn.MaxPool1d(2)

        def forward(self, x):
            x = torch.nn.functional.gelu(self.c1(x))
            x = torch.relu(self.bn(self.c2(x)))
            return self.pool(x).transpose(1, 2)

    audio = Audio().eval()
    with torch.no_grad():
        audio.bn.running_mean.uniform_(-1, 1)
        audio.bn.running_var.uniform_(0.5, 2)
    path = os.path.join(work, "audio.onnx")
    torch.onnx.export(audio, (torch.randn(1, 20, 50),), path, input_names=["x"],
                      output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {0: "b", 2: "t"}, "y": {0: "b", 1: "t2"}})
    m = kiln.load(kiln.compile(path, dims={"b": (1, 2), "t": (4, 500)}))
    for b, n in [(1, 4), (2, 7), (1, 123), (2, 500)]:
        x = torch.randn(b, 20, n)
        with torch.no_grad():
            want = audio(x).numpy()
        got = m(x.numpy())[0]
        assert got.shape == want.shape, (b, n, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

    # Reshapes that regroup run-time sizes, through one dimension: torch's
    # MultiheadAttention views [t, b, e] as [t, b * heads, e / heads], and
    # GroupNorm (exported as Reshape, InstanceNormalization, Reshape) views
    # [b, c, h, w] as [b, groups, c / groups * h * w] and back.
    class Regroup(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = torch.nn.MultiheadAttention(16, 4, batch_first=True)
            self.gn = torch.nn.GroupNorm(4, 16)
            self.inorm = torch.nn.InstanceNorm2d(16, affine=True)

        def forward(self, seq, img):
            a = self.mha(seq, seq, seq, need_weights=False)[0]
            return a, self.gn(img) + self.inorm(img)

    regroup = Regroup().eval()
    with torch.no_grad():
        regroup.gn.weight.uniform_(0.5, 1.5)
        regroup.gn.bias.uniform_(-0.5, 0.5)
        regroup.inorm.weight.uniform_(0.5, 1.5)
    path = os.path.join(work, "regroup.onnx")
    torch.onnx.export(regroup, (torch.randn(2, 5, 16), torch.randn(1, 16, 6, 7)), path,
                      input_names=["seq", "img"], output_names=["a", "g"], opset_version=17,
                      dynamic_axes={"seq": {0: "b", 1: "t"}, "img": {0: "n", 2: "h", 3: "w"}})
    m = kiln.load(kiln.compile(path, dims={"b": (1, 3), "t": (1, 30), "n": (1, 2),
                                           "h": (2, 40), "w": (2, 40)}))
    for (b, t), (n, hh, ww) in [((1, 1), (1, 2, 2)), ((3, 17), (2, 9, 31)), ((2, 30), (1, 40, 40))]:
        seq, img = torch.randn(b, t, 16), torch.randn(n, 16, hh, ww)
        with torch.no_grad():
            want = [w.numpy() for w in regroup(seq, img)]
        got = m(seq.numpy(), img.numpy())
        for g, w in zip(got, want):
            assert g.shape == w.shape, (g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)

    # Transposed convolutions over symbolic sizes (a segmentation decoder's
    # upsampling, a vocoder's), by output phase: kernel 2 stride 2 (U-Net),
    # kernel 4 stride 2 pad 1, kernel 3 stride 2 pad 1 output_padding 1
    # without bias, grouped, and 1-D kernel 16 stride 8 pad 4.
    class Up(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.ConvTranspose2d(8, 4, 2, stride=2)
            self.b = torch.nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1)
            self.c = torch.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1,
                                              output_padding=1, bias=False)
            self.g = torch.nn.ConvTranspose2d(8, 8, 4, stride=2, padding=1, groups=4)
            self.v = torch.nn.ConvTranspose1d(6, 3, 16, stride=8, padding=4)

        def forward(self, img, wave):
            return self.a(img), self.b(img), self.c(img), self.g(img), self.v(wave)

    up = Up().eval()
    path = os.path.join(work, "up.onnx")
    torch.onnx.export(up, (torch.randn(1, 8, 5, 6), torch.randn(1, 6, 10)), path,
                      input_names=["img", "wave"], opset_version=17,
                      dynamic_axes={"img": {0: "n", 2: "h", 3: "w"}, "wave": {0: "b", 2: "t"}})
    m = kiln.load(kiln.compile(path, dims={"n": (1, 2), "h": (1, 24), "w": (1, 24),
                                           "b": (1, 2), "t": (1, 50)}))
    for (n, hh, ww), (b, t) in [((1, 1, 1), (1, 1)), ((2, 7, 13), (2, 17)), ((1, 24, 24), (1, 50))]:
        img, wave = torch.randn(n, 8, hh, ww), torch.randn(b, 6, t)
        with torch.no_grad():
            want = [w.numpy() for w in up(img, wave)]
        got = m(img.numpy(), wave.numpy())
        for g, w in zip(got, want):
            assert g.shape == w.shape, (g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)

    # DepthToSpace over a symbolic batch, height and width (a super-
    # resolution model's pixel shuffle at any image size), both modes.
    g = h.make_graph(
        [h.make_node("DepthToSpace", ["x"], ["dcr"], blocksize=2, mode="DCR"),
         h.make_node("DepthToSpace", ["x"], ["crd"], blocksize=2, mode="CRD")],
        "d2s", [vi("x", TensorProto.FLOAT, ["n", 12, "h", "w"])],
        [vi("dcr", TensorProto.FLOAT, ["n", 3, None, None]),
         vi("crd", TensorProto.FLOAT, ["n", 3, None, None])])
    path = os.path.join(work, "d2s.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    m = kiln.load(kiln.compile(path, dims={"n": (1, 2), "h": (1, 30), "w": (1, 30)}))
    for n, hh, ww in [(1, 1, 1), (2, 7, 13), (1, 30, 30)]:
        x = rng.standard_normal((n, 12, hh, ww)).astype(np.float32)
        dcr, crd = m(x)
        want_dcr = x.reshape(n, 2, 2, 3, hh, ww).transpose(0, 3, 4, 1, 5, 2).reshape(
            n, 3, hh * 2, ww * 2)
        want_crd = torch.nn.functional.pixel_shuffle(torch.from_numpy(x), 2).numpy()
        np.testing.assert_array_equal(dcr, want_dcr)
        np.testing.assert_array_equal(crd, want_crd)

    # Einsum over symbolic sizes, as transformer exports write it: scores
    # and their product with values per head, a projection, an ellipsis,
    # and rotary embeddings' outer product of positions and frequencies.
    eqs = ["bhid,bhjd->bhij", "bhij,bhjd->bhid", "bnd,de->bne", "...d,de->...e",
           "i,j->ij"]
    g = h.make_graph(
        [h.make_node("Einsum", ["q", "k"], ["s0"], equation=eqs[0]),
         h.make_node("Einsum", ["s0", "k"], ["s1"], equation=eqs[1]),
         h.make_node("Einsum", ["x", "w"], ["s2"], equation=eqs[2]),
         h.make_node("Einsum", ["x", "w"], ["s3"], equation=eqs[3]),
         h.make_node("Einsum", ["pos", "freq"], ["s4"], equation=eqs[4])],
        "einsum", [vi("q", TensorProto.FLOAT, ["b", 2, "t", 4]),
                   vi("k", TensorProto.FLOAT, ["b", 2, "t", 4]),
                   vi("x", TensorProto.FLOAT, ["b", "t", 4]),
                   vi("pos", TensorProto.FLOAT, ["t"])],
        [vi(f"s{i}", TensorProto.FLOAT, None) for i in range(5)],
        [nh.from_array(rng.standard_normal((4, 6)).astype(np.float32), "w"),
         nh.from_array(rng.standard_normal(3).astype(np.float32), "freq")])
    path = os.path.join(work, "einsum.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    w_, freq = (nh.to_array(t) for t in g.initializer)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 3), "t": (1, 30)}))
    for b, t in [(1, 1), (3, 17), (2, 30)]:
        q, k = (rng.standard_normal((b, 2, t, 4)).astype(np.float32) for _ in range(2))
        x = rng.standard_normal((b, t, 4)).astype(np.float32)
        pos = np.arange(t, dtype=np.float32)
        got = m(q, k, x, pos)
        s0 = np.einsum(eqs[0], q, k)
        want = [s0, np.einsum(eqs[1], s0, k), np.einsum(eqs[2], x, w_),
                np.einsum(eqs[3], x, w_), np.einsum(eqs[4], pos, freq)]
        for gg, ww in zip(got, want):
            assert gg.shape == ww.shape, (gg.shape, ww.shape)
            np.testing.assert_allclose(gg, ww, rtol=1e-4, atol=1e-4)

    # Pad in reflect, edge and wrap modes over a symbolic length (an audio
    # model's reflection padding before an STFT or a convolution), constant
    # pads on the run-time axis and a static one; length 1 included.
    g = h.make_graph(
        [h.make_node("Pad", ["x", "pads"], [f"y_{mode}"], mode=mode)
         for mode in ("reflect", "edge", "wrap")],
        "pad", [vi("x", TensorProto.FLOAT, ["b", 3, "t"])],
        [vi(f"y_{mode}", TensorProto.FLOAT, None) for mode in ("reflect", "edge", "wrap")],
        [nh.from_array(np.array([0, 1, 3, 0, 0, 2], np.int64), "pads")])
    path = os.path.join(work, "pad_modes.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 19)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 2), "t": (1, 50)}))
    for b, t in [(1, 1), (2, 2), (1, 5), (2, 50)]:
        x = rng.standard_normal((b, 3, t)).astype(np.float32)
        got = m(x)
        width = ((0, 0), (1, 0), (3, 2))
        # numpy's reflect needs two elements; one element is repeated (as Kiln
        # pads a static axis of one).
        reflect = np.pad(x, ((0, 0), (1, 0), (0, 0)), mode="reflect")
        reflect = np.pad(reflect, ((0, 0), (0, 0), (3, 2)),
                         mode="reflect" if t > 1 else "edge")
        want = [reflect, np.pad(x, width, mode="edge"), np.pad(x, width, mode="wrap")]
        for gg, ww in zip(got, want):
            assert gg.shape == ww.shape, (gg.shape, ww.shape)
            np.testing.assert_array_equal(gg, ww)

    # Integer reductions (a mask's token count, `(x > 0).sum(1)`, std's
    # element count from a shape): ReduceSum, Max, Min and Prod of int64,
    # int32 and int8, over a symbolic axis, a static one and every element
    # (a large one reduces in vectorized blocks), with symbolic sizes and
    # compiled static; exact, overflow wrapping as numpy's does.
    ops = [("ReduceSum", np.sum), ("ReduceMax", np.max), ("ReduceMin", np.min),
           ("ReduceProd", np.prod)]
    types = [(TensorProto.INT64, np.int64), (TensorProto.INT32, np.int32),
             (TensorProto.INT8, np.int8)]
    nodes, outs = [], []
    for ti, (tp, _) in enumerate(types):
        nodes.append(h.make_node("Cast", ["x"], [f"x{ti}"], to=tp))
        for name, _ in ops:
            for ai, axes in enumerate(([1], [2], None)):
                out = f"{name}_{ti}_{ai}"
                ins = [f"x{ti}"] + ([f"axes{ai}"] if axes else [])
                nodes.append(h.make_node(name, ins, [out], keepdims=int(ai != 0)))
                outs.append(vi(out, tp, None))
    inits = [nh.from_array(np.array([1], np.int64), "axes0"),
             nh.from_array(np.array([2], np.int64), "axes1")]
    g = h.make_graph(nodes, "int_reduce", [vi("x", TensorProto.FLOAT, ["b", "t", 300])],
                     outs, inits)
    path = os.path.join(work, "int_reduce.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 18)]), path)
    dyn = kiln.load(kiln.compile(path, dims={"b": (1, 2), "t": (1, 20)}))
    fixed = kiln.load(kiln.compile(path, output=os.path.join(work, "int_reduce_static.so"),
                                   input_shapes={"x": (2, 20, 300)}))
    for m, shapes in [(dyn, [(1, 1, 300), (1, 2, 300), (2, 13, 300)]),
                      (fixed, [(2, 20, 300)])]:
        for shape in shapes:
            x = rng.integers(-3, 4, shape).astype(np.float32)
            got = iter(m(x))
            for _, npt in types:
                xi = x.astype(npt)
                for _, fn in ops:
                    for ai, axes in enumerate((1, 2, None)):
                        want = fn(xi, axis=axes, keepdims=ai != 0).astype(npt)
                        np.testing.assert_array_equal(next(got), want)

    # Float ReduceMax and ReduceMin of every element (DynamicQuantizeLinear's
    # range: one pass keeps both, in vectorized blocks of 512 and the rest
    # after them, counted at run time) and ReduceSum of every element:
    # exact for max and min (a NaN propagates), rtol 1e-5 for the sum; 37,
    # 592 (one block) and 7,400 elements.
    g = h.make_graph(
        [h.make_node("ReduceMax", ["x"], ["hi"], keepdims=0),
         h.make_node("ReduceMin", ["x"], ["lo"], keepdims=0),
         h.make_node("ReduceSum", ["x"], ["sum"], keepdims=0)],
        "range", [vi("x", TensorProto.FLOAT, ["b", "t", 37])],
        [vi(n, TensorProto.FLOAT, None) for n in ("hi", "lo", "sum")])
    path = os.path.join(work, "range.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 18)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 2), "t": (1, 100)}))
    for shape, nan in [((1, 1, 37), False), ((1, 16, 37), False), ((2, 100, 37), False),
                       ((2, 100, 37), True), ((1, 16, 37), True)]:
        x = rng.standard_normal(shape).astype(np.float32)
        if nan:
            x.flat[x.size // 3] = np.nan
        hi, lo, total = m(x)
        np.testing.assert_array_equal(hi, x.max())
        np.testing.assert_array_equal(lo, x.min())
        np.testing.assert_allclose(total, x.astype(np.float64).sum(), rtol=1e-5, atol=1e-5)

    # Tile of symbolic sizes by constant repeats (`x.repeat(1, 2, 1)`),
    # a repeat of 1 and of 0 included.
    g = h.make_graph(
        [h.make_node("Tile", ["x", "r0"], ["y0"]), h.make_node("Tile", ["x", "r1"], ["y1"])],
        "tile", [vi("x", TensorProto.FLOAT, ["b", "t", 3])],
        [vi("y0", TensorProto.FLOAT, None), vi("y1", TensorProto.FLOAT, None)],
        [nh.from_array(np.array([1, 2, 1], np.int64), "r0"),
         nh.from_array(np.array([2, 3, 0], np.int64), "r1")])
    path = os.path.join(work, "tile.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 2), "t": (1, 20)}))
    for b, t in [(1, 1), (2, 7), (2, 20)]:
        x = rng.standard_normal((b, t, 3)).astype(np.float32)
        y0, y1 = m(x)
        np.testing.assert_array_equal(y0, np.tile(x, (1, 2, 1)))
        np.testing.assert_array_equal(y1, np.tile(x, (2, 3, 0)))

    # GatherElements over symbolic sizes (x.gather(1, x.argmax(1, keepdim)),
    # a pointer network's pick): along the symbolic axis and a static one,
    # negative indices counting from the end.
    g = h.make_graph(
        [h.make_node("GatherElements", ["x", "i1"], ["y1"], axis=1),
         h.make_node("GatherElements", ["x", "i2"], ["y2"], axis=2)],
        "gather_elements", [vi("x", TensorProto.FLOAT, ["b", "t", 4]),
                            vi("i1", TensorProto.INT64, ["b", 2, 4]),
                            vi("i2", TensorProto.INT64, ["b", "t", 3])],
        [vi("y1", TensorProto.FLOAT, None), vi("y2", TensorProto.FLOAT, None)])
    path = os.path.join(work, "gather_elements.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 2), "t": (2, 20)}))
    for b, t in [(1, 2), (2, 9), (2, 20)]:
        x = rng.standard_normal((b, t, 4)).astype(np.float32)
        i1 = rng.integers(-t, t, (b, 2, 4)).astype(np.int64)
        i2 = rng.integers(-4, 4, (b, t, 3)).astype(np.int64)
        y1, y2 = m(x, i1, i2)
        np.testing.assert_array_equal(y1, np.take_along_axis(x, np.where(i1 < 0, i1 + t, i1), 1))
        np.testing.assert_array_equal(y2, np.take_along_axis(x, np.where(i2 < 0, i2 + 4, i2), 2))
    # ScatterND and ScatterElements over symbolic sizes (index assignments
    # `x[i, j] += v` and `x.scatter_(1, i, v)`): ScatterND with reduction add
    # at (batch, position) pairs, repeats included; ScatterElements along the
    # symbolic axis with negative indices. Indices and updates whose sizes
    # come from different symbols must agree at run time: a clear error when
    # they do not.
    g = h.make_graph(
        [h.make_node("ScatterND", ["x", "ind", "upd"], ["y"], reduction="add"),
         h.make_node("ScatterElements", ["z", "i2", "u2"], ["y2"], axis=1)],
        "scatter", [vi("x", TensorProto.FLOAT, ["b", "t", 4]),
                    vi("ind", TensorProto.INT64, ["b", 3, 2]),
                    vi("upd", TensorProto.FLOAT, ["b", 3, 4]),
                    vi("z", TensorProto.FLOAT, ["b", "t"]),
                    vi("i2", TensorProto.INT64, ["b", "k"]),
                    vi("u2", TensorProto.FLOAT, ["b", "k2"])],
        [vi("y", TensorProto.FLOAT, None), vi("y2", TensorProto.FLOAT, None)])
    path = os.path.join(work, "scatter.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 16)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 3), "t": (1, 30), "k": (1, 30),
                                           "k2": (1, 30)}))
    for b, t in [(1, 1), (2, 9), (3, 30)]:
        x = rng.standard_normal((b, t, 4)).astype(np.float32)
        ind = np.stack([rng.integers(0, b, (b, 3)), rng.integers(0, t, (b, 3))], -1)
        upd = rng.standard_normal((b, 3, 4)).astype(np.float32)
        want = x.copy()
        for i in range(b):
            for j in range(3):
                want[ind[i, j, 0], ind[i, j, 1]] += upd[i, j]
        z = rng.standard_normal((b, t)).astype(np.float32)
        k = min(t, 5)
        i2 = np.stack([rng.permutation(t)[:k] - t * (r % 2) for r in range(b)])
        u2 = rng.standard_normal((b, k)).astype(np.float32)
        want2 = z.copy()
        np.put_along_axis(want2, np.where(i2 < 0, i2 + t, i2), u2, 1)
        y, y2 = m(x, ind.astype(np.int64), upd, z, i2.astype(np.int64), u2)
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(y2, want2)
    try:
        m(x, ind.astype(np.int64), upd, z, i2.astype(np.int64), u2[:, :-1])
        raise AssertionError("ScatterElements ran with updates shorter than its indices")
    except RuntimeError as e:
        assert "of the indices and of the updates" in str(e) and "ScatterElements" in str(e), e
    # Floor division and Mod in shape arithmetic over symbolic sizes: a
    # Swin-style window partition `x.view(b, c, h // 2, 2, w // 2, 2)`, a
    # crop to an even height `x[:, :, :h - h % 2]`, and SpaceToDepth. The
    # sizes that must divide do so only at some shapes: a run at an odd
    # height is refused with the node named.
    def const(name, value):
        return h.make_node("Constant", [], [name], name="c_" + name,
                           value=nh.from_array(np.array(value, np.int64)))
    g = h.make_graph(
        [const("i0", 0), const("i2", 2), const("i3", 3), const("two", 2),
         const("axis0", [0]), const("c3", [3]), const("two1", [2]),
         const("zero1", [0]), const("axis2", [2]),
         h.make_node("Shape", ["x"], ["s"]),
         h.make_node("Gather", ["s", "i0"], ["b0"]),
         h.make_node("Gather", ["s", "i2"], ["h0"]),
         h.make_node("Gather", ["s", "i3"], ["w0"]),
         h.make_node("Div", ["h0", "two"], ["hq"]),
         h.make_node("Div", ["w0", "two"], ["wq"]),
         h.make_node("Unsqueeze", ["b0", "axis0"], ["b1"]),
         h.make_node("Unsqueeze", ["hq", "axis0"], ["hq1"]),
         h.make_node("Unsqueeze", ["wq", "axis0"], ["wq1"]),
         h.make_node("Concat", ["b1", "c3", "hq1", "two1", "wq1", "two1"], ["target"], axis=0),
         h.make_node("Reshape", ["x", "target"], ["v"], name="windows"),
         h.make_node("Transpose", ["v"], ["win"], perm=[0, 2, 4, 1, 3, 5]),
         h.make_node("Mod", ["h0", "two"], ["hr"]),
         h.make_node("Sub", ["h0", "hr"], ["he"]),
         h.make_node("Unsqueeze", ["he", "axis0"], ["he1"]),
         h.make_node("Slice", ["x", "zero1", "he1", "axis2"], ["cropped"]),
         h.make_node("SpaceToDepth", ["cropped"], ["folded"], name="fold", blocksize=2)],
        "floordiv", [vi("x", TensorProto.FLOAT, ["b", 3, "h", "w"])],
        [vi("win", TensorProto.FLOAT, None), vi("cropped", TensorProto.FLOAT, None),
         vi("folded", TensorProto.FLOAT, None)])
    path = os.path.join(work, "floordiv.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 2), "h": (2, 64), "w": (2, 64)}))
    for b, hh, ww in [(1, 2, 2), (2, 6, 10), (1, 64, 64), (2, 32, 14)]:
        x = rng.standard_normal((b, 3, hh, ww)).astype(np.float32)
        win, cropped, folded = m(x)
        np.testing.assert_array_equal(
            win, x.reshape(b, 3, hh // 2, 2, ww // 2, 2).transpose(0, 2, 4, 1, 3, 5))
        np.testing.assert_array_equal(cropped, x[:, :, :hh - hh % 2])
        np.testing.assert_array_equal(
            folded, x.reshape(b, 3, hh // 2, 2, ww // 2, 2).transpose(0, 3, 5, 1, 2, 4)
            .reshape(b, 12, hh // 2, ww // 2))
    for hh, ww, what in [(7, 8, "'windows' (Reshape"), (8, 9, "'windows' (Reshape")]:
        try:
            m(rng.standard_normal((1, 3, hh, ww)).astype(np.float32))
            raise AssertionError("a %dx%d image reshaped into 2x2 windows" % (hh, ww))
        except RuntimeError as e:
            assert what in str(e) and "as many elements" in str(e), e
    # SpaceToDepth alone: its own message at an odd width.
    g = h.make_graph(
        [h.make_node("SpaceToDepth", ["x"], ["y"], name="fold", blocksize=2)],
        "s2d", [vi("x", TensorProto.FLOAT, ["b", 3, "h", "w"])], [vi("y", TensorProto.FLOAT, None)])
    path = os.path.join(work, "space_to_depth.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 2), "h": (2, 64), "w": (2, 64)}))
    for b, hh, ww in [(1, 2, 4), (2, 30, 18)]:
        x = rng.standard_normal((b, 3, hh, ww)).astype(np.float32)
        np.testing.assert_array_equal(
            m(x)[0], x.reshape(b, 3, hh // 2, 2, ww // 2, 2).transpose(0, 3, 5, 1, 2, 4)
            .reshape(b, 12, hh // 2, ww // 2))
    try:
        m(rng.standard_normal((1, 3, 4, 5)).astype(np.float32))
        raise AssertionError("SpaceToDepth ran on a width of 5")
    except RuntimeError as e:
        assert "'fold' (SpaceToDepth" in str(e) and "width must be a multiple of blocksize 2" in str(e), e
    # Every dimension symbolic, channels too: DepthToSpace (both modes)
    # divides the channels by blocksize^2 (a guard checks they divide),
    # SpaceToDepth multiplies them.
    g = h.make_graph(
        [h.make_node("DepthToSpace", ["x"], ["dcr"], name="shuffle", blocksize=2),
         h.make_node("DepthToSpace", ["x"], ["crd"], name="crd", blocksize=2, mode="CRD"),
         h.make_node("SpaceToDepth", ["dcr"], ["back"], name="fold", blocksize=2)],
        "d2s", [vi("x", TensorProto.FLOAT, ["b", "c", "h", "w"])],
        [vi(n, TensorProto.FLOAT, None) for n in ("dcr", "crd", "back")])
    path = os.path.join(work, "depth_to_space.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 2), "c": (1, 32), "h": (1, 9), "w": (1, 9)}))
    for b, c, hh, ww in [(1, 4, 1, 1), (2, 12, 3, 5), (1, 32, 9, 9)]:
        x = rng.standard_normal((b, c, hh, ww)).astype(np.float32)
        dcr, crd, back = m(x)
        np.testing.assert_array_equal(
            dcr, x.reshape(b, 2, 2, c // 4, hh, ww).transpose(0, 3, 4, 1, 5, 2)
            .reshape(b, c // 4, hh * 2, ww * 2))
        np.testing.assert_array_equal(
            crd, x.reshape(b, c // 4, 2, 2, hh, ww).transpose(0, 1, 4, 2, 5, 3)
            .reshape(b, c // 4, hh * 2, ww * 2))
        np.testing.assert_array_equal(back, x)  # DCR then SpaceToDepth
    try:
        m(rng.standard_normal((1, 6, 2, 2)).astype(np.float32))
        raise AssertionError("DepthToSpace ran on 6 channels")
    except RuntimeError as e:
        assert "'shuffle' (DepthToSpace" in str(e) and "channels must be a multiple of blocksize^2 = 4" in str(e), e
    # ReverseSequence over a symbolic time and batch (a bidirectional
    # layer's input reversed per sequence length); a lengths tensor of
    # another size is refused at run time.
    g = h.make_graph(
        [h.make_node("ReverseSequence", ["x", "lens"], ["y"], name="rev",
                     batch_axis=1, time_axis=0)],
        "reverse", [vi("x", TensorProto.FLOAT, ["t", "b", 4]),
                    vi("lens", TensorProto.INT64, ["n"])],
        [vi("y", TensorProto.FLOAT, None)])
    path = os.path.join(work, "reverse_sequence.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    m = kiln.load(kiln.compile(path, dims={"t": (1, 20), "b": (1, 4), "n": (1, 4)}))
    for t, b in [(1, 1), (7, 3), (20, 4)]:
        x = rng.standard_normal((t, b, 4)).astype(np.float32)
        lens = rng.integers(1, t + 1, b).astype(np.int64)
        want = x.copy()
        for j in range(b):
            want[:lens[j], j] = x[:lens[j], j][::-1]
        np.testing.assert_array_equal(m(x, lens)[0], want)
    try:
        m(x, lens[:-1])
        raise AssertionError("ReverseSequence ran with fewer lengths than batch entries")
    except RuntimeError as e:
        assert "'rev' (ReverseSequence" in str(e) and "sequence_lens" in str(e), e
    # Flatten of symbolic sizes: either side of the axis a product of
    # run-time sizes, and a classifier head (GlobalAveragePool, Flatten,
    # Gemm) over a batch compiled as one graph (a range from 0).
    g = h.make_graph(
        [h.make_node("Flatten", ["x"], ["y%d" % a], axis=a) for a in (0, 1, 3, 4)],
        "flatten", [vi("x", TensorProto.FLOAT, ["b", 4, "h", "w"])],
        [vi("y%d" % a, TensorProto.FLOAT, None) for a in (0, 1, 3, 4)])
    path = os.path.join(work, "flatten.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 3), "h": (1, 9), "w": (1, 9)}))
    for b, hh, ww in [(1, 1, 1), (2, 5, 3), (3, 9, 9)]:
        x = rng.standard_normal((b, 4, hh, ww)).astype(np.float32)
        for a, y in zip((0, 1, 3, 4), m(x)):
            lead = int(np.prod(x.shape[:a]))
            np.testing.assert_array_equal(y, x.reshape(lead, x.size // lead))
    # Softmax and LogSoftmax before opset 13 coerce the input to a matrix
    # at the axis: here both sides are run-time sizes (b, t * 4).
    g = h.make_graph(
        [h.make_node("Softmax", ["x"], ["y"], axis=1),
         h.make_node("LogSoftmax", ["x"], ["z"], axis=1)],
        "softmax11", [vi("x", TensorProto.FLOAT, ["b", "t", 4])],
        [vi("y", TensorProto.FLOAT, None), vi("z", TensorProto.FLOAT, None)])
    path = os.path.join(work, "softmax11.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 11)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 3), "t": (1, 9)}))
    for b, t in [(1, 1), (2, 5), (3, 9)]:
        x = rng.standard_normal((b, t, 4)).astype(np.float32)
        f = x.reshape(b, -1)
        e = np.exp(f - f.max(1, keepdims=True))
        sm = e / e.sum(1, keepdims=True)
        y, z = m(x)
        np.testing.assert_allclose(y, sm.reshape(x.shape), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(z, np.log(sm).reshape(x.shape), rtol=1e-5, atol=1e-5)
    # A vector times a batch of matrices and back (`v @ W`, `W @ v`) over a
    # symbolic batch; Dropout's mask of run-time size; a Gemm whose bias
    # has a symbolic row count: equal to the rows at run time, or a clear
    # refusal (a bias row broadcast from a run-time 1 is not supported).
    g = h.make_graph(
        [h.make_node("MatMul", ["v", "w"], ["vw"]), h.make_node("MatMul", ["w2", "v"], ["wv"]),
         h.make_node("Dropout", ["w", "ratio"], ["d", "mask"]),
         h.make_node("Gemm", ["a", "bw", "c"], ["g"], name="gemm", beta=0.5)],
        "vectors", [vi("v", TensorProto.FLOAT, [4]), vi("w", TensorProto.FLOAT, ["b", 4, 3]),
                    vi("w2", TensorProto.FLOAT, ["b", 3, 4]),
                    vi("a", TensorProto.FLOAT, ["m", 4]), vi("c", TensorProto.FLOAT, ["r", 3])],
        [vi("vw", TensorProto.FLOAT, None), vi("wv", TensorProto.FLOAT, None),
         vi("mask", TensorProto.BOOL, None), vi("g", TensorProto.FLOAT, None)],
        [nh.from_array(np.array(0.5, np.float32), "ratio"),
         nh.from_array(rng.standard_normal((4, 3)).astype(np.float32), "bw")])
    path = os.path.join(work, "vectors.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    bw = nh.to_array(g.initializer[1])
    m = kiln.load(kiln.compile(path, dims={"b": (0, 5), "m": (1, 6), "r": (1, 6)}))
    for b, rows in [(1, 1), (3, 4), (5, 6)]:
        v = rng.standard_normal(4).astype(np.float32)
        w = rng.standard_normal((b, 4, 3)).astype(np.float32)
        w2 = rng.standard_normal((b, 3, 4)).astype(np.float32)
        a = rng.standard_normal((rows, 4)).astype(np.float32)
        c = rng.standard_normal((rows, 3)).astype(np.float32)
        vw, wv, mask, gy = m(v, w, w2, a, c)
        np.testing.assert_allclose(vw, v @ w, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(wv, w2 @ v, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(mask, np.ones((b, 4, 3), bool))
        np.testing.assert_allclose(gy, a @ bw + 0.5 * c, rtol=1e-5, atol=1e-5)
    try:
        m(v, w, w2, rng.standard_normal((3, 4)).astype(np.float32),
          rng.standard_normal((1, 3)).astype(np.float32))
        raise AssertionError("a Gemm read a 1-row bias of run-time size as 3 rows")
    except RuntimeError as e:
        assert "'gemm' (Gemm" in str(e) and "differ at these input sizes" in str(e), e
    wh = rng.standard_normal((5, 4)).astype(np.float32)
    g = h.make_graph(
        [h.make_node("GlobalAveragePool", ["x"], ["p"]), h.make_node("Flatten", ["p"], ["f"]),
         h.make_node("Gemm", ["f", "wh"], ["y"], transB=1)],
        "head", [vi("x", TensorProto.FLOAT, ["N", 4, 3, 3])], [vi("y", TensorProto.FLOAT, None)],
        [nh.from_array(wh, "wh")])
    path = os.path.join(work, "head.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
    m = kiln.load(kiln.compile(path, dims={"N": (0, 6)}))
    for b in [1, 4, 6]:
        x = rng.standard_normal((b, 4, 3, 3)).astype(np.float32)
        np.testing.assert_allclose(m(x)[0], x.mean(axis=(2, 3)) @ wh.T, rtol=1e-4, atol=1e-5)
    # A symbolic batch meeting a static one (Einsum 'bij,bjk->bik' with y's
    # batch fixed at 5): the static operand is viewed at the graph's
    # run-time sizes, guarded equal; another batch is refused.
    g = h.make_graph(
        [h.make_node("Einsum", ["x", "y"], ["z"], name="es", equation="bij,bjk->bik")],
        "einsum_static", [vi("x", TensorProto.FLOAT, ["b", 2, 3]),
                          vi("y", TensorProto.FLOAT, [5, 3, 4])],
        [vi("z", TensorProto.FLOAT, None)])
    path = os.path.join(work, "einsum_static.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 12)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (0, 10)}))
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    y = rng.standard_normal((5, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(m(x, y)[0], x @ y, rtol=1e-5, atol=1e-5)
    try:
        m(x[:4], y)
        raise AssertionError("Einsum ran a batch of 4 against a static batch of 5")
    except RuntimeError as e:
        assert "'es' (Einsum" in str(e), e
    # GroupNormalization 21 over a symbolic batch and image size (a
    # diffusion U-Net's norm at any resolution), LpNormalization of
    # embeddings at any batch, MeanVarianceNormalization: against numpy.
    gs, gb = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    g = h.make_graph(
        [h.make_node("GroupNormalization", ["x", "gs", "gb"], ["gn"], num_groups=3,
                     epsilon=1e-5),
         h.make_node("LpNormalization", ["e"], ["l2"], axis=-1, p=2),
         h.make_node("MeanVarianceNormalization", ["x"], ["mvn"])],
        "norms", [vi("x", TensorProto.FLOAT, ["b", 6, "h", "w"]),
                  vi("e", TensorProto.FLOAT, ["b", 8])],
        [vi(o, TensorProto.FLOAT, None) for o in ("gn", "l2", "mvn")],
        [nh.from_array(gs, "gs"), nh.from_array(gb, "gb")])
    path = os.path.join(work, "norms.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 21)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 4), "h": (1, 16), "w": (1, 16)}))
    for b, hh, ww in [(1, 1, 1), (2, 5, 7), (4, 16, 16)]:
        x = rng.standard_normal((b, 6, hh, ww)).astype(np.float64)
        e = rng.standard_normal((b, 8)).astype(np.float64)
        xg = x.reshape(b, 3, -1)
        xg = (xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)
        want_gn = xg.reshape(x.shape) * gs[:, None, None] + gb[:, None, None]
        mu = x.mean((0, 2, 3), keepdims=True)
        want_mvn = (x - mu) / (np.sqrt(((x - mu) ** 2).mean((0, 2, 3), keepdims=True)) + 1e-9)
        gn, l2, mvn = m(x.astype(np.float32), e.astype(np.float32))
        np.testing.assert_allclose(gn, want_gn, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(l2, e / np.linalg.norm(e, axis=-1, keepdims=True),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(mvn, want_mvn, rtol=1e-4, atol=1e-4)
    # GroupNormalization 18 (deprecated by 21, still in opset-18..20 exports):
    # one scale and bias per group. Its definition is missing from ONNX
    # 1.23's changelog, which once left it with no attributes to validate.
    g = h.make_graph(
        [h.make_node("GroupNormalization", ["x", "gs", "gb"], ["gn"], num_groups=3,
                     epsilon=1e-3)],
        "gn18", [vi("x", TensorProto.FLOAT, ["b", 6, "h", "w"])],
        [vi("gn", TensorProto.FLOAT, None)],
        [nh.from_array(gs[:3], "gs"), nh.from_array(gb[:3], "gb")])
    path = os.path.join(work, "gn18.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 18)]), path)
    m = kiln.load(kiln.compile(path, dims={"b": (1, 2), "h": (1, 8), "w": (1, 8)}))
    for b, hh, ww in [(1, 1, 2), (2, 8, 5)]:
        x = rng.standard_normal((b, 6, hh, ww)).astype(np.float64)
        xg = x.reshape(b, 3, -1)
        xg = (xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-3)
        want = (xg * gs[:3, None] + gb[:3, None]).reshape(x.shape)
        (gn,) = m(x.astype(np.float32))
        np.testing.assert_allclose(gn, want, rtol=1e-4, atol=1e-4)
print("symbolic shapes: ok")
