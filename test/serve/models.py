"""Small ONNX models for the kiln-serve tests and benchmark, written with
onnx.helper (no torch), each with a numpy reference.

  mlp(seed)      x[1,16] FP32 -> y[1,4]: MatMul, Add, Relu, MatMul, Add
  pair()         x[1,4], z[1,4] FP32 -> s = x + z, p = x * z
  slow()         x[1,32,96,96] FP32 -> y[1,32]: four 3x3 Conv+Relu, GAP
                 (tens of milliseconds a run: queues fill while it runs)
  resnet_like()  x[1,3,64,64] FP32 -> y[1,10]: a small ResNet (stem, four
                 basic blocks, two of them strided, GAP, Gemm)
  wide_mlp()     x[1,1024] FP32 -> y[1,1024]: three 1024x1024 MatMul+Relu
                 (12 MB of weights: one row is memory-bound, so batching pays)
  pool_relu()    x[1,4,h,w] FP32 (symbolic h, w) -> y = 2x2 MaxPool of x
                 [1,4,h/2,w/2], z = Relu(x) [1,4,h,w]: for run-time sizes
  shared_sum()   x[1,n], z[1,n] FP32 (one symbol n, shared) -> s = x + z
  seq_pool()     x[b,s,8] FP32 (symbolic batch b and length s) -> y =
                 Softmax over s of x @ W [b,s,4], z = mean over s [b,4]:
                 rows independent along b, every output depends on s
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def _save(nodes, name, inputs, outputs, inits, path):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


class Mlp:
    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.w1 = (rng.standard_normal((16, 32)) * 0.2).astype(np.float32)
        self.b1 = (rng.standard_normal(32) * 0.1).astype(np.float32)
        self.w2 = (rng.standard_normal((32, 4)) * 0.2).astype(np.float32)
        self.b2 = (rng.standard_normal(4) * 0.1).astype(np.float32)

    def save(self, path):
        nodes = [
            helper.make_node("MatMul", ["x", "w1"], ["h0"]),
            helper.make_node("Add", ["h0", "b1"], ["h1"]),
            helper.make_node("Relu", ["h1"], ["h2"]),
            helper.make_node("MatMul", ["h2", "w2"], ["y0"]),
            helper.make_node("Add", ["y0", "b2"], ["y"]),
        ]
        _save(nodes, "mlp", [("x", [1, 16])], [("y", [1, 4])],
              {"w1": self.w1, "b1": self.b1, "w2": self.w2, "b2": self.b2}, path)

    def __call__(self, x):
        h = np.maximum(x.astype(np.float32) @ self.w1 + self.b1, 0)
        return h @ self.w2 + self.b2


def save_pool_relu(path):
    nodes = [helper.make_node("Relu", ["x"], ["z"]),
             helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                              strides=[2, 2])]
    _save(nodes, "images", [("x", [1, 4, "h", "w"])],
          [("y", [1, 4, None, None]), ("z", [1, 4, "h", "w"])], {}, path)


MASK_THRESHOLD = np.array(0.5, np.float32)


def save_masked_select(path):
    """y = relu(x[x > 0.5]) as torch exports it: how many elements y has
    depends on the data (docs/shapes.md, sizes that depend on the data)."""
    nodes = [helper.make_node("Greater", ["x", "t"], ["m"]),
             helper.make_node("NonZero", ["m"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
             helper.make_node("GatherND", ["x", "idx"], ["g"]),
             helper.make_node("Relu", ["g"], ["y"])]
    _save(nodes, "masked_select", [("x", [4, 6])], [("y", [None])],
          {"t": MASK_THRESHOLD}, path)


def masked_select_ref(x):
    return (np.maximum(x[x > MASK_THRESHOLD], 0),)


def save_shared_sum(path):
    _save([helper.make_node("Add", ["x", "z"], ["s"])], "shared",
          [("x", [1, "n"]), ("z", [1, "n"])], [("s", [1, "n"])], {}, path)


SEQ_POOL_W = (np.random.default_rng(7).standard_normal((8, 4)) * 0.5).astype(np.float32)


def save_seq_pool(path):
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Softmax", ["h"], ["y"], axis=1),
             helper.make_node("ReduceMean", ["h"], ["z"], axes=[1], keepdims=0)]
    _save(nodes, "seq_pool", [("x", ["b", "s", 8])],
          [("y", ["b", "s", 4]), ("z", ["b", 4])], {"w": SEQ_POOL_W}, path)


def seq_pool_ref(x):
    h = x @ SEQ_POOL_W
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), h.mean(axis=1)


def pool_relu_ref(x):
    """(y, z) of pool_relu(): the 2x2 windows that fit, and Relu."""
    n, c, h, w = x.shape
    fit = x[:, :, :h // 2 * 2, :w // 2 * 2]
    return fit.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5)), np.maximum(x, 0)


def save_pair(path):
    nodes = [helper.make_node("Add", ["x", "z"], ["s"]),
             helper.make_node("Mul", ["x", "z"], ["p"])]
    _save(nodes, "pair", [("x", [1, 4]), ("z", [1, 4])], [("s", [1, 4]), ("p", [1, 4])],
          {}, path)


def save_slow(path, channels=32, size=96, layers=24):
    """A model whose rows take long enough for the queueing and draining
    tests to see requests wait: 24 3x3 convolutions over 32 x 96 x 96, about
    20 ms a row on a Zen 5 core, 60 ms on Zen 3 (with 4, a Zen 5 core ran a
    row in 3 ms and requests finished before the next was queued)."""
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], {}, "x"
    for i in range(layers):
        inits[f"w{i}"] = (rng.standard_normal((channels, channels, 3, 3)) * 0.05).astype(np.float32)
        nodes.append(helper.make_node("Conv", [prev, f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        prev = f"r{i}"
    nodes.append(helper.make_node("GlobalAveragePool", [prev], ["g"]))
    nodes.append(helper.make_node("Flatten", ["g"], ["y"]))
    _save(nodes, "slow", [("x", [1, channels, size, size])], [("y", [1, channels])],
          inits, path)


def save_resnet_like(path, seed=0):
    rng = np.random.default_rng(seed)
    nodes, inits = [], {}
    counter = [0]

    def conv(x, cin, cout, stride, relu=True):
        i = counter[0]
        counter[0] += 1
        std = np.sqrt(2.0 / (cin * 9))
        inits[f"cw{i}"] = (rng.standard_normal((cout, cin, 3, 3)) * std).astype(np.float32)
        inits[f"cb{i}"] = (rng.standard_normal(cout) * 0.01).astype(np.float32)
        out = f"conv{i}"
        nodes.append(helper.make_node("Conv", [x, f"cw{i}", f"cb{i}"], [out],
                                      pads=[1, 1, 1, 1], strides=[stride, stride]))
        if relu:
            nodes.append(helper.make_node("Relu", [out], [out + "_r"]))
            out += "_r"
        return out

    def block(x, cin, cout, stride):
        h = conv(x, cin, cout, stride)
        h = conv(h, cout, cout, 1, relu=False)
        short = x
        if stride != 1 or cin != cout:
            i = counter[0]
            counter[0] += 1
            inits[f"pw{i}"] = (rng.standard_normal((cout, cin, 1, 1)) * np.sqrt(1.0 / cin)).astype(np.float32)
            short = f"proj{i}"
            nodes.append(helper.make_node("Conv", [x, f"pw{i}"], [short], strides=[stride, stride]))
        out = f"add{counter[0]}"
        counter[0] += 1
        nodes.append(helper.make_node("Add", [h, short], [out]))
        nodes.append(helper.make_node("Relu", [out], [out + "_r"]))
        return out + "_r"

    h = conv("x", 3, 32, 2)          # 32x32
    h = block(h, 32, 32, 1)
    h = block(h, 32, 64, 2)          # 16x16
    h = block(h, 64, 64, 1)
    h = block(h, 64, 128, 2)         # 8x8
    nodes.append(helper.make_node("GlobalAveragePool", [h], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["feat"]))
    inits["fw"] = (rng.standard_normal((128, 10)) * 0.1).astype(np.float32)
    inits["fb"] = np.zeros(10, np.float32)
    nodes.append(helper.make_node("Gemm", ["feat", "fw", "fb"], ["y"]))
    _save(nodes, "resnet_like", [("x", [1, 3, 64, 64])], [("y", [1, 10])], inits, path)


def save_wide_mlp(path, width=1024, layers=3):
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], {}, "x"
    for i in range(layers):
        inits[f"w{i}"] = (rng.standard_normal((width, width)) * 0.03).astype(np.float32)
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Relu", [f"m{i}"], [f"r{i}"]))
        prev = f"r{i}"
    nodes.append(helper.make_node("Identity", [prev], ["y"]))
    _save(nodes, "wide_mlp", [("x", [1, width])], [("y", [1, width])], inits, path)


if __name__ == "__main__":
    import sys
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    Mlp(0).save(f"{out}/mlp.onnx")
    save_pair(f"{out}/pair.onnx")
    save_slow(f"{out}/slow.onnx")
    save_resnet_like(f"{out}/resnet_like.onnx")
    save_wide_mlp(f"{out}/wide_mlp.onnx")
