"""Helpers the end-to-end checks share: write a small ONNX model into a
folder, run a compiled .so on given inputs through kiln-run, compare."""
import glob
import os
import subprocess

import numpy as np
import onnx
import onnx.numpy_helper as nh
from onnx import TensorProto, helper


def save_model(work, name, nodes, inputs, outputs, inits, opset=13):
    """WORK/NAME/model.onnx (and an empty WORK/NAME/data/); returns the folder."""
    g = helper.make_graph(nodes, name, inputs, outputs,
                          [nh.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    d = os.path.join(work, name)
    os.makedirs(os.path.join(d, "data"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    return d


def save_onnx(work, name, nodes, inputs, outputs, inits=(), opset=13,
              ir_version=7):
    """WORK/NAME.onnx from nodes and [(name, array)] initializers; returns
    its path."""
    g = helper.make_graph(nodes, name, inputs, outputs,
                          [nh.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir_version
    path = os.path.join(work, name + ".onnx")
    onnx.save(m, path)
    return path


def compile_and_load(kiln, path, **kw):
    """kiln.compile(path) beside the model, then kiln.load() of the .so."""
    return kiln.load(kiln.compile(path, output=path[:-5] + ".so", **kw))


def compile_cli(compile_, model, work, flags=()):
    """Saves MODEL as WORK/model.onnx and compiles WORK/model.so with the
    kiln-compile at COMPILE_ (and FLAGS); on failure prints its error and
    exits 1. Returns the .so's path."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    onnx.save(model, path)
    so = os.path.join(work, "model.so")
    c = subprocess.run([compile_, path, "-o", so, *flags], capture_output=True, text=True)
    if c.returncode != 0:
        print(f"FAIL: kiln-compile exited {c.returncode}:\n{c.stderr}")
        raise SystemExit(1)
    return so


def write_case(root, name, inputs, outputs):
    """ROOT/NAME/input_<i>.pb and output_<i>.pb, an ONNX backend-test folder,
    from [(name, array)]; returns the folder."""
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    for prefix, arrays in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(arrays):
            with open(os.path.join(d, f"{prefix}_{i}.pb"), "wb") as f:
                f.write(nh.from_array(np.asarray(a), n).SerializeToString())
    return d


def check_case(run, so, d, rtol, atol):
    """kiln-run SO on the case folder D, comparing with its outputs within
    RTOL and ATOL; returns (passed, kiln-run's report)."""
    r = subprocess.run([run, so, "--test-data", d, "--rtol", str(rtol), "--atol", str(atol)],
                       capture_output=True, text=True)
    return r.returncode == 0, (r.stdout + r.stderr).strip()


def vi(name, shape):
    """A float32 graph input or output."""
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def run_model(run, d, so, inputs, threads=1):
    """Runs SO on [(name, array)] with kiln-run; returns its outputs."""
    data = os.path.join(d, "data")
    for i, (name, x) in enumerate(inputs):
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(nh.from_array(x, name).SerializeToString())
    out = f"{so}.out{threads}"
    os.makedirs(out, exist_ok=True)
    subprocess.run([run, so, "--test-data", data, "--save-outputs", out,
                    "--threads", str(threads), "--rtol", "1e9", "--atol", "1e9"],
                   check=True, stdout=subprocess.DEVNULL)
    outs = []
    for p in sorted(glob.glob(os.path.join(out, "output_*.pb"))):
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        outs.append(nh.to_array(t))
    return outs


def assert_close(got, want, what, rtol):
    """Same shape, and max |got - want| <= rtol * max(1, max |want|), in
    float64; `what` names the case in the failure."""
    want = np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    err = np.abs(got.astype(np.float64) - want).max() if want.size else 0.0
    scale = max(1.0, np.abs(want).max() if want.size else 1.0)
    assert err <= rtol * scale, (what, err)


def rel_l2(got, want):
    """||got - want|| / ||want|| in float64."""
    got = got.astype(np.float64).ravel()
    want = np.asarray(want, dtype=np.float64).ravel()
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def conv_ref(x, w, b=None, stride=1, pad=0, group=1, dilation=1):
    """NCHW convolution in float64 (symmetric padding), as ONNX Conv."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    oh = (h - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd - dilation * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, f, oh, ow))
    fg = f // group
    for o in range(f):
        g = o // fg
        for i in range(kh):
            for j in range(kw):
                di, dj = i * dilation, j * dilation
                patch = x[:, g * cg:(g + 1) * cg, di:di + stride * oh:stride,
                          dj:dj + stride * ow:stride]
                y[:, o] += np.einsum("nchw,c->nhw", patch, w[o, :, i, j])
        if b is not None:
            y[:, o] += b[o]
    return y
