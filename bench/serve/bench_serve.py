#!/usr/bin/python3
"""kiln-serve benchmark (not a test). Measures, on this machine:

  (a) overhead: the tiny MLP (x[1,16] -> y[1,4]) in-process with kiln_run
      (direct_run.c) against the same model through kiln-serve over loopback
      (one keep-alive client, JSON and binary requests): p50 and p99.
  (b) throughput with 16 concurrent clients of a small ResNet (x[1,3,64,64]),
      of torchvision's ResNet-18 (x[1,3,224,224]; --only resnet18, from
      bench/models/export.py) and of a wide MLP (x[1,1024], 12 MB of weights, where a batch reads the
      weights once for all its rows): one-variant .so (no batching) against a
      .so with batch variants 1,4,8 (dynamic batching without and with a queue
      delay, and SLO mode). Needs kiln-compile --batch-sizes (or
      --resnet-batched PATH for the ResNet).
  (e) packing along an independent batch at run-time sizes (--only
      transformer): the BERT-style encoder of bench/shapes/symbolic_transformer.py
      (needs torch) compiled once with batch 1..8 and sequence 1..256, 16
      clients sending batch 1 x sequence 64, against a static 1x64 .so (no
      batching); the dynamic .so packs requests of one length along the batch.
  (c) a version swap under sustained load (load v2, unload v1, load v3,
      unload v2 while 8 clients send requests): failed requests.
  (d) 200 keep-alive clients of the tiny MLP: p50 and p99 with one thread
      per connection (the default) and with --http-threads 32.

The load generator (http_bench.cpp) and the baseline (direct_run.c) are built
into the work directory with the system compilers. Everything stays on
127.0.0.1.

usage: bench_serve.py [--build DIR] [--workdir DIR] [--seconds S]
                      [--resnet-batched PATH] [--json OUT]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "test", "serve"))

import numpy as np  # noqa: E402

import models  # noqa: E402
from serve_client import Server, binary_infer_request, json_infer_body  # noqa: E402


def sh(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def build_tools(work):
    hb, dr = f"{work}/http_bench", f"{work}/direct_run"
    sh("c++", "-O2", "-std=c++17", "-pthread", f"{HERE}/http_bench.cpp", "-o", hb)
    sh("cc", "-O2", f"-I{REPO}/runtime/include", f"{HERE}/direct_run.c", "-o", dr, "-ldl")
    return hb, dr


def direct(dr, so, n, warmup, batch=0):
    return json.loads(sh(dr, so, str(n), str(warmup), str(batch)))


def load(hb, port, path, body, headers, clients, seconds=None, requests=None, warmup=50):
    body_file = f"{ARGS.workdir}/body-{os.getpid()}-{threading.get_ident()}.bin"
    with open(body_file, "wb") as f:
        f.write(body)
    cmd = [hb, "--port", str(port), "--path", path, "--body", body_file,
           "--clients", str(clients), "--warmup", str(warmup)]
    for k, v in headers.items():
        cmd += ["--header", f"{k}: {v}"]
    cmd += ["--seconds", str(seconds)] if seconds else ["--requests", str(requests)]
    return json.loads(sh(*cmd))


def batch_stats(server, model):
    m = server.metrics()
    rows = m.get(("kiln_inference_count", model, "1"), 0)
    runs = m.get(("kiln_execution_count", model, "1"), 0)
    pad = m.get(("kiln_padded_rows_total", model, "1"), 0)
    return {"rows_per_batch": rows / runs if runs else 0, "padded_rows": pad}


def bench_overhead(serve_bin, compile_bin, hb, dr, work, results):
    models.Mlp(0).save(f"{work}/mlp.onnx")
    sh(compile_bin, f"{work}/mlp.onnx", "-o", f"{work}/mlp.so")
    base = direct(dr, f"{work}/mlp.so", 200000, 10000)
    results["overhead"] = {"direct": base}
    x = np.random.default_rng(0).standard_normal((1, 16)).astype(np.float32)
    s = Server(serve_bin, ["--model", f"mlp={work}/mlp.so"], f"{work}/overhead.log")
    try:
        path = "/v2/models/mlp/infer"
        jbody = json.dumps(json_infer_body({"x": x})).encode()
        bbody, bheaders = binary_infer_request({"x": x})
        n = ARGS.requests
        results["overhead"]["json"] = load(hb, s.port, path, jbody,
                                           {"Content-Type": "application/json"}, 1,
                                           requests=n, warmup=500)
        results["overhead"]["binary"] = load(hb, s.port, path, bbody, bheaders, 1,
                                             requests=n, warmup=500)
        # The same round trip without a model: an unknown model's 404 goes
        # through the HTTP layer, routing and the JSON error, not the batcher.
        results["overhead"]["http_404_floor"] = load(
            hb, s.port, "/v2/models/no-such-model/infer", jbody,
            {"Content-Type": "application/json"}, 1, requests=n, warmup=500)
        results["overhead"]["json_4_clients"] = load(
            hb, s.port, path, jbody, {"Content-Type": "application/json"}, 4,
            requests=n, warmup=200)
        assert s.terminate() == 0
    finally:
        s.kill()


def bench_throughput(key, save, shape, serve_bin, compile_bin, hb, dr, work, results,
                     prebuilt=None, input_name="x"):
    save(f"{work}/{key}.onnx")
    single = f"{work}/{key}.so"
    sh(compile_bin, f"{work}/{key}.onnx", "-o", single)
    batched, note = prebuilt, None
    if not batched:
        help_text = subprocess.run([compile_bin, "--help"], capture_output=True,
                                   text=True).stdout
        if "--batch-sizes" not in help_text:
            note = "kiln-compile has no --batch-sizes: batching runs skipped"
        else:
            batched = f"{work}/{key}_b.so"
            r = subprocess.run([compile_bin, f"{work}/{key}.onnx", "-o", batched,
                                "--batch-sizes", "1,4,8"], capture_output=True, text=True)
            if r.returncode:
                note = "kiln-compile --batch-sizes failed: " + r.stderr.strip()[:400]
                batched = None
    out = results[key] = {"note": note, "direct": {}, "shape": shape}
    out["direct"]["batch1"] = direct(dr, single, 300, 30)
    if batched:
        for b in (4, 8):
            out["direct"][f"batch{b}"] = direct(dr, batched, 200, 20, b)

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    body, headers = binary_infer_request({input_name: x})
    configs = [("no batching (1 variant)", single, [])]
    if batched:
        p99 = out["direct"]["batch1"]["p50_us"] * 16 / ARGS.threads / 1e3
        configs += [("batching 1,4,8, delay 0", batched, ["--max-queue-delay-us", "0"]),
                    ("batching 1,4,8, delay 2 ms", batched, ["--max-queue-delay-us", "2000"]),
                    (f"batching, SLO p99 {p99:.0f} ms", batched, ["--slo-p99-ms", f"{p99:.1f}"])]
    out["runs"] = serve_runs(serve_bin, hb, configs, body, headers, f"{work}/{key}")


def serve_runs(serve_bin, hb, configs, body, headers, log_prefix):
    """16 clients sending `body` for ARGS.seconds to a server per (label,
    .so, extra flags) in `configs`: throughput, latency and rows per batch."""
    runs = []
    for label, so, extra in configs:
        s = Server(serve_bin, ["--model", f"m={so}", "--threads", str(ARGS.threads), *extra],
                   f"{log_prefix}-{len(runs)}.log")
        try:
            r = load(hb, s.port, "/v2/models/m/infer", body, headers, 16,
                     seconds=ARGS.seconds, warmup=5)
            r.update(batch_stats(s, "m"))
            r["label"] = label
            runs.append(r)
            assert s.terminate() == 0
        finally:
            s.kill()
    return runs


def bench_packing(serve_bin, compile_bin, hb, work, results, seq=64):
    sys.path.insert(0, os.path.join(REPO, "bench", "shapes"))
    from symbolic_transformer import export_encoder
    onnx_path = f"{work}/encoder.onnx"
    export_encoder(onnx_path, 256, 4, 4, 8000, 512)
    static, dynamic = f"{work}/encoder_1x{seq}.so", f"{work}/encoder_dyn.so"
    sh(compile_bin, onnx_path, "-o", static, "--dim", "batch=1", "--dim", f"sequence={seq}")
    sh(compile_bin, onnx_path, "-o", dynamic, "--dim", "batch=1..8",
       "--dim", "sequence=1..256")
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 8000, (1, seq)).astype(np.int64)
    body, headers = binary_infer_request({"input_ids": ids,
                                          "attention_mask": np.ones((1, seq), np.int64)})
    configs = [(f"static 1x{seq}, no batching", static, []),
               ("run-time sizes, delay 0", dynamic, ["--max-queue-delay-us", "0"]),
               ("run-time sizes, delay 2 ms", dynamic, ["--max-queue-delay-us", "2000"])]
    results["transformer"] = {"shape": [1, seq], "runs": serve_runs(
        serve_bin, hb, configs, body, headers, f"{work}/transformer")}


def bench_clients(serve_bin, compile_bin, hb, work, results):
    """200 keep-alive clients of the tiny MLP: with one thread per connection
    (the default) against the fixed 32 threads kiln-serve used to have, where
    a client waits for one of 32 others to hang up."""
    models.Mlp(0).save(f"{work}/mlp.onnx")
    sh(compile_bin, f"{work}/mlp.onnx", "-o", f"{work}/mlp.so")
    x = np.random.default_rng(0).standard_normal((1, 16)).astype(np.float32)
    body, headers = binary_infer_request({"x": x})
    out = results["clients"] = []
    for label, extra in (("one thread per connection (default)", []),
                         ("--http-threads 32", ["--http-threads", "32"])):
        s = Server(serve_bin, ["--model", f"mlp={work}/mlp.so", *extra],
                   f"{work}/clients-{len(out)}.log")
        try:
            r = load(hb, s.port, "/v2/models/mlp/infer", body, headers, 200,
                     seconds=ARGS.seconds, warmup=5)
            r["label"] = label
            out.append(r)
            assert s.terminate() == 0
        finally:
            s.kill()


def onnx_input_name(path):
    import onnx
    return onnx.load(path, load_external_data=False).graph.input[0].name


def bench_swap(serve_bin, compile_bin, hb, work, results):
    for v in (1, 2, 3):
        models.Mlp(v).save(f"{work}/mlp_v{v}.onnx")
        os.makedirs(f"{work}/repo/mlp/{v}", exist_ok=True)
        sh(compile_bin, f"{work}/mlp_v{v}.onnx", "-o", f"{work}/repo/mlp/{v}/model.so")
    s = Server(serve_bin, ["--repository", f"{work}/repo", "--model",
                           f"mlp={work}/repo/mlp/1/model.so@1"], f"{work}/swap.log")
    try:
        x = np.zeros((1, 16), np.float32)
        body = json.dumps(json_infer_body({"x": x})).encode()
        box = {}
        seconds = max(4.0, ARGS.seconds)
        t = threading.Thread(target=lambda: box.update(load(
            hb, s.port, "/v2/models/mlp/infer", body,
            {"Content-Type": "application/json"}, 8, seconds=seconds, warmup=10)))
        t.start()
        steps = []
        time.sleep(seconds / 5)
        for action, version in (("load", 2), ("unload", 1), ("load", 3), ("unload", 2)):
            t0 = time.time()
            status, reply = s.post_json(f"/v2/repository/models/mlp/{action}",
                                        {"parameters": {"version": str(version)}})
            steps.append({"action": action, "version": version, "status": status,
                          "ms": round((time.time() - t0) * 1e3, 1)})
            time.sleep(seconds / 6)
        t.join()
        box["steps"] = steps
        box["serving_after"] = s.get_json("/v2/models/mlp")[1]["versions"]
        results["swap"] = box
        assert s.terminate() == 0
    finally:
        s.kill()


def report(results):
    lines = []
    o = results.get("overhead")
    if o:
        d = o["direct"]
        lines.append("(a) tiny MLP, one client, keep-alive, loopback (microseconds)")
        lines.append(f"  direct kiln_run           p50 {d['p50_us']:8.1f}  p99 {d['p99_us']:8.1f}")
        for k in ("json", "binary", "http_404_floor", "json_4_clients"):
            r = o.get(k)
            if not r:
                continue
            lines.append(f"  kiln-serve {k:14s} p50 {r['p50_us']:8.1f}  p99 {r['p99_us']:8.1f}"
                         f"  ({r['throughput']:.0f} req/s, {r['failures']} failed)")
    for key in ("resnet", "resnet18", "wide_mlp", "transformer"):
        r = results.get(key)
        if not r:
            continue
        if key == "transformer":
            lines.append(f"(e) BERT-style encoder, batch 1 x sequence {r['shape'][1]}, "
                         f"16 clients, binary requests, --threads {ARGS.threads}")
        else:
            lines.append(f"(b) {key} {'x'.join(map(str, r['shape']))}, 16 clients, "
                         f"binary requests, --threads {ARGS.threads}")
            lines.append("  direct kiln_run per call: " + ", ".join(
                f"{k} {d['p50_us'] / 1e3:.2f} ms" for k, d in r["direct"].items()))
            if r["note"]:
                lines.append(f"  note: {r['note']}")
        for run in r["runs"]:
            lines.append(f"  {run['label']:30s} {run['throughput']:8.1f} req/s  "
                         f"p50 {run['p50_us'] / 1e3:7.2f} ms  p99 {run['p99_us'] / 1e3:7.2f} ms  "
                         f"rows/batch {run['rows_per_batch']:.2f}  failed {run['failures']}")
    sw = results.get("swap")
    if sw:
        lines.append("(c) version swap under load (8 clients)")
        lines.append(f"  {sw['requests']} requests in {sw['seconds']:.1f} s, "
                     f"{sw['failures']} failed, statuses {sw['statuses']}")
        lines.append("  steps: " + ", ".join(f"{s['action']} v{s['version']} -> {s['status']} "
                                            f"({s['ms']} ms)" for s in sw["steps"]))
        lines.append(f"  serving afterwards: versions {sw['serving_after']}")
    for run in results.get("clients", []):
        if run is results["clients"][0]:
            lines.append("(d) 200 keep-alive clients, tiny MLP, binary requests")
        lines.append(f"  {run['label']:36s} {run['throughput']:8.0f} req/s  "
                     f"p50 {run['p50_us'] / 1e3:7.2f} ms  p99 {run['p99_us'] / 1e3:7.2f} ms  "
                     f"clients served {run['served_clients']}/{run['clients']}  "
                     f"failed {run['failures']}")
    return "\n".join(lines)


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    p.add_argument("--workdir", default="/tmp/kiln-serve-bench")
    p.add_argument("--seconds", type=float, default=5.0, help="per throughput run")
    p.add_argument("--requests", type=int, default=20000, help="per latency run")
    p.add_argument("--threads", type=int, default=2, help="kiln-serve --threads")
    p.add_argument("--resnet-batched", help="a prebuilt resnet .so with batch variants 1,4,8")
    p.add_argument("--only", choices=["overhead", "resnet", "resnet18", "wide_mlp", "swap",
                                       "clients", "transformer"],
                   action="append")
    p.add_argument("--resnet18", default="/tmp/dev/resnet18/model.onnx",
                   help="torchvision ResNet-18 at 1x3x224x224 for the resnet18 run "
                        "(bench/models/export.py writes it)")
    p.add_argument("--json", help="also write the results here")
    ARGS = p.parse_args()
    serve_bin = f"{ARGS.build}/bin/kiln-serve"
    compile_bin = f"{ARGS.build}/bin/kiln-compile"
    shutil.rmtree(ARGS.workdir, ignore_errors=True)
    os.makedirs(ARGS.workdir)
    hb, dr = build_tools(ARGS.workdir)
    # A private copy, so a rebuild of the tree during the run does not pull
    # the compiler out from under it.
    for _ in range(60):
        try:
            shutil.copy(compile_bin, f"{ARGS.workdir}/kiln-compile")
            compile_bin = f"{ARGS.workdir}/kiln-compile"
            break
        except OSError:
            time.sleep(1)
    results = {"machine": {"cpus": os.cpu_count()}}
    only = ARGS.only or ["overhead", "resnet", "wide_mlp", "swap", "clients"]
    if "overhead" in only:
        bench_overhead(serve_bin, compile_bin, hb, dr, ARGS.workdir, results)
    if "resnet" in only:
        bench_throughput("resnet", models.save_resnet_like, (1, 3, 64, 64), serve_bin,
                         compile_bin, hb, dr, ARGS.workdir, results, ARGS.resnet_batched)
    if "resnet18" in only:
        if os.path.exists(ARGS.resnet18):
            bench_throughput("resnet18", lambda path: shutil.copy(ARGS.resnet18, path),
                             (1, 3, 224, 224), serve_bin, compile_bin, hb, dr,
                             ARGS.workdir, results, input_name=onnx_input_name(ARGS.resnet18))
        else:
            print(f"resnet18: {ARGS.resnet18} not found (run bench/models/export.py); skipped")
    if "wide_mlp" in only:
        bench_throughput("wide_mlp", models.save_wide_mlp, (1, 1024), serve_bin,
                         compile_bin, hb, dr, ARGS.workdir, results)
    if "transformer" in only:
        bench_packing(serve_bin, compile_bin, hb, ARGS.workdir, results)
    if "swap" in only:
        bench_swap(serve_bin, compile_bin, hb, ARGS.workdir, results)
    if "clients" in only:
        bench_clients(serve_bin, compile_bin, hb, ARGS.workdir, results)
    print(report(results))
    if ARGS.json:
        with open(ARGS.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
