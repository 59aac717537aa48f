#!/usr/bin/python3
"""Resize at run-time sizes (docs/shapes.md): torch's F.interpolate exported
with a symbolic batch, height and width, in the forms segmentation and
matting networks use: bilinear by a scale of 2 (half_pixel and
align_corners), a bilinear shrink by 0.5, nearest by 1.5, bicubic, and a
U-Net's "upsample like" (bilinear to the size of another feature map, whose
sizes the graph computes from Shape; a pooled map's size is bounded by
inferring the pooling at the largest input). Each model is compiled once
with ranges and run at several shapes, odd ones included, against torch
(rtol 1e-4, atol 1e-5 in float32) through Python's kiln.load(). A model
traced with a fixed Resize target is refused at a size where its Concat
does not fit. A block of grouped convolutions and torch.flip run through
the same checks, and a Resize whose sizes the graph computes in float
(Cast, Mul by 2.0, Floor, Cast back), after a BatchNormalization. Nearest
upsampling by 2 and 3 of a symbolic height beside a narrow static width,
whose row tiles must start at multiples of the scale (a tile of 5 rows read
rows 2, 2, 2, 3, ... for 2, 3, 3, 4, ... until the tiles kept the divisor).

usage: check_symbolic_resize.py KILN_COMPILE WORKDIR PYTHONPATH
"""
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

compile_, work, pythonpath = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

torch.manual_seed(0)


class Interpolate(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, x):
        return F.interpolate(x, **self.kw) * 1.5


class UpsampleLike(torch.nn.Module):
    """U^2-Net's _upsample_like: a stride-2 branch brought back to the size
    of the input, whatever it is (odd sizes give a non-integer ratio)."""

    def __init__(self):
        super().__init__()
        self.down = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.side = torch.nn.Conv2d(3, 4, 1)

    def forward(self, x):
        d = self.down(x)
        up = F.interpolate(d, size=x.shape[2:], mode="bilinear", align_corners=False)
        return torch.cat([up, self.side(x)], dim=1)


class UpsampleToPooled(torch.nn.Module):
    """A U-Net decoder step: the deeper level brought to the size of the
    level above, a pooled feature map whose size the compiler bounds by
    inferring the pooling at the largest input."""

    def forward(self, x):
        p = F.max_pool2d(x, 2, 2, ceil_mode=True)
        q = F.max_pool2d(p, 2, 2, ceil_mode=True)
        up = F.interpolate(q, size=p.shape[2:], mode="bilinear", align_corners=False)
        return torch.cat([up, p], dim=1)


class GroupedBlock(torch.nn.Module):
    """ResNeXt's and RegNet's grouped 3x3 convolutions (one strided), which
    run as one kernel in a loop over the groups at run-time sizes too."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 16, 1)
        self.g = torch.nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=4)
        self.g2 = torch.nn.Conv2d(16, 32, 3, padding=1, groups=8)

    def forward(self, x):
        return torch.relu(self.g2(torch.relu(self.g(self.a(x)))))


class Flip(torch.nn.Module):
    """torch.flip: a Slice with step -1 from the last element to before the
    first, on each flipped axis (reversed slices at run-time sizes)."""

    def forward(self, x):
        return torch.flip(x, [2, 3]) * 2 + torch.flip(x, [3])


cases = [
    ("grouped_conv", GroupedBlock()),
    ("flip", Flip()),
    ("bilinear_x2", Interpolate(scale_factor=2, mode="bilinear", align_corners=False)),
    ("bilinear_corners", Interpolate(scale_factor=2, mode="bilinear", align_corners=True)),
    ("bilinear_half", Interpolate(scale_factor=0.5, mode="bilinear", align_corners=False)),
    ("nearest_1_5", Interpolate(scale_factor=1.5, mode="nearest")),
    ("bicubic_x2", Interpolate(scale_factor=2, mode="bicubic", align_corners=False)),
    ("upsample_like", UpsampleLike()),
    ("upsample_to_pooled", UpsampleToPooled()),
]
shapes = [(1, 3, 8, 8), (2, 3, 13, 7), (1, 3, 1, 5), (3, 3, 32, 31)]
for name, module in cases:
    module.eval()
    path = os.path.join(work, name + ".onnx")
    torch.onnx.export(module, (torch.randn(1, 3, 16, 16),), path, opset_version=13,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}})
    so = kiln.compile(path, output=os.path.join(work, name + ".so"),
                      dims={"n": (1, 4), "h": (1, 64), "w": (1, 64)})
    m = kiln.load(so)
    for shape in shapes:
        if name == "bilinear_half" and min(shape[2:]) < 2:
            continue  # torch refuses an output of 0 rows
        x = torch.randn(*shape)
        with torch.no_grad():
            want = module(x).numpy()
        got = m(x.numpy())[0]
        assert got.shape == want.shape, (name, shape, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{name} at {shape}")
    print(f"{name}: ok at {len(shapes)} shapes")


class FixedTarget(torch.nn.Module):
    """A model traced at one size: its Resize target is a constant, so its
    shapes agree only at that size (the concatenation needs 16 x 16)."""

    def forward(self, x):
        up = F.interpolate(x[:, :, ::2, ::2], size=(16, 16), mode="bilinear",
                           align_corners=False)
        return torch.cat([up, x], dim=1)


path = os.path.join(work, "fixed_target.onnx")
torch.onnx.export(FixedTarget(), (torch.randn(1, 3, 16, 16),), path, opset_version=13,
                  input_names=["x"], output_names=["y"],
                  dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}})
m = kiln.load(kiln.compile(path, output=os.path.join(work, "fixed_target.so"),
                           dims={"n": (1, 4), "h": (1, 64), "w": (1, 64)}))
x = torch.randn(2, 3, 16, 16)
np.testing.assert_allclose(m(x.numpy())[0], FixedTarget()(x).numpy(), rtol=1e-4, atol=1e-5)
try:
    m(np.zeros((1, 3, 20, 16), np.float32))
    raise AssertionError("a Concat of 16 and 20 rows ran")
except kiln.Error as e:
    assert "(Concat, opset 13): dimension 2 of operand 1" in str(e), e
    assert "differ at these input sizes" in str(e), e
print("fixed_target: ok at 16 x 16, refused at 20 x 16")

# Output sizes computed in float, as older exporters and Paddle2ONNX write
# a scale of 2: Shape of a BatchNormalization's output (its sizes are its
# input's), Cast to float, Mul by 2.0, Floor, Cast back to int64. Refused
# before ("sizes that are constant or computed from the shapes").
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
import onnx  # noqa: E402

gamma, beta = np.float32([1.5, 0.5, 2.0]), np.float32([0.1, -0.2, 0.3])
mean, var = np.float32([0.2, -0.1, 0.0]), np.float32([1.0, 4.0, 0.25])
consts = {"gamma": gamma, "beta": beta, "mean": mean, "var": var,
          "two": np.float32([2.0, 2.0]), "s0": np.int64([0]),
          "s2": np.int64([2]), "s4": np.int64([4])}
nodes = [
    helper.make_node("BatchNormalization", ["x", "gamma", "beta", "mean", "var"], ["bn"]),
    helper.make_node("Shape", ["bn"], ["shape"]),
    helper.make_node("Slice", ["shape", "s2", "s4"], ["hw"]),
    helper.make_node("Cast", ["hw"], ["hw_f"], to=TensorProto.FLOAT),
    helper.make_node("Mul", ["hw_f", "two"], ["scaled"]),
    helper.make_node("Floor", ["scaled"], ["floored"]),
    helper.make_node("Cast", ["floored"], ["out_hw"], to=TensorProto.INT64),
    helper.make_node("Slice", ["shape", "s0", "s2"], ["nc"]),
    helper.make_node("Concat", ["nc", "out_hw"], ["sizes"], axis=0),
    helper.make_node("Resize", ["bn", "", "", "sizes"], ["y"], mode="linear"),
]
graph = helper.make_graph(
    nodes, "float_sizes",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [numpy_helper.from_array(v, k) for k, v in consts.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
path = os.path.join(work, "float_sizes.onnx")
onnx.save(model, path)
m = kiln.load(kiln.compile(path, output=os.path.join(work, "float_sizes.so"),
                           dims={"n": (1, 4), "h": (1, 64), "w": (1, 64)}))
for shape in shapes:
    x = torch.randn(*shape)
    bn = F.batch_norm(x, torch.from_numpy(mean), torch.from_numpy(var),
                      torch.from_numpy(gamma), torch.from_numpy(beta), eps=1e-5)
    want = F.interpolate(bn, size=(2 * shape[2], 2 * shape[3]), mode="bilinear",
                         align_corners=False).numpy()
    got = m(x.numpy())[0]
    assert got.shape == want.shape, ("float_sizes", shape, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5,
                               err_msg=f"float_sizes at {shape}")
print(f"float_sizes: ok at {len(shapes)} shapes")

# Nearest by 2 and by 3 over a symbolic height, the width static and narrow.
for scale in (2, 3):
    module = Interpolate(scale_factor=scale, mode="nearest").eval()
    name = f"nearest_rows_x{scale}"
    path = os.path.join(work, name + ".onnx")
    torch.onnx.export(module, (torch.randn(1, 1, 9, 3),), path, opset_version=13,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "n", 2: "h"}})
    so = os.path.join(work, name + ".so")
    r = subprocess.run([compile_, path, "-o", so, "--dim", "n=1..4", "--dim",
                        "h=1..40"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m = kiln.load(so)
    row_shapes = [(1, 1, 20, 3), (2, 1, 9, 3), (1, 1, 1, 3), (4, 1, 40, 3),
                  (3, 1, 13, 3)]
    for shape in row_shapes:
        x = torch.randn(*shape)
        with torch.no_grad():
            want = module(x).numpy()
        got = m(x.numpy())[0]
        assert got.shape == want.shape, (name, shape, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0,
                                   err_msg=f"{name} at {shape}")
    print(f"{name}: ok at {len(row_shapes)} shapes")
print("symbolic resize: ok")
