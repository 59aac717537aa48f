#!/usr/bin/python3
"""Random ops (docs/ops.md, "Random numbers"): RandomNormal, RandomUniform,
their Like forms, Bernoulli and Multinomial compiled and run through
Python's kiln.load(). ONNX leaves the values to the implementation, so the
draws are checked as samples of their distribution: with n draws, every
estimate must lie within 6 standard errors of its expected value (a false
failure about once in 10^9 per check), plus exact properties (ranges, p = 0
and p = 1, impossible classes, shapes). Then the runs themselves: a seeded
model repeats its sequence of runs in a new session and on more threads,
each run draws new numbers, and unseeded sessions differ. And what is
refused, by name.

usage: check_random.py WORKDIR PYTHONPATH
"""
import math
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
from small_onnx import compile_and_load, save_onnx  # noqa: E402

SIGMAS = 6.0
checks = 0


def near(what, got, want, stderr):
    global checks
    assert abs(got - want) <= SIGMAS * stderr, \
        f"{what}: {got} is not within {SIGMAS} x {stderr} of {want}"
    checks += 1


def check_normal(what, x, mean, scale):
    x = x.astype(np.float64).ravel()
    n = x.size
    near(what + " mean", x.mean(), mean, scale / math.sqrt(n))
    # The variance of a normal sample's variance is 2 sigma^4 / n.
    near(what + " variance", x.var(), scale**2, scale**2 * math.sqrt(2.0 / n))
    # Within one sigma: p = erf(1 / sqrt 2); and the tails past 2 sigma.
    for k in (1.0, 2.0):
        p = math.erf(k / math.sqrt(2.0))
        near(f"{what} within {k} sigma", np.mean(np.abs(x - mean) < k * scale),
             p, math.sqrt(p * (1 - p) / n))
    assert np.all(np.abs(x - mean) <= 6.7 * scale + 1e-3 * abs(mean)), what


def check_uniform(what, x, low, high):
    x = x.astype(np.float64).ravel()
    n = x.size
    assert x.min() >= low and x.max() <= high, (what, x.min(), x.max())
    near(what + " mean", x.mean(), (low + high) / 2,
         (high - low) / math.sqrt(12.0 * n))
    # Sixteen equal bins: each a binomial count with p = 1/16.
    counts, _ = np.histogram(x, bins=16, range=(low, high))
    for i, c in enumerate(counts):
        near(f"{what} bin {i}", c / n, 1 / 16, math.sqrt(15 / 256 / n))


def build(name, nodes, inputs, outputs, opset=13, **kw):
    return compile_and_load(
        kiln, save_onnx(work, name, nodes, inputs, outputs, opset=opset), **kw)


def out(name, elt, shape):
    return h.make_tensor_value_info(name, elt, shape)


# 1. RandomNormal with a seed: the distribution; a new session repeats the
#    sequence of runs bit for bit (and so does one with 2 threads); every
#    run draws new numbers.
normal = h.make_node("RandomNormal", [], ["y"], shape=[256, 1024], mean=2.0,
                     scale=3.0, seed=5.0, name="noise")
path = save_onnx(work, "normal", [normal], [], [out("y", T.FLOAT, [256, 1024])])
so = kiln.compile(path, output=path[:-5] + ".so")
a = kiln.load(so)
first, second = a()[0], a()[0]
assert first.shape == (256, 1024) and first.dtype == np.float32
check_normal("RandomNormal", first, 2.0, 3.0)
check_normal("RandomNormal, second run", second, 2.0, 3.0)
assert not np.array_equal(first, second), "two runs drew the same numbers"
b = kiln.load(so, threads=2)
assert np.array_equal(b()[0], first) and np.array_equal(b()[0], second), \
    "a new session of a seeded model did not repeat its runs"
# Neighbouring draws are independent: the lag-1 correlation of a run.
flat = first.astype(np.float64).ravel() - 2.0
near("RandomNormal lag-1 correlation", np.mean(flat[1:] * flat[:-1]) / 9.0, 0.0,
     1 / math.sqrt(flat.size))

# 2. Without a seed, two sessions draw different numbers.
unseeded = h.make_node("RandomNormal", [], ["y"], shape=[1000], name="free")
path = save_onnx(work, "unseeded", [unseeded], [], [out("y", T.FLOAT, [1000])])
so = kiln.compile(path, output=path[:-5] + ".so")
x1, x2 = kiln.load(so)()[0], kiln.load(so)()[0]
assert not np.array_equal(x1, x2), "two unseeded sessions drew the same numbers"
check_normal("RandomNormal without seed", np.concatenate([x1, x2]), 0.0, 1.0)

# 3. RandomUniform in float64 (53-bit draws) and in float16, at opset 22.
for dtype, np_type, opset in ((T.DOUBLE, np.float64, 13), (T.FLOAT16, np.float16, 22)):
    node = h.make_node("RandomUniform", [], ["y"], shape=[64, 1000], low=-1.0,
                       high=3.0, dtype=dtype, name="u")
    m = build(f"uniform_{dtype}", [node], [], [out("y", dtype, [64, 1000])], opset)
    y = m()[0]
    assert y.dtype == np_type, y.dtype
    check_uniform(f"RandomUniform {np_type.__name__}", y, -1.0, 3.0)

# 4. The Like forms take the input's shape, symbolic dimensions included,
#    and its type without dtype.
like = h.make_node("RandomUniformLike", ["x"], ["u"], low=0.5, high=1.5,
                   name="ul")
nlike = h.make_node("RandomNormalLike", ["x"], ["z"], dtype=T.FLOAT, mean=-1.0,
                    name="nl")
m = build("like", [like, nlike], [h.make_tensor_value_info("x", T.FLOAT16, ["n", 300])],
          [out("u", T.FLOAT16, ["n", 300]), out("z", T.FLOAT, ["n", 300])],
          dims={"n": (1, 256)})
for n in (1, 37, 256):
    u, z = m(np.zeros((n, 300), np.float16))
    assert u.shape == (n, 300) and u.dtype == np.float16, (u.shape, u.dtype)
    assert z.shape == (n, 300) and z.dtype == np.float32, (z.shape, z.dtype)
    if n == 256:
        check_uniform("RandomUniformLike float16", u, 0.5, 1.5)
        check_normal("RandomNormalLike", z, -1.0, 1.0)

# 5. Bernoulli: p = 0 never and p = 1 always; elsewhere the frequency.
p = np.repeat(np.array([0.0, 0.25, 0.9, 1.0], np.float32), 20000)
for dtype, np_type in ((None, np.float32), (T.BOOL, np.bool_), (T.INT64, np.int64)):
    kw = {} if dtype is None else {"dtype": dtype}
    node = h.make_node("Bernoulli", ["p"], ["y"], name="coin", **kw)
    m = build(f"bernoulli_{dtype}", [node], [h.make_tensor_value_info("p", T.FLOAT, [p.size])],
              [out("y", T.FLOAT if dtype is None else dtype, [p.size])], 15)
    y = m(p)[0]
    assert y.dtype == np_type, y.dtype
    y = y.astype(np.float64).reshape(4, -1)
    assert np.all(y[0] == 0) and np.all(y[3] == 1), "p = 0 or p = 1 drew wrongly"
    assert np.all((y == 0) | (y == 1))
    for i, q in ((1, 0.25), (2, 0.9)):
        near(f"Bernoulli p={q}", y[i].mean(), q, math.sqrt(q * (1 - q) / y.shape[1]))

# 6. Multinomial: sample frequencies against the softmax of the logits; a
#    class of probability 0 (logit -inf) is never drawn.
probs = np.array([[0.1, 0.2, 0.3, 0.4, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]])
with np.errstate(divide="ignore"):
    logits = np.log(probs).astype(np.float32) + np.float32(3.0)
S = 40000
node = h.make_node("Multinomial", ["x"], ["y"], sample_size=S, dtype=T.INT64,
                   name="pick")
m = build("multinomial", [node], [h.make_tensor_value_info("x", T.FLOAT, [2, 5])],
          [out("y", T.INT64, [2, S])], 7)
y = m(logits)[0]
assert y.shape == (2, S) and y.dtype == np.int64
assert y.min() >= 0 and y.max() <= 4
assert not np.any(y[0] == 4) and np.all(y[1] == 2), "an impossible class was drawn"
for c in range(4):
    q = probs[0, c]
    near(f"Multinomial class {c}", np.mean(y[0] == c), q, math.sqrt(q * (1 - q) / S))

# 7. A loop around a random op draws new numbers in every iteration: an
#    unrolled loop (a short constant trip count) stacking its draws, and one
#    compiled loop (a trip count given at run time) summing them. A sum of M
#    independent uniforms has variance M / 12 (M^2 / 12 if the iterations
#    repeated one draw).
body = h.make_graph(
    [h.make_node("Identity", ["cond"], ["cond_out"]),
     h.make_node("RandomUniform", [], ["draw"], shape=[8], name="inner")],
    "body",
    [h.make_tensor_value_info("i", T.INT64, []),
     h.make_tensor_value_info("cond", T.BOOL, [])],
    [h.make_tensor_value_info("cond_out", T.BOOL, []),
     h.make_tensor_value_info("draw", T.FLOAT, [8])])
path = save_onnx(work, "loop_unrolled",
                 [h.make_node("Loop", ["m", "go"], ["draws"], body=body, name="steps")],
                 [h.make_tensor_value_info("go", T.BOOL, [])],
                 [out("draws", T.FLOAT, [5, 8])], [("m", np.array(5, np.int64))])
m = kiln.load(kiln.compile(path, output=path[:-5] + ".so"))
rows = m(np.array(True))[0]
assert rows.shape == (5, 8), rows.shape
assert len({r.tobytes() for r in rows}) == 5, "unrolled iterations repeated their draws"
check_uniform("unrolled loop", np.concatenate([m(np.array(True))[0] for _ in range(40)]),
              0.0, 1.0)

sum_body = h.make_graph(
    [h.make_node("Identity", ["cond"], ["cond_out"]),
     h.make_node("RandomUniform", [], ["draw"], shape=[8], name="inner"),
     h.make_node("Add", ["v", "draw"], ["v_out"])],
    "sum_body",
    [h.make_tensor_value_info("i", T.INT64, []),
     h.make_tensor_value_info("cond", T.BOOL, []),
     h.make_tensor_value_info("v", T.FLOAT, [8])],
    [h.make_tensor_value_info("cond_out", T.BOOL, []),
     h.make_tensor_value_info("v_out", T.FLOAT, [8])])
path = save_onnx(work, "loop_runtime",
                 [h.make_node("Loop", ["m", "", "v0"], ["vf"], body=sum_body, name="steps")],
                 [h.make_tensor_value_info("m", T.INT64, []),
                  h.make_tensor_value_info("v0", T.FLOAT, [8])],
                 [out("vf", T.FLOAT, [8])])
m = kiln.load(kiln.compile(path, output=path[:-5] + ".so"))
M = 400
sums = np.concatenate([m(np.array(M, np.int64), np.zeros(8, np.float32))[0]
                       for _ in range(100)]).astype(np.float64)
near("run-time loop sum mean", sums.mean(), M / 2, math.sqrt(M / 12 / sums.size))
near("run-time loop sum variance", sums.var(), M / 12,
     M / 12 * math.sqrt(2.0 / sums.size))

# 8. Refused, naming the node: a non-float dtype, a missing shape, integer
#    probabilities.
for name, node, outs, inputs in [
        ("int_dtype", h.make_node("RandomNormal", [], ["y"], shape=[2], dtype=T.INT32,
                                  name="bad_dtype"), [out("y", T.INT32, [2])], []),
        ("no_shape", h.make_node("RandomUniform", [], ["y"], name="no_shape"),
         [out("y", T.FLOAT, [2])], []),
        ("int_p", h.make_node("Bernoulli", ["p"], ["y"], name="int_p"),
         [out("y", T.INT32, [2])], [h.make_tensor_value_info("p", T.INT32, [2])])]:
    path = save_onnx(work, "refused_" + name, [node], inputs, outs, opset=15)
    try:
        kiln.compile(path, output=path[:-5] + ".so")
    except Exception as e:  # noqa: BLE001
        assert node.name in str(e) and node.op_type in str(e), str(e)
        checks += 1
    else:
        raise AssertionError(f"{name}: compiled")
# The GPU runtime has no generator.
try:
    kiln.compile(os.path.join(work, "normal.onnx"),
                 output=os.path.join(work, "normal_gpu.so"), target="cuda")
except Exception as e:  # noqa: BLE001
    assert "noise" in str(e) and "RandomNormal" in str(e) and "GPU" in str(e), str(e)
    checks += 1
else:
    raise AssertionError("a random op compiled for the GPU")

print(f"random ops: {checks} checks passed")
