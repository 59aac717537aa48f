#!/usr/bin/python3
"""An fp16-converted model, as export tools write one (fp16 weights and
activations, a Cast to fp16 after the input and to f32 before the output):
by default Kiln computes it in f32, so its outputs must equal f32
arithmetic on the fp16 weights and the fp16-rounded input; with
--half-compute=native every node rounds to fp16 and only fp16 accuracy holds.

Usage: check_half_model.py KILN_COMPILE KILN_RUN WORKDIR

The model: x[8,64] -> Cast(fp16) -> MatMul W1[64,96] -> Add b1 -> Relu ->
MatMul W2[96,10] -> Add b2 -> Cast(f32) -> y[8,10]. The reference is
computed in float64 from the fp16 values. Tolerances: default rtol 1e-5,
atol 1e-5 (f32 sums in another order); native rtol 2e-2, atol 2e-2 (fp16
rounding after every node), and the native result must be measurably
further from the reference than the default one, or the check proves
nothing.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(w1, b1, w2, b2):
    h = TensorProto.FLOAT16
    inits = [numpy_helper.from_array(a, n) for n, a in
             (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2))]
    nodes = [helper.make_node("Cast", ["x"], ["xh"], to=h),
             helper.make_node("MatMul", ["xh", "w1"], ["m1"]),
             helper.make_node("Add", ["m1", "b1"], ["a1"]),
             helper.make_node("Relu", ["a1"], ["r1"]),
             helper.make_node("MatMul", ["r1", "w2"], ["m2"]),
             helper.make_node("Add", ["m2", "b2"], ["yh"]),
             helper.make_node("Cast", ["yh"], ["y"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(
        nodes, "half_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main():
    compile_, run, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal((64, 96)) * 0.2).astype(np.float16)
    b1 = (rng.standard_normal(96) * 0.1).astype(np.float16)
    w2 = (rng.standard_normal((96, 10)) * 0.2).astype(np.float16)
    b2 = (rng.standard_normal(10) * 0.1).astype(np.float16)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    path = os.path.join(work, "model.onnx")
    onnx.save(model(w1, b1, w2, b2), path)

    f64 = lambda a: a.astype(np.float64)  # noqa: E731
    xh = f64(x.astype(np.float16))
    ref = np.maximum(xh @ f64(w1) + f64(b1), 0) @ f64(w2) + f64(b2)

    data = os.path.join(work, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    for name, arr in (("input_0.pb", numpy_helper.from_array(x, "x")),
                      ("output_0.pb", numpy_helper.from_array(ref.astype(np.float32), "y"))):
        with open(os.path.join(data, name), "wb") as f:
            f.write(arr.SerializeToString())

    errors = {}
    ok = True
    for mode, flags, tol in (("f32", [], "1e-5"),
                             ("native", ["--half-compute=native"], "2e-2")):
        so = os.path.join(work, f"model_{mode}.so")
        subprocess.run([compile_, path, "-o", so, *flags], check=True)
        r = subprocess.run([run, so, "--test-data", data, "--rtol", tol, "--atol", tol],
                           capture_output=True, text=True)
        out = r.stdout + r.stderr
        print(f"{mode}: {out.strip().splitlines()[0] if out.strip() else ''}")
        if r.returncode != 0:
            print(f"half compute {mode}: kiln-run failed ({r.returncode}):\n{out}")
            ok = False
        err = [w for w in out.split() if w.startswith("max_abs_err=")]
        errors[mode] = float(err[0].split("=")[1]) if err else None
    if ok and not (errors["f32"] is not None and errors["native"] is not None
                   and errors["native"] > 10 * max(errors["f32"], 1e-7)):
        print(f"native fp16 should be clearly less accurate than f32 compute: {errors}")
        ok = False
    print("half model: %s (max abs error f32 %s, native %s)"
          % ("ok" if ok else "FAILED", errors.get("f32"), errors.get("native")))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
