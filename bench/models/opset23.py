#!/usr/bin/python3
"""Single-op models of ONNX 1.23's fused operators, at transformer shapes,
for bench/perf/run.py beside ONNX Runtime (docs/benchmarks.md):

  attention23         Attention-23, Q, K, V [1, 8, 128, 64], no mask
  attention23_causal  the same with is_causal = 1
  rmsnorm23           RMSNormalization-23 over the last axis of [1, 128, 512]

onnx 1.12 (Debian's) does not know opset 23's schemas, so the models are
written without its checker; Kiln and ORT 1.30 both read them.

usage: /usr/bin/python3 bench/models/opset23.py OUT_DIR
       /usr/bin/python3 bench/perf/run.py OUT_DIR --models attention23,attention23_causal,rmsnorm23
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def save(out, name, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    os.makedirs(os.path.join(out, name), exist_ok=True)
    with open(os.path.join(out, name, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    print(os.path.join(out, name, "model.onnx"))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    shape = [1, 8, 128, 64]
    qkv = [helper.make_tensor_value_info(n, F, shape) for n in "qkv"]
    y = [helper.make_tensor_value_info("y", F, shape)]
    for name, causal in [("attention23", 0), ("attention23_causal", 1)]:
        save(out, name, [helper.make_node("Attention", ["q", "k", "v"], ["y"],
                                          is_causal=causal)], qkv, y)
    scale = numpy_helper.from_array(
        np.random.RandomState(0).rand(512).astype(np.float32) + 0.5, "scale")
    save(out, "rmsnorm23",
         [helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=-1, epsilon=1e-6)],
         [helper.make_tensor_value_info("x", F, [1, 128, 512])],
         [helper.make_tensor_value_info("y", F, [1, 128, 512])], [scale])


if __name__ == "__main__":
    main()
