"""kiln.compile(): outputs, options, and their errors."""
import os
import pathlib
import shutil

import pytest

import kiln


@pytest.fixture
def mlp_copy(ref_models, tmp_path):
    """The mlp model copied into a fresh directory, for default output paths."""
    path = tmp_path / "mlp.onnx"
    shutil.copyfile(ref_models["mlp"].onnx_path, path)
    return path


def test_default_output_is_beside_the_model(mlp_copy):
    out = kiln.compile(str(mlp_copy))
    assert out == str(mlp_copy.with_suffix(".so"))
    assert os.path.isfile(out)
    # A .so comes with its header and JSON description.
    assert mlp_copy.with_suffix(".h").is_file()
    assert mlp_copy.with_suffix(".json").is_file()


def test_pathlike_arguments(mlp_copy, tmp_path):
    out = kiln.compile(mlp_copy, tmp_path / "sub.so")
    assert out == str(tmp_path / "sub.so")
    assert kiln.load(pathlib.Path(out)).outputs[0].shape == (2, 10)


def test_options(mlp_copy, tmp_path, ref_models):
    out = kiln.compile(mlp_copy, tmp_path / "o1.so", opt_level=1, name="digits",
                       timing=False, emit="so")
    model = kiln.load(out)
    assert model.name == "digits"
    assert model.info["name"] == "digits"
    (got,) = model(ref_models["mlp"].inputs[0][1])
    assert got.shape == (2, 10)


@pytest.mark.parametrize("emit", ["import", "obj"])
def test_emit_other_stages(mlp_copy, emit):
    out = kiln.compile(mlp_copy, emit=emit)
    assert os.path.isfile(out) and os.path.getsize(out) > 0
    assert out != str(mlp_copy.with_suffix(".so"))
    assert not mlp_copy.with_suffix(".so").exists()


def test_nonexistent_model(tmp_path):
    missing = str(tmp_path / "missing.onnx")
    with pytest.raises(kiln.Error, match="missing.onnx"):
        kiln.compile(missing)


def test_garbage_model(tmp_path):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07this is not an ONNX model\xff\xfe" * 10)
    with pytest.raises(kiln.Error) as info:
        kiln.compile(str(garbage))
    assert str(info.value).strip()
    assert not (tmp_path / "garbage.so").exists()


@pytest.mark.parametrize("options, pattern", [
    ({"opt_level": 7}, "opt_level"),
    ({"opt_level": -1}, "opt_level"),
    ({"emit": "nope"}, "nope"),
    ({"input_shapes": {"input": (2, -784)}}, "input_shapes"),
])
def test_bad_option_values(mlp_copy, options, pattern):
    with pytest.raises(kiln.Error, match=pattern):
        kiln.compile(mlp_copy, **options)


def test_unknown_option_is_a_type_error(mlp_copy):
    with pytest.raises(TypeError, match="opt_levle"):
        kiln.compile(mlp_copy, opt_levle=2)


@pytest.mark.parametrize("options", [
    {"opt_level": "3"},
    {"mcpu": 3},
    {"emit": None},
    {"input_shapes": [2, 784]},
    {"input_shapes": {"input": "2x784"}},
])
def test_option_of_wrong_type_is_a_type_error(mlp_copy, options):
    with pytest.raises(TypeError):
        kiln.compile(mlp_copy, **options)


def test_error_class():
    assert issubclass(kiln.Error, RuntimeError)
    assert kiln.Error.__module__ == "kiln"
    assert kiln.Error("x").code is None
