"""Kiln: compile ONNX models ahead of time and run them with numpy.

    import kiln, numpy as np
    so = kiln.compile("mlp.onnx")                 # -> "mlp.so"
    model = kiln.load(so)
    (logits,) = model(np.zeros((2, 784), np.float32))

See docs/python.md for the whole API.
"""

from ._kiln import ABI_VERSION, Error, Model, TensorInfo, __version__, compile, load

__all__ = ["ABI_VERSION", "Error", "Model", "TensorInfo", "__version__", "compile", "load"]
