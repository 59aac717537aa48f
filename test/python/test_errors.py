"""Every way to misuse load() and Model raises kiln.Error with a useful message."""
import os

import numpy as np
import pytest

import kiln


@pytest.fixture
def x(ref_models):
    return ref_models["mlp"].inputs[0][1]  # float32 (2, 784), input name "input"


def test_wrong_dtype(mlp_model, x):
    with pytest.raises(kiln.Error) as info:
        mlp_model(x.astype(np.float64))
    message = str(info.value)
    for part in ["'input'", "float32", "(2, 784)", "float64"]:
        assert part in message, message
    assert info.value.code == "INVALID_ARGUMENT"


def test_python_lists_are_not_cast(mlp_model, x):
    with pytest.raises(kiln.Error, match="float64"):
        mlp_model(x.tolist())  # np.asarray gives float64: refused, not cast


def test_wrong_byte_order(mlp_model, x):
    with pytest.raises(kiln.Error, match="'input'"):
        mlp_model(x.astype(">f4"))


def test_wrong_shape(mlp_model, x):
    with pytest.raises(kiln.Error) as info:
        mlp_model(x[:1])
    message = str(info.value)
    for part in ["'input'", "(2, 784)", "(1, 784)"]:
        assert part in message, message


def test_wrong_rank(mlp_model, x):
    with pytest.raises(kiln.Error, match=r"\(1568,\)"):
        mlp_model(x.reshape(-1))


def test_not_convertible(mlp_model):
    with pytest.raises(kiln.Error, match="'input'"):
        mlp_model(object())


def test_wrong_number_of_arguments(mlp_model, x):
    with pytest.raises(kiln.Error, match="input"):
        mlp_model()
    with pytest.raises(kiln.Error, match="got 2"):
        mlp_model(x, x)


def test_missing_input_name(mlp_model):
    with pytest.raises(kiln.Error, match="missing input 'input'"):
        mlp_model.run({})


def test_unknown_input_name(mlp_model, x):
    with pytest.raises(kiln.Error, match="'bogus'"):
        mlp_model.run({"input": x, "bogus": x})
    with pytest.raises(kiln.Error, match="'inputs'"):
        mlp_model.run({"inputs": x})


def test_run_needs_a_mapping(mlp_model, x):
    with pytest.raises(TypeError):
        mlp_model.run([x])


def test_model_still_works_after_errors(mlp_model, x, ref_models):
    with pytest.raises(kiln.Error):
        mlp_model(x.astype(np.float64))
    (got,) = mlp_model(x)
    np.testing.assert_allclose(got, ref_models["mlp"].outputs[0][1], rtol=1e-4, atol=1e-5)


def test_load_nonexistent(tmp_path):
    with pytest.raises(kiln.Error, match="nothing.so"):
        kiln.load(str(tmp_path / "nothing.so"))


def test_load_not_a_shared_object(ref_models):
    onnx_path = ref_models["mlp"].onnx_path
    with pytest.raises(kiln.Error, match="model.onnx"):
        kiln.load(onnx_path)


def test_load_a_shared_object_that_is_not_a_model():
    # The extension module itself: a valid .so that exports no kiln_* ABI.
    with pytest.raises(kiln.Error, match="not a Kiln model"):
        kiln.load(kiln._kiln.__file__)


def _missing_cpu_feature():
    """An LLVM feature name this CPU lacks (per /proc/cpuinfo), or None."""
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    for feature, flag in [("avx512fp16", "avx512_fp16"), ("amx-tile", "amx_tile"),
                          ("avx512ifma", "avx512ifma"), ("avx512f", "avx512f")]:
        if flag not in flags:
            return feature
    return None


def test_load_for_a_cpu_this_machine_is_not(ref_models, tmp_path):
    """A model compiled for a CPU feature this machine lacks must refuse to
    load with UNSUPPORTED_ISA, not crash with SIGILL."""
    feature = _missing_cpu_feature()
    if feature is None:
        pytest.skip("this CPU has every candidate feature")
    out = kiln.compile(ref_models["mlp"].onnx_path, str(tmp_path / "needs.so"),
                       mattr="+" + feature)
    with pytest.raises(kiln.Error) as info:
        kiln.load(out)
    assert info.value.code == "UNSUPPORTED_ISA", info.value
    # Every feature the CPU lacks is named; the one asked for among them.
    assert "lacks '" in str(info.value) and "'%s'" % feature in str(info.value)
