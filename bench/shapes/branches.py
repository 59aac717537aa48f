#!/usr/bin/python3
"""A scripted voice-activity-style model that picks its front end by the
sample rate (`if sr == 16000:`), with a symbolic batch and length: Kiln's
one .so (--dim B=1..MAX --dim T=..MAX) beside Kiln's static compile of
each shape and ONNX Runtime on the dynamic model.

The model is test/e2e/check_branches.py's, grown: a stride-2 Conv with a
nested If between two matmuls and a state update at 16 kHz, a stride-1 Conv
at 8 kHz; --channels and --state set its width. Only the taken branch
should run (docs/shapes.md, "Branches on a run-time condition"). At each
(batch, samples, rate) the outputs are checked first (the dynamic .so
against ORT and against the static one, max |diff| <= 1e-4), then the three
run in alternating rounds; the table gives median milliseconds, dyn/ORT and
dyn/static.

usage: bench/shapes/branches.py [--shapes 1x16384,4x8192] [--channels 64]
                                [--state 256] [--threads 1]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))
from check_branches import model, weights  # noqa: E402
from ort import ensure_ort  # noqa: E402
from runtime_loop import compile_timed  # noqa: E402
from symbolic_shapes import Ort, cpu_model, timed, SETTLE_S  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="1x16384,4x8192", help="BATCHxSAMPLES,...")
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--state", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-bench-branches")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import kiln

    os.makedirs(a.work, exist_ok=True)
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    w = weights(a.channels, a.state)
    ensure_ort()
    path = os.path.join(a.work, "branches_dyn.onnx")
    onnx.save(model("B", "T", w, pass_through=False), path)
    dims = {"B": (1, max(b for b, _ in shapes)),
            "T": (64, max(t for _, t in shapes))}
    so, dyn_s = compile_timed(kiln, path, dims=dims)
    dyn = kiln.load(so, threads=a.threads)
    print(f"CPU: {cpu_model()}; channels {a.channels}, state {a.state}; "
          f"threads={a.threads}; dynamic .so (B 1..{dims['B'][1]}, T "
          f"64..{dims['T'][1]}) compiled once in {dyn_s:.1f} s")
    print("| batch x samples | rate | dynamic ms | static ms | ORT ms | dyn / ORT "
          "| dyn / static |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    rng = np.random.default_rng(1)
    for batch, samples in shapes:
        fixed = os.path.join(a.work, f"branches_{batch}x{samples}.onnx")
        onnx.save(model(batch, samples, w, pass_through=False), fixed)
        static = kiln.load(compile_timed(kiln, fixed)[0], threads=a.threads)
        x = rng.standard_normal((batch, samples)).astype(np.float32)
        state = rng.standard_normal((batch, a.state)).astype(np.float32)
        for rate in (16000, 8000):
            feeds = {"x": x, "h": state, "sr": np.array(rate, np.int64)}
            ort = Ort(path, a.threads, feeds, a.work)
            ort.run(1)
            dump = os.path.join(a.work, "ort_out.bin")
            ort.p.stdin.write(f"dump {dump}\n")
            ort.p.stdin.flush()
            assert ort.p.stdout.readline().strip() == "ok"
            got = dyn(x, state, feeds["sr"])[0]
            want = np.fromfile(dump, dtype=np.float32).reshape(got.shape)
            assert np.abs(got - want).max() <= 1e-4, np.abs(got - want).max()
            assert np.abs(static(x, state, feeds["sr"])[0] - got).max() <= 1e-4
            td, ts, to = [], [], []
            for _ in range(a.rounds):
                td.append(timed(lambda: dyn(x, state, feeds["sr"]), a.calls))
                ts.append(timed(lambda: static(x, state, feeds["sr"]), a.calls))
                to.append(ort.run(a.calls + 1))
                time.sleep(SETTLE_S)
            ort.close()
            md, ms, mo = (statistics.median(t) for t in (td, ts, to))
            print(f"| {batch}x{samples} | {rate // 1000} kHz | {md:.3f} | {ms:.3f} | "
                  f"{mo:.3f} | {md / mo:.2f} | {md / ms:.2f} |", flush=True)


if __name__ == "__main__":
    main()
