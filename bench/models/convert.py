#!/usr/bin/python3
"""Third-party-style variants of the development models, built the way
export tools build them, for the benchmark harness beside the development
set (issue 31's held-in set).

  fp16   the fp16 conversion of onnxconverter-common's convert_float_to_float16
         with keep_io_types=True: every float initializer, Constant (and
         ConstantOfShape value) and intermediate tensor becomes fp16, a Cast to fp16 follows each float
         graph input and a Cast to float precedes each float graph output.
         Inputs that ONNX requires in float (Resize's roi and scales) keep
         float.
  dynint8  onnxruntime.quantization.quantize_dynamic's output for Conv and
         MatMul with a constant weight (its ConvInteger / MatMulInteger form):
         DynamicQuantizeLinear on the activation, the weight as int8
         symmetric per tensor (QInt8, the tool's default), ConvInteger or
         MatMulInteger, Cast to float, Mul by x_scale * w_scale, then the
         bias Add.
  qdq    onnxruntime.quantization.quantize_static's QDQ output with its
         defaults for Conv and MatMul with a constant weight: the activation
         and the product's output through QuantizeLinear -> DequantizeLinear
         as int8 (asymmetric, the range observed on the model's test input,
         MinMax; a Relu or Clip that is the product's one reader is removed
         and the product's output quantized with the activation's range, as
         the tool's QDQRemovableActivation does), the weight int8
         symmetric per tensor -> DequantizeLinear, a Conv bias int32 at scale
         x_scale * w_scale -> DequantizeLinear. Calibration runs the f32
         model with Kiln (build/python) on test_data_set_0.
  qdqpc  the same with quantize_static's per_channel=True: each weight int8
         symmetric per output channel, its DequantizeLinear with an axis and a
         zero point of 0 per channel.
  wo8    weight-only quantization: every Conv, MatMul and Gemm weight int8
         symmetric per output channel -> DequantizeLinear, activations in f32.
  ln     every LayerNormalization written out as Paddle2ONNX and pre-opset-17
         exporters write it: ReduceMean, Sub, Pow(2), ReduceMean, Add(eps),
         Sqrt, Div, Mul(scale), Add(bias), at opset 14.

usage: /usr/bin/python3 bench/models/convert.py fp16|dynint8|qdq|qdqpc|wo8|ln SRC_DIR OUT_DIR [NAME ...]

SRC_DIR holds bench/models/export.py's output (SRC_DIR/<name>/model.onnx and
test_data_set_0); each NAME becomes OUT_DIR/<name>_<variant>/model.onnx with
the source's test data (for fp16 the references stay the f32 model's
outputs: compare with fp16 tolerances).
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT, HALF = TensorProto.FLOAT, TensorProto.FLOAT16
# (op type, input index) that ONNX types as float whatever the data is.
KEEP_FLOAT_INPUTS = {("Resize", 1), ("Resize", 2), ("Upsample", 1)}


def half_tensor(t):
    return numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)


def to_fp16(model):
    g = model.graph
    keep = {n.input[i] for n in g.node for (op, i) in KEEP_FLOAT_INPUTS
            if n.op_type == op and i < len(n.input)}
    for init in g.initializer:
        if init.data_type == FLOAT and init.name not in keep:
            init.CopyFrom(half_tensor(init))
    for n in g.node:
        if n.op_type in ("Constant", "ConstantOfShape") and not set(n.output) & keep:
            for a in n.attribute:
                if a.name == "value" and a.t.data_type == FLOAT:
                    a.t.CopyFrom(half_tensor(a.t))
        for a in n.attribute:  # Cast targets
            if n.op_type == "Cast" and a.name == "to" and a.i == FLOAT:
                a.i = HALF
    for vi in g.value_info:
        if vi.type.tensor_type.elem_type == FLOAT and vi.name not in keep:
            vi.type.tensor_type.elem_type = HALF

    def rename_uses(old, new):
        for n in g.node:
            for k, x in enumerate(n.input):
                if x == old:
                    n.input[k] = new

    head, tail = [], []
    for i in g.input:
        if i.type.tensor_type.elem_type == FLOAT:
            rename_uses(i.name, i.name + "_fp16")
            head.append(helper.make_node("Cast", [i.name], [i.name + "_fp16"], to=HALF,
                                         name=i.name + "_to_fp16"))
    for o in g.output:
        if o.type.tensor_type.elem_type == FLOAT:
            for n in g.node:
                for k, x in enumerate(n.output):
                    if x == o.name:
                        n.output[k] = o.name + "_fp16"
            rename_uses(o.name, o.name + "_fp16")
            tail.append(helper.make_node("Cast", [o.name + "_fp16"], [o.name], to=FLOAT,
                                         name=o.name + "_to_float"))
    nodes = head + list(g.node) + tail
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(model)
    return model


def written_out_layernorm(model):
    """LayerNormalization (last axis) as a chain of opset-14 nodes."""
    g = model.graph
    nodes = []
    for n in g.node:
        if n.op_type != "LayerNormalization":
            nodes.append(n)
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        assert attrs.get("axis", -1) == -1 and len(n.output) == 1, n.name
        x, scale = n.input[0], n.input[1]
        bias = n.input[2] if len(n.input) > 2 and n.input[2] else None
        p = (n.name or n.output[0]) + "/"
        eps = numpy_helper.from_array(np.array(attrs.get("epsilon", 1e-5), np.float32),
                                      p + "eps")
        two = numpy_helper.from_array(np.array(2.0, np.float32), p + "two")
        g.initializer.extend([eps, two])
        nodes += [
            helper.make_node("ReduceMean", [x], [p + "mean"], axes=[-1], keepdims=1),
            helper.make_node("Sub", [x, p + "mean"], [p + "centered"]),
            helper.make_node("Pow", [p + "centered", p + "two"], [p + "squared"]),
            helper.make_node("ReduceMean", [p + "squared"], [p + "var"], axes=[-1],
                             keepdims=1),
            helper.make_node("Add", [p + "var", p + "eps"], [p + "var_eps"]),
            helper.make_node("Sqrt", [p + "var_eps"], [p + "std"]),
            helper.make_node("Div", [p + "centered", p + "std"], [p + "normed"]),
            helper.make_node("Mul", [p + "normed", scale],
                             [p + "scaled" if bias else n.output[0]])]
        if bias:
            nodes.append(helper.make_node("Add", [p + "scaled", bias], [n.output[0]]))
    del g.node[:]
    g.node.extend(nodes)
    del model.opset_import[:]
    model.opset_import.extend([helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    return model


def with_nodes(model, nodes):
    """The model's graph with `nodes`, its unused initializers dropped; checked."""
    g = model.graph
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    onnx.checker.check_model(model)
    return model


def dynamic_int8(model):
    """Conv and MatMul with constant weights in quantize_dynamic's form."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes = []
    for n in g.node:
        w = inits.get(n.input[1]) if n.op_type in ("Conv", "MatMul") and len(n.input) > 1 \
            else None
        if w is None or w.data_type != FLOAT:
            nodes.append(n)
            continue
        p = (n.name or n.output[0]) + "/"
        wf = numpy_helper.to_array(w)
        w_scale = np.float32(max(np.abs(wf).max(), 1e-8) / 127.0)
        wq = np.clip(np.rint(wf / w_scale), -127, 127).astype(np.int8)
        g.initializer.extend([
            numpy_helper.from_array(wq, p + "w_q"),
            numpy_helper.from_array(np.array(w_scale, np.float32), p + "w_scale"),
            numpy_helper.from_array(np.array(0, np.int8), p + "w_zp")])
        x = n.input[0]
        nodes.append(helper.make_node("DynamicQuantizeLinear", [x],
                                      [p + "x_q", p + "x_scale", p + "x_zp"]))
        integer = "ConvInteger" if n.op_type == "Conv" else "MatMulInteger"
        attrs = [a for a in n.attribute] if n.op_type == "Conv" else []
        q = helper.make_node(integer, [p + "x_q", p + "w_q", p + "x_zp", p + "w_zp"],
                             [p + "acc"], name=p + integer)
        q.attribute.extend(attrs)
        bias = n.input[2] if n.op_type == "Conv" and len(n.input) > 2 and n.input[2] else None
        out = n.output[0]
        nodes += [q,
                  helper.make_node("Cast", [p + "acc"], [p + "acc_f"], to=FLOAT),
                  helper.make_node("Mul", [p + "x_scale", p + "w_scale"], [p + "scale"]),
                  helper.make_node("Mul", [p + "acc_f", p + "scale"],
                                   [p + "deq" if bias else out])]
        if bias:  # [C] -> [1, C, 1, 1], as the tool reshapes it
            rank = len(wf.shape)
            g.initializer.append(numpy_helper.from_array(
                np.array([1, -1] + [1] * (rank - 2), np.int64), p + "bias_shape"))
            nodes += [helper.make_node("Reshape", [bias, p + "bias_shape"], [p + "bias_nc"]),
                      helper.make_node("Add", [p + "deq", p + "bias_nc"], [out])]
    return with_nodes(model, nodes)


def observed_ranges(model, names, data_dir):
    """(min, max) of each tensor in `names` when the model runs on the
    test input in data_dir, computed by Kiln."""
    import tempfile
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "build", "python"))
    import kiln
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    probe.graph.output.extend(helper.make_tensor_value_info(n, FLOAT, None) for n in names)
    inputs = []
    for i in range(len(model.graph.input)):
        t = onnx.TensorProto()
        with open(os.path.join(data_dir, f"input_{i}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        inputs.append(numpy_helper.to_array(t))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "probe.onnx")
        onnx.save(probe, path)
        outs = kiln.load(kiln.compile(path, output=os.path.join(d, "probe.so")))(*inputs)
    return {n: (float(min(o.min(), 0)), float(max(o.max(), 0))) for n, o in zip(names, outs)}


def output_axis(n):
    """The axis of n's weight that indexes its outputs: a Conv's filters, a
    MatMul's columns, a Gemm's rows with transB (else columns)."""
    if n.op_type == "Conv":
        return 0
    if n.op_type == "Gemm":
        return 0 if any(a.name == "transB" and a.i for a in n.attribute) else 1
    return 1


def dequantized_weight(g, n, init, p, per_channel):
    """n's float weight as int8 symmetric (per tensor, or per output channel
    with zero points of 0 as the tool writes them) and its DequantizeLinear
    into p + "w_dequantized"; returns (scale, node)."""
    wf = numpy_helper.to_array(init)
    if per_channel:
        axis = output_axis(n)
        others = tuple(d for d in range(wf.ndim) if d != axis)
        w_scale = (np.maximum(np.abs(wf).max(axis=others), 1e-8) / 127.0).astype(np.float32)
        shape = [1] * wf.ndim
        shape[axis] = -1
        wq = np.clip(np.rint(wf / w_scale.reshape(shape)), -127, 127).astype(np.int8)
        g.initializer.extend([
            numpy_helper.from_array(wq, p + "w_quantized"),
            numpy_helper.from_array(w_scale, p + "w_scale"),
            numpy_helper.from_array(np.zeros(w_scale.shape, np.int8), p + "w_zero_point")])
        return w_scale, helper.make_node(
            "DequantizeLinear", [p + "w_quantized", p + "w_scale", p + "w_zero_point"],
            [p + "w_dequantized"], axis=axis)
    w_scale = np.float32(max(np.abs(wf).max(), 1e-8) / 127.0)
    wq = np.clip(np.rint(wf / w_scale), -127, 127).astype(np.int8)
    g.initializer.extend([
        numpy_helper.from_array(wq, p + "w_quantized"),
        numpy_helper.from_array(np.array(w_scale, np.float32), p + "w_scale")])
    return w_scale, helper.make_node("DequantizeLinear", [p + "w_quantized", p + "w_scale"],
                                     [p + "w_dequantized"])


def weight_only_int8(model):
    """Every Conv, MatMul and Gemm weight int8 per output channel ->
    DequantizeLinear, the activations left in f32 (weight-only
    quantization)."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes = []
    for n in g.node:
        if n.op_type in ("Conv", "MatMul", "Gemm") and len(n.input) > 1 and \
                n.input[1] in inits and inits[n.input[1]].data_type == FLOAT and \
                len(inits[n.input[1]].dims) >= 2:
            p = (n.name or n.output[0]) + "/"
            nodes.append(dequantized_weight(g, n, inits[n.input[1]], p, True)[1])
            n.input[1] = p + "w_dequantized"
        nodes.append(n)
    return with_nodes(model, nodes)


def qdq_int8(model, data_dir, per_channel=False):
    """Conv, MatMul and Gemm with constant weights in quantize_static's QDQ
    form."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    def plain_gemm(n):  # alpha = beta = 1, A not transposed: the bias quantizes
        return n.op_type == "Gemm" and all(
            helper.get_attribute_value(a) == (0 if a.name == "transA" else 1)
            for a in n.attribute if a.name in ("alpha", "beta", "transA"))
    todo = [n for n in g.node if (n.op_type in ("Conv", "MatMul") or plain_gemm(n))
            and len(n.input) > 1
            and n.input[1] in inits and inits[n.input[1]].data_type == FLOAT]
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    outputs = {o.name for o in g.output}

    def removable(y):
        """The Relu or Clip that is y's one reader: the tool (its
        QDQRemovableActivation, asymmetric activations) removes it and
        quantizes y with the range of the activation's output instead."""
        users = readers.get(y, [])
        if len(users) == 1 and users[0].op_type in ("Relu", "Clip") and \
                users[0].input[0] == y and y not in outputs:
            return users[0]
        return None
    activations = {n.output[0]: removable(n.output[0]) for n in todo}
    removed = {id(a) for a in activations.values() if a is not None}
    quantized = {a.output[0] if a else y for y, a in activations.items()}
    ranges = observed_ranges(
        model, sorted({n.input[0] for n in todo} | quantized), data_dir)
    nodes, done = [], {}

    def qdq(x, lo, hi, dequantized=None):
        """QuantizeLinear -> DequantizeLinear of x (int8, asymmetric), into
        `dequantized` (default x + "_dequantized")."""
        x_scale = np.float32(max(hi - lo, 1e-8) / 255.0)
        x_zp = np.int8(np.clip(np.rint(-128 - lo / x_scale), -128, 127))
        g.initializer.extend([
            numpy_helper.from_array(np.array(x_scale, np.float32), x + "_scale"),
            numpy_helper.from_array(np.array(x_zp, np.int8), x + "_zero_point")])
        return x_scale, [
            helper.make_node("QuantizeLinear", [x, x + "_scale", x + "_zero_point"],
                             [x + "_quantized"]),
            helper.make_node("DequantizeLinear",
                             [x + "_quantized", x + "_scale", x + "_zero_point"],
                             [dequantized or x + "_dequantized"])]
    for n in g.node:
        if id(n) in removed:
            continue
        if n not in todo:
            nodes.append(n)
            continue
        p = (n.name or n.output[0]) + "/"
        x = n.input[0]
        if x not in done:  # one QuantizeLinear/DequantizeLinear per activation
            scale, pair = qdq(x, *ranges[x])
            done[x] = (scale, x + "_dequantized")
            nodes += pair
        w_scale, dq = dequantized_weight(g, n, inits[n.input[1]], p, per_channel)
        nodes.append(dq)
        ins = [done[x][1], p + "w_dequantized"]
        biased = n.op_type in ("Conv", "Gemm") and len(n.input) > 2 and n.input[2]
        if biased and n.input[2] not in inits:
            ins.append(n.input[2])  # not a constant: it stays float
        elif biased:
            b_scale = (np.float32(done[x][0]) * w_scale).astype(np.float32)
            bq = np.rint(numpy_helper.to_array(inits[n.input[2]]) / b_scale).astype(np.int32)
            g.initializer.extend([
                numpy_helper.from_array(bq, p + "b_quantized"),
                numpy_helper.from_array(np.asarray(b_scale, np.float32), p + "b_scale")])
            nodes.append(helper.make_node("DequantizeLinear", [p + "b_quantized", p + "b_scale"],
                                          [p + "b_dequantized"], axis=0))
            ins.append(p + "b_dequantized")
        # The output quantized too, as the tool does, so that a runtime may
        # fuse DequantizeLinear -> Conv -> QuantizeLinear (QLinearConv).
        # A Relu or Clip after it is removed (its range is the output's).
        y = n.output[0]
        act = activations[y]
        out = act.output[0] if act else y
        q = helper.make_node(n.op_type, ins, [y + "_float"], name=n.name)
        q.attribute.extend(n.attribute)
        # Its DequantizeLinear writes the tensor the graph reads on, the next
        # product's input too (one pair per tensor, as the tool writes it).
        scale, pair = qdq(y + "_float", *ranges[out], dequantized=out)
        done[out] = (scale, out)
        nodes += [q] + pair
    return with_nodes(model, nodes)


VARIANTS = {"fp16": to_fp16, "dynint8": dynamic_int8, "ln": written_out_layernorm,
            "qdq": qdq_int8, "qdqpc": qdq_int8, "wo8": weight_only_int8}


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in VARIANTS:
        sys.exit(__doc__)
    variant = sys.argv[1]
    src, out, names = sys.argv[2], sys.argv[3], sys.argv[4:]
    names = names or sorted(d for d in os.listdir(src)
                            if os.path.exists(os.path.join(src, d, "model.onnx")))
    for name in names:
        dst = os.path.join(out, f"{name}_{variant}")
        os.makedirs(dst, exist_ok=True)
        model = onnx.load(os.path.join(src, name, "model.onnx"))
        if variant in ("qdq", "qdqpc"):
            m = qdq_int8(model, os.path.join(src, name, "test_data_set_0"),
                         per_channel=variant == "qdqpc")
        else:
            m = VARIANTS[variant](model)
        onnx.save(m, os.path.join(dst, "model.onnx"))
        data = os.path.join(src, name, "test_data_set_0")
        if os.path.isdir(data):
            shutil.rmtree(os.path.join(dst, "test_data_set_0"), ignore_errors=True)
            shutil.copytree(data, os.path.join(dst, "test_data_set_0"))
        print(f"{dst}/model.onnx")


if __name__ == "__main__":
    main()
