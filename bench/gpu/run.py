#!/usr/bin/python3
"""The CUDA target end to end: compile, assemble, run against references, time.

usage: /usr/bin/python3 bench/gpu/run.py [MODELS_DIR] [--build build] [--models a,b]
           [--arch sm_80] [--conformance-filter REGEX] [--no-conformance]
           [--iterations 100] [--json FILE]

For every development model (MODELS_DIR/<name>/model.onnx with
test_data_set_0, default /tmp/dev):
  1. kiln-compile --target=cuda --gpu-arch=ARCH; the ptxas figures of
     model.json (kernels, most registers, spills);
  2. kiln-compile --emit=asm and ptxas for sm_80 and sm_90 (if ptxas exists);
  3. with a CUDA driver and GPU: kiln-run --test-data (rtol 1e-3, atol 1e-4)
     and kiln-run --bench (GPU latency, including the input and output
     copies), beside ONNX Runtime's CPU latency on the same machine (npm
     onnxruntime-node in bench/.node, one thread and all cores);
     without one: the no-device status, then the same kernels emulated on
     the host (--target=cuda-emulated) against the references, which checks
     the GPU mapping's numbers but not the device.
Then, with a GPU, the ONNX node conformance suite compiled for CUDA (through a
run.py --compile-flag), compared with the CPU's expected pass list.
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = ["mlp", "resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1",
          "transformer_enc", "bert_small"]


def run(cmd, timeout=1800, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def have_gpu():
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def find_ptxas():
    for c in [os.environ.get("KILN_PTXAS"), shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas"]:
        if c and os.access(c, os.X_OK):
            return c
    return None


def median_ms(text):
    m = re.search(r"median_ms=([0-9.]+)", text)
    return float(m.group(1)) if m else None


def ort_latency(onnx_path, data_dir, threads, iterations, tmp):
    """Median ms of ONNX Runtime's CPU provider on the reference inputs, via
    bench/perf/ort_driver.js; None when ORT is not installed."""
    node_dir = os.path.join(ROOT, "bench", ".node")
    if not shutil.which("node") or not os.path.isdir(os.path.join(node_dir, "node_modules")):
        return None
    import numpy as np
    import onnx
    import onnx.numpy_helper
    specs = []
    i = 0
    while os.path.exists(os.path.join(data_dir, f"input_{i}.pb")):
        t = onnx.TensorProto()
        t.ParseFromString(open(os.path.join(data_dir, f"input_{i}.pb"), "rb").read())
        a = onnx.numpy_helper.to_array(t)
        f = os.path.join(tmp, f"in{i}.bin")
        np.ascontiguousarray(a).tofile(f)
        specs.append({"name": t.name, "dtype": str(a.dtype), "shape": list(a.shape), "file": f})
        i += 1
    spec = os.path.join(tmp, "inputs.json")
    json.dump(specs, open(spec, "w"))
    env = dict(os.environ, NODE_PATH=os.path.join(node_dir, "node_modules"))
    p = subprocess.Popen(["node", os.path.join(ROOT, "bench", "perf", "ort_driver.js"), onnx_path,
                          str(threads), spec], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=env)
    try:
        p.stdin.write("run 3\n"); p.stdin.flush(); p.stdout.readline()  # warm-up
        p.stdin.write(f"run {iterations}\n"); p.stdin.flush()
        line = p.stdout.readline().split()
        p.stdin.write("quit\n"); p.stdin.flush()
    finally:
        p.wait(timeout=60)
    if not line or line[0] != "ok":
        return None
    times = sorted(float(x) for x in line[1:])
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models_dir", nargs="?", default="/tmp/dev")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--arch", default="sm_80", choices=["sm_80", "sm_90"])
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--conformance-filter", default=None, metavar="REGEX",
                    help="node tests to run on the GPU (default: all)")
    ap.add_argument("--no-conformance", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()

    compiler = os.path.join(args.build, "bin", "kiln-compile")
    runner = os.path.join(args.build, "bin", "kiln-run")
    gpu = have_gpu()
    ptxas = find_ptxas()
    print(f"GPU driver: {'yes' if gpu else 'no (libcuda.so.1 not found)'}; "
          f"ptxas: {ptxas or 'not found'}; arch {args.arch}")
    results, failed = [], []
    tmp = tempfile.mkdtemp(prefix="kiln-gpu-")
    cores = os.cpu_count() or 1
    for name in args.models.split(","):
        d = os.path.join(args.models_dir, name)
        onnx_path = os.path.join(d, "model.onnx")
        data = os.path.join(d, "test_data_set_0")
        r = {"model": name}
        results.append(r)
        so = os.path.join(tmp, name + ".so")
        t0 = time.time()
        c = run([compiler, onnx_path, "--target=cuda", "--gpu-arch=" + args.arch, "-o", so])
        r["compile_s"] = round(time.time() - t0, 2)
        if c.returncode:
            r["status"] = "compile-error: " + c.stderr.strip().splitlines()[-1]
            failed.append(name)
            print(f"{name:16s} {r['status']}")
            continue
        meta = json.load(open(os.path.join(tmp, name + ".json")))
        kernels = meta.get("ptxas")
        if isinstance(kernels, list) and kernels:
            r["kernels"] = len(kernels)
            r["max_registers"] = max(k["registers"] for k in kernels)
            r["spill_bytes"] = sum(k["spill_store_bytes"] + k["spill_load_bytes"] for k in kernels)
            if r["spill_bytes"]:
                failed.append(name)  # the bar: no kernel spills
        if ptxas:
            ptx = os.path.join(tmp, name + ".ptx")
            run([compiler, onnx_path, "--target=cuda", "--gpu-arch=" + args.arch, "--emit=asm", "-o", ptx])
            for arch in ["sm_80", "sm_90"]:
                if arch < args.arch:
                    continue
                a = run([ptxas, "-arch=" + arch, ptx, "-o", os.path.join(tmp, name + "." + arch)])
                r["ptxas_" + arch] = "ok" if a.returncode == 0 else "error"
                if a.returncode:
                    failed.append(name)
        if gpu:
            t = run([runner, so, "--test-data", data, "--rtol", "1e-3", "--atol", "1e-4"])
            r["matches"] = t.returncode == 0
            if t.returncode:
                failed.append(name)
                r["status"] = (t.stdout + t.stderr).strip().splitlines()[-1]
            b = run([runner, so, "--bench", "--iterations", str(args.iterations)])
            r["gpu_ms"] = median_ms(b.stdout + b.stderr)
            r["ort_cpu_1t_ms"] = ort_latency(onnx_path, data, 1, min(args.iterations, 20), tmp)
            r["ort_cpu_all_ms"] = ort_latency(onnx_path, data, cores, min(args.iterations, 20), tmp)
        else:
            t = run([runner, so, "--test-data", data])
            r["no_device_status"] = t.returncode == 2 and "no CUDA" in t.stderr
            if not r["no_device_status"]:
                failed.append(name)
            emu = os.path.join(tmp, name + "_emu.so")
            e = run([compiler, onnx_path, "--target=cuda-emulated", "-o", emu])
            if e.returncode == 0:
                e = run([runner, emu, "--test-data", data, "--rtol", "1e-3", "--atol", "1e-4"])
            r["emulated_matches"] = e.returncode == 0
            if e.returncode:
                failed.append(name)
        print(f"{name:16s} " + " ".join(f"{k}={v}" for k, v in r.items() if k != "model"),
              flush=True)

    if gpu and not args.no_conformance:
        cmd = [sys.executable, os.path.join(ROOT, "bench", "conformance", "run.py"),
               "--build", args.build, "--compile-flag=--target=cuda",
               "--compile-flag=--gpu-arch=" + args.arch, "--suite", "node", "-q",
               "--jobs", str(cores), "--json", os.path.join(tmp, "conformance.json")]
        if args.conformance_filter:
            cmd += ["--filter", args.conformance_filter]
        c = run(cmd, timeout=7200)
        print("conformance (node suite, CUDA):", (c.stdout + c.stderr).strip().splitlines()[-3:])

    if args.json:
        json.dump({"gpu": gpu, "arch": args.arch, "models": results}, open(args.json, "w"), indent=2)
    print("FAILED: " + ", ".join(sorted(set(failed))) if failed else "all models OK")
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
