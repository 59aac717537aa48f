"""Fixtures for the kiln Python API tests.

The models are test/e2e's: taken from $KILN_E2E_MODELS when it names a
directory make_models.py already filled (ctest sets it), otherwise exported
once per session into a temporary directory. Each model is compiled once per
session; tests that need a fresh .so compile their own.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_MODELS = os.path.join(HERE, os.pardir, "e2e", "make_models.py")
MODEL_NAMES = ["mlp", "small_cnn"]

# The tolerances the e2e tests use against torch eager.
RTOL = 1e-4
ATOL = 1e-5


def _have_models(root):
    return all(
        os.path.isfile(os.path.join(root, m, "test_data_set_0", "output_0.pb"))
        for m in MODEL_NAMES)


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory):
    root = os.environ.get("KILN_E2E_MODELS")
    if root and _have_models(root):
        return root
    root = str(tmp_path_factory.mktemp("e2e_models"))
    # make_models.py needs torch, which lives in Debian's interpreter: use the
    # one running the tests (ctest runs them with /usr/bin/python3).
    subprocess.run([sys.executable, MAKE_MODELS, root], check=True)
    return root


class RefModel:
    """One e2e model: its ONNX file and the torch-eager reference data."""

    def __init__(self, root, name):
        self.name = name
        self.dir = os.path.join(root, name)
        self.onnx_path = os.path.join(self.dir, "model.onnx")
        data = os.path.join(self.dir, "test_data_set_0")
        self.inputs = _read_tensors(data, "input")
        self.outputs = _read_tensors(data, "output")
        graph = onnx.load(self.onnx_path, load_external_data=False).graph
        inits = {i.name for i in graph.initializer}
        self.graph_inputs = [_value_info(v) for v in graph.input if v.name not in inits]
        self.graph_outputs = [_value_info(v) for v in graph.output]


def _read_tensors(directory, kind):
    """[(name, array)] from kind_0.pb, kind_1.pb, ... in order."""
    result = []
    i = 0
    while os.path.exists(os.path.join(directory, "%s_%d.pb" % (kind, i))):
        tensor = onnx.TensorProto()
        with open(os.path.join(directory, "%s_%d.pb" % (kind, i)), "rb") as f:
            tensor.ParseFromString(f.read())
        result.append((tensor.name, onnx.numpy_helper.to_array(tensor)))
        i += 1
    return result


def _value_info(v):
    t = v.type.tensor_type
    dtype = np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type])  # onnx 1.12
    return v.name, dtype, tuple(d.dim_value for d in t.shape.dim)


@pytest.fixture(scope="session")
def ref_models(models_dir):
    return {name: RefModel(models_dir, name) for name in MODEL_NAMES}


@pytest.fixture(scope="session")
def compiled(ref_models, tmp_path_factory):
    """{model name: path of its compiled .so}, compiled lazily, once."""
    cache = {}

    def get(name):
        if name not in cache:
            out = tmp_path_factory.mktemp("so_" + name) / (name + ".so")
            cache[name] = kiln.compile(ref_models[name].onnx_path, str(out))
        return cache[name]

    return get


@pytest.fixture(params=MODEL_NAMES)
def model_name(request):
    return request.param


@pytest.fixture
def ref(ref_models, model_name):
    return ref_models[model_name]


@pytest.fixture
def model(compiled, model_name):
    return kiln.load(compiled(model_name))


@pytest.fixture(scope="session")
def mlp_model(compiled):
    return kiln.load(compiled("mlp"))
