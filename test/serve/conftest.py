"""Fixtures for the kiln-serve integration tests: the tools, the models
compiled once per session, and a factory for servers that are always stopped.

Environment (set by test/serve/CMakeLists.txt; defaults suit a build in
<repo>/build): KILN_SERVE, KILN_COMPILE, KILN_SERVE_FAKE_BATCHED (the
hand-written model with batch variants 1, 4, 8), KILN_SERVE_WORKDIR,
KILN_SERVE_PROTO (the gRPC .proto) and KILN_PROTOC (protoc, else from PATH).
"""
import os
import shutil
import subprocess
import sys
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402
from serve_client import Server  # noqa: E402

BUILD = os.path.join(HERE, "..", "..", "build")
KILN_SERVE = os.environ.get("KILN_SERVE", os.path.join(BUILD, "bin", "kiln-serve"))
KILN_COMPILE = os.environ.get("KILN_COMPILE", os.path.join(BUILD, "bin", "kiln-compile"))
FAKE_BATCHED = os.environ.get("KILN_SERVE_FAKE_BATCHED", os.path.join(
    BUILD, "test", "serve", "kiln_serve_fake_batched.so"))

# LLVM feature name : /proc/cpuinfo flag, as in test/e2e/check_isa_guard.sh.
ISA_CANDIDATES = [("avx512fp16", "avx512_fp16"), ("amx-tile", "amx_tile"),
                  ("avx512vp2intersect", "avx512_vp2intersect"),
                  ("avx512ifma", "avx512ifma"), ("avx512f", "avx512f")]


def compiler_has_batch_sizes():
    out = subprocess.run([KILN_COMPILE, "--help"], capture_output=True, text=True)
    return "--batch-sizes" in out.stdout + out.stderr


NO_BATCH_SIZES = ("kiln-compile --help does not list --batch-sizes, so no "
                  "multi-variant model.so can be built yet")


def compile_model(onnx_path, so_path, *flags):
    r = subprocess.run([KILN_COMPILE, onnx_path, "-o", so_path, *flags],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise RuntimeError(f"kiln-compile {os.path.basename(onnx_path)} {' '.join(flags)} "
                           f"failed:\n{r.stderr}")
    return so_path


def missing_cpu_feature():
    with open("/proc/cpuinfo") as f:
        flags = next((l for l in f if l.startswith("flags")), "").split()
    for feature, flag in ISA_CANDIDATES:
        if flag not in flags:
            return feature
    return None


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    path = os.environ.get("KILN_SERVE_WORKDIR")
    if not path:
        return str(tmp_path_factory.mktemp("serve"))
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


@pytest.fixture(scope="session")
def m(workdir):
    """The compiled models: paths and numpy references."""
    d = workdir
    ns = types.SimpleNamespace()
    ns.mlp_ref = {v: models.Mlp(v - 1) for v in (1, 2, 3)}
    for v, ref in ns.mlp_ref.items():
        ref.save(f"{d}/mlp{v}.onnx")
        setattr(ns, f"mlp{v}", compile_model(f"{d}/mlp{v}.onnx", f"{d}/mlp{v}.so"))
    models.save_pair(f"{d}/pair.onnx")
    ns.pair = compile_model(f"{d}/pair.onnx", f"{d}/pair.so")
    models.save_slow(f"{d}/slow.onnx")
    ns.slow = compile_model(f"{d}/slow.onnx", f"{d}/slow.so")
    ns.fake_batched = FAKE_BATCHED if os.path.exists(FAKE_BATCHED) else None
    ns.repo = f"{d}/repo"
    for v in (1, 2):
        os.makedirs(f"{ns.repo}/mlp/{v}", exist_ok=True)
        shutil.copy(getattr(ns, f"mlp{v}"), f"{ns.repo}/mlp/{v}/model.so")
    ns.missing_feature = missing_cpu_feature()
    ns.needs_missing = (compile_model(f"{d}/mlp1.onnx", f"{d}/needs-missing.so",
                                      f"--mattr=+{ns.missing_feature}")
                        if ns.missing_feature else None)
    with open(f"{d}/not-a-model.so", "wb") as f:
        f.write(b"\x7fELF this is not a shared object")
    # Files the repository API may load by path: only those inside it.
    ns.files = f"{ns.repo}/files"
    os.makedirs(ns.files, exist_ok=True)
    for name in ("mlp2.so", "mlp3.so", "not-a-model.so") + (
            ("needs-missing.so",) if ns.needs_missing else ()):
        shutil.copy(f"{d}/{name}", f"{ns.files}/{name}")
    ns.dir = d
    return ns


@pytest.fixture
def serve(workdir, request):
    """serve(*args, env=..., port_args=..., grpc=...) starts kiln-serve (see
    serve_client.Server; grpc defaults to whether --grpc-port is in args);
    every server is killed at teardown."""
    started = []

    def start(*args, **kwargs):
        log = os.path.join(workdir, f"{request.node.name}-{len(started)}.log")
        kwargs.setdefault("grpc", "--grpc-port" in args)
        s = Server(KILN_SERVE, list(args), log, **kwargs)
        started.append(s)
        return s

    yield start
    for s in started:
        s.kill()


@pytest.fixture(scope="session")
def fake_batched(m):
    """The hand-written model with batch variants 1, 4, 8 (y = 2x + 1)."""
    if not m.fake_batched:
        pytest.skip(f"{FAKE_BATCHED} is not built (ninja kiln_serve_fake_batched)")
    return m.fake_batched


@pytest.fixture(scope="session")
def mlp_batched(m):
    """mlp1 compiled by kiln-compile --batch-sizes 1,4,8."""
    if not compiler_has_batch_sizes():
        pytest.skip(NO_BATCH_SIZES)
    try:
        return compile_model(f"{m.dir}/mlp1.onnx", f"{m.dir}/mlp_b.so",
                             "--batch-sizes", "1,4,8")
    except RuntimeError as e:
        pytest.fail(f"kiln-compile lists --batch-sizes but cannot build the "
                    f"multi-variant MLP (a kiln-compile problem, not kiln-serve's): {e}")


@pytest.fixture(scope="session")
def pb(tmp_path_factory):
    """The protocol's message classes, generated by protoc --python_out from
    tools/kiln-serve/proto/inference.proto into a temporary directory, as a
    Triton or KServe client generates its own. Skips without grpcio."""
    pytest.importorskip("grpc", reason="the grpc Python module (python3-grpcio) "
                        "is not installed")
    import grpc_client
    if not grpc_client.PROTOC:
        pytest.skip("protoc is not installed (protobuf-compiler)")
    return grpc_client.generate(str(tmp_path_factory.mktemp("pb")))
