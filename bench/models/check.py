#!/usr/bin/python3
"""Compiles every exported model under DIR (DIR/<name>/model.onnx with
test_data_set_0, as bench/models/export.py writes them) with kiln-compile and
compares kiln-run's outputs with the torch references at rtol 1e-3 / atol 1e-4.
Prints one line per model and a summary; exits 1 if any model fails.

usage: /usr/bin/python3 bench/models/check.py DIR [--build build] [NAME ...]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("names", nargs="*")
    ap.add_argument("--build", default="build")
    ap.add_argument("--rtol", default="1e-3")
    ap.add_argument("--atol", default="1e-4")
    args = ap.parse_intermixed_args()
    names = args.names or sorted(
        n for n in os.listdir(args.dir)
        if os.path.exists(os.path.join(args.dir, n, "model.onnx")))
    compiler = os.path.join(args.build, "bin", "kiln-compile")
    runner = os.path.join(args.build, "bin", "kiln-run")
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            d = os.path.join(args.dir, name)
            so = os.path.join(tmp, name + ".so")
            t0 = time.time()
            c = subprocess.run([compiler, os.path.join(d, "model.onnx"), "-o", so],
                               capture_output=True, text=True)
            compile_s = time.time() - t0
            if c.returncode:
                first = next((l for l in c.stderr.splitlines() if "error" in l),
                             c.stderr.strip().splitlines()[-1] if c.stderr.strip() else "")
                print(f"{name}: COMPILE FAILED ({compile_s:.1f} s): {first}")
                failed.append(name)
                continue
            r = subprocess.run([runner, so, "--test-data", os.path.join(d, "test_data_set_0"),
                                "--rtol", args.rtol, "--atol", args.atol],
                               capture_output=True, text=True)
            lines = (r.stdout + r.stderr).strip().splitlines()
            detail = next((l for l in lines if "max_abs_err" in l), lines[-1] if lines else "")
            status = "ok" if r.returncode == 0 else "MISMATCH" if r.returncode == 1 else "RUN FAILED"
            print(f"{name}: {status} (compile {compile_s:.1f} s) {detail.strip()}")
            if r.returncode:
                failed.append(name)
    print(f"{len(names) - len(failed)} of {len(names)} models compile and match"
          + (f"; failing: {', '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
