#!/usr/bin/python3
"""Hostile and malformed models for kiln-compile: a deterministic corpus and a
mutation fuzzer over ONNX protobufs (docs/security.md).

  hostile.py corpus KILN_COMPILE WORKDIR [--count 1200] [--jobs 2]
  hostile.py fuzz KILN_COMPILE WORKDIR [--iterations 100 | --minutes 60] [--seed S]
             [--generated N]

Both start from small valid seed models built here (dense, convolutional,
shape ops, control flow, recurrent, quantized) and apply structure-aware
mutations: undefined or duplicated names, wrong or misspelled attributes,
extreme sizes and strides, bad tensor data, bad opsets and element types,
cycles, hostile names, external data outside the folder, symbolic input
dimensions (each given a --dim range, so the model compiles at run-time
sizes), and byte-level truncation and bit flips. `corpus` writes the same cases every time (fixed
seed; the files are kept under WORKDIR for reproduction) and compiles each to
a .so; `fuzz` draws new ones until its budget ends and keeps every failing
input under WORKDIR/failures.

A case fails when kiln-compile crashes (a signal, or an exit status other
than 0 and 1), runs past its time limit, aborts out of memory, prints what a
user must never see (an assertion, an LLVM fatal error, a stack dump, a raw
MLIR verifier message), fails without an `error:` line, or accepts a model
the mutation made invalid. Exit status: 0 when no case failed.
"""
import argparse
import copy
import os
import random
import re
import subprocess
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# What a failing compile may never print.
FORBIDDEN = [
    (re.compile(r"Assertion .* failed"), "an assertion"),
    (re.compile(r"LLVM ERROR"), "an LLVM fatal error"),
    (re.compile(r"Stack dump|PLEASE submit a bug report"), "a stack dump"),
    (re.compile(r"terminate called|std::bad_alloc"), "an uncaught exception"),
    (re.compile(r"UNREACHABLE"), "an unreachable"),
    (re.compile(r"ERROR: AddressSanitizer|runtime error: |ERROR: LeakSanitizer"),
     "a sanitizer report"),
    (re.compile(r"see current operation|failed to verify|'[a-z_]+\.[a-z_.]+' op "),
     "a raw MLIR verifier message"),
    (re.compile(r"internal error|this is a bug in Kiln"),
     "an internal error (Kiln's own failure, not the model's)"),
]


# ----------------------------------------------------------------------------
# Seeds: small valid models.
# ----------------------------------------------------------------------------

def _f32(name, shape, seed=0):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def _i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(graph, opset=13):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def seeds():
    F = TensorProto.FLOAT
    out = []
    # Dense: Gemm, Relu, Softmax.
    g = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="gemm", transB=1),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=1)],
        "dense", [_vi("x", F, [2, 8])], [_vi("y", F, [2, 4])],
        [_f32("w", [4, 8]), _f32("b", [4], 1)])
    out.append(("dense", _model(g)))
    # Convolutional: Conv, MaxPool, GlobalAveragePool, Flatten.
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "k", "kb"], ["c"], name="conv",
                          kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
         helper.make_node("MaxPool", ["c"], ["p"], name="pool", kernel_shape=[2, 2],
                          strides=[2, 2]),
         helper.make_node("GlobalAveragePool", ["p"], ["gp"], name="gap"),
         helper.make_node("Flatten", ["gp"], ["y"], name="flatten", axis=1)],
        "conv", [_vi("x", F, [1, 3, 8, 8])], [_vi("y", F, [1, 4])],
        [_f32("k", [4, 3, 3, 3]), _f32("kb", [4], 2)])
    out.append(("conv", _model(g)))
    # Shape ops: Reshape, Transpose, Concat, Slice, Gather.
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
         helper.make_node("Transpose", ["r"], ["t"], name="transpose", perm=[1, 0]),
         helper.make_node("Concat", ["t", "t"], ["c"], name="concat", axis=0),
         helper.make_node("Slice", ["c", "starts", "ends", "axes"], ["s"], name="slice"),
         helper.make_node("Gather", ["s", "idx"], ["y"], name="gather", axis=0)],
        "shapes", [_vi("x", F, [2, 3, 4])], [_vi("y", F, [2, 6])],
        [_i64("shape", [6, 4]), _i64("starts", [0]), _i64("ends", [3]), _i64("axes", [0]),
         _i64("idx", [0, 2])])
    out.append(("shapes", _model(g)))
    # Broadcasting arithmetic with a Where and a reduction.
    g = helper.make_graph(
        [helper.make_node("Mul", ["x", "s"], ["m"], name="mul"),
         helper.make_node("Add", ["m", "x"], ["a"], name="add"),
         helper.make_node("Greater", ["a", "s"], ["g"], name="greater"),
         helper.make_node("Where", ["g", "a", "x"], ["w"], name="where"),
         helper.make_node("ReduceMean", ["w"], ["y"], name="mean", axes=[1], keepdims=1)],
        "arith", [_vi("x", F, [3, 5])], [_vi("y", F, [3, 1])], [_f32("s", [5], 3)])
    out.append(("arith", _model(g)))
    # Control flow: If on a constant condition.
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="then_relu")],
                               "then", [], [_vi("t", F, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="else_neg")],
                               "else", [], [_vi("e", F, [2, 3])])
    g = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g,
                          else_branch=else_g)],
        "control", [_vi("x", F, [2, 3])], [_vi("y", F, [2, 3])],
        [numpy_helper.from_array(np.array(True), "cond")])
    out.append(("control", _model(g)))
    # Recurrent: an LSTM.
    g = helper.make_graph(
        [helper.make_node("LSTM", ["x", "W", "R"], ["ys", "yh"], name="lstm",
                          hidden_size=4)],
        "lstm", [_vi("x", F, [3, 1, 2])], [_vi("yh", F, [1, 1, 4])],
        [_f32("W", [1, 16, 2]), _f32("R", [1, 16, 4], 4)])
    out.append(("lstm", _model(g)))
    # Quantized: QuantizeLinear / DequantizeLinear around a MatMul.
    g = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "sc", "zp"], ["q"], name="quant"),
         helper.make_node("DequantizeLinear", ["q", "sc", "zp"], ["d"], name="dequant"),
         helper.make_node("MatMul", ["d", "w"], ["y"], name="matmul")],
        "quant", [_vi("x", F, [2, 4])], [_vi("y", F, [2, 3])],
        [numpy_helper.from_array(np.array(0.05, np.float32), "sc"),
         numpy_helper.from_array(np.array(0, np.uint8), "zp"), _f32("w", [4, 3], 5)])
    out.append(("quant", _model(g)))
    # Sampling and windows: LRN, GridSample, a 3-D pooling, Split, Hardmax
    # (the ops that keep run-time sizes since stop 73).
    g = helper.make_graph(
        [helper.make_node("LRN", ["x"], ["l"], name="lrn", size=3),
         helper.make_node("GridSample", ["l", "grid"], ["s"], name="sample",
                          mode="linear", padding_mode="reflection"),
         helper.make_node("Unsqueeze", ["s", "axis2"], ["v"], name="volume"),
         helper.make_node("MaxPool", ["v"], ["p"], name="pool3d",
                          kernel_shape=[1, 2, 2], pads=[0, 1, 1, 0, 1, 1]),
         helper.make_node("Squeeze", ["p", "axis2"], ["q"], name="flat"),
         helper.make_node("Split", ["q"], ["a", "b"], name="split", axis=1),
         helper.make_node("Hardmax", ["a"], ["y"], name="hardmax", axis=1)],
        "sampling", [_vi("x", F, [1, 4, 5, 6])], [_vi("y", F, [1, 2, 4, 4])],
        [_f32("grid", [1, 3, 3, 2], 6), _i64("axis2", [2])])
    out.append(("sampling", _model(g, 20)))
    # Resize and Pad.
    g = helper.make_graph(
        [helper.make_node("Pad", ["x", "pads"], ["p"], name="pad", mode="constant"),
         helper.make_node("Resize", ["p", "", "scales"], ["y"], name="resize",
                          mode="nearest")],
        "resize", [_vi("x", F, [1, 1, 4, 4])], [_vi("y", F, [1, 1, 12, 12])],
        [_i64("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
         numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")])
    out.append(("resize", _model(g)))
    # Signal: STFT with a window, then the inverse onesided DFT of a frame.
    g = helper.make_graph(
        [helper.make_node("STFT", ["x", "step", "win"], ["s"], name="stft"),
         helper.make_node("Slice", ["s", "zero", "one", "one"], ["f"], name="frame"),
         helper.make_node("DFT", ["f", "", "two"], ["y"], name="irfft", inverse=1,
                          onesided=1)],
        "signal", [_vi("x", F, [1, 64, 1])], [_vi("y", F, [1, 1, 16, 1])],
        [_i64("step", 8), _f32("win", [16], 6), _i64("zero", [0]), _i64("one", [1]),
         _i64("two", 2)])
    out.append(("signal", _model(g, opset=20)))
    # Unpooling and a deformable convolution.
    g = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["p", "i"], name="pool", kernel_shape=[2, 2],
                          strides=[2, 2]),
         helper.make_node("MaxUnpool", ["p", "i"], ["u"], name="unpool",
                          kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("DeformConv", ["u", "w", "off", "b"], ["y"], name="deform",
                          kernel_shape=[3, 3])],
        "unpool", [_vi("x", F, [1, 2, 6, 6])], [_vi("y", F, [1, 3, 4, 4])],
        [_f32("w", [3, 2, 3, 3], 7), _f32("off", [1, 18, 4, 4], 8), _f32("b", [3], 9)])
    out.append(("unpool", _model(g, opset=22)))
    # Imported int8 depthwise convolutions (the VNNI depthwise kernel): a
    # ConvInteger after DynamicQuantizeLinear and a QDQ Conv, group = C.
    i8 = np.random.default_rng(10).integers(-127, 128, (8, 1, 3, 3)).astype(np.int8)
    g = helper.make_graph(
        [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "qs", "qz"], name="dql"),
         helper.make_node("ConvInteger", ["q", "w", "qz"], ["acc"], name="dw_integer",
                          kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8),
         helper.make_node("Cast", ["acc"], ["f"], name="cast", to=F),
         helper.make_node("QuantizeLinear", ["f", "sc", "zp"], ["fq"], name="quant"),
         helper.make_node("DequantizeLinear", ["fq", "sc", "zp"], ["fd"], name="dequant"),
         helper.make_node("DequantizeLinear", ["w", "ws"], ["wd"], name="dequant_w"),
         helper.make_node("Conv", ["fd", "wd"], ["y"], name="dw_qdq", kernel_shape=[3, 3],
                          strides=[2, 2], pads=[0, 1, 1, 0], group=8)],
        "int8dw", [_vi("x", F, [1, 8, 6, 6])], [_vi("y", F, [1, 8, 3, 3])],
        [numpy_helper.from_array(i8, "w"),
         numpy_helper.from_array(np.array(0.02, np.float32), "ws"),
         numpy_helper.from_array(np.array(0.5, np.float32), "sc"),
         numpy_helper.from_array(np.array(3, np.int8), "zp")])
    out.append(("int8dw", _model(g)))
    # A mel filterbank from constant inputs, applied to a spectrogram.
    g = helper.make_graph(
        [helper.make_node("MelWeightMatrix", ["mels", "dft", "rate", "lo", "hi"], ["w"],
                          name="mel"),
         helper.make_node("MatMul", ["x", "w"], ["y"], name="apply")],
        "mel", [_vi("x", F, [3, 33])], [_vi("y", F, [3, 10])],
        [_i64("mels", 10), _i64("dft", 64), _i64("rate", 16000),
         numpy_helper.from_array(np.array(20.0, np.float32), "lo"),
         numpy_helper.from_array(np.array(7000.0, np.float32), "hi")])
    out.append(("mel", _model(g, opset=17)))
    # A KV-cache update at run-time write indices, a Pad whose pads and
    # axes are graph inputs (both guarded at run time), a streaming causal
    # convolution with its carried state and a gated-delta LinearAttention
    # (opset 27).
    g = helper.make_graph(
        [helper.make_node("TensorScatter", ["past", "upd", "widx"], ["present"],
                          name="kv", mode="circular"),
         helper.make_node("Pad", ["present", "pads", "", "axes"], ["y"], name="pad"),
         helper.make_node("CausalConvWithState", ["seq", "cw", "", "carry"],
                          ["conv", "carry_out"], name="causal", activation="silu"),
         helper.make_node("LinearAttention", ["la_q", "la_k", "la_v", "", "la_g", "la_b"],
                          ["la_o", "la_s"], name="linear_attention", q_num_heads=4,
                          kv_num_heads=2)],
        "kvpad",
        [_vi("past", F, [2, 2, 8, 4]), _vi("upd", F, [2, 2, 3, 4]),
         _vi("widx", TensorProto.INT64, [2]), _vi("pads", TensorProto.INT64, [2]),
         _vi("axes", TensorProto.INT64, [1]), _vi("seq", F, [1, 4, 6]),
         _vi("carry", F, [1, 4, 2]), _vi("la_q", F, [1, 3, 16]), _vi("la_k", F, [1, 3, 8]),
         _vi("la_v", F, [1, 3, 8]), _vi("la_g", F, [1, 3, 2]), _vi("la_b", F, [1, 3, 2])],
        [_vi("y", F, [2, 2, 8, 6]), _vi("conv", F, [1, 4, 6]), _vi("carry_out", F, [1, 4, 2]),
         _vi("la_o", F, [1, 3, 16]), _vi("la_s", F, [1, 2, 4, 4])],
        [_f32("cw", [4, 1, 3], 12)])
    out.append(("kvpad", _model(g, opset=27)))
    return out


# ----------------------------------------------------------------------------
# Mutations. Each takes (rng, model) and returns (model or bytes, expect):
# expect "error" when the result is certainly invalid, "any" otherwise.
# ----------------------------------------------------------------------------

EXTREMES = [0, -1, -7, 2**31, 2**31 - 1, 2**40, 2**62, 2**63 - 1, -(2**63)]


def _node(rng, m):
    return rng.choice(list(m.graph.node)) if m.graph.node else None


def m_undefined_input(rng, m):
    n = _node(rng, m)
    if not n or not n.input:
        return m, "any"
    n.input[rng.randrange(len(n.input))] = "no_such_tensor_%d" % rng.randrange(99)
    return m, "error"


def m_duplicate_output(rng, m):
    if len(m.graph.node) < 2:
        return m, "any"
    a, b = rng.sample(list(m.graph.node), 2)
    b.output[0] = a.output[0]
    return m, "error"


def _used_names(graph):
    """Every name a node of `graph` (or of its subgraphs) reads, and the
    graph's outputs."""
    used = {o.name for o in graph.output}
    for n in graph.node:
        used.update(n.input)
        for a in n.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                used |= _used_names(g)
    return used


def m_delete_node(rng, m):
    if not m.graph.node:
        return m, "any"
    i = rng.randrange(len(m.graph.node))
    outputs = set(m.graph.node[i].output)
    del m.graph.node[i]
    # A node nothing reads (the generated seeds have some) leaves a valid
    # model behind.
    return m, "error" if outputs & _used_names(m.graph) else "any"


def _attribute(rng, m):
    """A random attribute of a random node, or None."""
    n = _node(rng, m)
    if not n or not n.attribute:
        return None
    return rng.choice(list(n.attribute))


def m_attribute_type(rng, m):
    a = _attribute(rng, m)
    if a is None:
        return m, "any"
    kind = rng.choice(["f", "s", "ints", "floats", "t"])
    name = a.name
    a.Clear()
    a.name = name
    if kind == "f":
        a.type, a.f = onnx.AttributeProto.FLOAT, 1.5
    elif kind == "s":
        a.type, a.s = onnx.AttributeProto.STRING, b"\xff\xfe"
    elif kind == "ints":
        a.type = onnx.AttributeProto.INTS
        a.ints.extend([rng.choice(EXTREMES) for _ in range(rng.randrange(0, 6))])
    elif kind == "floats":
        a.type = onnx.AttributeProto.FLOATS
        a.floats.extend([float("nan"), float("inf")])
    else:
        a.type = onnx.AttributeProto.TENSOR
        a.t.CopyFrom(_f32("t", [2]))
    return m, "any"


def m_misspelled_attribute(rng, m):
    a = _attribute(rng, m)
    if a is None:
        return m, "any"
    a.name = a.name + "_typo"
    return m, "error"


def m_extreme_ints(rng, m):
    n = _node(rng, m)
    if not n:
        return m, "any"
    ints = [a for a in n.attribute if a.type in (onnx.AttributeProto.INTS,
                                                  onnx.AttributeProto.INT)]
    if not ints:
        n.attribute.append(helper.make_attribute("axis", rng.choice(EXTREMES)))
        return m, "any"
    a = rng.choice(ints)
    if a.type == onnx.AttributeProto.INT:
        a.i = rng.choice(EXTREMES)
    elif a.ints:
        a.ints[rng.randrange(len(a.ints))] = rng.choice(EXTREMES)
    return m, "any"


def m_input_dims(rng, m):
    if not m.graph.input:
        return m, "any"
    shape = m.graph.input[0].type.tensor_type.shape
    choice = rng.randrange(4)
    if choice == 0 and shape.dim:
        shape.dim[rng.randrange(len(shape.dim))].dim_value = rng.choice(EXTREMES[1:])
    elif choice == 1:
        for _ in range(rng.randrange(8, 40)):
            shape.dim.add().dim_value = 2
    elif choice == 2 and shape.dim:
        shape.dim[rng.randrange(len(shape.dim))].dim_param = "sym"
    else:
        del shape.dim[:]
    return m, "any"


def m_initializer(rng, m):
    if not m.graph.initializer:
        return m, "any"
    t = rng.choice(list(m.graph.initializer))
    choice = rng.randrange(6)
    if choice == 0:
        t.data_type = rng.choice([0, 8, 17, 99, -3])
    elif choice == 1 and t.raw_data:
        t.raw_data = t.raw_data[: rng.randrange(len(t.raw_data))]
    elif choice == 2:
        t.dims.append(rng.choice([3, 2**40, -2]))
    elif choice == 3 and t.dims:
        t.dims[rng.randrange(len(t.dims))] = rng.choice(EXTREMES)
    elif choice == 4:
        t.float_data.extend([1.0, 2.0, 3.0])
    else:
        t.data_location = TensorProto.EXTERNAL
        t.ClearField("raw_data")
        del t.external_data[:]
        for k, v in [("location", rng.choice(["../../etc/passwd", "/etc/passwd",
                                              "missing.bin", "/dev/zero", ""])),
                     ("offset", str(rng.choice([0, 2**62, -5]))),
                     ("length", str(rng.choice([4, 2**62])))]:
            e = t.external_data.add()
            e.key, e.value = k, v
    return m, "error" if choice in (0, 1, 2, 5) else "any"


def m_opset(rng, m):
    del m.opset_import[:]
    op = m.opset_import.add()
    op.domain = rng.choice(["", "", "com.evil", "ai.onnx.ml"])
    op.version = rng.choice([0, -1, 1, 6, 99, 2**40])
    return m, "any"


def m_op_type(rng, m):
    n = _node(rng, m)
    if not n:
        return m, "any"
    n.op_type = rng.choice(["", "Frobnicate", "conv", "Relu\x00", "Ré", "A" * 10000])
    return m, "error"


def m_graph_outputs(rng, m):
    choice = rng.randrange(3)
    if choice == 0 and m.graph.output:
        m.graph.output.append(copy.deepcopy(m.graph.output[0]))
    elif choice == 1:
        del m.graph.output[:]
    else:
        v = m.graph.output.add()
        v.name = "nowhere"
    return m, "error"


def m_reverse_nodes(rng, m):
    nodes = list(m.graph.node)[::-1]
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return m, "any"


def m_input_count(rng, m):
    n = _node(rng, m)
    if not n:
        return m, "any"
    if n.input and rng.randrange(2):
        del n.input[:]
    else:
        n.input.extend(["x"] * rng.randrange(3, 9))
    return m, "any"


def m_cycle(rng, m):
    # A node that reads its own output: a cycle whatever the node order
    # (nodes merely out of order are sorted, as ONNX Runtime does).
    n = _node(rng, m)
    if not n or not n.input or not n.output or not n.output[0]:
        return m, "any"
    n.input[0] = n.output[0]
    return m, "error"


def m_names(rng, m):
    n = _node(rng, m)
    if not n:
        return m, "any"
    n.name = rng.choice(["*/ int evil; /*", "\"\n#include", "n" * 100000,
                         "\x00\x01", "../../x", "\u202e"])
    m.graph.name = rng.choice(["*/ evil /*", "\"; drop", "g" * 5000, ""])
    return m, "any"


def m_elem_type(rng, m):
    if not m.graph.input:
        return m, "any"
    m.graph.input[0].type.tensor_type.elem_type = rng.choice([0, 8, 14, 15, 99, -1])
    return m, "error"


def m_subgraph(rng, m):
    for n in m.graph.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                choice = rng.randrange(3)
                if choice == 0:
                    del a.g.output[:]
                elif choice == 1:
                    a.g.node[0].input[0] = "undefined_outer"
                else:
                    a.g.CopyFrom(m.graph)  # a branch that is the whole graph
                return m, "error" if choice < 2 else "any"
    return m, "any"


def m_symbolic_dims(rng, m):
    """Dimensions of the graph inputs made symbolic, some sharing a name:
    check() gives each name a range, so the model compiles at run-time
    sizes (a symbol shared by sizes that differ must be refused)."""
    inits = {t.name for t in m.graph.initializer}
    for v in m.graph.input:
        if v.name in inits or not v.type.HasField("tensor_type"):
            continue
        for d in v.type.tensor_type.shape.dim:
            if rng.randrange(2) == 0:
                d.dim_param = rng.choice(["n", "n", "seq", "h", "w"])
    return m, "any"


MUTATIONS = [m_undefined_input, m_duplicate_output, m_delete_node, m_attribute_type,
             m_misspelled_attribute, m_extreme_ints, m_input_dims, m_initializer,
             m_opset, m_op_type, m_graph_outputs, m_reverse_nodes, m_input_count,
             m_cycle, m_names, m_elem_type, m_subgraph, m_symbolic_dims,
             m_symbolic_dims]

# The ranges check() gives symbolic dimensions: from empty to large, and
# single sizes.
DIM_RANGES = ["1..4", "0..8", "1..64", "3..3", "0..1", "1..4096", "2..2"]


def dim_flags(data):
    """A --dim flag for each dim_param of the model's graph inputs, its range
    drawn from DIM_RANGES by a hash of the model and the name (the same case
    gets the same flags every time)."""
    try:
        m = onnx.load_from_string(data)
    except Exception:  # unparsable: kiln-compile says so itself
        return []
    names = []
    for v in m.graph.input:
        if v.type.HasField("tensor_type"):
            for d in v.type.tensor_type.shape.dim:
                if d.HasField("dim_param") and d.dim_param and d.dim_param not in names:
                    names.append(d.dim_param)
    flags = []
    for name in names[:8]:
        pick = zlib.crc32(data + name.encode("utf-8", "replace")) % len(DIM_RANGES)
        flags += ["--dim", f"{name}={DIM_RANGES[pick]}"]
    return flags


def byte_mutation(rng, data):
    data = bytearray(data)
    choice = rng.randrange(3)
    if choice == 0:
        return bytes(data[: rng.randrange(max(1, len(data)))])
    if choice == 1:
        for _ in range(rng.randrange(1, 9)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        return bytes(data)
    i = rng.randrange(len(data))
    return bytes(data[:i]) + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) + \
        bytes(data[i:])


def _valid(m):
    """Whether ONNX's own checker accepts `m` (its structure: every input
    defined, every output written once). Not full_check: ONNX 1.12's shape
    inference dies on some mutated models (a segfault in the harness)."""
    try:
        onnx.checker.check_model(m)
        return True
    except Exception:  # any refusal: the case stays one to refuse
        return False


def make_case(rng, seed_models):
    """One hostile case: (seed name, serialized bytes, expect)."""
    name, model = rng.choice(seed_models)
    m = copy.deepcopy(model)
    expect = "any"
    rounds = rng.choice([1, 1, 1, 2, 3])
    for _ in range(rounds):
        mutate = rng.choice(MUTATIONS)
        m, e = mutate(rng, m)
        if e == "error":
            expect = "error"
    if expect == "error" and rounds > 1 and _valid(m):
        # A later mutation can undo an earlier one (a node's output made a
        # duplicate of the next node's, then that node deleted).
        expect = "any"
    try:
        data = m.SerializeToString()
    except Exception:  # a mutation made an unserializable proto
        data = model.SerializeToString()
        expect = "any"
    if rng.randrange(6) == 0:
        data = byte_mutation(rng, data)
        expect = "any"
    return name, data, expect


# ----------------------------------------------------------------------------
# Running kiln-compile on a case.
# ----------------------------------------------------------------------------

def check(compiler, path, timeout, expect):
    """Compiles `path` to a .so; returns None if the outcome is acceptable,
    else why not."""
    so = path + ".so"
    start = time.monotonic()
    with open(path, "rb") as f:
        flags = dim_flags(f.read())
    try:
        r = subprocess.run([compiler, path, "-o", so] + flags, capture_output=True, text=True,
                           errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"no answer in {timeout} s (a hang)"
    finally:
        for ext in (".so", ".h", ".json"):
            try:
                os.remove(path + ext)
            except OSError:
                pass
    text = r.stdout + r.stderr
    for pattern, what in FORBIDDEN:
        if pattern.search(text):
            return f"printed {what}: {pattern.search(text).group(0)!r}"
    if r.returncode < 0:
        return f"killed by signal {-r.returncode}"
    if r.returncode not in (0, 1):
        return f"exit status {r.returncode}"
    if r.returncode == 1 and "error:" not in text:
        return "failed without an error: line"
    if r.returncode == 0 and expect == "error":
        return "accepted a model the mutation made invalid"
    del start
    return None


def run_cases(compiler, cases, jobs, timeout):
    failures = []

    def one(case):
        path, expect = case
        why = check(compiler, path, timeout, expect)
        return (path, why) if why else None

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for result in pool.map(one, cases):
            if result:
                failures.append(result)
                print(f"FAIL {result[0]}: {result[1]}", flush=True)
    return failures


def corpus(args):
    rng = random.Random(20261128)
    models = seeds()
    os.makedirs(args.workdir, exist_ok=True)
    cases = []
    # The seeds themselves must compile: the corpus is about what breaks them.
    for name, m in models:
        path = os.path.join(args.workdir, f"seed_{name}.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        r = subprocess.run([args.compiler, path, "-o", path + ".so"], capture_output=True,
                           text=True)
        if r.returncode != 0:
            print(f"seed {name} does not compile:\n{r.stderr}")
            return 1
    for i in range(args.count):
        name, data, expect = make_case(rng, models)
        path = os.path.join(args.workdir, f"case{i:04d}_{name}_{expect}.onnx")
        with open(path, "wb") as f:
            f.write(data)
        cases.append((path, expect))
    start = time.monotonic()
    failures = run_cases(args.compiler, cases, args.jobs, args.timeout)
    print(f"hostile corpus: {len(cases)} cases from {len(models)} seeds, "
          f"{len(failures)} failures, {time.monotonic() - start:.0f} s")
    return 1 if failures else 0


def generated_seeds(count):
    """`count` valid models of bench/fuzz/models.py (recurrent layers, If,
    float16 and quantized stretches, symbolic sizes) as further seeds."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.insert(0, os.path.join(root, "bench", "fuzz"))
    import models as generator  # noqa: E402 (bench/fuzz/models.py)
    out = []
    for s in range(count):
        built = generator.build_model(100000 + s)
        if built is not None:
            out.append((f"gen{100000 + s}", built[0]))
    return out


def fuzz(args):
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    models = seeds()
    if args.generated:
        models += generated_seeds(args.generated)
    work = os.path.join(args.workdir, "fuzz")
    failed_dir = os.path.join(args.workdir, "failures")
    os.makedirs(work, exist_ok=True)
    os.makedirs(failed_dir, exist_ok=True)
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    n = failures = 0
    while (deadline and time.monotonic() < deadline) or \
            (not deadline and n < args.iterations):
        name, data, expect = make_case(rng, models)
        path = os.path.join(work, f"f{n % 4}.onnx")
        with open(path, "wb") as f:
            f.write(data)
        why = check(args.compiler, path, args.timeout, expect)
        if why:
            failures += 1
            keep = os.path.join(failed_dir, f"seed{seed}_{n}_{name}_{expect}.onnx")
            with open(keep, "wb") as f:
                f.write(data)
            print(f"FAIL {keep}: {why}", flush=True)
        n += 1
    print(f"fuzz: seed {seed}, {n} cases, {failures} failures")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("corpus")
    c.add_argument("compiler")
    c.add_argument("workdir")
    c.add_argument("--count", type=int, default=1200)
    c.add_argument("--jobs", type=int, default=2)
    c.add_argument("--timeout", type=float, default=60)
    f = sub.add_parser("fuzz")
    f.add_argument("compiler")
    f.add_argument("workdir")
    f.add_argument("--iterations", type=int, default=100)
    f.add_argument("--minutes", type=float, default=0)
    f.add_argument("--seed", type=int)
    f.add_argument("--generated", type=int, default=0, metavar="N",
                   help="also mutate N random models of bench/fuzz/models.py")
    f.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    return corpus(args) if args.mode == "corpus" else fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
