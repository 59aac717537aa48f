#!/usr/bin/python3
"""Snapshots the code Kiln emits for a fixed set of models and options, so that
a refactor that must not change behavior can be checked by comparing the
emitted code before and after (docs/development.md).

usage: /usr/bin/python3 bench/codegen/snapshot.py BUILD_DIR MODELS_DIR OUT_DIR
           [--node-tests DIR] [--only SUBSTRING] [--jobs 2]
       /usr/bin/python3 bench/codegen/snapshot.py --compare OLD_DIR NEW_DIR

MODELS_DIR holds bench/models/export.py's output (MODELS_DIR/<name>/model.onnx
with test_data_set_0, used as calibration data for --quantize=static). Every
case is compiled with an explicit --mcpu, so the snapshot does not depend on
the host CPU: znver5 (AVX-512, VNNI, BF16, no AMX), sapphirerapids (AMX, FP16)
and x86-64-v3 (AVX2). Each case writes the assembly (or PTX) and the memory
plan; a case that fails writes its error text instead, so a refactor that
changes an error is caught too.

--node-tests DIR adds every ONNX backend node test under DIR (model.onnx per
folder) compiled to the graph dialect and to assembly for znver5: a broad,
fast check of the importer and the conversions.

--compare prints the cases whose files differ and exits 1 if any does. Assembly
that differs only in the numbering of the compiler-generated constants
(`__constant_<shape>_<n>`, numbered in an order bufferization does not fix)
counts as identical when every reference names a constant of the same bytes.
"""
import argparse
import concurrent.futures
import filecmp
import hashlib
import os
import re
import subprocess
import sys

# (name, model, extra flags). The model is a folder name under MODELS_DIR.
F32 = ["mlp", "resnet18", "resnet50", "resnet50_b8", "mobilenet_v2", "squeezenet1_1",
       "transformer_enc", "bert_small"]
CASES = (
    [(f"{m}.znver5", m, ["--mcpu=znver5"]) for m in F32]
    + [(f"{m}.avx2", m, ["--mcpu=x86-64-v3"]) for m in ["mlp", "resnet18", "bert_small"]]
    + [(f"{m}.spr", m, ["--mcpu=sapphirerapids"]) for m in ["resnet18", "transformer_enc"]]
    + [(f"{m}.bf16.spr", m, ["--mcpu=sapphirerapids", "--precision=bf16"])
       for m in ["resnet18", "bert_small", "mobilenet_v2"]]
    + [(f"{m}.bf16.znver5", m, ["--mcpu=znver5", "--precision=bf16"])
       for m in ["resnet18", "mobilenet_v2", "bert_small"]]
    + [(f"{m}.fp16.znver5", m, ["--mcpu=znver5", "--precision=fp16"])
       for m in ["mlp", "resnet18"]]
    + [(f"{m}.dyn.{c}", m, [f"--mcpu={c}", "--quantize=dynamic"])
       for m in ["bert_small", "transformer_enc"] for c in ["znver5", "sapphirerapids"]]
    + [(f"{m}.static.{c}", m, [f"--mcpu={c}", "--quantize=static",
                               "--calibration-data", "{data}"])
       for m in ["resnet18", "mobilenet_v2", "squeezenet1_1"]
       for c in ["znver5", "sapphirerapids"]]
    + [("resnet18.batch.znver5", "resnet18", ["--mcpu=znver5", "--batch-sizes", "1,4"])]
    + [(f"{m}.cuda.{a}", m, ["--target=cuda", f"--gpu-arch={a}"])
       for m in ["mlp", "resnet18", "bert_small"] for a in ["sm_80", "sm_90"]]
    + [("mlp.cuda-emulated", "mlp", ["--target=cuda-emulated", "--mcpu=znver5"])]
)


# The compiler's version names its git revision, which every commit changes.
VERSION = re.compile(rb"kiln \d+\.\d+\.\d+( \([0-9a-f]+\))?")


def run(cmd, out_path):
    p = subprocess.run(cmd, capture_output=True)
    if p.returncode != 0:
        with open(out_path + ".error", "wb") as f:
            f.write(VERSION.sub(b"kiln VERSION", p.stderr))
        return False
    with open(out_path, "rb") as f:
        text = f.read()
    with open(out_path, "wb") as f:
        f.write(VERSION.sub(b"kiln VERSION", text))
    return True


def compile_case(compiler, out_dir, name, model, flags, emits):
    data = os.path.join(os.path.dirname(model), "test_data_set_0")
    flags = [f.replace("{data}", data) for f in flags]
    ok = True
    for emit, ext in emits:
        out = os.path.join(out_dir, f"{name}.{ext}")
        ok &= run([compiler, model, f"--emit={emit}", "-o", out] + flags, out)
    return name, ok


def snapshot(args):
    compiler = os.path.join(args.build, "bin", "kiln-compile")
    os.makedirs(args.out, exist_ok=True)
    jobs = []
    for name, model, flags in CASES:
        path = os.path.join(args.models, model, "model.onnx")
        if not os.path.exists(path):
            sys.exit(f"missing {path}: run bench/models/export.py {args.models}")
        emits = [("asm", "s"), ("memory-plan", "plan.json")]
        jobs.append((name, path, flags, emits))
    if args.node_tests:
        for d in sorted(os.listdir(args.node_tests)):
            path = os.path.join(args.node_tests, d, "model.onnx")
            if os.path.exists(path):
                jobs.append((f"node.{d}", path, ["--mcpu=znver5"],
                             [("kiln", "kiln.mlir"), ("asm", "s")]))
    if args.only:
        jobs = [j for j in jobs if args.only in j[0]]
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(compile_case, compiler, args.out, *j) for j in jobs]
        for f in concurrent.futures.as_completed(futures):
            name, ok = f.result()
            failed += not ok
    print(f"{len(jobs)} cases written to {args.out} ({failed} with an error file)")


CONSTANT = re.compile(r"__constant_\w+")
DATA = re.compile(r"^\s+\.(long|byte|short|quad|zero|ascii|asciz|space|p2align)\b")


def constants_by_content(path):
    """The assembly with every generated constant's name replaced by a hash of
    its bytes."""
    lines = open(path, errors="replace").read().split("\n")
    content, name, data = {}, None, []
    for line in lines + [""]:
        label = re.match(r"^(__constant_\w+):", line)
        if name and not label and (DATA.match(line) or not line.strip()):
            data.append(line.strip())
            continue
        if name:
            content[name] = hashlib.md5("\n".join(data).encode()).hexdigest()
            name, data = None, []
        if label:
            name = label.group(1)
    return [CONSTANT.sub(lambda m: "C" + content.get(m.group(0), "?"), l)
            for l in lines if not re.match(r"^\s+\.(size|type)\s+__constant_", l)]


def same(a, b):
    if filecmp.cmp(a, b, shallow=False):
        return "identical"
    if a.endswith(".s") and constants_by_content(a) == constants_by_content(b):
        return "renumbered"
    return None


def compare(old, new):
    names = sorted((set(os.listdir(old)) | set(os.listdir(new))) - {"DONE"})
    differ, renumbered = [], 0
    for n in names:
        a, b = os.path.join(old, n), os.path.join(new, n)
        verdict = same(a, b) if os.path.exists(a) and os.path.exists(b) else None
        if verdict is None:
            differ.append(n)
            print(f"differs: {n}")
        renumbered += verdict == "renumbered"
    print(f"{len(names) - len(differ)} of {len(names)} files the same"
          f" ({renumbered} only with their constants numbered differently)")
    return 1 if differ else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    ap.add_argument("build", nargs="?")
    ap.add_argument("models", nargs="?")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--node-tests")
    ap.add_argument("--only")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if not (args.build and args.models and args.out):
        ap.error("BUILD_DIR MODELS_DIR OUT_DIR are required")
    snapshot(args)


if __name__ == "__main__":
    main()
