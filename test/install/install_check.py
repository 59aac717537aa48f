"""Checks an installed Kiln from outside the source tree (test/install).

  install_check.py pb2bin TENSOR.pb OUT.bin        raw bytes of a TensorProto
  install_check.py compare OUT.bin REF.pb          OUT.bin matches REF within
                                                   rtol 1e-4, atol 1e-5
  install_check.py python PREFIX MODEL.onnx DATA   `import kiln` resolves under
                                                   PREFIX, compiles MODEL and
                                                   matches DATA's outputs
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

RTOL, ATOL = 1e-4, 1e-5


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def close(got, want, what):
    if got.shape != want.shape or not np.allclose(got, want, rtol=RTOL, atol=ATOL):
        err = np.max(np.abs(got.astype(np.float64) - want)) if got.shape == want.shape else None
        sys.exit(f"{what}: differs from the reference (shape {got.shape} vs "
                 f"{want.shape}, max abs {err})")
    print(f"{what}: matches the reference within rtol {RTOL}, atol {ATOL} "
          f"(max abs {np.max(np.abs(got - want)):.2e})")


def main(argv):
    if argv[:1] == ["pb2bin"]:
        load(argv[1]).tofile(argv[2])
    elif argv[:1] == ["compare"]:
        want = load(argv[2])
        got = np.fromfile(argv[1], dtype=want.dtype).reshape(want.shape)
        close(got, want, "C host output")
    elif argv[:1] == ["python"]:
        prefix, model, data = argv[1:4]
        import kiln
        where = os.path.realpath(kiln.__file__)
        if not where.startswith(os.path.realpath(prefix) + os.sep):
            sys.exit(f"import kiln found {where}, not the install under {prefix}")
        with tempfile.TemporaryDirectory() as tmp:
            so = kiln.compile(model, os.path.join(tmp, "m.so"))
            m = kiln.load(so)
            (out,) = m(load(os.path.join(data, "input_0.pb")))
            close(out, load(os.path.join(data, "output_0.pb")),
                  f"kiln {kiln.__version__} from {os.path.dirname(where)}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
