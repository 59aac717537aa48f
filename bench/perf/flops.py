#!/usr/bin/python3
"""FLOP count of an ONNX model: 2 * multiply-accumulates of its Conv, Gemm,
MatMul and ConvTranspose nodes, from ONNX shape inference. Other ops
(elementwise, pooling, softmax, normalization) are not counted, so the figure
is the usual "model FLOPs" of the dense layers.

usage: /usr/bin/python3 bench/perf/flops.py MODEL.onnx [...]
"""
import sys

import onnx
from onnx import shape_inference


def _shapes(model):
    shapes = {}
    g = model.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        t = vi.type.tensor_type
        if t.HasField("shape"):
            dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
            shapes[vi.name] = dims
    for init in g.initializer:
        shapes[init.name] = list(init.dims)
    return shapes


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def count_flops(path):
    """Returns (flops, per-op-type dict, list of nodes whose shapes were unknown)."""
    model = onnx.load(path)
    model = shape_inference.infer_shapes(model)
    shapes = _shapes(model)
    by_op, unknown = {}, []
    for n in model.graph.node:
        if n.op_type not in ("Conv", "ConvTranspose", "Gemm", "MatMul"):
            continue
        ins = [shapes.get(x) for x in n.input]
        out = shapes.get(n.output[0])
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        try:
            if n.op_type in ("Conv", "ConvTranspose"):
                x, w = ins[0], ins[1]
                if n.op_type == "Conv":
                    # out [N, Cout, *spatial], w [Cout, Cin/group, *k]: the group
                    # count is already in w's second dimension.
                    macs = _prod(out) * w[1] * _prod(w[2:])
                else:
                    # w [Cin, Cout/group, *k]: every input pixel scatters into k outputs.
                    macs = _prod(x) * w[1] * _prod(w[2:])
            elif n.op_type == "Gemm":
                a = ins[0]
                k = a[0] if attrs.get("transA", 0) else a[1]
                macs = _prod(out) * k
            else:  # MatMul with numpy broadcasting; out holds batch x M x N
                a = ins[0]
                k = a[-1]
                macs = _prod(out) * k
            if macs is None:
                raise TypeError
        except (TypeError, IndexError):
            unknown.append(n.name or n.op_type)
            continue
        by_op[n.op_type] = by_op.get(n.op_type, 0) + 2 * macs
    return sum(by_op.values()), by_op, unknown


def main():
    for p in sys.argv[1:]:
        total, by_op, unknown = count_flops(p)
        parts = ", ".join(f"{k} {v / 1e9:.3f}" for k, v in sorted(by_op.items()))
        extra = f"; unknown shapes: {', '.join(unknown)}" if unknown else ""
        print(f"{p}: {total / 1e9:.3f} GFLOP ({parts}){extra}")


if __name__ == "__main__":
    main()
