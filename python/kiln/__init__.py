"""Kiln: compile ONNX models ahead of time and run them with numpy.

    import kiln, numpy as np
    so = kiln.compile("mlp.onnx")                 # -> "mlp.so"
    model = kiln.load(so)
    (logits,) = model(np.zeros((2, 784), np.float32))

See docs/python.md for the whole API.
"""

from ._kiln import ABI_VERSION, Error, Model, TensorInfo, __version__, compile, load

__all__ = ["ABI_VERSION", "Error", "Model", "TensorInfo", "__version__", "compile", "load",
           "write_calibration_data"]


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
