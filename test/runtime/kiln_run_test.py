#!/usr/bin/env python3
"""End-to-end test of kiln-run against the hand-written model in cli_model.c.

Writes ONNX backend-test-style folders (input_<i>.pb, output_<i>.pb) with
numpy + onnx, runs kiln-run on them and checks exit codes and output text.
Registered with ctest as `kiln_run_cli`; run it by hand with the same
arguments (see CMakeLists.txt) to debug.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, mapping, numpy_helper

FAILURES = []


def check(condition, what, result=None):
    if condition:
        print(f"ok: {what}")
        return
    FAILURES.append(what)
    print(f"FAIL: {what}")
    if result is not None:
        print(f"  exit code {result.returncode}")
        print("  stdout:\n    " + result.stdout.replace("\n", "\n    "))
        print("  stderr:\n    " + result.stderr.replace("\n", "\n    "))


def reference(inputs):
    """The numpy version of cli_model.c."""
    x, idx, mask, h, s = inputs
    return [
        (x + idx.astype(np.float32)).astype(np.float32),
        idx + 1,
        np.logical_not(mask),
        -h,
        np.array(2 * s, dtype=np.int32),
    ]


def sample_inputs():
    return [
        np.array([[0.5, -1.25, 3.0], [np.nan, 2.0, -0.0]], dtype=np.float32),
        np.array([1, -2, 3_000_000_000], dtype=np.int64),
        np.array([True, False]),
        np.array([1.5, -2.0, 0.0, np.inf], dtype=np.float16),
        np.array(21, dtype=np.int32),
    ]


def write(folder, prefix, arrays, names=None):
    os.makedirs(folder, exist_ok=True)
    for i, a in enumerate(arrays):
        name = names[i] if names else f"{prefix}{i}"
        with open(os.path.join(folder, f"{prefix}_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())


def write_typed(folder, prefix, arrays):
    """Like write(), but with values in the typed repeated fields, not raw_data."""
    os.makedirs(folder, exist_ok=True)
    for i, a in enumerate(arrays):
        t = TensorProto()
        t.name = f"t{i}"
        t.dims.extend(a.shape)
        t.data_type = mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
        flat = a.flatten()
        if a.dtype == np.float32:
            t.float_data.extend(flat.tolist())
        elif a.dtype == np.float64:
            t.double_data.extend(flat.tolist())
        elif a.dtype == np.int64:
            t.int64_data.extend(flat.tolist())
        elif a.dtype in (np.uint32, np.uint64):
            t.uint64_data.extend(flat.tolist())
        elif a.dtype == np.float16:  # the IEEE half bits, in int32_data
            t.int32_data.extend(flat.view(np.uint16).tolist())
        else:  # int32, int16, int8, uint16, uint8, bool
            t.int32_data.extend(flat.astype(np.int32).tolist())
        with open(os.path.join(folder, f"{prefix}_{i}.pb"), "wb") as f:
            f.write(t.SerializeToString())


class Runner:
    def __init__(self, kiln_run):
        self.kiln_run = kiln_run

    def __call__(self, *args):
        return subprocess.run(
            [self.kiln_run, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=120,
        )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kiln-run", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--bad-isa-model", required=True)
    p.add_argument("--bad-abi-model", required=True)
    p.add_argument("--no-runtime-model", required=True)
    p.add_argument("--workdir", required=True)
    args = p.parse_args()

    run = Runner(args.kiln_run)
    model = args.model
    work = args.workdir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    inputs = sample_inputs()
    outputs = reference(inputs)

    # --- --test-data: a passing folder, raw_data and typed fields -----------
    good = os.path.join(work, "good")
    write(good, "input", inputs)
    write(good, "output", outputs)
    r = run(model, "--test-data", good)
    check(r.returncode == 0, "raw_data test folder passes", r)
    check("PASS: 5 of 5" in r.stdout, "summary line says PASS", r)
    check("output 0 'y' float32 [2,3]: max_abs_err=0" in r.stdout,
          "per-output line names output, dtype, shape, error", r)
    check("output 4 's2' int32 []" in r.stdout, "scalar output shape []", r)

    typed = os.path.join(work, "typed")
    write_typed(typed, "input", inputs)
    write_typed(typed, "output", outputs)
    r = run(model, "--test-data", typed)
    check(r.returncode == 0, "typed-field test folder passes", r)

    # --- tolerances ---------------------------------------------------------
    close = os.path.join(work, "close")
    write(close, "input", inputs)
    nudged = [o.copy() for o in outputs]
    nudged[0][0, 0] *= 1 + 1e-5
    write(close, "output", nudged)
    r = run(model, "--test-data", close)
    check(r.returncode == 0, "a 1e-5 relative error is within the default rtol", r)
    r = run(model, "--test-data", close, "--rtol", "0", "--atol", "0")
    check(r.returncode == 1, "the same error fails with --rtol 0 --atol 0", r)
    r = run(model, "--test-data", close, "--rtol", "0", "--atol", "1e-4")
    check(r.returncode == 0, "--atol alone can accept it", r)
    y0 = outputs[0].astype(np.float64)
    finite = np.isfinite(y0)
    want_l2 = abs(y0[0, 0]) * 1e-5 / np.linalg.norm(y0[finite])
    shown = [w for w in r.stdout.split() if w.startswith("rel_l2=")]
    check(shown and abs(float(shown[0][7:]) - want_l2) <= 0.05 * want_l2,
          f"rel_l2 printed for output 0 ({want_l2:.3g})", r)

    # An error of 2e-3 on y[0,0] = 1.5: outside ONNX's backend-test tolerance
    # (1e-7 + 1e-3 * 1.5), inside onnx_test_runner's (1e-3 + 1e-3 * 1.5).
    loose = os.path.join(work, "loose")
    write(loose, "input", inputs)
    nudged = [o.copy() for o in outputs]
    nudged[0][0, 0] += 2e-3
    write(loose, "output", nudged)
    r = run(model, "--test-data", loose)
    check(r.returncode == 1 and "rtol=0.001 atol=1e-07" in r.stdout,
          "a 2e-3 error fails the default (onnx) tolerance", r)
    r = run(model, "--test-data", loose, "--tolerance", "ort")
    check(r.returncode == 0 and "rtol=0.001 atol=0.001" in r.stdout,
          "--tolerance ort accepts it", r)
    r = run(model, "--test-data", loose, "--tolerance", "ort", "--atol", "0")
    check(r.returncode == 1, "--atol overrides the preset", r)

    # --- mismatches -----------------------------------------------------------
    wrong = os.path.join(work, "wrong")
    write(wrong, "input", inputs)
    bad = [o.copy() for o in outputs]
    bad[0][1, 1] = 7.0
    bad[1][2] += 1  # off by one in a value no double holds exactly
    bad[2][0] = not bad[2][0]
    write(wrong, "output", bad)
    r = run(model, "--test-data", wrong)
    check(r.returncode == 1, "wrong outputs exit 1", r)
    check("mismatches=1/6 first at [1,1] (flat 4): got 0 want 7 FAILED"
          in r.stdout, "float mismatch names index and both values", r)
    check("got 3000000001 want 3000000002" in r.stdout,
          "int64 compared exactly and printed exactly", r)
    check("got false want true" in r.stdout, "bool mismatch printed", r)
    check("FAIL: 2 of 5" in r.stdout, "summary line says FAIL", r)

    nan_miss = os.path.join(work, "nan_miss")
    write(nan_miss, "input", inputs)
    bad = [o.copy() for o in outputs]
    bad[0][1, 0] = 1.0  # the model produces NaN here
    write(nan_miss, "output", bad)
    r = run(model, "--test-data", nan_miss)
    check(r.returncode == 1 and "max_abs_err=inf" in r.stdout,
          "NaN against a number is a mismatch", r)

    shape_miss = os.path.join(work, "shape_miss")
    write(shape_miss, "input", inputs)
    bad = list(outputs)
    bad[0] = outputs[0].reshape(3, 2)
    write(shape_miss, "output", bad)
    r = run(model, "--test-data", shape_miss)
    check(r.returncode == 1 and "output_0.pb holds float32 [3,2]" in r.stdout,
          "reference of another shape is a failure", r)

    # --- no references: run, save, read back ----------------------------------
    no_ref = os.path.join(work, "no_ref")
    write(no_ref, "input", inputs)
    saved = os.path.join(work, "saved")
    r = run(model, "--test-data", no_ref, "--save-outputs", saved)
    check(r.returncode == 0 and "no output_*.pb" in r.stdout,
          "a folder without output_*.pb just runs", r)
    names = ["y", "idx1", "nmask", "hneg", "s2"]
    for i, want in enumerate(outputs):
        path = os.path.join(saved, f"output_{i}.pb")
        if not os.path.exists(path):
            check(False, f"--save-outputs wrote {path}")
            continue
        t = TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        got = numpy_helper.to_array(t)
        check(t.name == names[i] and t.HasField("raw_data")
              and got.dtype == want.dtype and got.shape == want.shape
              and np.array_equal(got, want, equal_nan=True),
              f"saved output {i} ({names[i]}) round-trips")
    write(saved, "input", inputs)
    r = run(model, "--test-data", saved)
    check(r.returncode == 0, "saved outputs pass as references", r)

    # --- input errors: exit 2 with the file and the model input named ---------
    def input_error(tag, arrays, expect, writer=write):
        folder = os.path.join(work, tag)
        writer(folder, "input", arrays)
        r = run(model, "--test-data", folder)
        check(r.returncode == 2 and "kiln-run: error: " in r.stderr
              and all(e in r.stderr for e in expect), f"input error: {tag}", r)

    bad = list(inputs)
    bad[1] = inputs[1].astype(np.int32)
    input_error("wrong_dtype", bad,
                ["input_1.pb holds int32", "model input 1 'idx' int64 [3]"])
    bad = list(inputs)
    bad[0] = inputs[0].reshape(3, 2)
    input_error("wrong_shape", bad,
                ["input_0.pb has shape [3,2]", "model input 0 'x'", "needs [2,3]"])
    input_error("missing_input", inputs[:3],
                ["input_3.pb is missing", "model input 3 is 'h' float16 [4]"])
    input_error("extra_input", inputs + [inputs[0]],
                ["input_5.pb exists but the model has only 5 inputs"])

    corrupt = os.path.join(work, "corrupt")
    write(corrupt, "input", inputs)
    with open(os.path.join(corrupt, "input_2.pb"), "wb") as f:
        f.write(b"\xff\xff\xff\xff not a protobuf")
    r = run(model, "--test-data", corrupt)
    check(r.returncode == 2 and "input_2.pb: not a serialized onnx.TensorProto"
          in r.stderr, "corrupt .pb is reported", r)

    short_raw = os.path.join(work, "short_raw")
    write(short_raw, "input", inputs)
    t = numpy_helper.from_array(inputs[0], "x")
    t.raw_data = t.raw_data[:-4]
    with open(os.path.join(short_raw, "input_0.pb"), "wb") as f:
        f.write(t.SerializeToString())
    r = run(model, "--test-data", short_raw)
    check(r.returncode == 2 and "raw_data has 20 bytes" in r.stderr
          and "needs 24" in r.stderr, "short raw_data is reported", r)

    # int4 packs two elements a byte: [2,3] needs 3 bytes, not 1.
    short_packed = os.path.join(work, "short_packed")
    write(short_packed, "input", inputs)
    t = TensorProto()
    t.dims.extend([2, 3])
    t.data_type = 22  # INT4 (ONNX 1.23; Debian's onnx predates the name)
    t.raw_data = b"\x21"
    with open(os.path.join(short_packed, "input_0.pb"), "wb") as f:
        f.write(t.SerializeToString())
    r = run(model, "--test-data", short_packed)
    check(r.returncode == 2 and "raw_data holds 1 packed bytes" in r.stderr
          and "int4 [2,3] needs 3" in r.stderr, "short packed int4 is reported", r)

    short_typed = os.path.join(work, "short_typed")
    write(short_typed, "input", inputs)
    t = TensorProto()
    t.dims.extend([2, 3])
    t.data_type = TensorProto.FLOAT
    t.float_data.extend([1.0] * 5)
    with open(os.path.join(short_typed, "input_0.pb"), "wb") as f:
        f.write(t.SerializeToString())
    r = run(model, "--test-data", short_typed)
    check(r.returncode == 2 and "float_data holds 5 values" in r.stderr,
          "short float_data is reported", r)

    empty = os.path.join(work, "empty")
    write(empty, "input", inputs)
    open(os.path.join(empty, "input_0.pb"), "wb").close()
    r = run(model, "--test-data", empty)
    check(r.returncode == 2 and "input_0.pb: data_type is not set" in r.stderr,
          "empty .pb is reported", r)

    not_file = os.path.join(work, "not_file")
    write(not_file, "input", inputs)
    os.remove(os.path.join(not_file, "input_1.pb"))
    os.mkdir(os.path.join(not_file, "input_1.pb"))
    r = run(model, "--test-data", not_file)
    check(r.returncode == 2 and "input_1.pb: not a regular file" in r.stderr,
          "a folder named like a .pb is reported", r)

    r = run(model, "--test-data", os.path.join(work, "does_not_exist"))
    check(r.returncode == 2 and "is not a directory" in r.stderr,
          "missing folder is reported", r)

    # --- load and ABI errors ----------------------------------------------------
    r = run(args.bad_isa_model, "--test-data", good)
    check(r.returncode == 2 and "kiln_session_create failed" in r.stderr
          and "lacks 'notafeature'" in r.stderr,
          "a CPU-feature failure prints the runtime message", r)
    r = run(args.bad_isa_model, "--info")
    check(r.returncode == 0 and "unsupported: this CPU lacks 'notafeature'"
          in r.stdout, "--info reports an unsupported CPU", r)
    r = run(args.bad_abi_model, "--info")
    check(r.returncode == 2 and "ABI version 99" in r.stderr,
          "a model for another ABI version is refused", r)
    r = run(args.no_runtime_model, "--info")
    check(r.returncode == 2 and "does not export kiln_get_model_info"
          in r.stderr, "a .so without the runtime is refused", r)
    r = run(os.path.join(work, "nothing.so"), "--info")
    check(r.returncode == 2 and "cannot load" in r.stderr,
          "a missing .so is reported", r)
    garbage = os.path.join(work, "garbage.so")
    with open(garbage, "w") as f:
        f.write("not an ELF file\n")
    r = run(garbage, "--info")
    check(r.returncode == 2 and "cannot load" in r.stderr,
          "a non-ELF .so is reported", r)

    # --- usage errors -------------------------------------------------------------
    for argv, what in [
        ([model], "no mode"),
        ([], "no model"),
        ([model, "--bench", "--info"], "two modes"),
        ([model, "--bench", "--iterations", "0"], "zero iterations"),
        ([model, "--bench", "--threads", "-1"], "negative threads"),
        ([model, "--info", "--rtol", "1"], "--rtol without --test-data"),
        ([model, "--test-data", good, "--rtol", "-1"], "negative rtol"),
    ]:
        r = run(*argv)
        check(r.returncode == 2 and r.stderr.startswith("kiln-run: error: "),
              f"usage error: {what}", r)
    r = run("--help")
    check(r.returncode == 0 and "--test-data" in r.stdout, "--help", r)

    # --- --bench and --info ---------------------------------------------------------
    r = run(model, "--bench", "--iterations", "20", "--warmup", "2",
            "--threads", "2")
    last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    check(r.returncode == 0 and "median_ms=" in last
          and "model=cli_model iterations=20 threads=2" in last,
          "--bench prints the summary line", r)
    for key in ("min", "mean", "median", "p90", "max"):
        check(f"  {key} " in r.stdout, f"--bench prints {key}", r)

    r = run(model, "--info")
    for text in ["model:            cli_model", "hash:             feedface",
                 "compiler version: kiln-test 0", "compile options:  --fake",
                 "target triple:    x86_64-unknown-linux-gnu",
                 "cpu:              x86-64-v3",
                 "required isa:     sse4.2,avx2",
                 "this machine:     supported",
                 "arena:            128 bytes, aligned to 64 bytes",
                 "inputs (5):", "  3 'h' float16 [4]", "  4 's' int32 []",
                 "outputs (5):", "  2 'nmask' bool [2]"]:
        check(r.returncode == 0 and text in r.stdout, f"--info shows {text!r}", r)

    # Relative model path without ./ is found (dlopen would search LD paths).
    r = subprocess.run([args.kiln_run, os.path.basename(model), "--info"],
                       cwd=os.path.dirname(model), capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, "a bare file name is opened from the cwd", r)

    print(f"\n{len(FAILURES)} failure(s)")
    for f in FAILURES:
        print(f"  {f}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
