#!/usr/bin/python3
"""Compile for CUDA on one machine, run on another that has the GPU.

usage: /usr/bin/python3 bench/gpu/bundle.py make DIR [--arch sm_90]
           [--models-dir /tmp/dev] [--models a,b] [--tests LIST --data-dir D]
           [--max-mb 48] [--archive]
       python3 bench/gpu/bundle.py run DIR|DIR.tar.xz [--jobs 8] [--iterations 200]
           [--json FILE] [--torch]

`make` (on the build machine) compiles each model with --target=cuda into
DIR/models/<name>/model.so beside a copy of its test_data_set_0, and each
listed ONNX backend test (SUITE/NAME lines, as in test/conformance/
expected_pass*.txt) into DIR/tests/<suite>/<name>, and copies kiln-run with
the shared libraries it needs that a bare machine may lack. The generated
.so files need only libc and the CUDA driver, so DIR runs on any x86-64 Linux
machine with an NVIDIA driver: a GPU host with no LLVM, no MLIR and no
Kiln build.

`run` (on the GPU machine; Python 3 standard library only) checks every model
against its reference (rtol 1e-3, atol 1e-4), times it with kiln-run --bench
(the median, input and output copies included), optionally beside PyTorch
eager on the same GPU (--torch: the torchvision or MLP model of the same
architecture, batch 1, fp32, weights drawn there, which does not change the
time), then runs every test (rtol 1e-3, atol 1e-7, as the ONNX suite) and
prints the failures with their first line. Exit status 1 if anything failed.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# Libraries every Linux machine has; kiln-run's others travel in DIR/lib.
SYSTEM_LIBS = ("libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so",
               "ld-linux", "linux-vdso")


def run(cmd, timeout=600, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", f"timed out after {timeout} s")
    except OSError as e:  # no such program (nvidia-smi on a machine without a driver)
        return subprocess.CompletedProcess(cmd, 127, "", str(e))


def copy_data_sets(src, dst):
    for d in sorted(os.listdir(src)):
        if d.startswith("test_data_set_"):
            shutil.copytree(os.path.join(src, d), os.path.join(dst, d))


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def make(args):
    compiler = os.path.join(args.build, "bin", "kiln-compile")
    runner = os.path.join(args.build, "bin", "kiln-run")
    if os.path.exists(args.dir):
        shutil.rmtree(args.dir)
    os.makedirs(os.path.join(args.dir, "bin"))
    os.makedirs(os.path.join(args.dir, "lib"))
    shutil.copy2(runner, os.path.join(args.dir, "bin", "kiln-run"))
    for line in run(["ldd", runner]).stdout.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if m and not m.group(1).startswith(SYSTEM_LIBS):
            shutil.copy2(m.group(2), os.path.join(args.dir, "lib", m.group(1)))
    flags = ["--target=cuda", "--gpu-arch=" + args.arch]
    manifest = {"arch": args.arch, "models": [], "tests": [], "not_compiled": {}}

    models = [m for m in args.models.split(",") if m] if args.models else []
    for name in models:
        src = os.path.join(args.models_dir, name)
        dst = os.path.join(args.dir, "models", name)
        os.makedirs(dst)
        c = run([compiler, os.path.join(src, "model.onnx"), "-o",
                 os.path.join(dst, "model.so")] + flags, timeout=1800)
        if c.returncode:
            manifest["not_compiled"][name] = (c.stderr.strip().splitlines() or ["?"])[-1]
            shutil.rmtree(dst)
            continue
        copy_data_sets(src, dst)
        manifest["models"].append(name)
        print(f"{name}: {dir_bytes(dst) / 1e6:.1f} MB", flush=True)

    tests = []
    for path in args.tests or []:
        for line in open(path):
            line = line.strip()
            if line and not line.startswith("#"):
                tests.append(line)

    def one(test):
        src = os.path.join(args.data_dir, test)
        dst = os.path.join(args.dir, "tests", test)
        if not os.path.isdir(src):
            return test, "no such test in " + args.data_dir
        os.makedirs(dst)
        c = run([compiler, os.path.join(src, "model.onnx"), "-o",
                 os.path.join(dst, "model.so")] + flags, timeout=300)
        if c.returncode:
            shutil.rmtree(dst)
            return test, (c.stderr.strip().splitlines() or ["?"])[-1]
        for extra in ("model.h", "model.json"):
            if os.path.exists(os.path.join(dst, extra)):
                os.remove(os.path.join(dst, extra))
        copy_data_sets(src, dst)
        return test, None

    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for test, error in pool.map(one, tests):
            if error:
                manifest["not_compiled"][test] = error
            else:
                manifest["tests"].append(test)
    if tests:
        print(f"{len(manifest['tests'])} of {len(tests)} tests compiled for {args.arch} "
              f"in {time.time() - t0:.0f} s", flush=True)
    json.dump(manifest, open(os.path.join(args.dir, "manifest.json"), "w"), indent=1)
    mb = dir_bytes(args.dir) / 1e6
    print(f"{args.dir}: {mb:.1f} MB")
    for k, v in manifest["not_compiled"].items():
        print(f"  not compiled: {k}: {v}")
    if args.archive:
        import tarfile
        path = args.dir.rstrip("/") + ".tar.xz"
        with tarfile.open(path, "w:xz") as tar:
            tar.add(args.dir, arcname=os.path.basename(args.dir.rstrip("/")))
        mb = os.path.getsize(path) / 1e6
        print(f"{path}: {mb:.1f} MB")
    if mb > args.max_mb:
        print(f"bundle.py: {mb:.1f} MB is over --max-mb {args.max_mb}")
        return 1
    return 0


def median_ms(text):
    m = re.search(r"median_ms=([0-9.]+)", text)
    return float(m.group(1)) if m else None


def torch_ms(name, iterations):
    """Median ms of PyTorch eager (fp32, batch 1) on the GPU for a model of
    the same architecture; None when torch or the model is not at hand."""
    try:
        import torch
        import torchvision
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.manual_seed(0)
    if name == "mlp":
        model = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                                    torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                                    torch.nn.Linear(1024, 10))
        x = torch.randn(1, 784)
    elif hasattr(torchvision.models, name):
        model = getattr(torchvision.models, name)(weights=None)
        x = torch.randn(1, 3, 224, 224)
    else:
        return None
    model = model.eval().cuda()
    times = []
    with torch.no_grad():
        for i in range(10 + iterations):
            torch.cuda.synchronize()
            t = time.perf_counter()
            # Host input in, host output out, as kiln-run --bench times it.
            model(x.cuda()).cpu()
            torch.cuda.synchronize()
            if i >= 10:
                times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return times[len(times) // 2]


def run_bundle(args):
    if os.path.isfile(args.dir):  # a `make --archive` tarball
        import tarfile
        import tempfile
        out = tempfile.mkdtemp(prefix="kiln-bundle-")
        with tarfile.open(args.dir) as tar:
            # Members that would land outside `out` (absolute paths, "..",
            # links out of it) are refused, where Python has the filter.
            if hasattr(tarfile, "data_filter"):
                tar.extractall(out, filter="data")
            else:
                tar.extractall(out)
        args.dir = os.path.join(out, os.listdir(out)[0])
    manifest = json.load(open(os.path.join(args.dir, "manifest.json")))
    runner = os.path.join(args.dir, "bin", "kiln-run")
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.path.join(args.dir, "lib") + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    smi = run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
               "--format=csv,noheader"])
    print("GPU:", smi.stdout.strip() or smi.stderr.strip(), "| arch", manifest["arch"], flush=True)
    failed = []
    results = {"gpu": smi.stdout.strip(), "arch": manifest["arch"], "models": [], "tests": {}}
    for name in manifest["models"]:
        d = os.path.join(args.dir, "models", name)
        so = os.path.join(d, "model.so")
        r = {"model": name}
        t = run([runner, so, "--test-data", os.path.join(d, "test_data_set_0"),
                 "--rtol", "1e-3", "--atol", "1e-4"], env=env)
        r["matches"] = t.returncode == 0
        r["check"] = [l for l in (t.stdout + t.stderr).splitlines() if l.strip()][-3:]
        if t.returncode:
            failed.append(name)
        b = run([runner, so, "--bench", "--iterations", str(args.iterations)], env=env)
        r["kiln_gpu_ms"] = median_ms(b.stdout + b.stderr)
        if r["kiln_gpu_ms"] is None:
            r["bench"] = (b.stdout + b.stderr).strip().splitlines()[-2:]
        if args.torch:
            try:
                r["torch_gpu_ms"] = torch_ms(name, args.iterations)
            except Exception as e:  # a timing aid only: report, go on
                r["torch_gpu_ms"] = None
                r["torch_error"] = str(e).splitlines()[0][:200]
        results["models"].append(r)
        print(json.dumps(r), flush=True)

    def one(test):
        d = os.path.join(args.dir, "tests", test)
        so = os.path.join(d, "model.so")
        for ds in sorted(x for x in os.listdir(d) if x.startswith("test_data_set_")):
            t = run([runner, so, "--test-data", os.path.join(d, ds), "--rtol", "1e-3",
                     "--atol", "1e-7"], timeout=120, env=env)
            out = (t.stdout + t.stderr).strip()
            if t.returncode:
                status = {1: "fail-numbers", 2: "run-error", 124: "timeout"}.get(
                    t.returncode, f"crash (exit {t.returncode})")
                bad = [l for l in out.splitlines()
                       if l.startswith("output ") and not l.rstrip().endswith(" ok")]
                return test, status, f"{ds}: " + (bad or out.splitlines() or ["?"])[0][:300]
        return test, "pass", ""

    t0 = time.time()
    counts = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for test, status, message in pool.map(one, manifest["tests"]):
            counts[status] = counts.get(status, 0) + 1
            results["tests"][test] = {"status": status, "message": message}
            if status != "pass":
                failed.append(test)
                print(f"{test}: {status}: {message}", flush=True)
    if manifest["tests"]:
        print(f"tests on the GPU ({time.time() - t0:.0f} s): " +
              ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) +
              f" of {len(manifest['tests'])}", flush=True)
    if args.json:
        json.dump(results, open(args.json, "w"), indent=1)
    print(f"FAILED: {len(failed)}" if failed else "all OK")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make", help="compile models and tests into DIR (build machine)")
    m.add_argument("dir")
    m.add_argument("--build", default=os.path.join(ROOT, "build"))
    m.add_argument("--arch", default="sm_90", choices=["sm_80", "sm_90"])
    m.add_argument("--models-dir", default="/tmp/dev")
    m.add_argument("--models", default="", help="comma-separated model names")
    m.add_argument("--tests", action="append", metavar="LIST",
                   help="a list of SUITE/NAME backend tests (repeatable)")
    m.add_argument("--data-dir", default="/usr/share/libonnx-testdata/data")
    m.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    m.add_argument("--max-mb", type=float, default=48,
                   help="fail if DIR is larger (what a GPU machine's upload allows)")
    m.add_argument("--archive", action="store_true",
                   help="also write DIR.tar.xz (what `run` also takes), and size that")
    r = sub.add_parser("run", help="run DIR on this machine's GPU")
    r.add_argument("dir")
    r.add_argument("--jobs", type=int, default=8)
    r.add_argument("--iterations", type=int, default=200)
    r.add_argument("--json", metavar="FILE")
    r.add_argument("--torch", action="store_true",
                   help="also time PyTorch eager on the GPU for the same architectures")
    args = ap.parse_args()
    return make(args) if args.cmd == "make" else run_bundle(args)


if __name__ == "__main__":
    sys.exit(main())
