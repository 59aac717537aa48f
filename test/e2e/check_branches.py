#!/usr/bin/python3
"""An If of a run-time condition runs only its taken branch, and gives numpy's numbers.

Usage: check_branches.py KILN_COMPILE KILN_RUN WORKDIR

Scripted voice-activity models choose their network by the sample rate, a
graph input: `if sr == 16000: ... else: ...`, each branch a convolution front
end and a recurrent-style state update. Kiln used to run both branches and
keep one result with Where; branches that hold convolutions, matmuls,
recurrent ops or loops now run only when taken (each a kiln.loop of one
iteration or none). This model has:
- an outer If on `sr == 16000` whose branches convolve differently (stride
  2, kernel 5 against stride 1, kernel 3) and update a state;
- an If nested in the then branch on the sign of the input's sum (a run-time
  condition inside a loop body), choosing between two matmuls;
- an else branch that yields a graph input (the state) unchanged.
It is compiled once and run with each branch taken, against numpy
(tolerance: atol 1e-5, rtol 1e-5; float32 sums in a different order).

The same model with a symbolic batch and length (x [B, T], the state
[B, STATE]; `--dim B=1..4 --dim T=64..512`) has branch results of run-time
size: each branch then stacks its results as the scan outputs of its loop.
It runs at three (B, T) pairs across the ranges, each branch taken.

Branches whose results differ in a symbolic size: an If on a bool input
between a stride-2 and a stride-1 Conv1d over x [B, C, T] (features of
length (T - 1) // 2 + 1 against T; expensive, each branch a loop), and
between a stride-2 MaxPool and a Relu (cheap, both run); and the Conv1d
pair selected without an If, by Compress of a stacked row (whose kept rows
are folded into the length). Compiled once with
`--dim B=1..4 --dim T=8..256`, each runs at three (B, T) pairs with each
branch taken, and returns the taken branch's features at their own length.

Branches whose results differ in two sizes: a stride-2 against a stride-1
3x3 Conv, and a 2x2 MaxPool against a Relu, over x [B, 4, H, W] (compiled
with `--dim B=1..3 --dim H=4..64 --dim W=4..64`, run at three sizes), and
an If yielding a [2, 3] or a [3, 4] input on a static model, and a pool
of one input's P x 5 against a Relu of another's H x W (one axis differs
in its types, the other only once the branches convert); each branch
taken, the output at the taken branch's shape.

A condition on the inputs' shapes (`x + 2 * y if x.shape == y.shape else
x`, cheap branches that both run): at sizes where the untaken Add's
operands disagree the run succeeds with the other branch's result (the
Add's size guard holds only where its branch is taken, and its operand is
read as zeros of the right size where not).

A join of results that differ in both axes (Relu of x [B, T] against a
[3, 4] constant) edge-padded by a row after: the Pad sizes its output by
the joined rows' largest size, the larger of the branches' (it was
refused).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper as h, numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from small_onnx import check_case, compile_cli, write_case  # noqa: E402

SAMPLES = 256
CHANNELS = 8
STATE = 16


def weights(channels=CHANNELS, state=STATE, seed=7):
    """The model's weights by initializer name."""
    rng = np.random.default_rng(seed)

    def draw(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)

    return {"w16": draw(channels, 1, 5), "w8": draw(channels, 1, 3),
            "wa": draw(channels, channels), "wb": draw(channels, channels),
            "wh": draw(channels, state), "wo": draw(state, 1),
            "wo8": draw(channels, 1)}


W = weights()


def init(name, value):
    return nh.from_array(np.asarray(value), name)


def out(name, shape):
    return h.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def front_end(p, w, stride, pad):
    """x [B, T] -> mean over time of Relu(Conv1d(x)): [B, CHANNELS]."""
    return [
        h.make_node("Unsqueeze", ["x", "channel_axis"], [p + "xr"]),
        h.make_node("Conv", [p + "xr", w], [p + "f"], strides=[stride], pads=[pad, pad]),
        h.make_node("Relu", [p + "f"], [p + "r"]),
        h.make_node("ReduceMean", [p + "r"], [p + "m"], axes=[2], keepdims=0),
    ]


def model(batch=1, samples=SAMPLES, w=W, pass_through=True):
    """batch and samples: sizes, or dim_param names. With pass_through the
    else branch yields the graph input `h` itself (ONNX Runtime refuses
    that; without it, through an Identity)."""
    channels, state = w["wh"].shape
    inner_then = h.make_graph(
        [h.make_node("MatMul", ["t_m", "wa"], ["t_pos"])], "positive", [],
        [out("t_pos", [batch, channels])])
    inner_else = h.make_graph(
        [h.make_node("MatMul", ["t_m", "wb"], ["t_neg"])], "negative", [],
        [out("t_neg", [batch, channels])])
    then_branch = h.make_graph(
        front_end("t_", "w16", 2, 2) + [
            h.make_node("ReduceSum", ["x"], ["t_sum"], keepdims=0),
            h.make_node("Greater", ["t_sum", "zero"], ["t_positive"]),
            h.make_node("If", ["t_positive"], ["t_mixed"],
                        then_branch=inner_then, else_branch=inner_else),
            h.make_node("MatMul", ["t_mixed", "wh"], ["t_hm"]),
            h.make_node("Add", ["t_hm", "h"], ["t_hs"]),
            h.make_node("Tanh", ["t_hs"], ["t_h"]),
            h.make_node("MatMul", ["t_h", "wo"], ["t_logit"]),
            h.make_node("Sigmoid", ["t_logit"], ["t_y"]),
        ], "rate16k", [], [out("t_y", [batch, 1]), out("t_h", [batch, state])])
    else_branch = h.make_graph(
        front_end("e_", "w8", 1, 1) + [
            h.make_node("MatMul", ["e_m", "wo8"], ["e_logit"]),
            h.make_node("Sigmoid", ["e_logit"], ["e_y"]),
        ] + ([] if pass_through else [h.make_node("Identity", ["h"], ["e_h"])]),
        "rate8k", [],
        [out("e_y", [batch, 1]), out("h" if pass_through else "e_h", [batch, state])])
    graph = h.make_graph(
        [h.make_node("Equal", ["sr", "sr16k"], ["is16k"]),
         h.make_node("If", ["is16k"], ["y", "h_next"],
                     then_branch=then_branch, else_branch=else_branch)],
        "vad",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, [batch, samples]),
         h.make_tensor_value_info("h", TensorProto.FLOAT, [batch, state]),
         h.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [out("y", [batch, 1]), out("h_next", [batch, state])],
        initializer=[init(k, v) for k, v in w.items()] + [
                     init("channel_axis", np.array([1], np.int64)),
                     init("sr16k", np.array(16000, np.int64)),
                     init("zero", np.array(0, np.float32))])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def conv_mean(x, w, stride, pad):
    k = w.shape[2]
    rows = []
    for signal in x:
        xp = np.pad(signal, (pad, pad))
        n = (xp.size - k) // stride + 1
        windows = np.stack([xp[i * stride:i * stride + k] for i in range(n)])  # [n, k]
        rows.append(np.maximum(windows @ w[:, 0, :].T, 0).mean(axis=0))  # [CHANNELS]
    return np.stack(rows)


def reference(x, state, sr, w=W):
    if sr == 16000:
        m = conv_mean(x, w["w16"], 2, 2)
        m = m @ (w["wa"] if x.sum() > 0 else w["wb"])
        hn = np.tanh(m @ w["wh"] + state)
        return 1 / (1 + np.exp(-(hn @ w["wo"]))), hn
    m = conv_mean(x, w["w8"], 1, 1)
    return 1 / (1 + np.exp(-(m @ w["wo8"]))), state


def check(run, so, work, rng, label, batch, samples):
    """Each branch taken at one (batch, samples); returns whether all match."""
    ok = True
    state = rng.standard_normal((batch, STATE)).astype(np.float32)
    cases = [("16k_positive", 16000, 1.0), ("16k_negative", 16000, -1.0),
             ("8k", 8000, 1.0)]
    for name, sr, sign in cases:
        x = rng.standard_normal((batch, samples)).astype(np.float32)
        x = (x - x.mean() + sign * 0.05).astype(np.float32)  # the sum's sign
        y, hn = reference(x.astype(np.float64), state, sr)
        d = write_case(work, f"{label}_{name}",
                       [("x", x), ("h", state), ("sr", np.array(sr, np.int64))],
                       [("y", y.astype(np.float32)), ("h_next", hn.astype(np.float32))])
        passed, report = check_case(run, so, d, 1e-5, 1e-5)
        print(f"{'ok' if passed else 'FAIL'} {label} {name}: {report[-300:]}")
        ok &= passed
    return ok


def lengths_weights():
    """The two branches' Conv1d weights, [CHANNELS, CHANNELS, 3] each."""
    rng = np.random.default_rng(11)
    return [(rng.standard_normal((CHANNELS, CHANNELS, 3)) * 0.3).astype(np.float32)
            for _ in range(2)]


def conv1d(x, w, stride):
    """ONNX Conv of x [B, C, T] with w [F, C, 3], pads 1 at both ends."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    n = (xp.shape[2] - 3) // stride + 1
    return np.stack([np.einsum("bck,fck->bf", xp[:, :, i * stride:i * stride + 3], w)
                     for i in range(n)], axis=-1)


def compress_select(c):
    """The If written without one: both Conv1d results stacked on a new
    axis of one row, each kept or dropped by Compress on `c` or its negation,
    moved inward and merged into the length (data-sized rows folded into
    another axis), then concatenated along the length."""
    nodes = [h.make_node("Conv", ["x", "wt"], ["yt"], strides=[2], pads=[1, 1]),
             h.make_node("Conv", ["x", "we"], ["ye"], pads=[1, 1]),
             h.make_node("Reshape", ["c", "one"], ["keep_t"]),
             h.make_node("Not", ["keep_t"], ["keep_e"])]
    for p in ("t", "e"):
        nodes += [h.make_node("Unsqueeze", ["y" + p, "zero"], [p + "_rows"]),
                  h.make_node("Compress", [p + "_rows", "keep_" + p], [p + "_kept"], axis=0),
                  h.make_node("Transpose", [p + "_kept"], [p + "_inner"], perm=[1, 2, 0, 3]),
                  h.make_node("Shape", [p + "_inner"], [p + "_lead"], start=0, end=2),
                  h.make_node("Concat", [p + "_lead", "minus_one"], [p + "_shape"], axis=0),
                  h.make_node("Reshape", [p + "_inner", p + "_shape"], [p])]
    nodes.append(h.make_node("Concat", ["t", "e"], ["y"], axis=2))
    return nodes, [init("one", np.array([1], np.int64)),
                   init("zero", np.array([0], np.int64)),
                   init("minus_one", np.array([-1], np.int64))]


def lengths_model(form):
    """An If on `c` between results of length (T - 1) // 2 + 1 and T: Conv1d
    of stride 2 or 1 (each branch then runs as a loop), MaxPool or Relu
    (both run), or the Conv1d pair selected by Compress without an If."""
    c = CHANNELS
    w = lengths_weights()
    inits = [init("wt", w[0]), init("we", w[1])]
    if form == "compress":
        nodes, extra = compress_select(c)
        inits += extra
    else:
        if form == "conv":
            then_nodes = [h.make_node("Conv", ["x", "wt"], ["t"], strides=[2], pads=[1, 1])]
            else_nodes = [h.make_node("Conv", ["x", "we"], ["e"], pads=[1, 1])]
        else:
            then_nodes = [h.make_node("MaxPool", ["x"], ["t"], kernel_shape=[2],
                                      strides=[2], ceil_mode=1)]
            else_nodes = [h.make_node("Relu", ["x"], ["e"])]
        then_branch = h.make_graph(then_nodes, "halve", [], [out("t", ["B", c, None])])
        else_branch = h.make_graph(else_nodes, "keep", [], [out("e", ["B", c, None])])
        nodes = [h.make_node("If", ["c"], ["y"], then_branch=then_branch,
                             else_branch=else_branch)]
    graph = h.make_graph(
        nodes, "lengths",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, ["B", c, "T"]),
         h.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [out("y", ["B", c, None])], initializer=inits)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def lengths_reference(x, taken, form):
    if form != "pool":
        return conv1d(x, lengths_weights()[0 if taken else 1], 2 if taken else 1)
    if not taken:
        return np.maximum(x, 0)
    t = x.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (0, t % 2)), constant_values=-np.inf)
    return np.maximum(xp[:, :, 0::2], xp[:, :, 1::2])


def check_lengths(compile_, run, work, rng):
    """Each form at three (B, T), each branch; returns whether all match."""
    ok = True
    for form in ("conv", "pool", "compress"):
        label = "lengths_" + form
        d = os.path.join(work, label)
        so = compile_cli(compile_, lengths_model(form), d,
                         ["--dim", "B=1..4", "--dim", "T=8..256"])
        for batch, samples in ((1, 8), (3, 51), (4, 256)):
            x = rng.standard_normal((batch, CHANNELS, samples)).astype(np.float32)
            for taken in (True, False):
                y = lengths_reference(x.astype(np.float64), taken, form)
                name = f"B{batch}_T{samples}_{'then' if taken else 'else'}"
                case = write_case(d, name, [("x", x), ("c", np.array(taken))],
                                  [("y", y.astype(np.float32))])
                passed, report = check_case(run, so, case, 1e-5, 1e-5)
                print(f"{'ok' if passed else 'FAIL'} {label} {name} {y.shape}: "
                      f"{report[-200:]}")
                ok &= passed
    return ok


def areas_model(expensive):
    """An If on `c` between results that differ in two symbolic sizes: a
    stride-2 3x3 Conv against a stride-1 one (each branch a loop), or a
    2x2 MaxPool (ceil) against a Relu (both run), over x [B, 4, H, W]."""
    c = 4
    rng = np.random.default_rng(13)
    w = [(rng.standard_normal((c, c, 3, 3)) * 0.3).astype(np.float32) for _ in range(2)]
    if expensive:
        then_nodes = [h.make_node("Conv", ["x", "wt"], ["t"], strides=[2, 2],
                                  pads=[1, 1, 1, 1])]
        else_nodes = [h.make_node("Conv", ["x", "we"], ["e"], pads=[1, 1, 1, 1])]
    else:
        then_nodes = [h.make_node("MaxPool", ["x"], ["t"], kernel_shape=[2, 2],
                                  strides=[2, 2], ceil_mode=1)]
        else_nodes = [h.make_node("Relu", ["x"], ["e"])]
    then_branch = h.make_graph(then_nodes, "halve", [], [out("t", ["B", c, None, None])])
    else_branch = h.make_graph(else_nodes, "keep", [], [out("e", ["B", c, None, None])])
    graph = h.make_graph(
        [h.make_node("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch)],
        "areas",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, ["B", c, "H", "W"]),
         h.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [out("y", ["B", c, None, None])],
        initializer=[init("wt", w[0]), init("we", w[1])])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m, w


def conv2d(x, w, stride):
    """ONNX Conv of x [B, C, H, W] with w [F, C, 3, 3], pads 1 all round."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    rows = (xp.shape[2] - 3) // stride + 1
    cols = (xp.shape[3] - 3) // stride + 1
    y = np.zeros((x.shape[0], w.shape[0], rows, cols))
    for i in range(rows):
        for j in range(cols):
            patch = xp[:, :, i * stride:i * stride + 3, j * stride:j * stride + 3]
            y[:, :, i, j] = np.einsum("bchw,fchw->bf", patch, w)
    return y


def areas_reference(x, taken, expensive, w):
    if expensive:
        return conv2d(x, w[0 if taken else 1], 2 if taken else 1)
    if not taken:
        return np.maximum(x, 0)
    rows, cols = x.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (0, rows % 2), (0, cols % 2)),
                constant_values=-np.inf)
    return np.maximum(np.maximum(xp[:, :, 0::2, 0::2], xp[:, :, 1::2, 0::2]),
                      np.maximum(xp[:, :, 0::2, 1::2], xp[:, :, 1::2, 1::2]))


def static_shapes_model():
    """An If on `c` yielding the input a [2, 3] or b [3, 4] (static shapes
    that differ in both axes): the output's shape is the data's."""
    then_branch = h.make_graph([h.make_node("Relu", ["a"], ["t"])], "first", [],
                               [out("t", [2, 3])])
    else_branch = h.make_graph([h.make_node("Neg", ["b"], ["e"])], "second", [],
                               [out("e", [3, 4])])
    graph = h.make_graph(
        [h.make_node("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch)],
        "static_shapes",
        [h.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
         h.make_tensor_value_info("b", TensorProto.FLOAT, [3, 4]),
         h.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [out("y", [None, None])])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def mixed_model():
    """An If between a 2x2 MaxPool (ceil) of y [B, 4, P, 5] and a Relu of
    x [B, 4, H, W]: sizes (P + 1) // 2 against H (both run-time) and 3
    against W. Typed before the branches convert, only the last axis looks
    different; the join must compare both."""
    c = 4
    then_branch = h.make_graph(
        [h.make_node("MaxPool", ["y"], ["t"], kernel_shape=[2, 2], strides=[2, 2],
                     ceil_mode=1)], "pool_y", [], [out("t", ["B", c, None, 3])])
    else_branch = h.make_graph([h.make_node("Relu", ["x"], ["e"])], "relu_x", [],
                               [out("e", ["B", c, "H", "W"])])
    graph = h.make_graph(
        [h.make_node("If", ["c"], ["z"], then_branch=then_branch, else_branch=else_branch)],
        "mixed",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, ["B", c, "H", "W"]),
         h.make_tensor_value_info("y", TensorProto.FLOAT, ["B", c, "P", 5]),
         h.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [out("z", ["B", c, None, None])])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def check_areas(compile_, run, work, rng):
    """Results differing in two axes: the symbolic forms at three (B, H, W),
    the static one once, each branch; returns whether all match."""
    ok = True
    cases = []
    for expensive in (True, False):
        label = "areas_" + ("conv" if expensive else "pool")
        d = os.path.join(work, label)
        m, w = areas_model(expensive)
        so = compile_cli(compile_, m, d, ["--dim", "B=1..3", "--dim", "H=4..64",
                                          "--dim", "W=4..64"])
        for batch, rows, cols in ((1, 5, 7), (3, 33, 64), (2, 64, 4)):
            x = rng.standard_normal((batch, 4, rows, cols)).astype(np.float32)
            for taken in (True, False):
                y = areas_reference(x.astype(np.float64), taken, expensive, w)
                cases.append((label, so, d, f"B{batch}_{rows}x{cols}", taken,
                              [("x", x), ("c", np.array(taken))], y))
    d = os.path.join(work, "mixed")
    so = compile_cli(compile_, mixed_model(), d, ["--dim", "B=1..3", "--dim", "H=2..40",
                                                  "--dim", "W=2..40", "--dim", "P=2..40"])
    for batch, rows, cols, p in ((1, 2, 2, 2), (3, 40, 17, 31)):
        x = rng.standard_normal((batch, 4, rows, cols)).astype(np.float32)
        y = rng.standard_normal((batch, 4, p, 5)).astype(np.float32)
        for taken in (True, False):
            z = (areas_reference(y.astype(np.float64), True, False, None) if taken
                 else np.maximum(x.astype(np.float64), 0))
            cases.append(("mixed", so, d, f"B{batch}_{rows}x{cols}_P{p}", taken,
                          [("x", x), ("y", y), ("c", np.array(taken))], z))
    d = os.path.join(work, "static_shapes")
    so = compile_cli(compile_, static_shapes_model(), d)
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    for taken in (True, False):
        y = np.maximum(a, 0) if taken else -b
        cases.append(("static_shapes", so, d, "", taken,
                      [("a", a), ("b", b), ("c", np.array(taken))], y))
    for label, so, d, size, taken, inputs, y in cases:
        name = f"{size}_{'then' if taken else 'else'}"
        output = "z" if label == "mixed" else "y"
        case = write_case(d, name, inputs, [(output, y.astype(np.float32))])
        passed, report = check_case(run, so, case, 1e-5, 1e-5)
        print(f"{'ok' if passed else 'FAIL'} {label} {name} {y.shape}: {report[-200:]}")
        ok &= passed
    return ok


def shape_condition_model():
    """`x + 2 * y if x.shape == y.shape else x` over x [B, T] and y [B, S]
    (a scripted model's guard on its inputs' shapes): the branches are cheap,
    so both run, and the Add sees T != S where it is not taken; and
    `x - k if T == 4 else x` for a [4] weight k."""
    then_branch = h.make_graph(
        [h.make_node("Add", ["y", "y"], ["yy"]), h.make_node("Add", ["x", "yy"], ["t"])],
        "sum", [], [out("t", ["B", None])])
    else_branch = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "keep", [],
                               [out("e", ["B", "T"])])
    graph = h.make_graph(
        [h.make_node("Shape", ["x"], ["sx"]), h.make_node("Shape", ["y"], ["sy"]),
         h.make_node("Equal", ["sx", "sy"], ["eq"]),
         h.make_node("Cast", ["eq"], ["eq_i"], to=TensorProto.INT64),
         h.make_node("ReduceMin", ["eq_i"], ["all_i"], keepdims=0),
         h.make_node("Cast", ["all_i"], ["same"], to=TensorProto.BOOL),
         h.make_node("If", ["same"], ["z"], then_branch=then_branch,
                     else_branch=else_branch),
         # `x - k if x.shape[1] == 4 else x`, k a [4] weight: the Sub's type
         # is static, so where not taken x is read at 4 columns.
         h.make_node("Gather", ["sx", "one"], ["t"], axis=0),
         h.make_node("Equal", ["t", "four"], ["is4"]),
         h.make_node("If", ["is4"], ["w"], then_branch=h.make_graph(
             [h.make_node("Sub", ["x", "k"], ["xk"])], "minus", [], [out("xk", ["B", 4])]),
             else_branch=h.make_graph([h.make_node("Identity", ["x"], ["xi"])], "same", [],
                                      [out("xi", ["B", "T"])]))],
        "shape_condition",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T"]),
         h.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "S"])],
        [out("z", ["B", None]), out("w", ["B", None])],
        [init("one", np.array(1, np.int64)), init("four", np.array(4, np.int64)),
         init("k", np.array([1, 2, 3, 4], np.float32))])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def check_shape_condition(compile_, run, work, rng):
    """The shape-condition model at sizes that take each branch, among them
    sizes where the untaken Add's operands disagree (ONNX Runtime runs
    those; Kiln used to fail the run with the Add's size guard)."""
    d = os.path.join(work, "shape_condition")
    so = compile_cli(compile_, shape_condition_model(), d,
                     ["--dim", "B=1..4", "--dim", "T=1..64", "--dim", "S=1..64"])
    ok = True
    for batch, t, s in ((2, 5, 5), (2, 5, 3), (1, 1, 64), (4, 64, 64), (3, 64, 1),
                        (2, 4, 4), (1, 4, 2)):
        x = rng.standard_normal((batch, t)).astype(np.float32)
        y = rng.standard_normal((batch, s)).astype(np.float32)
        z = x + 2 * y if t == s else x
        w = x - np.array([1, 2, 3, 4], np.float32) if t == 4 else x
        name = f"B{batch}_T{t}_S{s}"
        case = write_case(d, name, [("x", x), ("y", y)], [("z", z), ("w", w)])
        passed, report = check_case(run, so, case, 1e-6, 1e-6)
        print(f"{'ok' if passed else 'FAIL'} shape_condition {name}: {report[-200:]}")
        ok &= passed
    return ok


def padded_join_model():
    """An If between Relu(x) of x [B, T] and a constant [3, 4] (results that
    differ in both axes), edge-padded by one row after: the Pad sizes its
    output by the join's largest rows, max(B's bound, 3)."""
    then_branch = h.make_graph([h.make_node("Relu", ["x"], ["t"])], "relu", [],
                               [out("t", ["B", "T"])])
    else_branch = h.make_graph([h.make_node("Neg", ["k"], ["e"])], "table", [],
                               [out("e", [3, 4])])
    graph = h.make_graph(
        [h.make_node("If", ["c"], ["j"], then_branch=then_branch, else_branch=else_branch),
         h.make_node("Pad", ["j", "pads"], ["z"], mode="edge")],
        "padded_join",
        [h.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T"]),
         h.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [out("z", [None, None])],
        [init("k", np.arange(12, dtype=np.float32).reshape(3, 4)),
         init("pads", np.array([0, 0, 1, 0], np.int64))])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def check_padded_join(compile_, run, work, rng):
    """The padded join with each branch taken (it was refused: the joined
    rows had no largest size)."""
    d = os.path.join(work, "padded_join")
    so = compile_cli(compile_, padded_join_model(), d, ["--dim", "B=1..6", "--dim", "T=1..9"])
    ok = True
    k = np.arange(12, dtype=np.float32).reshape(3, 4)
    for batch, t in ((1, 1), (6, 9), (2, 4)):
        x = rng.standard_normal((batch, t)).astype(np.float32)
        for taken in (True, False):
            z = np.pad(np.maximum(x, 0) if taken else -k, ((0, 1), (0, 0)), mode="edge")
            name = f"B{batch}_T{t}_{'then' if taken else 'else'}"
            case = write_case(d, name, [("x", x), ("c", np.array(taken))], [("z", z)])
            passed, report = check_case(run, so, case, 1e-6, 1e-6)
            print(f"{'ok' if passed else 'FAIL'} padded_join {name}: {report[-200:]}")
            ok &= passed
    return ok


def main():
    compile_, run, work = sys.argv[1:4]
    rng = np.random.default_rng(1)
    so = compile_cli(compile_, model(), work)
    ok = check(run, so, work, rng, "static", 1, SAMPLES)
    sym = os.path.join(work, "symbolic")
    so = compile_cli(compile_, model("B", "T"), sym,
                     ["--dim", "B=1..4", "--dim", "T=64..512"])
    for batch, samples in ((1, 64), (3, 301), (4, 512)):
        ok &= check(run, so, sym, rng, f"B{batch}_T{samples}", batch, samples)
    ok &= check_lengths(compile_, run, work, rng)
    ok &= check_areas(compile_, run, work, rng)
    ok &= check_shape_condition(compile_, run, work, rng)
    ok &= check_padded_join(compile_, run, work, rng)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
