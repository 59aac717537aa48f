#!/usr/bin/python3
"""ONNX Loops whose body decides when to stop, compiled as one loop that
stops when the body's condition is false (docs/shapes.md, "Loops of a
run-time trip count"), against references written from the ONNX definition
(stop after the first iteration whose condition is false, or after M).

- `while max(v) < limit` as torch.jit.script exports it (M = INT64_MAX),
  against torch at limits that stop it after 0, 1, 9 and 40 iterations, and
  the same loop with no M at all.
- A run-time M and a body condition together, with a scan output: rows = the
  iterations run, below M, at M, and with a false initial condition (none).
- A constant M with scan outputs and an early exit, which Kiln used to
  refuse; with a constant false condition it runs no iteration.
- Refused by name: scan outputs of a loop with no bound on its iterations.

usage: check_while_loop.py WORKDIR PYTHONPATH
"""
import os
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

work, pythonpath = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import assert_close, compile_and_load, save_onnx  # noqa: E402

rng = np.random.default_rng(2)
RTOL = 1e-6  # f32 multiply-adds, compared against the same f32 sequence


def close(got, want, what):
    assert_close(got, want, what, RTOL)


def vi(name, elt, shape):
    return h.make_tensor_value_info(name, elt, shape)


# --- while max(v) < limit, scripted by torch -----------------------------------
import torch  # noqa: E402


class Grow(torch.nn.Module):
    def forward(self, v, limit):
        n = torch.zeros((), dtype=torch.long)
        while bool(v.max() < limit):
            v = v * 1.5 + 0.25
            n = n + 1
        return v, n


scripted = torch.jit.script(Grow())
grow_path = os.path.join(work, "scripted_while.onnx")
v0 = torch.rand(4) + 0.5
with torch.no_grad():
    torch.onnx.export(scripted, (v0, torch.tensor(10.0)), grow_path,
                      input_names=["v", "limit"], output_names=["vf", "n"],
                      opset_version=17)
m = compile_and_load(kiln, grow_path)
for limit, runs in ((0.1, 0), (1.0, None), (100.0, None), (1e8, None)):
    lim = torch.tensor(limit)
    with torch.no_grad():
        want_v, want_n = scripted(v0, lim)
    got_v, got_n = m(v0.numpy(), lim.numpy())
    close(got_v, want_v.numpy().astype(np.float64), f"while v limit {limit}")
    assert int(got_n) == int(want_n), (limit, got_n, want_n)
    if runs is not None:
        assert int(got_n) == runs, (limit, got_n)
assert int(m(v0.numpy(), np.float32(1e8))[1]) > 30  # it did run long

# The same loop with no M at all (ONNX allows it when the body stops it).
body = h.make_graph(
    [h.make_node("Mul", ["v", "k"], ["s"]),
     h.make_node("Add", ["s", "b"], ["v2"]),
     h.make_node("ReduceMax", ["v2"], ["top"], keepdims=0),
     h.make_node("Less", ["top", "limit"], ["more"])],
    "grow", [vi("i", T.INT64, []), vi("cond", T.BOOL, []),
             vi("v", T.FLOAT, [4])],
    [vi("more", T.BOOL, []), vi("v2", T.FLOAT, [4])])
inits = [("k", np.array(1.5, np.float32)), ("b", np.array(0.25, np.float32))]
nodes = [h.make_node("ReduceMax", ["v0", ], ["top0"], keepdims=0),
         h.make_node("Less", ["top0", "limit"], ["go"]),
         h.make_node("Loop", ["", "go", "v0"], ["vf"], body=body)]
m = compile_and_load(kiln, save_onnx(
    work, "no_m", nodes, [vi("v0", T.FLOAT, [4]), vi("limit", T.FLOAT, [])],
    [vi("vf", T.FLOAT, [4])], inits))


def grow_ref(v, limit):
    v = v.copy()
    while v.max() < limit:
        v = v * np.float32(1.5) + np.float32(0.25)
    return v


for limit in (0.1, 3.0, 1e6):
    v = (rng.random(4) + 0.5).astype(np.float32)
    close(m(v, np.float32(limit))[0], grow_ref(v, np.float32(limit)),
          f"no M limit {limit}")

# --- A run-time M, a body condition and a scan output ---------------------------
# for i < M while cond: v = v * 1.5 + 0.25; y_i = v - 1; cond = i + 1 < stop
body = h.make_graph(
    [h.make_node("Mul", ["v", "k"], ["s"]),
     h.make_node("Add", ["s", "b"], ["v2"]),
     h.make_node("Sub", ["v2", "one"], ["y"]),
     h.make_node("Add", ["i", "one_i"], ["i1"]),
     h.make_node("Less", ["i1", "stop"], ["more"])],
    "steps", [vi("i", T.INT64, []), vi("cond", T.BOOL, []),
              vi("v", T.FLOAT, [4])],
    [vi("more", T.BOOL, []), vi("v2", T.FLOAT, [4]), vi("y", T.FLOAT, [4])])
step_inits = inits + [("one", np.array(1, np.float32)),
                      ("one_i", np.array(1, np.int64))]


def steps_ref(v, m_, stop, go=True):
    ys = []
    for i in range(m_):
        if not go:
            break
        v = v * np.float32(1.5) + np.float32(0.25)
        ys.append(v - np.float32(1))
        go = i + 1 < stop
    return v, np.array(ys, np.float32).reshape(len(ys), 4)


# M from a symbolic dimension (the scan output's bound), cond from an input.
nodes = [h.make_node("Shape", ["x"], ["sx"]),
         h.make_node("Gather", ["sx", "zero"], ["M"], axis=0),
         h.make_node("Loop", ["M", "go", "v0"], ["vf", "ys"], body=body,
                     name="steps")]
m = compile_and_load(kiln, save_onnx(
    work, "steps", nodes,
    [vi("x", T.FLOAT, ["n"]), vi("v0", T.FLOAT, [4]), vi("stop", T.INT64, []),
     vi("go", T.BOOL, [])],
    [vi("vf", T.FLOAT, [4]), vi("ys", T.FLOAT, [None, 4])],
    step_inits + [("zero", np.array(0, np.int64))]), dims={"n": (1, 16)})
for n, stop, go in ((16, 5, True), (6, 30, True), (16, 1, True), (9, 4, False),
                    (16, 0, True)):
    v = (rng.random(4) + 0.5).astype(np.float32)
    vf, ys = m(np.zeros(n, np.float32), v, np.array(stop, np.int64),
               np.array(go))
    want_v, want_y = steps_ref(v, n, stop, go)
    close(vf, want_v, f"steps vf n {n} stop {stop} go {go}")
    close(ys, want_y, f"steps ys n {n} stop {stop} go {go}")

# A constant M with scan outputs and an early exit (and, with a constant
# false condition, no iteration: 0 rows).
def const_m_model(name, cond_inits):
    nodes = [h.make_node("Loop", ["M", "no" if cond_inits else "", "v0"],
                         ["vf", "ys"], body=body)]
    return compile_and_load(kiln, save_onnx(
        work, name, nodes, [vi("v0", T.FLOAT, [4]), vi("stop", T.INT64, [])],
        [vi("vf", T.FLOAT, [4]), vi("ys", T.FLOAT, [None, 4])],
        step_inits + [("M", np.array(10, np.int64))] + cond_inits))


m = const_m_model("steps_const", [])
for stop in (3, 10, 50):
    v = (rng.random(4) + 0.5).astype(np.float32)
    vf, ys = m(v, np.array(stop, np.int64))
    want_v, want_y = steps_ref(v, 10, stop)
    close(vf, want_v, f"const M vf stop {stop}")
    close(ys, want_y, f"const M ys stop {stop}")
m = const_m_model("steps_never", [("no", np.array(False))])
v = (rng.random(4) + 0.5).astype(np.float32)
vf, ys = m(v, np.array(5, np.int64))
close(vf, v, "constant false condition vf")
close(ys, np.zeros((0, 4)), "constant false condition ys")

# --- Refused: scan outputs of a loop with no bound on its iterations ----------
nodes = [h.make_node("Loop", ["", "go", "v0"], ["vf", "ys"], body=body,
                     name="endless")]
path = save_onnx(work, "endless", nodes,
                 [vi("v0", T.FLOAT, [4]), vi("stop", T.INT64, []),
                  vi("go", T.BOOL, [])],
                 [vi("vf", T.FLOAT, [4]), vi("ys", T.FLOAT, [None, 4])],
                 step_inits)
try:
    kiln.compile(path, output=path[:-5] + ".so")
    raise AssertionError("an unbounded scan output compiled")
except kiln.Error as e:
    assert "node 'endless' (Loop, opset 13)" in str(e), e
    assert "no bound on their length" in str(e), e
print("while loops: ok")
