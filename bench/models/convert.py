#!/usr/bin/python3
"""Third-party-style variants of the development models, built the way
export tools build them, for the benchmark harness beside the development
set (issue 31's held-in set).

  fp16   the fp16 conversion of onnxconverter-common's convert_float_to_float16
         with keep_io_types=True: every float initializer, Constant and
         intermediate tensor becomes fp16, a Cast to fp16 follows each float
         graph input and a Cast to float precedes each float graph output.
         Inputs that ONNX requires in float (Resize's roi and scales) keep
         float.
  ln     every LayerNormalization written out as Paddle2ONNX and pre-opset-17
         exporters write it: ReduceMean, Sub, Pow(2), ReduceMean, Add(eps),
         Sqrt, Div, Mul(scale), Add(bias), at opset 14.

usage: /usr/bin/python3 bench/models/convert.py fp16|ln SRC_DIR OUT_DIR [NAME ...]

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
        if n.op_type == "Constant" and not set(n.output) & keep:
            for a in n.attribute:
                if a.name == "value" and a.t.data_type == FLOAT:
                    a.t.CopyFrom(half_tensor(a.t))
        for a in n.attribute:  # Cast/ConstantOfShape-style targets
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


VARIANTS = {"fp16": to_fp16, "ln": written_out_layernorm}


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
        m = VARIANTS[variant](onnx.load(os.path.join(src, name, "model.onnx")))
        onnx.save(m, os.path.join(dst, "model.onnx"))
        data = os.path.join(src, name, "test_data_set_0")
        if os.path.isdir(data):
            shutil.rmtree(os.path.join(dst, "test_data_set_0"), ignore_errors=True)
            shutil.copytree(data, os.path.join(dst, "test_data_set_0"))
        print(f"{dst}/model.onnx")


if __name__ == "__main__":
    main()
