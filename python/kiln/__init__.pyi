# Type stubs for the kiln package (PEP 561; py.typed marks the package typed).
# The extension kiln._kiln holds Model, TensorInfo, Error and load; compile
# and write_calibration_data are Python.
import os
from typing import Any, Iterable, Mapping, Sequence, Union

import numpy as np
import numpy.typing as npt

_Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_Bound = Union[int, tuple[int, int]]
_DynamicAxis = Union[str, tuple[str, int, int]]

ABI_VERSION: int
__version__: str

class Error(RuntimeError):
    """Raised for every Kiln failure; `code` is the runtime status name
    ('INVALID_ARGUMENT', 'UNSUPPORTED_ISA', ...) or None for compile errors."""
    code: str | None

class TensorInfo:
    """Name, numpy dtype and static shape of one model input or output."""
    @property
    def name(self) -> str: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def shape(self) -> tuple[int, ...]: ...

class Model:
    """A compiled model loaded from its .so, with one session."""
    def __call__(self, *arrays: npt.ArrayLike) -> list[np.ndarray]: ...
    def run(self, feeds: Mapping[str, npt.ArrayLike]) -> dict[str, np.ndarray]: ...
    @property
    def inputs(self) -> list[TensorInfo]: ...
    @property
    def outputs(self) -> list[TensorInfo]: ...
    @property
    def info(self) -> dict[str, Any]: ...
    @property
    def name(self) -> str: ...
    @property
    def path(self) -> str: ...

def compile(
    model: Union[_Path, Any],
    output: _Path | None = None,
    *,
    example_inputs: Any = None,
    dynamic_axes: Mapping[str, Mapping[int, _DynamicAxis]] | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int | None = None,
    emit: str = ...,
    target: str = ...,
    gpu_arch: str = ...,
    mcpu: str = ...,
    mattr: str = ...,
    opt_level: int = ...,
    name: str = ...,
    input_shapes: Mapping[str, Sequence[_Bound]] = ...,
    dims: Mapping[str, _Bound] = ...,
    batch_sizes: Sequence[int] = ...,
    timing: bool = ...,
    remarks: bool = ...,
    verify_each: bool = ...,
    quantize: str = ...,
    calibration_data: _Path = ...,
    calibration: str = ...,
    calibration_percentile: float = ...,
    max_accuracy_drop: float = ...,
    precision: str = ...,
    half_compute: str = ...,
    keep_fp32: Sequence[str] = ...,
    max_tensor_bytes: int = ...,
) -> str:
    """Compiles an ONNX file, an onnx.ModelProto or a torch.nn.Module ahead of
    time and returns the path written (see kiln.compile.__doc__)."""
    ...

def load(so_path: _Path, threads: int = 1) -> Model:
    """Loads a model.so and creates one session on `threads` threads."""
    ...

def write_calibration_data(
    folder: _Path, samples: Iterable[Union[npt.ArrayLike, Sequence[npt.ArrayLike]]]
) -> int:
    """Writes samples as calibration data for compile(quantize="static")."""
    ...
