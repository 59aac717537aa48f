#!/usr/bin/python3
"""A Loop that can end early, as scripted exports write `while` loops with a
bound: compiled once, run against a Python reference at several run-time
values that stop it at different iterations.

Usage: check_early_exit_loop.py KILN_COMPILE KILN_RUN WORKDIR

The model: v (f32[4]) and count (i64) are carried through at most M = 12
iterations of v = v * 1.5 + 0.25, count = count + 1; the body goes on while
max(v) < limit, and the loop starts only when `go` is true. limit and go are
graph inputs, so where the loop stops is known only at run time. kiln-run
compares each output with the reference (rtol 1e-5); the reference runs the
loop the way ONNX defines it, stopping at the first false condition.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import check_case, compile_cli, write_case  # noqa: E402

M = 12


def model():
    body = helper.make_graph(
        [helper.make_node("Constant", [], ["k"],
                          value=numpy_helper.from_array(np.float32(1.5))),
         helper.make_node("Constant", [], ["b"],
                          value=numpy_helper.from_array(np.float32(0.25))),
         helper.make_node("Constant", [], ["one"],
                          value=numpy_helper.from_array(np.int64(1))),
         helper.make_node("Mul", ["v_in", "k"], ["scaled"]),
         helper.make_node("Add", ["scaled", "b"], ["v_out"]),
         helper.make_node("Add", ["count_in", "one"], ["count_out"]),
         helper.make_node("ReduceMax", ["v_out"], ["top"], keepdims=0),
         helper.make_node("Less", ["top", "limit"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("count_in", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("count_out", TensorProto.INT64, [])])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["m"],
                          value=numpy_helper.from_array(np.int64(M))),
         helper.make_node("Constant", [], ["zero"],
                          value=numpy_helper.from_array(np.int64(0))),
         helper.make_node("Loop", ["m", "go", "x", "zero"], ["y", "count"],
                          name="while_loop", body=body)],
        "early_exit",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("limit", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("go", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("count", TensorProto.INT64, [])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def reference(x, limit, go):
    v, count, cond = x.copy(), np.int64(0), go
    for _ in range(M):
        if not cond:
            break
        v = (v * np.float32(1.5) + np.float32(0.25)).astype(np.float32)
        count += 1
        cond = bool(v.max() < limit)
    return v, count


def main():
    compile_, run, work = sys.argv[1:4]
    so = compile_cli(compile_, model(), work)

    x = np.array([0.5, -1.0, 2.0, 0.125], np.float32)
    ok = True
    stops = set()
    # Limits that stop it after 1, a few and many iterations, one that never
    # stops it before M, and a loop that never starts.
    for i, (limit, go) in enumerate([(1.0, True), (4.0, True), (20.0, True),
                                     (60.0, True), (1e9, True), (1e9, False)]):
        y, count = reference(x, np.float32(limit), go)
        stops.add(int(count))
        d = write_case(work, f"case{i}",
                       [("x", x), ("limit", np.float32(limit)), ("go", np.bool_(go))],
                       [("y", y), ("count", count)])
        passed, report = check_case(run, so, d, 1e-5, 1e-7)
        if not passed:
            print(f"limit {limit}, go {go} (reference count {count}): kiln-run "
                  f"failed:\n{report}")
            ok = False
    # The cases must stop the loop at different iterations, M included.
    assert len(stops) >= 5 and M in stops and 0 in stops, stops
    print("early-exit loop: %s (stopped after %s iterations)"
          % ("ok" if ok else "FAILED", sorted(stops)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
