#!/usr/bin/python3
"""Writes the end-to-end test models with torch-eager reference outputs.

Usage: /usr/bin/python3 make_models.py OUTDIR [MODEL ...]

For each model this writes, in the layout of ONNX's backend test data:
  OUTDIR/<name>/model.onnx
  OUTDIR/<name>/test_data_set_0/input_<i>.pb    (TensorProto named after the graph input)
  OUTDIR/<name>/test_data_set_0/output_<i>.pb   (TensorProto named after the graph output)

Weights and inputs come from fixed seeds, so every run writes the same numbers.
Needs Debian's interpreter (/usr/bin/python3): torch 1.13, onnx 1.12, numpy.
"""
import argparse
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn

OPSET = 13


class Mlp(nn.Module):
    """784-256-128-10 with ReLU; plain logits."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


class Tokens(nn.Module):
    """A transformer feed-forward block over 197 tokens (a ViT's 196 patches
    and its class token): 197 is prime, so the products' rows have no
    divisor near a register tile and run as full tiles and a static last
    tile of the rows left."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(96, 384)
        self.fc2 = nn.Linear(384, 96)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(x)))


class SmallCnn(nn.Module):
    """A small CNN touching the common vision ops: Conv (dense, depthwise, 1x1),
    Relu, MaxPool, AveragePool, Add (residual), BatchNormalization (eval; it
    follows the Add so the exporter cannot fold it into a Conv), Sigmoid + Mul
    (SiLU gate), ReduceMean, Gemm and Softmax."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.pool1 = nn.MaxPool2d(2)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.pw = nn.Conv2d(16, 32, 1)
        self.shortcut = nn.Conv2d(16, 32, 1)
        self.bn = nn.BatchNorm2d(32)
        self.pool2 = nn.AvgPool2d(2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool1(torch.relu(self.conv1(x)))        # 1x16x16x16
        y = torch.relu(self.pw(torch.relu(self.dw(x))))  # 1x32x16x16
        x = self.bn(y + self.shortcut(x))                # residual Add, then BN
        x = self.pool2(x)                                # 1x32x8x8
        x = x * torch.sigmoid(x)                         # SiLU gate
        x = torch.mean(x, dim=(2, 3))                    # 1x32 (ReduceMean)
        return torch.softmax(self.fc(x), dim=1)          # 1x10


def randomize_batchnorm(module, gen):
    """Fresh BatchNorm stats are 0/1, which would hide a wrong lowering."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)


# name -> (module class, input shape)
MODELS = {
    "mlp": (Mlp, (2, 784)),
    "small_cnn": (SmallCnn, (1, 3, 32, 32)),
    "tokens": (Tokens, (1, 197, 96)),
}


def write_tensor(path, array, name):
    tensor = onnx.numpy_helper.from_array(np.ascontiguousarray(array), name)
    with open(path, "wb") as f:
        f.write(tensor.SerializeToString())


def make_model(name, outdir, seed):
    cls, input_shape = MODELS[name]
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed + 1)
    model = cls()
    with torch.no_grad():
        randomize_batchnorm(model, gen)
    model.eval()

    x = torch.randn(*input_shape, generator=gen, dtype=torch.float32)
    with torch.no_grad():
        y = model(x)

    model_dir = os.path.join(outdir, name)
    data_dir = os.path.join(model_dir, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    onnx_path = os.path.join(model_dir, "model.onnx")
    torch.onnx.export(
        model, (x,), onnx_path,
        opset_version=OPSET,
        do_constant_folding=True,
        input_names=["input"],
        output_names=["output"],
        training=torch.onnx.TrainingMode.EVAL,
    )

    # The exporter calls every graph "torch_jit"; the graph name becomes the
    # model name in the compiled .so.
    proto = onnx.load(onnx_path)
    proto.graph.name = name
    onnx.checker.check_model(proto)
    onnx.save(proto, onnx_path)

    # Name the tensors after the graph, whatever the exporter decided.
    inits = {i.name for i in proto.graph.initializer}
    in_names = [i.name for i in proto.graph.input if i.name not in inits]
    out_names = [o.name for o in proto.graph.output]
    assert len(in_names) == 1 and len(out_names) == 1, (in_names, out_names)
    write_tensor(os.path.join(data_dir, "input_0.pb"), x.numpy(), in_names[0])
    write_tensor(os.path.join(data_dir, "output_0.pb"), y.numpy(), out_names[0])
    return proto


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("models", nargs="*", help="default: all of " + ", ".join(MODELS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--print-ops", action="store_true",
                        help="print each model's ONNX op types")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)  # deterministic reductions, and polite on a 2-core machine
    for name in args.models or MODELS:
        if name not in MODELS:
            parser.error("unknown model %r (known: %s)" % (name, ", ".join(MODELS)))
        proto = make_model(name, args.outdir, args.seed)
        if args.print_ops:
            ops = sorted({n.op_type for n in proto.graph.node})
            opsets = ", ".join("%s:%d" % (o.domain or "ai.onnx", o.version)
                               for o in proto.opset_import)
            print("%s (opset %s): %s" % (name, opsets, " ".join(ops)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
