#!/usr/bin/python3
"""A torch recurrent layer exported with a symbolic batch and sequence, the
way speech and text models ship: Kiln's one .so (--dim batch=1..B
--dim seq=1..S, the ONNX LSTM/GRU run as a loop over the run-time
sequence) beside Kiln's static compile of each shape (the recurrence
unrolled) and ONNX Runtime on the dynamic model.

The model is torch.nn.LSTM (or --cell gru) with 2 layers, bidirectional,
batch_first, input 128 and --hidden units. At each (batch, seq) the outputs
are checked first (the dynamic .so against ORT and against the static one,
max |diff| <= 1e-4), then the three run in alternating rounds; the table
gives median milliseconds, dyn/ORT and dyn/static, and both compile times.

usage: bench/shapes/symbolic_recurrent.py [--cell lstm|gru] [--hidden 256]
                                          [--shapes 1x16,4x64,8x128]
                                          [--threads 1]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from ort import ensure_ort  # noqa: E402
from runtime_loop import compile_timed  # noqa: E402
from symbolic_shapes import Ort, cpu_model, timed, SETTLE_S  # noqa: E402

IN = 128


def export(torch, module, path, example, axes):
    with torch.no_grad():
        torch.onnx.export(module, (example,), path, input_names=["x"],
                          output_names=["y"],
                          dynamic_axes={"x": axes, "y": axes} if axes else None,
                          opset_version=17)


def first(out):
    return out[0] if isinstance(out, (list, tuple)) else out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", choices=("lstm", "gru"), default="lstm")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--shapes", default="1x16,4x64,8x128",
                    help="BATCHxSEQ,...")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/kiln-bench-recurrent")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.build, "python"))
    import kiln
    import torch

    os.makedirs(a.work, exist_ok=True)
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    cell = torch.nn.LSTM if a.cell == "lstm" else torch.nn.GRU

    class Layers(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = cell(IN, a.hidden, num_layers=2, batch_first=True,
                            bidirectional=True)

        def forward(self, x):
            return self.rnn(x)[0]

    torch.manual_seed(0)
    module = Layers().eval()
    ensure_ort()
    path = os.path.join(a.work, f"{a.cell}_dyn.onnx")
    export(torch, module, path, torch.randn(2, 7, IN),
           {0: "batch", 1: "seq"})
    dims = {"batch": (1, max(b for b, _ in shapes)),
            "seq": (1, max(s for _, s in shapes))}
    so, dyn_s = compile_timed(kiln, path, dims=dims)
    dyn = kiln.load(so, threads=a.threads)
    print(f"CPU: {cpu_model()}; {a.cell} 2 layers bidirectional, input {IN}, "
          f"hidden {a.hidden}; threads={a.threads}; dynamic .so "
          f"(batch 1..{dims['batch'][1]}, seq 1..{dims['seq'][1]}) compiled "
          f"once in {dyn_s:.1f} s")
    print("| batch x seq | dynamic ms | static ms | ORT ms | dyn / ORT "
          "| dyn / static | static compile s |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    rng = np.random.default_rng(1)
    for batch, seq in shapes:
        x = rng.standard_normal((batch, seq, IN)).astype(np.float32)
        fixed = os.path.join(a.work, f"{a.cell}_{batch}x{seq}.onnx")
        export(torch, module, fixed, torch.from_numpy(x), None)
        sso, st_s = compile_timed(kiln, fixed)
        static = kiln.load(sso, threads=a.threads)
        ort = Ort(path, a.threads, {"x": x}, a.work)
        ort.run(1)
        dump = os.path.join(a.work, "ort_out.bin")
        ort.p.stdin.write(f"dump {dump}\n")
        ort.p.stdin.flush()
        assert ort.p.stdout.readline().strip() == "ok"
        got = first(dyn(x))
        want = np.fromfile(dump, dtype=np.float32).reshape(got.shape)
        assert np.abs(got - want).max() <= 1e-4, np.abs(got - want).max()
        assert np.abs(first(static(x)) - got).max() <= 1e-4
        td, ts, to = [], [], []
        for _ in range(a.rounds):
            td.append(timed(lambda: dyn(x), a.calls))
            ts.append(timed(lambda: static(x), a.calls))
            to.append(ort.run(a.calls + 1))
            time.sleep(SETTLE_S)
        ort.close()
        md, ms, mo = (statistics.median(t) for t in (td, ts, to))
        print(f"| {batch}x{seq} | {md:.3f} | {ms:.3f} | {mo:.3f} | "
              f"{md / mo:.2f} | {md / ms:.2f} | {st_s:.1f} |", flush=True)


if __name__ == "__main__":
    main()
