#!/usr/bin/python3
"""ONNX Runtime's transformer contrib ops (docs/ops.md): one opset-13 model
with com.microsoft's Gelu, BiasGelu, FastGelu (with and without bias),
QuickGelu, BiasAdd, FusedMatMul (alpha, transA, transB, transBatchA,
transBatchB, broadcast batch), SkipLayerNormalization (with beta and bias,
and bare) and SkipSimplifiedLayerNormalization with their sum outputs, and
the default-domain LayerNormalization and SimplifiedLayerNormalization that
ONNX Runtime registers for opsets before 17, compiled with kiln.compile and
run against numpy references in float64 (relative error 1e-5 of each
output's largest magnitude; the GELUs within 1e-5 absolute). The same model
and references were checked against ONNX Runtime 1.30 (docs/ops.md).

usage: check_ort_contrib.py WORKDIR PYTHONPATH
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

work, pythonpath = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import compile_and_load  # noqa: E402

rng = np.random.default_rng(31)
f64 = np.float64
erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def layer_norm(x, g, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + (0 if b is None else b)


def rms_norm(x, g, eps):
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps) * g


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# Graph inputs (float32) and initializers.
inputs = {"x": rand(2, 4, 8), "skip": rand(2, 4, 8), "a3": rand(2, 8, 3),
          "am": rand(3, 2, 8), "b5": rand(2, 8, 5), "bt": rand(5, 2, 8),
          "m2": rand(4, 8), "n2": rand(6, 8)}
inits = {"bias": rand(8), "gamma": rand(8) + 1, "beta": rand(8)}
ms = "com.microsoft"
nodes = [
    h.make_node("Gelu", ["x"], ["gelu"], domain=ms),
    h.make_node("BiasGelu", ["x", "bias"], ["bias_gelu"], domain=ms),
    h.make_node("FastGelu", ["x", "bias"], ["fast_gelu"], domain=ms),
    h.make_node("FastGelu", ["x"], ["fast_gelu_nobias"], domain=ms),
    h.make_node("QuickGelu", ["x"], ["quick_gelu"], domain=ms, alpha=1.5),
    h.make_node("BiasAdd", ["x", "bias", "skip"], ["bias_add"], domain=ms),
    # [2,8,3]^T @ [2,8,5] * 0.5
    h.make_node("FusedMatMul", ["a3", "b5"], ["fmm_ta"], domain=ms, alpha=0.5, transA=1),
    # A [M=3, batch 2, K=8] read as [2, 3, 8]; B [5, 2, 8] read as [2, 8, 5]
    h.make_node("FusedMatMul", ["am", "bt"], ["fmm_tb"], domain=ms, transBatchA=1,
                transBatchB=1, transB=1),
    # 2-D A broadcast against batched B; 2-D transB
    h.make_node("FusedMatMul", ["m2", "b5"], ["fmm_bcast"], domain=ms),
    h.make_node("FusedMatMul", ["m2", "n2"], ["fmm_2d"], domain=ms, transB=1, alpha=2.0),
    h.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta", "bias"],
                ["sln", "", "", "sln_sum"], domain=ms, epsilon=1e-5),
    h.make_node("SkipLayerNormalization", ["x", "skip", "gamma"], ["sln_bare"], domain=ms),
    h.make_node("SkipSimplifiedLayerNormalization", ["x", "skip", "gamma", "bias"],
                ["ssln", "", "", "ssln_sum"], domain=ms, epsilon=1e-6),
    h.make_node("LayerNormalization", ["x", "gamma", "beta"], ["ort_ln"], epsilon=1e-5),
    h.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["ort_sln"], epsilon=1e-6),
]
outputs = [o for n in nodes for o in n.output if o]

x, skip = inputs["x"].astype(f64), inputs["skip"].astype(f64)
bias, gamma, beta = (inits[k].astype(f64) for k in ("bias", "gamma", "beta"))
s = x + skip + bias
i64 = {k: v.astype(f64) for k, v in inputs.items()}
want = {
    "gelu": gelu(x), "bias_gelu": gelu(x + bias), "fast_gelu": gelu_tanh(x + bias),
    "fast_gelu_nobias": gelu_tanh(x), "quick_gelu": x / (1 + np.exp(-1.5 * x)),
    "bias_add": s,
    "fmm_ta": 0.5 * (i64["a3"].transpose(0, 2, 1) @ i64["b5"]),
    "fmm_tb": i64["am"].transpose(1, 0, 2) @ i64["bt"].transpose(1, 2, 0),
    "fmm_bcast": i64["m2"] @ i64["b5"],
    "fmm_2d": 2.0 * (i64["m2"] @ i64["n2"].T),
    "sln": layer_norm(s, gamma, beta, 1e-5), "sln_sum": s,
    "sln_bare": layer_norm(x + skip, gamma, None, 1e-12),
    "ssln": rms_norm(s, gamma, 1e-6), "ssln_sum": s,
    "ort_ln": layer_norm(x, gamma, beta, 1e-5), "ort_sln": rms_norm(x, gamma, 1e-6),
}

graph = h.make_graph(
    nodes, "ort_contrib",
    [h.make_tensor_value_info(k, T.FLOAT, list(v.shape)) for k, v in inputs.items()],
    [h.make_tensor_value_info(o, T.FLOAT, None) for o in outputs],
    [nh.from_array(v, k) for k, v in inits.items()])
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13), h.make_opsetid(ms, 1)])
model.ir_version = 7
path = os.path.join(work, "ort_contrib.onnx")
onnx.save(model, path)
np.savez(os.path.join(work, "ort_contrib_inputs.npz"), **inputs)

m = compile_and_load(kiln, path)
got = m(*inputs.values())
failures = []
for name, y in zip(outputs, got):
    ref = want[name]
    tol = 1e-5 * max(1.0, np.abs(ref).max())
    err = np.abs(y.astype(f64) - ref).max() if y.shape == ref.shape else np.inf
    print(f"{name:18s} {str(y.shape):12s} max |err| {err:.2e} (tolerance {tol:.1e})")
    if not err <= tol:
        failures.append(name)
if failures:
    sys.exit("outputs off their references: " + ", ".join(failures))
print("all", len(outputs), "outputs match")
