#!/usr/bin/python3
"""Held-out torchvision classifiers with symbolic batch, height and width.

usage: /usr/bin/python3 bench/models/check_symbolic.py OUTDIR [NAME ...]
           [--build build]

Each model is exported with torch.onnx's dynamic_axes on the input's batch,
height and width (dim_params batch, h, w; opset 17, random weights from a
fixed seed), compiled once with kiln-compile --dim batch=1..2 --dim h=LO..320
--dim w=LO..320, and run through the Python bindings at three shapes against
torch eager on the same inputs: one line a model with the compile time and,
per shape, the largest absolute difference over the largest absolute
reference value (the check: at most 1e-3). Exit status 1 if any model that
torch exports fails to compile or to match.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# name: (export size, smallest h and w, shapes checked as (batch, h, w))
MODELS = {
    "mobilenet_v3_small": (224, 64, [(1, 224, 224), (2, 96, 160), (1, 320, 257)]),
    "shufflenet_v2_x1_0": (224, 64, [(1, 224, 224), (2, 96, 160), (1, 320, 257)]),
    "efficientnet_b0": (224, 64, [(1, 224, 224), (2, 96, 160), (1, 320, 257)]),
    "regnet_y_400mf": (224, 64, [(1, 224, 224), (2, 96, 160), (1, 320, 257)]),
    "squeezenet1_0": (224, 64, [(1, 224, 224), (2, 96, 160), (1, 320, 257)]),
    "mnasnet1_0": (224, 64, [(1, 224, 224), (2, 96, 160), (1, 320, 257)]),
    "googlenet": (224, 64, [(1, 224, 224), (2, 96, 160), (1, 320, 257)]),
    "convnext_tiny": (224, 64, [(1, 224, 224), (2, 96, 160), (1, 320, 257)]),
    "resnext50_32x4d": (224, 64, [(1, 224, 224), (2, 96, 160), (1, 320, 257)]),
    "inception_v3": (299, 75, [(1, 299, 299), (2, 96, 160), (1, 320, 257)]),
    "densenet121": (224, 64, [(1, 224, 224), (2, 96, 160), (1, 320, 257)]),
    # Its window partition needs h and w to be multiples of 224.
    "maxvit_t": (224, 224, [(1, 224, 224), (2, 224, 224)]),
    # Window padding computed from the input's size: a Pad of run-time amounts.
    # torchvision decides in Python, at trace time, which stages shift their
    # windows (not where the padded map fits one window); the graph exported
    # at 224 means what eager computes where stage 3 is 8-14 wide.
    "swin_t": (224, 64, [(1, 224, 224), (2, 160, 192), (1, 129, 200)]),
}


def check(name, outdir, compiler):
    import kiln
    size, lo, shapes = MODELS[name]
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    try:
        with torch.no_grad():
            torch.onnx.export(model, (torch.randn(1, 3, size, size),), path, opset_version=17,
                              input_names=["input"], output_names=["output"],
                              dynamic_axes={"input": {0: "batch", 2: "h", 3: "w"},
                                            "output": {0: "batch"}})
    except Exception as e:  # torch's exporter, not Kiln
        return None, f"not exported by torch: {str(e).splitlines()[0][:150]}"
    so = os.path.join(d, "model.so")
    t = time.time()
    c = subprocess.run([compiler, path, "-o", so, "--dim", "batch=1..2", "--dim",
                        f"h={lo}..320", "--dim", f"w={lo}..320"], capture_output=True, text=True)
    secs = time.time() - t
    if c.returncode:
        errors = [l for l in c.stderr.splitlines() if "error" in l] or [c.stderr.strip()]
        return False, f"compile failed ({secs:.0f} s): " + errors[0][:300]
    m = kiln.load(so)
    ok, parts = True, []
    for b, h, w in shapes:
        x = torch.randn(b, 3, h, w)
        with torch.no_grad():
            ref = model(x)
        ref = (ref[0] if isinstance(ref, tuple) else ref).numpy()
        got = m(x.numpy())
        got = np.asarray(got[0] if isinstance(got, (list, tuple)) else got)
        if got.shape != ref.shape:
            ok = False
            parts.append(f"{b}x{h}x{w}: shape {got.shape}, torch {ref.shape}")
            continue
        err = float(np.abs(got - ref).max() / (np.abs(ref).max() + 1e-12))
        ok &= err <= 1e-3
        parts.append(f"{b}x{h}x{w} {err:.1e}")
    return ok, f"compiled in {secs:.0f} s; " + ", ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("names", nargs="*")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    compiler = os.path.join(args.build, "bin", "kiln-compile")
    sys.path.insert(0, os.path.join(args.build, "python"))
    failed = []
    for name in args.names or list(MODELS):
        if name not in MODELS:
            sys.exit(f"unknown model {name}; choose from {', '.join(MODELS)}")
        try:
            ok, line = check(name, args.outdir, compiler)
        except Exception as e:  # a run error through the bindings
            ok, line = False, f"error: {str(e).splitlines()[0][:300]}"
        if ok is False:
            failed.append(name)
        print(f"{name}: {'ok' if ok else 'skipped' if ok is None else 'FAILED'}: {line}",
              flush=True)
    print(f"FAILED: {', '.join(failed)}" if failed else "all exported models OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
