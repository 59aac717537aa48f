#!/usr/bin/python3
"""Arena size against its lower bound, and peak process RSS of Kiln against
ONNX Runtime on the same input, for the development models.

usage: /usr/bin/python3 bench/memory/run.py MODELS_DIR [--build build] [NAME ...]

MODELS_DIR holds bench/models/export.py's output. ONNX Runtime comes from the
npm package onnxruntime-node, installed into bench/.node (CPU provider only).
Peak RSS is /usr/bin/time's maximum resident set size of the whole process:
kiln-run (model .so, arena, inputs, outputs) against node + onnxruntime. The
baseline of each host process with no model loaded is measured too and
subtracted in the "net" columns. Prints a Markdown table.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import onnx
import onnx.numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from ort import NODE_DIR, ensure_ort  # noqa: E402


def peak_rss_kb(cmd, env=None):
    with tempfile.NamedTemporaryFile("r") as f:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f.name] + cmd, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        return int(f.read().strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models")
    ap.add_argument("names", nargs="*")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    ensure_ort()
    compile_ = os.path.join(args.build, "bin", "kiln-compile")
    run = os.path.join(args.build, "bin", "kiln-run")
    names = args.names or sorted(os.listdir(args.models))
    env = dict(os.environ, NODE_PATH=os.path.join(NODE_DIR, "node_modules"))
    work = tempfile.mkdtemp(prefix="kiln-mem-")

    # Host processes with nothing loaded.
    empty_js = os.path.join(work, "empty.js")
    open(empty_js, "w").write("require('onnxruntime-node');\n")
    node_base = peak_rss_kb(["node", empty_js], env)

    rows = []
    for name in names:
        d = os.path.join(args.models, name)
        onnx_path = os.path.join(d, "model.onnx")
        so = os.path.join(d, "model.so")
        if not os.path.exists(so) or os.path.getmtime(so) < os.path.getmtime(compile_):
            r = subprocess.run([compile_, onnx_path, "-o", so], capture_output=True, text=True)
            if r.returncode:
                rows.append((name, None, r.stderr.strip().splitlines()[0]))
                continue
        plan = json.loads(subprocess.run([compile_, onnx_path, "--emit=memory-plan", "-o", "-"],
                                         check=True, capture_output=True, text=True).stdout)
        tests = os.path.join(d, "test_data_set_0")
        kiln = peak_rss_kb([run, so, "--test-data", tests, "--rtol", "1e-3", "--atol", "1e-4"])
        kiln_base = peak_rss_kb([run, so, "--info"])
        spec = []
        for i in range(len(onnx.load(onnx_path, load_external_data=False).graph.input)):
            p = os.path.join(tests, f"input_{i}.pb")
            if not os.path.exists(p):
                break
            t = onnx.TensorProto()
            t.ParseFromString(open(p, "rb").read())
            a = nh.to_array(t)
            raw = os.path.join(work, f"{name}_{i}.bin")
            a.tofile(raw)
            spec.append({"name": t.name, "dtype": str(a.dtype), "shape": list(a.shape), "file": raw})
        spec_path = os.path.join(work, f"{name}.json")
        json.dump(spec, open(spec_path, "w"))
        ort = peak_rss_kb(["node", os.path.join(HERE, "ort_run.js"), onnx_path, spec_path], env)
        rows.append((name, (plan, kiln, kiln_base, ort), None))

    print("| model | arena | lower bound | ratio | Kiln peak RSS | ORT peak RSS | Kiln net | ORT net |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    mib = lambda kb: f"{kb / 1024:.1f} MiB"
    for name, data, err in rows:
        if data is None:
            print(f"| {name} | — | — | — | — | — | — | — |  <!-- {err} -->")
            continue
        plan, kiln, kiln_base, ort = data
        a, lb = plan["arena_bytes"], plan["lower_bound_bytes"]
        print(f"| {name} | {a / 2**20:.2f} MiB | {lb / 2**20:.2f} MiB | {a / lb if lb else 1:.4f} | "
              f"{mib(kiln)} | {mib(ort)} | {mib(kiln - kiln_base)} | {mib(ort - node_base)} |")
    print(f"\nBaselines: kiln-run --info {mib(kiln_base) if rows else '?'} (model mapped, no arena); "
          f"node + onnxruntime-node with no model {mib(node_base)}.")


if __name__ == "__main__":
    main()
