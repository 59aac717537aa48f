"""kiln.compile(): outputs, options, and their errors."""
import os
import pathlib
import shutil
import subprocess

import numpy as np
import onnx
import onnx.helper
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


@pytest.mark.parametrize("emit, suffix", [
    ("import", ".import.mlir"), ("kiln", ".kiln.mlir"), ("linalg", ".linalg.mlir"),
    ("llvm", ".ll"), ("asm", ".s"), ("obj", ".o"),
])
def test_emit_other_stages(mlp_copy, emit, suffix):
    out = kiln.compile(mlp_copy, emit=emit)
    assert out == str(mlp_copy.with_suffix(suffix))
    assert os.path.isfile(out) and os.path.getsize(out) > 0
    assert not mlp_copy.with_suffix(".so").exists()


def _save_model(path, nodes, inputs, outputs, opsets=(("", 13),)):
    graph = onnx.helper.make_graph(
        nodes, path.stem,
        [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, s) for n, s in inputs],
        [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, s) for n, s in outputs])
    model = onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid(d, v) for d, v in opsets])
    onnx.save(model, str(path))
    return path


@pytest.fixture
def symbolic_relu(tmp_path):
    """y = Relu(x) with x of shape ("N", 3)."""
    return _save_model(tmp_path / "dyn.onnx", [onnx.helper.make_node("Relu", ["x"], ["y"])],
                       [("x", ["N", 3])], [("y", ["N", 3])])


def test_input_shapes_fix_symbolic_dimensions(symbolic_relu):
    model = kiln.load(kiln.compile(symbolic_relu, input_shapes={"x": (4, 3)}))
    assert model.inputs[0].shape == (4, 3) and model.outputs[0].shape == (4, 3)
    x = np.random.default_rng(0).standard_normal((4, 3), dtype=np.float32)
    np.testing.assert_array_equal(model(x)[0], np.maximum(x, 0))


def test_symbolic_dimension_without_input_shapes(symbolic_relu):
    with pytest.raises(kiln.Error, match="'x'"):
        kiln.compile(symbolic_relu)


def test_input_shapes_for_an_unknown_input(symbolic_relu):
    with pytest.raises(kiln.Error, match="'nope'"):
        kiln.compile(symbolic_relu, input_shapes={"x": (4, 3), "nope": (1,)})


@pytest.mark.parametrize("shape", [(4, 3, 2), (4, 5)])
def test_input_shapes_must_agree_with_the_graph(symbolic_relu, shape):
    with pytest.raises(kiln.Error, match="'x'"):
        kiln.compile(symbolic_relu, input_shapes={"x": shape})


@pytest.fixture
def shared_dims(tmp_path):
    """y = a + b with a and b of shape ("batch", "seq")."""
    return _save_model(tmp_path / "shared.onnx", [onnx.helper.make_node("Add", ["a", "b"], ["y"])],
                       [("a", ["batch", "seq"]), ("b", ["batch", "seq"])],
                       [("y", ["batch", "seq"])])


def test_dims_size_a_dim_param_in_every_input(shared_dims):
    model = kiln.load(kiln.compile(shared_dims, dims={"batch": 2, "seq": 5}))
    assert [t.shape for t in model.inputs] == [(2, 5), (2, 5)]
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((2, 5), dtype=np.float32) for _ in range(2))
    np.testing.assert_allclose(model(a, b)[0], a + b, rtol=1e-6, atol=0)


def test_input_shapes_size_a_shared_dim_param(shared_dims):
    model = kiln.load(kiln.compile(shared_dims, input_shapes={"a": (3, 4)}))
    assert [t.shape for t in model.inputs] == [(3, 4), (3, 4)]


def test_dims_that_contradict_input_shapes(shared_dims):
    with pytest.raises(kiln.Error, match="contradicts --dim seq=5"):
        kiln.compile(shared_dims, dims={"seq": 5}, input_shapes={"a": (3, 4)})


def test_open_dims_are_all_named(shared_dims):
    with pytest.raises(kiln.Error) as info:
        kiln.compile(shared_dims)
    for name in ("'a'", "'b'", "'batch'", "'seq'", "dims={'seq': N}"):
        assert name in str(info.value)


def test_a_range_off_the_batch_runs_at_run_time_sizes(shared_dims):
    # docs/shapes.md "Run-time sizes": one graph for every seq in 1..8,
    # shared by both inputs; they must agree, and stay in range.
    model = kiln.load(kiln.compile(shared_dims, dims={"batch": 2, "seq": (1, 8)}))
    assert [t.shape for t in model.inputs] == [(2, 8), (2, 8)]
    rng = np.random.default_rng(2)
    for seq in (1, 5, 8):
        a, b = (rng.standard_normal((2, seq), dtype=np.float32) for _ in range(2))
        y = model(a, b)[0]
        assert y.shape == (2, seq)
        np.testing.assert_allclose(y, a + b, rtol=1e-6, atol=0)
    with pytest.raises(kiln.Error, match=r"outside the range 1\.\.8"):
        model(np.zeros((2, 9), np.float32), np.zeros((2, 9), np.float32))
    with pytest.raises(kiln.Error, match="must agree"):
        model(np.zeros((2, 3), np.float32), np.zeros((2, 4), np.float32))


def test_a_symbolic_batch_runs_any_batch_in_range(symbolic_relu):
    # docs/shapes.md: compiled once, any batch 1..4, refused outside.
    model = kiln.load(kiln.compile(symbolic_relu, input_shapes={"x": ((1, 4), 3)}))
    assert model.info["symbolic_dimensions"] == [
        {"name": "N", "min": 1, "max": 4, "dimensions": [("x", 0), ("y", 0)]}]
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 4):
        x = rng.standard_normal((n, 3), dtype=np.float32)
        y = model(x)[0]
        assert y.shape == (n, 3)
        np.testing.assert_array_equal(y, np.maximum(x, 0))
        np.testing.assert_array_equal(model.run({"x": x})["y"], np.maximum(x, 0))
    with pytest.raises(kiln.Error, match=r"batch 5 is outside the range 1\.\.4 of 'N'"):
        model(np.zeros((5, 3), np.float32))
    with pytest.raises(kiln.Error, match=r"expects float32 of shape \(2, 3\)"):
        model(np.zeros((2, 4), np.float32))


@pytest.mark.parametrize("dims, error", [
    ({"batch": (4, 2)}, kiln.Error), ({"batch": -1}, kiln.Error),
    ({"batch": "2"}, TypeError), ({"batch": (1, 2, 3)}, TypeError), ([1], TypeError)])
def test_bad_dims(shared_dims, dims, error):
    with pytest.raises(error):
        kiln.compile(shared_dims, dims=dims)


def test_max_tensor_bytes(symbolic_relu):
    # Relu of 4x3 float32 is 48 bytes.
    kiln.compile(symbolic_relu, input_shapes={"x": (4, 3)}, max_tensor_bytes=48)
    with pytest.raises(kiln.Error, match="would hold 48 bytes, over the limit of 47 bytes"):
        kiln.compile(symbolic_relu, input_shapes={"x": (4, 3)}, max_tensor_bytes=47)
    with pytest.raises(kiln.Error, match="must be positive"):
        kiln.compile(symbolic_relu, input_shapes={"x": (4, 3)}, max_tensor_bytes=0)


def test_unsupported_op_names_the_node(tmp_path):
    path = _save_model(
        tmp_path / "frob.onnx",
        [onnx.helper.make_node("Relu", ["x"], ["r"], name="first"),
         onnx.helper.make_node("Frobnicate", ["r"], ["y"], name="my_frob", domain="com.example")],
        [("x", [2, 3])], [("y", [2, 3])], opsets=(("", 13), ("com.example", 1)))
    with pytest.raises(kiln.Error) as info:
        kiln.compile(path)
    message = str(info.value)
    assert "my_frob" in message and "Frobnicate" in message, message
    assert not (tmp_path / "frob.so").exists()


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


def _has_vnni():
    with open("/proc/cpuinfo") as f:
        return " avx512_vnni" in f.read()


@pytest.mark.skipif(not _has_vnni(), reason="needs avx512_vnni")
def test_quantize_dynamic(mlp_copy, tmp_path, ref_models, capfd):
    # fc1 and fc2 (N = 256, 128) get int8 weights; fc3 (N = 10) stays f32.
    out = kiln.compile(mlp_copy, tmp_path / "int8.so", quantize="dynamic")
    assert "dynamic int8: 2 of 3 MatMul/Gemm nodes quantized" in capfd.readouterr().err
    model = kiln.load(out)
    assert "--quantize=dynamic" in str(model.info)
    (got,) = model(ref_models["mlp"].inputs[0][1])
    want = ref_models["mlp"].outputs[0][1].astype(np.float64)
    rel_l2 = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert rel_l2 < 0.02, rel_l2


def test_quantize_unknown_mode(mlp_copy, tmp_path):
    with pytest.raises(kiln.Error, match="unknown quantization 'int4'"):
        kiln.compile(mlp_copy, tmp_path / "x.so", quantize="int4")


@pytest.mark.skipif(not _has_vnni(), reason="needs avx512_vnni")
def test_quantize_static(mlp_copy, tmp_path, ref_models, capfd):
    # Calibration samples drawn around the reference input, written by
    # kiln.write_calibration_data; all three Gemm nodes become int8.
    x = ref_models["mlp"].inputs[0][1]
    rng = np.random.default_rng(0)
    samples = [(x + 0.1 * rng.standard_normal(x.shape)).astype(np.float32)
               for _ in range(8)]
    assert kiln.write_calibration_data(tmp_path / "calib", samples) == 8
    out = kiln.compile(mlp_copy, tmp_path / "int8.so", quantize="static",
                       calibration_data=tmp_path / "calib",
                       calibration="percentile", calibration_percentile=99.9)
    err = capfd.readouterr().err
    assert "calibrated 3 activation ranges (percentile) on 8 samples" in err, err
    assert "static int8: 3 of 3 MatMul/Gemm/Conv nodes quantized" in err, err
    model = kiln.load(out)
    assert "--quantize=static --calibration=percentile" in str(model.info)
    (got,) = model(x)
    want = ref_models["mlp"].outputs[0][1].astype(np.float64)
    rel_l2 = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert 0 < rel_l2 < 0.03, rel_l2
    with pytest.raises(kiln.Error, match="needs --calibration-data"):
        kiln.compile(mlp_copy, tmp_path / "x.so", quantize="static")
    # The accuracy budget: a loose one keeps every node in int8.
    kiln.compile(mlp_copy, tmp_path / "budget.so", quantize="static",
                 calibration_data=tmp_path / "calib", max_accuracy_drop=0.5)
    err = capfd.readouterr().err
    assert "accuracy budget 50.00%: met with every candidate node in int8" in err, err


def _has_amx_bf16():
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    return " amx_bf16" in flags and " amx_tile" in flags


@pytest.mark.skipif(not _has_amx_bf16(), reason="needs AMX-BF16")
def test_precision_bf16(mlp_copy, tmp_path, ref_models, capfd):
    # fc1 and fc2 in bf16; fc3 (N = 10, one padded panel) kept in f32 by name.
    out = kiln.compile(mlp_copy, tmp_path / "bf16.so", precision="bf16",
                       keep_fp32=["/fc3/Gemm"])
    err = capfd.readouterr().err
    assert "bf16: 2 of 3 MatMul/Gemm nodes in bf16" in err, err
    assert "kept in f32 (--keep-fp32): '/fc3/Gemm'" in err, err
    model = kiln.load(out)
    assert "--precision=bf16 --keep-fp32=/fc3/Gemm" in str(model.info)
    assert "amx-tile" in model.info["required_isa"]
    (got,) = model(ref_models["mlp"].inputs[0][1])
    want = ref_models["mlp"].outputs[0][1].astype(np.float64)
    rel_l2 = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert 0 < rel_l2 < 0.01, rel_l2


def test_precision_fp16(mlp_copy, tmp_path, ref_models, capfd):
    # Every Gemm on fp16 operands, fc3 kept in f32 by name; runs on any x86.
    out = kiln.compile(mlp_copy, tmp_path / "fp16.so", precision="fp16",
                       keep_fp32=["/fc3/Gemm"])
    err = capfd.readouterr().err
    assert "fp16: 2 of 3 MatMul/Gemm/Conv nodes in fp16" in err, err
    assert "kept in f32 (--keep-fp32): '/fc3/Gemm'" in err, err
    model = kiln.load(out)
    assert "--precision=fp16 --keep-fp32=/fc3/Gemm" in str(model.info)
    (got,) = model(ref_models["mlp"].inputs[0][1])
    want = ref_models["mlp"].outputs[0][1].astype(np.float64)
    rel_l2 = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert 0 < rel_l2 < 0.01, rel_l2


def test_precision_errors(mlp_copy, tmp_path):
    with pytest.raises(kiln.Error, match="unknown precision 'fp8'"):
        kiln.compile(mlp_copy, tmp_path / "x.so", precision="fp8")
    with pytest.raises(TypeError, match="keep_fp32 must be a list"):
        kiln.compile(mlp_copy, tmp_path / "x.so", precision="bf16",
                     keep_fp32="fc3")


def test_half_compute(tmp_path):
    """(x + x) - x on fp16 tensors: computed in f32 by default, which gives x
    back; in fp16 with half_compute="native", where 3071 + 3071 = 6142 rounds
    to 6144 (fp16's spacing is 4 above 4096) and the result is 3073 -> 3072.
    1025 stays exact either way."""
    h = onnx.TensorProto.FLOAT16
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Add", ["x", "x"], ["d"]),
         onnx.helper.make_node("Sub", ["d", "x"], ["y"])],
        "half", [onnx.helper.make_tensor_value_info("x", h, [2])],
        [onnx.helper.make_tensor_value_info("y", h, [2])])
    path = tmp_path / "half.onnx"
    onnx.save(onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid("", 13)]), str(path))
    x = np.array([3071, 1025], np.float16)
    (wide,) = kiln.load(kiln.compile(str(path), str(tmp_path / "f32.so")))(x)
    (native,) = kiln.load(kiln.compile(str(path), str(tmp_path / "native.so"),
                                       half_compute="native"))(x)
    assert wide.dtype == np.float16 and native.dtype == np.float16
    np.testing.assert_array_equal(wide, x)      # (x + x) - x in f32
    assert native[0] == 3072 and native[1] == x[1]
    with pytest.raises(kiln.Error, match='half_compute must be "f32" or "native"'):
        kiln.compile(str(path), str(tmp_path / "x.so"), half_compute="fp16")


@pytest.mark.parametrize("name", ["mlp", "small_cnn"])
def test_nodes_out_of_order_are_sorted(ref_models, tmp_path, name):
    """A model whose nodes are listed in reverse (as graph editors and fp16
    converters leave them) compiles to the same numbers as the original."""
    ref = ref_models[name]
    model = onnx.load(ref.onnx_path)
    nodes = list(model.graph.node)
    assert len(nodes) > 2
    del model.graph.node[:]
    model.graph.node.extend(reversed(nodes))
    path = tmp_path / "reversed.onnx"
    onnx.save(model, str(path))
    out = kiln.compile(str(path), str(tmp_path / "reversed.so"))
    got = kiln.load(out)(*[x for _, x in ref.inputs])
    for g, (_, want) in zip(got, ref.outputs):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)


def test_outputs_that_compute_the_same_value(tmp_path):
    """Graph outputs that CSE merges into one value (two identical nodes,
    Identity of an input twice) each get their own buffer and the right
    numbers; bufferization crashed on a function returning a tensor twice."""
    h = onnx.helper
    f = onnx.TensorProto.FLOAT
    graph = h.make_graph(
        [h.make_node("Relu", ["x"], ["a"]), h.make_node("Relu", ["x"], ["b"]),
         h.make_node("Identity", ["x"], ["c"]), h.make_node("Identity", ["x"], ["d"])],
        "same", [h.make_tensor_value_info("x", f, [2, 3])],
        [h.make_tensor_value_info(n, f, [2, 3]) for n in "abcd"])
    path = tmp_path / "same.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))
    model = kiln.load(kiln.compile(str(path), str(tmp_path / "same.so")))
    x = np.array([[-1, 2, -3], [4, -5, 6]], dtype=np.float32)
    a, b, c, d = model(x)
    np.testing.assert_array_equal(a, np.maximum(x, 0))
    np.testing.assert_array_equal(b, np.maximum(x, 0))
    np.testing.assert_array_equal(c, x)
    np.testing.assert_array_equal(d, x)


@pytest.mark.parametrize("parts", ["2", "3"])
def test_back_end_split_over_threads(ref_models, model_name, tmp_path, monkeypatch, parts):
    """A large model's back end runs in parts on threads (llvm::SplitModule);
    KILN_BACKEND_THREADS forces it on the small test models. The parts link
    into one .so that exports the same ABI and computes the same numbers."""
    ref = ref_models[model_name]
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is not installed")

    def model_objects(so):
        # Each object the model's code came from leaves a FILE symbol named
        # after the LLVM module.
        symbols = subprocess.run([readelf, "-sW", so], capture_output=True, text=True,
                                 check=True).stdout
        return sum(1 for line in symbols.splitlines()
                   if " FILE " in line and line.split()[-1] == "kiln_model")

    whole = kiln.compile(ref.onnx_path, str(tmp_path / "whole.so"))
    assert model_objects(whole) == 1
    monkeypatch.setenv("KILN_BACKEND_THREADS", parts)
    path = kiln.compile(ref.onnx_path, str(tmp_path / "split.so"))
    assert model_objects(path) == int(parts)
    model = kiln.load(path)
    outputs = model(*[a for _, a in ref.inputs])
    for got, (_, want) in zip(outputs, ref.outputs):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
