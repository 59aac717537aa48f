#!/usr/bin/python3
"""ONNX Loops whose trip count is known only at run time (docs/shapes.md,
"Loops of a run-time trip count"): compiled once as one loop, not unrolled,
and run at several trip counts against a float64 reference written from the
ONNX definition.

- An RNN written as a Loop over a symbolic sequence length (M from Shape,
  as exporters write it), with a loop-carried state and a stacked scan
  output, at seq 1, 5 and the bound 40, on 1 and 2 threads (a body large
  enough that its matmul is shared among threads), through Python and
  through kiln-run --test-data; a seq above the bound is refused. The model
  also returns x[-1] (a negative Gather index on the symbolic axis).
- A run-time condition input: false runs no iteration (the state comes back
  unchanged and the scan output has 0 rows).
- A trip count M given as a graph input, without scan outputs: any M,
  0 and negative included (no iteration); M declared [1] too, and M of two
  elements refused by name.
- A constant trip count too long to unroll runs as a loop too.
- Lists appended in the body (SequenceEmpty, SequenceInsert, then
  ConcatFromSequence after the loop: a scripted `outs.append(y)`) run as
  scan outputs, stacked and concatenated; torch.jit.script of an LSTMCell
  loop, exported by torch, against torch at seq 1, 7 and 50.
- Refused by name: scan outputs over an M Kiln cannot bound, and a
  loop-carried value that changes shape (static, or a run-time size that
  doubles); a state of run-time size that keeps it has its init's size
  after the loop (a Range over it, bounded by the input's range).
- Sizes that must agree inside a body (a Loop's Add and Concat, a Scan's
  Add of a carried [n] and an outer [m]): numpy's numbers where n == m, a
  refusal naming the node where not, with the outer input ending at an
  unreadable page so that a read past it would crash the test.
- A scalar accumulated over a reduction of run-time size (it failed in
  bufferization with an internal error).
- A trip count min(x.size(0), 3) that bounds the stacked states, each
  state doubled by an inner Loop over its own rows (Shape in the body).
- A carried state whose symbolic channels a weight in the body fixes is
  checked before the loop and carried static; another size is refused at
  run time by name.
- A Range and a Trilu sized by the rows a Loop stacked, bounded by the
  scan's bound.
- A leading size read as a value (that trip count, or `n == 1` choosing
  the output) is not run as batch variants, which would each read their
  own size.

usage: check_runtime_loop.py KILN_COMPILE KILN_RUN WORKDIR PYTHONPATH
"""
import ctypes
import mmap
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

compile_, run_, work, pythonpath = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
sys.path.insert(0, pythonpath)
import kiln  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import (assert_close, compile_and_load, run_model,  # noqa: E402
                        save_model, save_onnx)

rng = np.random.default_rng(0)
RTOL = 1e-5  # f32 sums of at most 256 products against float64


def close(got, want, what):
    assert_close(got, want, what, RTOL)


def refused_compile(path, words, **kw):
    try:
        kiln.compile(path, output=path[:-5] + ".so", **kw)
    except kiln.Error as e:
        assert words in str(e), e
        return
    raise AssertionError(f"{path} compiled, expected a refusal with {words!r}")


def vi(name, elt, shape):
    return h.make_tensor_value_info(name, elt, shape)


# --- An RNN over a symbolic sequence -------------------------------------
BATCH, IN, HID = 2, 16, 256
W = (rng.standard_normal((IN, HID)) * 0.3).astype(np.float32)
U = (rng.standard_normal((HID, HID)) / np.sqrt(HID)).astype(np.float32)
B = (rng.standard_normal(HID) * 0.1).astype(np.float32)


def rnn_step():
    """h2 = tanh(x[i] W + h U + B), y = relu(h2)."""
    return [h.make_node("Gather", ["x", "i"], ["xt"], axis=0),
            h.make_node("MatMul", ["xt", "W"], ["a"]),
            h.make_node("MatMul", ["h", "U"], ["c"]),
            h.make_node("Add", ["a", "c"], ["s"]),
            h.make_node("Add", ["s", "B"], ["s2"]),
            h.make_node("Tanh", ["s2"], ["h2"]),
            h.make_node("Relu", ["h2"], ["y"])]


def rnn_body():
    return h.make_graph(
        rnn_step() + [h.make_node("Identity", ["cond"], ["cond2"])],
        "body",
        [vi("i", T.INT64, []), vi("cond", T.BOOL, []),
         vi("h", T.FLOAT, [BATCH, HID])],
        [vi("cond2", T.BOOL, []), vi("h2", T.FLOAT, [BATCH, HID]),
         vi("y", T.FLOAT, [BATCH, HID])])


def rnn_ref(x, h0, steps=None):
    steps = x.shape[0] if steps is None else steps
    hs = h0.astype(np.float64)
    ys = []
    for t in range(steps):
        hs = np.tanh(x[t] @ W + hs @ U + B)
        ys.append(np.maximum(hs, 0))
    return hs, np.array(ys).reshape(len(ys), BATCH, HID)


def rnn_model(name, with_cond):
    nodes = [h.make_node("Shape", ["x"], ["sx"]),
             h.make_node("Gather", ["sx", "zero"], ["m1"], axis=0),
             h.make_node("Squeeze", ["m1"], ["M"]),
             h.make_node("Loop", ["M", "go" if with_cond else "", "h0"],
                         ["hf", "ys"], body=rnn_body()),
             # The last step, x[-1]: a negative index on the symbolic axis.
             h.make_node("Gather", ["x", "minus1"], ["last"], axis=0)]
    inputs = [vi("x", T.FLOAT, ["seq", BATCH, IN]),
              vi("h0", T.FLOAT, [BATCH, HID])]
    if with_cond:
        inputs.append(vi("go", T.BOOL, []))
    return nodes, inputs, [vi("hf", T.FLOAT, [BATCH, HID]),
                           vi("ys", T.FLOAT, ["seq", BATCH, HID]),
                           vi("last", T.FLOAT, [BATCH, IN])]


inits = [("W", W), ("U", U), ("B", B), ("zero", np.array([0], np.int64)),
         ("minus1", np.array(-1, np.int64))]
nodes, inputs, outputs = rnn_model("rnn", False)
path = save_onnx(work, "rnn", nodes, inputs, outputs, inits)
so = kiln.compile(path, output=path[:-5] + ".so", dims={"seq": (1, 40)})
for threads in (1, 2):
    m = kiln.load(so, threads=threads)
    for seq in (1, 5, 40):
        x = rng.standard_normal((seq, BATCH, IN)).astype(np.float32)
        h0 = rng.standard_normal((BATCH, HID)).astype(np.float32)
        hf, ys, last = m(x, h0)
        want_h, want_y = rnn_ref(x, h0)
        close(hf, want_h, f"rnn hf seq {seq} threads {threads}")
        close(ys, want_y, f"rnn ys seq {seq} threads {threads}")
        close(last, x[-1], f"rnn x[-1] seq {seq}")
    try:
        m(np.zeros((41, BATCH, IN), np.float32), np.zeros((BATCH, HID), np.float32))
        raise AssertionError("seq 41 ran; expected a refusal")
    except kiln.Error as e:
        assert "1..40" in str(e), e
# kiln-run takes the sequence length from the .pb files.
d = save_model(work, "rnn_cli", nodes, inputs, outputs, dict(inits))
cli_so = os.path.join(d, "model.so")
subprocess.run([compile_, os.path.join(d, "model.onnx"), "-o", cli_so,
                "--dim", "seq=1..40"], check=True, stderr=subprocess.DEVNULL)
x = rng.standard_normal((9, BATCH, IN)).astype(np.float32)
h0 = rng.standard_normal((BATCH, HID)).astype(np.float32)
hf, ys, _ = run_model(run_, d, cli_so, [("x", x), ("h0", h0)], threads=2)
want_h, want_y = rnn_ref(x, h0)
close(hf, want_h, "kiln-run hf")
close(ys, want_y, "kiln-run ys")

# --- A run-time condition ---------------------------------------------------
nodes, inputs, outputs = rnn_model("rnn_cond", True)
m = compile_and_load(kiln, save_onnx(work, "rnn_cond", nodes, inputs, outputs,
                                     inits), dims={"seq": (1, 12)})
x = rng.standard_normal((6, BATCH, IN)).astype(np.float32)
h0 = rng.standard_normal((BATCH, HID)).astype(np.float32)
for go in (True, False):
    hf, ys, _ = m(x, h0, np.array(go))
    want_h, want_y = rnn_ref(x, h0, 6 if go else 0)
    close(hf, want_h, f"cond {go} hf")
    close(ys, want_y, f"cond {go} ys")

# --- M as a graph input, no scan outputs --------------------------------------
acc_body = h.make_graph(
    [h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
     h.make_node("Mul", ["v", "half"], ["hv"]),
     h.make_node("Add", ["hv", "fi"], ["v2"]),
     h.make_node("Identity", ["cond"], ["cond2"])],
    "acc",
    [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("v", T.FLOAT, [3])],
    [vi("cond2", T.BOOL, []), vi("v2", T.FLOAT, [3])])


def acc_ref(v, n):
    v = v.astype(np.float64)
    for i in range(max(n, 0)):
        v = v * 0.5 + i
    return v


m = compile_and_load(kiln, save_onnx(
    work, "acc", [h.make_node("Loop", ["M", "", "v0"], ["vf"], body=acc_body)],
    [vi("M", T.INT64, []), vi("v0", T.FLOAT, [3])], [vi("vf", T.FLOAT, [3])],
    [("half", np.array(0.5, np.float32))]))
v0 = np.array([1.0, -2.0, 8.0], np.float32)
for n in (0, -3, 1, 7, 1000):
    (vf,) = m(np.array(n, np.int64), v0)
    close(vf, acc_ref(v0, n), f"acc M={n}")

# M declared [1] (as some exporters give it) is the one value; M of two
# elements is malformed and refused by name.
m = compile_and_load(kiln, save_onnx(
    work, "acc_m1",
    [h.make_node("Loop", ["M", "", "v0"], ["vf"], body=acc_body)],
    [vi("M", T.INT64, [1]), vi("v0", T.FLOAT, [3])], [vi("vf", T.FLOAT, [3])],
    [("half", np.array(0.5, np.float32))]))
(vf,) = m(np.array([5], np.int64), v0)
close(vf, acc_ref(v0, 5), "acc M=[5]")
refused_compile(save_onnx(
    work, "acc_m2",
    [h.make_node("Loop", ["M", "", "v0"], ["vf"], body=acc_body,
                 name="two_trips")],
    [vi("M", T.INT64, [2]), vi("v0", T.FLOAT, [3])], [vi("vf", T.FLOAT, [3])],
    [("half", np.array(0.5, np.float32))]),
    "node 'two_trips' (Loop, opset 13): the trip count M must be one int64 "
    "value; it is 'tensor<2xi64>'")

# --- A constant trip count too long to unroll --------------------------------
m = compile_and_load(kiln, save_onnx(
    work, "long", [h.make_node("Loop", ["M", "", "v0"], ["vf"], body=acc_body)],
    [vi("v0", T.FLOAT, [3])], [vi("vf", T.FLOAT, [3])],
    [("half", np.array(0.5, np.float32)),
     ("M", np.array(100000, np.int64))]))
(vf,) = m(v0)
close(vf, acc_ref(v0, 100000), "acc M=100000")

# --- A list appended in the body (a scripted `outs.append(y)`) ------------------
# SequenceEmpty -> SequenceInsert in the body -> ConcatFromSequence after the
# loop is a scan output: stacked (torch.stack, new_axis=1, on axis 1 here)
# and concatenated (torch.cat, new_axis=0).
seq_body = h.make_graph(
    rnn_step() +
    [h.make_node("SequenceInsert", ["stack_in", "y"], ["stack_out"]),
     h.make_node("SequenceInsert", ["cat_in", "h2"], ["cat_out"])],
    "seq_body",
    [vi("i", T.INT64, []), vi("cond", T.BOOL, []),
     vi("h", T.FLOAT, [BATCH, HID]),
     h.make_tensor_sequence_value_info("stack_in", T.FLOAT, [BATCH, HID]),
     h.make_tensor_sequence_value_info("cat_in", T.FLOAT, [BATCH, HID])],
    [vi("cond", T.BOOL, []), vi("h2", T.FLOAT, [BATCH, HID]),
     h.make_tensor_sequence_value_info("stack_out", T.FLOAT, [BATCH, HID]),
     h.make_tensor_sequence_value_info("cat_out", T.FLOAT, [BATCH, HID])])
m = compile_and_load(kiln, save_onnx(
    work, "appends",
    [h.make_node("Shape", ["x"], ["sx"]),
     h.make_node("Gather", ["sx", "zero"], ["m1"], axis=0),
     h.make_node("Squeeze", ["m1"], ["M"]),
     h.make_node("SequenceEmpty", [], ["empty1"], dtype=T.FLOAT),
     h.make_node("SequenceEmpty", [], ["empty2"], dtype=T.FLOAT),
     h.make_node("Loop", ["M", "", "h0", "empty1", "empty2"],
                 ["hf", "stacked", "catted"], body=seq_body),
     h.make_node("ConcatFromSequence", ["stacked"], ["ys"], axis=1,
                 new_axis=1),
     h.make_node("ConcatFromSequence", ["catted"], ["hs"], axis=0)],
    [vi("x", T.FLOAT, ["seq", BATCH, IN]), vi("h0", T.FLOAT, [BATCH, HID])],
    [vi("hf", T.FLOAT, [BATCH, HID]), vi("ys", T.FLOAT, [BATCH, "seq", HID]),
     vi("hs", T.FLOAT, None)],
    inits, opset=13), dims={"seq": (1, 20)})
for seq in (1, 6, 20):
    x = rng.standard_normal((seq, BATCH, IN)).astype(np.float32)
    h0 = rng.standard_normal((BATCH, HID)).astype(np.float32)
    hf, ys, hs = m(x, h0)
    want_h, want_y = rnn_ref(x, h0)
    close(hf, want_h, f"appends hf seq {seq}")
    close(ys, want_y.transpose(1, 0, 2), f"appends stacked seq {seq}")
    hs_want = [h0.astype(np.float64)]
    for t in range(seq):
        hs_want.append(np.tanh(x[t] @ W + hs_want[-1] @ U + B))
    close(hs, np.concatenate(hs_want[1:], axis=0), f"appends cat seq {seq}")

# --- torch.jit.script of an LSTMCell loop, as torch exports it ----------------
# The body holds an LSTM node on the cell's sliced weights; the list of
# per-step outputs is a loop-carried sequence, stacked after the loop.
import torch  # noqa: E402
from scripted_lstm import ScriptedLSTM  # noqa: E402

torch.manual_seed(0)
scripted = torch.jit.script(ScriptedLSTM())
lstm_path = os.path.join(work, "scripted_lstm.onnx")
with torch.no_grad():
    torch.onnx.export(scripted, (torch.randn(7, 2, 16),), lstm_path,
                      input_names=["x"], output_names=["y", "h"],
                      dynamic_axes={"x": {0: "seq"}, "y": {0: "seq"}},
                      opset_version=17)
m = compile_and_load(kiln, lstm_path, dims={"seq": (1, 50)})
for seq in (1, 7, 50):
    x = torch.randn(seq, 2, 16)
    with torch.no_grad():
        want_y, want_h = scripted(x)
    y, hh = m(x.numpy())
    close(y, want_y.numpy().astype(np.float64), f"scripted LSTM y seq {seq}")
    close(hh, want_h.numpy().astype(np.float64), f"scripted LSTM h seq {seq}")

# --- Refusals ---------------------------------------------------------------
scan_body = h.make_graph(
    [h.make_node("Add", ["v", "v"], ["v2"]),
     h.make_node("Identity", ["cond"], ["cond2"]),
     h.make_node("Identity", ["v2"], ["y"])],
    "scan",
    [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("v", T.FLOAT, [3])],
    [vi("cond2", T.BOOL, []), vi("v2", T.FLOAT, [3]), vi("y", T.FLOAT, [3])])
refused_compile(save_onnx(
    work, "unbounded",
    [h.make_node("Loop", ["M", "", "v0"], ["vf", "ys"], body=scan_body,
                 name="the_loop")],
    [vi("M", T.INT64, []), vi("v0", T.FLOAT, [3])],
    [vi("vf", T.FLOAT, [3]), vi("ys", T.FLOAT, None)]),
    "node 'the_loop' (Loop, opset 13): stacks 1 scan output(s) over a trip "
    "count M that Kiln cannot bound")
grow_body = h.make_graph(
    [h.make_node("Concat", ["v", "v"], ["v2"], axis=0),
     h.make_node("Identity", ["cond"], ["cond2"])],
    "grow",
    [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("v", T.FLOAT, None)],
    [vi("cond2", T.BOOL, []), vi("v2", T.FLOAT, None)])
refused_compile(save_onnx(
    work, "grow",
    [h.make_node("Loop", ["M", "", "v0"], ["vf"], body=grow_body,
                 name="grow_loop")],
    [vi("M", T.INT64, []), vi("v0", T.FLOAT, [3])], [vi("vf", T.FLOAT, None)]),
    "node 'grow_loop' (Loop, opset 13): loop-carried value 0 is "
    "'tensor<3xf32>' before the loop and 'tensor<6xf32>' after an iteration")
# With a symbolic length the types agree (a float vector of run-time
# size) but the sizes double each iteration: refused as well (it ran and
# wrote past the state's buffer before), naming both sizes.
refused_compile(save_onnx(
    work, "grow_symbolic",
    [h.make_node("Loop", ["M", "", "v0"], ["vf"], body=grow_body,
                 name="grow_loop")],
    [vi("M", T.INT64, []), vi("v0", T.FLOAT, ["n"])],
    [vi("vf", T.FLOAT, None)]),
    "node 'grow_loop' (Loop, opset 13): loop-carried value 0 has n elements "
    "along axis 0 before the loop and 2 * n after an iteration",
    dims={"n": (1, 8)})
# A state of run-time size that keeps it: after the loop its size is the
# init's, so a Range over it is bounded by n's range.
keep_body = h.make_graph(
    list(acc_body.node), "keep",
    [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("v", T.FLOAT, None)],
    [vi("cond2", T.BOOL, []), vi("v2", T.FLOAT, None)])
m = compile_and_load(kiln, save_onnx(
    work, "keep_symbolic",
    [h.make_node("Loop", ["M", "", "v0"], ["vf"], body=keep_body),
     h.make_node("Shape", ["vf"], ["sv"]),
     h.make_node("Gather", ["sv", "zero"], ["len"], axis=0),
     h.make_node("Range", ["zero", "len", "one"], ["r"]),
     h.make_node("Cast", ["r"], ["rf"], to=T.FLOAT),
     h.make_node("Add", ["vf", "rf"], ["y"])],
    [vi("M", T.INT64, []), vi("v0", T.FLOAT, ["n"])], [vi("y", T.FLOAT, ["n"])],
    [("half", np.array(0.5, np.float32)), ("zero", np.array(0, np.int64)),
     ("one", np.array(1, np.int64))]), dims={"n": (1, 8)})
for n, trips in ((1, 0), (8, 5), (5, 2)):
    v = rng.standard_normal(n).astype(np.float32)
    (y,) = m(np.array(trips, np.int64), v)
    close(y, acc_ref(v, trips) + np.arange(n), f"keep_symbolic n={n}")

# --- Sizes that must agree inside a body ---------------------------------
# A body whose Add and Concat combine a loop-carried [n] with an outer [m]:
# a guard checks n == m, but a failed guard does not end the body, so the
# ops read every operand at the anchor's size (the other read through a
# view with zeros past its end). At n > m they read past m's buffer before
# (SIGSEGV). The outer input lies at the end of a page followed by one
# that may not be read, so any read past it faults at once.
def fenced(values):
    """`values` (float32) in a buffer that ends where an unreadable page
    begins; returns the array and the mapping that keeps it alive."""
    page = mmap.PAGESIZE
    size = -(-4 * len(values) // page) * page  # whole pages for the values
    buf = mmap.mmap(-1, size + page, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mprotect(ctypes.c_void_p(base + size), page, 0) != 0:
        raise OSError(ctypes.get_errno(), "mprotect")
    arr = np.frombuffer(buf, np.float32, count=len(values),
                        offset=size - 4 * len(values))
    arr[:] = values
    return arr, buf


agree_body = h.make_graph(
    [h.make_node("Add", ["v", "y"], ["a"], name="body_add"),
     h.make_node("Unsqueeze", ["v", "zero"], ["vu"]),
     h.make_node("Unsqueeze", ["y", "zero"], ["yu"]),
     h.make_node("Concat", ["vu", "yu"], ["c"], axis=0, name="body_concat"),
     h.make_node("ReduceSum", ["c", "zero"], ["r"], keepdims=0),
     h.make_node("Add", ["a", "r"], ["v2"]),
     h.make_node("Identity", ["cond"], ["cond2"])],
    "agree",
    [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("v", T.FLOAT, ["n"])],
    [vi("cond2", T.BOOL, []), vi("v2", T.FLOAT, ["n"])])
scan_agree = h.make_graph(
    [h.make_node("Add", ["s", "y"], ["t"], name="scan_add"),
     h.make_node("Add", ["acc", "t"], ["acc2"])],
    "scan_agree",
    [vi("acc", T.FLOAT, ["n"]), vi("s", T.FLOAT, ["n"])],
    [vi("acc2", T.FLOAT, ["n"])])
m = compile_and_load(kiln, save_onnx(
    work, "body_agreement",
    [h.make_node("Loop", ["M", "", "v0"], ["vf"], body=agree_body,
                 name="agree_loop"),
     h.make_node("Scan", ["v0", "xs"], ["sf"], body=scan_agree,
                 num_scan_inputs=1, name="agree_scan")],
    [vi("M", T.INT64, []), vi("v0", T.FLOAT, ["n"]),
     vi("y", T.FLOAT, ["m"]), vi("xs", T.FLOAT, ["steps", "n"])],
    [vi("vf", T.FLOAT, ["n"]), vi("sf", T.FLOAT, ["n"])],
    [("zero", np.array([0], np.int64))], opset=16),
    dims={"n": (1, 4096), "m": (1, 4096), "steps": (1, 8)})
for n, trips, steps in ((1, 1, 1), (37, 3, 5), (4096, 2, 8)):
    v = rng.standard_normal(n).astype(np.float32)
    y, keep = fenced(rng.standard_normal(n))
    xs = rng.standard_normal((steps, n)).astype(np.float32)
    want = v.astype(np.float64)
    for _ in range(trips):
        want = 2 * (want + y)
    vf, sf = m(np.array(trips, np.int64), v, y, xs)
    close(vf, want, f"body agreement loop n={n}")
    close(sf, v.astype(np.float64) + xs.sum(0) + steps * y.astype(np.float64),
          f"body agreement scan n={n}")
for n, mm in ((4096, 2), (4096, 4095), (5, 1), (3, 8)):
    y, keep = fenced(np.ones(mm))
    try:
        m(np.array(2, np.int64), np.ones(n, np.float32), y,
          np.ones((3, n), np.float32))
        raise AssertionError(f"n={n}, m={mm} ran; expected a refusal")
    except kiln.Error as e:
        assert "differ at these input sizes" in str(e), e
        assert "node 'body_add' (Add" in str(e) or \
            "node 'scan_add' (Add" in str(e), e

# --- A scalar accumulated over a reduction of run-time size --------------
# acc += sum(relu(x)) * i with x [n]: the reduction's zeroed accumulator was
# placed in the loop's own buffer, which the Add still read after it, and
# bufferization failed ("Yield operand #0 is not equivalent to the
# corresponding iter bbArg", an internal error).
sum_body = h.make_graph(
    [h.make_node("Relu", ["x"], ["r"]),
     h.make_node("ReduceSum", ["r"], ["s"], keepdims=0),
     h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
     h.make_node("Mul", ["s", "fi"], ["si"]),
     h.make_node("Add", ["acc", "si"], ["acc2"]),
     h.make_node("Identity", ["cond"], ["cond2"])],
    "sum",
    [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("acc", T.FLOAT, [])],
    [vi("cond2", T.BOOL, []), vi("acc2", T.FLOAT, [])])
m = compile_and_load(kiln, save_onnx(
    work, "scalar_accumulator",
    [h.make_node("Loop", ["M", "", "a0"], ["af"], body=sum_body)],
    [vi("M", T.INT64, []), vi("a0", T.FLOAT, []), vi("x", T.FLOAT, ["n"])],
    [vi("af", T.FLOAT, [])], opset=16), dims={"n": (1, 3000)})
for n, trips in ((1, 3), (700, 0), (3000, 6)):
    x = rng.standard_normal(n).astype(np.float32)
    (af,) = m(np.array(trips, np.int64), np.array(0.5, np.float32), x)
    want = 0.5 + np.maximum(x, 0).astype(np.float64).sum() * sum(range(trips))
    close(af, want, f"scalar accumulator n={n} trips={trips}")

def min_trips(x):
    """M = min(x.size(0), 3) (and n1 = x.size(0)), as [1]-shaped zero1 and
    three initializers slice and bound it."""
    return [h.make_node("Shape", [x], ["s" + x]),
            h.make_node("Gather", ["s" + x, "zero1"], ["n1"], axis=0),
            h.make_node("Min", ["n1", "three"], ["m1"]),
            h.make_node("Squeeze", ["m1", "zero1"], ["M"])]


# --- A trip count min(size, k), and a scan of an inner loop's rows --------
# `for i in range(min(x.size(0), 3))` stacking a state [n, 4] whose rows are
# doubled by an inner Loop over Shape(state)[0] (its rows stacked, then
# reshaped back). The outer scan output's length is bounded by the Min
# (refused before: "a trip count M that Kiln cannot bound"), and its slices'
# size comes from the inner loop's trip count, a shape computed in the body
# (an internal error before).
inner_body = h.make_graph(
    [h.make_node("Gather", ["s", "j"], ["row"], axis=0),
     h.make_node("Mul", ["row", "two"], ["row2"]),
     h.make_node("Identity", ["c"], ["c2"])],
    "inner",
    [vi("j", T.INT64, []), vi("c", T.BOOL, [])],
    [vi("c2", T.BOOL, []), vi("row2", T.FLOAT, [4])])
outer_body = h.make_graph(
    [h.make_node("Shape", ["s"], ["ss"]),
     h.make_node("Gather", ["ss", "zero1"], ["rows1"], axis=0),
     h.make_node("Squeeze", ["rows1", "zero1"], ["rows"]),
     h.make_node("Loop", ["rows", ""], ["stack"], body=inner_body),
     h.make_node("Identity", ["stack"], ["s2"]),
     h.make_node("Identity", ["cond"], ["cond2"]),
     h.make_node("Identity", ["s2"], ["out"])],
    "outer",
    [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("s", T.FLOAT, ["n", 4])],
    [vi("cond2", T.BOOL, []), vi("s2", T.FLOAT, ["n", 4]),
     vi("out", T.FLOAT, ["n", 4])])
m = compile_and_load(kiln, save_onnx(
    work, "min_trips_nested",
    min_trips("x") + [
     h.make_node("Loop", ["M", "", "x"], ["xf", "outs"], body=outer_body,
                 name="min_loop")],
    [vi("x", T.FLOAT, ["n", 4])],
    [vi("xf", T.FLOAT, ["n", 4]), vi("outs", T.FLOAT, [None, "n", 4])],
    [("zero1", np.array([0], np.int64)), ("three", np.array([3], np.int64)),
     ("two", np.array(2.0, np.float32))], opset=16), dims={"n": (1, 40)})
for n in (1, 2, 7, 40):
    x = rng.standard_normal((n, 4)).astype(np.float32)
    steps = min(n, 3)
    want = np.stack([x * 2.0 ** (k + 1) for k in range(steps)])
    xf, outs = m(x)
    close(xf, x * 2.0 ** steps, f"min trips n={n} state")
    close(outs, want, f"min trips n={n} stacked")

# A running sum of a state of run-time length, stacked: the slice's size
# passes through CumSum's own loop (it was an internal error: "depends on
# what an iteration computes").
cum_body = h.make_graph(
    [h.make_node("CumSum", ["s", "zero"], ["s2"]),
     h.make_node("Identity", ["cond"], ["cond2"]),
     h.make_node("Identity", ["s2"], ["out"])],
    "cum", [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("s", T.FLOAT, ["n"])],
    [vi("cond2", T.BOOL, []), vi("s2", T.FLOAT, ["n"]), vi("out", T.FLOAT, ["n"])])
m = compile_and_load(kiln, save_onnx(
    work, "cumsum_scan",
    min_trips("v") + [
     h.make_node("Loop", ["M", "", "v"], ["vf", "vs"], body=cum_body)],
    [vi("v", T.FLOAT, ["n"])], [vi("vf", T.FLOAT, ["n"]), vi("vs", T.FLOAT, [None, "n"])],
    [("zero", np.array(0, np.int64)), ("zero1", np.array([0], np.int64)),
     ("three", np.array([3], np.int64))], opset=16), dims={"n": (1, 20)})
for n in (1, 4, 20):
    v = rng.standard_normal(n).astype(np.float32)
    rows, cur = [], v.astype(np.float64)
    for _ in range(min(n, 3)):
        cur = np.cumsum(cur)
        rows.append(cur)
    vf, vs = m(v)
    close(vf, cur, f"cumsum scan n={n} state")
    close(vs, np.stack(rows), f"cumsum scan n={n} stacked")

# --- A carried state whose channels a weight in the body fixes -----------
# An export that declares every dimension (x [n, c]) carries x through
# tanh(s @ W) with W [4, 4]: the body makes the state [n, 4], so c must be
# 4. It was refused ("a loop-carried value that changes shape"); the init
# is now checked before the loop and the loop carries [n, 4]. Another c
# fails the run by name before the loop writes anything.
WC = (rng.standard_normal((4, 4)) * 0.5).astype(np.float32)
pin_body = h.make_graph(
    [h.make_node("MatMul", ["s", "wc"], ["sw"]),
     h.make_node("Tanh", ["sw"], ["s2"]),
     h.make_node("Identity", ["cond"], ["cond2"])],
    "pin", [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("s", T.FLOAT, ["n", "c"])],
    [vi("cond2", T.BOOL, []), vi("s2", T.FLOAT, ["n", "c"])])
m = compile_and_load(kiln, save_onnx(
    work, "pinned_state",
    min_trips("x") + [
     h.make_node("Loop", ["M", "", "x"], ["xf"], body=pin_body, name="pin_loop")],
    [vi("x", T.FLOAT, ["n", "c"])], [vi("xf", T.FLOAT, ["n", "c"])],
    [("zero1", np.array([0], np.int64)), ("three", np.array([3], np.int64)),
     ("wc", WC)], opset=16), dims={"n": (1, 8), "c": (1, 8)})
for n in (1, 3, 8):
    x = rng.standard_normal((n, 4)).astype(np.float32)
    want = x.astype(np.float64)
    for _ in range(min(n, 3)):
        want = np.tanh(want @ WC)
    (xf,) = m(x)
    close(xf, want, f"pinned state n={n}")
try:
    m(rng.standard_normal((2, 5)).astype(np.float32))
except kiln.Error as e:
    assert ("node 'pin_loop' (Loop, opset 16): the body needs loop-carried "
            "value 0's dimension 1 to be 4") in str(e), e
else:
    raise AssertionError("pinned state: c = 5 ran")
# A range of c that excludes 4 is refused at compile time, by name.
refused_compile(os.path.join(work, "pinned_state.onnx"),
                "node 'pin_loop' (Loop, opset 16): the body needs loop-carried "
                "value 0's dimension 1 to be 4, and c and 4 differ at every "
                "size in range", dims={"n": (1, 8), "c": (5, 8)})

# --- Sizes from a scan output's row count ------------------------------
# A Range and a Trilu over the rows that min(n, 3) iterations stacked:
# their count was unbounded ("has no largest value") although the buffer
# holds at most 3 rows; the row count is now bounded by the scan's bound.
rows_body = h.make_graph(
    [h.make_node("Add", ["s", "onef"], ["s2"]),
     h.make_node("Identity", ["cond"], ["cond2"]),
     h.make_node("Identity", ["s2"], ["out"])],
    "rows", [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("s", T.FLOAT, [2])],
    [vi("cond2", T.BOOL, []), vi("s2", T.FLOAT, [2]), vi("out", T.FLOAT, [2])])
m = compile_and_load(kiln, save_onnx(
    work, "scan_rows_sized",
    min_trips("x") + [
     h.make_node("Loop", ["M", "", "h2"], ["hf", "outs"], body=rows_body),
     h.make_node("Shape", ["outs"], ["so"]),
     h.make_node("Gather", ["so", "zero"], ["rows"], axis=0),
     h.make_node("Range", ["zero", "rows", "onei"], ["r"]),
     h.make_node("Transpose", ["outs"], ["ot"], perm=[1, 0]),
     h.make_node("MatMul", ["outs", "ot"], ["sq"]),
     h.make_node("Trilu", ["sq", "zero"], ["tri"], upper=1)],
    [vi("x", T.FLOAT, ["n", 2]), vi("h2", T.FLOAT, [2])],
    [vi("r", T.INT64, None), vi("tri", T.FLOAT, None)],
    [("zero1", np.array([0], np.int64)), ("three", np.array([3], np.int64)),
     ("zero", np.array(0, np.int64)), ("onei", np.array(1, np.int64)),
     ("onef", np.array(1.0, np.float32))], opset=16), dims={"n": (1, 8)})
for n in (1, 2, 5):
    h2 = rng.standard_normal(2).astype(np.float32)
    r, tri = m(rng.standard_normal((n, 2)).astype(np.float32), h2)
    steps = min(n, 3)
    outs = np.stack([h2.astype(np.float64) + k + 1 for k in range(steps)])
    assert r.tolist() == list(range(steps)), (n, r)
    close(tri, np.triu(outs @ outs.T), f"scan rows n={n} trilu")

# --- The leading size read as a value is not an independent batch ---------
# x [n, 3] with n leading the only input looks like a batch, but
# min(n, 3) iterations of a LayerNorm, or `x * 2 if n == 1 else x`, read n
# as data: run as batch variants (a call of 5 rows as compiled batches of
# 1 and 4), each variant read its own size (1 iteration instead of 3: wrong
# numbers). The probe compile now reports such a read, and the model runs
# as one graph at the call's size.
G3 = rng.standard_normal(3).astype(np.float32)
B3 = rng.standard_normal(3).astype(np.float32)
ln_body = h.make_graph(
    [h.make_node("LayerNormalization", ["s", "g3", "b3"], ["s2"], axis=-1),
     h.make_node("Identity", ["cond"], ["cond2"])],
    "ln", [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("s", T.FLOAT, ["n", 3])],
    [vi("cond2", T.BOOL, []), vi("s2", T.FLOAT, ["n", 3])])
m = compile_and_load(kiln, save_onnx(
    work, "batch_as_value",
    min_trips("x") + [
     h.make_node("Loop", ["M", "", "x"], ["y"], body=ln_body),
     h.make_node("Equal", ["n1", "one1"], ["single"]),
     h.make_node("Mul", ["x", "two"], ["x2"]),
     h.make_node("Where", ["single", "x2", "x"], ["z"])],
    [vi("x", T.FLOAT, ["n", 3])], [vi("y", T.FLOAT, ["n", 3]), vi("z", T.FLOAT, ["n", 3])],
    [("zero1", np.array([0], np.int64)), ("three", np.array([3], np.int64)),
     ("one1", np.array([1], np.int64)), ("two", np.array(2.0, np.float32)),
     ("g3", G3), ("b3", B3)], opset=18), dims={"n": (1, 16)})
assert not m.info["symbolic_dimensions"][0]["independent_batch"], m.info


def layer_norm(v):
    mu = v.mean(-1, keepdims=True)
    return (v - mu) / np.sqrt(((v - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * G3 + B3


for n in (1, 2, 5, 16):
    x = rng.standard_normal((n, 3)).astype(np.float32)
    want = x.astype(np.float64)
    for _ in range(min(n, 3)):
        want = layer_norm(want)
    y, z = m(x)
    close(y, want, f"batch as value n={n} loop")
    close(z, x * 2 if n == 1 else x, f"batch as value n={n} where")

# --- A pinned axis that may be empty, in a body ----------------------------
# A Loop of min(n, 3) iterations carries x[:, 2:] (x [n, c, 5], c in 1..8:
# the axis may be empty) and runs an InstanceNormalization whose scale pins its channels to 4. A
# body cannot stop at a failed guard, so the axis is read through clamped
# indices; an empty axis has no row to clamp to and was refused ("not
# static"). It now reads a row of zeros after the axis: c = 6 matches numpy,
# and c = 4 or 2 (no channels left) fails the call by name without reading
# past the slice.
GI = rng.standard_normal(4).astype(np.float32)
BI = rng.standard_normal(4).astype(np.float32)
in_body = h.make_graph(
    [h.make_node("InstanceNormalization", ["s", "gi", "bi"], ["y"], name="inorm"),
     h.make_node("Identity", ["cond"], ["cond2"]),
     h.make_node("Identity", ["s"], ["s2"])],
    "inb", [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("s", T.FLOAT, ["n", "k", 5])],
    [vi("cond2", T.BOOL, []), vi("s2", T.FLOAT, ["n", "k", 5]),
     vi("y", T.FLOAT, ["n", "k", 5])])
path = save_onnx(
    work, "pinned_maybe_empty",
    min_trips("x") + [
     h.make_node("Slice", ["x", "two1", "big1", "one1"], ["xs"]),
     h.make_node("Loop", ["M", "", "xs"], ["sf", "ys"], body=in_body, name="in_loop")],
    [vi("x", T.FLOAT, ["n", "c", 5])], [vi("ys", T.FLOAT, None)],
    [("zero1", np.array([0], np.int64)), ("three", np.array([3], np.int64)),
     ("two1", np.array([2], np.int64)), ("big1", np.array([100], np.int64)),
     ("one1", np.array([1], np.int64)), ("gi", GI), ("bi", BI)], opset=16)
m = compile_and_load(kiln, path, dims={"n": (1, 4), "c": (1, 8)})
x = rng.standard_normal((2, 6, 5)).astype(np.float32)
xs = x[:, 2:].astype(np.float64)
mu, var = xs.mean(-1, keepdims=True), xs.var(-1, keepdims=True)
want = (xs - mu) / np.sqrt(var + 1e-5) * GI.reshape(1, 4, 1) + BI.reshape(1, 4, 1)
(ys,) = m(x)  # min(2, 3) = 2 iterations
close(ys, np.stack([want, want]), "pinned maybe-empty c=6")
for c in (4, 2):
    try:
        m(x[:, :c].copy())
    except kiln.Error as e:
        assert "node 'inorm' (InstanceNormalization, opset 16)" in str(e), e
    else:
        raise AssertionError(f"pinned maybe-empty: c = {c} ran")

print("runtime loop: all checks passed")
