"""Kiln: compile ONNX models ahead of time and run them with numpy.

    import kiln, numpy as np
    so = kiln.compile("mlp.onnx")                 # -> "mlp.so"
    model = kiln.load(so)
    (logits,) = model(np.zeros((2, 784), np.float32))

See docs/python.md for the whole API.
"""

import os as _os
import sys as _sys

from ._kiln import ABI_VERSION, Error, Model, TensorInfo, __version__, load
from ._kiln import compile as _compile_file

__all__ = ["ABI_VERSION", "Error", "Model", "TensorInfo", "__version__", "compile", "load",
           "write_calibration_data"]

# File suffix of each `emit` kind, as kiln-compile names its default output.
_SUFFIXES = {"so": ".so", "obj": ".o", "asm": ".s", "llvm": ".ll", "linalg": ".linalg.mlir",
             "kiln": ".kiln.mlir", "import": ".import.mlir",
             "memory-plan": ".memory-plan.json"}


def _is_model_proto(obj):
    return type(obj).__name__ == "ModelProto" and hasattr(obj, "SerializeToString")


def _is_torch_module(obj):
    torch = _sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def _default_output(stem, emit):
    if emit not in _SUFFIXES:
        raise Error(f"compile(): unknown emit={emit!r}; expected one of "
                    + ", ".join(sorted(_SUFFIXES)))
    return _os.path.abspath(stem + _SUFFIXES[emit])


def _save_model_proto(model, folder, stem):
    """Writes `model` as FOLDER/STEM.onnx; a model past protobuf's 2 GiB limit
    keeps its weights in STEM.onnx.data beside it (ONNX external data)."""
    path = _os.path.join(folder, stem + ".onnx")
    try:
        data = model.SerializeToString()
    except ValueError:
        import onnx
        onnx.save_model(model, path, save_as_external_data=True,
                        location=stem + ".onnx.data")
        return path
    with open(path, "wb") as f:
        f.write(data)
    return path


def _torch_dynamic_axes(dynamic_axes, options):
    """{name: {axis: "sym" | ("sym", min, max)}} -> torch's dynamic_axes, with
    each bounded symbol added to options["dims"] as (min, max)."""
    if dynamic_axes is None:
        return None
    axes_for_torch = {}
    dims = dict(options.get("dims") or {})
    for name, axes in dynamic_axes.items():
        if not isinstance(axes, dict):
            raise TypeError(f"compile(): dynamic_axes[{name!r}] must be a dict "
                            "{axis: 'symbol' or ('symbol', min, max)}")
        axes_for_torch[name] = {}
        for axis, spec in axes.items():
            if isinstance(spec, str):
                axes_for_torch[name][axis] = spec
            elif isinstance(spec, (tuple, list)) and len(spec) == 3 and isinstance(spec[0], str):
                symbol, lo, hi = spec
                axes_for_torch[name][axis] = symbol
                if dims.get(symbol, (lo, hi)) != (lo, hi):
                    raise Error(f"compile(): dynamic axis {symbol!r} is given two ranges: "
                                f"{dims[symbol]} and {(lo, hi)}")
                dims[symbol] = (lo, hi)
            else:
                raise TypeError(f"compile(): dynamic_axes[{name!r}][{axis}] must be a "
                                f"symbol name or (symbol, min, max), not {spec!r}")
    if dims:
        options["dims"] = dims
    return axes_for_torch


def _export_torch(module, folder, example_inputs, dynamic_axes, input_names, output_names,
                  opset_version, options):
    import torch

    if example_inputs is None:
        raise TypeError("compile(): a torch.nn.Module needs example_inputs (a tensor or a "
                        "tuple of tensors with the shapes to trace)")
    args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    if input_names is None:
        input_names = [f"input_{i}" for i in range(len(args))]
    path = _os.path.join(folder, "model.onnx")
    kwargs = {"input_names": list(input_names),
              "dynamic_axes": _torch_dynamic_axes(dynamic_axes, options)}
    if output_names is not None:
        kwargs["output_names"] = list(output_names)
    if opset_version is not None:
        kwargs["opset_version"] = opset_version
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            torch.onnx.export(module, args, path, **kwargs)
    finally:
        module.train(was_training)
    return path


def compile(model, output=None, *, example_inputs=None, dynamic_axes=None, input_names=None,
            output_names=None, opset_version=None, **options):
    import tempfile

    if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
        if example_inputs is not None or dynamic_axes is not None:
            raise TypeError("compile(): example_inputs and dynamic_axes apply to a "
                            "torch.nn.Module, not to an ONNX file")
        return _compile_file(model, output, **options)
    if _is_model_proto(model):
        stem = model.graph.name if model.graph.name.isidentifier() else "model"
        writer = lambda folder: _save_model_proto(model, folder, stem)
    elif _is_torch_module(model):
        stem = type(model).__name__
        writer = lambda folder: _export_torch(model, folder, example_inputs, dynamic_axes,
                                              input_names, output_names, opset_version,
                                              options)
    else:
        raise TypeError("compile(): model must be a path (str or os.PathLike), an "
                        "onnx.ModelProto or a torch.nn.Module, not "
                        f"{type(model).__name__}")
    if output is None:
        output = _default_output(stem, options.get("emit", "so"))
    with tempfile.TemporaryDirectory(prefix="kiln-") as folder:
        return _compile_file(writer(folder), output, **options)


compile.__doc__ = """compile(model, output=None, *, example_inputs=None, dynamic_axes=None,
        input_names=None, output_names=None, opset_version=None, **options) -> str

Compiles a model ahead of time and returns the path written.

`model` is the path of an ONNX file, an onnx.ModelProto, or a
torch.nn.Module (exported with torch.onnx.export on `example_inputs`, a
tensor or a tuple of tensors, in eval mode and without gradients). For a
module, `input_names` default to input_0, input_1, ...; `output_names` and
`opset_version` go to the exporter; `dynamic_axes` maps an input or output
name to {axis: symbol} or {axis: (symbol, min, max)}: the symbol becomes an
ONNX dim_param and a (min, max) range is passed on as dims={symbol: (min,
max)}, so the .so runs any size in range (docs/shapes.md).

`output` defaults to the model file's path with `.so` in place of its
extension; for a ModelProto (named after its graph) or a module (named after
its class) it is in the current directory.
""" + _compile_file.__doc__[_compile_file.__doc__.index("Options:"):]


def _tensor_proto(array, name):
    """The bytes of an onnx.TensorProto (dims, data_type, name, raw_data)."""
    import numpy as np

    types = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3,
             np.dtype(np.int32): 6, np.dtype(np.int64): 7, np.dtype(np.bool_): 9,
             np.dtype(np.float16): 10, np.dtype(np.float64): 11}
    array = np.ascontiguousarray(array)
    if array.dtype not in types:
        raise TypeError(f"write_calibration_data: dtype {array.dtype} is not supported")

    def varint(v):
        out = bytearray()
        while True:
            byte = v & 0x7F
            v >>= 7
            out.append(byte | (0x80 if v else 0))
            if not v:
                return bytes(out)

    def field(number, wire, payload):
        return varint(number << 3 | wire) + payload

    def blob(number, data):
        return field(number, 2, varint(len(data)) + data)

    out = b"".join(field(1, 0, varint(d)) for d in array.shape)
    out += field(2, 0, varint(types[array.dtype]))
    out += blob(8, name.encode())
    out += blob(9, array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes())
    return out


def write_calibration_data(folder, samples):
    """Writes samples as calibration data for compile(quantize="static").

    `samples` is an iterable; each item is one array (a model with one input)
    or a sequence of arrays in the model's input order. Sample i goes to
    FOLDER/test_data_set_<i>/input_<j>.pb (ONNX TensorProto files). Returns
    the number of samples written.
    """
    import os

    count = 0
    for i, sample in enumerate(samples):
        arrays = [sample] if hasattr(sample, "dtype") else list(sample)
        sample_dir = os.path.join(folder, f"test_data_set_{i}")
        os.makedirs(sample_dir, exist_ok=True)
        for j, array in enumerate(arrays):
            with open(os.path.join(sample_dir, f"input_{j}.pb"), "wb") as f:
                f.write(_tensor_proto(array, f"input_{j}"))
        count += 1
    return count
