#!/usr/bin/python3
"""The CUDA target without a GPU: what can be checked on any machine.

Usage:
  check_cuda.py ptxas KILN_COMPILE MODELS_DIR WORKDIR
      Compiles each model for --gpu-arch=sm_80 and sm_90, assembles the
      PTX (--emit=asm) with ptxas for both architectures (PTX for sm_80 must
      also assemble for sm_90), and checks the ptxas figures in model.json:
      one entry per kernel, no spills. Exits 77 (skipped) without ptxas.
  check_cuda.py no-device KILN_COMPILE KILN_RUN MODELS_DIR WORKDIR
      Compiles a model for CUDA and checks that, on a machine without a
      CUDA driver, session creation fails with KILN_NO_DEVICE and a message
      saying so, through the C ABI (ctypes), kiln-run and Python. With the
      toolkit's stub driver (KILN_CUDA_DRIVER) it must say "no CUDA device".
      On a machine WITH a driver and GPU it instead runs the model with
      kiln-run against its reference outputs.
  check_cuda.py emulated KILN_COMPILE KILN_RUN MODELS_DIR WORKDIR
      Compiles each model with --target=cuda-emulated (the GPU kernels as
      host loops, the threads of kernels with barriers as fibers) and
      compares kiln-run's outputs with the references.

Both ptxas and emulated also build an fp16 model (a convolution and a
batched MatMul) whose contractions must run on tensor cores (wmma).
"""
import ctypes
import json
import os
import re
import shutil
import subprocess
import sys

MODELS = ["mlp", "small_cnn"]
ARCHS = ["sm_80", "sm_90"]
SKIP = 77
KILN_NO_DEVICE = 5
STUB = "/usr/local/cuda/lib64/stubs/libcuda.so"


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def find_ptxas():
    for cand in [os.environ.get("KILN_PTXAS"), shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas"]:
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def compile_model(kiln_compile, onnx, out, arch, emit="so"):
    r = run([kiln_compile, onnx, "--target=cuda", "--gpu-arch=" + arch, "--emit=" + emit, "-o", out])
    if r.returncode != 0:
        fail(f"kiln-compile --target=cuda --gpu-arch={arch} {onnx}:\n{r.stderr}")


def check_ptxas(kiln_compile, models_dir, work):
    ptxas = find_ptxas()
    if not ptxas:
        print("SKIP: no ptxas (set KILN_PTXAS or install the CUDA toolkit)")
        return SKIP
    for model in MODELS:
        onnx = os.path.join(models_dir, model, "model.onnx")
        for arch in ARCHS:
            base = os.path.join(work, f"{model}_{arch}")
            compile_model(kiln_compile, onnx, base + ".ptx", arch, emit="asm")
            ptx = open(base + ".ptx").read()
            if f".target {arch}" not in ptx:
                fail(f"{base}.ptx does not target {arch}")
            # PTX for sm_80 is forward compatible: it must assemble for sm_90 too.
            for target in ARCHS[ARCHS.index(arch):]:
                r = run([ptxas, "-arch=" + target, base + ".ptx", "-o", base + f".{target}.cubin"])
                if r.returncode != 0:
                    fail(f"ptxas -arch={target} rejects {base}.ptx:\n{r.stdout}{r.stderr}")
                print(f"ok: {model} PTX for {arch} assembles for {target}")
            compile_model(kiln_compile, onnx, base + ".so", arch)
            meta = json.load(open(base + ".json"))
            if meta.get("target") != "cuda" or meta.get("gpu_arch") != arch:
                fail(f"{base}.json: target/gpu_arch are {meta.get('target')}/{meta.get('gpu_arch')}")
            kernels = meta.get("ptxas")
            entries = ptx.count(".entry ")
            if not isinstance(kernels, list) or len(kernels) != entries:
                fail(f"{base}.json: ptxas figures {kernels!r:.200} for {entries} kernels")
            spills = [k["name"] for k in kernels if k["spill_store_bytes"] or k["spill_load_bytes"]]
            if spills:
                fail(f"{model} ({arch}): kernels spill: {spills}")
            worst = max(kernels, key=lambda k: k["registers"])
            print(f"ok: {model} ({arch}): {len(kernels)} kernels, no spills, "
                  f"most registers {worst['registers']} ({worst['name']})")
    check_tensor_cores(kiln_compile, ptxas, work)
    return 0


def make_fp16_model(work):
    """An fp16 model whose contractions run on tensor cores: a 3x3
    convolution (an implicit GEMM: 144 pixels x 32 filters x 144) and a
    batched MatMul (2 x 48 x 80 x 64). The reference is computed in float32
    from the same fp16 values and rounded to fp16, as tensor cores
    accumulate in fp32. Returns the model directory."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    d = os.path.join(work, "fp16_contractions")
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(7)
    x = (rng.random((1, 16, 12, 12)) - 0.5).astype(np.float16)
    wc = ((rng.random((32, 16, 3, 3)) - 0.5) / 4).astype(np.float16)
    a = (rng.random((2, 48, 64)) - 0.5).astype(np.float16)
    wm = ((rng.random((64, 80)) - 0.5) / 4).astype(np.float16)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "wc"], ["y"], pads=[1, 1, 1, 1]),
         helper.make_node("MatMul", ["a", "wm"], ["z"])],
        "fp16_contractions",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, list(x.shape)),
         helper.make_tensor_value_info("a", TensorProto.FLOAT16, list(a.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 32, 12, 12]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT16, [2, 48, 80])],
        [numpy_helper.from_array(wc, "wc"), numpy_helper.from_array(wm, "wm")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              os.path.join(d, "model.onnx"))
    xp = np.pad(x.astype(np.float32), ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((1, 32, 12, 12), np.float32)
    for kh in range(3):
        for kw in range(3):
            y += np.einsum("chw,fc->fhw", xp[0, :, kh:kh + 12, kw:kw + 12],
                           wc[:, :, kh, kw].astype(np.float32))[None]
    z = a.astype(np.float32) @ wm.astype(np.float32)
    for i, (name, t) in enumerate([("x", x), ("a", a)]):
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t, name).SerializeToString())
    for i, (name, t) in enumerate([("y", y), ("z", z)]):
        with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t.astype(np.float16), name).SerializeToString())
    return d


def make_guarded_model(work, axes):
    """Unsqueeze with its axes as a graph input: the compiled shape holds
    only for axes [0], which a run-time guard checks. Test data with the
    given axes. Returns the model directory."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    d = os.path.join(work, "guarded")
    data = os.path.join(d, f"axes_{axes}")
    os.makedirs(data, exist_ok=True)
    graph = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x", "axes"], ["y"], name="unsqueeze")], "guarded",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5]),
         helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 5])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(d, "model.onnx"))
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    for i, (name, t) in enumerate([("x", x), ("axes", np.array([axes], np.int64))]):
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t, name).SerializeToString())
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x[None], "y").SerializeToString())
    return d


def check_tensor_cores(kiln_compile, ptxas, work):
    """The fp16 model's PTX uses tensor cores (wmma) in both contractions,
    from 32-byte aligned shared memory, and assembles with no spills."""
    d = make_fp16_model(work)
    for arch in ARCHS:
        base = os.path.join(work, f"fp16_contractions_{arch}")
        compile_model(kiln_compile, os.path.join(d, "model.onnx"), base + ".ptx", arch, emit="asm")
        ptx = open(base + ".ptx").read()
        kernels = [k for k in ptx.split(".entry ")[1:] if "wmma.mma.sync" in k]
        if len(kernels) < 2:
            fail(f"{base}.ptx: {len(kernels)} kernels use wmma.mma.sync, expected the "
                 "convolution and the MatMul")
        if ".shared .align 32" not in ptx:
            fail(f"{base}.ptx: shared memory is not 32-byte aligned for wmma")
        r = run([ptxas, "-arch=" + arch, "-v", base + ".ptx", "-o", base + ".cubin"])
        if r.returncode != 0:
            fail(f"ptxas -arch={arch} rejects {base}.ptx:\n{r.stdout}{r.stderr}")
        spills = [int(n) for n in re.findall(r"(\d+) bytes spill (?:stores|loads)", r.stderr)]
        if not spills or any(spills):
            fail(f"{base}.ptx spills (or ptxas -v printed no figures):\n{r.stderr}")
        print(f"ok: fp16_contractions ({arch}): {len(kernels)} tensor-core kernels, "
              "ptxas accepts, no spills")


def driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def session_status(so_path):
    """kiln_session_create through the C ABI, in a fresh process so that the
    driver is looked up again (it is loaded once per process)."""
    code = (
        "import ctypes, sys\n"
        "class S(ctypes.Structure):\n"
        "    _fields_ = [('code', ctypes.c_int), ('message', ctypes.c_char_p)]\n"
        f"lib = ctypes.CDLL({so_path!r})\n"
        "lib.kiln_session_create.restype = S\n"
        "lib.kiln_session_create.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]\n"
        "out = ctypes.c_void_p(1)\n"
        "s = lib.kiln_session_create(None, ctypes.byref(out))\n"
        "print(s.code); print(out.value or 0); print(s.message.decode())\n"
        "lib.kiln_session_destroy.argtypes = [ctypes.c_void_p]\n"
        "lib.kiln_session_destroy(out)\n")
    r = run([sys.executable, "-c", code])
    if r.returncode != 0:
        fail(f"C ABI probe crashed ({r.returncode}):\n{r.stderr}")
    lines = r.stdout.splitlines()
    return int(lines[0]), int(lines[1]), "\n".join(lines[2:])


def check_no_device(kiln_compile, kiln_run, models_dir, work):
    model = "mlp"
    onnx = os.path.join(models_dir, model, "model.onnx")
    so = os.path.join(work, "mlp_cuda.so")
    compile_model(kiln_compile, onnx, so, "sm_80")
    data = os.path.join(models_dir, model, "test_data_set_0")

    if driver_present():
        # A real GPU: run the model against its reference.
        r = run([kiln_run, so, "--test-data", data, "--rtol", "1e-4", "--atol", "1e-5"])
        print(r.stdout, r.stderr)
        if r.returncode != 0:
            fail("kiln-run on the GPU does not match the reference")
        print("ok: a CUDA driver is present; the model ran on the GPU and matches")
        return 0

    # The C ABI.
    code, session, message = session_status(so)
    if code != KILN_NO_DEVICE or session != 0 or "no CUDA driver" not in message:
        fail(f"kiln_session_create: code {code}, session {session:#x}, message {message!r}")
    print(f"ok: C ABI: KILN_NO_DEVICE, {message!r}")

    # kiln-run: exit status 2 and the message.
    r = run([kiln_run, so, "--test-data", data])
    if r.returncode != 2 or "no CUDA driver" not in r.stderr:
        fail(f"kiln-run: exit {r.returncode}, stderr {r.stderr!r}")
    print("ok: kiln-run exits 2:", r.stderr.strip())

    # Python: kiln.load raises kiln.Error with code NO_DEVICE.
    probe = ("import kiln, sys\n"
             "try:\n"
             f"    kiln.load({so!r})\n"
             "except kiln.Error as e:\n"
             "    print(e.code); print(e)\n"
             "    sys.exit(0)\n"
             "print('no error'); sys.exit(1)\n")
    r = run([sys.executable, "-c", probe])
    if r.returncode != 0 or not r.stdout.startswith("NO_DEVICE") or "no CUDA driver" not in r.stdout:
        fail(f"python kiln.load: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")
    print("ok: python raises kiln.Error(code=NO_DEVICE)")

    # A driver library without a GPU behind it (the toolkit's stub).
    if os.path.exists(STUB):
        env = dict(os.environ, KILN_CUDA_DRIVER=STUB)
        r = run([kiln_run, so, "--test-data", data], env=env)
        if r.returncode != 2 or "no CUDA device" not in r.stderr:
            fail(f"kiln-run with the stub driver: exit {r.returncode}, stderr {r.stderr!r}")
        print("ok: stub driver:", r.stderr.strip())
    else:
        print(f"note: {STUB} absent; the driver-without-GPU case was not checked")

    # The CPU path is untouched: the same model compiled for the CPU runs.
    cpu = os.path.join(work, "mlp_cpu.so")
    r = run([kiln_compile, onnx, "-o", cpu])
    if r.returncode != 0:
        fail("kiln-compile for the CPU:\n" + r.stderr)
    r = run([kiln_run, cpu, "--test-data", data, "--rtol", "1e-4", "--atol", "1e-5"])
    if r.returncode != 0:
        fail("the CPU build does not match the reference:\n" + r.stdout + r.stderr)
    print("ok: the CPU build of the same model runs and matches")
    return 0


def check_emulated(kiln_compile, kiln_run, models_dir, work):
    """The GPU mapping's numbers: the kernels as host loops, against the
    torch references, at the tolerances of the CPU end-to-end tests."""
    def emulate(name, model_dir, rtol, atol, what):
        so = os.path.join(work, name + "_emulated.so")
        r = run([kiln_compile, os.path.join(model_dir, "model.onnx"),
                 "--target=cuda-emulated", "-o", so])
        if r.returncode != 0:
            fail(f"kiln-compile --target=cuda-emulated {name}:\n{r.stderr}")
        r = run([kiln_run, so, "--test-data", os.path.join(model_dir, "test_data_set_0"),
                 "--rtol", rtol, "--atol", atol])
        if r.returncode != 0:
            fail(f"{name}: the emulated {what} do not match the reference:\n{r.stdout}{r.stderr}")

    for model in MODELS:
        emulate(model, os.path.join(models_dir, model), "1e-4", "1e-5", "GPU kernels")
        print(f"ok: {model}: emulated GPU kernels match the reference")
    # Tensor cores: the warp-level fragments emulated per lane. fp16 outputs
    # against the float32 reference rounded to fp16: one fp16 ulp (2^-10
    # relative) plus the rounding of the reference.
    emulate("fp16_contractions", make_fp16_model(work), "2e-3", "1e-3",
            "tensor-core kernels")
    print("ok: fp16_contractions: emulated tensor-core kernels match the reference")
    # A run-time guard (an input that must agree with the compiled shape):
    # the GPU host launches every kernel, so the guard stores its status and
    # the run reports it afterwards, naming the node; good input matches.
    d = make_guarded_model(work, 0)
    make_guarded_model(work, 2)
    so = os.path.join(work, "guarded_emulated.so")
    r = run([kiln_compile, os.path.join(d, "model.onnx"), "--target=cuda-emulated", "-o", so])
    if r.returncode != 0:
        fail(f"kiln-compile --target=cuda-emulated of a guarded model:\n{r.stderr}")
    r = run([kiln_run, so, "--test-data", os.path.join(d, "axes_0")])
    if r.returncode != 0:
        fail(f"guarded model, valid axes:\n{r.stdout}{r.stderr}")
    r = run([kiln_run, so, "--test-data", os.path.join(d, "axes_2")])
    if r.returncode != 2 or "node 'unsqueeze' (Unsqueeze, opset 13)" not in r.stderr:
        fail(f"guarded model, axes [2]: want exit 2 naming the node, got "
             f"{r.returncode}:\n{r.stdout}{r.stderr}")
    print("ok: a failed run-time guard in emulated GPU kernels is reported, naming the node")
    return 0


def main():
    mode = sys.argv[1]
    if mode == "ptxas":
        kiln_compile, models_dir, work = sys.argv[2:5]
        os.makedirs(work, exist_ok=True)
        sys.exit(check_ptxas(kiln_compile, models_dir, work))
    if mode == "no-device":
        kiln_compile, kiln_run, models_dir, work = sys.argv[2:6]
        os.makedirs(work, exist_ok=True)
        sys.exit(check_no_device(kiln_compile, kiln_run, models_dir, work))
    if mode == "emulated":
        kiln_compile, kiln_run, models_dir, work = sys.argv[2:6]
        os.makedirs(work, exist_ok=True)
        sys.exit(check_emulated(kiln_compile, kiln_run, models_dir, work))
    fail("unknown mode " + mode)


if __name__ == "__main__":
    main()
