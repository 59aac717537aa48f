#!/usr/bin/python3
"""Latency of Kiln against ONNX Runtime, side by side, on the development models.

usage: /usr/bin/python3 bench/perf/run.py MODELS_DIR [--models a,b] [--threads 1,2]
           [--processes 3] [--iterations 100] [--max-seconds 3] [--rounds 5] [--settle-ms 20]
           [--write-docs [PATH]] [--json FILE] [--quick] [--compile-only]
           [--kiln-flags "--precision=bf16"]
           [--kiln-flags "--quantize=static --calibration-data CAL/{model}"]

MODELS_DIR holds bench/models/export.py's output (MODELS_DIR/<name>/model.onnx).
Each model is compiled with kiln-compile when its model.so is missing or older
than the compiler. For every model and thread count, one process pair is
started per repetition: a small C driver that dlopens the .so (kiln_driver.c)
and a node driver for ONNX Runtime's CPU provider (ort_driver.js, npm
onnxruntime-node in bench/.node). Both read the same random inputs (floats
uniform in [-1, 1), integers 0 or 1, as `kiln-run --bench`). After a warm-up
call each, the two are called in turn, Kiln/ORT/Kiln/ORT... (the order flips
every process), each call timing K runs, so that both see the same machine
state. The number of timed runs is --iterations, capped so that the slower
system's runs take about --max-seconds per process (so resnet50_b8 gets few).
A process's latency is the median of its timed runs; the result is the best
(lowest) median over the processes. The FMA peak of one core comes from
fma_peak.c, compiled with cc -O3 -march=native in the same run.

A Kiln session with num_threads = T > 1 splits each large loop nest over a
pool of T threads, the caller included (runtime/src/pool.c); ORT gets
intraOpNumThreads = T.
"""
import argparse
import datetime
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from ort import NODE_DIR, ensure_ort  # noqa: E402
sys.path.insert(0, HERE)
from flops import count_flops  # noqa: E402

DEFAULT_MODELS = ["mlp", "resnet18", "resnet50", "resnet50_b8", "mobilenet_v2",
                  "squeezenet1_1", "transformer_enc", "bert_small"]
QUICK_MODEL = "mlp"
NP_TYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 11: np.float64}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def ort_version():
    try:
        p = os.path.join(NODE_DIR, "node_modules", "onnxruntime-node", "package.json")
        return json.load(open(p))["version"]
    except (OSError, ValueError, KeyError):
        return "?"


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def cpu_ids():
    """'family 26 model 2 stepping 1' from /proc/cpuinfo."""
    ids = {}
    try:
        for line in open("/proc/cpuinfo"):
            k, _, v = line.partition(":")
            k = k.strip()
            if k in ("cpu family", "model", "stepping") and k not in ids:
                ids[k] = v.strip()
            if not line.strip():
                break
    except OSError:
        pass
    return " ".join(f"{k.replace('cpu ', '')} {v}" for k, v in ids.items())


def cpu_flags():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def build(work):
    cc = os.environ.get("CC", "cc")
    drv = os.path.join(work, "kiln_driver")
    subprocess.run([cc, "-O2", "-std=c11", "-I", os.path.join(ROOT, "runtime", "include"),
                    "-o", drv, os.path.join(HERE, "kiln_driver.c"), "-ldl"], check=True)
    return drv


def fma_peak(work, iters, reps):
    """Best GFLOP/s of one core: {isa: gflops}, isa avx512 or avx2 (what
    -march=native targets)."""
    cc = os.environ.get("CC", "cc")
    src = os.path.join(HERE, "fma_peak.c")
    variants = [("native", [])]
    out = {}
    for tag, extra in variants:
        exe = os.path.join(work, f"fma_peak_{tag}")
        try:
            subprocess.run([cc, "-O3", "-march=native"] + extra + ["-o", exe, src], check=True)
            r = subprocess.run([exe, str(iters), str(reps)], check=True, capture_output=True,
                               text=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            log(f"FMA probe failed ({e}); no % of peak")
            continue
        kv = dict(x.split("=", 1) for x in r.split())
        out[kv["isa"]] = max(out.get(kv["isa"], 0.0), float(kv["gflops"]))
    return out


def compile_model(compiler, d, flags=()):
    """model.so, or model.<flags>.so for extra kiln-compile flags."""
    tag = "".join(c if c.isalnum() else "_" for c in "".join(flags)).strip("_")
    onnx_path = os.path.join(d, "model.onnx")
    so = os.path.join(d, f"model.{tag}.so" if tag else "model.so")
    # Compiled by this kiln-compile from this model.onnx (a model rewritten
    # in place, e.g. by bench/models/convert.py, is compiled again).
    if os.path.exists(so) and os.path.getmtime(so) >= max(os.path.getmtime(compiler),
                                                          os.path.getmtime(onnx_path)):
        return so, None
    log(f"  compiling {onnx_path} {' '.join(flags)}")
    t0 = time.time()
    r = subprocess.run([compiler, onnx_path, "-o", so, *flags], capture_output=True,
                       text=True)
    if r.returncode:
        return None, (r.stderr.strip().splitlines() or ["kiln-compile failed"])[0]
    log(f"  compiled in {time.time() - t0:.1f} s")
    return so, None


def make_inputs(onnx_path, work, name, seed):
    """Random inputs for the graph's non-initializer inputs, as raw files."""
    m = onnx.load(onnx_path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    rng = np.random.default_rng(seed)
    spec = []
    for i, vi in enumerate(x for x in m.graph.input if x.name not in inits):
        tt = vi.type.tensor_type
        shape = [d.dim_value for d in tt.shape.dim]
        if any(s <= 0 for s in shape):
            raise SystemExit(f"{name}: input {vi.name} has a symbolic shape {shape}")
        dt = NP_TYPES[tt.elem_type]
        if np.issubdtype(dt, np.floating):
            a = rng.uniform(-1.0, 1.0, size=shape).astype(dt)
        else:
            a = rng.integers(0, 2, size=shape).astype(dt)
        f = os.path.join(work, f"{name}_in{i}.bin")
        a.tofile(f)
        spec.append({"name": vi.name, "dtype": str(a.dtype), "shape": shape, "file": f})
    return spec


class Driver:
    def __init__(self, cmd, env=None):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  env=env, bufsize=1)

    def call(self, line):
        try:
            self.p.stdin.write(line + "\n")
            self.p.stdin.flush()
        except OSError:
            pass
        r = self.p.stdout.readline().split()
        if not r or r[0] != "ok":
            self.p.kill()
            raise RuntimeError(f"driver {self.p.args[:2]} failed on '{line}'")
        return [float(x) for x in r[1:]]

    def close(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def one_process(drivers, order, warmup, iterations, max_seconds, rounds, settle_ms):
    """Warm up both, then alternate, pausing settle_ms before each call so that the
    other system's idle threads have stopped spinning and cannot share the cores
    with this system's workers. Returns ({system: [ms...]}, runs per system)."""
    first = {}
    for s in order:
        t = drivers[s].call("run 1")
        # More warm-up runs only where they are cheap (not for resnet50_b8).
        if warmup > 1 and t[0] * (warmup - 1) < max_seconds * 1000 / 4:
            t = drivers[s].call(f"run {warmup - 1}")
        first[s] = statistics.median(t)
    # n runs per system in `rounds` calls of k, capped by the time budget of the
    # slower system; at least 3 runs.
    slowest = max(first.values())
    n = max(3, min(iterations, int(max_seconds * 1000 / max(slowest, 1e-3))))
    r = min(rounds, n)
    k = math.ceil(n / r)
    samples = {s: [] for s in order}
    for _ in range(r):
        for s in order:
            time.sleep(settle_ms / 1000)
            samples[s] += drivers[s].call(f"run {k}")
    return samples, k * r


def check_outputs(drivers, work, name, onnx_path):
    """Max abs difference between Kiln's and ORT's output 0 (after the last run)."""
    m = onnx.load(onnx_path, load_external_data=False)
    dt = NP_TYPES.get(m.graph.output[0].type.tensor_type.elem_type, np.float32)
    arrs = {}
    for s, d in drivers.items():
        f = os.path.join(work, f"{name}_{s}_out0.bin")
        d.call(f"dump {f}")
        arrs[s] = np.fromfile(f, dtype=dt)
    a, b = arrs["kiln"].astype(np.float64), arrs["ort"].astype(np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x, spec=".2f"):
    return "—" if x is None else format(x, spec)


def tables(res):
    peak = res["peak_gflops"]
    lines = []
    for t in res["threads"]:
        rows = [r for r in res["results"] if r["threads"] == t]
        lines.append(f"**{t} thread{'s' if t > 1 else ''}** (ORT intraOpNumThreads={t}; Kiln "
                     f"num_threads={t})")
        lines.append("")
        lines.append("| model | GFLOP | Kiln ms | ORT ms | Kiln/ORT | Kiln GFLOP/s | % peak | "
                     "ORT GFLOP/s | % peak | iters | max \\|Δ\\| |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            if r.get("error"):
                lines.append(f"| {r['model']} | — | — | — | — | — | — | — | — | — | — |  "
                             f"<!-- {r['error']} -->")
                continue
            g = r["gflop"]
            kg, og = g / r["kiln_ms"] * 1e3, g / r["ort_ms"] * 1e3
            # % of peak: the single-core peak times the threads used.
            kp = f"{100 * kg / (peak * t):.1f}%" if peak else "—"
            op = f"{100 * og / (peak * t):.1f}%" if peak else "—"
            lines.append(f"| {r['model']} | {g:.3f} | {r['kiln_ms']:.3f} | {r['ort_ms']:.3f} | "
                         f"{r['ratio']:.2f} | {kg:.1f} | {kp} | {og:.1f} | {op} | "
                         f"{r['iterations']} | {r['max_abs_diff']:.2g} |")
        gm = res["geomean_ratio"].get(str(t))
        lines.append(f"| **geomean** | | | | **{fmt(gm)}** | | | | | | |")
        lines.append("")
    return "\n".join(lines)


def write_docs(res, path):
    peak = res["peak"]
    cpus = sorted({r.get("kiln_cpu") for r in res["results"] if r.get("kiln_cpu")})
    kcpu = f": `--mcpu={', '.join(cpus)}`" if cpus else ""
    text = f"""# Benchmarks

Latency of Kiln-compiled models against ONNX Runtime on the same machine, in the same run, on the
same inputs. Produced by `bench/perf/run.py` (issue 5); regenerate this page with the command
below.

## Setup

- Date: {res['date']}
- CPU: {res['cpu']} ({res['cpu_ids']}; {res['isa']}; {res['nproc']} logical CPUs visible), load average at the start
  {res['loadavg_start']}, at the end {res['loadavg_end']}
- Kernel: {res['kernel']}
- ONNX Runtime {res['ort_version']} (npm `onnxruntime-node`, CPU execution provider,
  `intraOpNumThreads` = threads, one inter-op thread, sequential, all graph optimizations)
- Kiln: `build/bin/kiln-compile` with its defaults (host CPU{kcpu}, -O3), called through the C ABI
- Command: `{res['command']}`

Peak of one core, measured in the same run by `bench/perf/fma_peak.c` (16 independent chains, 12 on AVX2, of
packed fp32 FMAs on registers, `cc -O3 -march=native`, best of {res['probe_reps']} timed repetitions, probed at the
start and at the end of the run): **{', '.join(f'{k} {v:.1f} GFLOP/s' for k, v in peak.items())}** (start
{', '.join(f'{v:.1f}' for v in res['peak_probes']['start'].values())}, end {', '.join(f'{v:.1f}' for v in res['peak_probes']['end'].values())}). The clock boosts and the machine is
shared, so the probe varies by tens of percent from run to run.
"% peak" uses the best of these ({fmt(res['peak_gflops'], '.1f')} GFLOP/s) times the number of threads the
system used (the thread count, for both).

## Method

For each model and thread count, each of {res['processes']} repetitions starts a fresh process pair:
`kiln_driver` (dlopens the `.so`, one session, preallocated outputs) and `node ort_driver.js`
(one `InferenceSession`). Both read the same random inputs (floats uniform in [-1, 1), integers 0
or 1). Each gets a warm-up call ({res['warmup']} runs, or 1 where a run is slow), then they are called
in turn, Kiln/ORT/Kiln/ORT… (up to {res['rounds']} calls each; the first system alternates between
repetitions), each call timing K single runs, so that both systems see the same machine state.
Each call starts {res.get('settle_ms', 0):g} ms after the one before, when the other system's idle
threads have stopped spinning (an A/B of 0 against 20 ms on two threads showed no difference
within this host's noise; the pause only rules that interference out). Timed
runs per system and repetition ("iters"): up to {res['iterations']}, capped so that the slower
system's timed runs take about {res['max_seconds']:g} s, and at least 3. A repetition's latency is the median of its timed
runs; the table shows the best median over the repetitions. ORT's times include the node binding's
per-call overhead (tensor wrapping, output allocation), which matters only for `mlp`.

GFLOP counts 2 × multiply-accumulates of Conv, Gemm and MatMul nodes from ONNX shape inference
(`bench/perf/flops.py`); other ops are not counted. Kiln/ORT < 1 means Kiln is faster.
max |Δ| is the largest absolute difference between the two systems' output 0 after the first
repetition (a check that both ran the same computation).

**Threads.** A Kiln session with `num_threads = T > 1` runs each large loop nest (a
convolution's output rows, a matmul's row blocks) on a pool of T threads, the caller included
(runtime/src/pool.c); ORT uses `intraOpNumThreads = T`. Both systems' idle threads spin for a
while after a call (Kiln's workers up to 0.5 ms); the pause before each call keeps that spinning
out of the other system's timed runs.{res['note']}

## Running it

```
/usr/bin/python3 bench/models/export.py /tmp/dev            # the development models
/usr/bin/python3 bench/perf/run.py /tmp/dev --write-docs --json perf.json
/usr/bin/python3 bench/perf/run.py /tmp/dev --quick         # smoke test: mlp, 1 process, seconds
```

| option | meaning |
|---|---|
| `--models a,b` | model folders under MODELS_DIR (default: the eight development models) |
| `--threads 1,2` | thread counts (ORT `intraOpNumThreads`, Kiln `num_threads`) |
| `--processes N` | fresh process pairs per model and thread count; the best median wins (default 3) |
| `--iterations N` | timed runs per system and process, at most (default 100) |
| `--max-seconds S` | time budget of the slower system's timed runs per process (default 3) |
| `--rounds R` | alternating calls per system and process (default 5) |
| `--settle-ms MS` | pause before each timed call (default 20) |
| `--quick` | `mlp` only (or `--models`), 1 process, 10 runs; for CI smoke tests |
| `--compile-only` | only (re)compile the `.so` files that are missing or older than `kiln-compile` |
| `--write-docs [PATH]`, `--json FILE` | write this page (default `docs/benchmarks.md`) or the raw results |
| `--from-json FILE` | measure nothing; re-render the page from a `--json` file (with `--write-docs`, `--note`) |

Files: `bench/perf/run.py` (driver), `kiln_driver.c` (Kiln side, built with `cc` at run time),
`ort_driver.js` (ORT side), `fma_peak.c` (peak probe), `flops.py` (FLOP counts).

## Results

{tables(res)}
Geometric mean of Kiln/ORT: {', '.join(f'{t} thread(s) {fmt(v)}' for t, v in res['geomean_ratio'].items())}.
"""
    open(path, "w").write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("models_dir")
    ap.add_argument("--models", default=None,
                    help="comma-separated names under MODELS_DIR")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=100,
                    help="timed runs per system and process, at most")
    ap.add_argument("--max-seconds", type=float, default=3.0,
                    help="time budget of one system's timed runs per process")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs per driver first")
    ap.add_argument("--rounds", type=int, default=5, help="alternating calls per system")
    ap.add_argument("--settle-ms", type=float, default=20,
                    help="pause before each timed call, so that the other system's idle "
                         "threads have stopped spinning")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke test: {QUICK_MODEL} only, 1 process, few iterations")
    ap.add_argument("--write-docs", nargs="?", const=os.path.join(ROOT, "docs", "benchmarks.md"),
                    metavar="PATH", help="write the results page (default docs/benchmarks.md)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument("--note", default="", help="extra sentence for the docs")
    ap.add_argument("--from-json", metavar="FILE",
                    help="measure nothing: re-render --write-docs from a --json file")
    ap.add_argument("--kiln-flags", default="",
                    help="extra kiln-compile flags, e.g. --precision=bf16 (the .so is "
                         "model.<flags>.so; the docs are not rewritten); {model} "
                         "stands for the model's name, e.g. in a --calibration-data "
                         "folder per model")
    ap.add_argument("--compile-only", action="store_true",
                    help="only (re)compile the models that need it")
    args = ap.parse_args()
    if args.quick:
        args.models = args.models or QUICK_MODEL
        args.processes, args.iterations = 1, 10
        args.rounds, args.warmup, args.max_seconds = 2, 2, 1.0
    if args.from_json:
        res = json.load(open(args.from_json))
        if args.note:
            res["note"] = " " + args.note
        print(tables(res))
        if args.write_docs:
            write_docs(res, args.write_docs)
            log(f"wrote {args.write_docs}")
        return 0
    threads = [int(x) for x in args.threads.split(",")]
    flags = args.kiln_flags.split()
    if flags and args.write_docs:
        sys.exit("--write-docs records the default build; drop --kiln-flags")
    names = [x for x in (args.models or ",".join(DEFAULT_MODELS)).split(",") if x]

    ensure_ort()
    compiler = os.path.join(args.build, "bin", "kiln-compile")
    if args.compile_only:
        bad = 0
        for name in names:
            log(f"{name}:")
            err = compile_model(compiler, os.path.join(args.models_dir, name),
                                [f.replace("{model}", name) for f in flags])[1]
            if err:
                log(f"  {err}")
                bad += 1
        return 1 if bad else 0
    work = tempfile.mkdtemp(prefix="kiln-perf-")
    start_load = "%.2f %.2f %.2f" % os.getloadavg()
    try:
        driver = build(work)
        probe = (2_000_000, 5) if args.quick else (5_000_000, 20)
        peak = fma_peak(work, *probe)
        log(f"FMA peak (1 core): {peak}")
        env = dict(os.environ, NODE_PATH=os.path.join(NODE_DIR, "node_modules"))
        results = []
        for name in names:
            d = os.path.join(args.models_dir, name)
            onnx_path = os.path.join(d, "model.onnx")
            log(f"{name}:")
            if not os.path.exists(onnx_path):
                for t in threads:
                    results.append({"model": name, "threads": t, "error": f"no {onnx_path}"})
                continue
            so, err = compile_model(compiler, d,
                                    [f.replace("{model}", name) for f in flags])
            gflop = count_flops(onnx_path)[0] / 1e9
            try:
                kcpu = json.load(open(os.path.join(d, "model.json"))).get("cpu", "?")
            except (OSError, ValueError):
                kcpu = "?"
            spec = make_inputs(onnx_path, work, name, args.seed) if so else None
            if spec is not None:
                spec_path = os.path.join(work, f"{name}.json")
                json.dump(spec, open(spec_path, "w"))
            for t in threads:
                if err:
                    results.append({"model": name, "threads": t, "error": err})
                    continue
                best = {"kiln": None, "ort": None}
                per_proc, iters, diff = {"kiln": [], "ort": []}, 0, 0.0
                err = None
                for p in range(args.processes):
                    drivers = {
                        "kiln": Driver([driver, so, str(t)] + [s["file"] for s in spec]),
                        "ort": Driver(["node", os.path.join(HERE, "ort_driver.js"), onnx_path,
                                       str(t), spec_path], env),
                    }
                    order = ["kiln", "ort"] if p % 2 == 0 else ["ort", "kiln"]
                    try:
                        samples, iters = one_process(drivers, order, args.warmup,
                                                     args.iterations, args.max_seconds,
                                                     args.rounds, args.settle_ms)
                        if p == 0:
                            diff = check_outputs(drivers, work, name, onnx_path)
                    except RuntimeError as e:
                        err = str(e)
                        break
                    finally:
                        for dr in drivers.values():
                            dr.close()
                    for s in samples:
                        med = statistics.median(samples[s])
                        per_proc[s].append(med)
                        best[s] = med if best[s] is None else min(best[s], med)
                    log(f"  threads={t} process {p}: kiln {statistics.median(samples['kiln']):.3f} "
                        f"ms, ort {statistics.median(samples['ort']):.3f} ms ({iters} runs each)")
                if err:
                    log(f"  {name}: {err}")
                    results.append({"model": name, "threads": t, "error": err})
                    err = None
                    continue
                results.append({"model": name, "threads": t, "gflop": gflop, "kiln_cpu": kcpu,
                                 "kiln_ms": best["kiln"], "ort_ms": best["ort"],
                                 "ratio": best["kiln"] / best["ort"],
                                 "kiln_process_medians_ms": per_proc["kiln"],
                                 "ort_process_medians_ms": per_proc["ort"],
                                 "iterations": iters, "max_abs_diff": diff})
        # Probe again at the end; the machine may have been busier at the start.
        peak_end = fma_peak(work, *probe)
        probes = {"start": peak, "end": peak_end}
        peak = {isa: max(peak.get(isa, 0.0), g) for isa, g in peak_end.items()}
        peak_gflops = max(peak.values()) if peak else None
        log(f"FMA peak (1 core): start {probes['start']}, end {peak_end}")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    res = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(), "cpu_ids": cpu_ids(),
        "isa": ",".join(f for f in ("avx512f", "avx512_bf16", "avx2", "fma") if f in cpu_flags()),
        "nproc": os.cpu_count(), "kernel": platform.release(),
        "loadavg_start": start_load, "loadavg_end": "%.2f %.2f %.2f" % os.getloadavg(),
        "ort_version": ort_version(),
        "command": "/usr/bin/python3 bench/perf/run.py " + " ".join(sys.argv[1:]),
        "processes": args.processes, "iterations": args.iterations, "warmup": args.warmup,
        "rounds": args.rounds, "max_seconds": args.max_seconds, "threads": threads,
        "settle_ms": args.settle_ms,
        "peak": peak, "peak_gflops": peak_gflops, "peak_probes": probes, "probe_reps": probe[1],
        "note": (" " + args.note) if args.note else "",
        "results": results,
        "geomean_ratio": {str(t): geomean([r.get("ratio") for r in results
                                           if r["threads"] == t]) for t in threads},
    }
    print(f"CPU: {res['cpu']}; FMA peak 1 core: "
          + ", ".join(f"{k} {v:.1f} GFLOP/s" for k, v in peak.items()))
    print(tables(res))
    for t, g in res["geomean_ratio"].items():
        print(f"geomean Kiln/ORT, {t} thread(s): {fmt(g, '.3f')}")
    if args.json:
        json.dump(res, open(args.json, "w"), indent=1)
    if args.write_docs:
        write_docs(res, args.write_docs)
        log(f"wrote {args.write_docs}")
    if any(r.get("error") for r in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
